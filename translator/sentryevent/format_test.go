package sentryevent

import (
	"encoding/json"
	"testing"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

func TestFormat(t *testing.T) {
	tests := []struct{ template, params, want string }{
		{"loading order %s failed", `["4711"]`, "loading order 4711 failed"},
		{"%d of %d done, 100%%", `[3, 4]`, "3 of 4 done, 100%"},
		// a parameter prints as its text: width and precision are not applied
		{"%(user)s paid %(amount).2f", `{"user":"ada","amount":12.5}`, "ada paid 12.5"},
		{"order {} shipped {}", `[4711, true]`, "order 4711 shipped true"},
		{"{1} before {0}", `["a","b"]`, "b before a"},
		{"too few %s %s", `["x"]`, "too few %s %s"},
		{"no placeholder", `["x"]`, "no placeholder"},
		{"dangling %", `["x"]`, "dangling %"},
		{"brace {x}", `["x"]`, "brace {x}"},
		{"template %s", `[]`, "template %s"},
		{"template %s", `null`, "template %s"},
	}
	for _, tt := range tests {
		x, err := sentrysignal.DecodeAny(json.RawMessage(tt.params))
		if err != nil {
			t.Fatal(err)
		}
		if got := format(tt.template, x); got != tt.want {
			t.Errorf("format(%q, %s) = %q, want %q", tt.template, tt.params, got, tt.want)
		}
	}
}
