package sentryhttp

import (
	"iter"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// HeaderRetryAfter is the standard HTTP header Sentry (and any proxy before
// it) sends with a 429 or a 503: delay-seconds or an HTTP date.
const HeaderRetryAfter = "Retry-After"

const (
	// maxRetryAfter bounds a parsed delay: far beyond any real quota window
	// (monthly quotas), and far from overflowing a time.Duration.
	maxRetryAfter = 31 * 24 * time.Hour
	// maxTokenLen rejects category, scope and reason names no real one
	// approaches.
	maxTokenLen = 64
)

// RateLimit is one entry of X-Sentry-Rate-Limits, as Relay writes it:
// "<retry_after>:<categories>:<scope>[:<reason_code>[:<namespaces>]]".
type RateLimit struct {
	// Wait is how long the quota refuses what it covers (retry_after).
	Wait time.Duration
	// Categories are the data categories it covers; none means every
	// category.
	Categories []string
	// Scope is what the quota counts (organization, project, key), Reason
	// why it refuses (usage_exceeded); they say who is limited and why,
	// never how long.
	Scope, Reason string
	// Namespaces narrow a metric_bucket limit ("custom;spans").
	Namespaces []string
}

// Quota is the entry without its wait, "<categories>:<scope>[:<reason>[:<namespaces>]]":
// what identifies the quota when the same one is announced again.
func (r RateLimit) Quota() string {
	fields := []string{strings.Join(r.Categories, ";"), r.Scope, r.Reason, strings.Join(r.Namespaces, ";")}
	for len(fields) > 2 && fields[len(fields)-1] == "" {
		fields = fields[:len(fields)-1]
	}
	return strings.Join(fields, ":")
}

// FormatRateLimit writes the entry of quota with wait left, in whole
// seconds rounded up so that a client never resumes early.
func FormatRateLimit(wait time.Duration, quota string) string {
	return strconv.FormatInt(int64(math.Ceil(wait.Seconds())), 10) + ":" + quota
}

// ParseRateLimits yields the entries of every X-Sentry-Rate-Limits line of
// header, in order. An entry whose wait is not a non-negative number of
// seconds, or whose category list names no valid category, is skipped; a
// scope, reason or namespace list of another shape is left empty (the wait
// still applies).
func ParseRateLimits(header http.Header) iter.Seq[RateLimit] {
	return func(yield func(RateLimit) bool) {
		for _, line := range header.Values(HeaderRateLimits) {
			for entry := range strings.SplitSeq(line, ",") {
				limit, ok := parseRateLimit(entry)
				if ok && !yield(limit) {
					return
				}
			}
		}
	}
}

// parseRateLimit reads one "<retry_after>:<categories>:…" entry.
func parseRateLimit(entry string) (RateLimit, bool) {
	fields := strings.SplitN(strings.TrimSpace(entry), ":", 6)
	if len(fields) < 2 {
		return RateLimit{}, false
	}
	wait, ok := parseSeconds(fields[0])
	if !ok {
		return RateLimit{}, false
	}
	categories, ok := parseCategories(fields[1])
	if !ok {
		return RateLimit{}, false
	}
	limit := RateLimit{Wait: wait, Categories: categories}
	limit.Scope = tokenField(fields, 2)
	limit.Reason = tokenField(fields, 3)
	limit.Namespaces = parseTokenList(fieldAt(fields, 4))
	return limit, true
}

// parseCategories reads a ";"-separated category list. An empty list means
// every category; a list with no valid name is refused, so garbage never
// widens a limit to every category. Invalid names in a list with valid ones
// are dropped.
func parseCategories(list string) ([]string, bool) {
	if strings.TrimSpace(list) == "" {
		return nil, true
	}
	categories := parseTokenList(list)
	return categories, len(categories) > 0
}

// parseTokenList keeps the valid tokens of a ";"-separated list.
func parseTokenList(list string) []string {
	var tokens []string
	for token := range strings.SplitSeq(list, ";") {
		if token = strings.TrimSpace(token); validToken(token) {
			tokens = append(tokens, token)
		}
	}
	return tokens
}

// tokenField is fields[i] when it is a valid token, else "".
func tokenField(fields []string, i int) string {
	if token := strings.TrimSpace(fieldAt(fields, i)); validToken(token) {
		return token
	}
	return ""
}

func fieldAt(fields []string, i int) string {
	if i < len(fields) {
		return fields[i]
	}
	return ""
}

// ParseRetryAfter parses a Retry-After value, delay-seconds or an HTTP date,
// into the delay from now. A date in the past is a delay of 0. It reports
// false for an empty or unparsable value.
func ParseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if d, ok := parseSeconds(v); ok {
		return d, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return min(max(t.Sub(now), 0), maxRetryAfter), true
}

// LongestWait is the longest delay an answer asks for: its Retry-After
// (seconds or an HTTP date) and every X-Sentry-Rate-Limits entry, whatever
// their categories. It reports false when the answer asks for none, for a
// client that cannot tell which categories its request holds.
func LongestWait(header http.Header, now time.Time) (time.Duration, bool) {
	longest, found := ParseRetryAfter(header.Get(HeaderRetryAfter), now)
	for limit := range ParseRateLimits(header) {
		longest, found = max(longest, limit.Wait), true
	}
	return longest, found
}

// parseSeconds parses a non-negative decimal number of seconds; Sentry sends
// integers, some proxies send fractions. Only digits and a point are
// accepted: ParseFloat alone would take "Inf", "NaN", "1e9" and hex floats.
func parseSeconds(s string) (time.Duration, bool) {
	s = strings.TrimSpace(s)
	if s == "" || strings.Trim(s, "0123456789.") != "" {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false
	}
	if f >= maxRetryAfter.Seconds() {
		return maxRetryAfter, true
	}
	return time.Duration(f * float64(time.Second)), true
}

// validToken accepts the shape of Relay's category, scope and reason names
// (lower-case words joined by "_"), so garbage never becomes a tracked
// category nor goes back to an SDK in a header.
func validToken(s string) bool {
	if s == "" || len(s) > maxTokenLen {
		return false
	}
	return strings.IndexFunc(s, notTokenRune) < 0
}

func notTokenRune(r rune) bool {
	return (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '_'
}
