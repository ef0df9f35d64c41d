package sentrytime

import (
	"errors"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/complexityguard"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		raw     string
		want    int64
		wantErr error
	}{
		{name: "integer seconds", raw: `1795000000`, want: 1795000000_000000000},
		{name: "microseconds", raw: `1795000000.000001`, want: 1795000000_000001000},
		{name: "nanoseconds float64 would round", raw: `1795000000.123456789`, want: 1795000000_123456789},
		{name: "tenth fraction digit truncated", raw: `1795000000.1234567895`, want: 1795000000_123456789},
		{name: "many fraction digits truncated", raw: `1724777211.503779919999`, want: 1724777211_503779919},
		{name: "exponent", raw: `1.7950000001e9`, want: 1795000000_100000000},
		{name: "upper-case exponent with sign", raw: `1.7247772115037799E+9`, want: 1724777211_503779900},
		{name: "negative exponent", raw: `17247772115037799e-7`, want: 1724777211_503779900},
		{name: "zero with a huge exponent", raw: `0e999999999999`, want: 0},
		{name: "one with a huge negative exponent", raw: `1e-999999999999`, want: 0},
		{name: "leading zeros", raw: `0001.5`, want: 1_500000000},
		{name: "negative", raw: `-1.5`, want: -1_500000000},
		{name: "negative nanosecond", raw: `-0.000000001`, want: -1},
		{name: "surrounding whitespace", raw: " 1.5\n", want: 1_500000000},
		{name: "last instant", raw: `9223372036.854775807`, want: math.MaxInt64},
		{name: "first instant", raw: `-9223372036.854775808`, want: math.MinInt64},
		{name: "RFC 3339 microseconds", raw: `"2026-11-24T12:00:00.123456Z"`, want: time.Date(2026, 11, 24, 12, 0, 0, 123456000, time.UTC).UnixNano()},
		{name: "RFC 3339 with an offset", raw: `"2026-11-24T13:00:00+01:00"`, want: time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC).UnixNano()},
		{name: "RFC 3339 beyond nanoseconds", raw: `"2026-11-24T12:00:00.1234567899Z"`, want: time.Date(2026, 11, 24, 12, 0, 0, 123456789, time.UTC).UnixNano()},
		{name: "RFC 3339 before the epoch", raw: `"1969-12-31T23:59:59Z"`, want: -1_000000000},
		{name: "quoted seconds", raw: `"1764108001.5"`, want: 1764108001_500000000},
		{name: "escaped string", raw: `"2026-11-24T12:00:00\u005a"`, want: time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC).UnixNano()},
		{name: "null", raw: `null`, wantErr: ErrMissing},
		{name: "empty", raw: ``, wantErr: ErrMissing},
		{name: "past the last instant", raw: `9223372036.854775808`, wantErr: ErrOutOfRange},
		{name: "before the first instant", raw: `-9223372036.854775809`, wantErr: ErrOutOfRange},
		{name: "year 2286", raw: `10000000000.5`, wantErr: ErrOutOfRange},
		{name: "huge exponent", raw: `1e999999999`, wantErr: ErrOutOfRange},
		{name: "huge integer", raw: `99999999999999`, wantErr: ErrOutOfRange},
		{name: "RFC 3339 past 2262", raw: `"2300-01-01T00:00:00Z"`, wantErr: ErrOutOfRange},
		{name: "RFC 3339 year 9999", raw: `"9999-12-31T23:59:59Z"`, wantErr: ErrOutOfRange},
		{name: "NaN", raw: `"NaN"`, wantErr: ErrSyntax},
		{name: "Infinity", raw: `Infinity`, wantErr: ErrSyntax},
		{name: "plus sign", raw: `+1`, wantErr: ErrSyntax},
		{name: "bare point", raw: `1.`, wantErr: ErrSyntax},
		{name: "exponent without digits", raw: `1e`, wantErr: ErrSyntax},
		{name: "hex", raw: `0x10`, wantErr: ErrSyntax},
		{name: "a word", raw: `"yesterday"`, wantErr: ErrSyntax},
		{name: "a date that is not RFC 3339", raw: `"2026-11-24"`, wantErr: ErrSyntax},
		{name: "a boolean", raw: `true`, wantErr: ErrSyntax},
		{name: "unterminated string", raw: `"2026`, wantErr: ErrSyntax},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.raw))
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got.UnixNano())
		})
	}
}

func TestTimeConversions(t *testing.T) {
	tm := time.Date(2026, 11, 24, 12, 0, 0, 123456789, time.FixedZone("x", 3600))
	got, err := FromTime(tm)
	require.NoError(t, err)
	assert.Equal(t, tm.UnixNano(), got.UnixNano())
	assert.True(t, got.Time().Equal(tm))
	assert.Equal(t, time.UTC, got.Time().Location())

	_, err = FromTime(Latest.Add(time.Nanosecond))
	require.ErrorIs(t, err, ErrOutOfRange)
	_, err = FromTime(Earliest.Add(-time.Nanosecond))
	require.ErrorIs(t, err, ErrOutOfRange)
}

// referenceNanos is ParseSeconds written the slow, obvious way, with
// big.Rat: the exact value of text times 1e9, truncated toward zero;
// ok=false for what is not a number or not in range.
func referenceNanos(text string) (int64, error) {
	if !numberGrammar.MatchString(text) {
		return 0, ErrSyntax
	}
	// A huge exponent would make big.Rat expand it: decide those by the
	// float, which is exact enough to tell zero or overflow apart.
	if mant, exp, ok := strings.Cut(strings.ToLower(text), "e"); ok {
		if e, err := strconv.Atoi(exp); err != nil || e > 400 || e < -400 {
			f, _ := strconv.ParseFloat(mant, 64)
			if f == 0 || (err == nil && e < 0) || (err != nil && strings.HasPrefix(exp, "-")) {
				return 0, nil
			}
			return 0, ErrOutOfRange
		}
	}
	r, ok := new(big.Rat).SetString(text)
	if !ok {
		return 0, ErrSyntax
	}
	num := new(big.Int).Mul(r.Num(), big.NewInt(1e9))
	q := new(big.Int).Quo(num, r.Denom()) // truncates toward zero
	if !q.IsInt64() {
		return 0, ErrOutOfRange
	}
	return q.Int64(), nil
}

// numberGrammar is the grammar ParseSeconds reads: JSON's number, leading
// zeros allowed.
var numberGrammar = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

func FuzzParseSeconds(f *testing.F) {
	for _, s := range []string{"1795000000.123456789", "1.5e9", "-0.000000001", "9223372036.854775807",
		"-9223372036.854775808", "9223372036.854775808", "0e99999", "1e-400", "00012.5", "1.", "1e+", "12e-3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got, err := ParseSeconds([]byte(text))
		want, werr := referenceNanos(text)
		switch {
		case werr != nil && !errors.Is(err, werr):
			t.Fatalf("ParseSeconds(%q) = %d, %v; the reference refuses it: %v", text, got, err, werr)
		case werr == nil && (err != nil || got.UnixNano() != want):
			t.Fatalf("ParseSeconds(%q) = %d, %v; the reference reads %d", text, got, err, want)
		}
	})
}

// TestComplexityGuardSeconds is the complexity guard's row for the
// seconds parser (internal/complexityguard names it): the text of a
// timestamp growing in fraction digits, leading zeros and exponent digits
// allocates nothing more as it grows.
func TestComplexityGuardSeconds(t *testing.T) {
	shapes := map[string]func(n int) string{
		"fraction digits": func(n int) string { return "1795000000." + strings.Repeat("7", n) },
		"leading zeros":   func(n int) string { return strings.Repeat("0", n) + "1.5" },
		"exponent digits": func(n int) string { return "1.5e" + strings.Repeat("0", n) + "9" },
		"quoted string":   func(n int) string { return `"1795000000.` + strings.Repeat("1", n) + `"` },
	}
	for name, shape := range shapes {
		t.Run(name, func(t *testing.T) {
			complexityguard.CheckLinear(t, name, 64<<10, func(tb testing.TB, n int) complexityguard.Sized {
				body := []byte(shape(n))
				return complexityguard.Sized{
					// The text is copied out of a body first, as a
					// decoder's caller does: the parse adds nothing to it.
					Run: func() {
						text := append([]byte(nil), body...)
						if _, err := Parse(text); err != nil {
							tb.Errorf("Parse: %v", err)
						}
					},
					Input:  func() int64 { return int64(len(body)) },
					Output: func() int64 { return 8 },
				}
			})
		})
	}
}

// TestScan: the shapes Scan reads are read as parseScaled reads them,
// ended by whatever ends a number; the word read takes the SDKs' shape and
// leaves the others to the byte loop; everything else is left to
// ParseSeconds (FuzzScan holds both to it).
func TestScan(t *testing.T) {
	for _, tt := range []struct {
		text      string
		scan, sdk bool
	}{
		{"1795000000.000164", true, true}, {"1795000000.1", true, true}, {"1795000000.1234567", true, true},
		{"9223372035.5", true, true}, {"1795644001.8564491", true, true},
		{"1795000000.12345678", true, false}, {"1795000000.123456789", true, false}, {"1795000000", true, false},
		{"1795644001.234", true, true}, {"1", true, false}, {"9223372035.999999999", true, false},
		{"9223372036.5", false, false}, {"9223372036.854775807", false, false},
		{"1795000000.1234567891", false, false}, {"17956440011", false, false}, {"10000000000.5", false, false},
		{"01.5", false, false}, {"0795000000.5", false, false}, {"0", false, false}, {"1.", false, false},
		{".5", false, false}, {"-1.5", false, false}, {"1e9", false, false}, {"1.5e3", false, false},
		{"1795000000.5e3", false, false}, {"", false, false},
	} {
		for _, tail := range []string{"", ",", "}", " ", `,"thread_id":"12345678"}`} {
			data := []byte(tt.text + tail)
			got, end, ok := Scan(data, 0)
			if ok != tt.scan {
				t.Errorf("Scan(%q) ok %v, want %v", data, ok, tt.scan)
				continue
			}
			if _, _, sdk := scanSDK(data, 0); sdk && !tt.sdk {
				t.Errorf("scanSDK(%q) took it", data)
			}
			if !ok {
				continue
			}
			if want, err := parseScaled([]byte(tt.text), 0); err != nil || got != want || end != len(tt.text) {
				t.Errorf("Scan(%q) = %d ending at %d; parseScaled %d, %v", data, got, end, want, err)
			}
		}
	}
}

// FuzzScan: what Scan takes, ParseSeconds' exact parser reads to the same
// value, and the number ends where Scan says.
func FuzzScan(f *testing.F) {
	for _, s := range []string{"1795000000.000164,", "9223372035.9999999}", "1795000000.12345678]", "1795000000.5 ", "1795000000", "1.5e3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		data := []byte(text)
		got, end, ok := Scan(data, 0)
		if !ok {
			return
		}
		if continuesAt(data, end) {
			t.Fatalf("Scan(%q) stopped at %d inside the number", text, end)
		}
		if want, err := parseScaled(data[:end], 0); err != nil || got != want {
			t.Fatalf("Scan(%q) = %d; parseScaled reads %d, %v", text, got, want, err)
		}
	})
}
