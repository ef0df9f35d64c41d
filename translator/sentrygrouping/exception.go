package sentrygrouping

import (
	"sort"
	"strconv"
	"strings"
)

// The exception strategies of newstyle:2023-01-11 (newstyle.py,
// single-exception:v1 and chained-exception:v1): an exception groups by
// its stack trace and type, by its value only when no stack trace
// contributes; a chain groups by its exceptions in order, after an
// exception group is reduced to the exceptions that tell it apart.

// exceptionVariants groups one exception. An exception without a stack
// trace has only the app variant.
func exceptionVariants(e *Exception, platform string) variants {
	typ := leaf("type", e.Type)
	var nsError *component
	if m := e.Mechanism; m != nil {
		// a synthetic exception's type is the SDK's, not the error's
		if m.Synthetic {
			typ.contributes = false
		}
		if m.NSError != nil {
			nsError = node("ns_error", leaf("domain", m.NSError.Domain), leaf("code", strconv.FormatInt(m.NSError.Code, 10)))
		}
	}
	st := variants{app: node("stacktrace")}
	if e.Stacktrace != nil && len(e.Stacktrace.Frames) > 0 {
		st = stacktraceVariants(e.Stacktrace, platform)
	}
	out := variants{app: exceptionComponent(typ, e.Value, nsError, st.app)}
	if st.system != nil {
		out.system = exceptionComponent(typ, e.Value, nsError, st.system)
	}
	return out
}

// exceptionComponent is one variant's exception, its children in the
// order newstyle:2023-01-11 hashes them: stack trace, type, NSError,
// value.
func exceptionComponent(typ *component, value string, nsError, stacktrace *component) *component {
	// The value counts only when no stack trace (or NSError) does; it is
	// normalized only then, since normalizing costs ten times the rest
	// of grouping an event and a stack trace is the common case.
	v := leaf("value", "")
	switch {
	case value == "":
	case stacktrace.contributes || (nsError != nil && nsError.contributes):
		v = leaf("value", value)
		v.contributes = false
	default:
		v = leaf("value", normalizeMessage(value))
	}
	children := []*component{stacktrace, typ}
	if nsError != nil {
		children = append(children, nsError)
	}
	children = append(children, v)
	c := node("exception", children...)
	c.counts = stacktrace.counts
	return c
}

// chainedExceptionVariants groups an exception chain.
func chainedExceptionVariants(ev *Event) variants {
	comps := make([]variants, len(ev.Exceptions))
	for i := range ev.Exceptions {
		comps[i] = exceptionVariants(&ev.Exceptions[i], ev.Platform)
	}
	chosen := filterExceptionGroups(ev, comps)
	if len(chosen) == 1 {
		return comps[chosen[0]]
	}
	var app, system []*component
	for _, i := range chosen {
		app = append(app, comps[i].app)
		if comps[i].system != nil {
			system = append(system, comps[i].system)
		}
	}
	out := variants{app: chainComponent(app)}
	if system != nil {
		out.system = chainComponent(system)
	}
	return out
}

func chainComponent(exceptions []*component) *component {
	c := node("chained_exception", exceptions...)
	for _, e := range exceptions {
		c.counts = c.counts.add(e.counts)
	}
	return c
}

// exceptionNode is one exception of a group's tree, by its mechanism's
// exception_id.
type exceptionNode struct {
	index    int // in the chain; -1 until the exception itself is seen
	children []int
}

// filterExceptionGroups returns the indices of the exceptions that group
// (Sentry's filter_exceptions_for_exception_groups, after the exception
// groups RFC): with one distinct leaf exception, that exception and its
// first descendants; with several, one of each and the root group. A
// chain whose ids do not form a tree is kept whole.
func filterExceptionGroups(ev *Event, comps []variants) []int {
	all := make([]int, len(ev.Exceptions))
	for i := range all {
		all[i] = i
	}
	if !filtersGroups(ev) {
		return all
	}
	if chosen, ok := groupDistinctExceptions(ev.Exceptions, comps); ok {
		return chosen
	}
	return all
}

// filtersGroups: a chain of one is itself; sentry-python 3's groups are
// kept whole, as Sentry keeps them to preserve their hashes.
func filtersGroups(ev *Event) bool {
	return len(ev.Exceptions) > 1 && !isPython3SDK(ev)
}

func isPython3SDK(ev *Event) bool {
	return ev.Platform == "python" && strings.HasPrefix(ev.SDKVersion, "3")
}

func groupDistinctExceptions(exceptions []Exception, comps []variants) ([]int, bool) {
	tree, ok := exceptionTree(exceptions)
	if !ok || tree[0] == nil || tree[0].index < 0 {
		return nil, false
	}
	root := tree[0].index
	leaves, ok := topLevelExceptions(exceptions, tree, root)
	if !ok || len(leaves) == 0 {
		return nil, false
	}
	distinct := distinctExceptions(comps, leaves)
	if len(distinct) > 1 {
		return append(distinct, root), true
	}
	return firstPath(exceptions, tree, distinct[0])
}

// exceptionTree links the exceptions by their mechanisms' ids; it fails
// when one lacks an id, repeats one or is its own parent.
func exceptionTree(exceptions []Exception) (map[int64]*exceptionNode, bool) {
	tree := make(map[int64]*exceptionNode, len(exceptions))
	for i := len(exceptions) - 1; i >= 0; i-- {
		m := exceptions[i].Mechanism
		if !hasTreeIDs(m) {
			return nil, false
		}
		n := treeNode(tree, *m.ExceptionID)
		if n.index >= 0 {
			return nil, false
		}
		n.index = i
		if m.ParentID != nil {
			p := treeNode(tree, *m.ParentID)
			p.children = append(p.children, i)
		}
	}
	return tree, true
}

func hasTreeIDs(m *Mechanism) bool {
	return m != nil && m.ExceptionID != nil && (m.ParentID == nil || *m.ParentID != *m.ExceptionID)
}

func treeNode(tree map[int64]*exceptionNode, id int64) *exceptionNode {
	n := tree[id]
	if n == nil {
		n = &exceptionNode{index: -1}
		tree[id] = n
	}
	return n
}

func childrenOf(exceptions []Exception, tree map[int64]*exceptionNode, i int) []int {
	if n := tree[*exceptions[i].Mechanism.ExceptionID]; n != nil {
		return n.children
	}
	return nil
}

// topLevelExceptions walks the tree from the root and returns the
// exceptions that are not groups themselves and whose parent is, sorted
// by type, descending. A walk that meets an exception twice (a cycle)
// fails, where Sentry's recursion would.
func topLevelExceptions(exceptions []Exception, tree map[int64]*exceptionNode, root int) ([]int, bool) {
	seen := make([]bool, len(exceptions))
	var out []int
	stack := []int{root}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[i] {
			return nil, false
		}
		seen[i] = true
		if !exceptions[i].Mechanism.IsExceptionGroup {
			out = append(out, i)
			continue
		}
		children := childrenOf(exceptions, tree, i)
		for c := len(children) - 1; c >= 0; c-- {
			stack = append(stack, children[c])
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return typeKey(&exceptions[out[a]]) > typeKey(&exceptions[out[b]]) })
	return out, true
}

// typeKey is the type Sentry sorts by: its text, "None" when absent.
func typeKey(e *Exception) string {
	if e.Type == "" {
		return "None"
	}
	return e.Type
}

// distinctExceptions drops each exception that repeats the one before it
// (after sorting by type), compared by their grouping components.
func distinctExceptions(comps []variants, sorted []int) []int {
	var out []int
	var prev string
	for k, i := range sorted {
		sig := string(comps[i].app.signature(nil))
		if comps[i].system != nil {
			sig += string(comps[i].system.signature(nil))
		}
		if k == 0 || sig != prev {
			out = append(out, i)
		}
		prev = sig
	}
	return out
}

// firstPath is the exception and, down the tree, each one's first child.
func firstPath(exceptions []Exception, tree map[int64]*exceptionNode, start int) ([]int, bool) {
	seen := make([]bool, len(exceptions))
	var out []int
	for i := start; ; {
		if seen[i] {
			return nil, false
		}
		seen[i] = true
		out = append(out, i)
		children := childrenOf(exceptions, tree, i)
		if len(children) == 0 {
			return out, true
		}
		i = children[0]
	}
}
