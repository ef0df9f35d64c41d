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
func putTags(attrs pcommon.Map, tags any, depth int) {
	switch t := tags.(type) {
	case map[string]any:
		for _, k := range sortedKeys(t) {
			if t[k] != nil {
				attrs.PutStr(AttrTagPrefix+k, tagText(t[k]))
			}
		}
	case []any:
		for _, p := range t {
			pair, ok := p.([]any)
			if !ok || len(pair) != 2 {
				continue
			}
			if k, ok := pair[0].(string); ok {
				attrs.PutStr(AttrTagPrefix+k, tagText(pair[1]))
			}
		}
	case nil:
	default:
		sentrysignal.SetAny(attrs.PutEmpty(AttrPrefix+"tags"), t, depth)
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
func putUser(attrs pcommon.Map, user map[string]any, depth int) {
	for _, k := range sortedKeys(user) {
		v := user[k]
		if v == nil {
			continue
		}
		if key, ok := userKeys[k]; ok && tagText(v) != "" {
			attrs.PutStr(key, tagText(v)) // user.id may be a number
			continue
		}
		if s, ok := v.(string); ok && k == "ip_address" && s != "{{auto}}" {
			attrs.PutStr(string(semconv.ClientAddressKey), s)
			continue
		}
		sentrysignal.SetAny(attrs.PutEmpty(AttrUserPrefix+k), v, depth)
	}
}

// putRequest writes "request": url, method, query_string (text),
// fragment and headers under semantic conventions (header names
// lower-cased, each value a one-element string array as the conventions
// type them); cookies, data, env and the rest under
// sentry.request.<member>.
func putRequest(attrs pcommon.Map, req map[string]any, depth int) {
	for _, k := range sortedKeys(req) {
		v := req[k]
		if v == nil {
			continue
		}
		s, isStr := v.(string)
		switch {
		case k == "url" && isStr:
			attrs.PutStr(string(semconv.URLFullKey), s)
		case k == "method" && isStr:
			attrs.PutStr(string(semconv.HTTPRequestMethodKey), s)
		case k == "query_string" && isStr:
			attrs.PutStr(string(semconv.URLQueryKey), s)
		case k == "fragment" && isStr:
			attrs.PutStr(string(semconv.URLFragmentKey), s)
		case k == "headers" && putHeaders(attrs, v):
		default:
			sentrysignal.SetAny(attrs.PutEmpty(AttrRequestPrefix+k), v, depth)
		}
	}
}

// putHeaders writes request headers (an object, or [name, value] pairs);
// false when they are of neither shape.
func putHeaders(attrs pcommon.Map, headers any) bool {
	put := func(name string, value any) {
		key := "http.request.header." + strings.ToLower(name)
		var values pcommon.Slice
		if v, ok := attrs.Get(key); ok && v.Type() == pcommon.ValueTypeSlice {
			values = v.Slice() // a header sent twice
		} else {
			values = attrs.PutEmptySlice(key)
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
		for _, p := range t {
			if pair, ok := p.([]any); ok && len(pair) == 2 {
				if k, ok := pair[0].(string); ok {
					put(k, pair[1])
				}
			}
		}
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
