package sentrygrouping

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestJSModule(t *testing.T) {
	tests := []struct{ absPath, module string }{
		{"http://example.com/js/v1.0/foo/bar/baz.js", "foo/bar/baz"},
		{"https://cdn.example/static/js/main.3f2a1b7c.js", "main"},
		{"https://cdn.example/static/js/main.9e8d7c6b.min.js?v=2#top", "main"},
		{"https://cdn.example/bundle.min.js", "bundle"},
		{"https://x.example/assets/0123456789abcdef0123456789abcdef/app/page.js", "app/page"},
		{"app:///dist/main.js", "dist/main"},
		{"webpack://shop/./src/cart.js", "src/cart"},
		{"~/static/app.js", "app"},
		{"https://x.example/", ""},
		{"https://x.example", "x"},
	}
	for _, tt := range tests {
		t.Run(tt.absPath, func(t *testing.T) {
			assert.Equal(t, tt.module, JSModule(tt.absPath))
		})
	}
}

func TestNormalizeMessage(t *testing.T) {
	tests := []struct{ in, out string }{
		{"Connection to 10.0.0.12 refused after 3000ms", "Connection to <ip> refused after <duration>"},
		{"user 550e8400-e29b-41d4-a716-446655440000 not found", "user <uuid> not found"},
		{"blob 0123456789abcdef0123456789abcdef01234567 missing", "blob <sha1> missing"},
		{"etag 0123456789abcdef0123456789abcdef", "etag <md5>"},
		{"pointer 0x7ffe12 and deadbeef01 but not abcdefgh", "pointer <hex> and <hex> but not abcdefgh"},
		{`value="foo bar" ok=true name='x'`, "value=<quoted_str> ok=<bool> name=<quoted_str>"},
		{"rate 0.25 and -3 items, a-3", "rate <float> and <int> items, a-<int>"},
		{"GET https://api.example.com/v1/orders?id=5 failed", "GET <url> failed"},
		{"mail ada@example.com", "mail <email>"},
		{"host db.internal.example.com down", "host <hostname> down"},
		{"at 2026-11-28T07:31:23.125Z and 2026-11-28 07:31:23 on 2026-11-28", "at <date> and <date> on <date>"},
		{"first\n\n   \nsecond\nthird", "first\nsecond..."},
		{"no parameters here", "no parameters here"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			assert.Equal(t, tt.out, normalizeMessage(tt.in))
		})
	}
}

func TestFrameNormalization(t *testing.T) {
	tests := []struct {
		name     string
		frame    Frame
		platform string
		want     []string
	}{
		{"module takes precedence over the file", Frame{Module: "shop.orders", Filename: "shop/orders.py", Function: "load"}, "python", []string{"module=shop.orders", "function=load"}},
		{"the file's base name, lowercased", Frame{Filename: `C:\Src\Orders.CS`, Function: "Load"}, "csharp", []string{"filename=orders.cs", "function=Load"}},
		{"C# groups by the raw name", Frame{Filename: "a.cs", Function: "Load", RawFunction: "Shop.Orders.Load(int id)"}, "csharp", []string{"filename=a.cs", "function=Shop.Orders.Load(int id)"}},
		{"Java lambdas and generated classes", Frame{Module: "com.shop.Orders$$Lambda$12/0x000001", Function: "lambda$load$0"}, "java", nil},
		{"Java reflection accessor", Frame{Module: "jdk.internal.reflect.GeneratedMethodAccessor42", Function: "invoke"}, "java", []string{"module=jdk.internal.reflect.GeneratedMethodAccessor", "function=invoke"}},
		{"Spring CGLIB", Frame{Module: "com.shop.Orders$$EnhancerBySpringCGLIB$$1a2b3c4d", Function: "load"}, "java", []string{"module=com.shop.Orders$$EnhancerBySpringCGLIB$$<auto>", "function=load"}},
		{"Clojure", Frame{Module: "shop.core$fn__12345", Function: "invoke"}, "java", []string{"module=shop.core$fn__<auto>", "function=invoke"}},
		{"Ruby blocks and ERB", Frame{Filename: "show.html.erb", Function: "_app_views_show_html_erb__1234_5678"}, "ruby", []string{"filename=show.html.erb", "function=_app_views_show_html_erb"}},
		{"PHP anonymous", Frame{Filename: "a.php", Function: "[Anonymous function]"}, "php", []string{"filename=a.php"}},
		{"native unknown", Frame{Package: "/usr/lib/libc.so", Function: "<unknown>"}, "native", nil},
		{"JavaScript at a URL: module, not file", Frame{AbsPath: "https://x.example/static/js/app.1a2b3c4d.js", Function: "Cart.add"}, "javascript", []string{"module=app", "function=add"}},
		{"JavaScript eval frame", Frame{AbsPath: "eval code", Function: "eval"}, "javascript", nil},
		{"long context line", Frame{Module: "m", Function: "f", ContextLine: string(make([]byte, 121))}, "python", []string{"module=m", "function=f"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := true
			tt.frame.InApp = &in
			ev := Event{Platform: tt.platform, Stacktrace: &Stacktrace{Frames: []Frame{tt.frame}}}
			r := Group(ev)
			if tt.want == nil {
				assert.Equal(t, "fallback", r.Variant, "%v", r.Components)
				return
			}
			assert.Equal(t, tt.want, r.Components)
		})
	}
}

func TestRecursionGroupsOnce(t *testing.T) {
	in := true
	f := Frame{Module: "shop", Function: "walk", Lineno: 3, InApp: &in}
	once := Group(Event{Platform: "python", Stacktrace: &Stacktrace{Frames: []Frame{f}}})
	many := Group(Event{Platform: "python", Stacktrace: &Stacktrace{Frames: []Frame{f, f, f, f}}})
	assert.Equal(t, once, many)
}

func TestEnhancements(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		name     string
		platform string
		frames   []Frame
		inApp    []bool
		grouped  []bool
	}{
		{
			"node_modules is not in the app, whatever the SDK says", "node",
			[]Frame{{Filename: "/srv/app/node_modules/pg/client.js", InApp: &yes}, {Filename: "/srv/app/db.js", InApp: &yes}},
			[]bool{false, true}, []bool{true, true},
		},
		{
			"bundled code is in the app unless it came from node_modules", "javascript",
			[]Frame{{AbsPath: "webpack://shop/./src/a.js", Filename: "./src/a.js"}, {AbsPath: "webpack://shop/./node_modules/x/i.js", Filename: "./node_modules/x/i.js"}, {AbsPath: "app:///dist/main.js"}, {AbsPath: "https://cdn.example/app.js"}},
			[]bool{true, false, true, false}, []bool{true, true, true, true},
		},
		{
			"polyfills and the task queue do not group", "node",
			[]Frame{{AbsPath: "webpack://shop/./node_modules/core-js/x.js"}, {Function: "processTicksAndRejections", InApp: &yes}, {Function: "main", InApp: &yes}},
			[]bool{false, false, true}, []bool{false, false, true},
		},
		{
			"what reportError calls is not in the app", "javascript",
			[]Frame{{Function: "main", InApp: &yes}, {Function: "reportError", InApp: &yes}, {Function: "handler", InApp: &yes}},
			[]bool{true, false, false}, []bool{true, true, true},
		},
		{
			"Python's installed packages", "python",
			[]Frame{{AbsPath: "/usr/lib/python3/site-packages/requests/api.py", InApp: &yes}, {AbsPath: "/srv/app/main.py", InApp: &no}},
			[]bool{false, false}, []bool{true, true},
		},
		{
			"Android's looper and the frames below it do not group", "java",
			[]Frame{{Module: "com.android.internal.os.ZygoteInit", Function: "main"}, {Module: "android.os.Looper", Function: "loop"}, {Module: "com.shop.MainActivity", Function: "onClick", InApp: &yes}},
			[]bool{false, false, true}, []bool{false, false, true},
		},
		{
			"a system frame between two others is noise", "java",
			[]Frame{{Module: "com.shop.A", Function: "a", InApp: &yes}, {Module: "android.os.Handler", Function: "post"}, {Module: "com.shop.B", Function: "b", InApp: &yes}},
			[]bool{true, false, true}, []bool{true, false, true},
		},
		{
			"the Sentry SDK and Java frameworks are not in the app", "java",
			[]Frame{{Module: "io.sentry.SentryClient", Function: "capture", InApp: &yes}, {Module: "org.springframework.web.Servlet", Function: "doGet", InApp: &yes}, {Module: "kotlinx.coroutines.Job", Function: "run", InApp: &yes}},
			[]bool{false, false, false}, []bool{false, true, true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := prepare(&Stacktrace{Frames: tt.frames}, tt.platform)
			var inApp, grouped []bool
			for i, s := range p.states {
				inApp = append(inApp, p.frames[i].InApp != nil && *p.frames[i].InApp)
				grouped = append(grouped, s.grouped)
			}
			assert.Equal(t, tt.inApp, inApp, "in_app")
			assert.Equal(t, tt.grouped, grouped, "grouped")
		})
	}
}
