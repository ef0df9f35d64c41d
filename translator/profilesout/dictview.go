package profilesout

import (
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
