package sentryevent

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryresource"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal/signaltest"
)

// eventFromRecord reads a record written by PutLogRecord back into the
// event's members; the members a resource builder maps come from res.
// It is the "back" column of README.md's mapping table.
func eventFromRecord(lr plog.LogRecord, res sentryresource.Resource) map[string]any {
	ev := map[string]any{}
	if lr.Timestamp() != 0 {
		ev["timestamp"] = strconv.FormatUint(uint64(lr.Timestamp()), 10)
	}
	if lr.SeverityText() != "" {
		ev["level"] = lr.SeverityText()
	}
	logentry, tags, user, request, headers := map[string]any{}, map[string]any{}, map[string]any{}, map[string]any{}, map[string]any{}
	hasException := false
	for k, v := range lr.Attributes().All() {
		switch {
		case k == "log.record.uid":
			ev["event_id"] = v.Str()
		case k == AttrMessageTemplate:
			logentry["message"] = v.Str()
		case k == AttrMessageParameters:
			logentry["params"] = signaltest.ToAny(v)
		case k == "exception.type" || k == "exception.message":
			hasException = true // derived from sentry.exception
		case k == "exception.stacktrace":
		case strings.HasPrefix(k, AttrTagPrefix):
			tags[strings.TrimPrefix(k, AttrTagPrefix)] = v.Str()
		case strings.HasPrefix(k, AttrUserPrefix):
			user[strings.TrimPrefix(k, AttrUserPrefix)] = signaltest.ToAny(v)
		case strings.HasPrefix(k, AttrRequestPrefix):
			request[strings.TrimPrefix(k, AttrRequestPrefix)] = signaltest.ToAny(v)
		case strings.HasPrefix(k, "http.request.header."):
			headers[strings.TrimPrefix(k, "http.request.header.")] = v.Slice().At(0).Str()
		case strings.HasPrefix(k, AttrPrefix):
			ev[strings.TrimPrefix(k, AttrPrefix)] = signaltest.ToAny(v)
		default:
			if member, ok := userMemberOf[k]; ok {
				user[member] = v.Str()
			} else if member, ok := requestMemberOf[k]; ok {
				request[member] = v.Str()
			}
		}
	}
	body := lr.Body().Str()
	chain := readExceptions(ev)
	fromException := hasException && logentry["message"] == nil && len(chain) > 0 && body == chain.main().summary()
	if body != "" && !fromException {
		logentry["formatted"] = body
	}
	if len(headers) > 0 {
		request["headers"] = headers
	}
	for member, m := range map[string]map[string]any{"logentry": logentry, "tags": tags, "user": user, "request": request} {
		if len(m) > 0 {
			ev[member] = m
		}
	}
	for member, v := range map[string]string{"release": res.Release, "environment": res.Environment,
		"dist": res.Dist, "platform": res.Platform, "server_name": res.ServerName} {
		if v != "" {
			ev[member] = v
		}
	}
	return ev
}

var userMemberOf = map[string]string{"user.id": "id", "user.email": "email", "user.name": "username",
	"user.full_name": "name", "client.address": "ip_address"}

var requestMemberOf = map[string]string{"url.full": "url", "http.request.method": "method",
	"url.query": "query_string", "url.fragment": "fragment"}

// canonical is what of an event the mapping promises to keep, in the form
// eventFromRecord writes: the message as "logentry", tags as an object of
// strings, timestamps in nanoseconds, personal data only when asked for.
func canonical(t *testing.T, payload []byte, opts sentrysignal.Options) map[string]any {
	ev, err := Decode(payload, opts)
	if err != nil {
		t.Fatal(err)
	}
	doc := ev.Doc
	out := map[string]any{}
	for k, v := range doc {
		if v == nil {
			continue
		}
		// Sentry reads a bare interface list as {"values": list}.
		if list, ok := v.([]any); ok && listInterfaces[k] {
			v = map[string]any{"values": list}
		}
		out[k] = v
	}
	msg := readMessage(doc)
	delete(out, msg.member)
	if !msg.isEmpty() {
		le := map[string]any{"formatted": msg.formatted}
		if msg.template != "" {
			le["message"] = msg.template
		}
		if msg.params != nil {
			le["params"] = msg.params
		}
		out["logentry"] = le
	}
	if ev.Timestamp != 0 {
		out["timestamp"] = strconv.FormatUint(uint64(ev.Timestamp), 10)
	}
	if ev.EventID != "" {
		out["event_id"] = ev.EventID
	}
	if tags, ok := doc["tags"].(map[string]any); ok {
		text := map[string]any{}
		for k, v := range tags {
			if v != nil {
				text[k] = tagText(v)
			}
		}
		out["tags"] = text
	}
	if !opts.IncludeUserData {
		delete(out, "user")
		delete(out, "request")
		for _, k := range []string{"exception", "threads"} {
			if out[k] != nil {
				out[k] = withoutVars(out[k], false)
			}
		}
	}
	if req, ok := out["request"].(map[string]any); ok {
		if h, ok := req["headers"].(map[string]any); ok {
			lower := map[string]any{}
			for k, v := range h {
				lower[strings.ToLower(k)] = v
			}
			req["headers"] = lower
		}
	}
	return out
}

// normalize compares JSON values as JSON: numbers as float64.
func normalize(t *testing.T, x any) any {
	t.Helper()
	b, err := json.Marshal(x)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return withoutNullMembers(out)
}

// withoutNullMembers drops the members whose value is null, at any depth:
// in Sentry's protocol a null member says what an absent one says, and the
// LogRecord keeps neither.
func withoutNullMembers(x any) any {
	switch v := x.(type) {
	case map[string]any:
		for k, m := range v {
			if m == nil {
				delete(v, k)
				continue
			}
			v[k] = withoutNullMembers(m)
		}
	case []any:
		for i := range v {
			v[i] = withoutNullMembers(v[i])
		}
	}
	return x
}

func TestRoundTrip(t *testing.T) {
	files := []string{"node11_capture_message.json", "node11_error_chained.json", "browser11_error.json",
		"python1910_store_error.json", "python268_logging_error.json", "python268_capture_message.json",
		"node11_captured_event_1.json", "node11_captured_event_2.json",
		"python1910_captured_store_1.json", "python1910_captured_store_2.json",
		"python1910_captured_store_3.json", "python1910_captured_store_4.json",
		"python268_captured_event_1.json", "python268_captured_event_2.json", "python268_captured_event_3.json",
		"browser11_captured_event_1.json", "go050_captured_event_1.json", "go050_captured_event_2.json"}
	for _, file := range files {
		for _, opts := range []sentrysignal.Options{{}, {IncludeUserData: true}} {
			t.Run(file+"/user_data="+strconv.FormatBool(opts.IncludeUserData), func(t *testing.T) {
				payload := signaltest.ReadTestdata(t, file)
				ev, err := Decode(payload, opts)
				if err != nil {
					t.Fatal(err)
				}
				lr := plog.NewLogRecord()
				ev.PutLogRecord(lr, opts)
				got := normalize(t, eventFromRecord(lr, ev.Resource))
				want := normalize(t, canonical(t, payload, opts))
				if !reflect.DeepEqual(got, want) {
					gb, _ := json.MarshalIndent(got, "", " ")
					wb, _ := json.MarshalIndent(want, "", " ")
					t.Errorf("read back:\n%s\nwant:\n%s", gb, wb)
				}
			})
		}
	}
}
