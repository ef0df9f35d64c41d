package proguard

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzParse: any input parses or fails with an error, and every class and
// method it names remaps without panicking to frames that name a class.
func FuzzParse(f *testing.F) {
	f.Add([]byte(shopMapping))
	f.Add([]byte("A -> a:\n    1:2:void f():3:4 -> b\n# {\"id\":\"com.android.tools.r8.outlineCallsite\",\"positions\":{\"1\":2}}\n"))
	f.Add([]byte("A -> a:\n    1:10:void outer():1:10 -> a\n    5:6:void inner():20:21 -> a\n"))
	f.Add([]byte("A -> a:\n    2147483647:2147483647:void f():2147483647:0 -> a\n"))
	f.Add([]byte(outlineMapping))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse(bytes.NewReader(data))
		if err != nil {
			return
		}
		if m.Size() <= 0 {
			t.Fatalf("size %d", m.Size())
		}
		for obf, c := range m.classes {
			if orig, ok := m.Class(obf); !ok || orig != c.original {
				t.Fatalf("Class(%q) = %q, %v", obf, orig, ok)
			}
			for method, members := range c.methods {
				for _, line := range []int{0, 1, int(members[0].start), int(members[0].end) + 1, -5} {
					for _, fr := range m.Remap(obf, method, line) {
						if fr.Class == "" || fr.Method == "" || fr.Line < 0 {
							t.Fatalf("Remap(%q, %q, %d) gave %+v", obf, method, line, fr)
						}
					}
				}
			}
		}
		_ = m.Remap(strings.Repeat("x", 3), "y", 1)
		var stack []StackFrame
		for obf, c := range m.classes {
			for method, members := range c.methods {
				stack = append(stack, StackFrame{Class: obf, Method: method, Line: int(members[0].start)})
			}
		}
		for _, fr := range m.RemapStack(stack) {
			if fr.Method == "" || fr.Line < 0 {
				t.Fatalf("RemapStack gave %+v", fr)
			}
		}
	})
}
