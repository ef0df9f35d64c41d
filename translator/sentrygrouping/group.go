package sentrygrouping

import (
	"slices"
)

// How the strategies make an event's hash (src/sentry/grouping/api.py,
// get_grouping_variants_for_event; strategies/base.py): each strategy that
// applies makes components per variant; the first strategy, by priority,
// that contributes in any variant wins and the others' components stop
// contributing; each variant's components together are hashed. The
// event's key is the first variant's hash in Sentry's order, the system
// variant last.

// Variant names.
const (
	variantApp      = "app"
	variantSystem   = "system"
	variantDefault  = "default"
	variantCustom   = "custom_fingerprint"
	variantFallback = "fallback"
)

// named is one variant's component of a strategy.
type named struct {
	variant string
	c       *component
}

// strategyOutput is what one strategy made.
type strategyOutput struct {
	name  string
	comps []named
}

// Group returns the event's grouping key. Its work is linear in the
// event's frames and text (n log n in the leaf exceptions of an
// exception group, which Sentry sorts by type).
func Group(ev Event) Result {
	outputs := runStrategies(&ev)
	markWinner(outputs)
	roots := variantRoots(outputs)
	switch kindOf(ev.Fingerprint) {
	case fingerprintCustom:
		values := resolveFingerprint(&ev)
		labelled := make([]string, len(values))
		for i, v := range values {
			labelled[i] = "fingerprint=" + v
		}
		return Result{Hash: hashValues(values), Components: labelled, Variant: variantCustom}
	case fingerprintHybrid:
		return firstHash(roots, resolveFingerprint(&ev))
	}
	return firstHash(roots, nil)
}

// runStrategies runs the strategies that apply, highest priority first:
// the exception chain, the threads, the event's stack trace, the message.
func runStrategies(ev *Event) []strategyOutput {
	var outputs []strategyOutput
	if len(ev.Exceptions) > 0 {
		outputs = append(outputs, stacktraceOutput("chained-exception", chainedExceptionVariants(ev)))
	}
	if len(ev.Threads) > 0 {
		outputs = append(outputs, threadsOutput(ev.Threads, ev.Platform))
	}
	if ev.Stacktrace != nil {
		outputs = append(outputs, stacktraceOutput("stacktrace", stacktraceVariants(ev.Stacktrace, ev.Platform)))
	}
	if text := or(ev.Message.Template, ev.Message.Formatted); text != "" {
		outputs = append(outputs, strategyOutput{name: "message", comps: []named{{variantDefault, leaf("message", normalizeMessage(text))}}})
	}
	return outputs
}

// stacktraceOutput is a stack-trace-bearing strategy's result after
// Sentry's processing of it: the system variant stops contributing when it
// hashes as the app variant does, and a variant without a contributing
// stack trace stops when another has one.
func stacktraceOutput(name string, v variants) strategyOutput {
	comps := []named{{variantApp, v.app}}
	if v.system != nil {
		comps = append(comps, named{variantSystem, v.system})
		if v.app.contributes && v.system.contributes && rootHash(v.system) == rootHash(v.app) {
			v.system.contributes = false
		}
	}
	dropVariantsWithoutStacktrace(comps)
	return strategyOutput{name: name, comps: comps}
}

func rootHash(c *component) string { return hashValues(c.appendValues(nil, false)) }

func dropVariantsWithoutStacktrace(comps []named) {
	if len(comps) <= 1 {
		return
	}
	withStacktrace := make([]bool, len(comps))
	anyWith := false
	for i, n := range comps {
		withStacktrace[i] = hasContributingBelow(n.c, "stacktrace")
		anyWith = anyWith || withStacktrace[i]
	}
	if !anyWith {
		return
	}
	for i, n := range comps {
		if !withStacktrace[i] {
			n.c.contributes = false
		}
	}
}

// hasContributingBelow reports whether a contributing component of the id
// is reachable below c through contributing components.
func hasContributingBelow(c *component, id string) bool {
	for _, ch := range c.children {
		if ch.contributes && (ch.id == id || hasContributingBelow(ch, id)) {
			return true
		}
	}
	return false
}

// threadsOutput groups by the stack trace of the one crashed thread, else
// the one current thread, else the only thread.
func threadsOutput(threads []Thread, platform string) strategyOutput {
	for _, pick := range [...]func(*Thread) bool{
		func(t *Thread) bool { return t.Crashed },
		func(t *Thread) bool { return t.Current },
		func(*Thread) bool { return true },
	} {
		if t := onlyThread(threads, pick); t != nil {
			return threadOutput(t, platform)
		}
	}
	return strategyOutput{name: "threads", comps: []named{{variantApp, node("threads")}}}
}

func onlyThread(threads []Thread, pick func(*Thread) bool) *Thread {
	var found *Thread
	for i := range threads {
		if !pick(&threads[i]) {
			continue
		}
		if found != nil {
			return nil
		}
		found = &threads[i]
	}
	return found
}

func threadOutput(t *Thread, platform string) strategyOutput {
	if t.Stacktrace == nil {
		return strategyOutput{name: "threads", comps: []named{{variantApp, node("threads")}}}
	}
	st := stacktraceVariants(t.Stacktrace, platform)
	out := stacktraceOutput("threads", variants{app: node("threads", st.app), system: node("threads", st.system)})
	return out
}

// markWinner keeps contributing only the components of the first
// strategy that contributes in any variant.
func markWinner(outputs []strategyOutput) {
	winner := ""
	for _, o := range outputs {
		for _, n := range o.comps {
			switch {
			case !n.c.contributes:
			case winner == "":
				winner = o.name
			case o.name != winner:
				n.c.contributes = false
			}
		}
	}
}

// variantRoots joins each variant's components under one root, in
// Sentry's order of variants: as they first appeared, the system variant
// last.
func variantRoots(outputs []strategyOutput) []named {
	var roots []named
	children := map[string][]*component{}
	for _, o := range outputs {
		for _, n := range o.comps {
			if _, seen := children[n.variant]; !seen {
				roots = append(roots, named{variant: n.variant})
			}
			children[n.variant] = append(children[n.variant], n.c)
		}
	}
	for i := range roots {
		roots[i].c = node(roots[i].variant, children[roots[i].variant]...)
	}
	slices.SortStableFunc(roots, func(a, b named) int {
		return boolInt(a.variant == variantSystem) - boolInt(b.variant == variantSystem)
	})
	return roots
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// firstHash is the key of the first variant that contributes; with a
// hybrid fingerprint, its entries around {{ default }}, which stands for
// the variant's values.
func firstHash(roots []named, fingerprint []string) Result {
	for _, r := range roots {
		if !r.c.contributes {
			continue
		}
		labelled := r.c.appendValues(nil, true)
		if fingerprint != nil {
			labelled = saltedValues(fingerprint, labelled)
		}
		return Result{Hash: hashValues(unlabel(labelled)), Components: labelled, Variant: r.variant}
	}
	return Result{Hash: hashValues(nil), Variant: variantFallback}
}

func saltedValues(fingerprint, defaults []string) []string {
	var out []string
	for _, e := range fingerprint {
		if isDefaultVariable(e) {
			out = append(out, defaults...)
			continue
		}
		out = append(out, "fingerprint="+e)
	}
	return out
}

// unlabel strips the "<component>=" of labelled values.
func unlabel(labelled []string) []string {
	values := make([]string, len(labelled))
	for i, l := range labelled {
		for j := 0; j < len(l); j++ {
			if l[j] == '=' {
				values[i] = l[j+1:]
				break
			}
		}
	}
	return values
}
