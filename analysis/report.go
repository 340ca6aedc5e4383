package analysis

import (
	"cmp"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"

	"github.com/mcptape/mcptape/tape"
)

// The HTML report (mcptape report) is one self-contained file: inline CSS
// and SVG drawn by the small renderer in report_svg.go, no script, no
// font, no image or link to fetch, so it opens anywhere without network.
//
// It is built in one pass over the tape: each item goes to an Inspector
// (sessions, problems, errors, violations, percentiles), whose operations
// (WithOperations, each with the outcome inspect gives it) go to a
// chartData that keeps what the charts need beyond that, in bounded
// memory: a log-scale latency histogram per method and per tool, and the
// first operations of the tape (WithMaxTimeline) for the timelines.

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

// WithMaxTimeline sets how many operations (requests with their answer,
// as inspect pairs them) the timelines draw (default 2000): the first
// ones of the tape; the report says how many were left out.
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

// WithInspectOptions passes options to the Inspector behind the report
// (the report's charts take its operations: a WithOperations among opts
// is overridden).
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
	col := newChartData(r.Header().Time, o.maxTimeline)
	in, err := NewInspector(r.Header(), append(o.inspect, WithOperations(col.operation))...)
	if err != nil {
		return nil, fmt.Errorf("analysis: report: %w", err)
	}
	sc, err := NewScanner(ctx, r)
	if err != nil {
		return nil, err
	}
	defer sc.Close()
	for {
		it, err := sc.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		col.add(it)
		in.Add(it)
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

// tlSpan is one operation on a timeline.
type tlSpan struct {
	session  int // index in chartData.sessions; set by finish
	sess     string
	seq      int64
	start    int64
	end      int64
	method   string
	name     string
	outcome  string // one of the Outcome constants
	answered bool
}

// chartData gathers the data of the charts from the operations of the
// Inspector behind the report (WithOperations): the latency histograms
// hold exactly the operations of its latency tables, and the timeline
// shows each operation with the outcome inspect gives it.
type chartData struct {
	clock       tapeClock
	last        int64 // the end of the span, from clock's origin
	maxTimeline int
	sessions    []string
	spans       spanHeap // the first operations by start; sorted by finish
	omitted     int64    // operations not drawn
	methods     map[string]*latHist
	tools       map[string]*latHist
}

// maxHistograms bounds the distinct methods and tools with a histogram.
const maxHistograms = 1000

func newChartData(origin int64, maxTimeline int) *chartData {
	return &chartData{clock: newTapeClock(origin), maxTimeline: maxTimeline, methods: map[string]*latHist{}, tools: map[string]*latHist{}}
}

// add notes the time of an item: the origin of the charts and their end.
func (c *chartData) add(it *Item) {
	c.clock.add(it.Rec)
	c.last = c.clock.last - c.clock.origin
}

// operation takes one operation of the Inspector. One not answered ends
// on the timeline when the inspection ended it: now, or at the end of
// the tape for those still open then.
func (c *chartData) operation(o *Operation) {
	start := o.StartNS - c.clock.origin
	end := c.last
	if o.Answered && o.LatencyNS < 0 { // unknown: a clock step back
		end = start
	} else if o.Answered {
		end = start + o.LatencyNS
		key := string(o.Dir) + " " + o.Method
		c.observe(c.methods, key, o.LatencyNS, o.Outcome)
		if o.Method == mToolsCall {
			c.observe(c.tools, o.Name, o.LatencyNS, o.Outcome)
		}
	}
	sp := tlSpan{sess: o.Session, seq: o.Seq, start: start, end: max(end, start), method: o.Method, outcome: o.Outcome, answered: o.Answered}
	if o.Method == mToolsCall {
		sp.name = o.Name
	}
	if c.maxTimeline == 0 {
		c.omitted++
		return
	}
	if len(c.spans) < c.maxTimeline {
		heap.Push(&c.spans, sp)
		return
	}
	c.omitted++
	if spanBefore(sp, c.spans[0]) { // before the latest drawn: drawn instead
		c.spans[0] = sp
		heap.Fix(&c.spans, 0)
	}
}

// spanBefore orders spans by start, then by record.
func spanBefore(a, b tlSpan) bool {
	return a.start < b.start || (a.start == b.start && a.seq < b.seq)
}

// spanHeap is a max-heap of spans by start: the latest of the first ones
// on top, to be replaced by an earlier one.
type spanHeap []tlSpan

func (h spanHeap) Len() int           { return len(h) }
func (h spanHeap) Less(i, j int) bool { return spanBefore(h[j], h[i]) }
func (h spanHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *spanHeap) Push(x any)        { *h = append(*h, x.(tlSpan)) }
func (h *spanHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func (c *chartData) observe(m map[string]*latHist, key string, lat int64, outcome string) {
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
	if outcome != OutcomeOK {
		h.errors++
	}
}

// finish puts the spans in the order they start and gives each session
// its lane, in the order of their first span.
func (c *chartData) finish() {
	slices.SortFunc(c.spans, func(a, b tlSpan) int { return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.seq, b.seq)) })
	lanes := map[string]int{}
	for i := range c.spans {
		sp := &c.spans[i]
		l, ok := lanes[sp.sess]
		if !ok {
			l = len(c.sessions)
			lanes[sp.sess] = l
			c.sessions = append(c.sessions, sp.sess)
		}
		sp.session = l
	}
}
