package loadgen

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcptape/mcptape/internal/fileext"
)

// Formats of WithResults.
const (
	ResultsNDJSON = "ndjson"
	ResultsCSV    = "csv"
)

// What a results line's request counts as ("counted"): the report's
// OK, ErrorAnswers, NoAnswer, Cancel.Sent and Dropped.
const (
	ResultOK          = "ok"
	ResultErrorAnswer = "error_answer"
	ResultNoAnswer    = "no_answer"
	ResultCancelled   = "cancelled"
	ResultDropped     = "dropped"
)

// ResultsCSVHeader is the first line of a CSV results file.
const ResultsCSVHeader = "intended_ns,sent_ns,latency_ns,series,outcome,error,counted"

// ResultsFormat returns the results format for a file name by its
// extension: .csv is CSV, .ndjson, .jsonl and .json are NDJSON; any other
// name is an error naming them.
func ResultsFormat(path string) (string, error) {
	f, err := fileext.Pick(path, fileext.Ext[string]{Ext: ".csv", Format: ResultsCSV}, fileext.Ext[string]{Ext: ".ndjson", Format: ResultsNDJSON},
		fileext.Ext[string]{Ext: ".jsonl", Format: ResultsNDJSON}, fileext.Ext[string]{Ext: ".json", Format: ResultsNDJSON})
	if err != nil {
		return "", fmt.Errorf("results file %w", err)
	}
	return f, nil
}

// WithResults writes one line per request to w, in format (ResultsNDJSON
// or ResultsCSV): the intended time (Unix ns; the send time in the closed
// model), the send time (Unix ns), the latency (ns, from the intended time
// to the answer or the failure), the series (the most specific: "tools/call
// NAME" for a tool), the outcome ("ok" or "error": not ok) and the error
// kind (ErrorCount.Class, "" when ok), and which of the report's counts
// the request is in (counted: ResultOK, ResultErrorAnswer, ResultNoAnswer,
// ResultCancelled, ResultDropped; added after the others, last). An
// NDJSON line is {"intended_ns":...,"sent_ns":...,"latency_ns":...,
// "series":"...","outcome":"ok","error":"","counted":"ok"}. An
// open-model arrival dropped over WithMaxInFlight has its line too: never
// sent, its send time and latency are 0, its series "" and its error
// "dropped". Requests sent in batches and tape-driven loads are not
// written. Lines are buffered; a write error ends up in Report.Warnings.
func WithResults(w io.Writer, format string) Option {
	return func(o *options) error {
		if w == nil {
			return errors.New("results: no writer")
		}
		if format != ResultsNDJSON && format != ResultsCSV {
			return fmt.Errorf("results format %q: want %s or %s", format, ResultsNDJSON, ResultsCSV)
		}
		o.results = &resultsWriter{w: bufio.NewWriterSize(w, 256<<10), csv: format == ResultsCSV, names: map[string][]byte{}}
		return nil
	}
}

// resultsWriter writes the results lines of a run, from every session.
type resultsWriter struct {
	mu     sync.Mutex
	w      *bufio.Writer
	csv    bool
	header bool
	err    error
	names  map[string][]byte // series names, quoted for the format
}

// write writes the line of one request; class is "" when it succeeded,
// counted the report's count it is in (ResultOK...). sent is the send
// time in Unix ns (0: never sent).
func (rw *resultsWriter) write(intended time.Time, sent int64, latency time.Duration, series, class, counted string) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if rw.err != nil {
		return
	}
	b := rw.w.AvailableBuffer()
	if rw.csv && !rw.header {
		b = append(b, ResultsCSVHeader+"\n"...)
		rw.header = true
	}
	outcome := "ok"
	if class != "" {
		outcome = "error"
	}
	if rw.csv {
		b = strconv.AppendInt(b, intended.UnixNano(), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, sent, 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(latency), 10)
		b = append(b, ',')
		b = append(b, rw.quoted(series)...)
		b = append(b, ',')
		b = append(b, outcome...)
		b = append(b, ',')
		b = append(b, rw.quoted(class)...)
		b = append(b, ',')
		b = append(b, counted...)
	} else {
		b = append(b, `{"intended_ns":`...)
		b = strconv.AppendInt(b, intended.UnixNano(), 10)
		b = append(b, `,"sent_ns":`...)
		b = strconv.AppendInt(b, sent, 10)
		b = append(b, `,"latency_ns":`...)
		b = strconv.AppendInt(b, int64(latency), 10)
		b = append(b, `,"series":`...)
		b = append(b, rw.quoted(series)...)
		b = append(b, `,"outcome":"`...)
		b = append(b, outcome...)
		b = append(b, `","error":`...)
		b = append(b, rw.quoted(class)...)
		b = append(b, `,"counted":"`...)
		b = append(b, counted...)
		b = append(b, `"}`...)
	}
	b = append(b, '\n')
	if _, err := rw.w.Write(b); err != nil {
		rw.err = err
	}
}

// quoted returns s as a JSON string or a CSV field, cached: a run has
// few series and error kinds.
func (rw *resultsWriter) quoted(s string) []byte {
	if q, ok := rw.names[s]; ok {
		return q
	}
	var q []byte
	if rw.csv {
		q = []byte(s)
		if strings.ContainsAny(s, ",\"\r\n") {
			q = []byte(`"` + strings.ReplaceAll(s, `"`, `""`) + `"`)
		}
	} else {
		q, _ = json.Marshal(s)
	}
	rw.names[s] = q
	return q
}

// flush writes what is buffered and returns the first error.
func (rw *resultsWriter) flush() error {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if rw.err == nil {
		rw.err = rw.w.Flush()
	}
	return rw.err
}

// result writes the results line of one request when WithResults asked
// for them: err is why it failed (nil: answered, class the kind of error
// the answer carries, "" for none).
func (r *runner) result(ctx context.Context, intended, sent time.Time, at time.Time, names []string, err error, class string) {
	rw := r.o.results
	if rw == nil {
		return
	}
	counted := ResultOK
	switch {
	case errors.Is(err, errCancelled):
		class, counted = ClassCancelled, ResultCancelled
	case err != nil:
		class, _ = reason(ctx, err)
		counted = ResultNoAnswer
	case class != "":
		counted = ResultErrorAnswer
	}
	rw.write(intended, sent.UnixNano(), at.Sub(intended), names[len(names)-1], class, counted)
}

// resultDropped writes the results line of an open-model arrival due at
// intended and dropped over WithMaxInFlight, when WithResults asked for them.
func (r *runner) resultDropped(intended time.Time) {
	if rw := r.o.results; rw != nil {
		rw.write(intended, 0, 0, "", ClassDropped, ResultDropped)
	}
}
