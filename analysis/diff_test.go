package analysis

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/tape"
)

// update rewrites the golden outputs of testdata/analysis instead of
// comparing with them: go test ./analysis -run X -update. The input tapes
// there are left as they are: the goldens are rendered from them.
var update = flag.Bool("update", false, "rewrite the golden outputs in ../testdata/analysis (not the input tapes)")

// writeFixtures rewrites the hand-made input tapes of testdata/analysis
// from their steps (the command tests read them too); -fixtures -update
// rewrites both the tapes and the goldens rendered from them.
var writeFixtures = flag.Bool("fixtures", false, "rewrite the hand-made fixture tapes in ../testdata/analysis")

// tick is the time step of the hand-made tapes of diff, export and report.
const tick = time.Millisecond

// goldenDir is where the outputs of diff, export and report are kept.
const goldenDir = "../testdata/analysis"

// golden compares got with the golden file name under goldenDir, or
// rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join(goldenDir, name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run with -update if the change is intended):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// fixtureTape writes steps as a tape: into goldenDir with -fixtures (so
// that the command tests can use it), else into a temporary directory.
func fixtureTape(t *testing.T, name string, steps []step) string {
	t.Helper()
	if *writeFixtures {
		path := filepath.Join(goldenDir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		writeTape(t, path, steps)
		return path
	}
	path := filepath.Join(t.TempDir(), filepath.Base(name))
	writeTape(t, path, steps)
	sameAsCommitted(t, path, filepath.Join(goldenDir, name))
	return path
}

// sameAsCommitted fails the test when the fixture tape generated from its
// steps differs from the committed one, which other tests (and the
// command's) read: the steps changed without -fixtures. The comparison is
// byte for byte, as the cut fixture depends on the compressed layout.
func sameAsCommitted(t *testing.T, generated, committed string) {
	t.Helper()
	got, err := os.ReadFile(generated)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(committed)
	if err != nil {
		t.Fatalf("%v (run go test ./analysis -fixtures -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is not what its generator writes now (run go test ./analysis -fixtures -update and review the golden diffs)", committed)
	}
}

// diffRecorded is a recorded session: initialize, a tool list, a tool call
// with progress, a failing call.
func diffRecorded() []step {
	return []step{
		evt(0, tape.EventOpen, `{"pid":1}`),
		c2s(1*tick, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"cli","version":"1.0"}}}`),
		s2c(5*tick, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"srv","version":"2.0"}}}`),
		c2s(6*tick, `{"jsonrpc":"2.0","method":"notifications/initialized"}`),
		c2s(7*tick, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`),
		c2s(8*tick, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":10},"_meta":{"progressToken":"p1"}}}`),
		s2c(9*tick, `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}},{"name":"sleep","inputSchema":{"type":"object"}}]}}`),
		s2c(12*tick, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p1","progress":1,"total":2}}`),
		s2c(20*tick, `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"slept 10ms"}]}}`),
		c2s(21*tick, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`),
		s2c(22*tick, `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"Echo: hi"}],"structuredContent":{"n":1}}}`),
		evt(30*tick, tape.EventStderr, `{"line":"bye"}`),
		evt(31*tick, tape.EventClose, `{"by":"client"}`),
	}
}

// diffReplayed is the same session replayed: other ids, session name,
// tokens and timing, responses in another order, another stderr line.
func diffReplayed() []step {
	return inSession("live-7",
		c2s(2*tick, `{"jsonrpc":"2.0","id":100,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"cli","version":"1.0"}}}`),
		s2c(3*tick, `{"jsonrpc":"2.0","id":100,"result":{"serverInfo":{"version":"2.0","name":"srv"},"protocolVersion":"2025-06-18","capabilities":{"tools":{}}}}`),
		c2s(4*tick, `{"jsonrpc":"2.0","method":"notifications/initialized"}`),
		c2s(5*tick, `{"jsonrpc":"2.0","id":"r1","method":"tools/list"}`),
		c2s(6*tick, `{"jsonrpc":"2.0","id":"r2","method":"tools/call","params":{"name":"sleep","arguments":{"ms":10.0},"_meta":{"progressToken":"live-1"}}}`),
		s2c(7*tick, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"live-1","progress":1,"total":2}}`),
		s2c(8*tick, `{"jsonrpc":"2.0","id":"r2","result":{"content":[{"type":"text","text":"slept 10ms"}]}}`),
		s2c(9*tick, `{"jsonrpc":"2.0","id":"r1","result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}},{"name":"sleep","inputSchema":{"type":"object"}}]}}`),
		c2s(10*tick, `{"jsonrpc":"2.0","id":"r3","method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`),
		s2c(11*tick, `{"jsonrpc":"2.0","id":"r3","result":{"content":[{"type":"text","text":"Echo: hi"}],"structuredContent":{"n":1}}}`),
		evt(12*tick, tape.EventStderr, `{"line":"other"}`),
	)
}

// diffBroken is the session against a changed server: a tool answers
// otherwise, another fails, a notification appears, a response is missing.
func diffBroken() []step {
	return inSession("live-8",
		c2s(2*tick, `{"jsonrpc":"2.0","id":100,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"cli","version":"1.0"}}}`),
		s2c(3*tick, `{"jsonrpc":"2.0","id":100,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"srv","version":"2.1"}}}`),
		c2s(4*tick, `{"jsonrpc":"2.0","method":"notifications/initialized"}`),
		c2s(5*tick, `{"jsonrpc":"2.0","id":"r1","method":"tools/list"}`),
		s2c(6*tick, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hello"}}`),
		c2s(6*tick, `{"jsonrpc":"2.0","id":"r2","method":"tools/call","params":{"name":"sleep","arguments":{"ms":10},"_meta":{"progressToken":"live-1"}}}`),
		s2c(7*tick, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"live-1","progress":1,"total":2}}`),
		s2c(8*tick, `{"jsonrpc":"2.0","id":"r2","error":{"code":-32603,"message":"sleep failed"}}`),
		c2s(10*tick, `{"jsonrpc":"2.0","id":"r3","method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`),
		s2c(11*tick, `{"jsonrpc":"2.0","id":"r3","result":{"content":[{"type":"text","text":"Echo: hi!"}],"structuredContent":{"n":"1"}}}`),
	)
}

// diffFiles compares two step lists written as tapes a and b (fixtures
// under goldenDir when they are in a directory, else temporary).
func diffFiles(t *testing.T, a, b string, stepsA, stepsB []step, opts ...DiffOption) *DiffReport {
	t.Helper()
	write := func(name string, steps []step) string {
		if filepath.Dir(name) == "." {
			path := filepath.Join(t.TempDir(), name)
			writeTape(t, path, steps)
			return path
		}
		return fixtureTape(t, name, steps)
	}
	pa, pb := write(a, stepsA), write(b, stepsB)
	rep, err := Diff(context.Background(), pa, pb, opts...)
	if err != nil {
		t.Fatal(err)
	}
	rep.A.File, rep.B.File = filepath.Base(a), filepath.Base(b)
	return rep
}

func TestDiff(t *testing.T) {
	tests := []struct {
		name    string
		b       []step
		opts    []DiffOption
		same    bool
		counts  [4]int64 // compared, mismatched, only a, only b
		golden  string
		contain []string
	}{
		{name: "replay equal", b: diffReplayed(), same: true, counts: [4]int64{10, 0, 0, 0}, golden: "diff/equal.txt"},
		{name: "changed server", b: diffBroken(), counts: [4]int64{9, 3, 1, 1}, golden: "diff/changed.txt",
			contain: []string{`+ error: {"code":-32603,"message":"sleep failed"}`, `~ result.structuredContent.n: 1 → "1"`}},
		{name: "ignore paths", b: diffBroken(), opts: []DiffOption{WithIgnorePaths("result.serverInfo.version", "result.content[*].text", "result.structuredContent")},
			counts: [4]int64{9, 1, 1, 1}},
		{name: "no default ignores", b: diffReplayed(), opts: []DiffOption{WithoutDefaultIgnores()}, counts: [4]int64{10, 9, 0, 0},
			contain: []string{`~ id: 1 → "r1"`, `- params._meta.progressToken: "p1"`}},
		{name: "missing messages", b: diffRecorded()[:6], counts: [4]int64{5, 0, 5, 0},
			contain: []string{"only in a: session 1 c2s request tools/call #2, record 10 at +0.021s: echo"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := strings.ReplaceAll(tt.name, " ", "-")
			rep := diffFiles(t, "diff/recorded.jsonl.zst", "diff/"+name+".jsonl.zst", diffRecorded(), tt.b, tt.opts...)
			if rep.Same() != tt.same {
				t.Errorf("Same() = %v", rep.Same())
			}
			if got := [4]int64{rep.Compared, rep.Mismatched, rep.OnlyA, rep.OnlyB}; got != tt.counts {
				t.Errorf("compared, mismatched, only a, only b = %v, want %v", got, tt.counts)
			}
			var buf bytes.Buffer
			if err := WriteDiffText(&buf, rep); err != nil {
				t.Fatal(err)
			}
			for _, c := range tt.contain {
				if !strings.Contains(buf.String(), c) {
					t.Errorf("output lacks %q:\n%s", c, buf.String())
				}
			}
			if tt.golden != "" {
				golden(t, tt.golden, buf.Bytes())
				var js bytes.Buffer
				if err := WriteDiffJSON(&js, rep); err != nil {
					t.Fatal(err)
				}
				golden(t, strings.TrimSuffix(tt.golden, ".txt")+".json", js.Bytes())
			}
			for _, line := range strings.Split(buf.String(), "\n") {
				if n := len([]rune(line)); n > diffWidth+10 {
					t.Errorf("line of %d runes: %q", n, line)
				}
			}
		})
	}
}

func TestDiffPairsSessionsByOrder(t *testing.T) {
	first := []step{c2s(0, `{"jsonrpc":"2.0","id":1,"method":"ping"}`), s2c(tick, `{"jsonrpc":"2.0","id":1,"result":{}}`)}
	second := []step{c2s(0, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), s2c(tick, `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`)}
	a := append(inSession("s1", first...), inSession("s2", second...)...)
	b := append(inSession("x", first...), inSession("y", second...)...)
	if rep := diffFiles(t, "a.jsonl.zst", "b.jsonl.zst", a, b); !rep.Same() || rep.Compared != 4 {
		t.Errorf("same sessions in the same order: %+v", rep)
	}
	swapped := append(inSession("y", second...), inSession("x", first...)...)
	if rep := diffFiles(t, "a.jsonl.zst", "c.jsonl.zst", a, swapped); rep.Same() || rep.OnlyA != 4 || rep.OnlyB != 4 {
		t.Errorf("sessions in another order: %+v", rep)
	}
}

func TestDiffBatchesAndInvalidFrames(t *testing.T) {
	a := []step{
		c2s(0, `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`),
		c2s(tick, `not json`),
	}
	b := []step{
		c2s(0, `{"jsonrpc":"2.0","id":9,"method":"ping"}`),
		c2s(tick, `{"jsonrpc":"2.0","method":"notifications/initialized"}`),
		c2s(2*tick, `not json either`),
	}
	rep := diffFiles(t, "a.jsonl.zst", "b.jsonl.zst", a, b)
	if rep.Compared != 3 || rep.Mismatched != 1 || rep.Mismatches[0].Kind != "invalid" {
		t.Fatalf("got %+v", rep)
	}
	if d := rep.Mismatches[0].Diffs; len(d) != 1 || string(d[0].New) != `"not json either"` {
		t.Errorf("invalid frames compared as %v", d)
	}
}

func TestDiffErrors(t *testing.T) {
	good := tempTape(t, diffRecorded()...)
	notTape := filepath.Join(t.TempDir(), "x.txt")
	if err := os.WriteFile(notTape, []byte("hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Diff(context.Background(), good, notTape); !errors.Is(err, tape.ErrNotTape) {
		t.Errorf("not a tape: %v", err)
	}
	if _, err := Diff(context.Background(), good, good, WithIgnorePaths("a..b")); err == nil || !strings.Contains(err.Error(), "a..b") {
		t.Errorf("bad path: %v", err)
	}
	other := tempTape(t, inSession("z", diffRecorded()...)[:3]...)
	_, err := Diff(context.Background(), good, other, WithMaxPending(2))
	if err == nil || !strings.Contains(err.Error(), "too far apart") {
		t.Errorf("drift: %v", err)
	}
	for _, o := range []DiffOption{WithMaxPending(0), WithMaxMismatches(-1)} {
		if _, err := Diff(context.Background(), good, good, o); err == nil {
			t.Error("bad option accepted")
		}
	}
}

func TestDiffCutTape(t *testing.T) {
	good := tempTape(t, diffRecorded()...)
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.jsonl.zst")
	if err := os.WriteFile(cut, data[:len(data)-7], 0o600); err != nil {
		t.Fatal(err)
	}
	rep, err := Diff(context.Background(), good, cut)
	if err != nil {
		t.Fatal(err)
	}
	if rep.B.Warning == "" || !strings.Contains(rep.B.Warning, "records") {
		t.Errorf("no warning for the cut tape: %+v", rep.B)
	}
}

// TestDiffTwoRecordings records the same Go SDK session with the reference
// server twice, over HTTP: the two tapes differ in session ids, timings and
// HTTP details only, so the diff finds them equal.
func TestDiffTwoRecordings(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.jsonl.zst"), filepath.Join(dir, "b.jsonl.zst")
	recordRefServerHTTP(t, a)
	recordRefServerHTTP(t, b)
	rep, err := Diff(context.Background(), a, b)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Same() || rep.Compared < 16 {
		var buf bytes.Buffer
		_ = WriteDiffText(&buf, rep)
		t.Fatalf("two recordings of one session differ (%d compared):\n%s", rep.Compared, buf.String())
	}
	// The checked-in recording of the same session (another day, other
	// ports and session ids) is equal too.
	rep, err = Diff(context.Background(), refServerFixture(t), b)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Same() {
		t.Errorf("the fixture recording differs from a new one: %d mismatches, %d/%d one-sided", rep.Mismatched, rep.OnlyA, rep.OnlyB)
	}
}
