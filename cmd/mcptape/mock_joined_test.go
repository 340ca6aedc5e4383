package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/tapetest"
	"github.com/mcptape/mcptape/tape"
)

// echoCall is a tools/call of echo with message msg, as the client sends it.
func echoCall(id int, msg string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"message":%q}}}`, id, msg)
}

// echoResult is echo's answer to request id.
func echoResult(id int, msg string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":%q}]}}`, id, msg)
}

// writeRotatedEcho writes a rotated recording of one stdio session in
// three tapes: the handshake, then echo "a", then echo "b", each answered
// in its own tape; it returns the tapes' paths.
func writeRotatedEcho(t *testing.T, dir string) []string {
	t.Helper()
	now := time.Now()
	return tapetest.WriteRotated(t, filepath.Join(dir, "api.jsonl.zst"), tape.Header{Version: "test", Transport: "stdio"},
		tapetest.Messages("s1", now,
			"> "+mockInit,
			`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`,
			`> {"jsonrpc":"2.0","method":"notifications/initialized"}`),
		tapetest.Messages("s1", now.Add(time.Second), "> "+echoCall(2, "a"), "< "+echoResult(2, "a")),
		tapetest.Messages("s1", now.Add(2*time.Second), "> "+echoCall(3, "b"), "< "+echoResult(3, "b")))
}

// TestMockRotatedRecording: mock serves the tapes of a rotated recording
// (a directory, or the tapes given one by one) joined, as inspect and
// check read them: a request recorded in any of its tapes is answered.
// A tape of the rotation missing is warned about on stderr. (mock took
// one tape: "want one tape", exit 2.)
func TestMockRotatedRecording(t *testing.T) {
	dir := t.TempDir()
	segs := writeRotatedEcho(t, dir)
	in := mockInit + "\n" + echoCall(2, "a") + "\n" + echoCall(3, "b") + "\n"
	for _, args := range [][]string{{dir}, segs} {
		code, stdout, stderr := runCLI(t, in, append([]string{"mock", "--speed", "max"}, args...)...)
		if code != 0 || !strings.Contains(stdout, echoResult(2, "a")) || !strings.Contains(stdout, echoResult(3, "b")) ||
			!strings.Contains(stderr, "3 requests matched, 0 unmatched") || strings.Contains(stderr, "warning") {
			t.Errorf("mock %q: exit %d, stdout:\n%s\nstderr:\n%s", args, code, stdout, stderr)
		}
	}
	if err := os.Remove(segs[1]); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, in, "mock", "--speed", "max", dir)
	if code != 0 || !strings.Contains(stdout, echoResult(3, "b")) || strings.Contains(stdout, echoResult(2, "a")) ||
		!strings.Contains(stderr, "mcptape mock: warning: records are missing at 1 place (sessions across them may lack messages): tapes 2 to 2 of this recording are missing") {
		t.Errorf("mock with tape 2 missing: exit %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

// TestMockRecordNumbers: the record a mock message names ("closest
// recorded request is record N", "never asked: record N") is the record
// show and inspect number N, also in tapes read joined. (It was the
// request's rank among the recorded requests: #2 for record 4.)
func TestMockRecordNumbers(t *testing.T) {
	dir := t.TempDir()
	writeRotatedEcho(t, dir)
	in := mockInit + "\n" + echoCall(2, "zz") + "\n"
	code, _, stderr := runCLI(t, in, "mock", "--speed", "max", dir)
	closest := regexp.MustCompile(`closest recorded request is record (\d+), tools/call "echo"`).FindStringSubmatch(stderr)
	never := regexp.MustCompile(`never asked: record (\d+), tools/call "echo"`).FindAllStringSubmatch(stderr, -1)
	if code != 0 || closest == nil || len(never) != 2 {
		t.Fatalf("exit %d, stderr:\n%s\nwant the closest request and two never asked named by record", code, stderr)
	}
	_, shown, _ := runCLI(t, "", "show", "--format", "ndjson", dir)
	records := map[int]string{} // record number -> its message's id, of the client's tools/call requests
	for _, l := range strings.Split(strings.TrimSpace(shown), "\n") {
		var r struct {
			Record int
			Dir    string
			Kind   string
			Method string
			ID     json.RawMessage
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		if r.Dir == "c2s" && r.Kind == "request" && r.Method == "tools/call" {
			records[r.Record] = string(r.ID)
		}
	}
	for _, m := range append(never, closest) {
		n, _ := strconv.Atoi(m[1])
		if _, ok := records[n]; !ok {
			t.Errorf("mock names record %d; show's tools/call requests are records %v", n, records)
		}
	}
	if a, b := never[0][1], never[1][1]; a == b {
		t.Errorf("both never-asked requests named record %s", a)
	}
}
