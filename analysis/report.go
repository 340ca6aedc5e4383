package analysis

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
)

// The HTML report (mcptape report) is one self-contained file: inline CSS
// and SVG drawn by the small renderer in report_svg.go, no script, no
// font, no image or link to fetch, so it opens anywhere without network.
//
// It is built in one pass over the tape: each item goes to an Inspector
// (sessions, problems, errors, violations, percentiles) and to a chartData
// that keeps what the charts need beyond that, in bounded memory: a
// log-scale latency histogram per method and per tool, and the first
// requests of the tape (WithMaxTimeline) for the timelines.

// Report defaults; see the options of the same names.
const (
	DefaultMaxTimeline = 2000
	DefaultMaxCharts   = 16
)

// HTMLOption configures the HTML report. A bad value is an error.
type HTMLOption func(*htmlOptions) error

type htmlOptions struct {
	maxTimeline int
	maxCharts   int
	title       string
	inspect     []Option
}

// WithMaxTimeline sets how many requests the timelines draw (default 2000):
// the first ones of the tape; the report says how many were left out.
func WithMaxTimeline(n int) HTMLOption {
	return func(o *htmlOptions) error {
		if n < 0 {
			return fmt.Errorf("max timeline %d: want 0 or more", n)
		}
		o.maxTimeline = n
		return nil
	}
}

// WithMaxCharts sets how many methods and how many tools get a latency
// chart of their own (default 16 each, the busiest).
func WithMaxCharts(n int) HTMLOption {
	return func(o *htmlOptions) error {
		if n < 1 {
			return fmt.Errorf("max charts %d: want at least 1", n)
		}
		o.maxCharts = n
		return nil
	}
}

// WithTitle sets the report's title (default: the tape's file name).
func WithTitle(s string) HTMLOption {
	return func(o *htmlOptions) error { o.title = s; return nil }
}

// WithInspectOptions passes options to the Inspector behind the report.
func WithInspectOptions(opts ...Option) HTMLOption {
	return func(o *htmlOptions) error { o.inspect = append(o.inspect, opts...); return nil }
}

// WriteHTMLReport writes the HTML report of the tape at path to w (titled
// with the file's name unless WithTitle says otherwise) and returns the
// inspection it is built on. A file that is not a tape is an
// error wrapping tape.ErrNotTape.
func WriteHTMLReport(ctx context.Context, path string, w io.Writer, opts ...HTMLOption) (*Report, error) {
	r, err := tape.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	opts = append([]HTMLOption{WithTitle(filepath.Base(path))}, opts...)
	rep, err := WriteHTMLReportTape(ctx, r, w, opts...)
	if err != nil {
		return nil, fmt.Errorf("report %s: %w", path, err)
	}
	return rep, nil
}

// WriteHTMLReportTape writes the HTML report of an opened tape; the caller
// closes r. The title defaults to "tape": set it with WithTitle.
func WriteHTMLReportTape(ctx context.Context, r *tape.Reader, w io.Writer, opts ...HTMLOption) (*Report, error) {
	o := htmlOptions{maxTimeline: DefaultMaxTimeline, maxCharts: DefaultMaxCharts}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, fmt.Errorf("analysis: report: %w", err)
		}
	}
	in, err := NewInspector(r.Header(), o.inspect...)
	if err != nil {
		return nil, fmt.Errorf("analysis: report: %w", err)
	}
	sc, err := NewScanner(ctx, r)
	if err != nil {
		return nil, err
	}
	defer sc.Close()
	col := newChartData(r.Header().Time, o.maxTimeline)
	for {
		it, err := sc.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		in.Add(it)
		col.add(it)
	}
	rep := in.Finish(sc.Warning())
	col.finish()
	if o.title == "" {
		o.title = "tape"
	}
	if err := writeHTML(w, &o, rep, col); err != nil {
		return nil, err
	}
	return rep, nil
}

// Latency histograms: buckets on a log scale, histPerDecade per decade from
// histMinNS.
const (
	histMinNS     = 1e3 // 1µs
	histPerDecade = 4
	histBuckets   = 8 * histPerDecade // 1µs to 100s
)

// latHist counts latencies in log-scale buckets.
type latHist struct {
	counts [histBuckets]int64
	n      int64
	errors int64
}

func histBucket(ns int64) int {
	if ns <= histMinNS {
		return 0
	}
	b := int(math.Log10(float64(ns)/histMinNS) * histPerDecade)
	return min(max(b, 0), histBuckets-1)
}

// bucketEdge is the lower edge of bucket b in nanoseconds.
func bucketEdge(b int) float64 { return histMinNS * math.Pow(10, float64(b)/histPerDecade) }

// Request outcomes on the timeline.
const (
	outcomeOK = iota
	outcomeError
	outcomeToolError
	outcomeUnanswered
)

// tlSpan is one request on a timeline.
type tlSpan struct {
	session int // index in chartData.sessions
	start   int64
	end     int64 // -1 while unanswered
	method  string
	name    string
	outcome int
}

// chartReq is what the chartData keeps for a request in flight.
type chartReq struct {
	start  int64
	method string
	name   string
	tlSpan int // index in spans, -1 when not drawn
}

// chartData gathers the data of the charts.
type chartData struct {
	origin      int64
	last        int64
	maxTimeline int
	pairs       *Pairer[chartReq]
	sessions    []string
	sessionIdx  map[string]int
	spans       []tlSpan
	omitted     int64 // requests not drawn
	methods     map[string]*latHist
	tools       map[string]*latHist
}

// maxHistograms bounds the distinct methods and tools with a histogram.
const maxHistograms = 1000

func newChartData(origin int64, maxTimeline int) *chartData {
	return &chartData{origin: origin, maxTimeline: maxTimeline, pairs: NewPairer[chartReq](),
		sessionIdx: map[string]int{}, methods: map[string]*latHist{}, tools: map[string]*latHist{}}
}

func (c *chartData) add(it *Item) {
	rec := it.Rec
	if c.origin == 0 {
		c.origin = rec.Time
	}
	c.last = max(c.last, rec.Time-c.origin)
	if !it.IsMessage() {
		return
	}
	info := &it.Info
	switch info.Kind {
	case jsonrpc.KindRequest:
		if !Pairable(info.ID) {
			return
		}
		r := chartReq{start: rec.Time - c.origin, method: info.Method, tlSpan: -1}
		if r.method == mToolsCall {
			r.name, _ = lookupString(it.Frame, "params", "name")
		}
		if len(c.spans) < c.maxTimeline {
			r.tlSpan = len(c.spans)
			c.spans = append(c.spans, tlSpan{session: c.session(rec.Session), start: r.start, end: -1,
				method: r.method, name: r.name, outcome: outcomeUnanswered})
		} else {
			c.omitted++
		}
		c.pairs.Open(rec.Session, rec.Dir, info.ID, r)
	case jsonrpc.KindResponse, jsonrpc.KindError:
		if !Pairable(info.ID) {
			return
		}
		r, ok := c.pairs.Close(rec.Session, Opposite(rec.Dir), info.ID)
		if !ok {
			return
		}
		end := rec.Time - c.origin
		outcome := outcomeOK
		switch {
		case info.Kind == jsonrpc.KindError:
			outcome = outcomeError
		case r.method == mToolsCall && lookupTrue(it.Frame, "result", "isError"):
			outcome = outcomeToolError
		}
		lat := max(end-r.start, 0)
		key := string(Opposite(rec.Dir)) + " " + r.method
		c.observe(c.methods, key, lat, outcome)
		if r.name != "" {
			c.observe(c.tools, r.name, lat, outcome)
		}
		if r.tlSpan >= 0 {
			c.spans[r.tlSpan].end, c.spans[r.tlSpan].outcome = end, outcome
		}
	}
}

// session returns the timeline lane of a session.
func (c *chartData) session(id string) int {
	i, ok := c.sessionIdx[id]
	if !ok {
		i = len(c.sessions)
		c.sessionIdx[id] = i
		c.sessions = append(c.sessions, id)
	}
	return i
}

func (c *chartData) observe(m map[string]*latHist, key string, lat int64, outcome int) {
	h := m[key]
	if h == nil {
		if len(m) >= maxHistograms {
			key = Other
			if h = m[key]; h == nil {
				h = &latHist{}
				m[key] = h
			}
		} else {
			h = &latHist{}
			m[key] = h
		}
	}
	h.counts[histBucket(lat)]++
	h.n++
	if outcome != outcomeOK {
		h.errors++
	}
}

// finish ends the spans still open at the end of the tape.
func (c *chartData) finish() {
	for i := range c.spans {
		if c.spans[i].end < 0 {
			c.spans[i].end = c.last
		}
	}
}
