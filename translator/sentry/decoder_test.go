package sentry

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestDecoderReuse decodes a mix of payloads one after another through one
// Decoder, with errors in between, and checks that each decodes exactly as
// a fresh DecodeProfile does: nothing of an earlier payload shows through.
func TestDecoderReuse(t *testing.T) {
	generated := generatedPayloads()
	t.Run("generated", func(t *testing.T) { checkDecoderReuse(t, generated) })
	t.Run("fixtures between generated", func(t *testing.T) {
		var payloads [][]byte
		for _, p := range profilePayloads(t) {
			payloads = append(payloads, p, generated[len(payloads)%len(generated)])
		}
		checkDecoderReuse(t, payloads)
	})
}

// generatedPayloads mixes random V1 and V2 payloads of up to 40 samples
// with a larger chunk, a truncated payload and one without arrays.
func generatedPayloads() [][]byte {
	g := payloadGen{rng: rand.New(rand.NewPCG(3, 5))}
	var payloads [][]byte
	for i := range 200 {
		version := VersionV1
		if i%2 == 0 {
			version = VersionV2
		}
		payloads = append(payloads, g.payload(version, g.rng.IntN(40)))
		switch i % 25 {
		case 3:
			payloads = append(payloads, largeChunk(3000, 300, 120))
		case 7:
			payloads = append(payloads, []byte(`{"version":"2","profile":{"samples":[{"stack_id":0,`)) // truncated
		case 11:
			payloads = append(payloads, []byte(`{"version":"2","platform":"node","profile":{}}`)) // no arrays at all
		}
	}
	return payloads
}

func checkDecoderReuse(t *testing.T, payloads [][]byte) {
	t.Helper()
	var dec Decoder
	for i, payload := range payloads {
		want, wantErr := DecodeProfile(payload)
		got, err := dec.Decode(payload)
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("payload %d: Decoder error %v, DecodeProfile error %v", i, err, wantErr)
		}
		if err != nil {
			if err.Error() != wantErr.Error() {
				t.Fatalf("payload %d: Decoder error %q, DecodeProfile error %q", i, err, wantErr)
			}
			continue
		}
		if diff := diffProfiles(got, want); diff != "" {
			t.Fatalf("payload %d decodes differently through a reused Decoder: %s\npayload: %s", i, diff, payload)
		}
		if got.Samples == nil != (want.Samples == nil) || got.Frames == nil != (want.Frames == nil) ||
			got.Stacks.Offsets == nil != (want.Stacks.Offsets == nil) {
			t.Fatalf("payload %d: nil and empty arrays differ from DecodeProfile", i)
		}
	}
}

// TestDecoderRetention checks that a Decoder does not keep the arrays of an
// unusually large payload for the next one.
func TestDecoderRetention(t *testing.T) {
	var dec Decoder
	if _, err := dec.Decode(largeChunk(2000, 100, 50)); err != nil {
		t.Fatal(err)
	}
	if cap(dec.samples) < 2000 {
		t.Fatalf("kept %d samples of capacity after a 2,000-sample chunk, want them kept", cap(dec.samples))
	}
	if _, err := dec.Decode(largeChunk(maxKeptSamples+1000, 100, 50)); err != nil {
		t.Fatal(err)
	}
	if cap(dec.samples) != 0 {
		t.Fatalf("kept %d samples of capacity after a chunk above the bound of %d", cap(dec.samples), maxKeptSamples)
	}
}

// TestDecoderInternBound checks that the strings a Decoder keeps for the
// next payload stay within their bound: a payload of huge strings is not
// held on to.
func TestDecoderInternBound(t *testing.T) {
	var dec Decoder
	huge := `{"version":"2","platform":"python","profile":{"frames":[{"function":"` + strings.Repeat("f", maxKeptInternedBytes+1) +
		`"}],"stacks":[[0]],"samples":[{"stack_id":0,"thread_id":"1","timestamp":1}]}}`
	if _, err := dec.Decode([]byte(huge)); err != nil {
		t.Fatal(err)
	}
	small := largeChunk(100, 10, 10)
	if _, err := dec.Decode(small); err != nil {
		t.Fatal(err)
	}
	if dec.internedBytes > maxKeptInternedBytes {
		t.Fatalf("the decoder keeps %d bytes of strings, bound %d", dec.internedBytes, maxKeptInternedBytes)
	}
	for s := range dec.interned {
		if len(s) > maxKeptInternedBytes {
			t.Fatal("the huge function name of the previous payload is still interned")
		}
	}
}

// TestDecoderFrameCache decodes payloads that share frame texts, including
// frames whose strings hold quotes, braces and escapes, and one whose text
// differs only in an escape: each decodes as a fresh DecodeProfile does.
func TestDecoderFrameCache(t *testing.T) {
	frames := []string{
		`{"function":"a\"}b","filename":"x.py","lineno":3}`,
		`{"function":"a\"}b","filename":"x.py","lineno":3,"data":{"k":"}"}}`,
		`{"function":"a\u0022}b","filename":"x.py","lineno":3}`, // the same frame, spelled otherwise
		`{"function":"c","abs_path":"/x\\y.py","in_app":true}`,
	}
	payload := func(order ...int) []byte {
		var b strings.Builder
		b.WriteString(`{"version":"2","platform":"python","profile":{"frames":[`)
		for i, o := range order {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(frames[o])
		}
		b.WriteString(`],"stacks":[[0]],"samples":[{"stack_id":0,"thread_id":"1","timestamp":1}]}}`)
		return []byte(b.String())
	}
	checkDecoderReuse(t, [][]byte{payload(0, 1), payload(1, 0, 2), payload(2, 3, 0), payload(3, 3, 1), payload(0, 1, 2, 3)})
	var dec Decoder
	for range 3 {
		if _, err := dec.Decode(payload(0, 1, 2, 3)); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(dec.frameCache.frames); n != 4 {
		t.Fatalf("the cache holds %d frames after three decodes of four distinct frame texts, want 4", n)
	}
}

// FuzzDecoderReuse decodes two payloads through one Decoder, the second
// twice so that its frames come from the cache the second time: every
// decode must equal a fresh DecodeProfile of the same payload.
func FuzzDecoderReuse(f *testing.F) {
	g := payloadGen{rng: rand.New(rand.NewPCG(9, 4))}
	for range 8 {
		f.Add(g.payload(VersionV2, 5), g.payload(VersionV1, 5))
	}
	if sharedFixturesPresent() {
		for _, p := range profilePayloads(f) {
			if len(p) < 64<<10 {
				f.Add(p, p)
			}
		}
	}
	f.Fuzz(func(t *testing.T, first, second []byte) {
		checkDecoderReuse(t, [][]byte{first, second, second, first})
	})
}
