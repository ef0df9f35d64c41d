package sentryprofilereceiver

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/compresstest"
)

func gzipOf(t *testing.T, s string) io.ReadCloser {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return io.NopCloser(&buf)
}

// TestGzipDecoderReuse decodes bodies one after another, good and bad, with
// the pooled readers: each body decodes to its own contents, a corrupt
// header fails at once, and a body read after Close fails rather than read
// another request's stream.
func TestGzipDecoderReuse(t *testing.T) {
	var d gzipDecoder
	tests := []struct {
		name, body string
		corrupt    bool
	}{
		{name: "first", body: strings.Repeat("envelope one\n", 1000)},
		{name: "not gzip", body: "plain text", corrupt: true},
		{name: "second", body: "envelope two"},
		{name: "empty", body: ""},
		{name: "third", body: strings.Repeat("x", 100_000)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := gzipOf(t, tt.body)
			if tt.corrupt {
				body = io.NopCloser(strings.NewReader(tt.body))
			}
			r, err := d.decode(body)
			if tt.corrupt {
				if err == nil {
					t.Fatal("a body that is not gzip decoded without error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.body {
				t.Fatalf("decoded %d bytes, want the %d written", len(got), len(tt.body))
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := r.Read(make([]byte, 1)); !errors.Is(err, errBodyClosed) {
				t.Fatalf("read after close: %v, want errBodyClosed", err)
			}
		})
	}
}

// TestRawBodyDecoders: each encoding passThroughDecoders lets through is
// one rawBodyDecoders reads back to the bytes compressed.
func TestRawBodyDecoders(t *testing.T) {
	d := rawBodyDecoders{gzip: new(gzipDecoder)}
	want := []byte(strings.Repeat("envelope line\n", 1000))
	for _, enc := range append([]string{""}, rawDecodedEncodings...) {
		t.Run(enc, func(t *testing.T) {
			raw := want
			switch enc {
			case "", "identity":
			case "zlib":
				raw = compresstest.Bytes(t, "deflate", want) // HTTP's deflate is the zlib format
			default:
				raw = compresstest.Bytes(t, enc, want)
			}
			body, err := d.open(raw, enc)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(body)
			if err != nil {
				t.Fatal(err)
			}
			if err := body.Close(); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s: decoded %d bytes, want %d", enc, len(got), len(want))
			}
		})
	}
	if _, err := d.open(want, "lz4"); err == nil {
		t.Error("an encoding the receiver does not read is refused")
	}
}

// FuzzRawBodyDecoders: whatever the body, decoding it returns an error or
// a stream that ends, without a panic.
func FuzzRawBodyDecoders(f *testing.F) {
	for i, enc := range rawDecodedEncodings {
		if enc == "identity" {
			continue
		}
		name := enc
		if enc == "zlib" {
			name = "deflate"
		}
		f.Add(uint8(i), compresstest.Bytes(f, name, []byte("{}\n{\"type\":\"profile_chunk\"}\n{}\n")))
	}
	d := rawBodyDecoders{gzip: new(gzipDecoder)}
	f.Fuzz(func(t *testing.T, which uint8, raw []byte) {
		enc := rawDecodedEncodings[int(which)%len(rawDecodedEncodings)]
		body, err := d.open(raw, enc)
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(body, 1<<20))
		_ = body.Close()
	})
}
