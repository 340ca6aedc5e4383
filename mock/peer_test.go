package mock

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/tape"
)

// Tests against real peers (internal/peertest installs them once per
// machine). They are skipped with -short.

// inspectorCommands are the Inspector CLI invocations recorded against
// server-everything, then run against the mock: one session each.
var inspectorCommands = [][]string{
	{"--method", "tools/list"},
	{"--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=hello"},
	{"--method", "tools/call", "--tool-name", "get-sum", "--tool-arg", "a=2", "--tool-arg", "b=3"},
	{"--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=again"},
	{"--method", "resources/list"},
	{"--method", "resources/read", "--uri", "demo://resource/static/document/architecture.md"},
	{"--method", "prompts/list"},
	{"--method", "prompts/get", "--prompt-name", "simple-prompt"},
}

// TestMockInspectorEverything records the Inspector CLI against
// server-everything over Streamable HTTP, then runs the same commands
// against the mock of that tape over HTTP and over stdio: the Inspector
// prints the same.
func TestMockInspectorEverything(t *testing.T) {
	if testing.Short() {
		t.Skip("real peers")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	srv := peertest.EverythingHTTP(t, ctx)
	tapePath := filepath.Join(t.TempDir(), "inspector.jsonl.zst")
	url, stop := recordHTTP(t, srv.URL, tapePath)
	recorded := inspectAll(t, ctx, url+"/mcp", "--transport", "http")
	stop()
	if !strings.Contains(recorded[1], "hello") || !strings.Contains(recorded[5], "architecture") {
		t.Fatalf("the recorded Inspector outputs lack the answers: %q", recorded)
	}
	sessions := loadSessions(t, tapePath)
	if len(sessions) != len(inspectorCommands) {
		t.Fatalf("the tape holds %d sessions, want %d", len(sessions), len(inspectorCommands))
	}

	t.Run("http", func(t *testing.T) {
		m, err := New(sessions)
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(m.HTTPHandler(HTTPConfig{}))
		defer hs.Close()
		got := inspectAll(t, ctx, hs.URL+Path, "--transport", "http")
		compareOutputs(t, recorded, got)
		if r := m.Report(); len(r.Unmatched) > 0 || len(r.NeverAsked) > 0 {
			t.Errorf("report: %+v", r)
		}
	})
	t.Run("stdio", func(t *testing.T) {
		script := filepath.Join(t.TempDir(), "mock.sh")
		body := "#!/bin/sh\n" + helperTapeEnv + "='" + tapePath + "' exec '" + os.Args[0] + "' -test.run='^TestHelperMock$'\n"
		if err := os.WriteFile(script, []byte(body), 0o700); err != nil {
			t.Fatal(err)
		}
		got := inspectAll(t, ctx, script)
		compareOutputs(t, recorded, got)
	})
}

// inspectAll runs every inspectorCommands against target and returns the
// Inspector's outputs.
func inspectAll(t *testing.T, ctx context.Context, target string, opts ...string) []string {
	t.Helper()
	var out []string
	for _, c := range inspectorCommands {
		out = append(out, peertest.Inspector(t, ctx, slices.Concat([]string{target}, opts, c)...))
	}
	return out
}

func compareOutputs(t *testing.T, recorded, got []string) {
	t.Helper()
	for i := range recorded {
		if recorded[i] != got[i] {
			t.Errorf("%v: the Inspector printed\n%s\nagainst the mock, and against the real server\n%s", inspectorCommands[i], got[i], recorded[i])
		}
	}
}

// loadSessions loads every session of the tape at path.
func loadSessions(t testing.TB, path string) []*replay.Session {
	t.Helper()
	r, err := tape.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sessions, _, err := replay.Load(r)
	if err != nil {
		t.Fatal(err)
	}
	return sessions
}
