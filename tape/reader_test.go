package tape

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// framedTape writes recs in batches of per records, one zstd frame each,
// and returns the tape with the offset where each frame starts.
func framedTape(t *testing.T, recs []*Record, per int) ([]byte, []int) {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, testHeader(), WithClock(fixedClock()), WithFlushInterval(1<<40))
	if err != nil {
		t.Fatal(err)
	}
	starts := []int{0, buf.Len()} // the header frame, then the first batch
	for i, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
		if (i+1)%per == 0 {
			if err := w.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
			starts = append(starts, buf.Len())
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), starts
}

// TestTruncatedTail cuts a tape at every byte offset of its last frames:
// every record of the complete frames comes back, then a warning.
func TestTruncatedTail(t *testing.T) {
	recs := mcpTraffic(60, 7)
	data, starts := framedTape(t, recs, 20) // frames: header, 3 x 20 records, stats
	for cut := starts[len(starts)-3]; cut < len(data); cut++ {
		completeFrames := 0
		for _, s := range starts[1:] {
			if s <= cut {
				completeFrames++
			}
		}
		want := min(20*(completeFrames-1), len(recs)) // records in complete frames
		got, _, warn := readTape(t, data[:cut], true)
		if len(got) != want {
			t.Fatalf("cut at %d: read %d records, want %d", cut, len(got), want)
		}
		for i := range got {
			if d := diffRecord(recs[i], got[i]); d != "" {
				t.Fatalf("cut at %d: record %d: %s", cut, i, d)
			}
		}
		atBoundary := slices.Contains(starts, cut)
		if atBoundary != (warn == nil) {
			t.Fatalf("cut at %d (frame boundary %v): warning %v", cut, atBoundary, warn)
		}
		if warn == nil {
			continue
		}
		var te *TailError
		if !errors.As(warn, &te) || te.Records != int64(want) ||
			!strings.Contains(warn.Error(), fmt.Sprintf("tape cut after %d records: ", want)) {
			t.Fatalf("cut at %d: warning %v, want a TailError after %d records", cut, warn, want)
		}
	}
}

// TestCorruptFrame flips bytes inside the middle frame: the first frame's
// records come back, none of the corrupt frame's, and a warning.
func TestCorruptFrame(t *testing.T) {
	recs := mcpTraffic(60, 8)
	data, starts := framedTape(t, recs, 20)
	from, to := starts[2], starts[3] // the second batch
	for _, off := range []int{from + 6, from + 12, (from + to) / 2, to - 5, to - 1} {
		bad := bytes.Clone(data)
		bad[off] ^= 0x55
		got, _, warn := readTape(t, bad, false)
		if len(got) != 20 {
			t.Errorf("flip at %d: read %d records, want 20", off, len(got))
		}
		for i := range got {
			if d := diffRecord(recs[i], got[i]); d != "" {
				t.Fatalf("flip at %d: record %d: %s", off, i, d)
			}
		}
		if warn == nil || !strings.Contains(warn.Error(), "tape cut after 20 records: frame 3 at byte") {
			t.Errorf("flip at %d: warning %v", off, warn)
		}
	}
}

func TestNotATape(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(`{"type":"header","format":1}` + "\n"))
	zw.Close()
	zstdOf := func(s string) []byte {
		enc, _ := zstd.NewWriter(nil)
		defer enc.Close()
		return enc.EncodeAll([]byte(s), nil)
	}
	tape := writeTape(t, nil)
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "not a tape: empty file"},
		{"text", []byte("hello, world\nsecond line\n"), `not a tape: not zstd data (starts with "hello, world\nsec")`},
		{"gzip", gz.Bytes(), "not a tape: gzip data, not zstd"},
		{"binary", []byte{0, 1, 2, 3, 4}, "not a tape: not zstd data (starts with 00 01 02 03 04)"},
		{"short", []byte{0x28, 0xb5}, "not a tape: not zstd data"},
		{"zstd of text", zstdOf("just text\n"), "not a tape: no header record: line 1: invalid record: not a JSON object"},
		{"zstd of other JSON", zstdOf(`{"type":"message","frame":1}` + "\n"), `not a tape: first record is of type "message", not a header`},
		{"no format", zstdOf(`{"type":"header"}` + "\n"), "not a tape: header without a format version"},
		{"newer format", zstdOf(`{"type":"header","format":2}` + "\n"), "tape format 2 is newer than this reader's (1)"},
		{"empty zstd", zstdOf(""), "not a tape: no header record (no data)"},
		{"cut header", tape[:len(tape)/4], "not a tape: no header record: frame 1 at byte 0: unexpected EOF"},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, "x.txt")
			if err := os.WriteFile(path, tt.data, 0o600); err != nil {
				t.Fatal(err)
			}
			r, err := Open(path)
			if err == nil {
				r.Close()
				t.Fatal("Open succeeded")
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, path+": ") || !strings.Contains(msg, tt.want) || strings.Contains(msg, "\n") {
				t.Fatalf("error %q: want one line %q", msg, path+": ..."+tt.want)
			}
		})
	}
	if _, err := Open(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// TestStreamFallback reads a tape made of one big frame as the zstd
// command writes it, with frames too big to check in memory.
func TestStreamFallback(t *testing.T) {
	recs := mcpTraffic(3000, 9)
	plain := bytes.Clone(zstdDecode(t, writeTape(t, recs)))
	var one bytes.Buffer
	enc, _ := zstd.NewWriter(&one, zstd.WithWindowSize(1<<16))
	enc.Write(plain)
	enc.Close()
	for _, tc := range []struct {
		name   string
		data   []byte
		opts   []ReaderOption
		cut    bool
		stream bool // decoded as a stream, not checked whole
	}{
		{"one stream frame", one.Bytes(), []ReaderOption{WithMaxRecord(64 << 10)}, false, true},
		{"one stream frame, default limits", one.Bytes(), nil, false, false},
		{"one stream frame, cut", one.Bytes()[:one.Len()*2/3], []ReaderOption{WithMaxRecord(64 << 10)}, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewReader(bytes.NewReader(tc.data), tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			for err == nil {
				_, err = r.Next()
			}
			if (r.stream != nil) != tc.stream {
				t.Errorf("stream decoding %v, want %v", r.stream != nil, tc.stream)
			}
			r.Close()
			got, _, warn := readTape(t, tc.data, true, tc.opts...)
			if (warn != nil) != tc.cut {
				t.Fatalf("warning %v", warn)
			}
			if !tc.cut && len(got) != len(recs) {
				t.Fatalf("read %d records, want %d", len(got), len(recs))
			}
			if tc.cut && (len(got) == 0 || len(got) == len(recs)) {
				t.Fatalf("cut stream: read %d records", len(got))
			}
			for i := range got {
				if d := diffRecord(recs[i], got[i]); d != "" {
					t.Fatalf("record %d: %s", i, d)
				}
			}
		})
	}
	t.Run("record over the limit", func(t *testing.T) {
		big := []*Record{msg(1, ClientToServer, `"`+strings.Repeat("a", 10000)+`"`)}
		_, _, warn := readTape(t, writeTape(t, big), true, WithMaxRecord(4096))
		if warn == nil || !strings.Contains(warn.Error(), "limit of 4096 bytes") {
			t.Fatalf("warning %v", warn)
		}
	})
}

func zstdDecode(t *testing.T, data []byte) []byte {
	t.Helper()
	dec, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	out, err := dec.DecodeAll(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestOddStreams: concatenated tapes, skippable frames, frames cutting a
// line in two, blank lines and a last line without a newline.
func TestOddStreams(t *testing.T) {
	a := writeTape(t, []*Record{msg(1, ClientToServer, `{"a":1}`)})
	skippable := binary.LittleEndian.AppendUint32(nil, 0x184D2A5E)
	skippable = binary.LittleEndian.AppendUint32(skippable, 3)
	skippable = append(skippable, "xyz"...)
	enc, _ := zstd.NewWriter(nil)
	defer enc.Close()
	split := enc.EncodeAll([]byte(`{"type":"header","format":1}`+"\n\n"+`{"type":"message","fr`), nil)
	split = enc.EncodeAll([]byte(`ame":{"b":2}}`+"\n  \n"+`{"type":"event","event":"x"}`), split)

	joined := append(append(bytes.Clone(a), skippable...), a...)
	got, _, warn := readTape(t, joined, true)
	// The second header starts a segment (segment.go), not a record.
	if warn != nil || len(got) != 2 || got[1].Session != "r2/s1" || string(got[1].Frame) != `{"a":1}` {
		t.Errorf("concatenated: %d records, warning %v", len(got), warn)
	}
	// Garbage after a skippable frame is reported at its true offset.
	_, _, warn = readTape(t, append(append(bytes.Clone(a), skippable...), "junk"...), true)
	if want := fmt.Sprintf("frame 4 at byte %d: not a zstd frame", len(a)+len(skippable)); warn == nil || !strings.Contains(warn.Error(), want) {
		t.Errorf("junk after a skippable frame: warning %v, want %q", warn, want)
	}
	got, _, warn = readTape(t, split, true)
	if warn != nil || len(got) != 2 || string(got[0].Frame) != `{"b":2}` || got[1].Event != "x" {
		t.Errorf("split lines: %d records, warning %v", len(got), warn)
	}
}

// TestZstdcatJq checks the promise that standard tools read a tape.
func TestZstdcatJq(t *testing.T) {
	if _, err := exec.LookPath("zstdcat"); err != nil {
		t.Skip("zstdcat not installed")
	}
	if _, err := exec.LookPath("jq"); err != nil {
		t.Skip("jq not installed")
	}
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no POSIX shell (sh) on this system")
	}
	path := filepath.Join(t.TempDir(), "t.jsonl.zst")
	recs := append(mcpTraffic(200, 3), msg(5, ServerToClient, "\xff\xfe"), msg(6, ServerToClient, "a\nb"))
	if err := os.WriteFile(path, writeTape(t, recs), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", `zstdcat "$1" | jq -c 'select(.type=="message") | .frame // .text // .b64' | wc -l`, "sh", path)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	messages := 0
	for _, r := range recs {
		if r.Type == TypeMessage {
			messages++
		}
	}
	if strings.TrimSpace(string(out)) != fmt.Sprint(messages) {
		t.Fatalf("jq saw %s messages, want %d", out, messages)
	}
}

// FuzzReader: no input makes the Reader panic or hang.
func FuzzReader(f *testing.F) {
	f.Add(writeTape(f, mcpTraffic(20, 1)))
	f.Add(writeTape(f, []*Record{msg(1, ClientToServer, "\xff"), msg(2, ServerToClient, "a b")}))
	// Frames stored raw and without checksum, so that mutations reach the
	// record parser.
	raw, _ := zstd.NewWriter(nil, zstd.WithEncoderCRC(false), zstd.WithNoEntropyCompression(true), zstd.WithEncoderLevel(zstd.SpeedFastest))
	f.Add(raw.EncodeAll([]byte(`{"type":"header","format":1}`+"\n"+`{"type":"message","time":1,"text":"a\n","session":"s"}`+"\n"+`{"type":"event","event":"e","data":{"x":[1]}}`), nil))
	raw.Close()
	f.Add([]byte{})
	f.Add([]byte("\x28\xb5\x2f\xfd"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data), WithMaxRecord(1<<20))
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		defer r.Close()
		for n := 0; ; n++ {
			rec, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil || rec == nil {
				t.Fatalf("Next: %v, %v", rec, err)
			}
			if n > len(data) {
				t.Fatal("more records than input bytes")
			}
		}
		if r.Records() > int64(len(data)) {
			t.Fatal("record count")
		}
	})
}

// TestReaderScansLinearly: the Reader searches each decompressed byte for
// '\n' once, however many chunks a long line arrives in. Before, it searched
// the whole pending line again on every chunk: quadratic in the line length
// (seconds for a 64 MiB record). The count of bytes searched catches that
// without timing anything.
func TestReaderScansLinearly(t *testing.T) {
	filler := func(n int, seed byte) []byte { // compressible but not trivially
		b := make([]byte, n)
		for i := range b {
			b[i] = 'a' + byte((i*7+i/13+int(seed))%26)
		}
		return b
	}
	long := func(n int, seed byte) *Record {
		return &Record{Type: TypeMessage, Time: 1, Dir: ServerToClient,
			Frame: []byte(`{"jsonrpc":"2.0","id":1,"result":{"text":"` + string(filler(n, seed)) + `"}}`)}
	}
	noTimer := []Option{WithFlushInterval(1 << 40)}
	tests := []struct {
		name    string
		recs    []*Record
		wopts   []Option
		ropts   []ReaderOption
		records int // including the stats event
	}{
		// 0.85 MiB of short records and a 3.5 MiB one make a frame bigger
		// than the record limit, decoded as a stream from there on, in
		// chunks of at most a zstd block (128 KiB): each long line comes in
		// some 25 of them.
		{"stream, long lines", append(messages200(3000), long(7<<19, 0), long(3<<20, 1), msg(2, ClientToServer, `{}`)),
			noTimer, []ReaderOption{WithMaxRecord(4 << 20)}, 3004},
		{"whole frames, long lines", []*Record{long(3<<20, 0), long(3<<20, 1)}, nil, nil, 3},
		{"whole frames, short lines", messages200(5000), nil, nil, 5001},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := writeTape(t, tt.recs, tt.wopts...)
			total := int64(len(zstdDecode(t, data)))
			r, err := NewReader(bytes.NewReader(data), tt.ropts...)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			n := 0
			for {
				if _, err := r.Next(); err == io.EOF {
					break
				} else if err != nil {
					t.Fatal(err)
				}
				n++
			}
			if r.Warning() != nil || n != tt.records {
				t.Fatalf("read %d records, warning %v", n, r.Warning())
			}
			if r.stream == nil && strings.HasPrefix(tt.name, "stream") {
				t.Fatal("the tape was not read as a stream: the test does not test chunks")
			}
			if r.scanned != total {
				t.Fatalf("searched %d bytes for newlines, want each of the %d decompressed bytes once", r.scanned, total)
			}
		})
	}
}

// bombTape is a tape's header frame followed by one zstd frame (no content
// size: it is decoded as a stream) of prefix and n bytes of 'A', with no
// newline: a few KB that decompress to far more than the record limit.
func bombTape(t *testing.T, prefix string, n int) []byte {
	t.Helper()
	var out bytes.Buffer
	w, err := NewWriter(&out, testHeader())
	if err != nil {
		t.Fatal(err)
	}
	hdr := bytes.Clone(out.Bytes()) // the header frame, written by NewWriter
	w.Close()
	out.Reset()
	out.Write(hdr)
	enc, err := zstd.NewWriter(&out, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithWindowSize(1<<20))
	if err != nil {
		t.Fatal(err)
	}
	enc.Write([]byte(prefix))
	chunk := bytes.Repeat([]byte("A"), 1<<20)
	for n > 0 {
		k := min(n, len(chunk))
		enc.Write(chunk[:k])
		n -= k
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// TestReaderLongLineBounded: a line longer than the record limit ends
// reading with a warning, and the reader never holds more than the limit
// plus one chunk of it; a line that cannot be a record (no '{') is refused
// after its first chunk.
func TestReaderLongLineBounded(t *testing.T) {
	const limit = 2<<20 + 1 // just over a capacity that doubling reaches
	tests := []struct {
		name, prefix string
		want         string // in the warning
		maxPeak      int    // largest buffer allowed
	}{
		{"not an object", "", `invalid record: starts with "AAAAAAAAAAAAAAAA"..., not a JSON object`, 2 * streamChunk},
		{"object too long", `{"type":"message","frame":"`, "longer than 2097153 bytes", limit + streamChunk},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewReader(bytes.NewReader(bombTape(t, tt.prefix, 16<<20)), WithMaxRecord(limit))
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if _, err := r.Next(); err != io.EOF {
				t.Fatalf("Next: %v, want io.EOF", err)
			}
			if w := r.Warning(); w == nil || !strings.Contains(w.Error(), "line 2: "+tt.want) {
				t.Fatalf("warning %v, want %q", w, tt.want)
			}
			if r.bufPeak > tt.maxPeak {
				t.Fatalf("buffer grew to %d bytes, want at most %d", r.bufPeak, tt.maxPeak)
			}
		})
	}
}

// TestReadHeader: the header of a tape, from the start of its file; a
// file that is not a tape is an ErrNotTape, a missing file another error.
func TestReadHeader(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "text.jsonl.zst")
	if err := os.WriteFile(text, []byte("hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path    string
		notTape bool
		err     bool
	}{
		{"../testdata/tapes/basic.jsonl.zst", false, false},
		{text, true, true},
		{filepath.Join(dir, "missing.jsonl.zst"), false, true},
	} {
		h, err := ReadHeader(tc.path)
		if (err != nil) != tc.err || errors.Is(err, ErrNotTape) != tc.notTape {
			t.Errorf("%s: error %v, want error %v, not a tape %v", tc.path, err, tc.err, tc.notTape)
			continue
		}
		if err != nil {
			continue
		}
		r, err := Open(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprintf("%+v", *h) != fmt.Sprintf("%+v", *r.Header()) {
			t.Errorf("%s: header %+v, want Open's %+v", tc.path, h, r.Header())
		}
		r.Close()
	}
}
