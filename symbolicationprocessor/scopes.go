package symbolicationprocessor // import "github.com/sentryprofile/otelcol-sentryprofile/symbolicationprocessor"

import (
	"github.com/sentryprofile/otelcol-sentryprofile/symbolication/jsscope"
	"github.com/sentryprofile/otelcol-sentryprofile/symbolication/sourcemap"
)

// jsScopes are the scopes of a bundle (symbolication/jsscope) as the
// source-map resolver asks them: it names a JavaScript frame by the
// function around its position, as Sentry's Symbolicator does. The adapter
// lives here because jsscope's tests read maps with the sourcemap package,
// which so cannot import jsscope.
type jsScopes struct{ x *jsscope.Index }

// parseJSScopes is the resolver's ParseScopes.
func parseJSScopes(bundle []byte) (sourcemap.Scopes, error) {
	x, err := jsscope.Parse(bundle)
	if err != nil {
		return nil, err
	}
	return jsScopes{x}, nil
}

func (s jsScopes) FunctionName(line, column int, m *sourcemap.Map) (string, bool) {
	return jsscope.FunctionName(s.x, line, column, func(l, c int) (jsscope.Mapping, bool) {
		t, ok := m.At(l, c)
		return jsscope.Mapping{
			GenLine: t.GenLine, GenColumn: t.GenColumn, Source: t.Source,
			Line: t.Line, Column: t.Column, HasSource: t.HasSource, Name: t.Name,
		}, ok
	})
}

func (s jsScopes) Size() int64 { return s.x.Size() }
