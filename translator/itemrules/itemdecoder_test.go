package itemrules

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/fixtures"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/envelope"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentry"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentryid"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrytrace"
)

// TestItemDecoder: the one set of item rules of the receiver and the CLI.
func TestItemDecoder(t *testing.T) {
	v1NoTimestamp := `{"version":"1","platform":"python","event_id":"41fed0925670468bb0457f61a74688ec",` +
		`"transaction":{"id":"30976f2ddbe04ac9b6bffe6e35d4710c","name":"t","trace_id":"4b25bc58f14243d8b208d1e22a054164","active_thread_id":"1"},` +
		`"device":{"architecture":"x86_64"},"os":{"name":"Linux","version":"6"},"runtime":{"name":"CPython","version":"3.11"},` +
		`"profile":{"samples":[{"stack_id":0,"thread_id":"1","elapsed_since_start_ns":"0"},{"stack_id":0,"thread_id":"1","elapsed_since_start_ns":"10"}],` +
		`"stacks":[[0]],"frames":[{"function":"f"}]}}`
	fallback := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name       string
		item       envelope.Item
		max        int64
		mode       sentry.Mode
		wantReason sentry.Reason
		check      func(t *testing.T, p *sentry.Profile)
	}{
		{name: "over the size limit", item: envelope.Item{Header: envelope.ItemHeader{Type: "profile"}, Payload: []byte("{}"), Size: 100},
			max: 10, wantReason: sentry.ReasonExceedSizeLimit},
		{name: "oversized while read", item: envelope.Item{Header: envelope.ItemHeader{Type: "profile"}, Oversized: true, Size: 1 << 30},
			wantReason: sentry.ReasonExceedSizeLimit},
		{name: "not JSON", item: envelope.Item{Header: envelope.ItemHeader{Type: "profile"}, Payload: []byte("{"), Size: 1},
			wantReason: sentry.ReasonInvalidJSON},
		{name: "a Perfetto chunk without meta_length", item: envelope.Item{Header: envelope.ItemHeader{Type: "profile_chunk",
			ContentType: "application/x-perfetto-trace", Raw: []byte(`{"type":"profile_chunk"}`)}, Payload: []byte("{}"), Size: 2},
			wantReason: sentry.ReasonInvalidSampledProfile},
		{name: "an Android trace that is not base64", item: envelope.Item{Header: envelope.ItemHeader{Type: "profile"},
			Payload: []byte(`{"platform":"android","sampled_profile":"*not base64*"}`), Size: 50},
			wantReason: sentry.ReasonInvalidSampledProfile},
		{name: "a V1 profile without timestamp starts when it was sent", item: envelope.Item{Header: envelope.ItemHeader{Type: "profile"},
			Payload: []byte(v1NoTimestamp), Size: int64(len(v1NoTimestamp))},
			check: func(t *testing.T, p *sentry.Profile) { assert.Equal(t, fallback, p.Timestamp) }},
		{name: "relay mode refuses what Relay refuses", mode: sentry.ModeRelay, item: envelope.Item{Header: envelope.ItemHeader{Type: "profile"},
			Payload: []byte(v1NoTimestamp), Size: int64(len(v1NoTimestamp))}, wantReason: sentry.ReasonMissingProfileMetadata},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := ItemDecoder{Mode: tt.mode, MaxSize: tt.max}
			p, _, serr := d.Decode(&tt.item, fallback)
			if tt.wantReason != "" {
				require.NotNil(t, serr)
				assert.Equal(t, tt.wantReason, serr.Reason, serr.Error())
				return
			}
			require.Nil(t, serr)
			tt.check(t, p)
		})
	}
}

// Envelope parts written by hand, so that the expectations do not come from
// the code under test.
const (
	txA = "30976f2ddbe04ac9b6bffe6e35d4710c"
	txB = "5c2a9e0f9d3b4e1e8f6a7b8c9d0e1f2a"
)

// v1Item is a V1 profile item (header and payload) naming the transactions
// ids; timestamp "" leaves it out.
func v1Item(timestamp string, ids ...string) string {
	var txs []string
	for _, id := range ids {
		txs = append(txs, fmt.Sprintf(`{"id":%q,"name":"t","trace_id":"4b25bc58f14243d8b208d1e22a054164","active_thread_id":"1","relative_start_ns":"0","relative_end_ns":"10"}`, id))
	}
	ts := ""
	if timestamp != "" {
		ts = `"timestamp":"` + timestamp + `",`
	}
	return `{"type":"profile"}` + "\n" +
		`{"version":"1","platform":"python","event_id":"41fed0925670468bb0457f61a74688ec",` + ts +
		`"transactions":[` + strings.Join(txs, ",") + `],` +
		`"device":{"architecture":"x86_64"},"os":{"name":"Linux","version":"6"},"runtime":{"name":"CPython","version":"3.11"},` +
		`"profile":{"samples":[{"stack_id":0,"thread_id":"1","elapsed_since_start_ns":"0"},{"stack_id":0,"thread_id":"1","elapsed_since_start_ns":"10"}],` +
		`"stacks":[[0]],"frames":[{"function":"f"}]}}`
}

// txItem is a transaction item with event_id id, told apart by name.
func txItem(id, name string) string {
	return `{"type":"transaction"}` + "\n" + `{"event_id":"` + id + `","transaction":"` + name + `","start_timestamp":1795000000.0,"timestamp":1795000001.0,` +
		`"contexts":{"trace":{"trace_id":"` + strings.Repeat("ab", 16) + `","span_id":"` + strings.Repeat("cd", 8) + `"}}}`
}

// chunkItem is a V2 chunk item of type itemType.
func chunkItem(itemType string) string {
	return `{"type":"` + itemType + `","platform":"python"}` + "\n" +
		`{"version":"2","chunk_id":"0432a0a4c25f4697bf9f0a2fcbe6a814","profiler_id":"071bfc9a1f8e4cb4a0a2e0bd1c5bde55",` +
		`"client_sdk":{"name":"sentry.python","version":"2.68.0"},"platform":"python",` +
		`"profile":{"samples":[{"timestamp":1795000000.000,"stack_id":0,"thread_id":"1"},{"timestamp":1795000000.010,"stack_id":0,"thread_id":"1"}],` +
		`"stacks":[[0]],"frames":[{"function":"f"}],"thread_metadata":{"1":{"name":"MainThread"}}}}`
}

// testEnvelope joins an envelope header and items into an envelope.
func testEnvelope(header string, items ...string) []byte {
	return []byte(header + "\n" + strings.Join(items, "\n") + "\n")
}

// outcomeSummary is what a test compares of one ItemOutcome.
type outcomeSummary struct {
	Kind        OutcomeKind
	Index       int
	Reason      sentry.Reason // Err's, for refused items and unreadable transactions
	Transaction string        // the name of the transaction paired with an accepted item
}

// readOutcomes parses env and summarizes what ProfileItems yields; check
// sees each accepted profile while it is still the decoder's.
func readOutcomes(t *testing.T, env []byte, d *ItemDecoder, arrival time.Time, check func(ItemOutcome)) []outcomeSummary {
	t.Helper()
	header, items, err := envelope.Parse(env, envelope.Limits{MaxItemBytes: MaxProfileItemBytes})
	require.NoError(t, err)
	var got []outcomeSummary
	for o := range d.ProfileItems(EnvelopeItems{Items: items, SentAt: header.SentAt, Arrival: arrival, TraceItems: sentrytrace.AppendItems(nil, items)}) {
		s := outcomeSummary{Kind: o.Kind, Index: o.Index}
		if o.Err != nil {
			s.Reason = o.Err.Reason
			assert.Equal(t, o.Index, o.Err.Item, "the error names its item")
		}
		if o.Decoded.Transaction != nil {
			s.Transaction = o.Decoded.Transaction.Spans[0].Name
		}
		if o.Kind == ItemAccepted {
			require.NotNil(t, o.Decoded.Profile)
			assert.Equal(t, items[o.Index].Payload, o.Decoded.Payload)
			if check != nil {
				check(o)
			}
		}
		got = append(got, s)
	}
	return got
}

// TestProfileItems: which items are profiles, the one-V1-profile rule, the
// pairing of a V1 profile with its transaction and the fallback time.
func TestProfileItems(t *testing.T) {
	arrival := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	sentAt := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	timestampOf := func(want time.Time) func(*testing.T, ItemOutcome) {
		return func(t *testing.T, o ItemOutcome) { assert.Equal(t, want, o.Decoded.Profile.Timestamp) }
	}
	tests := []struct {
		name  string
		env   []byte
		max   int64
		want  []outcomeSummary
		check func(*testing.T, ItemOutcome) // each accepted item
	}{
		{
			name: "a V1 profile gets the transaction any of its ids names",
			env:  testEnvelope(`{}`, txItem(txA, "first"), v1Item("2026-11-20T10:00:00Z", "00000000000000000000000000000001", strings.ToUpper(txB)), txItem(txB, "named")),
			want: []outcomeSummary{{Kind: ItemAccepted, Index: 1, Transaction: "named"}},
		},
		{
			name: "ids compare without dashes",
			env:  testEnvelope(`{}`, txItem(txA, "first"), txItem("5c2a9e0f-9d3b-4e1e-8f6a-7b8c9d0e1f2a", "named"), v1Item("2026-11-20T10:00:00Z", txB)),
			want: []outcomeSummary{{Kind: ItemAccepted, Index: 2, Transaction: "named"}},
		},
		{
			name: "no id matches: the first readable transaction",
			env:  testEnvelope(`{}`, `{"type":"transaction"}`+"\n{", txItem(txA, "first"), txItem(txB, "second"), v1Item("2026-11-20T10:00:00Z", "00000000000000000000000000000001")),
			want: []outcomeSummary{
				{Kind: TransactionUnreadable, Index: 0, Reason: sentry.ReasonInvalidJSON},
				{Kind: ItemAccepted, Index: 3, Transaction: "first"},
			},
		},
		{
			name: "an unreadable transaction is reported and costs only the link",
			env:  testEnvelope(`{}`, v1Item("2026-11-20T10:00:00Z", txA), `{"type":"transaction"}`+"\n"+`{"event_id":"`+txA+`","timestamp":"yesterday"}`),
			want: []outcomeSummary{
				{Kind: ItemAccepted, Index: 0},
				{Kind: TransactionUnreadable, Index: 1, Reason: sentry.ReasonInvalidJSON},
			},
		},
		{
			name: "transactions are not read without a V1 profile",
			env:  testEnvelope(`{}`, `{"type":"transaction"}`+"\n{", chunkItem(ItemTypeProfileChunk)),
			want: []outcomeSummary{{Kind: ItemAccepted, Index: 1}},
		},
		{
			name: "a second V1 profile is refused, even after an invalid first",
			env:  testEnvelope(`{}`, `{"type":"profile"}`+"\n{", v1Item("2026-11-20T10:00:00Z", txA), chunkItem(ItemTypeProfileChunk)),
			want: []outcomeSummary{
				{Kind: ItemRefused, Index: 0, Reason: sentry.ReasonInvalidJSON},
				{Kind: ItemRefused, Index: 1, Reason: sentry.ReasonTooManyProfiles},
				{Kind: ItemAccepted, Index: 2},
			},
		},
		{
			name: "chunks are not bound to a transaction",
			env:  testEnvelope(`{}`, txItem(txA, "first"), v1Item("2026-11-20T10:00:00Z", txA), chunkItem(ItemTypeProfileChunk)),
			want: []outcomeSummary{{Kind: ItemAccepted, Index: 1, Transaction: "first"}, {Kind: ItemAccepted, Index: 2}},
		},
		{
			name: "profile_chunk_ui is a profile chunk",
			env:  testEnvelope(`{}`, chunkItem(ItemTypeProfileChunkUI)),
			want: []outcomeSummary{{Kind: ItemAccepted, Index: 0}},
		},
		{
			name: "other items yield nothing",
			env:  testEnvelope(`{}`, `{"type":"event"}`+"\n{}", `{"type":"session"}`+"\n{}", `{"type":"attachment"}`+"\nbytes", chunkItem(ItemTypeProfileChunk), `{"type":"client_report"}`+"\n{}"),
			want: []outcomeSummary{{Kind: ItemAccepted, Index: 3}},
		},
		{
			name: "an item over the size limit is refused",
			env:  testEnvelope(`{}`, chunkItem(ItemTypeProfileChunk), v1Item("2026-11-20T10:00:00Z", txA)),
			max:  200,
			want: []outcomeSummary{
				{Kind: ItemRefused, Index: 0, Reason: sentry.ReasonExceedSizeLimit},
				{Kind: ItemRefused, Index: 1, Reason: sentry.ReasonExceedSizeLimit},
			},
		},
		{
			name:  "a V1 profile without timestamp starts at sent_at",
			env:   testEnvelope(`{"sent_at":"`+sentAt.Format(time.RFC3339Nano)+`"}`, v1Item("", txA)),
			want:  []outcomeSummary{{Kind: ItemAccepted, Index: 0}},
			check: timestampOf(sentAt),
		},
		{
			name:  "without sent_at, at its arrival",
			env:   testEnvelope(`{"sent_at":"not a time"}`, v1Item("", txA)),
			want:  []outcomeSummary{{Kind: ItemAccepted, Index: 0}},
			check: timestampOf(arrival),
		},
		{
			name:  "a V1 profile's own timestamp is kept",
			env:   testEnvelope(`{"sent_at":"`+sentAt.Format(time.RFC3339Nano)+`"}`, v1Item("2026-11-20T10:00:00Z", txA)),
			want:  []outcomeSummary{{Kind: ItemAccepted, Index: 0}},
			check: timestampOf(time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := ItemDecoder{MaxSize: tt.max}
			got := readOutcomes(t, tt.env, &d, arrival, func(o ItemOutcome) {
				if tt.check != nil {
					tt.check(t, o)
				}
			})
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestProfileItemsOversizedTransaction: a transaction the envelope reader
// skipped is reported as unreadable, with the size reason.
func TestProfileItemsOversizedTransaction(t *testing.T) {
	_, items, err := envelope.Parse(testEnvelope(`{}`, v1Item("2026-11-20T10:00:00Z", txA), txItem(txA, "big")), envelope.Limits{})
	require.NoError(t, err)
	items[1].Payload, items[1].Oversized = nil, true
	var d ItemDecoder
	var kinds []OutcomeKind
	for o := range d.ProfileItems(EnvelopeItems{Items: items, TraceItems: sentrytrace.AppendItems(nil, items)}) {
		kinds = append(kinds, o.Kind)
		if o.Kind == TransactionUnreadable {
			assert.Equal(t, sentry.ReasonExceedSizeLimit, o.Err.Reason)
		}
		if o.Kind == ItemAccepted {
			assert.Nil(t, o.Decoded.Transaction)
		}
	}
	assert.Equal(t, []OutcomeKind{ItemAccepted, TransactionUnreadable}, kinds)
}

// TestProfileItemsHeld: a held item is neither decoded nor counted for the
// one-V1-profile rule.
func TestProfileItemsHeld(t *testing.T) {
	_, items, err := envelope.Parse(testEnvelope(`{}`, chunkItem(ItemTypeProfileChunk), txItem(txA, "tx"),
		`{"type":"profile"}`+"\n{", v1Item("2026-11-20T10:00:00Z", txA)), envelope.Limits{})
	require.NoError(t, err)
	var d ItemDecoder
	var got []outcomeSummary
	// Only the last V1 profile is read.
	held := []bool{true, false, true, false}
	for o := range d.ProfileItems(EnvelopeItems{Items: items, TraceItems: sentrytrace.AppendItems(nil, items), Held: held}) {
		s := outcomeSummary{Kind: o.Kind, Index: o.Index}
		if o.Decoded.Transaction != nil {
			s.Transaction = o.Decoded.Transaction.Spans[0].Name
		}
		got = append(got, s)
	}
	assert.Equal(t, []outcomeSummary{{Kind: ItemAccepted, Index: 3, Transaction: "tx"}}, got)
}

// TestProfileItemsStop: the loop may stop early.
func TestProfileItemsStop(t *testing.T) {
	_, items, err := envelope.Parse(testEnvelope(`{}`, chunkItem(ItemTypeProfileChunk), chunkItem(ItemTypeProfileChunk)), envelope.Limits{})
	require.NoError(t, err)
	var d ItemDecoder
	n := 0
	for range d.ProfileItems(EnvelopeItems{Items: items}) {
		n++
		break
	}
	assert.Equal(t, 1, n)
}

// TestFallbackTime: sent_at in UTC, else the time given.
func TestFallbackTime(t *testing.T) {
	otherwise := time.Date(2026, 11, 25, 9, 0, 0, 0, time.FixedZone("CET", 3600))
	tests := []struct {
		sentAt string
		want   time.Time
	}{
		{"2026-11-24T12:00:00.123456Z", time.Date(2026, 11, 24, 12, 0, 0, 123456000, time.UTC)},
		{"2026-11-24T13:00:00+01:00", time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)},
		{"", otherwise.UTC()},
		{"1795000000", otherwise.UTC()},
	}
	for _, tt := range tests {
		t.Run(tt.sentAt, func(t *testing.T) {
			got := FallbackTime(tt.sentAt, otherwise)
			assert.True(t, tt.want.Equal(got), "got %v", got)
			assert.Equal(t, time.UTC, got.Location())
		})
	}
}

// TestProfileItemsFixtures reads every captured SDK envelope: each profile
// item is accepted, and a V1 profile gets the transaction it names.
func TestProfileItemsFixtures(t *testing.T) {
	paths := fixtures.Files(t, ".envelope")
	require.NotEmpty(t, paths)
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			env, err := os.ReadFile(path)
			require.NoError(t, err)
			_, items, err := envelope.Parse(env, envelope.Limits{MaxItemBytes: MaxProfileItemBytes})
			require.NoError(t, err)
			profiles := 0
			for i := range items {
				if IsProfileItem(items[i].Header.Type) {
					profiles++
				}
			}
			d := ItemDecoder{MaxSize: MaxProfileItemBytes}
			accepted := 0
			for o := range d.ProfileItems(EnvelopeItems{Items: items, Arrival: time.Now(), TraceItems: sentrytrace.AppendItems(nil, items)}) {
				require.Equal(t, ItemAccepted, o.Kind, "item %d: %v", o.Index, o.Err)
				accepted++
				p := o.Decoded.Profile
				if p.Version == sentry.VersionV2 {
					assert.Nil(t, o.Decoded.Transaction, "a chunk has no transaction")
					continue
				}
				require.NotNil(t, o.Decoded.Transaction, "the envelope carries the V1 profile's transaction")
				require.NotEmpty(t, p.Transactions)
				assert.Equal(t, sentryid.Normalize(p.Transactions[0].ID), sentryid.Normalize(o.Decoded.Transaction.EventID))
			}
			assert.Equal(t, profiles, accepted)
		})
	}
}
