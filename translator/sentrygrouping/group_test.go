package sentrygrouping

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func readEvent(t *testing.T, file string) Event {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(capturedEventsDir, file))
	require.NoError(t, err)
	ev, err := FromEventJSON(data)
	require.NoError(t, err)
	return ev
}

func mustEvent(t *testing.T, doc string) Event {
	t.Helper()
	ev, err := FromEventJSON([]byte(doc))
	require.NoError(t, err, doc)
	return ev
}

// Events as the SDKs sent them (copied from translator/sentryevent's
// captures). The hashes were computed by hand, in Python, as
// hashlib.md5("".join(values)) over the values Sentry's
// newstyle:2023-01-11 takes from each event; Sentry's own grouping code
// cannot be installed here.
func TestGroupRealEvents(t *testing.T) {
	tests := []struct {
		file       string
		variant    string
		components []string
		hash       string
	}{
		{
			// @sentry/browser 11.1.0: one frame at a URL, function "?":
			// the file's made-up module and the type.
			file: "browser11_captured_event_1.json", variant: "app",
			components: []string{"module=bundle", "type=ReferenceError"},
			hash:       "bd3756efdcd9aee7628924377d5a0398", // md5("bundleReferenceError")
		},
		{
			// an inline handler: Object.method groups as method
			file: "browser11_error.json", variant: "app",
			components: []string{"module=app", "function=onclick", "type=ReferenceError"},
			hash:       "4ca15f44ab9a8bcd098fe5786fab2081", // md5("apponclickReferenceError")
		},
		{
			// sentry-python 2.68 capture_message: the message
			file: "python268_captured_event_1.json", variant: "default",
			components: []string{"message=export failed"},
			hash:       "739dc8e9092c7ae0b8682383334b2107", // md5("export failed")
		},
		{
			// a logging error with a thread's stack trace: the thread
			// outranks the message
			file: "python268_logging_error.json", variant: "app",
			components: []string{"module=worker", "function=run", "context_line=log.error('loading order %s failed', order_id)"},
			hash:       "701c82cbe0e5d35bce2e7c8d19b3e856", // md5 of the three values joined
		},
		{
			// @sentry/node with a cause and fingerprint
			// ["{{ default }}", "db"]: the cause has no in-app frame, so
			// its value groups, parameterized; the chain is ordered from
			// the root of the exception tree (exception_id 0).
			file: "node11_error_chained.json", variant: "app",
			components: []string{
				"module=app", "function=loadOrder",
				"context_line=throw new TypeError(`could not load order ${id}`, { cause: err });",
				"type=TypeError", "type=Error", "value=connect ECONNREFUSED <ip>:<int>", "fingerprint=db",
			},
			hash: "a17068406ccfe80f3daa2a4f3099c6e1", // md5 of the seven values joined
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			r := Group(readEvent(t, tt.file))
			assert.Equal(t, tt.variant, r.Variant)
			assert.Equal(t, tt.components, r.Components)
			assert.Equal(t, tt.hash, r.Hash)
			assert.Equal(t, hashValues(unlabel(r.Components)), r.Hash, "the hash is the MD5 of the components' values")
		})
	}
}

// browserError is a symbolicated @sentry/browser error: build names the
// bundle's content hash, the minified names and positions.
func browserError(bundle, checkoutMin, handlerMin string, line, col int) string {
	return `{"platform":"javascript","exception":{"values":[{"type":"TypeError","value":"cart.items is undefined",
	"mechanism":{"type":"onerror","handled":false},
	"stacktrace":{"frames":[
	 {"abs_path":"https://cdn.example/static/js/vendor.` + bundle + `.js","function":"HTMLButtonElement.r","lineno":2,"colno":8812,"in_app":false},
	 {"abs_path":"webpack://shop/./src/ui/button.js","filename":"./src/ui/button.js","function":"onClick","raw_function":"` + handlerMin + `","lineno":` + itoa(line) + `,"colno":` + itoa(col) + `,"in_app":true,"context_line":"    onClick={() => checkout(cart)}","data":{"sourcemap":"https://cdn.example/static/js/main.` + bundle + `.js.map"}},
	 {"abs_path":"webpack://shop/./src/cart.js","filename":"./src/cart.js","function":"checkout","raw_function":"` + checkoutMin + `","lineno":` + itoa(line+17) + `,"colno":12,"in_app":true,"context_line":"  const total = cart.items.reduce(sum, 0);","data":{"sourcemap":"https://cdn.example/static/js/main.` + bundle + `.js.map"}}
	]}}]}}`
}

// nodeError is a @sentry/node error thrown from a bundle in dist/, which
// a build renames.
func nodeError(file string, line int, fn string) string {
	return `{"platform":"node","exception":{"values":[{"type":"Error","value":"order ` + itoa(line) + ` not found",
	"stacktrace":{"frames":[
	 {"filename":"node:internal/process/task_queues","module":"task_queues","function":"processTicksAndRejections","lineno":95,"colno":5,"in_app":false},
	 {"filename":"/srv/shop/node_modules/express/lib/router/layer.js","module":"express.lib.router:layer","function":"Layer.handle","lineno":95,"colno":5,"in_app":true},
	 {"filename":"app:///dist/` + file + `","function":"` + fn + `","lineno":` + itoa(line) + `,"colno":11,"in_app":true}
	]}}]}}`
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestSameErrorGroupsOnce(t *testing.T) {
	tests := []struct {
		name string
		a, b string
	}{
		{"browser: two builds, other minified names, hashes and lines", browserError("3f2a1b7c", "Qi", "e", 41, 7), browserError("9e8d7c6b", "Zr", "t", 44, 19)},
		{"browser: two runs of one build", browserError("3f2a1b7c", "Qi", "e", 41, 7), browserError("3f2a1b7c", "Qi", "e", 41, 7)},
		{"node: two builds, another hashed bundle name and line", nodeError("main.4f7a9c21.js", 812, "Object.loadOrder"), nodeError("main.0b3d5e88.js", 907, "loadOrder")},
		{
			"python: other line numbers and values",
			`{"platform":"python","exception":{"values":[{"type":"KeyError","value":"'4711'","stacktrace":{"frames":[{"module":"shop.orders","filename":"shop/orders.py","abs_path":"/srv/shop/orders.py","function":"load","lineno":17,"context_line":"    return ORDERS[order_id]","in_app":true}]}}]}}`,
			`{"platform":"python","exception":{"values":[{"type":"KeyError","value":"'4712'","stacktrace":{"frames":[{"module":"shop.orders","filename":"shop/orders.py","abs_path":"/opt/shop/orders.py","function":"load","lineno":19,"context_line":"  return ORDERS[order_id]","in_app":true}]}}]}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := Group(mustEvent(t, tt.a)), Group(mustEvent(t, tt.b))
			assert.Equal(t, a, b)
			assert.Equal(t, "app", a.Variant)
		})
	}
}

// minifiedError is the error of browserError before symbolication: the
// bundle's frames as the browser reported them.
func minifiedError(bundle, checkoutMin string, col int) string {
	return `{"platform":"javascript","exception":{"values":[{"type":"TypeError","value":"cart.items is undefined",
	"stacktrace":{"frames":[
	 {"abs_path":"https://cdn.example/static/js/main.` + bundle + `.js","function":"HTMLButtonElement.e","lineno":1,"colno":` + itoa(col) + `,"in_app":true},
	 {"abs_path":"https://cdn.example/static/js/main.` + bundle + `.js","function":"` + checkoutMin + `","lineno":1,"colno":` + itoa(col+913) + `,"in_app":true}
	]}}]}}`
}

// Grouping needs the symbolicated frames: two builds' minified names
// differ, so before symbolication the same error splits in two groups;
// after, it groups once (TestSameErrorGroupsOnce).
func TestSymbolicationComesFirst(t *testing.T) {
	a, b := Group(mustEvent(t, minifiedError("3f2a1b7c", "Qi", 812))), Group(mustEvent(t, minifiedError("9e8d7c6b", "Zr", 4711)))
	assert.NotEqual(t, a.Hash, b.Hash)
	assert.Equal(t, []string{"module=main", "function=e", "module=main", "function=Qi", "type=TypeError"}, a.Components)
	symbolicated := Group(mustEvent(t, browserError("3f2a1b7c", "Qi", "e", 41, 7)))
	assert.NotEqual(t, a.Hash, symbolicated.Hash)
	assert.Equal(t, symbolicated, Group(mustEvent(t, browserError("9e8d7c6b", "Zr", "t", 44, 19))))
}

func TestDifferentErrorsGroupApart(t *testing.T) {
	base := browserError("3f2a1b7c", "Qi", "e", 41, 7)
	tests := []struct {
		name  string
		other string
	}{
		{"another type", replaceOnce(base, `"type":"TypeError"`, `"type":"RangeError"`)},
		{"another minified bundle frame", replaceOnce(base, `"function":"checkout","raw_function":"Qi","lineno":58,"colno":12,"in_app":true,"context_line":"  const total = cart.items.reduce(sum, 0);"`, `"function":"Qi","lineno":1,"colno":4812,"in_app":true`)},
		{"another source line", replaceOnce(base, `const total = cart.items.reduce(sum, 0);`, `const count = cart.items.length;`)},
		{"another file", replaceOnce(base, `webpack://shop/./src/cart.js`, `webpack://shop/./src/wishlist.js`)},
	}
	want := Group(mustEvent(t, base))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.NotEqual(t, want.Hash, Group(mustEvent(t, tt.other)).Hash)
		})
	}
}

// A source-mapped JavaScript frame with a context line groups by the
// line, not by the function name the map gave it; a frame without either
// groups by its function.
func TestFunctionNames(t *testing.T) {
	mapped := browserError("3f2a1b7c", "Qi", "e", 41, 7)
	assert.Equal(t, Group(mustEvent(t, mapped)), Group(mustEvent(t, replaceOnce(mapped, `"function":"onClick"`, `"function":"onSubmit"`))))
	node := nodeError("main.js", 812, "loadOrder")
	assert.NotEqual(t, Group(mustEvent(t, node)).Hash, Group(mustEvent(t, nodeError("main.js", 812, "saveOrder"))).Hash)
	assert.Equal(t, Group(mustEvent(t, node)), Group(mustEvent(t, nodeError("main.js", 812, "OrderService.loadOrder"))))
	for _, anonymous := range []string{"?", "<anonymous>", "Object.<anonymous>", "Anonymous function", "a/<"} {
		r := Group(mustEvent(t, nodeError("main.js", 812, anonymous)))
		assert.NotContains(t, strings.Join(r.Components, " "), "function=", anonymous)
	}
}

func TestSystemFramesDoNotChangeTheKey(t *testing.T) {
	base := nodeError("main.js", 812, "loadOrder")
	tests := []struct {
		name, other string
	}{
		{"a system frame removed", replaceOnce(base, `{"filename":"node:internal/process/task_queues","module":"task_queues","function":"processTicksAndRejections","lineno":95,"colno":5,"in_app":false},`, "")},
		{"a system frame renamed", replaceOnce(base, `"function":"processTicksAndRejections"`, `"function":"runMicrotasks"`)},
		{"a node_modules frame the SDK marked in-app changed", replaceOnce(base, `"function":"Layer.handle"`, `"function":"Layer.handle_request"`)},
	}
	want := Group(mustEvent(t, base))
	require.Equal(t, "app", want.Variant)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, want, Group(mustEvent(t, tt.other)))
		})
	}
	// without in-app frames, the system frames group
	system := Group(mustEvent(t, `{"platform":"node","exception":{"values":[{"type":"Error","stacktrace":{"frames":[
		{"filename":"/srv/shop/node_modules/pg/lib/client.js","function":"Client.connect","lineno":1,"in_app":false}]}}]}}`))
	assert.Equal(t, "system", system.Variant)
	assert.Contains(t, system.Components, "function=connect")
}

func TestFingerprint(t *testing.T) {
	plain := nodeError("main.js", 812, "loadOrder")
	withFP := func(fp string) string {
		return replaceOnce(plain, `{"platform":"node",`, `{"platform":"node","fingerprint":`+fp+`,`)
	}
	def := Group(mustEvent(t, plain))
	tests := []struct {
		name        string
		doc         string
		wantVariant string
		wantValues  []string
	}{
		{"custom", withFP(`["orders","missing"]`), "custom_fingerprint", []string{"orders", "missing"}},
		{"only {{ default }} is the default", withFP(`["{{ default }}"]`), def.Variant, unlabel(def.Components)},
		{"{{default}} combines", withFP(`["{{default}}","eu-1"]`), def.Variant, append(unlabel(def.Components), "eu-1")},
		{"variables", withFP(`["{{ type }}","{{ function }}","{{ module }}","{{ transaction }}","{{ unknown }}"]`), "custom_fingerprint",
			[]string{"Error", "loadOrder", "dist/main", "<no-transaction>", "{{ unknown }}"}},
		{"a number is its text", withFP(`["code",404]`), "custom_fingerprint", []string{"code", "404"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Group(mustEvent(t, tt.doc))
			assert.Equal(t, tt.wantVariant, r.Variant)
			assert.Equal(t, tt.wantValues, unlabel(r.Components))
			assert.Equal(t, hashValues(tt.wantValues), r.Hash)
		})
	}
	// a custom fingerprint puts different errors in one group
	other := replaceOnce(withFP(`["orders","missing"]`), `"type":"Error"`, `"type":"RangeError"`)
	assert.Equal(t, Group(mustEvent(t, withFP(`["orders","missing"]`))).Hash, Group(mustEvent(t, other)).Hash)
	// md5("ordersmissing"), computed by hand
	assert.Equal(t, "5ed11da79ff224ad9874a4c875439315", Group(mustEvent(t, other)).Hash)
}

func TestMessageGroupsByTemplate(t *testing.T) {
	tests := []struct {
		name  string
		a, b  string
		value string
	}{
		{
			"a template with other parameters",
			`{"logentry":{"message":"loading order %s failed","formatted":"loading order 4711 failed"}}`,
			`{"logentry":{"message":"loading order %s failed","formatted":"loading order 4712 failed"}}`,
			"loading order %s failed",
		},
		{
			"formatted text only: its values are parameterized",
			`{"message":"order 4711 shipped to ada@example.com at 2026-11-28T07:31:23Z"}`,
			`{"logentry":{"formatted":"order 12 shipped to bob@example.org at 2026-11-29T10:00:00Z"}}`,
			"order <int> shipped to <email> at <date>",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := Group(mustEvent(t, tt.a)), Group(mustEvent(t, tt.b))
			assert.Equal(t, a, b)
			assert.Equal(t, "default", a.Variant)
			assert.Equal(t, []string{"message=" + tt.value}, a.Components)
			assert.Equal(t, hashValues([]string{tt.value}), a.Hash)
		})
	}
	assert.NotEqual(t,
		Group(mustEvent(t, `{"logentry":{"message":"loading order %s failed"}}`)).Hash,
		Group(mustEvent(t, `{"logentry":{"message":"saving order %s failed"}}`)).Hash)
}

func TestNothingGroupsFallsBack(t *testing.T) {
	r := Group(mustEvent(t, `{"platform":"javascript"}`))
	assert.Equal(t, Result{Hash: "d41d8cd98f00b204e9800998ecf8427e", Variant: "fallback"}, r)
}

// replaceOnce replaces old, which must be in s, once.
func replaceOnce(s, old, repl string) string {
	if !strings.Contains(s, old) {
		panic("replaceOnce: " + old + " not found")
	}
	return strings.Replace(s, old, repl, 1)
}
