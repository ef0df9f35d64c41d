package sentryevent

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// MaxFormattedChars bounds the message this package formats from a
// logentry template and its params: Relay's max_chars for
// logentry.formatted and logentry.message (8 192 characters, which Relay
// lets pass by 200 more before it cuts). A template repeats a parameter as
// often as it names it, so without a bound 493 gzip'd bytes ("{0}" 40 000
// times and a 100 000-character parameter) asked for a 4 GB message.
const MaxFormattedChars = 8192

// format fills a logentry template with its params as Relay does for the
// two template styles SDKs send: printf ("%s", "%d", "%r", "%%"; "%(name)s"
// with an object of params) and positional braces ("{}", "{0}"). A
// template whose placeholders do not match its params is shown as it is.
// The result holds at most MaxFormattedChars characters; truncated says
// that it was cut there. The work is linear in the template, whatever the
// params: past the bound the template is only checked, not written.
func format(template string, params any) (text string, truncated bool) {
	var w *messageWriter
	ok := false
	switch p := params.(type) {
	case []any:
		w, ok = formatList(template, p)
	case map[string]any:
		w, ok = formatPrintf(template, func(name string, _ int) (any, bool) {
			v, found := p[name]
			return v, found && name != ""
		})
	}
	if !ok {
		return template, false
	}
	return w.String(), w.truncated
}

// formatList formats a template with a list of params: printf style,
// else braces; false when the list is empty or neither style fits.
func formatList(template string, p []any) (*messageWriter, bool) {
	if len(p) == 0 {
		return nil, false
	}
	if w, ok := formatPrintf(template, func(name string, i int) (any, bool) {
		if name != "" || i >= len(p) {
			return nil, false
		}
		return p[i], true
	}); ok {
		return w, true
	}
	return formatBraces(template, p)
}

// messageWriter collects a formatted message up to MaxFormattedChars
// characters and drops the rest, remembering that it did.
type messageWriter struct {
	strings.Builder
	left      int // characters that may still be written
	truncated bool
}

func newMessageWriter() *messageWriter { return &messageWriter{left: MaxFormattedChars} }

// full says that nothing more will be written.
func (w *messageWriter) full() bool { return w.truncated }

// writeByte writes one byte of the template; a UTF-8 continuation byte
// belongs to the character before it and costs nothing.
func (w *messageWriter) writeByte(c byte) {
	if w.truncated {
		return
	}
	if utf8.RuneStart(c) {
		if w.left == 0 {
			w.truncated = true
			return
		}
		w.left--
	}
	w.WriteByte(c)
}

// writeString writes s, or as many of its characters as are left; its
// cost is bounded by what it writes, not by len(s).
func (w *messageWriter) writeString(s string) {
	if w.truncated {
		return
	}
	end := 0
	for end < len(s) && w.left > 0 {
		_, size := utf8.DecodeRuneInString(s[end:])
		end += size
		w.left--
	}
	w.WriteString(s[:end])
	if end < len(s) {
		w.truncated = true
	}
}

// writeParam writes a parameter as its text; once the writer is full the
// text is not even made.
func (w *messageWriter) writeParam(v any) {
	if !w.full() {
		w.writeString(paramText(v))
	}
}

// formatPrintf replaces printf placeholders: "%" [ "(" name ")" ] flags
// and width, then a conversion letter.
func formatPrintf(template string, param func(name string, i int) (any, bool)) (*messageWriter, bool) {
	w := newMessageWriter()
	next, used := 0, 0
	for i := 0; i < len(template); i++ {
		c := template[i]
		if c != '%' {
			w.writeByte(c)
			continue
		}
		if strings.HasPrefix(template[i+1:], "%") {
			w.writeByte('%')
			i++
			continue
		}
		end, ok := printfParam(w, template, i+1, param, &next)
		if !ok {
			return nil, false
		}
		used++
		i = end
	}
	return w, used > 0
}

// printfParam writes the param of the placeholder at i (after its "%")
// and returns the index of its conversion letter; false when it is not a
// placeholder or has no param. next counts the unnamed ones.
func printfParam(w *messageWriter, template string, i int, param func(name string, i int) (any, bool), next *int) (int, bool) {
	name, end, ok := placeholder(template, i)
	if !ok {
		return 0, false
	}
	v, ok := param(name, *next)
	if !ok {
		return 0, false
	}
	if name == "" {
		*next++
	}
	w.writeParam(v)
	return end, true
}

// placeholder reads "(name)", flags, width and precision from i and
// returns the index of the conversion letter.
func placeholder(s string, i int) (name string, end int, ok bool) {
	if name, i, ok = placeholderName(s, i); !ok {
		return "", 0, false
	}
	for i < len(s) && strings.IndexByte("#0- +.0123456789", s[i]) >= 0 {
		i++
	}
	if i >= len(s) || strings.IndexByte("sdirfFeEgGxXoc", s[i]) < 0 {
		return "", 0, false
	}
	return name, i, true
}

// placeholderName reads a "(name)" at i, if there is one, and returns
// the index after it.
func placeholderName(s string, i int) (name string, end int, ok bool) {
	if !strings.HasPrefix(s[i:], "(") {
		return "", i, true
	}
	close := strings.IndexByte(s[i:], ')')
	if close < 0 {
		return "", 0, false
	}
	return s[i+1 : i+close], i + close + 1, true
}

// formatBraces replaces "{}" (in order) and "{n}" placeholders.
func formatBraces(template string, params []any) (*messageWriter, bool) {
	w := newMessageWriter()
	next, used := 0, 0
	for i := 0; i < len(template); i++ {
		if template[i] != '{' {
			w.writeByte(template[i])
			continue
		}
		close, ok := braceParam(w, template[i:], params, &next)
		if !ok {
			return nil, false
		}
		used++
		i += close
	}
	return w, used > 0
}

// braceParam writes the param of the brace placeholder that starts s and
// returns the index of its "}"; false when it is not one or names no
// param.
func braceParam(w *messageWriter, s string, params []any, next *int) (int, bool) {
	close := strings.IndexByte(s, '}')
	if close < 0 {
		return 0, false
	}
	idx, ok := braceIndex(s[1:close], next)
	if !ok || idx < 0 || idx >= len(params) {
		return 0, false
	}
	w.writeParam(params[idx])
	return close, true
}

// braceIndex is the param a brace placeholder names: "{n}" the n-th,
// "{}" the next one in order.
func braceIndex(inner string, next *int) (int, bool) {
	if inner == "" {
		*next++
		return *next - 1, true
	}
	n, err := strconv.Atoi(inner)
	return n, err == nil
}

func paramText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return sentrysignal.Text(map[string]any{"v": v}, "v")
}
