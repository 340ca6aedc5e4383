package tape

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

func TestCreateMode(t *testing.T) {
	dir := t.TempDir()
	fresh := filepath.Join(dir, "fresh.jsonl.zst")
	existing := filepath.Join(dir, "existing.jsonl.zst")
	if err := os.WriteFile(existing, []byte("old content, much longer than nothing"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fresh, existing} {
		w, err := Create(path, testHeader())
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(msg(1, ClientToServer, `{"id":1}`)); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		// (Windows keeps a read-only flag, not permission bits: privfile's
		// access list is checked by its own Windows test.)
		if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", path, fi.Mode().Perm())
		}
		r, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := r.Next()
		if err != nil || string(rec.Frame) != `{"id":1}` {
			t.Errorf("%s: first record %v, %v", path, rec, err)
		}
		r.Close()
	}
	if _, err := Create(filepath.Join(dir, "no", "such", "dir"), testHeader()); err == nil {
		t.Error("Create in a missing directory succeeded")
	}
}

// TestCreateDevice: a tape written to a device (record --force -o
// /dev/null, to forward without keeping a tape) closes without an error;
// its Close used to fail with "sync: invalid argument", so that record
// exited 1.
func TestCreateDevice(t *testing.T) {
	if _, err := os.Stat("/dev/null"); err != nil {
		t.Skip("no /dev/null here")
	}
	w, err := Create("/dev/null", testHeader())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(msg(1, ClientToServer, `{"id":1}`)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

func TestHeaderDefaults(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{Transport: "http", Extra: json.RawMessage(`{ "k" : [1, 2] }`)}, WithClock(fixedClock()))
	if err != nil {
		t.Fatal(err)
	}
	// The header is written before NewWriter returns.
	if line := string(zstdDecode(t, buf.Bytes())); line != `{"type":"header","format":1,"tool":"mcptape","version":"","time":1748779200000000000,"transport":"http","time_ordered":true,"extra":{"k":[1,2]}}`+"\n" {
		t.Fatalf("header line %s", line)
	}
	w.Close()
	if _, err := NewWriter(io.Discard, Header{Format: 2}); err == nil || !strings.Contains(err.Error(), "header format 2") {
		t.Fatalf("format 2: %v", err)
	}
}

func TestOptionsRefused(t *testing.T) {
	tests := []struct {
		opt  Option
		want string
	}{
		{WithFlushInterval(0), "flush interval 0s: must be positive"},
		{WithFlushBytes(-1), "flush bytes -1: must be positive"},
		{WithMaxQueued(0), "max queued 0: must be positive"},
		{WithMaxQueued(10), "max queued 10 is below flush bytes 1048576"},
		{WithLevel(23), "zstd level 23: must be 1 to 22"},
		{WithClock(nil), "clock: must not be nil"},
	}
	for _, tt := range tests {
		if _, err := NewWriter(io.Discard, testHeader(), tt.opt); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("err = %v, want %q", err, tt.want)
		}
	}
	if _, err := NewReader(bytes.NewReader(nil), WithMaxRecord(1)); err == nil || !strings.Contains(err.Error(), "max record 1") {
		t.Errorf("reader option: %v", err)
	}
}

// slowWriter takes delay per Write and counts the bytes.
type slowWriter struct {
	mu    sync.Mutex
	delay time.Duration
	buf   bytes.Buffer
}

func (s *slowWriter) Write(p []byte) (int, error) {
	time.Sleep(s.delay)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

// TestBackpressure: with a tiny bound and a slow destination, Write waits
// (counted) instead of dropping or growing memory; nothing is lost.
func TestBackpressure(t *testing.T) {
	dst := &slowWriter{delay: 5 * time.Millisecond}
	const flushBytes, maxQueued = 2 << 10, 4 << 10
	w, err := NewWriter(dst, testHeader(), WithFlushBytes(flushBytes), WithMaxQueued(maxQueued))
	if err != nil {
		t.Fatal(err)
	}
	recs := messages200(200)
	biggest := 0
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
		biggest = max(biggest, len(r.Frame)+200)
	}
	st := w.Stats()
	if st.Waits == 0 || st.WaitTime <= 0 {
		t.Errorf("Waits %d, WaitTime %v: want waits counted", st.Waits, st.WaitTime)
	}
	if st.PeakQueued > maxQueued+int64(biggest) {
		t.Errorf("PeakQueued %d over the bound %d + one record", st.PeakQueued, maxQueued)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, _, warn := readTape(t, dst.buf.Bytes(), true)
	if warn != nil || len(got) != len(recs) {
		t.Fatalf("read %d records, warning %v", len(got), warn)
	}
	st = w.Stats()
	if st.Queued != 0 || st.Records != int64(len(recs))+2 || st.Messages != int64(len(recs)) {
		t.Errorf("stats after Close: %+v", st)
	}
}

// TestRecordOverBound: a record bigger than MaxQueued is still accepted.
func TestRecordOverBound(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, testHeader(), WithFlushBytes(1024), WithMaxQueued(1024))
	if err != nil {
		t.Fatal(err)
	}
	big := msg(1, ServerToClient, `"`+strings.Repeat("z", 10_000)+`"`)
	for range 3 {
		if err := w.Write(big); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got, _, warn := readTape(t, buf.Bytes(), true); len(got) != 3 || warn != nil {
		t.Fatalf("read %d records, warning %v", len(got), warn)
	}
}

// TestWriteWaitCancelled: a Write waiting for room gives up with its
// context, and writes nothing.
func TestWriteWaitCancelled(t *testing.T) {
	release := make(chan struct{})
	var calls atomic.Int32
	w, err := NewWriter(writerFunc(func(p []byte) (int, error) {
		if calls.Add(1) > 1 { // the header passes, then the destination hangs
			<-release
		}
		return len(p), nil
	}), Header{}, WithFlushBytes(1024), WithMaxQueued(1024), WithFlushInterval(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { close(release); w.Close() }()
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	r := msg(1, ClientToServer, `"`+strings.Repeat("q", 2000)+`"`)
	var werr error
	for range 10 {
		if werr = w.WriteContext(ctx, r); werr != nil {
			break
		}
	}
	if !errors.Is(werr, context.DeadlineExceeded) {
		t.Fatalf("WriteContext: %v, want the context's deadline", werr)
	}
	if st := w.Stats(); st.Waits == 0 || st.Records != 2 {
		t.Fatalf("stats %+v: want a wait and only the first record accepted", st)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestWriteError: after the destination fails, every call returns the
// error, naming the file.
func TestWriteError(t *testing.T) {
	fail := errors.New("disk full")
	calls := 0
	w, err := NewWriter(writerFunc(func(p []byte) (int, error) {
		if calls++; calls > 1 {
			return 0, fail
		}
		return len(p), nil
	}), testHeader())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(msg(1, ClientToServer, `{}`)); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(t.Context()); !errors.Is(err, fail) {
		t.Fatalf("Flush: %v", err)
	}
	if err := w.Write(msg(2, ClientToServer, `{}`)); !errors.Is(err, fail) {
		t.Fatalf("Write after failure: %v", err)
	}
	if err := w.Close(); !errors.Is(err, fail) {
		t.Fatalf("Close: %v", err)
	}
	if st := w.Stats(); !errors.Is(st.Err, fail) {
		t.Fatalf("Stats.Err %v", st.Err)
	}

	// With a file, the error names it.
	path := filepath.Join(t.TempDir(), "t.jsonl.zst")
	fw, err := Create(path, testHeader())
	if err != nil {
		t.Fatal(err)
	}
	fw.file.Close() // make the next write fail
	fw.Write(msg(1, ClientToServer, `{}`))
	if err := fw.Flush(t.Context()); err == nil || !strings.HasPrefix(err.Error(), "tape "+path+": write: ") {
		t.Fatalf("Flush: %v", err)
	}
	fw.Close()
}

func TestCloseAndAfter(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, testHeader(), WithClock(fixedClock()))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(&Record{Type: TypeHeader}); err == nil {
		t.Error("Write of a header record succeeded")
	}
	if err := w.Write(&Record{Type: TypeEvent, Event: "x", Data: json.RawMessage("{")}); err == nil {
		t.Error("Write of bad event data succeeded")
	}
	if err := w.Write(msg(1, ClientToServer, `{}`)); err != nil {
		t.Fatalf("writer unusable after a refused record: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := w.Write(msg(2, ClientToServer, `{}`)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Write after Close: %v", err)
	}
	if err := w.Flush(t.Context()); !errors.Is(err, ErrClosed) {
		t.Fatalf("Flush after Close: %v", err)
	}
	got, _, _ := readTape(t, buf.Bytes(), false)
	last := got[len(got)-1]
	var sd StatsData
	if last.Event != EventStats || json.Unmarshal(last.Data, &sd) != nil || last.Time != t0.UnixNano() {
		t.Fatalf("last record %+v", last)
	}
	if sd.Records != 2 || sd.Messages != 1 || sd.Frames != 1 {
		t.Fatalf("stats data %+v", sd)
	}
}

// TestFlushInterval: without Flush, records reach the destination within
// the flush interval, each batch as its own frame.
func TestFlushInterval(t *testing.T) {
	dst := &slowWriter{}
	w, err := NewWriter(dst, testHeader(), WithFlushInterval(10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for i := range 3 {
		if err := w.Write(msg(int64(i), ClientToServer, `{}`)); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(5 * time.Second) // generous: the machine may be loaded
		for w.Stats().Frames < int64(i+2) {
			if time.Now().After(deadline) {
				t.Fatalf("record %d not written after 5s: %+v", i, w.Stats())
			}
			time.Sleep(time.Millisecond)
		}
	}
	dst.mu.Lock()
	data := bytes.Clone(dst.buf.Bytes())
	dst.mu.Unlock()
	if got, _, warn := readTape(t, data, true); len(got) != 3 || warn != nil {
		t.Fatalf("read %d records, warning %v", len(got), warn)
	}
}

// TestFlushBytes: a batch is cut as soon as it reaches the flush size.
func TestFlushBytes(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, testHeader(), WithFlushBytes(1000), WithMaxQueued(1000), WithFlushInterval(1<<40))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range messages200(50) {
		w.Write(r)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// 50 lines of about 260 bytes, cut every 4: 13 frames, plus the header's.
	if st := w.Stats(); st.Frames < 13 || st.Frames > 15 {
		t.Fatalf("frames %d", st.Frames)
	}
}

// TestStorageBound: whatever its bytes, a message frame of n bytes takes at
// most base64's 4*ceil(n/3) bytes in its record line, so that a Reader with
// the limit MaxRecordFor(largest frame) reads every message back. Before,
// text of control bytes took 6 bytes a byte ("\u0001"). The frames are
// small, the relation is what counts: DefaultMaxRecord is MaxRecordFor of
// the capture proxy's 256 MiB frames.
func TestStorageBound(t *testing.T) {
	const n = 3*40_000 + 1 // odd size: base64 pads
	fill := func(pattern string) []byte {
		b := bytes.Repeat([]byte(pattern), n/len(pattern)+1)
		return b[:n]
	}
	jsonFrame := append(append([]byte(`"`), fill("json ")[:n-2]...), '"')
	tests := []struct {
		name  string
		frame []byte
		kind  frameKind
	}{
		{"control bytes: base64, not 6x text", fill("\x01"), frameB64},
		{"quotes: base64, not 2x text", fill(`"`), frameB64},
		{"half control bytes: base64", fill("a\x02"), frameB64},
		{"CRLF lines: text", fill(strings.Repeat("line ", 20) + "\r\n"), frameText},
		{"tabs and newlines, 2x: base64", fill("\t\n"), frameB64},
		{"one escape in three: text", fill("ab\n"), frameText},
		{"plain text: text", fill("plain text "), frameText},
		{"JSON: verbatim", jsonFrame, frameJSON},
		{"invalid UTF-8: base64", fill("\xff\xfe"), frameB64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &Record{Type: TypeMessage, Time: 1748779200000000000, Session: "http-7f3a", Dir: ServerToClient,
				Exchange: 12, Stream: "sse", EventID: "evt-42", NoEOL: true, Frame: tt.frame}
			if got := storage(rec.Frame); got != tt.kind {
				t.Fatalf("stored as %d, want %d", got, tt.kind)
			}
			empty := *rec
			empty.Frame = nil
			meta := len(appendRecord(nil, &empty, frameText, nil)) // the line with "text":""
			bound := meta + 4*((n+2)/3)
			line := appendRecord(nil, rec, storage(rec.Frame), nil)
			if len(line) > bound {
				t.Fatalf("line of %d bytes for a frame of %d: over %d", len(line), n, bound)
			}
			// The Reader reads it back with the bound as its limit. The
			// record gets a frame of its own (flush bytes 1000): a frame
			// over the limit would be decoded as a stream, and this one,
			// smaller than the zstd window, needs its whole size as window.
			data := writeTape(t, []*Record{rec}, WithFlushBytes(1000), WithMaxQueued(1000))
			got, _, warn := readTape(t, data, true, WithMaxRecord(bound))
			if warn != nil || len(got) != 1 {
				t.Fatalf("read %d records, warning %v", len(got), warn)
			}
			if d := diffRecord(rec, got[0]); d != "" {
				t.Fatal(d)
			}
		})
	}
	if got, want := MaxRecordFor(256<<20), 4*((256<<20+2)/3)+1<<20; got != want || DefaultMaxRecord != want {
		t.Errorf("MaxRecordFor(256 MiB) = %d, DefaultMaxRecord = %d, want %d", got, DefaultMaxRecord, want)
	}
	if MaxRecordFor(-1) != MaxRecordFor(0) {
		t.Errorf("MaxRecordFor(-1) = %d", MaxRecordFor(-1))
	}
}

// TestEncoderWindow: the zstd window fits the flush size (a power of two,
// 1 to 8 MiB) instead of zstd's default 8 MiB, whose 16 MiB history buffer
// frames of about the flush size never use. A frame bigger than its window
// says so in its header, and readers then need only the window in memory.
func TestEncoderWindow(t *testing.T) {
	tests := []struct {
		name   string
		flush  int
		record int // bytes of the one big record
		window uint64
	}{
		{"default flush bytes", DefaultFlushBytes, 3 << 20, 1 << 20},
		{"tiny flush bytes", 1000, 2 << 20, 1 << 20},
		{"3 MiB flush bytes", 3 << 20, 5 << 20, 4 << 20},
		{"huge flush bytes: capped", 64 << 20, 9 << 20, 8 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			w, err := NewWriter(&buf, testHeader(), WithFlushBytes(tt.flush), WithMaxQueued(max(tt.flush, DefaultMaxQueued)))
			if err != nil {
				t.Fatal(err)
			}
			start := buf.Len() // after the header's frame
			frame := []byte(`"` + strings.Repeat("window ", tt.record/7) + `"`)
			if err := w.Write(&Record{Type: TypeMessage, Time: 1, Frame: frame}); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			var h zstd.Header
			if err := h.Decode(buf.Bytes()[start:]); err != nil {
				t.Fatal(err)
			}
			if h.SingleSegment || h.WindowSize != tt.window {
				t.Fatalf("frame of %d bytes: window %d (single segment %v), want %d", h.FrameContentSize, h.WindowSize, h.SingleSegment, tt.window)
			}
			if got, _, warn := readTape(t, buf.Bytes(), true); warn != nil || len(got) != 1 || !bytes.Equal(got[0].Frame, frame) {
				t.Fatalf("read back %d records, warning %v", len(got), warn)
			}
		})
	}
}
