package sentrysignal

import "encoding/json"

// Container reads the {"items": [...]} payload of log, trace_metric and
// span items, leaving each entry undecoded so that one bad entry costs
// only itself. It fails when the payload is over the size limit, is not
// such an object, or holds more than Options.MaxItems entries.
func Container(item string, payload []byte, opts Options) ([]json.RawMessage, error) {
	if err := opts.CheckSize(item, payload); err != nil {
		return nil, err
	}
	var c struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(payload, &c); err != nil {
		return nil, PayloadError(item, "items", "not an items container", err)
	}
	if limit := opts.WithDefaults().MaxItems; len(c.Items) > limit {
		return nil, PayloadError(item, "items", itoa(len(c.Items))+" entries exceed the limit of "+itoa(limit), nil)
	}
	return c.Items, nil
}

// Object decodes one container entry into its members.
func Object(raw json.RawMessage) (map[string]any, error) {
	x, err := DecodeAny(raw)
	if err != nil {
		return nil, err
	}
	obj, ok := x.(map[string]any)
	if !ok {
		return nil, errNotObject
	}
	return obj, nil
}

var errNotObject = jsonError("not a JSON object")

type jsonError string

func (e jsonError) Error() string { return string(e) }
