package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/tapetest"
	"github.com/mcptape/mcptape/mock"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/tape"
)

// basicTape is a recorded stdio session with the reference server:
// initialize, tools/list, sleep with progress, echo.
var basicTape = filepath.Join("..", "..", "testdata", "tapes", "basic.jsonl.zst")

const mockInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

func TestMockUsageErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.jsonl.zst")
	w, err := tape.Create(empty, tape.Header{Tool: "mcptape"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	out := filepath.Join(dir, "out.jsonl.zst")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no tape", []string{"mock"}, "no tape given"},
		{"bad port", []string{"mock", basicTape, "--http", "127.0.0.1:99999"}, `bad port "99999"`},
		{"busy address", []string{"mock", basicTape, "--sse", busy.Addr().String(), "-o", out}, "address already in use"},
		{"http and sse", []string{"mock", basicTape, "--http", "1", "--sse", "2"}, "either --http or --sse"},
		{"stateless alone", []string{"mock", basicTape, "--stateless"}, "--stateless needs --http"},
		{"bad match", []string{"mock", basicTape, "--match", "fuzzy"}, `match "fuzzy": want exact, method or tool`},
		{"bad speed", []string{"mock", basicTape, "--speed", "fast"}, `--speed "fast"`},
		{"zero speed", []string{"mock", basicTape, "--speed", "0"}, `--speed "0": want max or a number from 0.001 to 1e+09`},
		{"bad error rate", []string{"mock", basicTape, "--error-rate", "2"}, "error rate 2 must be between 0 and 1"},
		{"NaN error rate", []string{"mock", basicTape, "--error-rate", "NaN"}, "error rate NaN must be between 0 and 1"},
		{"NaN drop rate", []string{"mock", basicTape, "--drop-rate", "nan"}, "drop rate NaN must be between 0 and 1"},
		{"missing tape", []string{"mock", filepath.Join(dir, "nope.jsonl.zst")}, "nope.jsonl.zst"},
		{"tape with no session", []string{"mock", empty}, "no client-to-server messages"},
		{"unknown session", []string{"mock", basicTape, "--session", "zz"}, `session "zz" is not in the tape (sessions: "stdio-1")`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, "", tt.args...)
			if code != 2 || !strings.Contains(stderr, tt.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Errorf("exit %d, stderr %q: want exit 2 and one line with %q", code, stderr, tt.want)
			}
		})
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("-o %s made though the mock never served", out)
	}
}

func TestMockCommandStdio(t *testing.T) {
	out := filepath.Join(t.TempDir(), "mock.jsonl.zst")
	in := mockInit + "\n" + "garbage\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"héllo, wörld"}}}` + "\n"
	code, stdout, stderr := runCLI(t, in, "mock", basicTape, "--speed", "max", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{`"id":1,"result":{"protocolVersion":"2025-11-25"`, `"code":-32700`, `"id":2,"result":{"content":[{"type":"text","text":"héllo, wörld"}]}`} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "2 requests matched, 0 unmatched; 2 of 4 recorded requests never asked") {
		t.Errorf("report:\n%s", stderr)
	}
	fi, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	if !privateMode(fi) {
		t.Errorf("output tape mode %v, want 0600", fi.Mode().Perm())
	}
	_, recs := readTapeFile(t, out)
	msgs := 0
	for _, r := range recs {
		if r.Type == tape.TypeMessage {
			msgs++
		}
	}
	if msgs != 6 { // 3 in, 3 out
		t.Errorf("output tape holds %d messages, want 6", msgs)
	}
}

func TestMockCommandStrict(t *testing.T) {
	in := mockInit + "\n" + `{"jsonrpc":"2.0","id":2,"method":"prompts/list"}` + "\n"
	code, stdout, stderr := runCLI(t, in, "mock", basicTape, "--speed", "max", "--strict")
	if code != 1 || !strings.Contains(stderr, `unmatched: prompts/list: no recorded request has method "prompts/list"`) {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stdout, `"id":2,"error":{"code":-32601`) {
		t.Errorf("stdout:\n%s", stdout)
	}
}

// TestReplayAgainstMockCommand runs `mcptape replay T -- mcptape mock T`
// on a tape with progress: every answer matches.
func TestReplayAgainstMockCommand(t *testing.T) {
	bin := serveBinary(t)
	code, stdout, stderr := runCLI(t, "", "replay", basicTape, "--speed", "max", "--", bin, "mock", basicTape)
	if code != 0 || !strings.Contains(stdout, "OK: 5/5 messages sent, 4 matched") {
		t.Errorf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
}

// TestMockRecordedBatchShape: --http answers batches in the shape read
// from the tape's "http" events; a tape with none gives the JSON default,
// a missing tape an error.
func TestMockRecordedBatchShape(t *testing.T) {
	path := filepath.Join(t.TempDir(), "http.jsonl.zst")
	w, err := tape.Create(path, tape.Header{Tool: "mcptape", Transport: "http"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []tape.Record{
		{Type: tape.TypeEvent, Time: 1, Session: "s", Exchange: 4, Event: tape.EventHTTP,
			Data: []byte(`{"phase":"response","method":"POST","path":"/mcp","conn":1,"status":200,"content_type":"text/event-stream"}`)},
		{Type: tape.TypeEvent, Time: 2, Session: "s", Exchange: 4, Event: tape.EventHTTP,
			Data: []byte(`{"phase":"end","method":"POST","path":"/mcp","conn":1,"status":200,"batch":2,"messages":2,"events":2}`)},
	} {
		if err := w.Write(&r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path    string
		want    mock.BatchShape
		wantErr bool
	}{
		{path, mock.BatchEvents, false},
		{basicTape, mock.BatchJSON, false},
		{filepath.Join(t.TempDir(), "none.jsonl.zst"), mock.BatchJSON, true},
	} {
		got, err := recordedBatchShape(&stdio{}, []string{tc.path})
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("%s: %v, %v; want %v, error %v", filepath.Base(tc.path), got, err, tc.want, tc.wantErr)
		}
	}
}

// TestMockOutputExists: an existing -o file is refused before serving, as
// record and replay refuse it, and --force, which the refusal names,
// replaces it.
func TestMockOutputExists(t *testing.T) {
	out := filepath.Join(t.TempDir(), "mock.jsonl.zst")
	if err := os.WriteFile(out, []byte("earlier"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, mockInit+"\n", "mock", basicTape, "--speed", "max", "-o", out)
	if code != 2 || !strings.Contains(stderr, "already exists: refusing to overwrite it (give --force") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = runCLI(t, mockInit+"\n", "mock", basicTape, "--speed", "max", "-o", out, "--force")
	if code != 0 {
		t.Fatalf("with --force: exit %d, stderr %q", code, stderr)
	}
	if _, recs := readTapeFile(t, out); len(recs) == 0 {
		t.Error("the forced -o holds no records")
	}
}

// TestMockTapeWarnings: the warnings about the tape mock serves (here a
// cut one, with a server frame that is no JSON-RPC message) are mock's
// (they said "mcptape replay: warning"), and count with their noun
// agreeing ("1 recorded server frame", not "frames").
func TestMockTapeWarnings(t *testing.T) {
	code, _, stderr := runCLI(t, "", "mock", fixture("cut"))
	for _, want := range []string{"\nmcptape mock: warning: " + fixture("cut") + ": tape cut after", "\nmcptape mock: warning: 1 recorded server frame not JSON-RPC"} {
		if !strings.Contains("\n"+stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "mcptape replay") {
		t.Errorf("mock's stderr speaks as replay:\n%s", stderr)
	}
	if code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
}

// TestMockCommandBigTape: a tape whose frames take more than
// replay.DefaultMemory (what replay streams from the file instead of
// holding) is served whole. The mock indexed the streamed sessions,
// which hold no messages, and answered every request "no recorded
// request has method" with "0 of 0 recorded requests".
func TestMockCommandBigTape(t *testing.T) {
	big := strings.Repeat("x", replay.DefaultMemory+1)
	start := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	path := tapetest.Write(t, filepath.Join(t.TempDir(), "big.jsonl.zst"), tape.Header{Format: 1, Transport: "stdio"},
		tapetest.Messages("1", start,
			`> {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
			`< {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`,
			`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"big","arguments":{}}}`,
			`< {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"`+big+`"}]}}`,
			`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"small","arguments":{}}}`,
			`< {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"small"}]}}`,
		))
	in := `{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"small","arguments":{}}}` + "\n" +
		`{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"big","arguments":{}}}` + "\n"
	code, stdout, stderr := runCLI(t, in, "mock", path, "--speed", "max")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{`"id":"i","result":{"protocolVersion":"2025-06-18"`, `"id":"s","result":{"content":[{"type":"text","text":"small"}]}`,
		`"id":"b","result":{"content":[{"type":"text","text":"` + big + `"}]}`} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %.80q", want)
		}
	}
	if !strings.Contains(stderr, "3 requests matched, 0 unmatched; 0 of 3 recorded requests never asked") {
		t.Errorf("report:\n%s", stderr)
	}
}
