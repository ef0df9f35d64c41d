package translator

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrytrace"
)

// TraceOptions is what the receiver knows beyond a trace item.
type TraceOptions struct {
	// ServiceName, when set, is the service.name of every span, as
	// ReceiveOptions.ServiceName is of every profile.
	ServiceName string
	// ProjectID is the Sentry project of the envelope.
	ProjectID string
	// IncludeUserData copies the transaction's "user" and "request"
	// contexts (user id, email, name, IP address, URL, request headers)
	// onto its segment span. Off by default: they are personal data.
	IncludeUserData bool
}

// Attribute keys of spans with no semantic convention.
const (
	attrSpanOp          = "sentry.op"
	attrSpanOrigin      = "sentry.origin"
	attrSpanStatus      = "sentry.status"
	attrSpanProfilerID  = "sentry.profiler_id"
	attrSpanEventID     = "sentry.event_id"
	attrMeasurementPref = "sentry.measurements."
)

// AppendTraces adds one Sentry segment (a transaction item or a span
// container) to td as one ResourceSpans and returns the number of spans
// added. The resource carries the same attributes, under the same keys, as
// the profiles of the same SDK, so that a backend joins them by service.
func AppendTraces(td ptrace.Traces, seg *sentrytrace.Segment, opts TraceOptions) int {
	rs := td.ResourceSpans().AppendEmpty()
	putTraceResource(rs.Resource().Attributes(), seg, opts)
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName(scopeName)
	spans := ss.Spans()
	spans.EnsureCapacity(len(seg.Spans))
	for i := range seg.Spans {
		s := &seg.Spans[i]
		span := spans.AppendEmpty()
		putSpan(span, s)
		if s.IsSegment && seg.EventID != "" {
			span.Attributes().PutStr(attrSpanEventID, seg.EventID) // event_id
		}
		if s.IsSegment && opts.IncludeUserData {
			putAttributes(span.Attributes(), seg.User) // user, request
		}
	}
	return len(seg.Spans)
}

// putTraceResource writes the segment's metadata as putResource writes a
// profile's.
func putTraceResource(attrs pcommon.Map, seg *sentrytrace.Segment, opts TraceOptions) {
	putStr := func(k, v string) {
		if v != "" {
			attrs.PutStr(k, v)
		}
	}
	attrs.PutStr(string(semconv.ServiceNameKey), serviceNameOf(opts.ServiceName, seg.Release, seg.Platform))
	putStr(string(semconv.ServiceVersionKey), seg.Release)                // release
	putStr(string(semconv.DeploymentEnvironmentNameKey), seg.Environment) // environment
	putStr(attrDist, seg.Dist)                                            // dist
	putStr(attrPlatform, seg.Platform)                                    // platform
	putStr(attrProjectID, opts.ProjectID)
	putStr(string(semconv.OSNameKey), seg.OSName)                        // contexts.os.name
	putStr(string(semconv.OSVersionKey), seg.OSVersion)                  // contexts.os.version
	putStr(string(semconv.ProcessRuntimeNameKey), seg.RuntimeName)       // contexts.runtime.name
	putStr(string(semconv.ProcessRuntimeVersionKey), seg.RuntimeVersion) // contexts.runtime.version
	putStr(string(semconv.HostArchKey), seg.DeviceArch)                  // contexts.device.arch
	putStr(string(semconv.DeviceModelIdentifierKey), seg.DeviceModel)    // contexts.device.model
	putStr(string(semconv.DeviceManufacturerKey), seg.DeviceMaker)       // contexts.device.manufacturer
	putStr(string(semconv.TelemetrySDKNameKey), seg.SDKName)             // sdk.name
	putStr(string(semconv.TelemetrySDKVersionKey), seg.SDKVersion)       // sdk.version
}

// putSpan maps one Sentry span.
func putSpan(span ptrace.Span, s *sentrytrace.Span) {
	// trace_id, span_id, parent_span_id
	span.SetTraceID(pcommon.TraceID(parseID16(s.TraceID)))
	span.SetSpanID(ParseSpanID(strings.ToLower(s.SpanID)))
	if s.ParentSpanID != "" {
		span.SetParentSpanID(ParseSpanID(strings.ToLower(s.ParentSpanID)))
	}
	// transaction (segments), description / name, else op
	span.SetName(s.Name)
	// start_timestamp, timestamp / end_timestamp
	span.SetStartTimestamp(pcommon.Timestamp(max(s.Start, 0)))
	span.SetEndTimestamp(pcommon.Timestamp(max(s.End, 0)))
	// op → kind
	span.SetKind(spanKind(s.Op))
	// status
	putStatus(span.Status(), s.Status)

	attrs := span.Attributes()
	attrs.EnsureCapacity(len(s.Attributes) + 4 + 2*len(s.Measurements))
	// data / attributes, then tags
	putAttributes(attrs, s.Attributes)
	putAttrStr(attrs, attrSpanOp, s.Op)                 // op
	putAttrStr(attrs, attrSpanOrigin, s.Origin)         // origin
	putAttrStr(attrs, attrSpanProfilerID, s.ProfilerID) // contexts.profile.profiler_id
	if s.Status != "" && s.Status != "ok" {
		attrs.PutStr(attrSpanStatus, s.Status) // status, as Sentry names it
	}
	// measurements: the value, and its unit beside it
	for _, m := range s.Measurements {
		attrs.PutDouble(attrMeasurementPref+m.Name, m.Value)
		if m.Unit != "" {
			attrs.PutStr(attrMeasurementPref+m.Name+".unit", m.Unit)
		}
	}
}

func putAttrStr(attrs pcommon.Map, k, v string) {
	if v != "" {
		attrs.PutStr(k, v)
	}
}

// spanKind reads the kind from Sentry's operation names.
func spanKind(op string) ptrace.SpanKind {
	switch {
	case op == "http.server":
		return ptrace.SpanKindServer
	case op == "http.client", op == "db" || strings.HasPrefix(op, "db."), op == "cache" || strings.HasPrefix(op, "cache."):
		return ptrace.SpanKindClient
	case op == "queue.publish":
		return ptrace.SpanKindProducer
	case op == "queue.process":
		return ptrace.SpanKindConsumer
	}
	return ptrace.SpanKindInternal
}

// putStatus maps Sentry's span status: "ok" is Ok, absent is Unset, and any
// other ("internal_error", "not_found", …, span v2 "error") is Error with
// the status as its message.
func putStatus(st ptrace.Status, status string) {
	switch status {
	case "":
	case "ok":
		st.SetCode(ptrace.StatusCodeOk)
	default:
		st.SetCode(ptrace.StatusCodeError)
		st.SetMessage(status)
	}
}

// putAttributes writes decoded JSON values with their types.
func putAttributes(attrs pcommon.Map, list []sentrytrace.Attribute) {
	for _, a := range list {
		putValue(attrs.PutEmpty(a.Key), a.Value)
	}
}

func putValue(v pcommon.Value, x any) {
	switch t := x.(type) {
	case string:
		v.SetStr(t)
	case bool:
		v.SetBool(t)
	case int64:
		v.SetInt(t)
	case float64:
		v.SetDouble(t)
	case []any:
		s := v.SetEmptySlice()
		s.EnsureCapacity(len(t))
		for _, e := range t {
			putValue(s.AppendEmpty(), e)
		}
	}
}
