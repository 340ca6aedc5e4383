package capture

import (
	"slices"
	"strings"
	"testing"
)

func TestIsSecretName(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"API_KEY", true}, {"GITHUB_TOKEN", true}, {"client_secret", true}, {"DB_PASSWORD", true},
		{"passwd", true}, {"Authorization", true}, {"AWS_CREDENTIALS", true}, {"session-cookie", true},
		{"private_key_file", true}, {"api-key", true},
		{"PATH", false}, {"HOME", false}, {"NODE_ENV", false}, {"PORT", false}, {"", false},
	}
	for _, tt := range tests {
		if got := IsSecretName(tt.name); got != tt.want {
			t.Errorf("IsSecretName(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestRedactAssignment(t *testing.T) {
	tests := []struct{ in, want string }{
		{"API_KEY=abc123", "API_KEY=<redacted:4-7>"},
		{"API_KEY=", "API_KEY=<redacted:0>"},
		{"TOKEN=a=b", "TOKEN=<redacted:2-3>"},
		{"PORT=8080", "PORT=8080"},
		{"no assignment", "no assignment"},
		{"/path/keys=1", "/path/keys=1"}, // not a variable name
	}
	for _, tt := range tests {
		if got := RedactAssignment(tt.in); got != tt.want {
			t.Errorf("RedactAssignment(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestRedactArgs(t *testing.T) {
	tests := []struct {
		in, want []string
	}{
		{[]string{"mcptape", "record", "--env", "API_KEY=sk-1", "--env=GH_TOKEN=ghp", "-o", "/tmp/keys.zst", "--", "node", "s.js"},
			[]string{"mcptape", "record", "--env", "API_KEY=<redacted:4-7>", "--env=GH_TOKEN=<redacted:2-3>", "-o", "/tmp/keys.zst", "--", "node", "s.js"}},
		{[]string{"server", "--api-key", "sk-live", "--port", "80"},
			[]string{"server", "--api-key", "<redacted:4-7>", "--port", "80"}},
		{[]string{"server", "--token=abc", "--verbose"},
			[]string{"server", "--token=<redacted:2-3>", "--verbose"}},
		{[]string{"server", "--auth", "--debug"}, // a secret flag without a value
			[]string{"server", "--auth", "--debug"}},
		{[]string{"env", "SECRET=x", "PATH=/bin", "server"},
			[]string{"env", "SECRET=<redacted:1-1>", "PATH=/bin", "server"}},
		{[]string{"server", "--password"}, []string{"server", "--password"}},
		{[]string{"mcptape", "record", "--upstream=https://u:pw12@mcp.example.com/mcp?token=abc&x=1", "--"},
			[]string{"mcptape", "record", "--upstream=https://u:%3Credacted%3A4-7%3E@mcp.example.com/mcp?token=%3Credacted%3A2-3%3E&x=1", "--"}},
		{[]string{"client", "http://h/sse?api_key=k"},
			[]string{"client", "http://h/sse?api_key=%3Credacted%3A1-1%3E"}},
		// Headers given on the command line (mcp-remote --header, curl -H).
		{[]string{"npx", "mcp-remote", "https://h/sse", "--header", "Authorization: Bearer tok123"},
			[]string{"npx", "mcp-remote", "https://h/sse", "--header", "Authorization: Bearer <redacted:4-7>"}},
		{[]string{"curl", "-H", "X-API-Key:abc", "--header=Cookie: s=1", "-H", "Accept: text/plain"},
			[]string{"curl", "-H", "X-API-Key:<redacted:2-3>", "--header=Cookie: <redacted:2-3>", "-H", "Accept: text/plain"}},
		{nil, []string{}},
	}
	for _, tt := range tests {
		got := RedactArgs(tt.in)
		if !slices.Equal(got, tt.want) {
			t.Errorf("RedactArgs(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestQuoteArgs(t *testing.T) {
	tests := []struct {
		in   []string
		want string
	}{
		{[]string{"npx", "-y", "@scope/server@1.2"}, "npx -y @scope/server@1.2"},
		{[]string{"sh", "-c", "echo hi; exit 1"}, "sh -c 'echo hi; exit 1'"},
		{[]string{"it's"}, `'it'\''s'`},
		{[]string{""}, "''"},
		{[]string{"KEY=<redacted:2-3>"}, "KEY=<redacted:2-3>"},
	}
	for _, tt := range tests {
		if got := QuoteArgs(tt.in); got != tt.want {
			t.Errorf("QuoteArgs(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzRedactArgs: whatever the command line, redaction keeps the number of
// arguments, never grows a non-secret argument, and never lets the value of
// a secret assignment through.
func FuzzRedactArgs(f *testing.F) {
	f.Add("--env", "API_KEY=hunter2")
	f.Add("--api-key", "hunter2")
	f.Add("--token=hunter2", "x")
	f.Add("-", "--")
	f.Add("PATH=/bin", "SECRET=")
	f.Fuzz(func(t *testing.T, a, b string) {
		in := []string{"cmd", a, b}
		out := RedactArgs(in)
		if len(out) != len(in) {
			t.Fatalf("%d args in, %d out", len(in), len(out))
		}
		for i, arg := range in {
			name, value, ok := strings.Cut(strings.TrimLeft(arg, "-"), "=")
			if ok && isName(name) && IsSecretName(name) && value != "" && strings.Contains(out[i], "="+value) {
				t.Fatalf("secret value of %q leaked: %q", arg, out[i])
			}
			if out[i] != arg && !strings.Contains(out[i], "<redacted:") {
				t.Fatalf("%q changed to %q without a redaction marker", arg, out[i])
			}
		}
	})
}

// TestRedactSecrets: secrets recognised by their shape, and no false
// alarm on ordinary words, paths and versions.
func TestRedactSecrets(t *testing.T) {
	jwt := "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl"
	tests := []struct{ in, want string }{
		{"postgres://u:s3cretC@db/x", "postgres://u:%3Credacted%3A4-7%3E@db/x"},
		{"redis://:pw@cache:6379/0", "redis://:%3Credacted%3A2-3%3E@cache:6379/0"},
		{"https://ghp_abcdefgh@github.com/o/r.git", "https://<redacted:8-15>@github.com/o/r.git"},
		{"ghp_s3cretB", "<redacted:8-15>"},
		{"gho_x", "<redacted:4-7>"},
		{"github_pat_11AAAAAAA0_abc", "<redacted:16-31>"},
		{"glpat-abcdefghijklmnop", "<redacted:16-31>"},
		{"xoxb-1234-5678-abcdef", "<redacted:16-31>"},
		{"xoxp-1", "<redacted:4-7>"},
		{"sk-proj-abcdefghijklmnopqrstuvwx", "<redacted:32-63>"},
		{"sk-ant-api03-abcdefghijkl", "<redacted:16-31>"},
		{"AKIAIOSFODNN7EXAMPLE", "<redacted:16-31>"},
		{"ASIAIOSFODNN7EXAMPLE", "<redacted:16-31>"},
		{jwt, "<redacted:32-63>"},
		{"Authorization: Bearer " + jwt, "Authorization: Bearer <redacted:32-63>"},
		{"a ghp_x1 and sk-abcdefghijklmnopqrstu", "a <redacted:4-7> and <redacted:16-31>"},
		// Not secrets.
		{"sk-learn", "sk-learn"},
		{"task-abcdefghijklmnopqrstuvwxyz", "task-abcdefghijklmnopqrstuvwxyz"},
		{"AKIA", "AKIA"},
		{"AKIAIOSFODNN7example", "AKIAIOSFODNN7example"},
		{"eyJhbGciOi", "eyJhbGciOi"},
		{"ghp_", "ghp_"},
		{"xox-1", "xox-1"},
		{"/usr/local/bin/node", "/usr/local/bin/node"},
		{"https://example.com/mcp?x=1", "https://example.com/mcp?x=1"},
		{"v1.2.3", "v1.2.3"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := RedactSecrets(tt.in); got != tt.want {
			t.Errorf("RedactSecrets(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestRedactAssignmentValues: an --env assignment whose name does not look
// secret still has the secrets its value shows redacted (repro D2).
func TestRedactAssignmentValues(t *testing.T) {
	tests := []struct{ in, want string }{
		{"GITHUB_PAT=ghp_s3cretB", "GITHUB_PAT=<redacted:8-15>"},
		{"DATABASE_URL=postgres://u:s3cretC@db/x", "DATABASE_URL=postgres://u:%3Credacted%3A4-7%3E@db/x"},
		{"SLACK=xoxb-1-2-abc", "SLACK=<redacted:8-15>"},
		{"OPENAI=sk-abcdefghijklmnopqrstuvwx", "OPENAI=<redacted:16-31>"},
		{"AWS_ID=AKIAIOSFODNN7EXAMPLE", "AWS_ID=<redacted:16-31>"},
		{"UPSTREAM=https://h/mcp?api_key=k&x=1", "UPSTREAM=https://h/mcp?api_key=%3Credacted%3A1-1%3E&x=1"},
		{"NODE_ENV=production", "NODE_ENV=production"},
		{"URL=https://example.com/mcp", "URL=https://example.com/mcp"},
	}
	for _, tt := range tests {
		if got := RedactAssignment(tt.in); got != tt.want {
			t.Errorf("RedactAssignment(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	args := []string{"mcptape", "record", "--env", "GITHUB_PAT=ghp_s3cretB", "--env=DB=postgres://u:pw@h/d", "--", "srv", "--header", "Authorization: Bearer ghp_zzz", "xoxb-9"}
	want := []string{"mcptape", "record", "--env", "GITHUB_PAT=<redacted:8-15>", "--env=DB=postgres://u:%3Credacted%3A2-3%3E@h/d", "--", "srv", "--header", "Authorization: Bearer <redacted:4-7>", "<redacted:4-7>"}
	if got := RedactArgs(args); !slices.Equal(got, want) {
		t.Errorf("RedactArgs(%q)\n = %q\nwant %q", args, got, want)
	}
}
