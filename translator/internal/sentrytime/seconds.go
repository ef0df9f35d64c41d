package sentrytime

import (
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/internal/swar"
)

// Seconds since the epoch at the ends of the range: Latest is
// maxWholeSeconds.maxLastNanos, Earliest -maxWholeSeconds.(maxLastNanos+1).
const (
	maxWholeSeconds = 9223372036
	maxLastNanos    = 854775807
	// maxSecondDigits is the number of digits of maxWholeSeconds: a value
	// with more whole digits is out of range whatever they are.
	maxSecondDigits = 10
	// exponentCap bounds the exponent read: any exponent past it already
	// makes the value zero or out of range, and capping it keeps the
	// arithmetic in an int.
	exponentCap = 1 << 20
)

// decimal is the text of a number split into its parts: the mantissa's
// digits before and after the point, and where the point falls among them
// once the exponent has moved it.
type decimal struct {
	negative      bool
	whole, fracts []byte
	point         int
}

// ParseSeconds reads decimal seconds since the epoch: an optional '-',
// digits, an optional fraction and an optional exponent (the JSON number
// grammar, leading zeros allowed). It is exact: the nanoseconds are the
// first nine digits after the point, the rest truncated toward zero.
func ParseSeconds(text []byte) (Time, error) {
	if t, end, ok := Scan(text, 0); ok && end == len(text) {
		return t, nil
	}
	return parseScaled(text, 0)
}

// Scan reads at data[i:] seconds as SDKs write them: 1 to 10 digits with
// no leading zero, optionally a point and 1 to 9 digits of fraction, in
// range; end is where the number ends. ok is false for anything else (a
// number that goes on, another shape, the range's last second), which
// ParseSeconds reads, to the same value (FuzzScan). Every sample of a
// profile and every entry of a container carries one: the profile
// decoder reads its timestamps with Scan, ended by a delimiter;
// ParseSeconds takes a whole text.
func Scan(data []byte, i int) (t Time, end int, ok bool) {
	if t, end, ok := scanSDK(data, i); ok {
		return t, end, true
	}
	return scanDigits(data, i)
}

// scanSDK reads the shape nearly every SDK writes, ten digits of seconds,
// a point and one to seven of fraction, by two word reads and no loop (a
// byte loop's multiply-add chain made the timestamps the costliest field
// of a profile's sample). It needs 19 bytes at data[i:].
func scanSDK(data []byte, i int) (Time, int, bool) {
	if i+19 > len(data) {
		return 0, 0, false
	}
	w := binary.LittleEndian.Uint64(data[i:])
	if swar.NonDigits(w) != 0 || data[i] == '0' || !isDigit(data[i+8]) || !isDigit(data[i+9]) || data[i+10] != '.' {
		return 0, 0, false
	}
	sec := int64(swar.DigitsValue(w, 8))*100 + int64(data[i+8]-'0')*10 + int64(data[i+9]-'0')
	f := binary.LittleEndian.Uint64(data[i+11:])
	n := bits.TrailingZeros64(swar.NonDigits(f)) / 8
	end := i + 11 + n
	if n == 0 || n == 8 || sec > maxWholeSeconds-1 || continuesAt(data, end) {
		return 0, 0, false
	}
	return Time(sec*1e9 + int64(swar.DigitsValue(f, n))*pow10[9-n]), end, true
}

// scanDigits is Scan's other shapes, a byte at a time.
func scanDigits(data []byte, i int) (Time, int, bool) {
	sec, j, ok := wholeSeconds(data, i)
	if !ok {
		return 0, 0, false
	}
	if j == len(data) || data[j] != '.' {
		return Time(sec * 1e9), j, !continuesAt(data, j)
	}
	nsec, end, ok := fractionNanos(data, j+1)
	return Time(sec*1e9 + nsec), end, ok
}

// wholeSeconds reads 1 to 10 digits with no leading zero at data[i:],
// short of the range's last second (which parseScaled reads).
func wholeSeconds(data []byte, i int) (sec int64, end int, ok bool) {
	j := i
	for j < len(data) && j-i < maxSecondDigits && isDigit(data[j]) {
		sec = sec*10 + int64(data[j]-'0')
		j++
	}
	return sec, j, j > i && data[i] != '0' && sec <= maxWholeSeconds-1
}

// fractionNanos reads 1 to 9 digits of fraction at data[i:] as
// nanoseconds, where the number ends.
func fractionNanos(data []byte, i int) (nsec int64, end int, ok bool) {
	j := i
	for j < len(data) && j-i < 9 && isDigit(data[j]) {
		nsec = nsec*10 + int64(data[j]-'0')
		j++
	}
	if j == i || continuesAt(data, j) {
		return 0, 0, false
	}
	return nsec * pow10[9-(j-i)], j, true
}

// continuesAt says whether a number would go on at data[j]: a digit, a
// point or an exponent.
func continuesAt(data []byte, j int) bool {
	if j >= len(data) {
		return false
	}
	c := data[j]
	return isDigit(c) || c == '.' || c == 'e' || c == 'E'
}

// pow10 scales a fraction of n digits to nanoseconds (pow10[9-n]).
var pow10 = [...]int64{1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// ParseMilliseconds reads decimal milliseconds since the epoch, as
// ParseSeconds reads seconds (some SDKs write epoch milliseconds where the
// protocol says seconds; their caller tells them apart).
func ParseMilliseconds(text []byte) (Time, error) {
	return parseScaled(text, -3)
}

// parseScaled reads the decimal text of a number of 10^shift seconds.
func parseScaled(text []byte, shift int) (Time, error) {
	// the errors quote a copy of text, so that text does not escape: a
	// caller converting a string for this call then allocates nothing
	d, ok := splitDecimal(text)
	if !ok {
		return 0, fmt.Errorf("%w: %.40q", ErrSyntax, string(text))
	}
	d.point += shift
	sec, nsec, ok := d.secondsAndNanos()
	if !ok || !inRange(d.negative, sec, nsec) {
		return 0, fmt.Errorf("%w: %.40q", ErrOutOfRange, string(text))
	}
	if d.negative {
		return Time(-sec*1e9 - nsec), nil
	}
	return Time(sec*1e9 + nsec), nil
}

// splitDecimal reads the sign, the mantissa's digits and the exponent of
// text; ok is false when text is not a number.
func splitDecimal(text []byte) (d decimal, ok bool) {
	d.negative = len(text) > 0 && text[0] == '-'
	i := 0
	if d.negative {
		i = 1
	}
	end := skipDigits(text, i)
	d.whole, d.point = text[i:end], end-i
	d.fracts, i, ok = readFraction(text, end)
	if len(d.whole) == 0 || !ok {
		return decimal{}, false
	}
	exp, i, ok := readExponent(text, i)
	if !ok || i != len(text) {
		return decimal{}, false
	}
	d.point += exp
	return d, true
}

// readFraction reads ".digits" at text[i:], if there; ok is false for a
// point without digits.
func readFraction(text []byte, i int) (digits []byte, end int, ok bool) {
	if i == len(text) || text[i] != '.' {
		return nil, i, true
	}
	end = skipDigits(text, i+1)
	return text[i+1 : end], end, end > i+1
}

// readExponent reads "e12", "E+3" or "e-7" at text[i:], if there, capped
// at ±exponentCap; end is where it stops.
func readExponent(text []byte, i int) (exp, end int, ok bool) {
	if i == len(text) || (text[i] != 'e' && text[i] != 'E') {
		return 0, i, true
	}
	negative, i := readSign(text, i+1)
	end = skipDigits(text, i)
	exp = cappedInt(text[i:end])
	if negative {
		exp = -exp
	}
	return exp, end, end > i
}

// readSign reads an optional '+' or '-' at text[i:].
func readSign(text []byte, i int) (negative bool, next int) {
	if i < len(text) && (text[i] == '+' || text[i] == '-') {
		return text[i] == '-', i + 1
	}
	return false, i
}

// cappedInt is the value of digits, capped at exponentCap.
func cappedInt(digits []byte) int {
	n := 0
	for _, c := range digits {
		n = min(n*10+int(c-'0'), exponentCap)
	}
	return n
}

func skipDigits(text []byte, i int) int {
	for i < len(text) && text[i] >= '0' && text[i] <= '9' {
		i++
	}
	return i
}

// digit is the k-th digit of the mantissa, 0 past either end.
func (d *decimal) digit(k int) int64 {
	switch {
	case k < 0:
		return 0
	case k < len(d.whole):
		return int64(d.whole[k] - '0')
	case k < len(d.whole)+len(d.fracts):
		return int64(d.fracts[k-len(d.whole)] - '0')
	}
	return 0
}

// leadingZeros counts the mantissa's zeros before its first other digit.
func (d *decimal) leadingZeros() int {
	n, total := 0, len(d.whole)+len(d.fracts)
	for n < total && d.digit(n) == 0 {
		n++
	}
	return n
}

// secondsAndNanos are the whole seconds (the digits before the point) and
// the nanoseconds (the nine after it) of d, both non-negative; ok is false
// when the whole seconds have more digits than any in range.
func (d *decimal) secondsAndNanos() (sec, nsec int64, ok bool) {
	lead := d.leadingZeros()
	if lead == len(d.whole)+len(d.fracts) {
		return 0, 0, true // zero, whatever its exponent
	}
	if d.point-lead > maxSecondDigits {
		return 0, 0, false
	}
	for k := lead; k < d.point; k++ {
		sec = sec*10 + d.digit(k)
	}
	for k := d.point; k < d.point+9; k++ {
		nsec = nsec*10 + d.digit(k)
	}
	return sec, nsec, true
}

// inRange reports whether ±(sec.nsec) seconds fit Unix nanoseconds in an
// int64, whose negative end is one nanosecond further out.
func inRange(negative bool, sec, nsec int64) bool {
	switch {
	case sec < maxWholeSeconds:
		return true
	case sec > maxWholeSeconds:
		return false
	case negative:
		return nsec <= maxLastNanos+1
	}
	return nsec <= maxLastNanos
}
