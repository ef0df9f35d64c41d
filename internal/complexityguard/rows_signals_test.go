package complexityguard

// signalsRows are the signal containers along the dimensions the streaming
// container scanner (sentrysignal.ScanContainer) adds: series a container
// starts, and "items" members it repeats (each one drops the entries read
// before it).
func signalsRows() []row {
	env := func(itemType string, payload func(n int) string) func(n int) []byte {
		return func(n int) []byte { return envelope(item(itemType, payload(n))) }
	}
	return []row{
		{
			name: "trace_metric_series", itemType: "trace_metric", dimension: "series (distinct names) in one container", n: 1000,
			build: httpRow("envelope", env("trace_metric", func(n int) string {
				return `{"items":[` + repeat(n, ",", `{"timestamp":`+nowSeconds+`,"name":"m_%d","type":"gauge","value":%d}`) + `]}`
			})),
		},
		{
			name: "log_items_repeated", itemType: "log", dimension: `"items" members of one container`, n: 500,
			build: httpRow("envelope", env("log", func(n int) string {
				return `{` + repeat(n, ",", `"items":[{"timestamp":`+nowSeconds+`,"body":"line %d","level":"info","severity_number":%d}]`) + `}`
			})),
		},
	}
}
