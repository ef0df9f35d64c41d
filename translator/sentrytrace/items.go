package sentrytrace

import (
	"errors"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/envelope"
)

// The envelope item types this package reads. Each translator owns the
// type of the item it decodes (sentrylog.ItemType, sentryevent.ItemType…);
// the router and the profile item rules name these.
const (
	ItemTypeTransaction = "transaction" // a transaction event
	ItemTypeSpan        = "span"        // a span streaming container (span v2)
)

// ErrOversized is the Err of a trace item the envelope reader did not read
// for its size.
var ErrOversized = errors.New("trace item over its size limit: not read")

// Item is one transaction or span item of an envelope, decoded (Segment)
// or not (Err): the one value the span index, the traces signal and the
// profile item rules all read.
type Item struct {
	Index   int // the item's place in the envelope, from 0
	Segment *Segment
	Err     error
}

// DecoderOf is the decoder of a trace item type: DecodeTransaction or
// DecodeSpans; nil for any other type.
func DecoderOf(itemType string) func([]byte) (*Segment, error) {
	switch itemType {
	case ItemTypeTransaction:
		return DecodeTransaction
	case ItemTypeSpan:
		return DecodeSpans
	}
	return nil
}

// AppendItems decodes the transaction and span items of an envelope, once
// each, and appends them to dst in envelope order. An oversized item is
// ErrOversized; the other items are skipped.
func AppendItems(dst []Item, items []envelope.Item) []Item {
	for i := range items {
		item := &items[i]
		decode := DecoderOf(item.Header.Type)
		switch {
		case decode == nil:
		case item.Oversized:
			dst = append(dst, Item{Index: i, Err: ErrOversized})
		default:
			seg, err := decode(item.Payload)
			dst = append(dst, Item{Index: i, Segment: seg, Err: err})
		}
	}
	return dst
}
