package pprofdict

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"
)

// testDictionary has the zero entries, strings "", "a", "k", one function
// and an attribute k=v (index 1) whose key is in range, and one (index 2)
// whose key index is not.
func testDictionary() pprofile.ProfilesDictionary {
	d := pprofile.NewProfilesDictionary()
	d.StringTable().FromRaw([]string{"", "a", "k"})
	d.FunctionTable().AppendEmpty()
	d.FunctionTable().AppendEmpty().SetNameStrindex(1)
	d.LocationTable().AppendEmpty()
	d.MappingTable().AppendEmpty()
	d.StackTable().AppendEmpty()
	d.LinkTable().AppendEmpty()
	d.AttributeTable().AppendEmpty()
	kv := d.AttributeTable().AppendEmpty()
	kv.SetKeyStrindex(2)
	kv.Value().SetStr("v")
	bad := d.AttributeTable().AppendEmpty()
	bad.SetKeyStrindex(99)
	bad.Value().SetInt(7)
	return d
}

func TestStr(t *testing.T) {
	r := New(testDictionary())
	tests := []struct {
		name   string
		i      int32
		want   string
		inside bool
	}{
		{"a string", 1, "a", true},
		{"index 0 is none", 0, "", true},
		{"negative", -1, "", false},
		{"past the end", 3, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, r.Str(tt.i))
			got, ok := r.LookupStr(tt.i)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.inside, ok)
		})
	}
	t.Run("index 0 of an empty table is the empty string", func(t *testing.T) {
		got, ok := New(pprofile.NewProfilesDictionary()).LookupStr(0)
		assert.True(t, ok)
		assert.Empty(t, got)
	})
	t.Run("strings appended after New are read", func(t *testing.T) {
		d := testDictionary()
		r := New(d)
		d.StringTable().Append("late")
		assert.Equal(t, "late", r.Str(3))
	})
}

func TestAttrs(t *testing.T) {
	r := New(testDictionary())
	tests := []struct {
		name string
		i    int32
		key  string
		ok   bool
	}{
		{"an attribute", 1, "k", true},
		{"its key out of range reads as empty", 2, "", true},
		{"index 0 is none", 0, "", false},
		{"negative", -4, "", false},
		{"past the end", 3, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key, _, ok := r.Attr(tt.i)
			assert.Equal(t, tt.key, key)
			assert.Equal(t, tt.ok, ok)
		})
	}

	indices := pcommon.NewInt32Slice()
	indices.FromRaw([]int32{0, 1, -1, 2, 40})
	var got []string
	r.EachAttr(indices, func(key string, v pcommon.Value) { got = append(got, key+"="+v.AsString()) })
	assert.Equal(t, []string{"k=v", "=7"}, got, "EachAttr skips none and out of range, in order")

	resolved := r.ResolveAttrs()
	assert.Equal(t, []string{"", "k", ""}, resolved.Keys)
	var fromResolved []string
	resolved.Each(indices, func(key string, v pcommon.Value) { fromResolved = append(fromResolved, key+"="+v.AsString()) })
	assert.Equal(t, got, fromResolved, "the resolved table reads as the reader does")
}

func TestTables(t *testing.T) {
	r := New(testDictionary())
	tests := []struct {
		name  string
		table Table
		get   func(int32) bool
	}{
		{"functions", Functions, func(i int32) bool { _, ok := r.Function(i); return ok }},
		{"locations", Locations, func(i int32) bool { _, ok := r.Location(i); return ok }},
		{"mappings", Mappings, func(i int32) bool { _, ok := r.Mapping(i); return ok }},
		{"stacks", Stacks, func(i int32) bool { _, ok := r.Stack(i); return ok }},
		{"links", Links, func(i int32) bool { _, ok := r.Link(i); return ok }},
		{"attributes", Attributes, func(i int32) bool { _, ok := r.AttrEntry(i); return ok }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := int32(r.Len(tt.table))
			assert.Positive(t, n)
			assert.True(t, tt.get(0), "index 0 is in the table")
			assert.True(t, tt.get(n-1))
			assert.False(t, tt.get(n))
			assert.False(t, tt.get(-1))
		})
	}
	fn, ok := r.Function(1)
	assert.True(t, ok)
	assert.Equal(t, "a", r.Str(fn.NameStrindex()))
	assert.EqualError(t, r.OutOfRange("stack_index", 9, Stacks), "stack_index 9 out of range [0, 1)")
	assert.Equal(t, 3, r.Len(Strings))
}
