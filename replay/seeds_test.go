package replay

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
	"github.com/mcptape/mcptape/transport"
)

// seedSend is one frame of a seed scenario's client, and how many server
// lines the client waits for before it goes on.
type seedSend struct {
	line string
	wait int
}

// The client lines every seed scenario starts with.
var (
	seedInit        = seedSend{`{"jsonrpc":"2.0","id":"init-0","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"seed-client","version":"1.0.0"}}}`, 1}
	seedInitialized = seedSend{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, 0}
)

// seedScenarios are the message shapes of the seeds that a replay got
// wrong (issue 24), each recorded from the seed server and replayed
// against it: every recorded answer must be matched.
var seedScenarios = []struct {
	name    string // also the seed server's scenario
	client  []seedSend
	matched int // recorded answers compared
}{
	// 1. An id used again after its answer, and while still open.
	{"reuse-after", []seedSend{seedInit, seedInitialized,
		{`{"jsonrpc":"2.0","id":"tools-001","method":"tools/list"}`, 1},
		{`{"jsonrpc":"2.0","id":"tools-001","method":"tools/list"}`, 1}}, 3},
	{"reuse-in-flight", []seedSend{seedInit, seedInitialized,
		{`{"jsonrpc":"2.0","id":"req-123","method":"tools/call","params":{"name":"slow-a","arguments":{}}}`, 0},
		{`{"jsonrpc":"2.0","id":"req-123","method":"tools/call","params":{"name":"slow-b","arguments":{}}}`, 2}}, 3},
	// 2. Server messages after the last client message.
	{"trailing-notification", []seedSend{
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, 1},
		seedInitialized,
		{`{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"conversation://conv_123"}}`, 2}}, 2},
	{"notification-after-notification", []seedSend{seedInit, seedInitialized,
		{`{"jsonrpc":"2.0","method":"task/cancel","params":{"taskId":"123"}}`, 1}}, 1},
	// 3. Invalid frames, re-sent byte for byte, and their answers.
	{"parse-error", []seedSend{seedInit, seedInitialized,
		{`{"jsonrpc": "2.0", "id": 1, "method": "tools/list"`, 1},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"chat"}}`, 1}}, 3},
	{"malformed-no-id", []seedSend{seedInit, seedInitialized,
		{`{"jsonrpc": "2.0", "id": "req-1000", "method": tools/list}`, 1},
		{`{"jsonrpc":"2.0","id":"tools-001","method":"tools/list"}`, 1}}, 3},
	{"not-a-message", []seedSend{seedInit, seedInitialized,
		{`{"jsonrpc":"2.0","hello":"world"}`, 1},
		{`{"jsonrpc":"2.0","id":"tools-001","method":"tools/list"}`, 1}}, 3},
	{"empty-batch", []seedSend{seedInit, seedInitialized, {`[]`, 1}}, 2},
	// 4. Answers with id null, or with no id.
	{"answer-notification", []seedSend{seedInit, {seedInitialized.line, 1},
		{`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`, 1},
		{`{"jsonrpc":"2.0","id":"tools-001","method":"tools/list"}`, 1}}, 4},
	{"invalid-utf8", []seedSend{seedInit, seedInitialized,
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"who":"Zoë 🌍"}}}`, 1},
		{"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"greet\",\"arguments\":{\"who\":\"\xff\xfe\"}}}", 1}}, 3},
	// 5. Ids that do not identify a request are sent as recorded.
	{"null-id", []seedSend{seedInit, seedInitialized, {`{"jsonrpc":"2.0","id":null,"method":"tools/list"}`, 1}}, 2},
	{"object-id", []seedSend{seedInit, seedInitialized, {`{"jsonrpc":"2.0","id":{"n":1},"method":"tools/list"}`, 1}}, 2},
	{"fraction-id", []seedSend{seedInit, seedInitialized, {`{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}`, 1}}, 2},
	// 7. A server notification that carries an id is not answered (the
	// client's, a request to the server, is: -32601).
	{"notification-with-id", []seedSend{seedInit, seedInitialized,
		{`{"jsonrpc":"2.0","id":"req-1","method":"tools/call","params":{"name":"summarize","arguments":{},"_meta":{"progressToken":"p1"}}}`, 2},
		{`{"jsonrpc":"2.0","id":"c-1","method":"notifications/cancelled","params":{"requestId":"req-1","reason":"late"}}`, 1}}, 3},
	// 7b. A server that answers one request twice (repro seeds/07): the
	// n-th live answer to the id is compared with the n-th recorded one.
	{"answered-twice", []seedSend{seedInit, seedInitialized,
		{`{"jsonrpc":"2.0","id":"tool-exec-45","method":"tools/call","params":{"name":"twice","arguments":{}}}`, 2}}, 3},
	// 8. Batches are sent as batches.
	{"batch", []seedSend{
		{`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, 1},
		seedInitialized,
		{`[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"resources/list"},{"jsonrpc":"2.0","id":3,"method":"prompts/list"}]`, 1}}, 4},
	{"batch-shapes", []seedSend{
		{`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, 1},
		seedInitialized,
		{`[{"jsonrpc":"2.0","id":10,"method":"tools/list"},{"jsonrpc":"2.0","id":11,"method":"resources/list"}]`, 1},
		{`[{"jsonrpc":"2.0","method":"notifications/roots/list_changed"},{"jsonrpc":"2.0","id":12,"method":"prompts/list"}]`, 1},
		{`[{"jsonrpc":"2.0","method":"notifications/roots/list_changed"},{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}]`, 0},
		{`[{"jsonrpc":"2.0","id":20,"method":"tools/list"},{"jsonrpc":"2.0","id":21,"method":"prompts/list"},{"jsonrpc":"2.0","id":22,"method":"nope/unknown"}]`, 1}}, 7},
}

// seedArgv is the command line of the seed server.
func seedArgv() []string { return []string{os.Args[0], "-test.run=^TestHelperSeedServer$"} }

// seedDial dials the seed server of scenario.
func seedDial(scenario string) DialFunc {
	return func(ctx context.Context, _ *Session) (transport.Conn, error) {
		return transport.DialStdio(ctx, seedArgv(), transport.WithEnv(seedEnv+"="+scenario), transport.WithGrace(2*time.Second))
	}
}

// recordSeed records the client of a seed scenario against the seed
// server through the stdio capture proxy, and returns the tape's path.
func recordSeed(t *testing.T, scenario string, client []seedSend) string {
	t.Helper()
	toServer, fromServer, finish := stdioProxy(t, seedArgv(), seedEnv+"="+scenario)
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(fromServer)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	for _, s := range client {
		if _, err := io.WriteString(toServer, s.line+"\n"); err != nil {
			t.Fatal(err)
		}
		for range s.wait {
			select {
			case <-lines:
			case <-time.After(10 * time.Second):
				t.Fatalf("%s: no answer to %s", scenario, s.line)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // what the server sends last
	return finish()
}

// TestReplaySeedScenarios records each seed scenario and replays it
// against the same server: every recorded answer is matched, and every
// recorded client frame is sent, as recorded where it has no id to
// rewrite.
func TestReplaySeedScenarios(t *testing.T) {
	for _, sc := range seedScenarios {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			path := recordSeed(t, sc.name, sc.client)
			for _, memory := range []int64{-1, 0} { // held in memory, streamed
				replaySeed(t, sc.name, path, memory, sc.client, sc.matched)
			}
		})
	}
}

// replaySeed replays the seed tape at path (held in memory when memory
// allows, see Open) against the seed server of scenario, and checks that
// matched recorded answers were matched and every frame sent.
func replaySeed(t *testing.T, scenario, path string, memory int64, client []seedSend, matched int) {
	t.Helper()
	tp, err := Open(path, memory)
	if err != nil {
		t.Fatal(err)
	}
	sessions := tp.Sessions
	if sessions[0].Streamed() != (memory == 0) {
		t.Fatalf("streamed %v with a budget of %d bytes", sessions[0].Streamed(), memory)
	}
	var out bytes.Buffer
	start := time.Now()
	w := newTapeBuffer(t, &out)
	rep, err := Run(context.Background(), sessions, seedDial(scenario), WithTimeout(5*time.Second), WithTape(w))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	rep.WriteText(&text)
	sr := rep.Sessions[0]
	if rep.ExitCode() != 0 || sr.Matched != matched || sr.Sent != sr.Steps {
		t.Fatalf("exit %d, %d matched, %d of %d sent; want 0, %d, all:\n%s", rep.ExitCode(), sr.Matched, sr.Sent, sr.Steps, matched, text.String())
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("the replay took %v: it waited for something", d)
	}
	// Every client frame without an id to rewrite went out as
	// recorded, and every batch as a batch of as many members.
	var sent []string
	for _, rec := range readTape(t, out.Bytes()) {
		if rec.Dir == tape.ClientToServer {
			sent = append(sent, string(rec.Frame))
		}
	}
	if len(sent) != len(client) {
		t.Fatalf("%d frames sent, %d recorded:\n%s", len(sent), len(client), strings.Join(sent, "\n"))
	}
	for i, s := range client {
		info := jsonrpc.Classify([]byte(s.line))
		fresh := info.Kind == jsonrpc.KindRequest && (info.ID.Type == jsonrpc.IDString || info.ID.Type == jsonrpc.IDNumber && !strings.ContainsAny(string(info.ID.Raw), ".eE"))
		if !fresh && info.Kind != jsonrpc.KindBatch && sent[i] != s.line {
			t.Errorf("sent %q for recorded %q", sent[i], s.line)
		}
		if live := jsonrpc.Classify([]byte(sent[i])); info.Kind == jsonrpc.KindBatch && (live.Kind != jsonrpc.KindBatch || live.BatchLen != info.BatchLen) {
			t.Errorf("sent %q for the recorded batch %q", sent[i], s.line)
		}
	}
}

// TestReplayAnsweredOnceNotTwice: a recording where the server answered a
// request twice, replayed against a server that answers once, reports the
// second answer missing (exit 1) after the settle margin, without waiting
// for the whole timeout or failing the session.
func TestReplayAnsweredOnceNotTwice(t *testing.T) {
	var client []seedSend
	for _, sc := range seedScenarios {
		if sc.name == "answered-twice" {
			client = sc.client
		}
	}
	tp, err := Open(recordSeed(t, "answered-twice", client), -1)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	rep, err := Run(context.Background(), tp.Sessions, seedDial("answered-once"), WithTimeout(time.Minute), WithSettle(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	rep.WriteText(&text)
	if sr := rep.Sessions[0]; rep.ExitCode() != 1 || sr.Missing != 1 || sr.Matched != 2 || !strings.Contains(text.String(), `(use 2)`) {
		t.Errorf("exit %d, %d missing, %d matched; want 1, 1, 2 and the second answer named:\n%s", rep.ExitCode(), sr.Missing, sr.Matched, text.String())
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("the replay took %v: it waited for the timeout", d)
	}
}

// readTape returns the records of a tape held in data.
func readTape(t *testing.T, data []byte) []*tape.Record {
	t.Helper()
	r, err := tape.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var recs []*tape.Record
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return recs
		}
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
}

// TestReplayUnbatch: with WithUnbatch the members of a recorded batch are
// sent one by one, each as its own message; the seed server, which says
// how it was asked, answers each differently from the recording.
func TestReplayUnbatch(t *testing.T) {
	sc := seedScenarios[len(seedScenarios)-2]
	if sc.name != "batch" {
		t.Fatalf("scenario %q", sc.name)
	}
	sessions := loadTape(t, recordSeed(t, sc.name, sc.client))
	var out bytes.Buffer
	w := newTapeBuffer(t, &out)
	rep, err := Run(context.Background(), sessions, seedDial(sc.name), WithTimeout(5*time.Second), WithTape(w), WithUnbatch())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if sr := rep.Sessions[0]; rep.ExitCode() != 1 || sr.Matched != 1 || sr.Differed != 3 || sr.Sent != 5 {
		var text bytes.Buffer
		rep.WriteText(&text)
		t.Fatalf("exit %d; want 1 with 1 matched, 3 differing, 5 sent:\n%s", rep.ExitCode(), text.String())
	}
	for _, rec := range readTape(t, out.Bytes()) {
		if rec.Dir == tape.ClientToServer && jsonrpc.Classify(rec.Frame).Kind == jsonrpc.KindBatch {
			t.Errorf("sent a batch: %s", rec.Frame)
		}
	}
}
