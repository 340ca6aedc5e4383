package loadreport

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/browsertest"
	"github.com/mcptape/mcptape/internal/refserver"
	"github.com/mcptape/mcptape/loadgen"
)

// refURL serves a reference server (k tool calls at once at most) for
// one test.
func refURL(t *testing.T) string {
	t.Helper()
	s, err := refserver.New(refserver.WithMaxConcurrency(4))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(refserver.HTTPHandler(s, refserver.HTTPConfig{}))
	t.Cleanup(ts.Close)
	return ts.URL + refserver.Path
}

func calls(t *testing.T, specs ...string) []loadgen.Call {
	t.Helper()
	var out []loadgen.Call
	for _, s := range specs {
		c, err := loadgen.ParseCall(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

// runs makes real reports: a staged run with errors (an unknown tool
// whose name is markup), a second run to compare, and a capacity search.
func runs(t *testing.T) (staged, other, capacity *loadgen.Report) {
	t.Helper()
	url := refURL(t)
	ctx := context.Background()
	workload := calls(t, `3:tools/call echo {"message":"hi"}`, `tools/call sleep {"ms":5}`, `tools/call <script>x</script> {}`)
	stages := []loadgen.Stage{{Duration: 400 * time.Millisecond, Target: 80, Rate: true}, {Duration: 400 * time.Millisecond, Target: 80, Rate: true},
		{Duration: 400 * time.Millisecond, Target: 0, Rate: true}}
	staged, err := loadgen.Run(ctx, loadgen.Target{URL: url}, workload, loadgen.WithStages(stages), loadgen.WithSessions(2),
		loadgen.WithIntervals(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	other, err = loadgen.Run(ctx, loadgen.Target{URL: url}, workload[:2], loadgen.WithRate(120), loadgen.WithDuration(time.Second),
		loadgen.WithSessions(2), loadgen.WithIntervals(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	th, _ := loadgen.ParseThreshold("errors<1%")
	capacity, err = loadgen.FindMax(ctx, loadgen.Target{URL: url}, workload[:2],
		loadgen.FindMaxConfig{Thresholds: []loadgen.Threshold{th}, Start: 20, MaxRate: 40, Step: 500 * time.Millisecond, Warmup: -1},
		loadgen.WithIntervals(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	return staged, other, capacity
}

// externalRef finds what would make a browser fetch something.
var externalRef = regexp.MustCompile(`(?i)(src|href|xlink:href|action|srcset)\s*=\s*["']?\s*(https?:|//)|url\(|@import|<script|<link|<iframe|<img`)

// TestWriteHTML draws one run, a comparison and a capacity search, and
// checks the charts and tables each page must hold.
func TestWriteHTML(t *testing.T) {
	staged, other, capacity := runs(t)
	// a step run again (loadgen.StallLate) says so in the steps table
	repeated, cr := *capacity, *capacity.Capacity
	repeated.Capacity, cr.Steps = &cr, slices.Clone(cr.Steps)
	cr.Steps[1].Repeated = "the first run broke errors<1% while the generator ran 420ms late"
	cases := []struct {
		name    string
		runs    []Run
		charts  int // at least
		contain []string
	}{
		{"single", []Run{{"staged.json", staged}}, 3 + 2, []string{`id="latency-0"`, `id="throughput"`, `id="distribution"`,
			"stage 1: 0→80/s", "stage 3: 80→0/s", "&lt;script&gt;x&lt;/script&gt;", "jsonrpc error", "Configuration", "target",
			// each request counted once, as the text report counts it
			staged.CountLines(true)[0], " error answers (", "<title>ok/s</title>", "<title>not ok/s</title>", "<th>ok/s</th><th>not ok</th>",
			// setups have no rate
			`<td class="l">session setup</td><td>2</td><td>-</td>`}},
		{"compare", []Run{{"staged.json", staged}, {"other.json", other}}, 1 + 2*2, []string{`id="changes"`, "Changes against staged.json",
			"p99 over time: tools/call echo", "Latency by percentile: tools/call echo", "other.json"}},
		{"capacity", []Run{{"cap.json", capacity}}, 3, []string{`id="steps"`, "Capacity", "40/s held every threshold", "step 2: 40/s", "held"}},
		{"capacity repeated", []Run{{"cap.json", &repeated}}, 3, []string{`id="steps"`, "held (run again: the first run broke errors&lt;1% while the generator ran 420ms late)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteHTML(&b, "Load <report>", c.runs...); err != nil {
				t.Fatal(err)
			}
			s := b.String()
			if n := strings.Count(s, `<svg class="chart"`); n < c.charts {
				t.Errorf("%d charts, want at least %d", n, c.charts)
			}
			if n := strings.Count(s, `<polyline class="series"`); n < c.charts {
				t.Errorf("%d lines drawn", n)
			}
			for _, want := range append(c.contain, "Load &lt;report&gt;") {
				if !strings.Contains(s, want) {
					t.Errorf("page lacks %q", want)
				}
			}
			if m := externalRef.FindString(s); m != "" {
				t.Errorf("page refers to something outside itself: %q", m)
			}
			if os.Getenv("MCPTAPE_KEEP_SCREENSHOTS") != "" {
				_ = os.WriteFile(filepath.Join(os.Getenv("MCPTAPE_KEEP_SCREENSHOTS"), "load-"+c.name+".html"), b.Bytes(), 0o600)
			}
		})
	}
	if err := WriteHTML(&bytes.Buffer{}, "x"); err == nil {
		t.Error("no run accepted")
	}
}

// TestRendersInChromium renders a run's page and a comparison in headless
// Chromium and checks the screenshot shows the charts: many pixels of the
// first two line colours (blue and red), spread over the page height:
// lines give thousands, the legend swatches alone under a thousand.
func TestRendersInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("renders in a browser; skipped with -short")
	}
	staged, other, _ := runs(t)
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		runs []Run
	}{{"single", []Run{{"staged", staged}}}, {"compare", []Run{{"staged", staged}, {"other", other}}}} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteHTML(&b, c.name, c.runs...); err != nil {
				t.Fatal(err)
			}
			page := filepath.Join(dir, c.name+".html")
			if err := os.WriteFile(page, b.Bytes(), 0o600); err != nil {
				t.Fatal(err)
			}
			img := browsertest.Screenshot(t, page, "load-"+c.name, 1280, 2400)
			bd := img.Bounds()
			blue, red := 0, 0
			var blueRows, redRows = map[int]bool{}, map[int]bool{}
			for y := bd.Min.Y; y < bd.Max.Y; y++ {
				for x := bd.Min.X; x < bd.Max.X; x++ {
					r, g, bl, _ := img.At(x, y).RGBA()
					r, g, bl = r>>8, g>>8, bl>>8
					switch {
					case near(r, 0x25) && near(g, 0x63) && near(bl, 0xeb):
						blue++
						blueRows[y/100] = true
					case near(r, 0xdc) && near(g, 0x26) && near(bl, 0x26):
						red++
						redRows[y/100] = true
					}
				}
			}
			t.Logf("%d blue pixels over %d bands, %d red", blue, len(blueRows), red)
			if blue < 3000 || red < 2000 || len(blueRows) < 5 {
				t.Errorf("screenshot: %d blue pixels over %d bands, %d red: the charts are not drawn", blue, len(blueRows), red)
			}
		})
	}
}

func near(v, want uint32) bool { return v+24 >= want && v <= want+24 }
