package sentrysignal

// Container reads the {"items": [...]} payload of log and trace_metric
// items in one pass (see DecodeAny). Entries are left to the caller, so
// that one entry of a wrong shape costs only itself; JSON that does not
// parse costs the item. It fails when the payload is over the size limit,
// is not such an object, or holds more than Options.MaxItems entries.
func Container(item string, payload []byte, opts Options) ([]any, error) {
	if err := opts.CheckSize(item, payload); err != nil {
		return nil, err
	}
	x, err := DecodeAny(payload)
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
