package sentryevent

import (
	"sort"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// putTags writes "tags" (an object, or the [key, value] pairs some SDKs
// send) as sentry.tags.<key>; Sentry's tag values are strings, others are
// kept as their text. Tags of neither shape are kept whole under
// sentry.tags.
func putTags(attrs pcommon.Map, l *sentrysignal.Limiter, tags any, depth int) {
	put := func(k string, v any) { l.PutStr(attrs, AttrTagPrefix+k, tagText(v)) }
	switch t := tags.(type) {
	case map[string]any:
		for _, k := range sortedKeys(t) {
			if t[k] != nil { // a pair's null value is kept, as its empty text
				put(k, t[k])
			}
		}
	case []any:
		forEachPair(t, put)
	case nil:
	default:
		l.PutAny(attrs, AttrPrefix+"tags", t, depth)
	}
}

// forEachPair calls f with each [key, value] pair of a list (the form some
// SDKs send tags and headers in) whose key is a string; other elements
// are skipped.
func forEachPair(list []any, f func(k string, v any)) {
	for _, p := range list {
		pair, ok := p.([]any)
		if !ok || len(pair) != 2 {
			continue
		}
		if k, ok := pair[0].(string); ok {
			f(k, pair[1])
		}
	}
}

func tagText(x any) string {
	if s, ok := x.(string); ok {
		return s
	}
	return sentrysignal.Text(map[string]any{"v": x}, "v")
}

// userKeys are the "user" members with a semantic convention.
var userKeys = map[string]string{
	"id":       string(semconv.UserIDKey),
	"email":    string(semconv.UserEmailKey),
	"username": string(semconv.UserNameKey),
	"name":     string(semconv.UserFullNameKey),
}

// putUser writes "user": id, email, username, name and a real ip_address
// under semantic conventions; "{{auto}}" (Sentry's "take the connection's
// address", not an address) and the rest (geo, data, segment, …) under
// sentry.user.<member>.
func putUser(attrs pcommon.Map, l *sentrysignal.Limiter, user map[string]any, depth int) {
	for _, k := range sortedKeys(user) {
		v := user[k]
		if v == nil {
			continue
		}
		if key, text := userConvention(k, v); key != "" {
			l.PutStr(attrs, key, text)
			continue
		}
		l.PutAny(attrs, AttrUserPrefix+k, v, depth)
	}
}

// userConvention is the semantic convention's key and value of member k
// of "user", empty when it has none: a number's text for user.id, a real
// address for ip_address.
func userConvention(k string, v any) (key, text string) {
	if key, ok := userKeys[k]; ok && tagText(v) != "" {
		return key, tagText(v)
	}
	if s, ok := v.(string); ok && k == "ip_address" && s != "{{auto}}" {
		return string(semconv.ClientAddressKey), s
	}
	return "", ""
}

// putRequest writes "request": url, method, query_string (text),
// fragment and headers under semantic conventions (header names
// lower-cased, each value a one-element string array as the conventions
// type them); cookies, data, env and the rest under
// sentry.request.<member>.
func putRequest(attrs pcommon.Map, l *sentrysignal.Limiter, req map[string]any, depth int) {
	for _, k := range sortedKeys(req) {
		if v := req[k]; v != nil {
			putRequestMember(attrs, l, k, v, depth)
		}
	}
}

// putRequestMember writes member k of "request": under its convention
// when it has one, else as sentry.request.<k>.
func putRequestMember(attrs pcommon.Map, l *sentrysignal.Limiter, k string, v any, depth int) {
	key, hasKey := requestKeys[k]
	s, isStr := v.(string)
	switch {
	case hasKey && isStr:
		l.PutStr(attrs, key, s)
	case k == "headers" && putHeaders(attrs, l, v):
	default:
		l.PutAny(attrs, AttrRequestPrefix+k, v, depth)
	}
}

// requestKeys are the "request" members with a semantic convention when
// they are strings.
var requestKeys = map[string]string{
	"url":          string(semconv.URLFullKey),
	"method":       string(semconv.HTTPRequestMethodKey),
	"query_string": string(semconv.URLQueryKey),
	"fragment":     string(semconv.URLFragmentKey),
}

// putHeaders writes request headers (an object, or [name, value] pairs);
// false when they are of neither shape. A header sent twice appends to
// the first one's array, found in a Go map rather than by scanning attrs.
func putHeaders(attrs pcommon.Map, l *sentrysignal.Limiter, headers any) bool {
	seen := map[string]pcommon.Slice{}
	put := func(name string, value any) {
		key := "http.request.header." + strings.ToLower(name)
		values, ok := seen[key]
		if !ok {
			v, kept := l.Put(attrs, key)
			if !kept {
				return
			}
			values = v.SetEmptySlice()
			seen[key] = values
		}
		values.AppendEmpty().SetStr(tagText(value))
	}
	switch t := headers.(type) {
	case map[string]any:
		for _, k := range sortedKeys(t) {
			put(k, t[k])
		}
		return true
	case []any:
		forEachPair(t, put)
		return true
	}
	return false
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
