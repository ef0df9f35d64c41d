package android

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/art"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/internal/sentrytime"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// androidPayload is the JSON of an Android profile that carries an ART
// method trace: a transaction profile (`profile` item, no `version`) or a
// continuous chunk (`profile_chunk`, `version` absent, "2" or
// "2.android-trace", with `sampled_profile`).
type androidPayload struct {
	// Both.
	Platform       string          `json:"platform"`
	Release        string          `json:"release"`
	Environment    string          `json:"environment"`
	BuildID        string          `json:"build_id"`
	DebugMeta      json.RawMessage `json:"debug_meta"`
	Measurements   json.RawMessage `json:"measurements"`
	SampledProfile string          `json:"sampled_profile"`
	JSProfile      json.RawMessage `json:"js_profile"` // React Native: the JS thread, sample format
	Timestamp      json.RawMessage `json:"timestamp"`
	ClientSDK      struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"client_sdk"`

	// Continuous chunk.
	ChunkID    string `json:"chunk_id"`
	ProfilerID string `json:"profiler_id"`

	// Transaction profile.
	ProfileID           string          `json:"profile_id"`
	AndroidAPILevel     json.Number     `json:"android_api_level"`
	DeviceManufacturer  string          `json:"device_manufacturer"`
	DeviceModel         string          `json:"device_model"`
	DeviceLocale        string          `json:"device_locale"`
	DeviceIsEmulator    *bool           `json:"device_is_emulator"`
	DeviceOSName        string          `json:"device_os_name"`
	DeviceOSVersion     string          `json:"device_os_version"`
	DeviceOSBuildNumber string          `json:"device_os_build_number"`
	VersionName         string          `json:"version_name"`
	VersionCode         string          `json:"version_code"`
	TransactionID       string          `json:"transaction_id"`
	TransactionName     string          `json:"transaction_name"`
	TraceID             string          `json:"trace_id"`
	Transactions        json.RawMessage `json:"transactions"`
	DeviceArchitecture  string          `json:"architecture"`
}

// IsAndroidTrace reports whether a profile payload carries an ART method
// trace (`sampled_profile`): the Android formats the sample-format decoder
// refuses.
func IsAndroidTrace(payload []byte) bool {
	var probe struct {
		SampledProfile json.RawMessage `json:"sampled_profile"`
	}
	return json.Unmarshal(payload, &probe) == nil && len(probe.SampledProfile) > 2
}

// DecodeAndroid turns an Android profile payload with an ART method trace
// into the sample model the builder reads: each method a frame, each slice
// of a thread's time between two trace records a sample on the stack open
// during it, with that time in SampleWallNS. A transaction profile is V1
// (sample times relative to its timestamp; fallback is used when the
// payload has none); a chunk is V2, its sample times counted from its
// `timestamp`, else from fallback minus the trace's length. The warnings
// say what of the trace was read in a lenient way (undeclaredWarning).
func DecodeAndroid(payload []byte, fallback time.Time, limits art.Limits) (*sentry.Profile, []*sentry.Error, error) {
	var a androidPayload
	if err := json.Unmarshal(payload, &a); err != nil {
		return nil, nil, sentry.NewError(sentry.ReasonInvalidJSON, err.Error())
	}
	trace, err := decodeSampledProfile(a.SampledProfile, limits)
	if err != nil {
		return nil, nil, err
	}
	p, err := androidProfile(a, trace, fallback)
	if err != nil {
		return nil, nil, err
	}
	return p, undeclaredWarning(trace), nil
}

// decodeSampledProfile reads "sampled_profile": a base64 ART method trace.
func decodeSampledProfile(sampled string, limits art.Limits) (*art.Trace, error) {
	raw, err := art.DecodeBase64(sampled)
	if err != nil {
		return nil, sentry.NewError(sentry.ReasonInvalidSampledProfile, err.Error())
	}
	trace, err := art.Decode(raw, limits)
	if err != nil {
		return nil, sentry.NewError(sentry.ReasonInvalidSampledProfile, err.Error())
	}
	return trace, nil
}

// DecodeARTTrace turns a bare ART method trace file (either form, as
// Debug.startMethodTracing or Android Studio saves it) into a continuous
// chunk of platform android with nothing of the metadata a Sentry payload
// adds. The trace's own start time is on the device's monotonic clock, not
// the calendar: the chunk is placed to end at end.
func DecodeARTTrace(raw []byte, end time.Time, limits art.Limits) (*sentry.Profile, []*sentry.Error, error) {
	trace, err := art.Decode(raw, limits)
	if err != nil {
		return nil, nil, sentry.NewError(sentry.ReasonInvalidSampledProfile, err.Error())
	}
	start := end.Add(-time.Duration(trace.ElapsedMicros) * time.Microsecond)
	p := &sentry.Profile{Platform: "android", Version: sentry.VersionV2, Timestamp: start.UTC()}
	addTraceSamples(p, trace, start)
	return p, undeclaredWarning(trace), nil
}

// undeclaredWarning reports the methods a trace's records name but the
// trace does not declare: their records are kept, their frames named
// "unknown.<id>" (vroom and Android Studio show them as unknown methods
// too; Relay does not check). Nil when every method is declared.
func undeclaredWarning(trace *art.Trace) []*sentry.Error {
	if len(trace.Undeclared) == 0 {
		return nil
	}
	return []*sentry.Error{sentry.NewError(sentry.ReasonInvalidSampledProfile, fmt.Sprintf(
		"%d records name %d methods the trace does not declare (%s); kept as %s.<id>",
		trace.UndeclaredRecords, len(trace.Undeclared), strings.Join(firstIDs(trace.Undeclared, 5), ", "), art.UnknownClass))}
}

// firstIDs are the first n method ids in hex, "…" after them when there
// are more.
func firstIDs(ids []uint32, n int) []string {
	out := make([]string, 0, min(len(ids), n)+1)
	for _, id := range ids[:min(len(ids), n)] {
		out = append(out, fmt.Sprintf("%#x", id))
	}
	if len(ids) > n {
		out = append(out, "…")
	}
	return out
}

// androidProfile maps the payload's metadata and the trace's samples.
func androidProfile(a androidPayload, trace *art.Trace, fallback time.Time) (*sentry.Profile, error) {
	p := androidMetadata(a)
	// transaction_* or transactions[] → transactions (V1 links).
	txs, err := androidTransactions(a)
	if err != nil {
		return nil, err
	}
	p.Transactions = txs
	if err := androidDebugMeta(p, a); err != nil {
		return nil, err
	}

	// timestamp: the start of the trace.
	start := fallback.Add(-time.Duration(trace.ElapsedMicros) * time.Microsecond)
	if p.Version == sentry.VersionV1 {
		start = fallback
	}
	if ts, ok := androidTimestamp(a.Timestamp); ok {
		start = ts
	}
	p.Timestamp = start.UTC()
	if err := androidMeasurements(p, a.Measurements, start); err != nil {
		return nil, err
	}
	addTraceSamples(p, trace, start)
	if err := addJSProfile(p, a.JSProfile); err != nil {
		return nil, err
	}
	return p, nil
}

// androidMetadata maps what the payload says of its program: platform
// "android", "release", "environment", "client_sdk", the chunk's or the
// transaction profile's ids, and its device, os and runtime.
func androidMetadata(a androidPayload) *sentry.Profile {
	p := &sentry.Profile{
		Platform: "android", Release: androidRelease(a), Environment: a.Environment,
		ClientSDK: sentry.ClientSDK{Name: a.ClientSDK.Name, Version: a.ClientSDK.Version},
	}
	// chunk_id → a continuous chunk (V2), else a transaction profile (V1).
	if a.ChunkID != "" {
		p.Version, p.ChunkID, p.ProfilerID = sentry.VersionV2, a.ChunkID, a.ProfilerID
	} else {
		p.Version, p.EventID = sentry.VersionV1, strings.ReplaceAll(a.ProfileID, "-", "")
	}
	// device_* → device, os; android_api_level → runtime "Android" <level>.
	p.Device = sentry.Device{Manufacturer: a.DeviceManufacturer, Model: a.DeviceModel, Locale: a.DeviceLocale,
		Architecture: a.DeviceArchitecture, IsEmulator: optionalBool(a.DeviceIsEmulator)}
	p.OS = sentry.OS{Name: a.DeviceOSName, Version: a.DeviceOSVersion, BuildNumber: a.DeviceOSBuildNumber}
	if a.AndroidAPILevel != "" {
		p.Runtime = sentry.Runtime{Name: "Android", Version: a.AndroidAPILevel.String()}
	}
	return p
}

// androidRelease: "release", else version_name (version_code), the
// release of a transaction profile.
func androidRelease(a androidPayload) string {
	if a.Release != "" || a.VersionName == "" {
		return a.Release
	}
	if a.VersionCode == "" {
		return a.VersionName
	}
	return a.VersionName + " (" + a.VersionCode + ")"
}

// optionalBool is a JSON boolean that may be absent (nil).
func optionalBool(b *bool) sentry.OptionalBool {
	switch {
	case b == nil:
		return sentry.BoolUnset
	case *b:
		return sentry.BoolTrue
	}
	return sentry.BoolFalse
}

// androidTransactions maps transaction_id, transaction_name and trace_id (a
// transaction profile's one transaction) and transactions[].
func androidTransactions(a androidPayload) ([]sentry.Transaction, error) {
	var out []sentry.Transaction
	if a.TransactionID != "" || a.TransactionName != "" {
		out = []sentry.Transaction{{ID: strings.ReplaceAll(a.TransactionID, "-", ""), Name: a.TransactionName,
			TraceID: strings.ReplaceAll(a.TraceID, "-", "")}}
	}
	if len(a.Transactions) == 0 {
		return out, nil
	}
	txs, err := decodeAndroidTransactions(a.Transactions)
	if err != nil {
		return nil, err
	}
	return append(out, txs...), nil
}

// decodeAndroidTransactions reads "transactions"[]: "id", "name",
// "trace_id", "active_thread_id", "relative_start_ns", "relative_end_ns".
func decodeAndroidTransactions(raw json.RawMessage) ([]sentry.Transaction, error) {
	var txs []struct {
		ID              string      `json:"id"`
		Name            string      `json:"name"`
		TraceID         string      `json:"trace_id"`
		ActiveThreadID  json.Number `json:"active_thread_id"`
		RelativeStartNS json.Number `json:"relative_start_ns"`
		RelativeEndNS   json.Number `json:"relative_end_ns"`
	}
	if err := json.Unmarshal(raw, &txs); err != nil {
		return nil, sentry.NewError(sentry.ReasonInvalidTransactionMetadata, "transactions: "+err.Error())
	}
	out := make([]sentry.Transaction, 0, len(txs))
	for _, tx := range txs {
		start, _ := strconv.ParseUint(tx.RelativeStartNS.String(), 10, 64)
		end, _ := strconv.ParseUint(tx.RelativeEndNS.String(), 10, 64)
		out = append(out, sentry.Transaction{ID: tx.ID, Name: tx.Name, TraceID: tx.TraceID,
			ActiveThreadID: tx.ActiveThreadID.String(), RelativeStartNS: start, RelativeEndNS: end})
	}
	return out, nil
}

// addJSProfile adds React Native's `js_profile` (a sample-format profile of
// the JS thread, absolute timestamps) to the same profile as one more
// thread: its frames as JavaScript frames, each sample worth the JS
// profiler's sampling interval, so that the JS thread's time stands beside
// the Java threads' in one flame graph, as Sentry's UI shows it.
func addJSProfile(p *sentry.Profile, raw json.RawMessage) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	js, err := decodeJSProfile(raw)
	if err != nil {
		return err
	}
	stackBase := int64(p.Stacks.Len())
	appendJSStacks(p, js)
	appendJSSamples(p, js.Samples, stackBase, jsInterval(js.Samples))
	addThreadMetadata(p, js.ThreadMetadata)
	return nil
}

// addThreadMetadata adds the threads p does not name yet: the JS thread is
// usually a thread of the trace too (mqt_js), and its name there stays.
func addThreadMetadata(p *sentry.Profile, threads []sentry.ThreadMetadata) {
	for _, tm := range threads {
		if !slices.ContainsFunc(p.ThreadMetadata, func(have sentry.ThreadMetadata) bool { return have.ThreadID == tm.ThreadID }) {
			p.ThreadMetadata = append(p.ThreadMetadata, tm)
		}
	}
}

// decodeJSProfile reads `js_profile` as the "profile" of a V2 JavaScript
// profile: refused when it is no JSON of that shape, or when its samples
// or stacks are malformed (other Relay rules are the JS profiler's own
// business).
func decodeJSProfile(raw json.RawMessage) (*sentry.Profile, error) {
	wrapped := append(append([]byte(`{"version":"2","platform":"javascript","profile":`), raw...), '}')
	js, err := sentry.DecodeProfile(wrapped)
	if err != nil {
		return nil, sentry.NewError(sentry.ReasonInvalidJSON, "js_profile: "+err.Error())
	}
	if err := sentry.Validate(js, sentry.DefaultLimits()); err != nil && malformedJS(err) {
		return nil, sentry.NewError(sentry.ReasonMalformedSamples, "js_profile: "+err.Error())
	}
	return js, nil
}

// malformedJS reports whether a JS profile's validation error is one of
// its samples or stacks (or not a Relay rule at all).
func malformedJS(err error) bool {
	var serr *sentry.Error
	return !errors.As(err, &serr) || serr.Reason == sentry.ReasonMalformedSamples || serr.Reason == sentry.ReasonMalformedStacks
}

// appendJSStacks appends the JS profile's frames (platform "javascript"
// unless they say) and its stacks, renumbered after p's.
func appendJSStacks(p *sentry.Profile, js *sentry.Profile) {
	frameBase := int64(len(p.Frames))
	for _, f := range js.Frames {
		f.Platform = cmp.Or(f.Platform, "javascript")
		p.Frames = append(p.Frames, f)
	}
	for i := range js.Stacks.Len() {
		p.Stacks.Append(offsetFrames(js.Stacks.At(i), frameBase)...)
	}
}

// offsetFrames is a stack's frame indices moved by base.
func offsetFrames(stack []int64, base int64) []int64 {
	indices := make([]int64, len(stack))
	for k, f := range stack {
		indices[k] = base + f
	}
	return indices
}

// appendJSSamples appends the JS samples, their stacks after stackBase,
// each worth interval of wall time and no CPU time; in a transaction
// profile (V1) at their time since its start, the ones before it left out.
func appendJSSamples(p *sentry.Profile, samples []sentry.Sample, stackBase int64, interval uint64) {
	start := p.Timestamp.UnixNano()
	for _, s := range samples {
		s.StackID += stackBase
		if p.Version == sentry.VersionV1 && !sinceStart(&s, start) {
			continue // before the profile: no place on its relative clock
		}
		p.Samples = append(p.Samples, s)
		p.SampleWallNS = append(p.SampleWallNS, interval)
		if p.SampleCPUNS != nil {
			p.SampleCPUNS = append(p.SampleCPUNS, 0) // the JS profiler measures no CPU time
		}
	}
}

// sinceStart puts a JS sample's "timestamp" on a V1 profile's clock: the
// time since start; false for a sample before it.
func sinceStart(s *sentry.Sample, start int64) bool {
	if s.Timestamp < start {
		return false
	}
	s.ElapsedSinceStartNS, s.Timestamp = uint64(s.Timestamp-start), 0
	return true
}

// threadIDTexts remembers each thread id's decimal text, the "thread_id"
// of its samples.
type threadIDTexts map[uint32]string

func (t threadIDTexts) of(tid uint32) string {
	text, ok := t[tid]
	if !ok {
		text = strconv.FormatUint(uint64(tid), 10)
		t[tid] = text
	}
	return text
}

// jsInterval is the median interval between consecutive JS samples (the
// JS profiler samples every 10 ms by default); 10 ms without two samples.
func jsInterval(samples []sentry.Sample) uint64 {
	var gaps []int64
	for i := 1; i < len(samples); i++ {
		if d := samples[i].Timestamp - samples[i-1].Timestamp; d > 0 {
			gaps = append(gaps, d)
		}
	}
	if len(gaps) == 0 {
		return 10_000_000
	}
	slices.Sort(gaps)
	return uint64(gaps[len(gaps)/2])
}

// addTraceSamples maps the trace: methods → frames (class.name as the
// function, the signature as its symbol, the source file and line), stacks,
// one sample per time slice, threads → thread_metadata.
func addTraceSamples(p *sentry.Profile, trace *art.Trace, start time.Time) {
	sl := trace.Slices()
	addTraceStacks(p, trace, sl.Stacks)
	base := start.UnixNano()
	threadIDs := threadIDTexts{}
	p.Samples = make([]sentry.Sample, 0, len(sl.Slices))
	p.SampleWallNS = make([]uint64, 0, len(sl.Slices))
	if trace.Clock == art.ClockDual {
		p.SampleCPUNS = make([]uint64, 0, len(sl.Slices))
	}
	for _, s := range sl.Slices {
		addSlice(p, s, threadIDs.of(s.Thread), base)
	}
	for _, th := range trace.Threads {
		p.ThreadMetadata = append(p.ThreadMetadata, sentry.ThreadMetadata{ThreadID: strconv.FormatUint(uint64(th.ID), 10), Name: th.Name})
	}
}

// addTraceStacks: the trace's stacks of methods → "stacks", each method
// one frame (class.name as the function, the signature as its symbol, the
// source file and line).
func addTraceStacks(p *sentry.Profile, trace *art.Trace, stacks [][]uint32) {
	frameOf := map[uint32]int64{}
	for _, stack := range stacks {
		indices := make([]int64, len(stack))
		for i, m := range stack {
			f, ok := frameOf[m]
			if !ok {
				method := trace.Method(m)
				f = int64(len(p.Frames))
				frameOf[m] = f
				p.Frames = append(p.Frames, sentry.Frame{
					Function: method.Class + "." + method.Name, Symbol: method.Signature,
					Module: method.Class, Filename: method.Source, Lineno: method.Line,
				})
			}
			indices[i] = f
		}
		p.Stacks.Append(indices...)
	}
}

// addSlice: one time slice of a thread's stack → one sample, its wall
// (and CPU) time in nanoseconds, at its start: since the profile's start
// (V1) or absolute from base (V2).
func addSlice(p *sentry.Profile, s art.Slice, tid string, base int64) {
	sample := sentry.Sample{StackID: int64(s.Stack), ThreadID: tid}
	p.SampleWallNS = append(p.SampleWallNS, uint64(s.Wall)*1000)
	if p.SampleCPUNS != nil {
		p.SampleCPUNS = append(p.SampleCPUNS, uint64(s.CPU)*1000)
	}
	offset := uint64(s.Start) * 1000
	if p.Version == sentry.VersionV1 {
		sample.ElapsedSinceStartNS = offset
	} else {
		sample.Timestamp = base + int64(offset)
	}
	p.Samples = append(p.Samples, sample)
}

// androidTimestamp reads `timestamp`: float seconds or RFC 3339
// (translator/internal/sentrytime); one at or before the epoch is none.
func androidTimestamp(raw json.RawMessage) (time.Time, bool) {
	t, err := sentrytime.Parse(raw)
	if err != nil || t <= 0 {
		return time.Time{}, false
	}
	return t.Time(), true
}

// androidDebugMeta maps debug_meta.images and build_id (the ProGuard
// mapping's UUID, which a deobfuscation step needs) to debug images.
func androidDebugMeta(p *sentry.Profile, a androidPayload) error {
	images, err := debugMetaImages(a.DebugMeta)
	if err != nil {
		return err
	}
	p.DebugMeta.Images = append(p.DebugMeta.Images, images...)
	// build_id → a proguard image of that uuid, unless debug_meta has it.
	if a.BuildID != "" && !hasProguardImage(p.DebugMeta.Images, a.BuildID) {
		p.DebugMeta.Images = append(p.DebugMeta.Images, sentry.Image{Type: "proguard", UUID: a.BuildID})
	}
	return nil
}

// hasProguardImage reports whether images hold the ProGuard mapping of
// uuid.
func hasProguardImage(images []sentry.Image, uuid string) bool {
	return slices.ContainsFunc(images, func(img sentry.Image) bool {
		return img.Type == "proguard" && strings.EqualFold(img.UUID, uuid)
	})
}

// debugMetaImages reads "debug_meta"."images"[]: "type", "uuid",
// "debug_id", "code_file", "debug_file".
func debugMetaImages(raw json.RawMessage) ([]sentry.Image, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var dm struct {
		Images []struct {
			Type      string `json:"type"`
			UUID      string `json:"uuid"`
			DebugID   string `json:"debug_id"`
			CodeFile  string `json:"code_file"`
			DebugFile string `json:"debug_file"`
		} `json:"images"`
	}
	if err := json.Unmarshal(raw, &dm); err != nil {
		return nil, sentry.NewError(sentry.ReasonInvalidJSON, "debug_meta: "+err.Error())
	}
	images := make([]sentry.Image, 0, len(dm.Images))
	for _, img := range dm.Images {
		images = append(images, sentry.Image{Type: img.Type, UUID: img.UUID,
			DebugID: img.DebugID, CodeFile: img.CodeFile, DebugFile: img.DebugFile})
	}
	return images, nil
}

// androidMeasurements maps `measurements`: {name: {unit, values: [{value,
// elapsed_since_start_ns | timestamp}]}}.
func androidMeasurements(p *sentry.Profile, raw json.RawMessage, start time.Time) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var ms map[string]struct {
		Unit   string               `json:"unit"`
		Values []androidMeasurement `json:"values"`
	}
	if err := json.Unmarshal(raw, &ms); err != nil {
		return sentry.NewError(sentry.ReasonInvalidJSON, fmt.Sprintf("measurements: %v", err))
	}
	for _, name := range slices.Sorted(maps.Keys(ms)) {
		m := ms[name]
		out := sentry.Measurement{Name: name, Unit: m.Unit}
		for _, v := range m.Values {
			out.Values = append(out.Values, androidMeasurementValue(v, p.Version, start))
		}
		p.Measurements = append(p.Measurements, out)
	}
	return nil
}

// androidMeasurement is one value of a measurement as Android SDKs send
// it.
type androidMeasurement struct {
	Value   float64         `json:"value"`
	Elapsed json.Number     `json:"elapsed_since_start_ns"`
	TS      json.RawMessage `json:"timestamp"`
}

// androidMeasurementValue: "value", and "elapsed_since_start_ns" (kept in
// a V1 profile, from start in a chunk), else "timestamp".
func androidMeasurementValue(v androidMeasurement, version string, start time.Time) sentry.MeasurementValue {
	mv := sentry.MeasurementValue{Value: v.Value}
	elapsed, err := strconv.ParseUint(v.Elapsed.String(), 10, 64)
	switch {
	case err == nil && version == sentry.VersionV1:
		mv.ElapsedSinceStartNS = elapsed
	case err == nil:
		mv.Timestamp = start.UnixNano() + int64(elapsed)
	default:
		if ts, ok := androidTimestamp(v.TS); ok {
			mv.Timestamp = ts.UnixNano()
		}
	}
	return mv
}
