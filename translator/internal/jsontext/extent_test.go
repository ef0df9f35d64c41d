package jsontext

import "testing"

func TestValueEnd(t *testing.T) {
	tests := []struct {
		name, data string
		want       int
	}{
		{"flat object", `{"function":"f","lineno":1},{`, 27},
		{"escaped quote and brace in a string", `{"function":"a\"}b"},`, 20},
		{"escaped backslash before the closing quote", `{"function":"a\\"},`, 18},
		{"nested", `{"data":{"x":[1,{"y":"}"}]}}]`, 28},
		{"string", `"a\"b",1`, 6},
		{"number", `12.5e3,`, 6},
		{"literal at the end", `true`, 4},
		{"array", `[1,[2],"]"] `, 11},
		{"truncated string", `{"function":"f`, -1},
		{"unclosed object", `{"a":1`, -1},
		{"empty input", ``, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ValueEnd([]byte(tt.data), 0); got != tt.want {
				t.Fatalf("ValueEnd(%s) = %d, want %d", tt.data, got, tt.want)
			}
		})
	}
}
