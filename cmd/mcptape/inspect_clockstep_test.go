package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

// clockStepTape writes a tape whose header says time_ordered (as every
// tape mcptape's Writer writes) but whose clock stepped back two seconds
// between a tools/call and its answer, as a tape of another writer, or
// the tapes of a recorder restarted on a stepped clock, may have.
func clockStepTape(t *testing.T) string {
	t.Helper()
	t0 := time.Now().UnixNano()
	lines := []string{
		fmt.Sprintf(`{"type":"header","format":1,"tool":"t","version":"x","time":%d,"transport":"stdio","target":"t","time_ordered":true}`, t0),
	}
	msg := func(at int64, dir, frame string) {
		lines = append(lines, fmt.Sprintf(`{"type":"message","time":%d,"session":"s1","dir":"%s","frame":%s}`, at, dir, frame))
	}
	msg(t0+1, "c2s", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	msg(t0+2, "s2c", `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`)
	msg(t0+3, "c2s", `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	step := t0 + int64(10*time.Second)
	msg(step, "c2s", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo"}}`)
	step -= int64(2 * time.Second) // the clock steps back
	msg(step, "s2c", `{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`)
	msg(step+int64(time.Millisecond), "c2s", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo"}}`)
	msg(step+int64(3*time.Millisecond), "s2c", `{"jsonrpc":"2.0","id":3,"result":{"content":[]}}`)
	var buf bytes.Buffer
	enc, err := zstd.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	enc.Write([]byte(strings.Join(lines, "\n") + "\n"))
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "step.jsonl.zst")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestClockStepLatency: a tape whose clock stepped back between a
// tools/call and its answer: the answer is stamped before the call. Its
// latency is unknown, not 0: inspect warns (clock-step, naming the
// answer's and the request's records), leaves it out of the latency
// figures (counted as unknown), and the requests table says null; the
// call is still answered (ok). It was a latency of 0, silently.
func TestClockStepLatency(t *testing.T) {
	dir := clockStepTape(t)
	code, out, stderr := runCLI(t, "", "inspect", "--format", "json", dir)
	if code != 0 {
		t.Fatalf("inspect: exit %d: %s", code, stderr)
	}
	var rep struct {
		Tape struct {
			ClockSteps int64 `json:"clock_steps"`
		} `json:"tape"`
		Problems []struct {
			What    string   `json:"what"`
			Details []string `json:"details"`
		} `json:"problems"`
		Tools []struct {
			Calls   int64 `json:"calls"`
			Count   int64 `json:"count"`
			Unknown int64 `json:"unknown"`
			MaxNS   int64 `json:"max_ns"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	var details []string
	for _, p := range rep.Problems {
		if p.What == "clock-step" {
			details = p.Details
		}
	}
	if rep.Tape.ClockSteps != 1 || len(details) != 1 || !strings.HasPrefix(details[0], "#5 ") || !strings.Contains(details[0], "answer to #4 (tools/call id 2)") {
		t.Errorf("inspect: clock steps %d, problem details %q, want one naming the answer #5 and its request #4", rep.Tape.ClockSteps, details)
	}
	if len(rep.Tools) != 1 || rep.Tools[0].Calls != 2 || rep.Tools[0].Count != 1 || rep.Tools[0].Unknown != 1 || rep.Tools[0].MaxNS <= 0 {
		t.Errorf("inspect: tools %+v, want 2 calls, 1 latency known, 1 unknown", rep.Tools)
	}
	code, out, stderr = runCLI(t, "", "export", "--format", "requests", dir)
	if code != 0 {
		t.Fatalf("export requests: exit %d: %s", code, stderr)
	}
	found := false
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var row struct {
			ID        string `json:"id"`
			Outcome   string `json:"outcome"`
			LatencyNS *int64 `json:"latency_ns"`
		}
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatal(err)
		}
		if row.ID == "2" {
			found = true
			if row.Outcome != "ok" || row.LatencyNS != nil {
				t.Errorf("requests: %s", line)
			}
		}
	}
	if !found {
		t.Errorf("requests: no row of id 2:\n%s", out)
	}
}
