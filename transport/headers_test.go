package transport

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func TestEncodeHeaderValue(t *testing.T) {
	wrap := func(s string) string { return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?=" }
	tests := []struct{ in, want string }{
		{"", ""},
		{"echo", "echo"},
		{"file:///a b.txt", "file:///a b.txt"},
		{"tools/call", "tools/call"},
		{"héllo", wrap("héllo")},
		{"日本", wrap("日本")},
		{" lead", wrap(" lead")},
		{"trail\t", wrap("trail\t")},
		{"a\nb", wrap("a\nb")},
		{"del\x7f", wrap("del\x7f")},
		{"=?base64?abc?=", wrap("=?base64?abc?=")}, // looks wrapped: wrapped again
		{"=?base64?abc", "=?base64?abc"},
	}
	for _, tt := range tests {
		got := EncodeHeaderValue(tt.in)
		if got != tt.want {
			t.Errorf("EncodeHeaderValue(%q) = %q, want %q", tt.in, got, tt.want)
		}
		back, err := DecodeHeaderValue(got)
		if err != nil || back != tt.in {
			t.Errorf("DecodeHeaderValue(%q) = %q, %v; want %q", got, back, err, tt.in)
		}
	}
	if _, err := DecodeHeaderValue("=?base64?!!!?="); err == nil {
		t.Error("bad base64 decoded")
	}
	if v, err := DecodeHeaderValue("=?base64??"); err != nil || v != "=?base64??" {
		t.Errorf("overlapping wrapper: %q, %v", v, err)
	}
}

func FuzzHeaderValue(f *testing.F) {
	for _, s := range []string{"", "echo", "héllo", " x ", "=?base64?aGk=?=", "a\x00b", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		enc := EncodeHeaderValue(s)
		for i := 0; i < len(enc); i++ {
			if enc[i] < 0x20 || enc[i] > 0x7e {
				t.Fatalf("EncodeHeaderValue(%q) = %q holds byte %#x", s, enc, enc[i])
			}
		}
		if enc != "" && (enc[0] == ' ' || enc[len(enc)-1] == ' ') {
			t.Fatalf("EncodeHeaderValue(%q) = %q has blanks at an end", s, enc)
		}
		dec, err := DecodeHeaderValue(enc)
		if err != nil || dec != s {
			t.Fatalf("round trip of %q: %q, %v", s, dec, err)
		}
		DecodeHeaderValue(s) // any input: no panic
	})
}

func TestStandardHeaders(t *testing.T) {
	meta := func(v string) string {
		return `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + v + `"}`
	}
	tests := []struct {
		name, frame, version string
		want                 http.Header
	}{
		{"2025 request", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`, "2025-06-18",
			http.Header{HeaderProtocolVersion: {"2025-06-18"}}},
		{"no version", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "", http.Header{}},
		{"2026 from version", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}`, "2026-07-28",
			http.Header{HeaderProtocolVersion: {"2026-07-28"}, HeaderMethod: {"tools/call"}, HeaderName: {"echo"}}},
		{"2026 from _meta wins", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",` + meta("2026-07-28") + `}}`, "2025-06-18",
			http.Header{HeaderProtocolVersion: {"2026-07-28"}, HeaderMethod: {"tools/call"}, HeaderName: {"echo"}}},
		{"resources/read", `{"jsonrpc":"2.0","id":"r","method":"resources/read","params":{` + meta("2026-07-28") + `,"uri":"file:///x"}}`, "",
			http.Header{HeaderProtocolVersion: {"2026-07-28"}, HeaderMethod: {"resources/read"}, HeaderName: {"file:///x"}}},
		{"prompts/get non-ASCII", `{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"résumé",` + meta("2026-07-28") + `}}`, "",
			http.Header{HeaderProtocolVersion: {"2026-07-28"}, HeaderMethod: {"prompts/get"}, HeaderName: {EncodeHeaderValue("résumé")}}},
		{"tasks/get", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"t-1",` + meta("2026-07-28") + `}}`, "",
			http.Header{HeaderProtocolVersion: {"2026-07-28"}, HeaderMethod: {"tasks/get"}, HeaderName: {"t-1"}}},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, "2026-07-28",
			http.Header{HeaderProtocolVersion: {"2026-07-28"}, HeaderMethod: {"notifications/cancelled"}}},
		{"name of wrong type", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":7,` + meta("2026-07-28") + `}}`, "",
			http.Header{HeaderProtocolVersion: {"2026-07-28"}, HeaderMethod: {"tools/call"}}},
		{"response", `{"jsonrpc":"2.0","id":1,"result":{` + meta("2026-07-28") + `}}`, "2026-07-28",
			http.Header{HeaderProtocolVersion: {"2026-07-28"}}},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, "2026-07-28",
			http.Header{HeaderProtocolVersion: {"2026-07-28"}}},
		{"key in a string only", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"io.modelcontextprotocol/protocolVersion"}}`, "2025-11-25",
			http.Header{HeaderProtocolVersion: {"2025-11-25"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := StandardHeaders([]byte(tt.frame), tt.version)
			if !equalHeaders(got, tt.want) {
				t.Errorf("StandardHeaders = %v, want %v", got, tt.want)
			}
		})
	}
}

func equalHeaders(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if strings.Join(v, "\x00") != strings.Join(b[k], "\x00") {
			return false
		}
	}
	return true
}

// FuzzStandardHeaders checks the derived headers against a reference that
// decodes the frame generically with encoding/json.
func FuzzStandardHeaders(f *testing.F) {
	f.Add(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, "")
	f.Add(`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"ü"}}`, "2026-07-28")
	f.Add(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`, "2025-06-18")
	f.Add(`[1,2]`, "2026-07-28")
	f.Add(`{"id":1,"method":"tasks/cancel","params":{"taskId":"\u00e9"}}`, "2026-07-28")
	f.Fuzz(func(t *testing.T, frame, version string) {
		h := StandardHeaders([]byte(frame), version)
		var top map[string]any
		if json.Unmarshal([]byte(frame), &top) != nil {
			return // not an object: at most the version header, checked below
		}
		method, isMsg := top["method"].(string)
		params, _ := top["params"].(map[string]any)
		v := version
		if meta, ok := params["_meta"].(map[string]any); ok && isMsg && strings.Contains(frame, metaVersionKey) {
			// (the key is looked for in the raw bytes first: an escaped
			// key is not seen, and the version is then the default)
			if mv, ok := meta[metaVersionKey].(string); ok && mv != "" {
				v = mv
			}
		}
		if got := h.Get(HeaderProtocolVersion); got != v {
			t.Fatalf("MCP-Protocol-Version %q, want %q", got, v)
		}
		if !isMsg || v < StandardHeadersVersion || method == "" {
			if h.Get(HeaderMethod) != "" || h.Get(HeaderName) != "" {
				t.Fatalf("standard headers where none belong: %v", h)
			}
			return
		}
		if dec, err := DecodeHeaderValue(h.Get(HeaderMethod)); err != nil || dec != method {
			t.Fatalf("Mcp-Method %q, method %q", h.Get(HeaderMethod), method)
		}
		want := ""
		if member := nameMember(method); member != "" {
			want, _ = params[member].(string)
		}
		if got, err := DecodeHeaderValue(h.Get(HeaderName)); err != nil || got != want {
			t.Fatalf("Mcp-Name %q (%q), want %q", h.Get(HeaderName), got, want)
		}
	})
}

func TestInitializeVersion(t *testing.T) {
	tests := map[string]string{
		`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{}}}`: "2025-06-18",
		`{"jsonrpc":"2.0","id":0,"error":{"code":-32602,"message":"x"}}`:                       "",
		`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":7}}`:                              "",
		`not json`: "",
	}
	for in, want := range tests {
		if got := initializeVersion([]byte(in)); got != want {
			t.Errorf("initializeVersion(%s) = %q, want %q", in, got, want)
		}
	}
}
