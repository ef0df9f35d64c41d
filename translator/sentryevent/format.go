package sentryevent

import (
	"strconv"
	"strings"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// format fills a logentry template with its params as Relay does for the
// two template styles SDKs send: printf ("%s", "%d", "%r", "%%"; "%(name)s"
// with an object of params) and positional braces ("{}", "{0}"). A
// template whose placeholders do not match its params is shown as it is.
func format(template string, params any) string {
	switch p := params.(type) {
	case []any:
		if len(p) == 0 {
			return template
		}
		if out, ok := formatPrintf(template, func(name string, i int) (any, bool) {
			if name != "" || i >= len(p) {
				return nil, false
			}
			return p[i], true
		}); ok {
			return out
		}
		if out, ok := formatBraces(template, p); ok {
			return out
		}
	case map[string]any:
		if out, ok := formatPrintf(template, func(name string, _ int) (any, bool) {
			v, found := p[name]
			return v, found && name != ""
		}); ok {
			return out
		}
	}
	return template
}

// formatPrintf replaces printf placeholders: "%" [ "(" name ")" ] flags
// and width, then a conversion letter.
func formatPrintf(template string, param func(name string, i int) (any, bool)) (string, bool) {
	var b strings.Builder
	next, used := 0, 0
	for i := 0; i < len(template); i++ {
		c := template[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i+1 < len(template) && template[i+1] == '%' {
			b.WriteByte('%')
			i++
			continue
		}
		name, end, ok := placeholder(template, i+1)
		if !ok {
			return "", false
		}
		v, ok := param(name, next)
		if !ok {
			return "", false
		}
		if name == "" {
			next++
		}
		used++
		b.WriteString(paramText(v))
		i = end
	}
	return b.String(), used > 0
}

// placeholder reads "(name)", flags, width and precision from i and
// returns the index of the conversion letter.
func placeholder(s string, i int) (name string, end int, ok bool) {
	if i < len(s) && s[i] == '(' {
		close := strings.IndexByte(s[i:], ')')
		if close < 0 {
			return "", 0, false
		}
		name, i = s[i+1:i+close], i+close+1
	}
	for i < len(s) && strings.IndexByte("#0- +.0123456789", s[i]) >= 0 {
		i++
	}
	if i >= len(s) || strings.IndexByte("sdirfFeEgGxXoc", s[i]) < 0 {
		return "", 0, false
	}
	return name, i, true
}

// formatBraces replaces "{}" (in order) and "{n}" placeholders.
func formatBraces(template string, params []any) (string, bool) {
	var b strings.Builder
	next, used := 0, 0
	for i := 0; i < len(template); i++ {
		if template[i] != '{' {
			b.WriteByte(template[i])
			continue
		}
		close := strings.IndexByte(template[i:], '}')
		if close < 0 {
			return "", false
		}
		idx := next
		if inner := template[i+1 : i+close]; inner != "" {
			n, err := strconv.Atoi(inner)
			if err != nil {
				return "", false
			}
			idx = n
		} else {
			next++
		}
		if idx < 0 || idx >= len(params) {
			return "", false
		}
		b.WriteString(paramText(params[idx]))
		used++
		i += close
	}
	return b.String(), used > 0
}

func paramText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return sentrysignal.Text(map[string]any{"v": v}, "v")
}
