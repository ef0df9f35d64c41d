package translator

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// putResource writes the metadata of one profile item as resource
// attributes: semantic conventions where one exists, sentry.* otherwise.
func putResource(attrs pcommon.Map, p *sentry.Profile, opts ReceiveOptions) {
	attrs.EnsureCapacity(24)
	putStr := func(k, v string) {
		if v != "" {
			attrs.PutStr(k, v)
		}
	}
	attrs.PutStr(string(semconv.ServiceNameKey), serviceName(p, opts))
	putStr(string(semconv.ServiceVersionKey), p.Release)                // release
	putStr(string(semconv.DeploymentEnvironmentNameKey), p.Environment) // environment
	putStr(attrDist, p.Dist)                                            // dist
	putStr(attrPlatform, p.Platform)                                    // platform
	putStr(attrProjectID, opts.ProjectID)
	// profiler_id, chunk_id, event_id and the transaction are per profile
	// (or per process run): profile attributes, so that a backend that
	// makes series of resource attributes gets one per service, not one
	// per profile.

	// os
	putStr(string(semconv.OSNameKey), p.OS.Name)
	putStr(string(semconv.OSVersionKey), p.OS.Version)
	putStr(string(semconv.OSBuildIDKey), p.OS.BuildNumber)
	// device
	putStr(string(semconv.HostArchKey), p.Device.Architecture)
	putStr(string(semconv.DeviceModelIdentifierKey), p.Device.Model)
	putStr(string(semconv.DeviceManufacturerKey), p.Device.Manufacturer)
	putStr(attrDeviceLocale, p.Device.Locale)
	putStr(attrDeviceClassification, p.Device.Classification)
	if p.Device.IsEmulator.Set() {
		attrs.PutBool(attrDeviceIsEmulator, p.Device.IsEmulator.True())
	}
	// runtime
	putStr(string(semconv.ProcessRuntimeNameKey), p.Runtime.Name)
	putStr(string(semconv.ProcessRuntimeVersionKey), p.Runtime.Version)
	// client_sdk
	putStr(string(semconv.TelemetrySDKNameKey), p.ClientSDK.Name)
	putStr(string(semconv.TelemetrySDKVersionKey), p.ClientSDK.Version)
}

// serviceName is the override when given, else the package part of a release
// that follows Sentry's `package@version+build` convention, else
// "unknown_service:<platform>" in the spirit of the semconv fallback.
func serviceName(p *sentry.Profile, opts ReceiveOptions) string {
	return serviceNameOf(opts.ServiceName, p.Release, p.Platform)
}

// serviceNameOf is serviceName from the fields themselves, for the traces of
// the same SDK: one rule, so that a backend joins a service's profiles and
// spans.
func serviceNameOf(override, release, platform string) string {
	if override != "" {
		return override
	}
	if pkg, _, ok := strings.Cut(release, "@"); ok && pkg != "" {
		return pkg
	}
	if platform != "" {
		return "unknown_service:" + platform
	}
	return "unknown_service"
}

// putProfileAttributes keeps the per-item collections that have no OTLP place
// as structured profile attributes, so that the exporter can give them back.
func (b *ProfilesBuilder) putProfileAttributes(prof pprofile.Profile, p *sentry.Profile, start uint64) {
	d := b.dict
	var idx [11]int32
	n := 0
	add := func(key string, v pcommon.Value) {
		idx[n] = d.attrValue(key, v)
		n++
	}
	addStr := func(key, v string) {
		if v != "" {
			idx[n] = d.attrStr(key, v)
			n++
		}
	}

	addStr(attrProfilerID, p.ProfilerID) // profiler_id
	addStr(attrChunkID, p.ChunkID)       // chunk_id
	addStr(attrEventID, p.EventID)       // event_id
	// transaction (the first of transactions): what a pipeline routes or
	// filters on; the complete list is sentry.transactions.
	if len(p.Transactions) > 0 {
		t := p.Transactions[0]
		addStr(attrTransactionName, t.Name)
		addStr(attrTransactionID, t.ID)
		addStr(attrTransactionTraceID, t.TraceID)
	}

	// transaction / transactions
	if len(p.Transactions) > 0 {
		v := pcommon.NewValueSlice()
		s := v.Slice()
		s.EnsureCapacity(len(p.Transactions))
		for _, t := range p.Transactions {
			m := s.AppendEmpty().SetEmptyMap()
			putNonEmpty(m, keyID, t.ID)
			putNonEmpty(m, keyName, t.Name)
			putNonEmpty(m, keyTraceID, t.TraceID)
			putNonEmpty(m, keySegmentID, t.SegmentID)
			putNonEmpty(m, keyActiveThreadID, t.ActiveThreadID)
			if t.RelativeStartNS != 0 || t.RelativeEndNS != 0 {
				m.PutInt(keyRelativeStartNS, int64(t.RelativeStartNS))
				m.PutInt(keyRelativeEndNS, int64(t.RelativeEndNS))
			}
		}
		add(attrTransactions, v)
	}

	// profile.thread_metadata
	if len(p.ThreadMetadata) > 0 {
		v := pcommon.NewValueMap()
		m := v.Map()
		m.EnsureCapacity(len(p.ThreadMetadata))
		for _, tm := range p.ThreadMetadata {
			e := m.PutEmptyMap(tm.ThreadID)
			putNonEmpty(e, keyName, tm.Name)
			if tm.HasPriority {
				e.PutInt(keyPriority, tm.Priority)
			}
		}
		add(attrThreadMetadata, v)
	}

	// profile.queue_metadata
	if len(p.QueueMetadata) > 0 {
		v := pcommon.NewValueMap()
		m := v.Map()
		m.EnsureCapacity(len(p.QueueMetadata))
		for _, q := range p.QueueMetadata {
			putNonEmpty(m.PutEmptyMap(q.Address), keyLabel, q.Label)
		}
		add(attrQueueMetadata, v)
	}

	// debug_meta.images
	if len(p.DebugMeta.Images) > 0 {
		v := pcommon.NewValueSlice()
		s := v.Slice()
		s.EnsureCapacity(len(p.DebugMeta.Images))
		for _, img := range p.DebugMeta.Images {
			putImage(s.AppendEmpty().SetEmptyMap(), img)
		}
		add(attrDebugImages, v)
	}

	// measurements; V1 elapsed_since_start_ns become absolute timestamps like
	// V2 ones.
	if len(p.Measurements) > 0 {
		v := pcommon.NewValueMap()
		m := v.Map()
		m.EnsureCapacity(len(p.Measurements))
		for _, ms := range p.Measurements {
			e := m.PutEmptyMap(ms.Name)
			putNonEmpty(e, keyUnit, ms.Unit)
			values := e.PutEmptySlice(keyValues)
			values.EnsureCapacity(len(ms.Values))
			for _, mv := range ms.Values {
				ts := mv.Timestamp
				if !isV2(p) {
					ts = int64(start + mv.ElapsedSinceStartNS)
				}
				pt := values.AppendEmpty().SetEmptyMap()
				pt.PutInt(keyTimestampNano, ts)
				pt.PutDouble(keyValue, mv.Value)
			}
		}
		add(attrMeasurements, v)
	}

	if n > 0 {
		prof.AttributeIndices().FromRaw(idx[:n])
	}
}

func putImage(m pcommon.Map, img sentry.Image) {
	putNonEmpty(m, keyType, img.Type)
	putNonEmpty(m, keyCodeFile, img.CodeFile)
	putNonEmpty(m, keyCodeID, img.CodeID)
	putNonEmpty(m, keyDebugID, img.DebugID)
	putNonEmpty(m, keyDebugFile, img.DebugFile)
	putNonEmpty(m, keyUUID, img.UUID)
	putNonEmpty(m, keyArch, img.Arch)
	if img.ImageAddr != 0 {
		m.PutStr(keyImageAddr, hexAddr(img.ImageAddr))
	}
	if img.ImageVMAddr != 0 {
		m.PutStr(keyImageVMAddr, hexAddr(img.ImageVMAddr))
	}
	if img.ImageSize != 0 {
		m.PutInt(keyImageSize, int64(img.ImageSize))
	}
}

func putNonEmpty(m pcommon.Map, k, v string) {
	if v != "" {
		m.PutStr(k, v)
	}
}

// linker finds the Link of a sample.
//
// V1: the innermost span of the envelope's transaction that ran on the
// sample's thread at its time, else the transaction's root span. Without a
// transaction item it falls back to the profile's own transaction metadata
// (trace_id, segment_id), restricted to the transaction's relative range
// when the profile gives one.
//
// V2: the innermost span of the chunk's profiler active on the sample's
// thread at its time, as the receiver's span index knows them; none outside
// every span.
type linker struct {
	dict    *dictionaryBuilder
	lookup  SpanLookup
	spans   []spanRange
	root    int32
	profile []spanRange
}

type spanRange struct {
	thread     string
	start, end uint64
	all        bool // no time range: covers every sample
	link       int32
}

func newLinker(d *dictionaryBuilder, p *sentry.Profile, tx *sentry.TransactionEvent, lookup SpanLookup, start uint64) linker {
	var l linker
	if isV2(p) {
		l.dict, l.lookup = d, lookup
		return l
	}
	if tx != nil {
		trace := pcommon.TraceID(parseID16(tx.TraceID))
		if trace.IsEmpty() {
			return l
		}
		for _, s := range tx.Spans {
			span := ParseSpanID(s.SpanID)
			if span.IsEmpty() || s.ThreadID == "" || s.StartTimestamp < 0 || s.Timestamp < s.StartTimestamp {
				continue
			}
			l.spans = append(l.spans, spanRange{
				thread: s.ThreadID,
				start:  uint64(s.StartTimestamp),
				end:    uint64(s.Timestamp),
				link:   d.link(trace, span),
			})
		}
		if root := ParseSpanID(tx.SpanID); !root.IsEmpty() {
			l.root = d.link(trace, root)
		}
		return l
	}
	for _, t := range p.Transactions {
		trace := pcommon.TraceID(parseID16(t.TraceID))
		span := ParseSpanID(t.SegmentID)
		if trace.IsEmpty() || span.IsEmpty() {
			continue
		}
		r := spanRange{link: d.link(trace, span), all: t.RelativeEndNS <= t.RelativeStartNS}
		if !r.all {
			r.start, r.end = start+t.RelativeStartNS, start+t.RelativeEndNS
		}
		l.profile = append(l.profile, r)
	}
	return l
}

func (l *linker) linkFor(thread string, ts uint64) int32 {
	if l.lookup != nil {
		trace, span, ok := l.lookup.SpanAt(thread, ts)
		if !ok {
			return 0
		}
		return l.dict.link(trace, span)
	}
	best := -1
	for i := range l.spans {
		s := &l.spans[i]
		if s.thread == thread && s.start <= ts && ts < s.end && (best < 0 || s.start > l.spans[best].start) {
			best = i
		}
	}
	if best >= 0 {
		return l.spans[best].link
	}
	if l.root != 0 {
		return l.root
	}
	for _, r := range l.profile {
		if r.all || (r.start <= ts && ts <= r.end) {
			return r.link
		}
	}
	return 0
}
