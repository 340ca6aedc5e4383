package loadreport

import (
	"context"
	"fmt"
	"html"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/loadgen"
)

// TestSeriesAnswers: a series' count is its answers, ok and error answers
// alike (the latencies are of them), and the text report, the JSON and
// the HTML page agree on it and head it "answers"; the methods' series add
// up to the headline's ok + error answers, not to its ok.
func TestSeriesAnswers(t *testing.T) {
	t.Parallel()
	url := refURL(t)
	rep, err := loadgen.Run(context.Background(), loadgen.Target{URL: url}, calls(t, `tools/call echo {"message":"x"}`, `tools/call nope {}`), loadgen.WithRequests(20))
	if err != nil {
		t.Fatal(err)
	}
	nope := rep.Find("tools/call nope")
	method := rep.Find("tools/call")
	if nope == nil || method == nil || rep.OK == 0 || rep.ErrorAnswers == 0 || nope.Count != rep.ErrorAnswers || method.Count != rep.OK+rep.ErrorAnswers || method.Count != rep.Answered {
		t.Fatalf("%d ok, %d error answers; series %+v", rep.OK, rep.ErrorAnswers, rep.Series)
	}
	var text strings.Builder
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	var page strings.Builder
	if err := WriteHTML(&page, "t", Run{Name: "r", Report: rep}); err != nil {
		t.Fatal(err)
	}
	row := fmt.Sprintf(`<td class="l">%s</td><td>%d</td>`, html.EscapeString("tools/call nope"), nope.Count)
	if !strings.Contains(text.String(), "answers  rate/s") || !strings.Contains(page.String(), "<th>answers</th><th>rate/s</th>") || !strings.Contains(page.String(), row) {
		t.Errorf("the series' answers are not headed so, or disagree:\n%s", text.String())
	}
}
