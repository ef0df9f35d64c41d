package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"os"
	"unicode/utf8"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"
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
// decompressed by decode (decompress or gunzip). It refuses empty input and
// input larger than maxInputBytes after decompression.
func readInput(path string, e *env, prog *progress, decode decoder) ([]byte, error) {
	src, name, closeInput, err := openInput(path, e)
	if err != nil {
		return nil, err
	}
	defer closeInput()
	r, encoding, err := decode(bufio.NewReaderSize(src, 64<<10))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(&countingReader{r: r, prog: prog}, maxInputBytes+1))
	if err != nil {
		return nil, readError(name, encoding, err)
	}
	if len(data) > maxInputBytes {
		return nil, fmt.Errorf("reading %s: input is larger than %d MiB after decompression", name, maxInputBytes>>20)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("reading %s: input is empty", name)
	}
	return data, nil
}

// openInput opens the file path names, or standard input; its name for
// errors, and how to close it.
func openInput(path string, e *env) (io.Reader, string, func(), error) {
	if isStdio(path) {
		return e.stdin, "standard input", func() {}, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, "", nil, err
	}
	return f, path, func() { _ = f.Close() }, nil
}

// readError names the input and the compression a read failed in.
func readError(name, encoding string, err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("reading %s: %s stream is truncated: %w", name, encoding, err)
	}
	if encoding != "" {
		return fmt.Errorf("reading %s: %s: %w", name, encoding, err)
	}
	return fmt.Errorf("reading %s: %w", name, err)
}

// Magic numbers of the compressed formats that have one.
var (
	gzipMagic = []byte{0x1f, 0x8b}
	zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}
)

// decoder opens an input for reading: the reader of its decompressed bytes
// and the name of the compression found ("" for none).
type decoder func(in *bufio.Reader) (r io.ReadCloser, encoding string, err error)

// gunzip reads in as gzip when it starts with the gzip magic, else as it
// is: for OTLP protobuf, which has no magic number of its own to tell it
// from other compressions.
func gunzip(in *bufio.Reader) (io.ReadCloser, string, error) {
	if head, _ := in.Peek(len(gzipMagic)); !bytes.Equal(head, gzipMagic) {
		return io.NopCloser(in), "", nil
	}
	return openGzip(in)
}

// decompress reads in by the Content-Encodings the receiver accepts, told
// apart by their bytes since a file keeps no header: gzip (and x-gzip),
// zstd and zlib (HTTP's deflate) by their magic numbers; identity when the
// input already starts as what convert reads (an envelope or JSON
// document, an ART trace); brotli, which has no magic number, is tried
// last and kept only when its output starts as one of those. encoding
// names the one found ("" for identity).
func decompress(in *bufio.Reader) (r io.ReadCloser, encoding string, err error) {
	head, _ := in.Peek(512)
	switch {
	case len(head) == 0 || startsPlain(head):
		return io.NopCloser(in), "", nil
	case bytes.HasPrefix(head, gzipMagic):
		return openGzip(in)
	case bytes.HasPrefix(head, zstdMagic):
		return openZstd(in)
	case isZlibHeader(head):
		return openZlib(in)
	}
	return openBrotli(in)
}

func openGzip(in io.Reader) (io.ReadCloser, string, error) {
	zr, err := gzip.NewReader(in)
	if err != nil {
		return nil, "gzip", fmt.Errorf("gzip: %w", err)
	}
	return zr, "gzip", nil
}

func openZstd(in io.Reader) (io.ReadCloser, string, error) {
	zr, err := zstd.NewReader(in, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxInputBytes+1))
	if err != nil {
		return nil, "zstd", fmt.Errorf("zstd: %w", err)
	}
	return zr.IOReadCloser(), "zstd", nil
}

func openZlib(in io.Reader) (io.ReadCloser, string, error) {
	zr, err := zlib.NewReader(in)
	if err != nil {
		return nil, "zlib", fmt.Errorf("zlib (deflate): %w", err)
	}
	return zr, "zlib", nil
}

// openBrotli tries brotli, which has no magic number: kept only when its
// output starts as what convert reads.
func openBrotli(in io.Reader) (io.ReadCloser, string, error) {
	br := bufio.NewReaderSize(brotli.NewReader(in), 64<<10)
	if out, err := br.Peek(512); len(out) > 0 && startsPlain(out) && (err == nil || err == io.EOF) {
		return io.NopCloser(br), "brotli", nil
	}
	return nil, "", errors.New("input is neither a Sentry envelope, a profile JSON document nor an ART method trace, " +
		"and does not decompress as gzip, zstd, zlib (deflate) or brotli")
}

// startsPlain reports whether b starts as something convert reads: an ART
// method trace in either form, or JSON text (an envelope or a profile
// document): a '{' after white space, and a first line of text. A brotli
// stream can start with any byte, '{' and '[' included (sentry-python's
// often start with '['), but not with a line of text.
func startsPlain(b []byte) bool {
	if isARTTrace(b) {
		return true
	}
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 {
		return true // all white space: readInput says it is empty
	}
	return b[0] == '{' && firstLineIsText(b)
}

// firstLineIsText reports whether b's first line is valid UTF-8 without
// control characters; a character may be cut at the end of the peek.
func firstLineIsText(b []byte) bool {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	if len(line) == len(b) && len(b) >= utf8.UTFMax {
		line = line[:len(line)-utf8.UTFMax]
	}
	return utf8.Valid(line) && !bytes.ContainsFunc(line, isControl)
}

func isControl(r rune) bool { return r < ' ' && r != '\t' && r != '\r' }

// isZlibHeader reports whether b starts with a zlib header (RFC 1950): the
// deflate method, a window of at most 32 KiB, and a check sum that makes
// the first two bytes a multiple of 31.
func isZlibHeader(b []byte) bool {
	return len(b) >= 2 && b[0]&0x0f == 8 && b[0]>>4 <= 7 && (uint16(b[0])<<8|uint16(b[1]))%31 == 0
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
