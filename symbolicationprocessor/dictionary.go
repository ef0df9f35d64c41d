package symbolicationprocessor // import "github.com/sentryprofile/otelcol-sentryprofile/symbolicationprocessor"

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/pprofdict"
)

// dictionary reads (through internal/pprofdict, the module's one reader)
// and extends the profiles dictionary of one batch. Its lookup maps are
// built on the first write, so that a batch with nothing to resolve costs
// no more than the walk.
type dictionary struct {
	d         pprofile.ProfilesDictionary
	read      pprofdict.Reader
	strings   pcommon.StringSlice
	functions pprofile.FunctionSlice
	attrs     pprofile.KeyValueAndUnitSlice

	stringIndex   map[string]int32
	functionIndex map[functionKey]int32
	attrIndex     map[attrKey]int32
}

type functionKey struct{ name, file int32 }

type attrKey struct {
	key   int32
	str   string
	num   int64
	isNum bool
}

func newDictionary(d pprofile.ProfilesDictionary) *dictionary {
	return &dictionary{d: d, read: pprofdict.New(d), strings: d.StringTable(), functions: d.FunctionTable(), attrs: d.AttributeTable()}
}

// str returns the string at index i, "" when out of range.
func (d *dictionary) str(i int32) string { return d.read.Str(i) }

// function returns the Function at index i and whether it exists.
func (d *dictionary) function(i int32) (pprofile.Function, bool) { return d.read.Function(i) }

// attrsOf calls fn with the key and value of each attribute index.
func (d *dictionary) attrsOf(indices pcommon.Int32Slice, fn func(key string, v pcommon.Value)) {
	d.read.EachAttr(indices, fn)
}

// intern returns the index of s, adding it when absent.
func (d *dictionary) intern(s string) int32 {
	if d.stringIndex == nil {
		d.stringIndex = make(map[string]int32, d.strings.Len())
		for i, v := range d.strings.All() {
			if _, dup := d.stringIndex[v]; !dup {
				d.stringIndex[v] = int32(i)
			}
		}
	}
	if i, ok := d.stringIndex[s]; ok {
		return i
	}
	if d.strings.Len() == 0 {
		// Index 0 is the empty string in every dictionary.
		d.strings.Append("")
		d.stringIndex[""] = 0
		if s == "" {
			return 0
		}
	}
	i := int32(d.strings.Len())
	d.strings.Append(s)
	d.stringIndex[s] = i
	return i
}

// newFunction returns the Function of a resolved frame, reusing an equal
// one.
func (d *dictionary) newFunction(name, file string) int32 {
	if d.functionIndex == nil {
		d.functionIndex = make(map[functionKey]int32, d.functions.Len())
		for i, f := range d.functions.All() {
			if f.SystemNameStrindex() == 0 && f.StartLine() == 0 {
				k := functionKey{name: f.NameStrindex(), file: f.FilenameStrindex()}
				if _, dup := d.functionIndex[k]; !dup {
					d.functionIndex[k] = int32(i)
				}
			}
		}
	}
	k := functionKey{name: d.intern(name), file: d.intern(file)}
	if i, ok := d.functionIndex[k]; ok {
		return i
	}
	if d.functions.Len() == 0 {
		d.functions.AppendEmpty()
	}
	i := int32(d.functions.Len())
	f := d.functions.AppendEmpty()
	f.SetNameStrindex(k.name)
	f.SetFilenameStrindex(k.file)
	d.functionIndex[k] = i
	return i
}

// attr returns the index of a string or integer attribute added by this
// processor, reusing the ones it added before in the batch.
func (d *dictionary) attr(key string, str string, num int64, isNum bool) int32 {
	if d.attrIndex == nil {
		d.attrIndex = map[attrKey]int32{}
	}
	k := attrKey{key: d.intern(key), str: str, num: num, isNum: isNum}
	if i, ok := d.attrIndex[k]; ok {
		return i
	}
	if d.attrs.Len() == 0 {
		d.attrs.AppendEmpty()
	}
	i := int32(d.attrs.Len())
	a := d.attrs.AppendEmpty()
	a.SetKeyStrindex(k.key)
	if isNum {
		a.Value().SetInt(num)
	} else {
		a.Value().SetStr(str)
	}
	d.attrIndex[k] = i
	return i
}
