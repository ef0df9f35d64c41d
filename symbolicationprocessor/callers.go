package symbolicationprocessor // import "github.com/sentryprofile/otelcol-sentryprofile/symbolicationprocessor"

import "go.opentelemetry.io/collector/pdata/pprofile"

// callerLocations marks the locations that are never a stack's leaf (its
// first location): every address of theirs is a caller's, a return
// address, the instruction after the call. They are looked up one byte
// back, inside the call, so that their line is the call's and a call at
// the end of a function (to a function that does not return) stays in its
// function. A location that some stack has as its leaf is looked up as it
// is: its address is the one that was executing there.
func callerLocations(d pprofile.ProfilesDictionary) []bool {
	n := d.LocationTable().Len()
	callers := make([]bool, n)
	leaf := make([]bool, n)
	for _, st := range d.StackTable().All() {
		for j, li := range st.LocationIndices().All() {
			if li <= 0 || int(li) >= n {
				continue
			}
			if j == 0 {
				leaf[li] = true
			} else {
				callers[li] = true
			}
		}
	}
	for i := range callers {
		callers[i] = callers[i] && !leaf[i]
	}
	return callers
}

// isCaller reports whether a location's address is only ever a return
// address.
func (im *images) isCaller(li int32) bool {
	return li > 0 && int(li) < len(im.callers) && im.callers[li]
}

// lookupAddress is the address a native location is looked up at.
func lookupAddress(addr uint64, caller bool) uint64 {
	if caller && addr > 0 {
		return addr - 1
	}
	return addr
}
