package complexityguard

// eventperfRows are the error event written from its payload read once
// (sentrysignal.Payload, sentryevent.Logs) along the dimensions that
// writer adds: members a map holds as one (a repeated key: the last one
// wins), members sorted into the JSON text of a value past the depth
// limit, and members of one frame, which the stack trace text looks up.
func eventperfRows() []row {
	env := func(payload func(n int) string) func(n int) []byte {
		return func(n int) []byte { return envelope(item("event", eventWith(payload(n)))) }
	}
	fuzz := []string{"translator/sentryevent.FuzzPayloadMatchesTree", "translator/sentryevent.FuzzAppendLogs"}
	return []row{
		{
			name: "event_repeated_members", itemType: "event", dimension: "top-level members repeating one key", n: 2000, clock: ProcessClock,
			fuzz:  fuzz,
			build: httpRow("envelope", env(func(n int) string { return repeat(n, ",", `"extra":{"k":%d}`) })),
		},
		{
			name: "event_wide_past_depth", itemType: "event", dimension: "members of an object written as JSON text past the depth limit", n: 2000, clock: ProcessClock,
			fuzz: fuzz,
			build: httpRow("envelope", env(func(n int) string {
				return `"extra":{"a":{"b":{"c":{"d":{"e":{"f":{"g":{"h":{` + repeat(n, ",", `"k%d":"<v%d>"`) + `}}}}}}}}}`
			})),
		},
		{
			name: "event_frame_members", itemType: "event", dimension: "members of one stack frame", n: 2000, clock: ProcessClock,
			fuzz: fuzz,
			build: httpRow("envelope", env(func(n int) string {
				return `"exception":{"values":[{"type":"E","stacktrace":{"frames":[{` + repeat(n, ",", `"m%d":%d`) + `,"function":"f","lineno":1}]}}]}`
			})),
		},
	}
}
