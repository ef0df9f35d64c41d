package profilesin

import (
	"cmp"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/internal/frametype"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// randomFrames are n frames copied from a pool of 50, half of them as
// they are and half with one field changed, so that many are equal and
// many differ in one field only.
func randomFrames(rng *rand.Rand, n int) []sentry.Frame {
	pick := func(vals ...string) string { return vals[rng.IntN(len(vals))] }
	change := []func(f *sentry.Frame){
		func(f *sentry.Frame) { f.Function = pick("", "main", "handle", "a\x00b") },
		func(f *sentry.Frame) { f.RawFunction = pick("", "main") },
		func(f *sentry.Frame) { f.Symbol = pick("", "_main") },
		func(f *sentry.Frame) { f.Module = pick("", "app", "a") },
		func(f *sentry.Frame) { f.Package = pick("", "/usr/lib/libc.so") },
		func(f *sentry.Frame) { f.Filename = pick("", "app.py", "b") },
		func(f *sentry.Frame) { f.AbsPath = pick("", "/srv/app.py") },
		func(f *sentry.Frame) { f.Lineno = uint32(rng.IntN(3)) },
		func(f *sentry.Frame) { f.Colno = uint32(rng.IntN(2)) },
		func(f *sentry.Frame) { f.InApp = sentry.OptionalBool(rng.IntN(3)) },
		func(f *sentry.Frame) { f.Platform = pick("", "python", "native") },
		func(f *sentry.Frame) { f.InstructionAddr = uint64(rng.IntN(2)) * 0x1000 },
		func(f *sentry.Frame) { f.SymbolAddr = uint64(rng.IntN(2)) * 0x1000 },
		func(f *sentry.Frame) { f.ImageAddr = uint64(rng.IntN(2)) * 0x1000 },
		func(f *sentry.Frame) { f.AddrMode = pick("", "abs") },
		func(f *sentry.Frame) { f.Status = pick("", "symbolicated") },
		func(f *sentry.Frame) { f.Data = pick("", `{"a":1}`) },
	}
	pool := make([]sentry.Frame, 50)
	for i := range pool {
		for _, c := range change {
			c(&pool[i])
		}
	}
	frames := make([]sentry.Frame, n)
	for i := range frames {
		frames[i] = pool[rng.IntN(len(pool))]
		if rng.IntN(2) == 0 {
			change[rng.IntN(len(change))](&frames[i])
		}
	}
	return frames
}

// TestLocationsAsByMap holds the builder's Location look-up to a Go map of
// the whole Location key: the same frame gets the same Location, across
// items too, a frame that differs in any field a new one, in the order
// first seen; the string, function and attribute tables hold no entry
// twice.
func TestLocationsAsByMap(t *testing.T) {
	for _, tc := range []struct {
		name            string
		frames, items   int
		profilePlatform string
	}{
		{"one item", 3000, 1, "python"},
		{"three items sharing frames", 1000, 3, "python"},
		{"frames without a platform of their own", 2000, 1, "cocoa"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(tc.frames)))
			b := NewProfilesBuilder(ReceiveOptions{})
			want := map[locationKey]int32{}
			for range tc.items {
				for _, f := range randomFrames(rng, tc.frames) {
					k := locationKey{frame: f, frameType: frametype.Of(cmp.Or(f.Platform, tc.profilePlatform))}
					idx, ok := want[k]
					if !ok {
						idx = int32(len(want) + 1)
						want[k] = idx
					}
					require.Equal(t, idx, b.location(&f, tc.profilePlatform), "frame %+v", f)
				}
			}
			dict := b.Profiles().Dictionary()
			assert.Equal(t, len(want)+1, dict.LocationTable().Len())
			assert.Less(t, len(want), tc.frames*tc.items*3/4, "many frames are equal")

			strs := map[string]bool{}
			for _, s := range dict.StringTable().All() {
				require.False(t, strs[s], "string %q twice", s)
				strs[s] = true
			}
			funcs := map[functionKey]bool{}
			for _, f := range dict.FunctionTable().All() {
				k := functionKeyOf(f)
				require.False(t, funcs[k], "function %+v twice", k)
				funcs[k] = true
			}
			type attr struct {
				key   int32
				value any
			}
			attrs := map[attr]bool{}
			for _, a := range dict.AttributeTable().All() {
				k := attr{a.KeyStrindex(), a.Value().AsRaw()}
				require.False(t, attrs[k], "attribute %+v twice", k)
				attrs[k] = true
			}
		})
	}
}
