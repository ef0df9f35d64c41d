package symbolicationprocessor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/profilestest"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/profilesin"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// cartMapping is an R8 mapping: Cart is a.a, its total() became a() and
// its tax() was inlined into total() at line 13 (two entries for the same
// obfuscated range, innermost first).
const cartMapping = `# compiler: R8
com.example.shop.Cart -> a.a:
# {"id":"sourceFile","fileName":"Cart.java"}
    java.util.List items -> a
    1:3:int total():10:12 -> a
    4:4:int tax(int):20:20 -> a
    4:4:int total():13 -> a
    5:5:int total():14 -> a
`

// androidChunk is a V2 chunk of Sentry's Android SDK whose frames are as
// R8 left them, with the proguard image naming the mapping.
func androidChunk(uuid string, frames ...string) []byte {
	var samples, stacks []string
	for i := range frames {
		samples = append(samples, fmt.Sprintf(`{"stack_id":%d,"thread_id":"1","timestamp":%d.25}`, i, 1764000000+i))
		stacks = append(stacks, fmt.Sprintf(`[%d]`, i))
	}
	return fmt.Appendf(nil, `{"version":"2","chunk_id":"0432a0a4c25f4697bf9f0a2fcbe6a814","profiler_id":"4d229f1d3807421ba62a5f8bc295d836",
"platform":"android","release":"shop@1.0.0","client_sdk":{"name":"sentry.java.android","version":"8.0.0"},
"profile":{"samples":[%s],"stacks":[%s],"frames":[%s],"thread_metadata":{"1":{"name":"main"}}},
"debug_meta":{"images":[{"type":"proguard","uuid":%q}]}}`, strings.Join(samples, ","), strings.Join(stacks, ","), strings.Join(frames, ","), uuid)
}

// locationLines renders every location's lines as function:line (file),
// innermost first, joined by " < ".
func locationLines(pd pprofile.Profiles) []string {
	d := pd.Dictionary()
	str := func(i int32) string { return d.StringTable().At(int(i)) }
	var out []string
	for i, loc := range d.LocationTable().All() {
		if i == 0 {
			continue
		}
		var parts []string
		for _, l := range loc.Lines().All() {
			fn := d.FunctionTable().At(int(l.FunctionIndex()))
			parts = append(parts, fmt.Sprintf("%s:%d (%s)", str(fn.NameStrindex()), l.Line(), str(fn.FilenameStrindex())))
		}
		out = append(out, strings.Join(parts, " < "))
	}
	return out
}

func TestProcessorResolvesProGuard(t *testing.T) {
	const uuid = "7d4bc6c9-5a6b-4b3a-9d1f-0a1b2c3d4e5f"
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, uuid+".txt"), []byte(cartMapping), 0o644))
	frame := func(function, module string, line int) string {
		return fmt.Sprintf(`{"function":%q,"module":%q,"lineno":%d,"in_app":true}`, function, module, line)
	}
	tests := []struct {
		name      string
		uuid      string
		want      []string
		functions []string // as pprof (and so Pyroscope) names them
	}{
		{name: "by uuid", uuid: uuid, functions: []string{"com.example.shop.Cart.total", "com.example.shop.Cart.tax"}, want: []string{
			"com.example.shop.Cart.total:11 (Cart.java)",
			"com.example.shop.Cart.tax:20 (Cart.java) < com.example.shop.Cart.total:13 (Cart.java)",
			// Framework code is not in the mapping: it stays as it came.
			"loop:160 ()",
		}},
		{name: "unknown uuid", uuid: "00000000-0000-4000-8000-000000000000", want: []string{
			"a:2 ()", "a:4 ()", "loop:160 ()",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pd := toProfiles(t, androidChunk(tt.uuid, frame("a", "a.a", 2), frame("a", "a.a", 4), frame("loop", "android.os.Looper", 160)))
			cfg := testConfig()
			cfg.ProGuard.Directories = []string{dir}
			require.NoError(t, cfg.Validate())
			s, err := newFrameProcessor(cfg, componenttest.NewNopTelemetrySettings())
			require.NoError(t, err)
			require.NoError(t, s.start(context.Background(), componenttest.NewNopHost()))
			out, err := s.processProfiles(context.Background(), pd)
			require.NoError(t, err)
			assert.ElementsMatch(t, tt.want, locationLines(out))
			requireReadable(t, out, tt.functions...)
		})
	}
}

// TestProcessorResolvesNative compiles a C program with debug info and a
// build id, and resolves a Sentry native frame in it the way the receiver
// writes one: the image's code_id as the mapping's GNU build id, the
// absolute instruction_addr as the location's address.
func TestProcessorResolvesNative(t *testing.T) {
	spin := compileSpin(t, t.TempDir())
	const imageAddr = 0x5555_0000_0000
	chunk := nativeChunk([]nativeImage{{buildID: spin.buildID, imageAddr: imageAddr, addr: imageAddr + spin.fnAddr + 4}})
	cfg := testConfig()
	cfg.Native.Directories = []string{filepath.Dir(spin.path)}
	require.NoError(t, cfg.Validate())
	s, err := newFrameProcessor(cfg, componenttest.NewNopTelemetrySettings())
	require.NoError(t, err)
	require.NoError(t, s.start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, s.shutdown(context.Background())) })
	pd, err := s.processProfiles(context.Background(), toProfiles(t, chunk))
	require.NoError(t, err)
	got := locationLines(pd)
	require.Len(t, got, 1)
	assert.Regexp(t, `^spin_work:1 \(.*spin\.c\)$`, got[0])
	requireReadable(t, pd, "spin_work")
}

// TestProcessorProGuardBatchOfTwoBuilds: a batch with the profiles of two
// builds resolves each profile's frames with its own mapping; a location
// both use (the same obfuscated frame) stays as it came.
func TestProcessorProGuardBatchOfTwoBuilds(t *testing.T) {
	const shopUUID, payUUID = "7d4bc6c9-5a6b-4b3a-9d1f-0a1b2c3d4e5f", "9e8d7c6b-5a49-4382-a1b0-c9d8e7f6a5b4"
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, shopUUID+".txt"), []byte(cartMapping), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, payUUID+".txt"), []byte("com.example.pay.Wallet -> a.a:\n    1:5:void pay():30:34 -> a\n"), 0o644))
	frame := func(line int) string { return fmt.Sprintf(`{"function":"a","module":"a.a","lineno":%d}`, line) }
	var items []profilesin.DecodedProfile
	for _, c := range [][]byte{androidChunk(shopUUID, frame(2), frame(5)), androidChunk(payUUID, frame(2), frame(3))} {
		p, err := sentry.DecodeProfile(c)
		require.NoError(t, err)
		items = append(items, profilesin.DecodedProfile{Profile: p})
	}
	pd := profilestest.ToProfiles(items, profilesin.ReceiveOptions{})
	cfg := testConfig()
	cfg.ProGuard.Directories = []string{dir}
	s, err := newFrameProcessor(cfg, componenttest.NewNopTelemetrySettings())
	require.NoError(t, err)
	require.NoError(t, s.start(context.Background(), componenttest.NewNopHost()))
	out, err := s.processProfiles(context.Background(), pd)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{
		"a:2 ()",
		"com.example.shop.Cart.total:14 (Cart.java)",
		"com.example.pay.Wallet.pay:32 (Wallet.java)",
	}, locationLines(out))
}
