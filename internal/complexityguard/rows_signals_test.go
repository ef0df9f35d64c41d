package complexityguard

import (
	"fmt"
	"strings"
)

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
		{
			name: "log_attribute_shapes", itemType: "log", dimension: "attributes of entries whose shapes share all keys but the last", n: 128,
			fuzz: []string{"translator/sentrysignal.FuzzContainer"},
			build: httpRow("envelope", env("log", func(n int) string {
				// six shapes in turn, more than are remembered: each entry
				// recalls a shape by its first keys and loses it at the last
				shared := repeat(n, ",", `"attr_%d":{"value":"v%d","type":"string"}`)
				entries := make([]string, 12)
				for i := range entries {
					entries[i] = `{"timestamp":` + nowSeconds + `,"level":"info","body":"b","attributes":{` + shared +
						fmt.Sprintf(`,"last_%d":{"value":"x","type":"string"}`, i%6) + `}}`
				}
				return `{"items":[` + strings.Join(entries, ",") + `]}`
			})),
		},
		{
			name: "trace_metric_attribute_prefixes", itemType: "trace_metric", dimension: "attributes of metrics whose shapes share all but the last, written as copies", n: 12,
			fuzz: []string{"translator/sentrymetric.FuzzRecalledAttributesAsAlone", "translator/sentrysignal.FuzzContainer"},
			build: httpRow("envelope", env("trace_metric", func(n int) string {
				// three shapes in turn, each sharing the n attributes before
				// its last: every entry's text is compared with each
				// remembered shape's, recalled as the longest, and written as
				// a copy when its shape comes back. 8n stays under the
				// attributes written key by key (128; more take the bulk
				// path) and the 1,000 a point keeps (past them an entry is
				// written, not copied)
				shared := repeat(n, ",", `"attr_%d":{"value":"v%d","type":"string"}`)
				entries := make([]string, 24)
				for i := range entries {
					entries[i] = `{"timestamp":` + nowSeconds + `,"name":"m","type":"counter","value":1,"attributes":{` + shared +
						fmt.Sprintf(`,"last_%d":{"value":"x","type":"string"}`, i%3) + `}}`
				}
				return `{"items":[` + strings.Join(entries, ",") + `]}`
			})),
		},
	}
}
