package profilesout

import (
	"testing"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/translatortest"
)

// requireValidChunks checks that every chunk passes Relay's rules and
// survives the V2 writer and decoder unchanged.
func requireValidChunks(t testing.TB, chunks []Chunk) {
	t.Helper()
	for i, c := range chunks {
		translatortest.RequireValidChunk(t, i, c.Profile, c.SizeBound)
	}
}

// sentOrDropped counts the sample events of the chunks and of the drops: a
// conversion accounts for every event of its input one way or the other.
func sentOrDropped(chunks []Chunk, drops []Drop) int {
	n := 0
	for _, c := range chunks {
		n += len(c.Profile.Samples)
	}
	for _, d := range drops {
		n += d.Samples
	}
	return n
}
