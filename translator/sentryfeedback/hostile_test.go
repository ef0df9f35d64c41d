package sentryfeedback

import (
	"encoding/json"
	"fmt"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"
)

// TestHostileUserReport: a user report with 20 000 unknown members keeps
// 1 000 attributes and counts the rest. Before: quadratic, ~3 s.
func TestHostileUserReport(t *testing.T) {
	const n = 20_000
	doc := map[string]any{"event_id": "c0ffee00c0ffee00c0ffee00c0ffee00", "comments": "c"}
	for i := 0; i < n; i++ {
		doc[fmt.Sprintf("x%06d", i)] = i
	}
	payload, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	dst := plog.NewLogRecordSlice()
	if got, err := AppendUserReport(payload, sentrysignal.Options{}, dst); got != 1 || err != nil {
		t.Fatalf("appended %d, %v", got, err)
	}
	lr := dst.At(0)
	if lr.Attributes().Len() != 1000 || lr.DroppedAttributesCount() != n+1-1000 {
		t.Errorf("%d kept, %d dropped; want 1000, %d", lr.Attributes().Len(), lr.DroppedAttributesCount(), n+1-1000)
	}
	if _, ok := lr.Attributes().Get(AttrAssociatedEventID); !ok {
		t.Error("the report's event id was dropped")
	}
}
