package sentrysignal

import (
	"bytes"
	"errors"
)

// Container reads the {"items": [...]} payload of log and trace_metric
// items in one pass (see DecodeAny); an entry's "attributes" object is a
// *TypedAttributes (see Limiter.PutTypedAttrs). Entries are left to the caller, so
// that one entry of a wrong shape costs only itself; JSON that does not
// parse costs the item. It fails when the payload is over the size limit,
// is not such an object, or holds more than Options.MaxItems entries.
func Container(item string, payload []byte, opts Options) ([]any, error) {
	if err := opts.CheckSize(item, payload); err != nil {
		return nil, err
	}
	x, err := decodeContainer(payload)
	if err != nil {
		return nil, PayloadError(item, "", "not JSON", err)
	}
	doc, _ := x.(map[string]any)
	items, ok := doc["items"].([]any)
	if !ok {
		return nil, PayloadError(item, "items", "not an items container", nil)
	}
	if limit := opts.WithDefaults().MaxItems; len(items) > limit {
		return nil, PayloadError(item, "items", itoa(len(items))+" entries exceed the limit of "+itoa(limit), nil)
	}
	return items, nil
}

// decodeContainer is DecodeAny with the entries' typed attributes read as
// *TypedAttributes; it accepts and refuses what DecodeAny does.
func decodeContainer(raw []byte) (any, error) {
	p := jsonParser{data: raw}
	var x any
	var err error
	if p.at('{') {
		x, err = p.objectWith(p.containerMember, false)
	} else {
		x, err = p.value()
	}
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(raw[p.pos:])) != 0 {
		return nil, errors.New("trailing data after the JSON value")
	}
	return x, nil
}
