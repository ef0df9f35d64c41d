package sentrygrouping

import (
	"regexp"
	"strings"
)

// Sentry groups a message, and an exception value when no stack trace
// groups, by its text with the values that change between occurrences
// replaced by placeholders (src/sentry/grouping/utils.py,
// normalize_message_for_grouping; the patterns of
// src/sentry/grouping/parameterization.py): "order 4711 failed at
// 2026-11-28T07:31:23Z" groups as "order <int> failed at <date>". Only the
// first two non-empty lines take part.

// parameter is one kind of value and the pattern that finds it. The
// patterns are tried in this order at each position of the text, the
// first that matches wins, as Sentry's combined pattern does.
type parameter struct {
	name    string
	pattern string
}

var parameters = [...]parameter{
	{"email", `[a-zA-Z0-9.!#$%&'*+/=?^_` + "`" + `{|}~-]+@[a-zA-Z0-9-]+(?:\.[a-zA-Z0-9-]+)*`},
	{"url", `\b(?:wss?|https?|ftp)://[^\s/$.?#].[^\s]*`},
	{"hostname", `\b(?:[a-zA-Z0-9\-]{1,63}\.)+?(?:` + topLevelDomains + `)\b`},
	{"ip", `\b(?:(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\b`},
	{"traceparent", `\b00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]\b|\b1-[0-9a-f]{8}-[0-9a-f]{24}\b`},
	{"uuid", `\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b`},
	{"sha1", `\b[0-9a-fA-F]{40}\b`},
	{"md5", `\b[0-9a-fA-F]{32}\b`},
	{"date", dateTimePattern},
	{"duration", `\b\d+ms|\d+(?:\.\d+)?s\b`},
	// 0x-prefixed hex of any length; bare hex of 8 to 128 digits in one
	// case, which must hold a digit (checked on the match: RE2 has no
	// lookahead).
	{"hex", `\b0[xX][0-9a-fA-F]+\b|\b[0-9a-f]{8,128}\b|\b[0-9A-F]{8,128}\b`},
	{"float", `-\d+\.\d+\b|\b\d+\.\d+\b`},
	// A minus sign counts when it does not join two words (checked on the
	// match: RE2 has no lookbehind).
	{"int", `-\d{1,7}\b|\b\d{1,7}\b`},
	// Only the value of key=value pairs.
	{"quoted_str", `='[^']+'|="[^"]+"`},
	{"bool", `=(?:True|true|False|false)`},
}

// topLevelDomains are the most used top-level domains; a host name under
// another is not replaced.
const topLevelDomains = `(?i:com|net|org|jp|de|uk|fr|br|it|ru|es|me|gov|pl|ca|au|cn|co|in|nl|edu|info|eu|ch|id|at|kr|cz|mx|be|tv|se|tr|tw|al|ua|ir|vn|cl|sk|ly|cc|to|no|fi|us|pt|dk|ar|hu|tk|gr|il|news|ro|my|biz|ie|za|nz|sg|ee|th|io|xyz|pe|bg|hk|rs|lt|link|ph|club|si|site|mobi|by|cat|wiki|la|ga|xxx|cf|hr|ng|jobs|online|kz|ug|gq|ae|is|lv|pro|fm|tips|ms|sa|app)`

// dateTimePattern covers ISO 8601 and RFC 3339 date-times (with or
// without a zone, fraction or T), dates and times of day, RFC 1123 and
// JavaScript's Date strings.
const dateTimePattern = `\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z?(?:[+-]?\d{2}:\d{2})?` +
	`|\d{4}-?[01]\d-?[0-3]\d[\sT][0-2]\d:?[0-5]\d(?::?[0-5]\d(?:\.\d+)?)?(?:[+-][0-2]\d:?[0-5]\d|Z)?` +
	`|(?:Sun|Mon|Tue|Wed|Thu|Fri|Sat),\s\d{1,2}\s(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\s\d{2,4}\s\d{1,2}:\d{1,2}(?::\d{1,2})?\s(?:[-+]\d{4}|UT|GMT|[ECMP][SD]T|[A-IK-Z])` +
	`|(?:Sun|Mon|Tue|Wed|Thu|Fri|Sat)\s(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\s\d{2}\s\d{4}\s\d{2}:\d{2}:\d{2}\sGMT[+-]\d{4}(?:\s\([^)]+\))?` +
	`|\d{4}-[01]\d-[0-3]\d` +
	`|[0-2]\d:[0-5]\d:[0-5]\d`

// parameterRe is every parameter's pattern as one alternation, a group
// each, so that one pass finds the first kind that matches.
var parameterRe = func() *regexp.Regexp {
	alts := make([]string, len(parameters))
	for i, p := range parameters {
		alts[i] = "(" + p.pattern + ")"
	}
	return regexp.MustCompile(strings.Join(alts, "|"))
}()

// normalizeMessage trims a message to its first two non-empty lines
// ("..." marks a cut) and replaces its parameters by placeholders. Its
// work is linear in the message: RE2 matches in linear time.
func normalizeMessage(message string) string {
	trimmed := firstLines(message, 2)
	if trimmed != message {
		trimmed += "..."
	}
	return parameterize(trimmed)
}

// firstLines joins the first n lines that hold more than whitespace.
func firstLines(s string, n int) string {
	var kept []string
	for line := range strings.Lines(s) {
		line = strings.TrimRight(line, "\r\n")
		if strings.TrimSpace(line) == "" {
			continue
		}
		if kept = append(kept, line); len(kept) == n {
			break
		}
	}
	return strings.Join(kept, "\n")
}

func parameterize(s string) string {
	matches := parameterRe.FindAllStringSubmatchIndex(s, -1)
	if matches == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range matches {
		b.WriteString(s[last:m[0]])
		b.WriteString(placeholder(s, m))
		last = m[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

// placeholder is the text that replaces the match m: <kind>, with the
// corrections RE2's lack of lookaround needs.
func placeholder(s string, m []int) string {
	name := matchedKind(m)
	text := s[m[0]:m[1]]
	if fix := placeholderFixes[name]; fix != nil {
		return fix(text, m[0] > 0 && isWordByte(s[m[0]-1]))
	}
	return "<" + name + ">"
}

// matchedKind is the name of the parameter whose group matched.
func matchedKind(m []int) string {
	for k, p := range parameters {
		if m[2+2*k] >= 0 {
			return p.name
		}
	}
	return ""
}

// placeholderFixes write the placeholders of the kinds whose pattern
// matched more than Sentry's replaces: a key=value pair keeps its "=",
// bare hex must hold a digit, and a minus sign joining two words is not
// a sign. afterWord says a word character precedes the match.
var placeholderFixes = map[string]func(text string, afterWord bool) string{
	"quoted_str": func(string, bool) string { return "=<quoted_str>" },
	"bool":       func(string, bool) string { return "=<bool>" },
	"hex": func(text string, _ bool) string {
		if strings.HasPrefix(strings.ToLower(text), "0x") || strings.ContainsAny(text, digits) {
			return "<hex>"
		}
		return text
	},
	"int": func(text string, afterWord bool) string {
		if afterWord && text[0] == '-' {
			return "-<int>"
		}
		return "<int>"
	},
}

const (
	digits    = "0123456789"
	wordBytes = "_" + digits + "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
)

func isWordByte(c byte) bool { return strings.IndexByte(wordBytes, c) >= 0 }
