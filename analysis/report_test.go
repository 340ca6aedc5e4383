package analysis

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/browsertest"
	"github.com/mcptape/mcptape/tape"
)

// reportTape is a hand-made tape with two sessions, concurrent requests,
// errors, a tool error, an unanswered request and violations.
func reportTape() []step {
	var steps []step
	steps = append(steps, diffRecorded()...)
	steps = append(steps, inSession("2", append(diffBroken()[:4],
		c2s(30*tick, `{"jsonrpc":"2.0","id":"r4","method":"tools/call","params":{"name":"<script>alert(1)</script>","arguments":{}}}`),
		c2s(31*tick, `{"jsonrpc":"2.0","id":"r5","method":"tools/call","params":{"name":"echo","arguments":{"message":"x"}}}`),
		s2c(35*tick, `{"jsonrpc":"2.0","id":"r5","result":{"content":[{"type":"text","text":"no"}],"isError":true}}`),
		s2c(36*tick, `{"jsonrpc":"2.0","id":"r4","error":{"code":-32602,"message":"Unknown tool: <script>"}}`),
		s2c(37*tick, `{"jsonrpc":"2.0","id":"zz","result":{}}`),
		c2s(40*tick, `{"jsonrpc":"2.0","id":"r6","method":"tools/call","params":{"name":"sleep","arguments":{"ms":100000}}}`),
		c2s(41*tick, `{"jsonrpc":"2.0","id":7,"method":"notifications/initialized"}`),
		c2s(45*tick, `{"jsonrpc":"2.0","id":"r7","method":"resources/read","params":{"uri":"file:///a"}}`),
		s2c(300*tick, `{"jsonrpc":"2.0","id":"r7","result":{"contents":[]}}`),
	)...)...)
	return steps
}

// writeReport writes the HTML report of the tape at path.
func writeReport(t *testing.T, path, title string) ([]byte, *Report) {
	t.Helper()
	var buf bytes.Buffer
	rep, err := WriteHTMLReport(context.Background(), path, &buf, WithTitle(title))
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), rep
}

// externalRef finds attributes or CSS that would make a browser fetch
// something.
var externalRef = regexp.MustCompile(`(?i)(src|href|xlink:href|action|srcset)\s*=\s*["']?\s*(https?:|//)|url\(|@import|<script|<link|<iframe|<img`)

func TestReportHTML(t *testing.T) {
	hand := fixtureTape(t, "report/hand-made.jsonl.zst", reportTape())
	tests := []struct {
		name    string
		path    string
		contain []string
	}{
		{name: "hand-made", path: hand, contain: []string{
			"&lt;script&gt;alert(1)&lt;/script&gt;", "Unknown tool: &lt;script&gt;", "response-unknown-id",
			"notification-with-id", "never answered", "<svg", "Latency by tool", "-32602",
		}},
		{name: "refserver-http", path: refServerFixture(t), contain: []string{
			"mcptape-analysis-test", "tools/call", "sleep", "echo", "<svg",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _ := writeReport(t, tt.path, tt.name)
			golden(t, "report/"+tt.name+".html", out)
			s := string(out)
			for _, c := range tt.contain {
				if !strings.Contains(s, c) {
					t.Errorf("report lacks %q", c)
				}
			}
			if m := externalRef.FindString(s); m != "" {
				t.Errorf("report refers to something outside itself: %q", m)
			}
			if strings.Contains(s, "<script>") {
				t.Error("unescaped script tag")
			}
		})
	}
}

// TestReportRendersInChromium renders reports in headless Chromium and
// checks that the screenshot is not blank: it decodes and holds many
// colours (text, table rules, chart bars), with ink spread over the page.
func TestReportRendersInChromium(t *testing.T) {
	dir := t.TempDir()
	hand := filepath.Join(dir, "hand.jsonl.zst")
	writeTape(t, hand, reportTape())
	for _, tc := range []struct{ name, path string }{{"hand-made", hand}, {"refserver-http", refServerFixture(t)}} {
		t.Run(tc.name, func(t *testing.T) {
			out, _ := writeReport(t, tc.path, tc.name)
			page := filepath.Join(dir, tc.name+".html")
			if err := os.WriteFile(page, out, 0o600); err != nil {
				t.Fatal(err)
			}
			img := browsertest.Screenshot(t, page, tc.name, 1280, 2000)
			b := img.Bounds()
			colours := map[uint32]bool{}
			rowsInked := 0
			for y := b.Min.Y; y < b.Max.Y; y += 2 {
				inked := false
				for x := b.Min.X; x < b.Max.X; x += 2 {
					r, g, bl, _ := img.At(x, y).RGBA()
					colours[(r>>11)<<10|(g>>11)<<5|bl>>11] = true
					if r < 0xc000 || g < 0xc000 || bl < 0xc000 {
						inked = true
					}
				}
				if inked {
					rowsInked++
				}
			}
			if len(colours) < 40 {
				t.Errorf("screenshot has %d distinct colours: blank or broken page", len(colours))
			}
			if rowsInked < 200 {
				t.Errorf("only %d pixel rows hold anything dark: blank page", rowsInked*2)
			}
		})
	}
}

// TestTimelineFirstOperations: the timeline draws the first operations of
// the tape by start, whatever order they end in (operations come from the
// Inspector as they end), in start order, with a lane per session in the
// order of its first operation, and counts the others as omitted.
func TestTimelineFirstOperations(t *testing.T) {
	c := newChartData(1, 3)
	for _, op := range []Operation{ // in the order they end
		{Session: "b", Seq: 5, StartNS: 51, LatencyNS: 1, Answered: true, Outcome: OutcomeOK},
		{Session: "a", Seq: 9, StartNS: 91, Outcome: OutcomeCutByShutdown},
		{Session: "b", Seq: 2, StartNS: 21, LatencyNS: 90, Answered: true, Outcome: OutcomeError},
		{Session: "a", Seq: 7, StartNS: 71, LatencyNS: 1, Answered: true, Outcome: OutcomeOK},
		{Session: "a", Seq: 3, StartNS: 31, Outcome: OutcomeBrokenOff},
	} {
		c.last = max(c.last, op.StartNS+op.LatencyNS-c.clock.origin)
		c.operation(&op)
	}
	c.finish()
	var got []string
	for _, sp := range c.spans {
		got = append(got, fmt.Sprintf("%s:%d-%d:%s", c.sessions[sp.session], sp.start, sp.end, sp.outcome))
	}
	want := []string{"b:20-110:error", "a:30-110:broken_off", "b:50-51:ok"}
	if !slices.Equal(got, want) || c.omitted != 2 || !slices.Equal(c.sessions, []string{"b", "a"}) {
		t.Errorf("spans %q, omitted %d, lanes %q; want %q, 2, [b a]", got, c.omitted, c.sessions, want)
	}
}

// TestReportSessionRefusedBrokenOff: the sessions table counts a
// session's requests refused with an HTTP error and those whose response
// the server broke off, apart from the unanswered ones, in columns shown
// only when some session has any, as inspect's JSON gives those counts
// only when not zero.
func TestReportSessionRefusedBrokenOff(t *testing.T) {
	cell := regexp.MustCompile(`<td[^>]*>([^<]*)</td>`)
	const call = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow"}}`
	const list = `{"jsonrpc":"2.0","id":8,"method":"tools/list"}`
	end := func(x uint64, at time.Duration, fields string) step {
		return onExchange(x, evt(at, tape.EventHTTP, `{"phase":"end","method":"POST","path":"/mcp","conn":1,`+fields+`}`))
	}
	broken := []step{onExchange(3, c2s(5*ms, call)), end(3, 9*ms, `"status":200,"closed_by":"server","error":"unexpected EOF"`)}
	refused := []step{onExchange(4, c2s(6*ms, list)), end(4, 7*ms, `"status":403,"closed_by":"server"`)}
	tests := []struct {
		name  string
		steps []step
		head  string
		row   string // the row's counts from unanswered to before violations
	}{
		{"both", after(append(broken, refused...)...), "<th>unanswered</th><th>refused</th><th>broken off</th><th>violations</th>",
			"0,1,1"},
		{"broken off", after(broken...), "<th>unanswered</th><th>broken off</th><th>violations</th>", "0,1"},
		{"refused", after(refused...), "<th>unanswered</th><th>refused</th><th>violations</th>", "0,1"},
		{"neither", after(onExchange(3, c2s(5*ms, list)), onExchange(3, s2c(6*ms, `{"jsonrpc":"2.0","id":8,"result":{"tools":[]}}`))),
			"<th>unanswered</th><th>violations</th>", "0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _ := writeReport(t, tempTape(t, tt.steps...), tt.name)
			s := string(out)
			if !strings.Contains(s, tt.head) {
				t.Errorf("sessions table head lacks %q", tt.head)
			}
			table := s[strings.Index(s, "<h2>Sessions</h2>"):]
			table = table[:strings.Index(table, "</table>")]
			rows := strings.Split(table, "</tr>")
			var got []string
			for _, m := range cell.FindAllStringSubmatch(rows[1], -1) {
				got = append(got, m[1])
			}
			if len(rows) != 3 || len(got) < 10 || strings.Join(got[8:len(got)-1], ",") != tt.row {
				t.Errorf("session row %q: want the counts from unanswered to before violations %q", got, tt.row)
			}
		})
	}
}
