package proguard

import (
	"encoding/base64"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/profilestest"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/android"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/art"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/art/arttest"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/profilesin"
)

// TestARTTraceRemap runs an obfuscated app's ART method trace through the
// translator, as the receiver does with an Android profile, finds the
// mapping by the ProGuard UUID the profile names, and remaps every
// function of the resulting pprofile: the obfuscated names become the
// original ones, and the frame whose line holds inlined code becomes the
// three methods R8 merged into it.
func TestARTTraceRemap(t *testing.T) {
	mapping := []byte(shopMapping)
	m, err := Parse(strings.NewReader(shopMapping))
	require.NoError(t, err)
	store := map[string]*Mapping{UUIDOf(mapping): m}

	// The trace names obfuscated methods with the minified line ART
	// reports for them; android.os.Looper is framework code, not in the
	// mapping.
	methods := map[uint32]art.Method{
		0x10: {Class: "android.os.Looper", Name: "loop", Signature: "()V", Source: "Looper.java", Line: 160},
		0x20: {Class: "a.a", Name: "a", Signature: "(Ljava/util/List;)I", Source: "SourceFile", Line: 5},
		0x30: {Class: "a.a", Name: "b", Signature: "()V", Source: "SourceFile", Line: 2},
		0x40: {Class: "a.b", Name: "a", Signature: "()J", Source: "SourceFile", Line: 3},
	}
	// main: loop → a.a.a (inlined price/applyDiscount) ; loop → a.a.b → a.b.a
	events := []art.Event{
		{Thread: 1, Method: 0x10, Action: art.Enter, Wall: 0, CPU: 0},
		{Thread: 1, Method: 0x20, Action: art.Enter, Wall: 10, CPU: 10},
		{Thread: 1, Method: 0x20, Action: art.Exit, Wall: 400, CPU: 390},
		{Thread: 1, Method: 0x30, Action: art.Enter, Wall: 410, CPU: 400},
		{Thread: 1, Method: 0x40, Action: art.Enter, Wall: 420, CPU: 410},
		{Thread: 1, Method: 0x40, Action: art.Exit, Wall: 700, CPU: 690},
		{Thread: 1, Method: 0x30, Action: art.Exit, Wall: 710, CPU: 700},
		{Thread: 1, Method: 0x10, Action: art.Exit, Wall: 720, CPU: 710},
	}
	trace := arttest.Write(3, art.ClockDual, []art.Thread{{ID: 1, Name: "main"}}, methods, events, 720)
	payload, err := json.Marshal(map[string]any{
		"platform":         "android",
		"profile_id":       "0b3a8f5e6c1d4e2f9a7b8c9d0e1f2a3b",
		"transaction_name": "CheckoutActivity",
		"timestamp":        "2026-11-25T12:00:00Z",
		"sampled_profile":  base64.StdEncoding.EncodeToString(trace),
		"debug_meta":       map[string]any{"images": []map[string]string{{"type": "proguard", "uuid": UUIDOf(mapping)}}},
	})
	require.NoError(t, err)
	p, warnings, err := android.DecodeAndroid(payload, time.Now(), art.DefaultLimits())
	require.Empty(t, warnings, "every method the trace calls is declared")
	require.NoError(t, err)
	pd := profilestest.ToProfiles([]profilesin.DecodedProfile{{Profile: p, Payload: payload}}, profilesin.ReceiveOptions{})

	got := remapStacks(t, pd, store)
	want := [][]string{
		{"android.os.Looper.loop:160"},
		{"android.os.Looper.loop:160", "com.example.shop.Cart.total:16", "com.example.shop.Cart.applyDiscount:31", "com.example.shop.Item.price:6"},
		{"android.os.Looper.loop:160", "com.example.shop.Cart.checkout:51"},
		{"android.os.Looper.loop:160", "com.example.shop.Cart.checkout:51", "com.example.shop.Item.price:7"},
	}
	for _, w := range want {
		assert.Contains(t, got, strings.Join(w, " > "))
	}
	assert.Len(t, got, len(want), "no other stacks: %v", got)
}

// remapStacks finds the profile's mapping by the UUID of its proguard
// image and returns each sample's stack, root first, with every frame
// remapped (frames of classes the mapping lacks are kept as they are).
func remapStacks(t *testing.T, pd pprofile.Profiles, store map[string]*Mapping) []string {
	t.Helper()
	dict := pd.Dictionary()
	str := func(i int32) string { return dict.StringTable().At(int(i)) }
	var m *Mapping
	for _, mp := range dict.MappingTable().All() {
		for _, ai := range mp.AttributeIndices().All() {
			attr := dict.AttributeTable().At(int(ai))
			if str(attr.KeyStrindex()) == "sentry.image.uuid" {
				m = store[attr.Value().AsString()]
			}
		}
	}
	require.NotNil(t, m, "the profile names the mapping's UUID")

	var stacks []string
	prof := pd.ResourceProfiles().At(0).ScopeProfiles().At(0).Profiles().At(0)
	for _, s := range prof.Samples().All() {
		var frames []string
		for _, li := range dict.StackTable().At(int(s.StackIndex())).LocationIndices().All() {
			line := dict.LocationTable().At(int(li)).Lines().At(0)
			name := str(dict.FunctionTable().At(int(line.FunctionIndex())).NameStrindex())
			dot := strings.LastIndexByte(name, '.')
			remapped := m.Remap(name[:dot], name[dot+1:], int(line.Line()))
			if remapped == nil {
				remapped = []Frame{{Class: name[:dot], Method: name[dot+1:], Line: int(line.Line())}}
			}
			// Leaf first in pdata and in Remap: frames stay in order.
			for _, f := range remapped {
				frames = append(frames, f.Class+"."+f.Method+":"+strconv.Itoa(f.Line))
			}
		}
		slices.Reverse(frames)
		stack := strings.Join(frames, " > ")
		if !slices.Contains(stacks, stack) {
			stacks = append(stacks, stack)
		}
	}
	return stacks
}
