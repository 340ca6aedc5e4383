package analysis

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/mcptape/mcptape/tape"
)

// fixturePath returns the path of the fixture tape name, first rewriting
// it from its steps when it is hand-made and -fixtures is set; -update
// alone leaves it as it is. Without -fixtures, a hand-made tape must be
// what its generator writes.
func fixturePath(t *testing.T, name string) string {
	t.Helper()
	path := filepath.Join(fixtureDir, name+".jsonl.zst")
	gen := handMade[name]
	switch {
	case gen == nil:
	case *writeFixtures:
		gen(t, path)
	default:
		tmp := filepath.Join(t.TempDir(), name+".jsonl.zst")
		gen(t, tmp)
		sameAsCommitted(t, tmp, path)
	}
	return path
}

// handMade builds the hand-made fixture tapes.
var handMade = map[string]func(t *testing.T, path string){
	// One session per rule, each breaking it once: the rules a stdio
	// recording can break here, those that need HTTP exchanges in an HTTP
	// tape (a stdio tape has none).
	"violations":      func(t *testing.T, path string) { writeTape(t, path, violationSteps(false)) },
	"violations-http": func(t *testing.T, path string) { writeTapeAs(t, path, "http", violationSteps(true)) },
	// MRTR rounds, task polling, cancellations, progress, a batch where
	// batches exist, stderr and a crash.
	"operations": func(t *testing.T, path string) { writeTape(t, path, operationSteps()) },
	// HTTP exchanges: a session assigned, a stream the client closed, a
	// proxy error.
	"operations-http": func(t *testing.T, path string) { writeTapeAs(t, path, "http", operationHTTPSteps()) },
	// The violations tape in small frames, cut two thirds of the way
	// through the frames before the last: the last one holds the "stats"
	// event, whose figures (frames written, peak queued) depend on how
	// fast the writer's goroutine ran, so its size varies from run to run.
	"cut": func(t *testing.T, path string) {
		full := filepath.Join(t.TempDir(), "full.jsonl.zst")
		writeTape(t, full, violationSteps(false), tape.WithFlushBytes(2048))
		data, err := os.ReadFile(full)
		if err != nil {
			t.Fatal(err)
		}
		ends := zstdFrameEnds(t, data)
		if len(ends) < 3 {
			t.Fatalf("%d frames, want several", len(ends))
		}
		if err := os.WriteFile(path, data[:ends[len(ends)-2]*2/3], 0o600); err != nil {
			t.Fatal(err)
		}
	},
}

// zstdFrameEnds returns the offset where each zstd frame of data ends,
// walking frame headers and block headers (RFC 8878 section 3.1.1).
func zstdFrameEnds(t *testing.T, data []byte) []int {
	t.Helper()
	var ends []int
	for off := 0; off < len(data); {
		var h zstd.Header
		if err := h.Decode(data[off:]); err != nil {
			t.Fatalf("frame at byte %d: %v", off, err)
		}
		p := off + h.HeaderSize
		if h.Skippable {
			p += int(h.SkippableSize)
		} else {
			for last := false; !last; {
				if p+3 > len(data) {
					t.Fatalf("frame at byte %d: block header past the end", off)
				}
				bh := int(data[p]) | int(data[p+1])<<8 | int(data[p+2])<<16
				last = bh&1 == 1
				size := bh >> 3
				if bh>>1&3 == 1 { // RLE block: one byte, repeated size times
					size = 1
				}
				p += 3 + size
			}
			if h.HasCheckSum {
				p += 4
			}
		}
		ends = append(ends, p)
		off = p
	}
	return ends
}

// violationSteps returns the bad cases of ruleCases, one session each 100
// ms apart: those recorded over HTTP (onHTTP) or the others.
func violationSteps(http bool) []step {
	var steps []step
	i := 0
	for _, c := range ruleCases {
		if onHTTP(c.bad) != http {
			continue
		}
		for _, s := range c.bad {
			if s.sess == "" { // the case's one session
				s.sess = c.rule
			} else { // one of its sessions
				s.sess = c.rule + "/" + s.sess
			}
			s.at += time.Duration(i) * 100 * time.Millisecond
			steps = append(steps, s)
		}
		i++
	}
	return steps
}

// onHTTP reports whether steps can only come from an HTTP recording: a
// record on an HTTP exchange, or an HTTP event.
func onHTTP(steps []step) bool {
	for _, s := range steps {
		if s.xchg != 0 || s.event == tape.EventHTTP {
			return true
		}
	}
	return false
}

func operationSteps() []step {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"hand","version":"1"}}`
	steps := append(handshake("2025-03-26"),
		c2s(10*ms, `[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"prompts/list"}]`),
		s2c(14*ms, `[{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"slow"},{"name":"ask"}]}},{"jsonrpc":"2.0","id":2,"result":{"prompts":[]}}]`),
		c2s(20*ms, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow","task":{"ttl":60000},"_meta":{"progressToken":"pt"}}}`),
		s2c(21*ms, `{"jsonrpc":"2.0","id":3,"result":{"task":{"taskId":"T1","status":"working"}}}`),
		s2c(25*ms, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"pt","progress":1,"total":2}}`),
		c2s(40*ms, `{"jsonrpc":"2.0","id":4,"method":"tasks/get","params":{"taskId":"T1"}}`),
		s2c(41*ms, `{"jsonrpc":"2.0","id":4,"result":{"taskId":"T1","status":"completed"}}`),
		c2s(50*ms, `{"jsonrpc":"2.0","id":5,"method":"tasks/result","params":{"taskId":"T1"}}`),
		s2c(60*ms, `{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"done"}]}}`),
		c2s(70*ms, `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"slow","arguments":{"ms":500}}}`),
		c2s(80*ms, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":6,"reason":"user stop"}}`),
		s2c(90*ms, `{"jsonrpc":"2.0","id":6,"error":{"code":-32800,"message":"Request cancelled"}}`),
		c2s(100*ms, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow","arguments":{"ms":5000}}}`),
		c2s(110*ms, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`),
		s2c(120*ms, `{"jsonrpc":"2.0","id":8,"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":5}}`),
		c2s(150*ms, `{"jsonrpc":"2.0","id":8,"result":{"model":"m","role":"assistant","content":{"type":"text","text":"hello"}}}`),
		evt(160*ms, tape.EventStderr, `{"line":"warning: low disk"}`),
		evt(300*ms, tape.EventExit, `{"code":2}`),
		evt(300*ms, tape.EventClose, `{"by":"server-exit"}`),
	)
	steps = append(steps, inSession("mrtr",
		c2s(200*ms, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask","arguments":{"kind":"elicitation"},`+meta+`}}`),
		s2c(202*ms, `{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"ask":{"method":"elicitation/create","params":{"message":"name?"}}},"requestState":"s1"}}`),
		c2s(230*ms, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask","arguments":{"kind":"elicitation"},"inputResponses":{"ask":{"action":"accept","content":{"name":"tape"}}},"requestState":"s1",`+meta+`}}`),
		s2c(233*ms, `{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","content":[{"type":"text","text":"{\"action\":\"accept\"}"}]}}`),
	)...)
	return steps
}

func operationHTTPSteps() []step {
	return inSession("http",
		evt(240*ms, tape.EventHTTP, `{"phase":"response","method":"POST","path":"/mcp","status":200,"content_type":"text/event-stream","request_headers":{"Content-Type":["application/json"]},"response_headers":{"Mcp-Session-Id":["abc"]}}`),
		evt(241*ms, tape.EventHTTP, `{"phase":"end","method":"POST","path":"/mcp","status":200,"duration_ns":1000000,"closed_by":"server"}`),
		evt(250*ms, tape.EventHTTP, `{"phase":"response","method":"POST","path":"/mcp","status":202,"request_headers":{"Mcp-Session-Id":["abc"]}}`),
		onExchange(3, c2s(251*ms, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}`)),
		onExchange(3, evt(252*ms, tape.EventHTTP, `{"phase":"response","method":"POST","path":"/mcp","status":200,"content_type":"text/event-stream","request_headers":{"Mcp-Session-Id":["abc"]}}`)),
		onExchange(3, evt(255*ms, tape.EventHTTP, `{"phase":"end","method":"POST","path":"/mcp","status":200,"duration_ns":4000000,"closed_by":"client"}`)),
		evt(260*ms, tape.EventError, `{"error":"upstream: connection reset by peer"}`),
	)
}

// goldenFixtures are the fixture tapes with golden outputs: hand-made,
// then recorded from real peers (TestRealPeers -record).
var goldenFixtures = []string{"violations", "violations-http", "operations", "operations-http", "cut", "everything-stdio", "gosdk-refserver", "gosdk-everything", "everything-http", "gosdk-http"}

// goldenOutputs are the outputs checked for every fixture, by file suffix.
var goldenOutputs = []struct {
	suffix string
	only   string // a fixture name, or "" for all
	render func(ctx context.Context, path string, w *bytes.Buffer) error
}{
	{".inspect.txt", "", func(ctx context.Context, path string, w *bytes.Buffer) error {
		rep, err := Inspect(ctx, path)
		if err != nil {
			return err
		}
		rep.File = filepath.Base(path)
		return WriteText(w, rep)
	}},
	{".inspect.json", "", func(ctx context.Context, path string, w *bytes.Buffer) error {
		rep, err := Inspect(ctx, path)
		if err != nil {
			return err
		}
		rep.File = filepath.Base(path)
		return WriteJSON(w, rep)
	}},
	{".show.txt", "", func(ctx context.Context, path string, w *bytes.Buffer) error {
		return showTo(ctx, path, w)
	}},
	{".show.ndjson", "operations", func(ctx context.Context, path string, w *bytes.Buffer) error {
		return showTo(ctx, path, w, WithFormat(FormatNDJSON))
	}},
	{".show-in.raw", "everything-stdio", func(ctx context.Context, path string, w *bytes.Buffer) error {
		return showTo(ctx, path, w, WithFormat(FormatRaw), WithDir(tape.ClientToServer))
	}},
	{".show-tools.txt", "gosdk-refserver", func(ctx context.Context, path string, w *bytes.Buffer) error {
		return showTo(ctx, path, w, WithMethod("tools/*"), WithFrom(TimeSpec{Offset: 50 * ms}), WithTo(TimeSpec{Offset: 150 * ms}))
	}},
}

func showTo(ctx context.Context, path string, w *bytes.Buffer, opts ...ShowOption) error {
	st, err := Show(ctx, path, w, opts...)
	if st.Warning != nil {
		fmt.Fprintf(w, "WARNING: %v\n", st.Warning)
	}
	return err
}

// TestGolden renders every fixture tape and compares with the golden
// outputs; -update rewrites the goldens, -fixtures the hand-made tapes.
func TestGolden(t *testing.T) {
	ctx := context.Background()
	for _, name := range goldenFixtures {
		t.Run(name, func(t *testing.T) {
			path := fixturePath(t, name)
			if _, err := os.Stat(path); err != nil {
				t.Fatalf("fixture missing (hand-made: -fixtures; real peers: TestRealPeers -record): %v", err)
			}
			checkStdioHasNoHTTP(t, path)
			for _, out := range goldenOutputs {
				if out.only != "" && out.only != name {
					continue
				}
				var got bytes.Buffer
				if err := out.render(ctx, path, &got); err != nil {
					t.Fatalf("%s: %v", out.suffix, err)
				}
				golden := filepath.Join(fixtureDir, name+out.suffix)
				if *update {
					if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run with -update)", err)
				}
				if !bytes.Equal(got.Bytes(), want) {
					t.Errorf("%s differs from %s (run with -update if the change is right):\n%s", out.suffix, golden, firstDiff(got.Bytes(), want))
				}
			}
		})
	}
}

// checkStdioHasNoHTTP fails the test when the tape at path says it was
// recorded over stdio but holds what only an HTTP recording has: a record
// on an HTTP exchange, or an "http" event (export, for one, treats such a
// tape's requests as stdio ones).
func checkStdioHasNoHTTP(t *testing.T, path string) {
	t.Helper()
	r, err := tape.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Header().Transport != "stdio" {
		return
	}
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if rec.Exchange != 0 || rec.Event == tape.EventHTTP {
			t.Errorf("%s: a stdio tape with an HTTP record (session %q, exchange %d, event %q)", path, rec.Session, rec.Exchange, rec.Event)
			return
		}
	}
}

// firstDiff shows the first differing line.
func firstDiff(got, want []byte) string {
	g, w := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
	for i := 0; i < max(len(g), len(w)); i++ {
		var a, b []byte
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if !bytes.Equal(a, b) {
			return fmt.Sprintf("line %d:\n got: %s\nwant: %s", i+1, a, b)
		}
	}
	return "(same lines)"
}

// TestUpdateKeepsInputTapes: -update rewrites the golden outputs only; the
// input tapes of testdata/analysis, hand-made (TestGolden) or written from
// steps (fixtureTape), stay as committed: -fixtures rewrites them.
func TestUpdateKeepsInputTapes(t *testing.T) {
	defer func(u, f bool) { *update, *writeFixtures = u, f }(*update, *writeFixtures)
	*update, *writeFixtures = true, false
	read := func(path string) []byte {
		t.Helper()
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	const stepsTape = "diff/recorded.jsonl.zst"
	before := map[string][]byte{}
	for name := range handMade {
		path := filepath.Join(fixtureDir, name+".jsonl.zst")
		before[path] = read(path)
	}
	before[filepath.Join(goldenDir, stepsTape)] = read(filepath.Join(goldenDir, stepsTape))
	for name := range handMade {
		fixturePath(t, name)
	}
	if path := fixtureTape(t, stepsTape, diffRecorded()); filepath.Dir(filepath.Dir(path)) == filepath.Clean(goldenDir) {
		t.Errorf("fixtureTape wrote %s under -update", path)
	}
	for path, data := range before {
		if !bytes.Equal(read(path), data) {
			t.Errorf("%s rewritten under -update", path)
		}
	}
}
