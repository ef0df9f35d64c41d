package jsscope

import (
	"testing"
)

// FuzzParse feeds the scanner any bytes: it must not panic, and an index
// it returns must answer every position with a scope that encloses it.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		`function a(){return function(){}}`,
		`var b=class c extends d{static e(){}get f(){}#g(){}h=()=>1}`,
		"x=`${y=>`${z}`}`/2/i",
		`if(a)/}/.test(b);c?d=>1:e=>{};({get:1,set(){},[k]:function(){}})`,
		"a=b\n(c)=>d\n++e",
		`/* { */ "}" '{' // (`,
		"\u2028var s='😀';async function*f(){await/x/}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		x, err := Parse(src)
		if err != nil {
			if x != nil {
				t.Fatal("an error with an index")
			}
			return
		}
		c := positionCursor{src: src}
		for off := 0; off <= len(src); off++ {
			pos := c.at(off)
			s, ok := x.Lookup(int(pos.Line), int(pos.Column))
			if ok && (pos.Less(s.Start) || !pos.Less(s.End)) {
				t.Fatalf("scope %v–%v does not enclose %v", s.Start, s.End, pos)
			}
		}
	})
}
