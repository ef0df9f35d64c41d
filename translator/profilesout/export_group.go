package profilesout

import (
	"fmt"
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/internal/frametype"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

// profileGroup is the profiles of one profiler in a request: they become
// one run of chunks, so that a profiler reporting every few seconds (the
// eBPF profiler reports every 5 s) still gives chunks as long as an SDK's.
type profileGroup struct {
	meta      resourceMeta
	profs     []pprofile.Profile
	wheres    []string
	resources []int // ResourceProfiles indices, in first-use order
}

// where names the group's first profile in errors, and how many others
// were merged into it.
func (g *profileGroup) where() string {
	if len(g.wheres) == 1 {
		return g.wheres[0]
	}
	return fmt.Sprintf("%s (and %d more profiles of the same profiler)", g.wheres[0], len(g.wheres)-1)
}

// groupKey is what profiles must share to be merged: the profiler and every
// top-level field of the chunk.
type groupKey struct {
	profilerID, platform, language, release, environment, dist string
}

// grouping collects the groups of one request in first-use order.
type grouping struct {
	groups []*profileGroup
	index  map[groupKey]*profileGroup
}

func (g *grouping) add(meta resourceMeta, prof pprofile.Profile, where string, mergeable bool) {
	if mergeable {
		k := groupKey{meta.profilerID, meta.platform, meta.language, meta.release, meta.environment, meta.dist}
		if pg, ok := g.index[k]; ok {
			pg.profs = append(pg.profs, prof)
			pg.wheres = append(pg.wheres, where)
			if !slices.Contains(pg.resources, meta.index) {
				pg.resources = append(pg.resources, meta.index)
			}
			return
		}
		pg := &profileGroup{meta: meta, profs: []pprofile.Profile{prof}, wheres: []string{where}, resources: []int{meta.index}}
		g.index[k] = pg
		g.groups = append(g.groups, pg)
		return
	}
	g.groups = append(g.groups, &profileGroup{meta: meta, profs: []pprofile.Profile{prof}, wheres: []string{where}, resources: []int{meta.index}})
}

func (e *exportRun) convert(pd pprofile.Profiles) []Drop {
	g := &grouping{index: map[groupKey]*profileGroup{}}
	for ri, rp := range pd.ResourceProfiles().All() {
		e.resource(ri, rp, g)
	}
	for _, pg := range g.groups {
		e.profile(pg)
	}
	return e.drops
}

// resource sorts the profiles of a resource into profiler groups. Profiles
// that came from Sentry keep their own chunk (and chunk_id); the others
// merge with every profile of the same profiler in the request.
func (e *exportRun) resource(ri int, rp pprofile.ResourceProfiles, g *grouping) {
	attrs := rp.Resource().Attributes()
	r := resourceProfiles{run: e, attrs: attrs, meta: readResourceMeta(ri, attrs, e.opts)} // resource.go
	for si, sp := range rp.ScopeProfiles().All() {
		best := make(map[viewKey]int, sp.Profiles().Len())
		e.bestViews(best, sp.Profiles())
		for pi, prof := range sp.Profiles().All() {
			if rank := e.sampleTypeRank(prof); rank == best[viewOf(prof)] {
				r.add(g, prof, rank, fmt.Sprintf("resource %d scope %d profile %d", ri, si, pi))
			}
		}
	}
}

// viewKey is what the views of one profile share: profiles of one scope
// with the same id and time range are views of the same samples with
// different sample types (a pprof profile with several sample types
// becomes several OTLP profiles).
type viewKey struct {
	id       pprofile.ProfileID
	time     pcommon.Timestamp
	duration uint64
}

func viewOf(prof pprofile.Profile) viewKey {
	return viewKey{prof.ProfileID(), prof.Time(), prof.DurationNano()}
}

// bestViews puts the best sample type rank of each view in best: only
// the best-ranked view is converted.
func (e *exportRun) bestViews(best map[viewKey]int, profiles pprofile.ProfilesSlice) {
	for _, prof := range profiles.All() {
		k, r := viewOf(prof), e.sampleTypeRank(prof)
		if cur, ok := best[k]; !ok || r < cur {
			best[k] = r
		}
	}
}

// resourceProfiles groups the profiles of one resource by profiler.
type resourceProfiles struct {
	run       *exportRun
	attrs     pcommon.Map
	meta      resourceMeta
	foreignID string // computed on first use
}

// add groups one profile (where names it) in g: under its Sentry profiler id,
// else the resource's foreign one (mergeable); a sample type that is
// neither a count nor a time is dropped.
func (r *resourceProfiles) add(g *grouping, prof pprofile.Profile, rank int, where string) {
	e := r.run
	if rank == rankUnsupported {
		st := prof.SampleType()
		e.drop(sentry.ReasonInvalidSampledProfile, prof.Samples().Len(),
			fmt.Errorf("%s: sample type %q/%q is neither a count of samples nor a time",
				where, e.Str(st.TypeStrindex()), e.Str(st.UnitStrindex())))
		return
	}
	m := r.meta
	if id := sentryProfilerID(&e.dictionaryView, r.attrs, prof); id != "" { // resource.go
		m.profilerID = id
		g.add(m, prof, where, false)
		return
	}
	if r.foreignID == "" {
		r.foreignID = foreignProfilerID(r.attrs, e.opts.InstanceID)
	}
	m.profilerID = r.foreignID
	g.add(m, prof, where, true)
}

// sampleAttrs reads the thread of a sample (sentry.thread.id, else
// thread.id, else one synthetic thread "0" for every sample without one),
// its queue_address and its state.
func (x *groupConverter) sampleAttrs(s pprofile.Sample, index map[string]int32) (thread int32, queue, state string) {
	// Samples of one thread carry the same few attribute indices: the
	// answer for a list seen recently is remembered.
	indices := s.AttributeIndices()
	key, memo := attrListOf(indices)
	if memo {
		if m := x.recalled(key); m != nil {
			return m.thread, m.queue, m.state
		}
	}
	thread, queue, state = x.readSampleAttrs(indices, index)
	if memo {
		if len(x.attrMemo) == attrMemoSize {
			x.attrMemo = x.attrMemo[:0]
		}
		x.attrMemo = append(x.attrMemo, sampleAttrMemo{key: key, thread: thread, queue: queue, state: state})
	}
	return thread, queue, state
}

// attrListOf is a sample's attribute indices as a memo key; false when
// they are too many to remember.
func attrListOf(indices pcommon.Int32Slice) (attrList, bool) {
	var key attrList
	if indices.Len() > len(key.indices) {
		return key, false
	}
	key.n = indices.Len()
	for i := range key.n {
		key.indices[i] = indices.At(i)
	}
	return key, true
}

// recalled is the remembered answer for an attribute list; nil for none.
func (x *groupConverter) recalled(key attrList) *sampleAttrMemo {
	for i := range x.attrMemo {
		if m := &x.attrMemo[i]; m.key == key {
			return m
		}
	}
	return nil
}

// attrList is a short list of attribute indices, comparable.
type attrList struct {
	indices [8]int32
	n       int
}

type sampleAttrMemo struct {
	key          attrList
	thread       int32
	queue, state string
}

const attrMemoSize = 32

// readSampleAttrs reads a sample's attributes (sampleThreadAttrs) and
// gives its thread an index in x.threads.
func (x *groupConverter) readSampleAttrs(indices pcommon.Int32Slice, index map[string]int32) (thread int32, queue, state string) {
	t, queue, state := sampleThreadAttrs(indices, &x.conv.dictionaryView) // thread.go
	if i, ok := index[t.id]; ok {
		return i, queue, state
	}
	i := int32(len(x.threads))
	index[t.id] = i
	x.threads = append(x.threads, t)
	return i, queue, state
}

// platform is the chunk platform: sentry.platform, else the platform the
// profiler settled on (see PlatformMemory) given the one its frames vote for.
func (x *groupConverter) platform() string {
	if x.meta.platform != "" {
		return x.meta.platform
	}
	return x.conv.opts.Platforms.settle(x.meta.profilerID, x.votedPlatform())
}

// votedPlatform counts the frame types of the group's sampled stacks, each
// stack once, and votes (platform.go's votedPlatform).
func (x *groupConverter) votedPlatform() string {
	counts := map[string]int{}
	seen := map[int32]bool{}
	for _, s := range x.samples {
		if seen[s.stack] || !x.conv.stackValid(s.stack) {
			continue
		}
		seen[s.stack] = true
		st, _ := x.conv.Stack(s.stack) // valid: stackValid
		for _, l := range st.LocationIndices().All() {
			if p := frametype.Platform(locationFrameType(&x.conv.dictionaryView, l)); p != "" {
				counts[p]++
			}
		}
	}
	return votedPlatform(counts, x.meta.language, x.conv.opts.DefaultPlatform)
}
