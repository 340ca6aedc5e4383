package analysis

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/mcptape/mcptape/internal/fileext"
	"github.com/mcptape/mcptape/tape"
)

// RequestsFormat is a file format of the requests table.
type RequestsFormat string

// Requests table formats.
const (
	RequestsNDJSON  RequestsFormat = "ndjson"  // one JSON object per row
	RequestsCSV     RequestsFormat = "csv"     // RFC 4180, a header line, empty for null
	RequestsParquet RequestsFormat = "parquet" // Apache Parquet, zstd-compressed
)

// RequestsFormatFor returns the format a requests file named name is
// written in, by its extension: .csv, .parquet, or NDJSON for .ndjson,
// .jsonl and .json (and for "-", stdout). Any other name is an error
// naming the accepted extensions.
func RequestsFormatFor(name string) (RequestsFormat, error) {
	if name == "-" {
		return RequestsNDJSON, nil
	}
	type ext = fileext.Ext[RequestsFormat]
	return fileext.Pick(name, ext{Ext: ".csv", Format: RequestsCSV}, ext{Ext: ".parquet", Format: RequestsParquet},
		ext{Ext: ".ndjson", Format: RequestsNDJSON}, ext{Ext: ".jsonl", Format: RequestsNDJSON}, ext{Ext: ".json", Format: RequestsNDJSON})
}

// RequestsStats says what ExportRequests wrote.
type RequestsStats struct {
	Tapes    int   // tapes read
	Records  int64 // records read
	Messages int64 // messages read
	Rows     int64 // rows written
	// Warnings are the tapes' damage warnings, each naming its tape.
	Warnings []error
}

// RequestsTape is one tape to export: its name in the tape column, and
// its opened reader (the caller closes it).
type RequestsTape struct {
	Name   string
	Reader *tape.Reader
}

// RequestsWriter writes rows of the requests table in one format, tape
// after tape. Close ends the file (Parquet writes its footer) and must be
// called once, after the last tape, even when a tape failed.
type RequestsWriter struct {
	rows  rowWriter
	stats RequestsStats
}

// rowWriter writes rows in one format.
type rowWriter interface {
	write(r *requestRow) error
	close() error
}

// requestRow is one row: an Operation and what it shares with its tape.
type requestRow struct {
	tape      string
	transport string
	op        *Operation
}

// NewRequestsWriter returns a writer of the requests table to w in
// format f.
func NewRequestsWriter(w io.Writer, f RequestsFormat) (*RequestsWriter, error) {
	var rw rowWriter
	switch f {
	case RequestsNDJSON:
		rw = newNDJSONRows(w)
	case RequestsCSV:
		rw = newCSVRows(w)
	case RequestsParquet:
		rw = newParquetRows(w)
	default:
		return nil, fmt.Errorf("analysis: requests format %q: want ndjson, csv or parquet", f)
	}
	return &RequestsWriter{rows: rw}, nil
}

// Add writes the operations of one tape, paired by the Inspector (see
// WithOperations). It streams: memory follows the requests in flight, not
// the tape's length. opts are Inspector options.
func (rw *RequestsWriter) Add(ctx context.Context, t RequestsTape, opts ...Option) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	row := requestRow{tape: t.Name, transport: t.Reader.Header().Transport}
	var werr error
	sink := func(op *Operation) {
		if werr != nil {
			return
		}
		row.op = op
		if werr = rw.rows.write(&row); werr != nil {
			cancel(werr) // stops the scan
			return
		}
		rw.stats.Rows++
	}
	rep, err := InspectTape(ctx, t.Reader, append(opts, WithOperations(sink))...)
	if werr != nil {
		return fmt.Errorf("write: %w", werr)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", t.Name, err)
	}
	rw.stats.Tapes++
	rw.stats.Records += rep.Tape.Records
	rw.stats.Messages += rep.Tape.Messages
	if rep.Tape.Warning != "" {
		rw.stats.Warnings = append(rw.stats.Warnings, fmt.Errorf("%s: %s", t.Name, rep.Tape.Warning))
	}
	return nil
}

// Close ends the output and returns what was written.
func (rw *RequestsWriter) Close() (RequestsStats, error) {
	return rw.stats, rw.rows.close()
}

// ExportRequests writes the requests table of the tapes at paths to w in
// format f: one row per logical operation, as Inspect pairs them.
func ExportRequests(ctx context.Context, paths []string, w io.Writer, f RequestsFormat, opts ...Option) (RequestsStats, error) {
	rw, err := NewRequestsWriter(w, f)
	if err != nil {
		return RequestsStats{}, err
	}
	for _, path := range paths {
		if err = addRequestsFile(ctx, rw, path, opts); err != nil {
			break
		}
	}
	st, cerr := rw.Close()
	return st, errors.Join(err, cerr)
}

func addRequestsFile(ctx context.Context, rw *RequestsWriter, path string, opts []Option) error {
	r, err := tape.Open(path)
	if err != nil {
		return err
	}
	defer r.Close()
	return rw.Add(ctx, RequestsTape{Name: path, Reader: r}, opts...)
}
