package sourcemap

import "fmt"

// base64Value maps a base64 digit to its value, -1 for other bytes.
var base64Value = func() (t [256]int8) {
	for i := range t {
		t[i] = -1
	}
	const digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for i := range len(digits) {
		t[digits[i]] = int8(i)
	}
	return t
}()

// maxVLQDigits bounds one value: 7 digits carry 35 bits, more than the
// 32-bit values source maps hold.
const maxVLQDigits = 7

// decodeVLQ reads one base64 VLQ value from s at i and returns it with the
// index after it.
func decodeVLQ(s string, i int) (int64, int, error) {
	var v int64
	shift := 0
	for digits := 0; ; digits++ {
		if i >= len(s) {
			return 0, i, fmt.Errorf("mappings: value cut short at offset %d", i)
		}
		if digits == maxVLQDigits {
			return 0, i, fmt.Errorf("mappings: value longer than %d digits at offset %d", maxVLQDigits, i)
		}
		d := base64Value[s[i]]
		if d < 0 {
			return 0, i, fmt.Errorf("mappings: byte %q is not base64 at offset %d", s[i], i)
		}
		i++
		v |= int64(d&0x1f) << shift
		shift += 5
		if d&0x20 == 0 {
			break
		}
	}
	if v&1 != 0 {
		return -(v >> 1), i, nil
	}
	return v >> 1, i, nil
}
