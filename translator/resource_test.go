package translator

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/sentryprofile/otelcol-sentryprofile/internal/fixtures"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/envelope"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/itemrules"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/profilesin"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrytrace"
	"github.com/sentryprofile/otelcol-sentryprofile/translator/traceitems"
)

// TestEnvelopeResourceIsShared reads envelopes that hold a profile and a
// transaction or span container as the receiver does (profiles through
// itemrules.ItemDecoder.ProfileItems and the builder, then the traces with the
// builder's resource) and checks that every profile and every span of one
// envelope carries the same resource, with what each payload alone knows.
func TestEnvelopeResourceIsShared(t *testing.T) {
	v1 := sharedEnvelopeItems(t, "sentry-python-2.68.0__captured_http__v1_profile_with_transaction_1.envelope")
	chunk := sharedEnvelopeItems(t, "sentry-python-2.68.0__captured_http__v2_profile_chunk_1.envelope")
	var pythonTx envelope.Item
	for _, it := range v1 {
		if it.Header.Type == sentrytrace.ItemTypeTransaction {
			pythonTx = it
		}
	}
	require.NotEmpty(t, pythonTx.Payload)
	nodeChunk := testdataItem(t, "v2_node_duplicate_frames.json", itemrules.ItemTypeProfileChunk)
	nodeSpans := testdataItem(t, filepath.Join("traces", "spans_v2.json"), sentrytrace.ItemTypeSpan)
	nodeTx := testdataItem(t, filepath.Join("traces", "transaction_static.json"), sentrytrace.ItemTypeTransaction)

	tests := []struct {
		name  string
		items []envelope.Item
		want  map[string]any // keys only one of the payloads has
	}{
		{
			name:  "V1 profile and its transaction (sentry-python, captured)",
			items: v1,
			want: map[string]any{
				"telemetry.sdk.name": "sentry.python.flask", // the transaction's sdk
				"os.name":            "Linux",               // the profile's os
				"host.arch":          "x86_64",              // the profile's device
				"service.version":    "anchors-capture@1.0.0",
				"sentry.project.id":  "42",
			},
		},
		{
			name:  "V2 chunk and a transaction (sentry-python)",
			items: append(append([]envelope.Item(nil), chunk...), pythonTx),
			want: map[string]any{
				"telemetry.sdk.name":      "sentry.python.flask",
				"process.runtime.name":    "CPython", // the transaction's contexts.runtime
				"process.runtime.version": "3.11.7",
			},
		},
		{
			name:  "transaction, V2 chunk and span container (node)",
			items: []envelope.Item{nodeTx, nodeChunk, nodeSpans},
			want: map[string]any{
				"sentry.platform":      "node",
				"process.runtime.name": "node", // the transaction's contexts.runtime
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var dec itemrules.ItemDecoder
			b := profilesin.NewProfilesBuilder(profilesin.ReceiveOptions{ProjectID: "42"})
			for o := range dec.ProfileItems(itemrules.EnvelopeItems{Items: tt.items, Arrival: time.Now(), TraceItems: sentrytrace.AppendItems(nil, tt.items)}) {
				require.Equal(t, itemrules.ItemAccepted, o.Kind, "item %d: %v", o.Index, o.Err)
				b.Add(o.Decoded)
			}
			pd := b.Profiles()
			require.Positive(t, pd.ResourceProfiles().Len())
			resource := b.Resource()
			td := ptrace.NewTraces()
			for _, it := range tt.items {
				var seg *sentrytrace.Segment
				var err error
				switch it.Header.Type {
				case sentrytrace.ItemTypeTransaction:
					seg, err = sentrytrace.DecodeTransaction(it.Payload)
				case sentrytrace.ItemTypeSpan:
					seg, err = sentrytrace.DecodeSpans(it.Payload)
				default:
					continue
				}
				require.NoError(t, err)
				traceitems.AppendTraces(td, seg, traceitems.TraceOptions{ProjectID: "42", Resource: &resource})
			}
			require.Positive(t, td.ResourceSpans().Len())

			want := pd.ResourceProfiles().At(0).Resource().Attributes().AsRaw()
			for k, v := range tt.want {
				assert.Equal(t, v, want[k], k)
			}
			for i, rp := range pd.ResourceProfiles().All() {
				assert.Equal(t, want, rp.Resource().Attributes().AsRaw(), "profile %d", i)
			}
			for i, rs := range td.ResourceSpans().All() {
				assert.Equal(t, want, rs.Resource().Attributes().AsRaw(), "segment %d", i)
			}
		})
	}
}

// sharedEnvelopeItems parses a shared fixture envelope.
func sharedEnvelopeItems(t *testing.T, name string) []envelope.Item {
	t.Helper()
	_, items, err := envelope.Parse(fixtures.Read(t, name), envelope.Limits{})
	require.NoError(t, err)
	return items
}

// testdataItem is a payload of testdata as an envelope item of typ.
func testdataItem(t *testing.T, name, typ string) envelope.Item {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return envelope.Item{Header: envelope.ItemHeader{Type: typ, Length: -1}, Payload: data, Size: int64(len(data))}
}
