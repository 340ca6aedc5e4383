package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/tape"
)

// TestWrapServerEverythingE2E wraps a Claude Desktop entry for the real
// server-everything, starts the rewritten entry as Claude Desktop does
// (its command and args, its env added to the environment, JSON-RPC
// lines on stdin and stdout), initializes a session through it, and finds
// the exchange in a tape named after the server in the state directory.
// Wrapping again changes nothing; unwrapping restores the file exactly.
func TestWrapServerEverythingE2E(t *testing.T) {
	argv := append(peertest.ServerEverything(t), "stdio")
	bin := serveBinary(t)
	dir := t.TempDir()
	config := filepath.Join(dir, "claude_desktop_config.json")
	entry := map[string]any{"command": argv[0], "args": argv[1:], "env": map[string]string{"WRAP_TEST": "1"}}
	orig, _ := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{"everything": entry}, "globalShortcut": "Ctrl+Space"}, "", "  ")
	if err := os.WriteFile(config, orig, 0o600); err != nil {
		t.Fatal(err)
	}
	wrap := []string{"wrap", "--client", "claude-desktop", "--config", config, "--mcptape", bin, "everything"}
	if code, out, errOut := runCLI(t, "", wrap...); code != 0 || out != "everything: wrapped (mcpServers)\n" {
		t.Fatalf("wrap: exit %d\n%s%s", code, out, errOut)
	}
	wrapped, _ := os.ReadFile(config)
	var cfg struct {
		MCPServers map[string]struct {
			Command string
			Args    []string
			Env     map[string]string
		}
	}
	if err := json.Unmarshal(wrapped, &cfg); err != nil {
		t.Fatal(err)
	}
	e := cfg.MCPServers["everything"]
	if e.Command != bin || e.Env["WRAP_TEST"] != "1" {
		t.Fatalf("wrapped entry %+v", e)
	}

	// Launched as the client launches it.
	state := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.Command, e.Args...)
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+state, "WRAP_TEST="+e.Env["WRAP_TEST"])
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"claude-ai","version":"0.1.0"}}}`+"\n")
	answer, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.Contains(answer, `"id":1`) || !strings.Contains(answer, `"serverInfo"`) {
		t.Fatalf("initialize through the wrapped entry: %q, %v\n%s", answer, err, stderr.String())
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("wrapped server: %v\n%s", err, stderr.String())
	}
	tapes, _ := filepath.Glob(filepath.Join(state, "mcptape", "tapes", "everything-*.jsonl.zst"))
	if len(tapes) != 1 {
		t.Fatalf("tapes %q, want one named after the server\n%s", tapes, stderr.String())
	}
	if got := tapeFrames(t, tapes[0]); !strings.Contains(got[tape.ClientToServer], `"method":"initialize"`) || !strings.Contains(got[tape.ServerToClient], `"serverInfo"`) {
		t.Errorf("tape holds %q", got)
	}

	if code, out, _ := runCLI(t, "", wrap...); code != 0 || out != "everything: already wrapped (mcpServers)\n" {
		t.Errorf("wrapping again: exit %d, %q", code, out)
	}
	if again, _ := os.ReadFile(config); !bytes.Equal(again, wrapped) {
		t.Error("wrapping again changed the file")
	}
	if code, out, errOut := runCLI(t, "", "unwrap", "--client", "claude-desktop", "--config", config, "--all"); code != 0 || out != "everything: unwrapped (mcpServers)\n" {
		t.Fatalf("unwrap: exit %d\n%s%s", code, out, errOut)
	}
	if back, _ := os.ReadFile(config); !bytes.Equal(back, orig) {
		t.Errorf("unwrap gave\n%s\nwant\n%s", back, orig)
	}
}

// tapeFrames returns the frames of a tape joined per direction.
func tapeFrames(t *testing.T, path string) map[tape.Direction]string {
	t.Helper()
	r, err := tape.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	frames := map[tape.Direction]string{}
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return frames
		}
		if err != nil {
			t.Fatal(err)
		}
		if rec.Type == tape.TypeMessage {
			frames[rec.Dir] += string(rec.Frame) + "\n"
		}
	}
}

// TestWrapUsage: each mistake is a one-line error with its exit code, and
// the file is left alone.
func TestWrapUsage(t *testing.T) {
	config := filepath.Join(t.TempDir(), "mcp.json")
	doc := `{"mcpServers": {"r": {"url": "https://example.com/mcp"}, "s": {"command": "srv"}}}`
	os.WriteFile(config, []byte(doc), 0o600)
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"wrap", "s"}, 2, "--client is required"},
		{[]string{"wrap", "--client", "zed", "s"}, 2, `unknown client "zed" (want claude-desktop, cursor, vscode, claude-code)`},
		{[]string{"wrap", "--client", "cursor", "--config", config}, 2, "name the servers to wrap, or give --all"},
		{[]string{"wrap", "--client", "cursor", "--config", config, "--all", "s"}, 2, "not both"},
		{[]string{"wrap", "--client", "cursor", "--config", config, "r"}, 1, `server "r" is an HTTP server`},
		{[]string{"wrap", "--client", "cursor", "--config", config, "x"}, 1, `no server "x" in the file`},
		{[]string{"wrap", "--client", "cursor", "--config", config, "--mcptape", "/no/such/mcptape", "s"}, 1, "--mcptape"},
		{[]string{"unwrap", "--client", "cursor", "--config", filepath.Join(filepath.Dir(config), "none.json"), "s"}, 1, "none.json"},
	}
	for _, tt := range tests {
		code, out, errOut := runCLI(t, "", tt.args...)
		if code != tt.code || out != "" || !strings.Contains(errOut, tt.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit %d and one line with %q", tt.args, code, out, errOut, tt.code, tt.want)
		}
	}
	if b, _ := os.ReadFile(config); string(b) != doc {
		t.Errorf("the file changed: %s", b)
	}
}

// TestWrapNoDefaultConfig: with no --config and no file where the client
// keeps it, wrap and unwrap say which client's file is missing where, and
// how to name another (exit 1, one line).
func TestWrapNoDefaultConfig(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("USERPROFILE", home) // os.UserHomeDir on Windows
	want := "no cursor configuration file at " + filepath.Join(home, ".cursor", "mcp.json") +
		", its place on this system: is the client installed, with an MCP server configured? Or name the file with --config"
	for _, verb := range []string{"wrap", "unwrap"} {
		code, out, errOut := runCLI(t, "", verb, "--client", "cursor", "--all")
		if code != 1 || out != "" || errOut != "mcptape "+verb+": "+want+"\n" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 1 and %q", verb, code, out, errOut, want)
		}
	}
}
