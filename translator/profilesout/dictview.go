package profilesout

import (
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/pprofdict"
)

// dictionaryView is the input's dictionary as the exporter reads it, the
// object files included: through pprofdict's bounds-checked reader, with
// the attribute table read once into flat arrays and the role of each key
// (every sample, location and mapping refers to it, and resolving a key
// through the string table on each reference would dominate the
// conversion).
type dictionaryView struct {
	pprofdict.Reader
	attrs     pprofdict.Attrs
	attrRoles []attrRole
}

// indexAttrs reads the attribute table and the role of each of its keys.
func (v *dictionaryView) indexAttrs() {
	v.attrs = v.ResolveAttrs()
	v.attrRoles = make([]attrRole, len(v.attrs.Keys))
	for i, key := range v.attrs.Keys {
		v.attrRoles[i] = roleOfKey(key)
	}
}

// firstOfRole is the value of the first in-range attribute of indices with
// role; false when none has it.
func (v *dictionaryView) firstOfRole(indices pcommon.Int32Slice, role attrRole) (pcommon.Value, bool) {
	for i := range indices.Len() {
		if idx := indices.At(i); idx > 0 && int(idx) < len(v.attrRoles) && v.attrRoles[idx] == role {
			return v.attrs.Values[idx], true
		}
	}
	return pcommon.Value{}, false
}
