package clientconfig

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

const testMcptape = "/opt/mcptape/bin/mcptape"

// fixtures are configuration files in the clients' real formats, with the
// servers to wrap in each (nil: --all).
var fixtures = []struct {
	file, client string
	servers      []string
}{
	{"claude-desktop.json", "claude-desktop", nil},
	{"cursor.json", "cursor", nil},
	{"vscode-mcp.json", "vscode", nil},
	{"vscode-settings.json", "vscode", []string{"memory"}},
	{"claude-code.json", "claude-code", nil},
}

// stdioEntry reads back a server entry: command and args.
func stdioEntry(t *testing.T, doc []byte, c *Client, table, server string) []string {
	t.Helper()
	root, err := parseJSONC(doc)
	if err != nil {
		t.Fatalf("wrapped file does not parse: %v\n%s", err, doc)
	}
	for _, tb := range c.tables(root) {
		if tb.label != table {
			continue
		}
		e := tb.obj.get(server)
		cmd, _ := e.getString("command")
		argv := []string{cmd}
		for _, a := range e.get("args").elemsOrNil() {
			argv = append(argv, a.str)
		}
		return argv
	}
	t.Fatalf("no table %s", table)
	return nil
}

func (v *value) elemsOrNil() []*value {
	if v == nil {
		return nil
	}
	return v.elems
}

// TestWrapFixtures wraps the servers of each fixture and checks: the
// result matches its golden file; each wrapped entry runs mcptape record
// with the server's name and the original command line after "--";
// wrapping again changes nothing; unwrapping gives the original bytes.
func TestWrapFixtures(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.file, func(t *testing.T) {
			doc, err := os.ReadFile(filepath.Join("testdata", fx.file))
			if err != nil {
				t.Fatal(err)
			}
			c, err := FindClient(fx.client)
			if err != nil {
				t.Fatal(err)
			}
			o := Options{Mcptape: testMcptape, Servers: fx.servers, All: fx.servers == nil}
			wrapped, outcomes, err := c.Wrap(doc, o)
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", strings.TrimSuffix(fx.file, ".json")+".wrapped.json")
			if *update {
				os.WriteFile(golden, wrapped, 0o644)
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(want, wrapped) {
				t.Errorf("wrapped file differs from %s (go test -update rewrites it):\n%s", golden, wrapped)
			}
			before := map[string][]string{}
			for _, oc := range outcomes {
				if oc.Action == Wrapped {
					before[oc.Table+"/"+oc.Server] = stdioEntry(t, doc, c, oc.Table, oc.Server)
				}
			}
			if len(before) == 0 {
				t.Fatalf("nothing wrapped: %v", outcomes)
			}
			for _, oc := range outcomes {
				if oc.Action != Wrapped {
					continue
				}
				got := stdioEntry(t, wrapped, c, oc.Table, oc.Server)
				want := append([]string{testMcptape, "record", "--name", TapeName(oc.Server), "--"}, before[oc.Table+"/"+oc.Server]...)
				if !slices.Equal(want, got) {
					t.Errorf("%s: wrapped command line %q, want %q", oc.Server, got, want)
				}
			}
			again, outcomes2, err := c.Wrap(wrapped, o)
			if err != nil || !bytes.Equal(again, wrapped) {
				t.Errorf("wrapping twice changed the file (err %v):\n%s", err, again)
			}
			for _, oc := range outcomes2 {
				if oc.Action == Wrapped {
					t.Errorf("%s wrapped twice", oc.Server)
				}
			}
			back, _, err := c.Unwrap(wrapped, o)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(doc, back) {
				t.Errorf("unwrap did not restore the file:\n%s", back)
			}
		})
	}
}

// TestWrapOutcomes: what Wrap reports for each entry, HTTP entries
// skipped by --all, only the named servers touched otherwise.
func TestWrapOutcomes(t *testing.T) {
	doc, _ := os.ReadFile("testdata/claude-code.json")
	c, _ := FindClient("claude-code")
	tests := []struct {
		name string
		o    Options
		want []Outcome
	}{
		{"all", Options{All: true}, []Outcome{
			{"sentry", "mcpServers", SkippedHTTP},
			{"airtable", "mcpServers", Wrapped},
			{"playwright", `projects["/home/me/app"].mcpServers`, Wrapped},
		}},
		{"one", Options{Servers: []string{"playwright"}}, []Outcome{
			{"playwright", `projects["/home/me/app"].mcpServers`, Wrapped},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.o.Mcptape = testMcptape
			out, got, err := c.Wrap(doc, tt.o)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(tt.want, got) {
				t.Errorf("outcomes %v, want %v", got, tt.want)
			}
			if tt.name == "one" && !slices.Equal(stdioEntry(t, out, c, "mcpServers", "airtable"), []string{"npx", "-y", "airtable-mcp-server"}) {
				t.Error("a server not named was changed")
			}
		})
	}
}

// TestWrapErrors: each mistake is one line that names the problem, and
// nothing is returned to write.
func TestWrapErrors(t *testing.T) {
	tests := []struct {
		name, client, doc string
		o                 Options
		want              string
	}{
		{"unknown server", "cursor", `{"mcpServers": {"a": {"command": "x"}}}`, Options{Servers: []string{"b"}}, `no server "b" in the file (it has "a")`},
		{"HTTP named", "cursor", `{"mcpServers": {"r": {"url": "https://x/mcp"}}}`, Options{Servers: []string{"r"}}, `server "r" is an HTTP server (url "https://x/mcp"): wrap records stdio servers; record it with 'mcptape record --upstream https://x/mcp`},
		{"HTTP by type", "vscode", `{"servers": {"r": {"type": "sse", "url": "u"}}}`, Options{Servers: []string{"r"}}, `is an HTTP server`},
		{"no table", "claude-desktop", `{"globalShortcut": ""}`, Options{All: true}, `no server list in the file (a claude-desktop configuration has it under "mcpServers")`},
		{"bad JSON", "cursor", `{"mcpServers": {"a": }}`, Options{All: true}, `offset 21: unexpected '}'`},
		{"no command", "cursor", `{"mcpServers": {"a": {"args": []}}}`, Options{All: true}, `server "a" in mcpServers: no "command" to run (and no "url")`},
		{"args not an array", "cursor", `{"mcpServers": {"a": {"command": "x", "args": "y"}}}`, Options{All: true}, `server "a" in mcpServers: "args" is not an array`},
		{"entry not an object", "cursor", `{"mcpServers": {"a": 1}}`, Options{All: true}, `server "a" in mcpServers: entry is not an object`},
		{"nothing named", "cursor", `{"mcpServers": {}}`, Options{}, `no server named (give names, or --all)`},
		{"relative mcptape", "cursor", `{"mcpServers": {}}`, Options{All: true, Mcptape: "mcptape"}, `mcptape path "mcptape" is not absolute`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := FindClient(tt.client)
			if tt.o.Mcptape == "" {
				tt.o.Mcptape = testMcptape
			}
			out, _, err := c.Wrap([]byte(tt.doc), tt.o)
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") || out != nil {
				t.Errorf("Wrap = %q, %v; want the error %q", out, err, tt.want)
			}
		})
	}
}

// TestWrapArgsLayouts: the new arguments take the layout of the old ones,
// and unwrapping restores each layout exactly.
func TestWrapArgsLayouts(t *testing.T) {
	pre := `"record", "--name", "s", "--", `
	tests := []struct{ name, entry, want string }{
		{"no args", `{"command": "x"}`, `{"command": "/m/mcptape", "args": [` + pre + `"x"]}`},
		{"empty args", `{"command": "x",
 "args": [ ]}`, `{"command": "/m/mcptape",
 "args": [` + pre + `"x" ]}`},
		{"one arg", `{"command": "x", "args": ["a"]}`, `{"command": "/m/mcptape", "args": [` + pre + `"x", "a"]}`},
		{"one arg per line", "{\"command\": \"x\", \"args\": [\n   \"a\"\n]}", "{\"command\": \"/m/mcptape\", \"args\": [\n   \"record\",\n   \"--name\",\n   \"s\",\n   \"--\",\n   \"x\",\n   \"a\"\n]}"},
		{"args first", `{"args": ["a","b"], "command": "x"}`, `{"args": ["record","--name","s","--","x","a","b"], "command": "/m/mcptape"}`},
		{"escapes kept", `{"command": "C:\\bin\\x\u00e9.exe", "args": ["a"]}`, `{"command": "/m/mcptape", "args": [` + pre + `"C:\\bin\\x\u00e9.exe", "a"]}`},
	}
	c, _ := FindClient("cursor")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := []byte(`{"mcpServers": {"s": ` + tt.entry + `}}`)
			o := Options{Mcptape: "/m/mcptape", All: true}
			got, _, err := c.Wrap(doc, o)
			if err != nil {
				t.Fatal(err)
			}
			if want := `{"mcpServers": {"s": ` + tt.want + `}}`; string(got) != want {
				t.Errorf("wrapped\n got %s\nwant %s", got, want)
			}
			back, _, err := c.Unwrap(got, o)
			if err != nil || string(back) != string(doc) {
				t.Errorf("unwrapped %s, %v; want %s", back, err, doc)
			}
		})
	}
}

// TestUnwrapLeavesOthers: entries mcptape did not write, including a
// hand-written "mcptape record -o" entry, stay as they are.
func TestUnwrapLeavesOthers(t *testing.T) {
	doc := `{"mcpServers": {
 "plain": {"command": "npx", "args": ["srv"]},
 "manual": {"command": "mcptape", "args": ["record", "-o", "t.jsonl.zst", "--", "srv"]}
}}`
	c, _ := FindClient("claude-desktop")
	got, outcomes, err := c.Unwrap([]byte(doc), Options{All: true})
	if err != nil || string(got) != doc {
		t.Errorf("Unwrap changed the file: %v\n%s", err, got)
	}
	want := []Outcome{{"plain", "mcpServers", NotWrapped}, {"manual", "mcpServers", NotWrapped}}
	if !slices.Equal(want, outcomes) {
		t.Errorf("outcomes %v, want %v", outcomes, want)
	}
}

func TestTapeName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"everything", "everything"},
		{"my server/v2", "my_server_v2"},
		{"..", "server"},
		{"Été", "__t__"},
		{"a.b_c-1", "a.b_c-1"},
	}
	for _, tt := range tests {
		if got := TapeName(tt.in); got != tt.want {
			t.Errorf("TapeName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
