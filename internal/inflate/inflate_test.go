package inflate

import (
	"bytes"
	"compress/flate"
	stdgzip "compress/gzip"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"testing"

	kflate "github.com/klauspost/compress/flate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/benchdata"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/fixtures"
)

// payloads are what the differential tests compress: real SDK envelopes
// and payloads (the shared fixtures), generated chunks, random and
// repetitive data, and the edge sizes.
func payloads(t *testing.T) map[string][]byte {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 300<<10)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	// Few distinct bytes: short codes and overlapping matches of every
	// distance from 1 to 7.
	small := make([]byte, 200<<10)
	for i := range small {
		small[i] = "ab c"[rng.IntN(4)]
		if rng.IntN(50) == 0 {
			n := 1 + rng.IntN(7)
			for j := 0; j < 40 && i >= n && i+1 < len(small); j++ {
				i++
				small[i] = small[i-n]
			}
		}
	}
	p := map[string][]byte{
		"empty":      {},
		"one byte":   {'x'},
		"zeros":      make([]byte, 1<<20),
		"random":     random,
		"few bytes":  small,
		"node chunk": benchdata.EnvelopeUnsized("profile_chunk", "node", benchdata.ChunkV2(benchdata.NodeSDKChunkConfig())),
	}
	for _, path := range fixtures.Files(t, ".envelope", ".json") {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		p[path] = data
	}
	return p
}

// compressors are every level of compress/flate and klauspost/compress:
// stored blocks (level 0), Huffman-only, fixed and dynamic blocks.
func compressors() map[string]func(io.Writer) io.WriteCloser {
	c := map[string]func(io.Writer) io.WriteCloser{}
	for level := -2; level <= 9; level++ {
		c["flate level "+itoa(level)] = func(w io.Writer) io.WriteCloser {
			fw, _ := flate.NewWriter(w, level)
			return fw
		}
		c["klauspost level "+itoa(level)] = func(w io.Writer) io.WriteCloser {
			fw, _ := kflate.NewWriter(w, level)
			return fw
		}
	}
	return c
}

func itoa(i int) string {
	if i < 0 {
		return "-" + string(rune('0'-i))
	}
	return string(rune('0' + i))
}

func deflate(t testing.TB, newWriter func(io.Writer) io.WriteCloser, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w := newWriter(&b)
	_, err := w.Write(data)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return b.Bytes()
}

// gzipMember wraps a raw DEFLATE stream of data in a gzip member with the
// header fields flags names (FEXTRA, FNAME, FCOMMENT, FHCRC).
func gzipMember(stream, data []byte, flags byte) []byte {
	h := []byte{0x1f, 0x8b, 8, flags, 1, 2, 3, 4, 0, 3}
	if flags&flagExtra != 0 {
		h = append(h, 5, 0, 'A', 'B', 1, 0, 9)
	}
	if flags&flagName != 0 {
		h = append(h, "envelope.json\x00"...)
	}
	if flags&flagComment != 0 {
		h = append(h, "caf\xe9\x00"...)
	}
	if flags&flagHdrCrc != 0 {
		h = binary.LittleEndian.AppendUint16(h, uint16(crc32.ChecksumIEEE(h)))
	}
	h = append(h, stream...)
	h = binary.LittleEndian.AppendUint32(h, crc32.ChecksumIEEE(data))
	return binary.LittleEndian.AppendUint32(h, uint32(len(data)))
}

func stdGunzipAtMost(src []byte, n int) ([]byte, error) {
	zr, err := stdgzip.NewReader(bytes.NewReader(src))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(io.LimitReader(zr, int64(n)))
}

func stdGunzip(src []byte) ([]byte, error) {
	zr, err := stdgzip.NewReader(bytes.NewReader(src))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

// TestInflateAsFlate: every payload compressed at every level of both
// compressors inflates to itself, as compress/flate reads it, and Inflate
// reports where the stream ended. The 5.25 MB chunk envelope, at the
// levels SDKs use.
func TestInflateAsFlate(t *testing.T) {
	var d Decoder
	check := func(name string, data []byte, cname string, newWriter func(io.Writer) io.WriteCloser) {
		stream := deflate(t, newWriter, data)
		got, n, err := d.Inflate(nil, append(stream, "trailer"...), len(data))
		require.NoError(t, err, "%s, %s", name, cname)
		require.True(t, bytes.Equal(data, got), "%s, %s: output differs", name, cname)
		require.Equal(t, len(stream), n, "%s, %s: the stream's end", name, cname)
	}
	for name, data := range payloads(t) {
		for cname, newWriter := range compressors() {
			check(name, data, cname, newWriter)
		}
	}
	big := benchdata.Envelope("profile_chunk", "python", benchdata.ChunkV2(benchdata.LargeChunkConfig()))
	for _, cname := range []string{"flate level 1", "flate level 6", "klauspost level 6"} {
		check("big chunk", big, cname, compressors()[cname])
	}
}

// TestGunzipAsCompressGzip: members with every header field, several
// members, empty members, appended to a reused buffer.
func TestGunzipAsCompressGzip(t *testing.T) {
	node := benchdata.EnvelopeUnsized("profile_chunk", "node", benchdata.ChunkV2(benchdata.NodeSDKChunkConfig()))
	level6 := func(w io.Writer) io.WriteCloser { fw, _ := flate.NewWriter(w, 6); return fw }
	member := func(data []byte, flags byte) []byte { return gzipMember(deflate(t, level6, data), data, flags) }
	tests := []struct {
		name string
		body []byte
	}{
		{name: "plain", body: member(node, 0)},
		{name: "FEXTRA", body: member(node, flagExtra)},
		{name: "FNAME", body: member(node, flagName)},
		{name: "FCOMMENT", body: member(node, flagComment)},
		{name: "FHCRC", body: member(node, flagHdrCrc)},
		{name: "every field", body: member(node, flagExtra|flagName|flagComment|flagHdrCrc|1)},
		{name: "two members", body: append(member(node[:1000], 0), member(node[1000:], flagName)...)},
		{name: "empty members", body: append(append(member(nil, 0), member(node, 0)...), member(nil, 0)...)},
		{name: "only an empty member", body: member(nil, 0)},
	}
	var d Decoder
	buf := make([]byte, 0, 10)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, err := stdGunzip(tt.body)
			require.NoError(t, err)
			got, err := d.Gunzip(buf, tt.body, 1<<30)
			require.NoError(t, err)
			assert.True(t, bytes.Equal(want, got), "output differs: %d bytes, want %d", len(got), len(want))
			buf = got
		})
	}
}

// TestFixedHuffmanBlocks: short inputs get fixed-code blocks from
// compress/flate; the test checks that they do.
func TestFixedHuffmanBlocks(t *testing.T) {
	var d Decoder
	for _, data := range []string{"a", "hello hello hello hello", `{"type":"profile_chunk"}` + "\n" + `{"type":"profile_chunk"}`} {
		var b bytes.Buffer
		w, _ := flate.NewWriter(&b, 9)
		_, _ = w.Write([]byte(data))
		require.NoError(t, w.Close())
		require.Equal(t, byte(1), b.Bytes()[0]>>1&3, "%q: the first block uses the fixed code", data)
		got, _, err := d.Inflate(nil, b.Bytes(), 1<<20)
		require.NoError(t, err)
		assert.Equal(t, data, string(got))
	}
}

// TestBrokenStreams: every cut, a flipped byte in every position of a
// small stream, bad headers and trailers are errors where compress/gzip
// errors, never a panic, and the output never passes the limit.
func TestBrokenStreams(t *testing.T) {
	data := []byte(`{"event_id":"9ec79c33ec9942ab8353589fcb2e04dc"}` + "\n" + `{"type":"profile_chunk"}` + "\n" + string(bytes.Repeat([]byte("frame "), 300)))
	good := gzipMember(deflate(t, func(w io.Writer) io.WriteCloser { fw, _ := flate.NewWriter(w, 6); return fw }, data), data, flagName|flagHdrCrc)
	var d Decoder
	for cut := range len(good) {
		_, err := d.Gunzip(nil, good[:cut], 1<<20)
		require.Error(t, err, "cut at %d", cut)
	}
	for i := range good {
		for _, flip := range []byte{0x01, 0x80, 0xff} {
			bad := bytes.Clone(good)
			bad[i] ^= flip
			want, wantErr := stdGunzip(bad)
			got, err := d.Gunzip(nil, bad, 1<<20)
			if wantErr != nil {
				require.Error(t, err, "byte %d ^ %#x: compress/gzip says %v", i, flip, wantErr)
				continue
			}
			require.NoError(t, err, "byte %d ^ %#x", i, flip)
			require.Equal(t, want, got)
		}
	}
	tests := []struct {
		name       string
		body       []byte
		want       error
		stdAccepts bool
	}{
		{name: "empty", body: nil, want: io.EOF},
		{name: "not gzip", body: data, want: ErrHeader},
		{name: "inside the header", body: good[:4], want: io.ErrUnexpectedEOF},
		{name: "bad checksum", body: append(good[:len(good)-8:len(good)-8], 0, 0, 0, 0, 0, 0, 0, 0), want: ErrChecksum},
		{name: "trailing garbage", body: append(bytes.Clone(good), "garbage..."...), want: ErrHeader},
		{name: "trailing partial header", body: append(bytes.Clone(good), 0x1f, 0x8b), want: io.ErrUnexpectedEOF},
		{name: "name too long", body: append([]byte{0x1f, 0x8b, 8, flagName, 0, 0, 0, 0, 0, 3}, bytes.Repeat([]byte("n"), 600)...), want: ErrHeader},
		{name: "reserved block type", body: gzipMember([]byte{0x07, 0, 0}, nil, 0), want: nil},
		{name: "reserved flag", body: gzipMember([]byte{0x03, 0x00}, nil, 0x20), want: errReservedFlags, stdAccepts: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := d.Gunzip(nil, tt.body, 1<<20)
			_, stdErr := stdGunzip(tt.body)
			require.Equal(t, tt.stdAccepts, stdErr == nil, "compress/gzip: %v", stdErr)
			require.Error(t, err)
			if tt.want != nil {
				assert.ErrorIs(t, err, tt.want)
			} else {
				var c *CorruptError
				assert.ErrorAs(t, err, &c)
			}
		})
	}
}

// TestLimit: the output stops at the limit with ErrTooLarge and the first
// limit bytes, whichever loop reaches it and whatever ISIZE claims.
func TestLimit(t *testing.T) {
	data := benchdata.EnvelopeUnsized("profile_chunk", "node", benchdata.ChunkV2(benchdata.NodeSDKChunkConfig()))
	var d Decoder
	for cname, newWriter := range compressors() {
		body := gzipMember(deflate(t, newWriter, data), data, 0)
		for _, limit := range []int{0, 1, 100, 4095, len(data) - 1} {
			got, err := d.Gunzip(nil, body, limit)
			require.ErrorIs(t, err, ErrTooLarge, "%s, limit %d", cname, limit)
			require.Equal(t, data[:limit], got, "%s, limit %d", cname, limit)
		}
		got, err := d.Gunzip(nil, body, len(data))
		require.NoError(t, err, cname)
		require.Equal(t, data, got)
	}
	// A lying ISIZE asks for 4 GiB: the first allocation stays within
	// hintRatio times the input.
	zeros := make([]byte, 1<<20)
	body := gzipMember(deflate(t, compressors()["flate level 9"], zeros), zeros, 0)
	binary.LittleEndian.PutUint32(body[len(body)-4:], 0xffffffff)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, err := d.Gunzip(nil, body, 1<<30)
	runtime.ReadMemStats(&after)
	require.ErrorIs(t, err, ErrChecksum, "the lie is found at the end")
	require.Len(t, got, len(zeros))
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(3*len(zeros)), "grown by doubling from the hint")
	assert.Less(t, sizeHint(body, 1<<30), hintRatio*len(body)+minHint+fastOutSlack)
}

// FuzzGunzip: whatever the input, the same bytes as compress/gzip or an
// error where it errors, and never more than the limit.
func FuzzGunzip(f *testing.F) {
	data := []byte(`{"event_id":"9ec79c33ec9942ab8353589fcb2e04dc"}` + "\n" + `{"type":"profile_chunk","length":30}` + "\n" + "abcabcabcabcabcabcabcabcabcabc")
	for level := -2; level <= 9; level += 3 {
		fw := func(w io.Writer) io.WriteCloser { z, _ := flate.NewWriter(w, level); return z }
		f.Add(gzipMember(deflate(f, fw, data), data, 0), 1<<16)
		f.Add(gzipMember(deflate(f, fw, data), data, flagExtra|flagName|flagComment|flagHdrCrc), 40)
	}
	f.Add([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 10)
	var d Decoder
	f.Fuzz(func(t *testing.T, body []byte, limit int) {
		limit = max(0, limit%(1<<20))
		got, err := d.Gunzip(nil, body, limit)
		if len(got) > limit {
			t.Fatalf("%d bytes out, limit %d", len(got), limit)
		}
		// compress/gzip read one byte past the limit at most: a bomb
		// costs the fuzzer no more than Gunzip.
		want, stdErr := stdGunzipAtMost(body, limit+1)
		switch {
		case stdErr != nil:
			if err == nil {
				t.Fatalf("compress/gzip errs (%v), Gunzip gave %d bytes", stdErr, len(got))
			}
		case errors.Is(err, errReservedFlags):
			// RFC 1952's rule, which compress/gzip does not apply.
		case len(want) > limit:
			if !errors.Is(err, ErrTooLarge) || !bytes.Equal(got, want[:limit]) {
				t.Fatalf("over the limit: %v, %d bytes", err, len(got))
			}
		case err != nil:
			t.Fatalf("Gunzip errs (%v), compress/gzip gave %d bytes", err, len(want))
		case !bytes.Equal(got, want):
			t.Fatal("output differs")
		}
	})
}
