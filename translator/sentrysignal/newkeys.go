package sentrysignal

import (
	"encoding/binary"
	"fmt"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

// minBulkKeys is the number of keys from which an empty map is built by
// appendKeys rather than by PutEmpty: below it the scans are cheaper
// than the decoding (measured: 100 keys cost about the same either way,
// 1 000 keys 6 ms by PutEmpty and 0.1 ms by appendKeys).
const minBulkKeys = 128

// appendKeys adds keys, which must be distinct, to the empty map m in
// their order, with empty values, in time linear in their total length.
//
// pcommon.Map has no insertion without its key scan (PutEmpty costs the
// map's length, so n keys cost n²/2 comparisons), but pdata's protobuf
// decoding appends a record's attributes as they come. So the keys are
// written as the attributes of one log record, decoded, and moved into m.
func appendKeys(m pcommon.Map, keys []string) error {
	if m.Len() != 0 {
		return fmt.Errorf("appendKeys into a map of %d entries", m.Len())
	}
	// LogsData.resource_logs (1) → ResourceLogs.scope_logs (2) →
	// ScopeLogs.log_records (2) → LogRecord.attributes (6) → KeyValue.key (1)
	recordLen := 0
	for _, k := range keys {
		recordLen += fieldLen(fieldLen(len(k)))
	}
	scopeLen := fieldLen(recordLen)
	resourceLen := fieldLen(scopeLen)
	buf := make([]byte, 0, fieldLen(resourceLen))
	buf = appendLenField(buf, 1, resourceLen)
	buf = appendLenField(buf, 2, scopeLen)
	buf = appendLenField(buf, 2, recordLen)
	for _, k := range keys {
		buf = appendLenField(buf, 6, fieldLen(len(k)))
		buf = appendLenField(buf, 1, len(k))
		buf = append(buf, k...)
	}
	logs, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(buf)
	if err != nil {
		return err
	}
	attrs := logs.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Attributes()
	if attrs.Len() != len(keys) {
		return fmt.Errorf("appendKeys: %d keys decoded of %d", attrs.Len(), len(keys))
	}
	attrs.MoveTo(m)
	return nil
}

// fieldLen is the encoded size of a length-delimited protobuf field of n
// bytes with a one-byte tag.
func fieldLen(n int) int { return 1 + uvarintLen(n) + n }

func uvarintLen(n int) int {
	size := 1
	for ; n >= 0x80; n >>= 7 {
		size++
	}
	return size
}

// appendLenField writes the tag and length of a length-delimited field.
func appendLenField(buf []byte, field byte, n int) []byte {
	buf = append(buf, field<<3|2)
	return binary.AppendUvarint(buf, uint64(n))
}

// distinctKeys lists the keys Entries puts, in order of first
// appearance, with the index of each one's last occurrence and the number
// m does not hold yet; the keys past MaxMapEntries are dropped.
func (l *Limiter) distinctKeys(m pcommon.Map, keys []string) (distinct []string, last map[string]int, added int) {
	last = make(map[string]int, min(len(keys), l.opts.MaxMapEntries))
	for i, k := range keys {
		if _, seen := last[k]; !seen {
			// once full, a key is dropped without a look-up, as by Put
			if m.Len()+added >= l.opts.MaxMapEntries {
				l.drop(1)
				continue
			}
			if _, held := m.Get(k); !held { // at most MaxMapEntries comparisons
				added++
			}
			distinct = append(distinct, k)
		}
		last[k] = i
	}
	return distinct, last, added
}

// Entries puts keys (which may repeat) into m and returns, for each, the
// value to write: in order of first appearance, at most MaxMapEntries
// distinct keys are put, the others dropped and counted. A repeated key
// gets its value at its last occurrence only (the later one wins, as
// with PutEmpty); kept[i] is false for the earlier ones and for dropped
// keys, which a caller that checks every value writes to a scratch
// value. m must not gain entries while the values are written. Into an
// empty map of many keys the cost is linear (see appendKeys); otherwise
// each new key costs a scan of m, as Put.
func (l *Limiter) Entries(m pcommon.Map, keys []string) (values []pcommon.Value, kept []bool) {
	values, kept = make([]pcommon.Value, len(keys)), make([]bool, len(keys))
	distinct, last, added := l.distinctKeys(m, keys)
	if m.Len() == 0 && len(distinct) >= minBulkKeys && appendKeys(m, distinct) == nil {
		i := 0
		for _, v := range m.All() {
			at := last[distinct[i]]
			values[at], kept[at] = v, true
			i++
		}
		return values, kept
	}
	// no append may move the values handed out before it
	m.EnsureCapacity(m.Len() + added)
	for _, k := range distinct {
		at := last[k]
		values[at], kept[at] = m.PutEmpty(k), true
	}
	return values, kept
}
