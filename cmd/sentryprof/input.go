package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
)

const (
	// maxInputBytes is Relay's limit for a whole envelope after
	// decompression; nothing an SDK sends is larger.
	maxInputBytes = 200 << 20
	// progressStep is how much input is read between progress lines; inputs
	// smaller than one step convert silently.
	progressStep = 8 << 20
)

// isStdio reports whether a -in/-out value names standard input or output.
func isStdio(path string) bool { return path == "" || path == "-" }

// readInput returns the whole input named by path ("-" or "" for stdin),
// decompressed when it starts with the gzip magic. It refuses empty input and
// input larger than maxInputBytes after decompression.
func readInput(path string, e *env, prog *progress) ([]byte, error) {
	var src io.Reader = e.stdin
	name := "standard input"
	if !isStdio(path) {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		src, name = f, path
	}

	br := bufio.NewReader(src)
	var r io.Reader = br
	if magic, _ := br.Peek(2); bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("reading %s: gzip: %w", name, err)
		}
		defer zr.Close()
		r = zr
	}

	data, err := io.ReadAll(io.LimitReader(&countingReader{r: r, prog: prog}, maxInputBytes+1))
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("reading %s: gzip stream is truncated: %w", name, err)
		}
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if len(data) > maxInputBytes {
		return nil, fmt.Errorf("reading %s: input is larger than %d MiB after decompression", name, maxInputBytes>>20)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("reading %s: input is empty", name)
	}
	return data, nil
}

// writeOutput writes data to the file named by path, or to stdout for "-" or
// "". Output is written only once everything converted, so a failed run
// leaves no partial file behind.
func writeOutput(path string, data []byte, e *env) error {
	if isStdio(path) {
		_, err := e.stdout.Write(data)
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// progress reports on stderr how far a large conversion has got. It stays
// silent until more than progressStep bytes have been read.
type progress struct {
	w      io.Writer
	cmd    string
	read   int64
	next   int64
	active bool
}

func newProgress(w io.Writer, cmd string) *progress {
	return &progress{w: w, cmd: cmd, next: progressStep}
}

func (p *progress) addBytes(n int) {
	p.read += int64(n)
	for p.read >= p.next {
		p.active = true
		fmt.Fprintf(p.w, "sentryprof %s: read %d MiB\n", p.cmd, p.next>>20)
		p.next += progressStep
	}
}

// item reports one converted item of a large input.
func (p *progress) item(index int, itemType string, samples int) {
	if p.active {
		fmt.Fprintf(p.w, "sentryprof %s: read %.1f MiB, converted item %d (%s, %d samples)\n",
			p.cmd, float64(p.read)/(1<<20), index, itemType, samples)
	}
}

// done prints the closing summary of a large input.
func (p *progress) done(items, samples int) {
	if p.active {
		fmt.Fprintf(p.w, "sentryprof %s: done: %.1f MiB read, %d items, %d samples converted\n",
			p.cmd, float64(p.read)/(1<<20), items, samples)
	}
}

type countingReader struct {
	r    io.Reader
	prog *progress
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.prog.addBytes(n)
	return n, err
}
