package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/tape"
)

// TestRecordHTTPRotate records one session across several rotations: every
// message lands in exactly one tape, the tapes are numbered with their
// series in the header, and inspect, show and export over the directory
// join them into one session.
func TestRecordHTTPRotate(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ ID int }
		json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Mcp-Session-Id", "S1")
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"result":{}}`, req.ID)
	}))
	defer up.Close()
	dir := t.TempDir()
	run := startHTTPRecord(t, "--listen", "127.0.0.1:0", "--upstream", up.URL+"/mcp", "-o", filepath.Join(dir, "r.jsonl.zst"),
		"--rotate", "250ms", "--flush", "10ms")
	const n = 40
	for i := 1; i <= n; i++ {
		session := "S1"
		if i == 1 {
			session = "" // the server assigns it
		}
		peertest.ReadAnswer(t, peertest.PostJSON(t, nil, run.url, session, "", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i)))
		time.Sleep(25 * time.Millisecond)
	}
	if err := run.stop(); err != nil {
		t.Fatalf("run: %v\n%s", err, run.stderr)
	}
	segs, err := tape.ListSeries(dir, "r")
	if err != nil {
		t.Fatal(err)
	}
	if len(segs) < 3 {
		t.Fatalf("%d tapes after about a second at --rotate 250ms", len(segs))
	}
	seen := map[string]int{}
	series := ""
	for i, s := range segs {
		hdr, recs := readTapeFile(t, s.Path)
		if hdr.Segment == nil || hdr.Segment.Seq != i+1 || (series != "" && hdr.Segment.Series != series) {
			t.Fatalf("%s: segment %+v", s.Path, hdr.Segment)
		}
		series = hdr.Segment.Series
		for _, r := range recs {
			if r.Type == tape.TypeMessage {
				seen[string(r.Dir)+string(r.Frame)]++
			}
		}
	}
	if len(seen) != 2*n {
		t.Fatalf("%d distinct messages over the tapes, want %d", len(seen), 2*n)
	}
	for m, c := range seen {
		if c != 1 {
			t.Fatalf("%s recorded %d times", m, c)
		}
	}
	code, out, errs := runCLI(t, "", "inspect", "--format", "json", dir)
	if code != 0 {
		t.Fatalf("inspect: %d %s", code, errs)
	}
	var rep struct {
		Sessions []struct{ ID string }
		Tape     struct{ Messages int }
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("inspect output: %v\n%s", err, out)
	}
	if len(rep.Sessions) != 1 || rep.Sessions[0].ID != "S1" || rep.Tape.Messages != 2*n {
		t.Errorf("inspect of the directory: %+v, want session S1 with %d messages", rep, 2*n)
	}
	code, out, errs = runCLI(t, "", "show", "--format", "ndjson", dir)
	if got := strings.Count(out, `"type":"message"`); code != 0 || got != 2*n {
		t.Errorf("show: code %d, %d messages, want %d\n%s", code, got, 2*n, errs)
	}
	paths := make([]string, len(segs))
	for i, s := range segs {
		paths[i] = s.Path
	}
	code, out, errs = runCLI(t, "", append([]string{"export", "--format", "ndjson"}, paths...)...)
	if code != 0 || strings.Count(out, "\n") != 2*n {
		t.Errorf("export: code %d, %d lines, want %d\n%s", code, strings.Count(out, "\n"), 2*n, errs)
	}
}

func TestRotateFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--keep", "1h"}, "give --rotate or --rotate-size too"},
		{[]string{"--keep-size", "1G"}, "give --rotate or --rotate-size too"},
		{[]string{"--rotate", "-1s"}, `invalid argument "-1s" for "--rotate" flag: a duration must not be negative`},
		{[]string{"--rotate", "1h", "--keep", "-1h"}, `invalid argument "-1h" for "--keep" flag: a duration must not be negative`},
	} {
		// The whole command line: a negative duration is refused as the
		// command's flags are parsed.
		code, _, stderr := runCLI(t, "", append([]string{"record", "--upstream", "http://127.0.0.1:1/mcp", "-o", filepath.Join(t.TempDir(), "t.jsonl.zst")}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%q: exit %d, stderr %q; want 2 and one line with %q", tc.args, code, stderr, tc.want)
		}
	}
	if _, _, _, err := parseHTTPFlags(t, []string{"--rotate-size", "12Q"}); err == nil || !strings.Contains(err.Error(), "want a size") {
		t.Errorf("--rotate-size 12Q: %v", err)
	}
}

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"123", 123, true}, {"64k", 64 << 10, true}, {"100M", 100 << 20, true}, {"2G", 2 << 30, true},
		{"1.5MiB", 3 << 19, true}, {"10MB", 10 << 20, true}, {"1T", 1 << 40, true},
		{"", 0, false}, {"M", 0, false}, {"-1k", 0, false}, {"12Q", 0, false}, {"1e30G", 0, false},
		{"NaN", 0, false}, {"nanM", 0, false}, // was a negative size, refused only once the tape was opened (exit 1)
	} {
		got, err := parseSize(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseSize(%q) = %d, %v", tc.in, got, err)
		}
	}
}

// TestPrune deletes old tapes, spares the newest of each rotated series
// and recent tapes, and deletes nothing with --dry-run.
func TestPrune(t *testing.T) {
	now := time.Now()
	old := now.Add(-48 * time.Hour)
	for _, dry := range []bool{true, false} {
		dir := t.TempDir()
		files := map[string]time.Time{
			tape.SegmentName("a", 1, old): old, tape.SegmentName("a", 2, old): old, tape.SegmentName("a", 3, old): old,
			tape.SegmentName("b", 7, old): old, tape.SegmentName("b", 8, now): now,
			"old.jsonl.zst": old, "new.jsonl.zst": now, "notes.txt": old,
		}
		for name, mt := range files {
			p := filepath.Join(dir, name)
			if err := os.WriteFile(p, smallTape(t, tape.ToolName), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(p, mt, mt); err != nil {
				t.Fatal(err)
			}
		}
		args := []string{"prune", dir, "--older-than", "24h"}
		if dry {
			args = append(args, "--dry-run")
		}
		code, out, errs := runCLI(t, "", args...)
		if code != 0 {
			t.Fatalf("prune: %d %s", code, errs)
		}
		want := []string{tape.SegmentName("a", 1, old), tape.SegmentName("a", 2, old), tape.SegmentName("b", 7, old), "old.jsonl.zst"}
		for _, w := range want {
			if !strings.Contains(out, filepath.Join(dir, w)+"\n") {
				t.Errorf("dry %v: %s not listed:\n%s", dry, w, out)
			}
			_, err := os.Stat(filepath.Join(dir, w))
			if gone := os.IsNotExist(err); gone == dry {
				t.Errorf("dry %v: %s gone: %v", dry, w, gone)
			}
		}
		if strings.Count(out, "\n") != len(want) {
			t.Errorf("dry %v: listed\n%s", dry, out)
		}
	}
	if code, _, errs := runCLI(t, "", "prune", t.TempDir()); code != 2 || !strings.Contains(errs, "--older-than") {
		t.Errorf("prune without --older-than: %d %s", code, errs)
	}
}

// TestShowJoinsRecordings: two recordings given together are merged in
// time order with their sessions kept apart by recording.
func TestShowJoinsRecordings(t *testing.T) {
	tp := fixture("operations")
	code, out, errs := runCLI(t, "", "show", tp, tp)
	if code != 0 {
		t.Fatalf("show: %d %s", code, errs)
	}
	_, single, _ := runCLI(t, "", "show", tp)
	for _, p := range []string{"r1/", "r2/"} {
		// Everything but the writer's stats event, which is one tape's.
		if got, want := strings.Count(out, " "+p), strings.Count(single, "\n")-strings.Count(single, " stats "); got != want {
			t.Errorf("%d lines of %s, want %d", got, p, want)
		}
	}
}

// TestInspectReportsGap: the gap marker a recovering writer leaves is
// listed by inspect among the proxy's errors.
func TestInspectReportsGap(t *testing.T) {
	tp := filepath.Join(t.TempDir(), "g.jsonl.zst")
	w, err := tape.Create(tp, tape.Header{Transport: "http"})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(tape.GapData{Error: "tape gap: 7 records not recorded from A to B: no space left on device", Gap: tape.GapInfo{Lost: 7, From: 1, To: 2, Cause: "no space left on device"}})
	if err := w.Write(&tape.Record{Type: tape.TypeEvent, Time: 5, Event: tape.EventError, Data: data}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "", "inspect", tp)
	if code != 0 || !strings.Contains(out, "tape gap: 7 records not recorded") {
		t.Errorf("inspect: %d %s\n%s", code, errs, out)
	}
}

func TestRecordFilterFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--sample", "2"}, "--sample 2: want a share from 0 to 1"},
		{[]string{"--sample", "-0.5"}, "want a share"},
		{[]string{"--seed", "3"}, "give --sample too"},
		{[]string{"--record-only", "tools/*", "--skip", "tools/*"}, `--record-only "tools/*" and --skip "tools/*" contradict each other`},
		{[]string{"--skip", "ping", "--record-only", "tools/list", "--skip", "x", "--record-only", "ping"}, `--record-only "ping" and --skip "ping"`},
	} {
		h, fs, _, err := parseHTTPFlags(t, append([]string{"--upstream", "http://127.0.0.1:1/mcp"}, tc.args...))
		if err == nil {
			_, err = h.httpMode(fs, fs.Args())
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.args, err, tc.want)
		}
	}
	for _, args := range [][]string{{"--sample", "0.5", "--seed", "7"}, {"--sample", "0.25"}} {
		h, fs, _, err := parseHTTPFlags(t, append([]string{"--upstream", "http://127.0.0.1:1/mcp"}, args...))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.httpMode(fs, fs.Args()); err != nil {
			t.Fatal(err)
		}
		var extra struct {
			Sample *float64
			Seed   *uint64
		}
		json.Unmarshal(httpHeader(tape.Header{}, h, "127.0.0.1:1", time.Now()).Extra, &extra)
		if extra.Sample == nil || extra.Seed == nil || (len(args) == 4 && *extra.Seed != 7) {
			t.Errorf("%q: header extra sample %v seed %v", args, extra.Sample, extra.Seed)
		}
	}
	code, _, errs := runCLI(t, "", "record", "--upstream", "http://127.0.0.1:1/mcp", "--record-only", "tools/[x", "-o", filepath.Join(t.TempDir(), "x.jsonl.zst"))
	if code != 2 || !strings.Contains(errs, `record-only "tools/[x"`) {
		t.Errorf("bad glob: %d %s", code, errs)
	}
	code, _, errs = runCLI(t, "", "record", "--upstream", "http://127.0.0.1:1/mcp", "--record-only", "tools/*", "--skip", "tools/*", "-o", filepath.Join(t.TempDir(), "x.jsonl.zst"))
	if code != 2 || !strings.Contains(errs, "contradict each other") {
		t.Errorf("a pattern kept and skipped: %d %s", code, errs)
	}
}

// TestInspectManyProxies: tapes of two proxies in front of two replicas,
// with the same session id, stay two sessions when merged (inspect
// --merge, report), and are two reports without --merge.
func TestInspectManyProxies(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for i, host := range []string{"pod-a", "pod-b"} {
		p := filepath.Join(dir, host+".jsonl.zst")
		w, err := tape.Create(p, tape.Header{Transport: "http", Host: host, Time: int64(1e18)})
		if err != nil {
			t.Fatal(err)
		}
		base := int64(1e18) + int64(i)*1000
		for k, rec := range []tape.Record{
			{Type: tape.TypeEvent, Event: tape.EventOpen, Data: []byte(`{"kind":"streamable","how":"assigned"}`)},
			{Type: tape.TypeMessage, Dir: tape.ClientToServer, Frame: []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`), Exchange: 1},
			{Type: tape.TypeMessage, Dir: tape.ServerToClient, Frame: []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), Exchange: 1},
			{Type: tape.TypeEvent, Event: tape.EventClose, Data: []byte(`{"by":"client","reason":"delete"}`)},
		} {
			rec.Session, rec.Time = "S1", base+int64(k)*1e6
			if err := w.Write(&rec); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	code, out, errs := runCLI(t, "", append([]string{"inspect", "--merge", "--format", "json"}, paths...)...)
	if code != 0 {
		t.Fatalf("inspect --merge: %d %s", code, errs)
	}
	var rep struct{ Sessions []struct{ ID string } }
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range rep.Sessions {
		ids = append(ids, s.ID)
	}
	if got := strings.Join(ids, " "); got != "pod-a/S1 pod-b/S1" {
		t.Errorf("merged sessions %q, want pod-a/S1 pod-b/S1", got)
	}
	code, out, _ = runCLI(t, "", "inspect", "--format", "json", dir)
	if code != 0 || strings.Count(out, `"file":`) != 2 {
		t.Errorf("inspect DIR without --merge: code %d, %d reports, want 2", code, strings.Count(out, `"file":`))
	}
	html := filepath.Join(t.TempDir(), "r.html")
	if code, _, errs := runCLI(t, "", append([]string{"report", "-o", html}, paths...)...); code != 0 {
		t.Fatalf("report: %d %s", code, errs)
	}
	if b, _ := os.ReadFile(html); !strings.Contains(string(b), "pod-a/S1") || !strings.Contains(string(b), "pod-b/S1") {
		t.Error("the report does not name both proxies' sessions")
	}
}
