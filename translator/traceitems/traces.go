package traceitems

import (
	"cmp"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/internal/profileschema"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryid"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryresource"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrytrace"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/sentryattr"
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
	// Resource, when set, is the envelope's resource (what its profiles
	// carry: ProfilesBuilder.Resource), which the segment's own fields fill
	// where it has none; nil: the segment's own.
	Resource *sentryresource.Resource
}

// Attribute keys of spans with no semantic convention.
const (
	attrSpanOp          = sentryattr.Op
	attrSpanOrigin      = sentryattr.Origin
	attrSpanStatus      = sentryattr.Status
	attrSpanProfilerID  = sentryattr.ProfilerID
	attrSpanEventID     = sentryattr.EventID
	attrMeasurementPref = "sentry.measurements."
)

// AppendTraces adds one Sentry segment (a transaction item or a span
// container) to td as one ResourceSpans and returns the number of spans
// added. The resource is written by Resource.CopyTo, as the profiles' is:
// with TraceOptions.Resource, the same attributes as the profiles of the
// same envelope.
func AppendTraces(td ptrace.Traces, seg *sentrytrace.Segment, opts TraceOptions) int {
	rs := td.ResourceSpans().AppendEmpty()
	res := traceResource(seg, opts)
	res.CopyTo(rs.Resource())
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName(profileschema.ScopeName)
	spans := ss.Spans()
	spans.EnsureCapacity(len(seg.Spans))
	for i := range seg.Spans {
		s := &seg.Spans[i]
		span := spans.AppendEmpty()
		putSpan(span, s)
		if s.IsSegment {
			putSegmentAttrs(span.Attributes(), seg, opts)
		}
	}
	return len(seg.Spans)
}

// putSegmentAttrs: the segment's "event_id", and its "user" and "request"
// with IncludeUserData.
func putSegmentAttrs(attrs pcommon.Map, seg *sentrytrace.Segment, opts TraceOptions) {
	if seg.EventID != "" {
		attrs.PutStr(attrSpanEventID, seg.EventID)
	}
	if opts.IncludeUserData {
		putAttributes(attrs, seg.User)
	}
}

// traceResource is the resource of a segment: the envelope's when given,
// filled with the segment's own, under the options' service name and
// project.
func traceResource(seg *sentrytrace.Segment, opts TraceOptions) sentryresource.Resource {
	var r sentryresource.Resource
	if opts.Resource != nil {
		r = *opts.Resource
	}
	r.Fill(ResourceOfSegment(seg))
	r.ServiceName = cmp.Or(opts.ServiceName, r.ServiceName)
	r.ProjectID = cmp.Or(opts.ProjectID, r.ProjectID)
	return r
}

// ResourceOfSegment is what a transaction or span container says of its
// program: "release", "environment", "dist", "platform", "sdk" and
// "contexts.os", "contexts.device", "contexts.runtime" (span v2: the
// sentry.* and os.* attributes of its first span).
func ResourceOfSegment(seg *sentrytrace.Segment) sentryresource.Resource {
	return sentryresource.Resource{
		Release:     seg.Release,                                                        // release
		Environment: seg.Environment,                                                    // environment
		Dist:        seg.Dist,                                                           // dist
		Platform:    seg.Platform,                                                       // platform
		SDK:         sentry.ClientSDK{Name: seg.SDKName, Version: seg.SDKVersion},       // sdk.name, sdk.version
		OS:          sentry.OS{Name: seg.OSName, Version: seg.OSVersion},                // contexts.os.name, .version
		Runtime:     sentry.Runtime{Name: seg.RuntimeName, Version: seg.RuntimeVersion}, // contexts.runtime.name, .version
		// contexts.device.arch, .model, .manufacturer
		Device: sentry.Device{Architecture: seg.DeviceArch, Model: seg.DeviceModel, Manufacturer: seg.DeviceMaker},
	}
}

// putSpan maps one Sentry span.
func putSpan(span ptrace.Span, s *sentrytrace.Span) {
	// trace_id, span_id, parent_span_id
	span.SetTraceID(pcommon.TraceID(sentryid.Parse(s.TraceID)))
	span.SetSpanID(sentryid.SpanID(strings.ToLower(s.SpanID)))
	if s.ParentSpanID != "" {
		span.SetParentSpanID(sentryid.SpanID(strings.ToLower(s.ParentSpanID)))
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
	putMeasurements(attrs, s.Measurements)
}

// putMeasurements: "measurements", the value, and its unit beside it.
func putMeasurements(attrs pcommon.Map, measurements []sentrytrace.Measurement) {
	for _, m := range measurements {
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
