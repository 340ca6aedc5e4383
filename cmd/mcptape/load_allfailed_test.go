package main

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// crashOnCall is a stdio MCP server, in sh, that answers initialize and
// exits with status 1 on any other request.
const crashOnCall = `while IFS= read -r line; do
  case "$line" in
    *'"initialize"'*) id=${line#*'"id":'}; id=${id%%,*}
      printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"crash","version":"1"}}}\n' "$id";;
    *'"id"'*) exit 1;;
  esac
done`

// TestLoadAllFailed: a run in which not one request succeeded fails with
// exit 1 and a one-line reason (it exited 0 with 100% errors), unless a
// threshold on errors judges it; one success is enough for the run not
// to fail so.
func TestLoadAllFailed(t *testing.T) {
	bin := serveBinary(t)
	fail := []string{"--call", `tools/call fail {"mode":"tool"}`}
	ok := []string{"--call", `tools/call echo {"message":"hi"}`}
	run := func(calls []string, more ...string) []string {
		args := append([]string{"load", "--requests", "6", "-q"}, calls...)
		return append(append(args, more...), "--", bin, "serve")
	}
	cases := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"every call a tool error", run(fail), 1, "mcptape load: no request succeeded: all 6 failed, most often with tool isError"},
		{"latency threshold only", run(fail, "--threshold", "tools/call fail:p99<1h"), 1, "no request succeeded"},
		{"errors accepted", run(fail, "--threshold", "errors<=100%"), 0, ""},
		{"errors threshold broken", run(fail, "--threshold", "errors<50%"), 3, "1 of 1 threshold broken"},
		{"one call succeeds", run(append(fail, ok...), "--requests", "40"), 0, ""}, // all 40 of one call: 2^-39
	}
	if sh, err := exec.LookPath("sh"); err == nil {
		cases = append(cases, struct {
			name   string
			args   []string
			code   int
			stderr string
		}{"server crashes on every call", []string{"load", "--requests", "3", "-q", "--call", "ping", "--on-exit", "restart", "--", sh, "-c", crashOnCall},
			1, "no request succeeded: all 3 failed, most often with transport: server exited (status 1)"})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", c.args...)
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if code != c.code || !strings.Contains(stderr, c.stderr) || (c.code == 1 && !strings.HasPrefix(lines[len(lines)-1], "mcptape load: ")) {
				t.Errorf("code %d stderr %q, want %d and %q", code, stderr, c.code, c.stderr)
			}
			// The text report says the verdict the exit code gives.
			if failed := strings.Contains(stdout, "FAILED    no request succeeded"); failed != (c.code == 1) {
				t.Errorf("code %d, text report:\n%s", code, stdout)
			}
		})
	}
	// So does the JSON report, for its readers.
	code, stdout, _ := runCLI(t, "", run(fail, "--json", "-")...)
	var rep struct {
		Failure string `json:"failure"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != 1 || !strings.HasPrefix(rep.Failure, "no request succeeded: all 6 failed") {
		t.Errorf("--json -: code %d, failure %q (%v)", code, rep.Failure, err)
	}
}
