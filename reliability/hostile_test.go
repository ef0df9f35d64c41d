package reliability

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.uber.org/zap/zapcore"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/compresstest"
	"github.com/sentryprofile/otelcol-sentryprofile/internal/profilestest"
	"github.com/sentryprofile/otelcol-sentryprofile/sentryprofilereceiver"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
)

const (
	// wrongKey is a well-formed key the receiver does not accept.
	wrongKey = "badbadbadbadbadbadbadbadbadbad00"
	// legacySecret is a sentry_secret some old SDKs still send; it must
	// never be echoed or logged.
	legacySecret = "5ec2e75ec2e75ec2e75ec2e75ec2e700"

	mib = 1 << 20

	// delimitedItemBound is the transient heap an item without a length
	// may cost before the reader learns it is over max_profile_item_size
	// (50 MiB by default): the buffer grows by doubling, so the old and the
	// new buffer briefly coexist. Measured: 96–112 MiB.
	delimitedItemBound = 2*50*mib + 20*mib
)

// hostileCase is one adversarial request and its exact outcome.
type hostileCase struct {
	name string

	// Receiver setup: config changes and the downstream's answer.
	config func(*sentryprofilereceiver.Config)
	fail   error

	// The request. url defaults to envelopeURL, method to POST. body is
	// called before the heap is measured, so what it builds up front does
	// not count; what it streams is generated while the request runs.
	method  string
	url     func(base string) string
	headers map[string]string
	body    func(tb testing.TB) io.Reader

	// The outcome.
	status    int
	detail    string                  // substring of the response body
	discarded map[sentry.Reason]int64 // discarded-items metric by reason; nil asserts none
	ignored   int64                   // ignored-items metric total
	samples   int                     // sample events delivered downstream
	heapBound uint64                  // peak heap growth allowed while the request runs; 0 = not measured
	check     func(t *testing.T, res response, down *recordingConsumer)
}

func bodyOf(data []byte) func(testing.TB) io.Reader {
	return func(testing.TB) io.Reader { return bytes.NewReader(data) }
}

func bodyOfFunc(build func(testing.TB) []byte) func(testing.TB) io.Reader {
	return func(tb testing.TB) io.Reader { return bytes.NewReader(build(tb)) }
}

func withHeaders(kv ...string) map[string]string {
	m := make(map[string]string, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// noAuthURL is the endpoint without query credentials, for cases that
// authenticate otherwise.
func noAuthURL(base string) string { return base + "/api/" + testProject + "/envelope/" }

func hostileCases() []hostileCase {
	oneChunk := envelopeOf(`{}`, chunkItem(validChunk))
	return []hostileCase{
		// Baselines: the same harness lets good envelopes through.
		{
			name: "baseline_valid_chunk", body: bodyOf(oneChunk),
			status: http.StatusOK, detail: `{}`, samples: samplesPerProfile,
		},
		{
			name:   "baseline_valid_v1_with_transaction",
			body:   bodyOf(envelopeOf(`{"event_id":"a2c6f3cc518c44719ee95a36f07cda36"}`, sizedItem("transaction", transactionEvent), sizedItem("profile", validV1))),
			status: http.StatusOK, detail: `{"id":"a2c6f3cc518c44719ee95a36f07cda36"}`, ignored: 1, samples: samplesPerProfile,
		},

		// Envelope grammar.
		{
			name:   "empty_body",
			body:   bodyOf(nil),
			status: http.StatusBadRequest, detail: "missing envelope header",
		},
		{
			name:   "truncated_envelope",
			body:   bodyOf(envelopeOf(`{}`, sizedItem("profile_chunk", validChunk))[:200]),
			status: http.StatusBadRequest, detail: "only",
		},
		{
			name:   "length_longer_than_body",
			body:   bodyOf([]byte("{}\n{\"type\":\"profile_chunk\",\"length\":5000}\n" + validChunk + "\n")),
			status: http.StatusBadRequest, detail: "length says 5000 but only",
		},
		{
			name:   "length_4GiB_streamed_skip",
			body:   bodyOf([]byte("{}\n{\"type\":\"profile_chunk\",\"length\":4294967296}\n" + validChunk + "\n")),
			status: http.StatusBadRequest, detail: "length says 4294967296 but only", heapBound: 8 * mib,
		},
		{
			name:   "length_not_followed_by_newline",
			body:   bodyOf([]byte("{}\n{\"type\":\"profile_chunk\",\"length\":3}\nabcX{\"type\":\"profile_chunk\"}\n" + validChunk + "\n")),
			status: http.StatusBadRequest, detail: "followed by 'X' instead of a newline",
		},
		{
			name:   "negative_length",
			body:   bodyOf([]byte("{}\n{\"type\":\"profile_chunk\",\"length\":-1}\n" + validChunk + "\n")),
			status: http.StatusBadRequest, detail: "is negative",
		},
		{
			name:   "length_not_a_number",
			body:   bodyOf([]byte("{}\n{\"type\":\"profile_chunk\",\"length\":\"12\"}\n" + validChunk + "\n")),
			status: http.StatusBadRequest, detail: "is not an integer byte count",
		},
		{
			name:   "non_json_envelope_header",
			body:   bodyOf([]byte("hello world\n{\"type\":\"profile_chunk\"}\n" + validChunk + "\n")),
			status: http.StatusBadRequest, detail: "envelope header is not a JSON object",
		},
		{
			name:   "broken_json_item_header",
			body:   bodyOf([]byte("{}\n{\"type\":\"profile_chunk\"\n" + validChunk + "\n")),
			status: http.StatusBadRequest, detail: "item header is not valid JSON",
		},
		{
			name:   "item_header_without_type",
			body:   bodyOf([]byte("{}\n{\"length\":2}\n{}\n")),
			status: http.StatusBadRequest, detail: `item header has no \"type\"`,
		},
		{
			name:   "crlf_line_endings",
			body:   bodyOf([]byte("{}\r\n{\"type\":\"profile_chunk\"}\r\n" + validChunk + "\r\n")),
			status: http.StatusBadRequest, detail: `envelope header is followed by '\\r' instead of a newline`,
		},
		{
			name:   "nul_bytes_body",
			body:   bodyOf(make([]byte, 4096)),
			status: http.StatusBadRequest, detail: "envelope header is not a JSON object",
		},
		{
			name:   "header_only_envelope",
			body:   bodyOf([]byte("{}")),
			status: http.StatusOK, detail: `{}`,
		},
		{
			name:   "invalid_event_id",
			body:   bodyOf(envelopeOf(`{"event_id":"../../etc/passwd"}`, chunkItem(validChunk))),
			status: http.StatusBadRequest, detail: "invalid event_id in envelope header",
		},
		{
			name:   "envelope_header_line_over_64KiB",
			body:   bodyOf(envelopeOf(`{"sdk":{"name":"`+strings.Repeat("x", 70<<10)+`"}}`, chunkItem(validChunk))),
			status: http.StatusRequestEntityTooLarge, detail: "envelope header line too large",
		},
		{
			name:   "json_nested_1e5_in_envelope_header",
			body:   bodyOf([]byte(`{"x":` + strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000) + "}\n")),
			status: http.StatusRequestEntityTooLarge, detail: "envelope header line too large",
		},
		{
			name:   "items_1e5_tiny",
			body:   bodyOf(append([]byte("{}\n"), bytes.Repeat([]byte("{\"type\":\"client_report\"}\n{}\n"), 100_000)...)),
			status: http.StatusRequestEntityTooLarge, detail: "envelope has more than 1000 items", heapBound: 16 * mib,
		},
		{
			name:   "items_999_invalid_profiles_within_limit",
			body:   bodyOf(append([]byte("{}\n"), bytes.Repeat([]byte("{\"type\":\"profile_chunk\"}\n{\n"), 999)...)),
			status: http.StatusOK, detail: `{}`, discarded: map[sentry.Reason]int64{sentry.ReasonInvalidJSON: 999},
		},

		// Sizes.
		// An item over its type's limit refuses the whole envelope before
		// any of it reaches a pipeline, as Relay does: nothing of it is
		// answered 200 and then dropped.
		{
			name: "profile_item_60MiB_refuses_the_envelope",
			body: func(testing.TB) io.Reader {
				next := "\n" + `{"type":"profile_chunk","platform":"python"}` + "\n" + validChunk + "\n"
				return streamedEnvelope("{}\n{\"type\":\"profile_chunk\",\"length\":62914560}\n", ' ', 60*mib, next)
			},
			status: http.StatusRequestEntityTooLarge, detail: "profile_chunk item 0 exceeds 52428800 bytes", heapBound: 16 * mib,
		},
		{
			name: "profile_item_60MiB_without_length_refuses_the_envelope",
			body: func(testing.TB) io.Reader {
				next := "\n" + `{"type":"profile_chunk","platform":"python"}` + "\n" + validChunk + "\n"
				return streamedEnvelope("{}\n{\"type\":\"profile_chunk\"}\n", ' ', 60*mib, next)
			},
			// Without a length the reader must buffer up to the item limit
			// (50 MiB) before it knows the item is too large.
			status: http.StatusRequestEntityTooLarge, detail: "profile_chunk item 0 exceeds 52428800 bytes", heapBound: delimitedItemBound,
		},
		{
			name: "body_over_max_request_body_size",
			config: func(c *sentryprofilereceiver.Config) {
				c.ServerConfig.MaxRequestBodySize = mib
				c.MaxProfileItemSize = mib
			},
			body: func(testing.TB) io.Reader {
				return streamedEnvelope("{}\n{\"type\":\"attachment\",\"length\":4194304}\n", 'a', 4*mib, "\n")
			},
			status: http.StatusRequestEntityTooLarge, detail: "envelope exceeds 1048576 bytes after decompression", heapBound: 8 * mib,
		},
		{
			name:    "gzip_bomb_1GiB",
			headers: withHeaders("Content-Encoding", "gzip"),
			body:    bodyOfFunc(func(tb testing.TB) []byte { return gzipBomb(tb, bombPrefix) }),
			// 24 MiB as zstd and br: a gzip body is first inflated whole,
			// into a buffer of up to 8 MiB (sentryprofilereceiver's
			// gzipbody.go), before one that inflates past it is streamed.
			// This bomb's members each state 1 MiB, so the attempt is made.
			status: http.StatusRequestEntityTooLarge, detail: "envelope exceeds 209715200 bytes after decompression", heapBound: 24 * mib,
		},
		{
			// one member, whose trailer states its size: streamed at once,
			// without the whole inflate's buffer
			name:    "gzip_bomb_256MiB_one_member",
			headers: withHeaders("Content-Encoding", "gzip"),
			body:    bodyOfFunc(func(tb testing.TB) []byte { return gzipBombOneMember(tb, bombPrefix, 256*mib) }),
			status:  http.StatusRequestEntityTooLarge, detail: "envelope exceeds 209715200 bytes after decompression", heapBound: 10 * mib,
		},
		{
			name:    "gzip_bomb_1GiB_without_length",
			headers: withHeaders("Content-Encoding", "gzip"),
			body:    bodyOfFunc(func(tb testing.TB) []byte { return gzipBomb(tb, "{}\n{\"type\":\"profile_chunk\"}\n") }),
			// The reader holds up to max_profile_item_size of an item without
			// a length before it can call it oversized; its buffer doubles,
			// so the transient peak is about twice that.
			status: http.StatusRequestEntityTooLarge, detail: "envelope exceeds 209715200 bytes after decompression", heapBound: delimitedItemBound,
		},
		{
			name:    "zstd_bomb_1GiB",
			headers: withHeaders("Content-Encoding", "zstd"),
			body:    bodyOfFunc(zstdBomb),
			status:  http.StatusRequestEntityTooLarge, detail: "envelope exceeds 209715200 bytes after decompression", heapBound: 24 * mib,
		},
		{
			name:    "br_bomb_1GiB",
			headers: withHeaders("Content-Encoding", "br"),
			body:    bodyOfFunc(brotliBomb),
			status:  http.StatusRequestEntityTooLarge, detail: "envelope exceeds 209715200 bytes after decompression", heapBound: 24 * mib,
		},
		{
			name:    "http_header_2MiB",
			headers: withHeaders("X-Sentry-Auth", "Sentry sentry_key="+testKey+", sentry_client="+strings.Repeat("a", 2*mib)),
			body:    bodyOf(oneChunk),
			status:  http.StatusRequestHeaderFieldsTooLarge, detail: "Request Header Fields Too Large",
		},

		{
			name: "slow_body_cut_by_read_timeout",
			// read_timeout is not set by default (see README): with it, a
			// client trickling its body cannot hold the connection.
			config: func(c *sentryprofilereceiver.Config) { c.ServerConfig.ReadTimeout = 300 * time.Millisecond },
			body: func(testing.TB) io.Reader {
				return io.MultiReader(strings.NewReader("{}\n{\"type\":\"profile_chunk\"}\n"), &stalledReader{delay: 2 * time.Second})
			},
			// The body pace answers before read_timeout cuts the read.
			status: http.StatusRequestTimeout, detail: "request body too slow",
		},

		// Compression.
		{
			name: "unsupported_content_encoding", headers: withHeaders("Content-Encoding", "compress"),
			body:   bodyOf(oneChunk),
			status: http.StatusUnsupportedMediaType, detail: "unsupported Content-Encoding compress",
		},
		{
			name: "body_ends_mid_gzip", headers: withHeaders("Content-Encoding", "gzip"),
			body: bodyOfFunc(func(tb testing.TB) []byte {
				z := compresstest.Bytes(tb, "gzip", oneChunk)
				return z[:len(z)/2]
			}),
			status: http.StatusBadRequest, detail: "unexpected EOF",
		},
		{
			name: "gzip_label_on_plain_body", headers: withHeaders("Content-Encoding", "gzip"),
			body:   bodyOf(oneChunk),
			status: http.StatusBadRequest, detail: "",
		},
		{
			name: "x_gzip_accepted", headers: withHeaders("Content-Encoding", "x-gzip"),
			body:   bodyOfFunc(func(tb testing.TB) []byte { return compresstest.Bytes(tb, "gzip", oneChunk) }),
			status: http.StatusOK, samples: samplesPerProfile,
		},
		{
			name: "deflate_accepted", headers: withHeaders("Content-Encoding", "deflate"),
			body:   bodyOfFunc(func(tb testing.TB) []byte { return compresstest.Bytes(tb, "deflate", oneChunk) }),
			status: http.StatusOK, samples: samplesPerProfile,
		},
		{
			name: "zstd_accepted", headers: withHeaders("Content-Encoding", "zstd"),
			body:   bodyOfFunc(func(tb testing.TB) []byte { return compresstest.Bytes(tb, "zstd", oneChunk) }),
			status: http.StatusOK, samples: samplesPerProfile,
		},
		{
			name: "br_accepted", headers: withHeaders("Content-Encoding", "br"),
			body:   bodyOfFunc(func(tb testing.TB) []byte { return compresstest.Bytes(tb, "br", oneChunk) }),
			status: http.StatusOK, samples: samplesPerProfile,
		},

		// Profile payloads.
		{
			name:   "json_nested_1e5_in_profile",
			body:   bodyOf(envelopeOf(`{}`, chunkItem(`{"version":"2","profile":{"frames":`+strings.Repeat("[", 100_000)+strings.Repeat("]", 100_000)+`}}`))),
			status: http.StatusOK, discarded: map[sentry.Reason]int64{sentry.ReasonInvalidJSON: 1},
		},
		{
			name:   "stack_id_negative",
			body:   bodyOf(envelopeOf(`{}`, chunkItem(chunk(chunkParts{samples: strings.Replace(chunkSamples, `"stack_id":1`, `"stack_id":-1`, 1)})))),
			status: http.StatusOK, discarded: map[sentry.Reason]int64{sentry.ReasonMalformedSamples: 1},
		},
		{
			name:   "stack_id_out_of_range",
			body:   bodyOf(envelopeOf(`{}`, chunkItem(chunk(chunkParts{samples: strings.Replace(chunkSamples, `"stack_id":1`, `"stack_id":2`, 1)})))),
			status: http.StatusOK, discarded: map[sentry.Reason]int64{sentry.ReasonMalformedSamples: 1},
		},
		{
			name:   "stack_id_huge",
			body:   bodyOf(envelopeOf(`{}`, chunkItem(chunk(chunkParts{samples: strings.Replace(chunkSamples, `"stack_id":1`, `"stack_id":18446744073709551616`, 1)})))),
			status: http.StatusOK, discarded: map[sentry.Reason]int64{sentry.ReasonInvalidJSON: 1},
		},
		{
			name:   "stack_id_fractional",
			body:   bodyOf(envelopeOf(`{}`, chunkItem(chunk(chunkParts{samples: strings.Replace(chunkSamples, `"stack_id":1`, `"stack_id":1.5`, 1)})))),
			status: http.StatusOK, discarded: map[sentry.Reason]int64{sentry.ReasonInvalidJSON: 1},
		},
		{
			name:   "frame_index_negative",
			body:   bodyOf(envelopeOf(`{}`, chunkItem(chunk(chunkParts{stacks: `[[0,1],[-1,1]]`})))),
			status: http.StatusOK, discarded: map[sentry.Reason]int64{sentry.ReasonMalformedStacks: 1},
		},
		{
			name:   "frame_index_out_of_range",
			body:   bodyOf(envelopeOf(`{}`, chunkItem(chunk(chunkParts{stacks: `[[0,1],[3,1]]`})))),
			status: http.StatusOK, discarded: map[sentry.Reason]int64{sentry.ReasonMalformedStacks: 1},
		},
		{
			name:   "frame_index_huge",
			body:   bodyOf(envelopeOf(`{}`, chunkItem(chunk(chunkParts{stacks: `[[0,1],[9223372036854775807,1]]`})))),
			status: http.StatusOK, discarded: map[sentry.Reason]int64{sentry.ReasonMalformedStacks: 1},
		},
		{
			name: "empty_stacks_only",
			body: bodyOf(envelopeOf(`{}`, chunkItem(chunk(chunkParts{stacks: `[[],[]]`})))),
			// Every sample is idle: nothing is left for Relay's thread rule,
			// but every sample reads, so the default keeps them (counted as
			// a warning).
			status: http.StatusOK, samples: samplesPerProfile,
		},
		{
			name: "empty_stacks_between_busy_samples",
			body: bodyOf(envelopeOf(`{}`, chunkItem(chunk(chunkParts{
				stacks: `[[0,1],[]]`,
			})))),
			// Idle samples are kept between busy ones: all three arrive.
			status: http.StatusOK, samples: samplesPerProfile,
		},
		{
			name:   "no_samples",
			body:   bodyOf(envelopeOf(`{}`, chunkItem(chunk(chunkParts{samples: `[]`})))),
			status: http.StatusOK, discarded: map[sentry.Reason]int64{sentry.ReasonNotEnoughSamples: 1},
		},
		{
			name:   "timestamp_nan_literal",
			body:   bodyOf(envelopeOf(`{}`, chunkItem(chunk(chunkParts{samples: strings.Replace(chunkSamples, `1795000000.010`, `NaN`, 1)})))),
			status: http.StatusOK, discarded: map[sentry.Reason]int64{sentry.ReasonInvalidJSON: 1},
		},
		{
			name:   "timestamp_infinity_literal",
			body:   bodyOf(envelopeOf(`{}`, chunkItem(chunk(chunkParts{samples: strings.Replace(chunkSamples, `1795000000.010`, `Infinity`, 1)})))),
			status: http.StatusOK, discarded: map[sentry.Reason]int64{sentry.ReasonInvalidJSON: 1},
		},
		{
			name:   "timestamp_overflows_to_inf",
			body:   bodyOf(envelopeOf(`{}`, chunkItem(chunk(chunkParts{samples: strings.Replace(chunkSamples, `1795000000.010`, `1e400`, 1)})))),
			status: http.StatusOK, discarded: map[sentry.Reason]int64{sentry.ReasonInvalidJSON: 1},
		},
		{
			name:   "timestamp_negative",
			body:   bodyOf(envelopeOf(`{}`, chunkItem(chunk(chunkParts{samples: strings.Replace(chunkSamples, `1795000000.010`, `-1795000000.010`, 1)})))),
			status: http.StatusOK, discarded: map[sentry.Reason]int64{sentry.ReasonMalformedSamples: 1},
		},
		{
			name: "timestamp_as_string",
			body: bodyOf(envelopeOf(`{}`, chunkItem(chunk(chunkParts{samples: strings.Replace(chunkSamples, `1795000000.010`, `"1795000000.010"`, 1)})))),
			// Lenient where Relay's serde is strict: a numeric string is read
			// as the number it spells.
			status: http.StatusOK, samples: samplesPerProfile,
		},
		{
			name: "chunk_spans_more_than_66s",
			body: bodyOf(envelopeOf(`{}`, chunkItem(chunk(chunkParts{samples: strings.Replace(chunkSamples, `1795000000.020`, `1795000100.020`, 1)})))),
			// Over Relay's limit, accepted on the OTLP path (a warning).
			status: http.StatusOK, samples: samplesPerProfile,
		},
		{
			name: "duplicate_json_keys",
			// The later "version":"2" wins, as in encoding/json; Relay's serde
			// would refuse the item. Either way the outcome is one reading,
			// never a mix of both.
			body:   bodyOf(envelopeOf(`{}`, chunkItem(chunk(chunkParts{extra: `"version":"1",`})))),
			status: http.StatusOK, samples: samplesPerProfile,
		},
		{
			name: "invalid_utf8_function_name",
			body: bodyOf(envelopeOf(`{}`, chunkItem(chunk(chunkParts{
				frames: strings.Replace(defaultFrames, `"work"`, "\"w\xff\xfeork\xc3\"", 1),
			})))),
			status: http.StatusOK, samples: samplesPerProfile,
			check: func(t *testing.T, _ response, down *recordingConsumer) {
				requireValidUTF8(t, down.all())
				requireProtoRoundTrip(t, down.all())
			},
		},
		{
			name: "function_name_10MB",
			body: bodyOfFunc(func(testing.TB) []byte {
				return envelopeOf(`{}`, chunkItem(chunk(chunkParts{
					frames: strings.Replace(defaultFrames, `"work"`, `"`+strings.Repeat("f", 10_000_000)+`"`, 1),
				})))
			}),
			status: http.StatusOK, samples: samplesPerProfile, heapBound: 96 * mib,
			check: func(t *testing.T, _ response, down *recordingConsumer) {
				requireProtoRoundTrip(t, down.all())
				assert.True(t, hasStringOfLen(down.all(), 10_000_000), "the 10 MB name arrives whole")
			},
		},
		{
			name: "v2_thread_id_not_a_number",
			body: bodyOf(envelopeOf(`{}`, chunkItem(chunk(chunkParts{
				samples: strings.ReplaceAll(chunkSamples, `"thread_id":"1"`, `"thread_id":"main-thread"`),
				threads: `{"main-thread":{"name":"MainThread"}}`,
			})))),
			// V2 thread ids are strings (cocoa sends hex): accepted.
			status: http.StatusOK, samples: samplesPerProfile,
		},
		{
			name: "v2_thread_id_object",
			body: bodyOf(envelopeOf(`{}`, chunkItem(chunk(chunkParts{
				samples: strings.ReplaceAll(chunkSamples, `"thread_id":"1"`, `"thread_id":{"id":1}`),
			})))),
			status: http.StatusOK, discarded: map[sentry.Reason]int64{sentry.ReasonInvalidJSON: 1},
		},
		{
			name: "v1_thread_id_not_a_number",
			body: bodyOf(envelopeOf(`{}`, sizedItem("transaction", transactionEvent),
				sizedItem("profile", v1Profile(`"transaction":`+strings.Replace(v1Transaction, `"active_thread_id":"1"`, `"active_thread_id":"main"`, 1)+`,`,
					strings.ReplaceAll(v1Samples, `"thread_id":"1"`, `"thread_id":"main"`))))),
			// Lenient where Relay is strict (V1 thread ids are u64 there):
			// the id is kept as the string it is.
			status: http.StatusOK, ignored: 1, samples: samplesPerProfile,
		},
		{
			name: "v1_without_transaction",
			body: bodyOf(envelopeOf(`{}`, sizedItem("profile", v1Profile("", "")))),
			// Accepted without span links (a warning), where Relay drops it.
			status: http.StatusOK, samples: samplesPerProfile,
		},
		{
			name: "v1_without_transaction_item",
			// The profile names its transaction but the envelope does not
			// carry it: accepted without span links, where Relay answers
			// no_transaction_associated.
			body:   bodyOf(envelopeOf(`{}`, sizedItem("profile", validV1))),
			status: http.StatusOK, samples: samplesPerProfile,
		},
		{
			name:   "unknown_version",
			body:   bodyOf(envelopeOf(`{}`, chunkItem(chunk(chunkParts{version: `"3"`})))),
			status: http.StatusOK, discarded: map[sentry.Reason]int64{sentry.ReasonUnsupportedVersion: 1},
		},
		{
			name:   "version_as_number",
			body:   bodyOf(envelopeOf(`{}`, chunkItem(chunk(chunkParts{version: `2`})))),
			status: http.StatusOK, discarded: map[sentry.Reason]int64{sentry.ReasonInvalidJSON: 1},
		},
		{
			name: "mixed_v1_and_v2_in_one_envelope",
			body: bodyOf(envelopeOf(`{}`, sizedItem("transaction", transactionEvent),
				sizedItem("profile", validV1), chunkItem(validChunk))),
			status: http.StatusOK, ignored: 1, samples: 2 * samplesPerProfile,
		},
		{
			name: "two_v1_profiles_second_dropped",
			body: bodyOf(envelopeOf(`{}`, sizedItem("transaction", transactionEvent),
				sizedItem("profile", validV1), sizedItem("profile", validV1))),
			status: http.StatusOK, ignored: 1, samples: samplesPerProfile,
			discarded: map[sentry.Reason]int64{sentry.ReasonTooManyProfiles: 1},
		},
		{
			name:   "one_bad_item_does_not_sink_the_envelope",
			body:   bodyOf(envelopeOf(`{}`, chunkItem(`{"version":"2"`), chunkItem(validChunk), chunkItem(`[]`))),
			status: http.StatusOK, samples: samplesPerProfile,
			discarded: map[sentry.Reason]int64{sentry.ReasonInvalidJSON: 2},
		},

		// Authentication and routing.
		{
			name: "no_auth", url: noAuthURL, body: bodyOf(oneChunk),
			status: http.StatusUnauthorized, detail: "missing authorization information",
		},
		{
			name:    "two_auth_forms_disagree",
			headers: withHeaders("X-Sentry-Auth", "Sentry sentry_key="+wrongKey+", sentry_version=7"),
			body:    bodyOf(oneChunk),
			status:  http.StatusBadRequest, detail: "multiple authorization payloads",
		},
		{
			name:    "two_auth_forms_agree",
			headers: withHeaders("X-Sentry-Auth", "Sentry sentry_key="+testKey+", sentry_version=7, sentry_secret="+legacySecret),
			body:    bodyOf(oneChunk),
			status:  http.StatusOK, samples: samplesPerProfile,
		},
		{
			name: "basic_auth", url: noAuthURL,
			headers: withHeaders("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(testKey+":"+legacySecret))),
			body:    bodyOf(oneChunk),
			status:  http.StatusOK, samples: samplesPerProfile,
		},
		{
			name: "malformed_auth_header", url: noAuthURL,
			headers: withHeaders("X-Sentry-Auth", "Bearer "+testKey),
			body:    bodyOf(oneChunk),
			// Not a Sentry scheme, so not a credential at all.
			status: http.StatusUnauthorized, detail: "missing authorization information",
		},
		{
			name: "sentry_auth_without_key", url: noAuthURL,
			headers: withHeaders("X-Sentry-Auth", "Sentry sentry_version=7, sentry_secret="+legacySecret),
			body:    bodyOf(oneChunk),
			status:  http.StatusUnauthorized, detail: "invalid authorization information",
		},
		{
			name: "wrong_key",
			url: func(base string) string {
				return base + "/api/" + testProject + "/envelope/?sentry_key=" + wrongKey + "&sentry_version=7"
			},
			body:   bodyOf(oneChunk),
			status: http.StatusForbidden, detail: "unknown public key",
		},
		{
			name: "unknown_project",
			url: func(base string) string {
				return base + "/api/7/envelope/?sentry_key=" + testKey + "&sentry_version=7"
			},
			body:   bodyOf(oneChunk),
			status: http.StatusForbidden, detail: "project 7 is not accepted here",
		},
		{
			name: "dsn_header_for_another_project", url: noAuthURL,
			body:   bodyOf(envelopeOf(`{"dsn":"https://`+testKey+`@sentry.example.com/7"}`, chunkItem(validChunk))),
			status: http.StatusBadRequest, detail: "envelope dsn is for project 7, not 42",
		},
		{
			name: "dsn_header_redirect_attempt_same_project", url: noAuthURL,
			// The dsn authenticates; its host is never contacted and
			// changes nothing about where data goes.
			body:   bodyOf(envelopeOf(`{"dsn":"https://`+testKey+`@attacker.invalid:1/42"}`, chunkItem(validChunk))),
			status: http.StatusOK, samples: samplesPerProfile,
		},
		{
			name: "dsn_header_with_wrong_key", url: noAuthURL,
			body:   bodyOf(envelopeOf(`{"dsn":"https://`+wrongKey+`@sentry.example.com/42"}`, chunkItem(validChunk))),
			status: http.StatusForbidden, detail: "unknown public key",
		},
		{
			name: "non_numeric_project", url: func(base string) string { return base + "/api/abc/envelope/?sentry_key=" + testKey },
			body:   bodyOf(oneChunk),
			status: http.StatusNotFound, detail: "the project id is numeric",
		},
		{
			name: "get_method", method: http.MethodGet, body: bodyOf(nil),
			status: http.StatusMethodNotAllowed, detail: "method not allowed",
		},
		{
			name: "path_traversal", url: func(base string) string { return base + "/api/42/../../envelope/?sentry_key=" + testKey },
			body:   bodyOf(oneChunk),
			status: http.StatusNotFound, detail: "not found",
		},

		// Downstream faults: all or nothing of an envelope.
		{
			name:   "downstream_retryable_error",
			fail:   errors.New("queue is full"),
			body:   bodyOf(envelopeOf(`{}`, chunkItem(validChunk), chunkItem(validChunk), chunkItem(validChunk))),
			status: http.StatusTooManyRequests, detail: "the pipeline is busy",
			check: func(t *testing.T, res response, down *recordingConsumer) {
				assert.Equal(t, "60", res.header.Get("Retry-After"))
				assert.Equal(t, "60::organization", res.header.Get("X-Sentry-Rate-Limits"))
				assert.Equal(t, []int{3 * samplesPerProfile}, down.calls(), "one call holding the whole envelope")
			},
		},
		{
			name:   "downstream_permanent_error",
			fail:   consumererror.NewPermanent(errors.New("schema rejected")),
			body:   bodyOf(envelopeOf(`{}`, chunkItem(validChunk), chunkItem(validChunk))),
			status: http.StatusBadRequest, detail: "rejected by the pipeline",
			check: func(t *testing.T, res response, down *recordingConsumer) {
				assert.Empty(t, res.header.Get("Retry-After"))
				assert.Equal(t, []int{2 * samplesPerProfile}, down.calls(), "one call holding the whole envelope")
			},
		},
		{
			name:   "downstream_retryable_configured_retry_after",
			config: func(c *sentryprofilereceiver.Config) { c.RetryAfter = 1500 * time.Millisecond },
			fail:   errors.New("memory limiter refused"),
			body:   bodyOf(oneChunk),
			status: http.StatusTooManyRequests, detail: "the pipeline is busy",
			check: func(t *testing.T, res response, _ *recordingConsumer) {
				assert.Equal(t, "2", res.header.Get("Retry-After"), "whole seconds, rounded up")
			},
		},
		{
			name:   "nothing_valid_means_no_downstream_call",
			body:   bodyOf(envelopeOf(`{}`, chunkItem(`{}`))),
			status: http.StatusOK, discarded: map[sentry.Reason]int64{sentry.ReasonUnsupportedVersion: 1},
			check: func(t *testing.T, _ response, down *recordingConsumer) {
				assert.Empty(t, down.calls())
			},
		},
	}
}

// TestHostileInput sends every hostile case to a fresh receiver over real
// HTTP and asserts its exact outcome.
func TestHostileInput(t *testing.T) {
	cases := hostileCases()
	require.GreaterOrEqual(t, len(cases), 40)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.heapBound > 16*mib && testing.Short() {
				t.Skip("large-input case; skipped in -short mode")
			}
			down := &recordingConsumer{fail: tc.fail}
			rut := startReceiver(t, down, tc.config)

			method := tc.method
			if method == "" {
				method = http.MethodPost
			}
			url := envelopeURL(rut.url)
			if tc.url != nil {
				url = tc.url(rut.url)
			}
			body := tc.body(t)
			req, err := http.NewRequest(method, url, body)
			require.NoError(t, err)
			for k, v := range tc.headers {
				req.Header.Set(k, v)
			}

			var watch *heapWatch
			if tc.heapBound > 0 {
				watch = watchHeap()
			}
			start := time.Now()
			res := send(t, req)
			elapsed := time.Since(start)
			if watch != nil {
				growth := watch.growth()
				t.Logf("%s: %d in %s, peak heap growth %.1f MiB (bound %d MiB)",
					tc.name, res.status, elapsed.Round(time.Millisecond), float64(growth)/mib, tc.heapBound/mib)
				assert.LessOrEqualf(t, growth, tc.heapBound, "peak heap growth %d bytes", growth)
			}

			assert.Equalf(t, tc.status, res.status, "body: %.300s", res.body)
			assert.Containsf(t, res.body, tc.detail, "response body")
			assert.Equal(t, tc.samples, down.deliveredSamples(), "sample events delivered")
			for _, reason := range allReasons {
				assert.Equalf(t, tc.discarded[reason], rut.counter(t, metricDiscarded, "reason", string(reason)), "discarded items, reason %s", reason)
			}
			assert.Equal(t, tc.ignored, rut.counterTotal(t, metricIgnored), "ignored items")
			if tc.check != nil {
				tc.check(t, res, down)
			}
			requireNoSecretsOrRequestData(t, rut, res)
		})
	}
}

var allReasons = []sentry.Reason{
	sentry.ReasonExceedSizeLimit, sentry.ReasonInvalidJSON, sentry.ReasonInvalidSampledProfile,
	sentry.ReasonInvalidTransactionMetadata, sentry.ReasonMalformedSamples, sentry.ReasonMalformedStacks,
	sentry.ReasonMissingProfileMetadata, sentry.ReasonNoTransactionAssociated, sentry.ReasonNotEnoughSamples,
	sentry.ReasonPlatformNotSupported, sentry.ReasonDurationIsTooLong, sentry.ReasonTooManyProfiles,
	sentry.ReasonUnsupportedVersion,
}

// dropLogFields are the fields of the receiver's warn line for a dropped item.
var dropLogFields = []string{"item_type", "reason", "project_id", "sdk", "item", "suppressed_since_last", "log_interval"}

// requireNoSecretsOrRequestData checks the receiver's logs at every level and
// its answer: no key or secret anywhere, and nothing above debug but the
// startup line (request data stays at debug).
func requireNoSecretsOrRequestData(t *testing.T, rut *receiverUnderTest, res response) {
	t.Helper()
	for _, secret := range []string{testKey, wrongKey, legacySecret} {
		assert.NotContains(t, res.body, secret, "response body")
	}
	for _, e := range rut.logs.All() {
		text := e.Message + " " + fmt.Sprint(e.ContextMap())
		for _, secret := range []string{testKey, wrongKey, legacySecret} {
			assert.NotContainsf(t, text, secret, "log entry %q", e.Message)
		}
		if e.Level <= zapcore.DebugLevel {
			continue
		}
		if e.Message == "Item dropped" {
			// The rate-limited drop line: fixed fields, no payload content.
			for k := range e.ContextMap() {
				assert.Containsf(t, dropLogFields, k, "drop log field %q", k)
			}
			continue
		}
		assert.Equalf(t, "Starting HTTP server", e.Message, "only debug logs and the drop line may describe requests; got %s %q %v", e.Level, e.Message, e.ContextMap())
	}
}

// requireValidUTF8 checks every string the receiver put into pdata.
func requireValidUTF8(t *testing.T, all []pprofile.Profiles) {
	t.Helper()
	require.NotEmpty(t, all)
	for _, pd := range all {
		strs := pd.Dictionary().StringTable()
		for i := 0; i < strs.Len(); i++ {
			assert.Truef(t, utf8.ValidString(strs.At(i)), "string_table[%d] = %q is not valid UTF-8", i, strs.At(i))
		}
		attrs := pd.Dictionary().AttributeTable()
		for i := 0; i < attrs.Len(); i++ {
			v := attrs.At(i).Value().AsString()
			assert.Truef(t, utf8.ValidString(v), "attribute_table[%d] = %q is not valid UTF-8", i, v)
		}
	}
}

// requireProtoRoundTrip marshals every delivered Profiles to OTLP protobuf
// and back, as an OTLP exporter and the next collector would.
func requireProtoRoundTrip(t *testing.T, all []pprofile.Profiles) {
	t.Helper()
	require.NotEmpty(t, all)
	for _, pd := range all {
		cp := pprofile.NewProfiles()
		pd.CopyTo(cp)
		data, err := (&pprofile.ProtoMarshaler{}).MarshalProfiles(cp)
		require.NoError(t, err)
		back, err := (&pprofile.ProtoUnmarshaler{}).UnmarshalProfiles(data)
		require.NoError(t, err)
		assert.Equal(t, profilestest.SampleEvents(pd), profilestest.SampleEvents(back))
	}
}

func hasStringOfLen(all []pprofile.Profiles, n int) bool {
	for _, pd := range all {
		strs := pd.Dictionary().StringTable()
		for i := 0; i < strs.Len(); i++ {
			if len(strs.At(i)) == n {
				return true
			}
		}
	}
	return false
}
