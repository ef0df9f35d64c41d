package sentrytrace

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/envelope"
)

func TestAppendItems(t *testing.T) {
	const tx = `{"contexts":{"trace":{"trace_id":"0af7651916cd43dd8448eb211c80319c","span_id":"a1b2c3d4e5f60718"}},"start_timestamp":1,"timestamp":2}`
	const spans = `{"version":2,"items":[{"trace_id":"0af7651916cd43dd8448eb211c80319c","span_id":"b1b2c3d4e5f60718","start_timestamp":1,"end_timestamp":2}]}`
	item := func(typ, payload string, oversized bool) envelope.Item {
		return envelope.Item{Header: envelope.ItemHeader{Type: typ}, Payload: []byte(payload), Size: int64(len(payload)), Oversized: oversized}
	}
	items := []envelope.Item{
		item("profile", `{}`, false),
		item(ItemTypeTransaction, tx, false),
		item("event", `{}`, false),
		item(ItemTypeSpan, spans, false),
		item(ItemTypeTransaction, "", true),
		item(ItemTypeSpan, `{"items":[{}]}`, false),
	}
	prior := []Item{{Index: 99}}
	got := AppendItems(prior, items)
	require.Len(t, got, 5, "the prior item, then one per trace item")
	assert.Equal(t, 99, got[0].Index)

	tests := []struct {
		index   int
		spanID  string
		wantErr error
	}{
		{index: 1, spanID: "a1b2c3d4e5f60718"},
		{index: 3, spanID: "b1b2c3d4e5f60718"},
		{index: 4, wantErr: ErrOversized},
		{index: 5},
	}
	for k, tt := range tests {
		d := got[k+1]
		assert.Equal(t, tt.index, d.Index)
		switch {
		case tt.wantErr != nil:
			require.ErrorIs(t, d.Err, tt.wantErr)
			assert.Nil(t, d.Segment)
		case tt.spanID == "":
			assert.ErrorContains(t, d.Err, "trace_id and span_id are required", "item %d", tt.index)
		default:
			require.NoError(t, d.Err)
			assert.Equal(t, tt.spanID, d.Segment.Spans[0].SpanID)
		}
	}
}

func TestDecoderOf(t *testing.T) {
	assert.NotNil(t, DecoderOf(ItemTypeTransaction))
	assert.NotNil(t, DecoderOf(ItemTypeSpan))
	assert.Nil(t, DecoderOf("profile"))
	assert.Nil(t, DecoderOf(""))
}
