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
	for index := 0; len(rest) > 0; index++ {
		// Blank lines between items are kept as they were.
		if rest[0] == '\n' || rest[0] == '\r' {
			out = append(out, rest[0])
			rest = rest[1:]
			index--
			continue
		}
		line, after, _ := bytes.Cut(rest, []byte("\n"))
		var h struct {
			Type   string `json:"type"`
			Length *int64 `json:"length"`
		}
		if err := json.Unmarshal(line, &h); err != nil {
			return nil, 0, fmt.Errorf("item %d header: %w", index, err)
		}
		// The item's whole extent: header line, newline, payload, and the
		// newline that ends the payload when there is one.
		var end int
		headerLen := len(line) + 1
		if h.Length != nil {
			if *h.Length < 0 || *h.Length > int64(len(after)) {
				return nil, 0, fmt.Errorf("item %d: length %d, %d bytes left", index, *h.Length, len(after))
			}
			end = headerLen + int(*h.Length)
			if end < len(rest) && rest[end] == '\n' {
				end++
			}
		} else {
			payload, _, found := bytes.Cut(after, []byte("\n"))
			end = headerLen + len(payload)
			if found {
				end++
			}
		}
		end = min(end, len(rest))
		if drop(h.Type) {
			removed++
		} else {
			out = append(out, rest[:end]...)
		}
		rest = rest[end:]
	}
	if removed == 0 {
		return data, 0, nil
	}
	return out, removed, nil
}
