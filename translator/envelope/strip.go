package envelope

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Strip returns the envelope without the items whose type drop reports,
// every other byte as it was: the header line, and each kept item's header
// line, payload and separators. It reports how many items it removed; with
// none, data itself comes back.
func Strip(data []byte, drop func(itemType string) bool) ([]byte, int, error) {
	header, rest, ok := bytes.Cut(data, []byte("\n"))
	if !ok {
		return data, 0, nil // header only
	}
	out := make([]byte, 0, len(data))
	out = append(out, header...)
	out = append(out, '\n')
	removed := 0
	for index := 0; len(rest) > 0; {
		// Blank lines between items are kept as they were.
		if isLineBreak(rest[0]) {
			out = append(out, rest[0])
			rest = rest[1:]
			continue
		}
		itemType, end, err := itemExtent(rest, index)
		if err != nil {
			return nil, 0, err
		}
		if drop(itemType) {
			removed++
		} else {
			out = append(out, rest[:end]...)
		}
		rest = rest[end:]
		index++
	}
	if removed == 0 {
		return data, 0, nil
	}
	return out, removed, nil
}

func isLineBreak(b byte) bool { return b == '\n' || b == '\r' }

// itemExtent reads the header of the item rest starts with, and returns
// its type and its whole extent: header line, newline, payload, and the
// newline that ends the payload when there is one.
func itemExtent(rest []byte, index int) (string, int, error) {
	line, after, _ := bytes.Cut(rest, []byte("\n"))
	var h struct {
		Type   string `json:"type"`
		Length *int64 `json:"length"`
	}
	if err := json.Unmarshal(line, &h); err != nil {
		return "", 0, fmt.Errorf("item %d header: %w", index, err)
	}
	headerLen := len(line) + 1
	if h.Length == nil {
		return h.Type, min(headerLen+delimitedLen(after), len(rest)), nil
	}
	if *h.Length < 0 || *h.Length > int64(len(after)) {
		return "", 0, fmt.Errorf("item %d: length %d, %d bytes left", index, *h.Length, len(after))
	}
	end := headerLen + int(*h.Length)
	if end < len(rest) && rest[end] == '\n' {
		end++
	}
	return h.Type, min(end, len(rest)), nil
}

// delimitedLen is the extent of a payload without a length: up to and with
// the next newline.
func delimitedLen(after []byte) int {
	payload, _, found := bytes.Cut(after, []byte("\n"))
	if found {
		return len(payload) + 1
	}
	return len(payload)
}
