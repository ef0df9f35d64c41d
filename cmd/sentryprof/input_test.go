package main

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/benchdata"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/compresstest"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/art"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/art/arttest"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/itemrules"
)

// TestConvertEncodings: an envelope converts to the same OTLP output in
// every Content-Encoding the receiver reads, each told from its bytes
// (brotli, which has no magic number, by what it decodes to).
func TestConvertEncodings(t *testing.T) {
	env := benchdata.Envelope(itemrules.ItemTypeProfileChunk, "python", benchdata.ChunkV2(benchdata.SmallChunkConfig()))
	want := runCLI(t, env, "convert")
	require.Equal(t, exitOK, want.code, want.stderr)
	require.NotEmpty(t, want.stdout)
	tests := []struct {
		name string
		body []byte
	}{
		{"identity", env},
		{"gzip", compresstest.Bytes(t, "gzip", env)},
		{"zlib (HTTP deflate)", compresstest.Bytes(t, "deflate", env)},
		{"zstd", compresstest.Bytes(t, "zstd", env)},
		{"brotli (sentry-python with brotli installed)", compresstest.Bytes(t, "br", env)},
		{"brotli of a bare profile document", compresstest.Bytes(t, "br", benchdata.ChunkV2(benchdata.SmallChunkConfig()))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, tt.body, "convert")
			require.Equal(t, exitOK, r.code, r.stderr)
			assert.Empty(t, r.stderr)
			assert.Equal(t, want.stdout, r.stdout)
		})
	}
}

// TestConvertUndecodableInput: input that is none of what convert reads,
// plain or compressed, fails with an error that says so, not with a JSON
// decoder's complaint about the bytes.
func TestConvertUndecodableInput(t *testing.T) {
	env := benchdata.Envelope(itemrules.ItemTypeProfileChunk, "python", benchdata.ChunkV2(benchdata.SmallChunkConfig()))
	tests := []struct {
		name  string
		input []byte
		want  string
	}{
		{"text", []byte("this is not a profile"), "does not decompress as gzip, zstd, zlib (deflate) or brotli"},
		{"brotli of text", compresstest.Bytes(t, "br", []byte("hello, this is plain text and not an envelope")), "does not decompress"},
		{"random bytes", []byte{0x8b, 0x00, 0x91, 0x7f, 0x13, 0x55, 0xaa, 0x01}, "does not decompress"},
		{"truncated zstd", func() []byte { z := compresstest.Bytes(t, "zstd", env); return z[:len(z)/2] }(), "zstd"},
		{"truncated zlib", func() []byte { z := compresstest.Bytes(t, "deflate", env); return z[:len(z)/2] }(), "zlib stream is truncated"},
		{"truncated brotli", func() []byte { b := compresstest.Bytes(t, "br", env); return b[:len(b)/2] }(), "brotli"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, tt.input, "convert")
			assert.Equal(t, exitError, r.code)
			assert.Contains(t, r.stderr, "sentryprof convert: reading standard input: ")
			assert.Contains(t, r.stderr, tt.want)
			assert.NotContains(t, r.stderr, "expected object")
			assert.Empty(t, r.stdout)
		})
	}
}

// TestConvertARTTraceFile: a bare ART method trace, in the regular form
// Debug.startMethodTracing writes and the streaming form Android Studio
// saves, plain or gzip'd, converts to pprof with every microsecond of its
// slices; methods it does not declare are kept as unknown.<id> with a
// warning.
func TestConvertARTTraceFile(t *testing.T) {
	methods := map[uint32]art.Method{
		0x4: {Class: "android.os.Looper", Name: "loop", Signature: "()V", Source: "Looper.java"},
		0x8: {Class: "com.example.App", Name: "render", Signature: "(I)V", Source: "App.kt", Line: 42},
	}
	events := []art.Event{
		{Thread: 7, Method: 0x4, Action: art.Enter, Wall: 0, CPU: 0},
		{Thread: 7, Method: 0xf0, Action: art.Enter, Wall: 200, CPU: 100},
		{Thread: 7, Method: 0x8, Action: art.Enter, Wall: 300, CPU: 150},
		{Thread: 7, Method: 0x8, Action: art.Exit, Wall: 500, CPU: 300},
		{Thread: 7, Method: 0xf0, Action: art.Exit, Wall: 800, CPU: 400},
		{Thread: 9, Method: 0x8, Action: art.Enter, Wall: 100, CPU: 10},
	}
	threads := []art.Thread{{ID: 7, Name: "main"}, {ID: 9, Name: "worker"}}
	regular := arttest.Write(3, art.ClockDual, threads, methods, events, 1000)
	streaming := arttest.WriteStreaming(3, art.ClockDual, threads, methods, events, 1000)
	tests := []struct {
		name  string
		input []byte
	}{
		{"regular", regular},
		{"streaming", streaming},
		{"regular, gzip'd", compresstest.Bytes(t, "gzip", regular)},
		{"streaming, zstd", compresstest.Bytes(t, "zstd", streaming)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := filepath.Join(t.TempDir(), "app.trace")
			require.NoError(t, os.WriteFile(in, tt.input, 0o600))
			out := filepath.Join(t.TempDir(), "app.pb.gz")
			r := runCLI(t, nil, "convert", "-in", in, "-out", out)
			require.Equal(t, exitOK, r.code, r.stderr)
			assert.Contains(t, r.stderr, "warning: accepted: profiling_invalid_sampled_profile: 2 records name 1 methods the trace does not declare (0xf0)")

			raw, err := os.ReadFile(out)
			require.NoError(t, err)
			p, err := profile.ParseData(raw)
			require.NoError(t, err)
			require.NoError(t, p.CheckValid())
			assert.Equal(t, "wall", p.SampleType[0].Type)
			// main: 1000 µs from its first record; worker: 900 µs.
			assert.Equal(t, int64(1900_000), pprofWall(p))
			leaf := map[string]int64{}
			for _, s := range p.Sample {
				leaf[s.Location[0].Line[0].Function.Name] += s.Value[0]
			}
			assert.Equal(t, map[string]int64{
				"android.os.Looper.loop": 200_000 + 200_000, "unknown.0xf0": 100_000 + 300_000,
				"com.example.App.render": 200_000 + 900_000,
			}, leaf)
		})
	}
}

// FuzzDecompress feeds arbitrary bytes to convert's input detection: it
// must answer with a reader or an error, never panic. (The output is read
// up to 1 MiB here: readInput's own bound, 200 MiB, makes a fuzzer's
// mutated compressed stream slow to exhaust, not wrong.)
func FuzzDecompress(f *testing.F) {
	body := benchdata.Envelope(itemrules.ItemTypeProfileChunk, "python", benchdata.ChunkV2(benchdata.SmallChunkConfig()))
	f.Add(body)
	f.Add(compresstest.Bytes(f, "gzip", body))
	f.Add(compresstest.Bytes(f, "deflate", body))
	f.Add(compresstest.Bytes(f, "zstd", body))
	f.Add(compresstest.Bytes(f, "br", body))
	f.Add([]byte("SLOW\xf3\x00 \x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, encoding, err := decompress(bufio.NewReader(bytes.NewReader(data)))
		if err != nil {
			return
		}
		defer r.Close()
		out, _ := io.ReadAll(io.LimitReader(r, 1<<20))
		if encoding == "" && !bytes.Equal(out, data[:min(len(data), 1<<20)]) {
			t.Fatalf("identity changed the bytes")
		}
	})
}
