package analysis

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/mcptape/mcptape/tape"
)

// ExportFormat is an output format of Export.
type ExportFormat string

// Export formats.
const (
	// ExportNDJSON is one JSON object per message (batch members included),
	// in the layout of Show's ndjson format, events left out: for jq and
	// any tape.
	ExportNDJSON ExportFormat = "ndjson"
	// ExportHAR is an HTTP Archive 1.2 document with one entry per HTTP
	// exchange, for HTTP tapes: it opens in a browser's network panel.
	ExportHAR ExportFormat = "har"
	// ExportOTLP is an OTLP/JSON trace document: one span per request and
	// response pair, logical operations as parents (see export_otlp.go).
	ExportOTLP ExportFormat = "otlp"
)

// ErrNoHTTP is returned (wrapped) when a HAR export is asked of a tape
// recorded over stdio: it holds no HTTP exchanges.
var ErrNoHTTP = errors.New("tape holds no HTTP exchanges")

// ExportStats says what Export wrote.
type ExportStats struct {
	Records  int64 // records read
	Messages int64 // messages written (ndjson) or carried in entries (har)
	Entries  int64 // HAR entries or OTLP spans written
	// Warning is the tape's damage warning (a *tape.TailError), if any.
	Warning error
}

// ParseExportFormat checks a format name given on a command line.
func ParseExportFormat(s string) (ExportFormat, error) {
	switch f := ExportFormat(s); f {
	case ExportNDJSON, ExportHAR, ExportOTLP:
		return f, nil
	}
	return "", fmt.Errorf("format %q: want har, ndjson or otlp", s)
}

// Export writes the tape at path to w in format f. It streams: memory
// depends on the messages in flight (ndjson) or the HTTP exchanges open
// (har), not on the tape's length. A file that is not a tape is an error
// wrapping tape.ErrNotTape.
func Export(ctx context.Context, path string, w io.Writer, f ExportFormat) (ExportStats, error) {
	r, err := tape.Open(path)
	if err != nil {
		return ExportStats{}, err
	}
	defer r.Close()
	st, err := ExportTape(ctx, r, w, f)
	if err != nil {
		return st, fmt.Errorf("export %s: %w", path, err)
	}
	return st, nil
}

// ExportTape writes an opened tape to w in format f; the caller closes r.
func ExportTape(ctx context.Context, r *tape.Reader, w io.Writer, f ExportFormat) (ExportStats, error) {
	if _, err := ParseExportFormat(string(f)); err != nil {
		return ExportStats{}, fmt.Errorf("analysis: export: %w", err)
	}
	if f == ExportHAR && r.Header().Transport == "stdio" {
		return ExportStats{}, fmt.Errorf("%w (transport stdio): export it as ndjson", ErrNoHTTP)
	}
	var opts []ScanOption
	if f == ExportOTLP {
		// The OTLP export keeps no record or frame past its item (what
		// it keeps, it copies), and runs an Inspector: it reads the tape
		// as inspect does, decompressing ahead on another core, frames
		// not copied, and the fields of params and result the Inspector
		// reads found while the frame is in the reading core's cache.
		if err := r.DecodeAhead(decodeWorkers()); err != nil {
			return ExportStats{}, err
		}
		opts = append(opts, sharedFrames())
	}
	sc, err := NewScanner(ctx, r, opts...)
	if err != nil {
		return ExportStats{}, err
	}
	defer sc.Close()
	var st ExportStats
	switch f {
	case ExportHAR:
		err = exportHAR(sc, r.Header(), w, &st)
	case ExportOTLP:
		err = exportOTLP(sc, r.Header(), w, &st)
	default:
		err = exportNDJSON(sc, r.Header(), w, &st)
	}
	st.Records = sc.Records()
	st.Warning = sc.Warning()
	return st, err
}

// exportNDJSON writes the messages as Show's ndjson lines.
func exportNDJSON(sc *Scanner, h *tape.Header, w io.Writer, st *ExportStats) error {
	out := newShowWriter(w, FormatNDJSON)
	pairs := NewPairer[*showReq]()
	clock := newTapeClock(h.Time)
	for {
		it, err := sc.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		clock.add(it.Rec)
		if !it.IsMessage() {
			continue
		}
		m := line{item: it, origin: clock.origin}
		pairLine(pairs, &m)
		if err := out.write(&m); err != nil {
			return err
		}
		st.Messages++
	}
	return out.flush()
}
