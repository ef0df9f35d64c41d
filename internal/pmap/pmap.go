// Package pmap reads members of pdata maps the way every reader of the
// receiver's structured attributes does (sentry.exception, sentry.threads,
// sentry.debug_meta, …): a member that is absent or of another type reads
// as empty, so that a walk over an SDK's payload needs no type checks.
package pmap

import "go.opentelemetry.io/collector/pdata/pcommon"

// Map is the map member at key; an empty map when there is none.
func Map(m pcommon.Map, key string) pcommon.Map {
	if v, ok := m.Get(key); ok && v.Type() == pcommon.ValueTypeMap {
		return v.Map()
	}
	return pcommon.NewMap()
}

// Slice is the list member at key; an empty list when there is none.
func Slice(m pcommon.Map, key string) pcommon.Slice {
	if v, ok := m.Get(key); ok && v.Type() == pcommon.ValueTypeSlice {
		return v.Slice()
	}
	return pcommon.NewSlice()
}
