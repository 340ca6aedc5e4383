package capture

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestRedactedClass(t *testing.T) {
	tests := []struct {
		value, want string
	}{
		{"", "<redacted:0>"},
		{"a", "<redacted:1-1>"},
		{"ab", "<redacted:2-3>"},
		{"abc", "<redacted:2-3>"},
		{strings.Repeat("x", 32), "<redacted:32-63>"},
		{strings.Repeat("x", 63), "<redacted:32-63>"},
		{strings.Repeat("x", 1000), "<redacted:512-1023>"},
	}
	for _, tt := range tests {
		if got := RedactedClass(tt.value); got != tt.want {
			t.Errorf("RedactedClass(%d bytes) = %q, want %q", len(tt.value), got, tt.want)
		}
	}
}

func TestHeaderRedactor(t *testing.T) {
	h := http.Header{
		"Authorization":       {"Bearer abcdefgh", "weird-no-scheme"},
		"Proxy-Authorization": {"Basic dXNlcjpwYXNz"},
		"Cookie":              {"a=1"},
		"Set-Cookie":          {"b=2; HttpOnly"},
		"X-Api-Key":           {"k"},
		"X-My-Password":       {"pw"},
		"X-Auth-User":         {"me"},
		"Mcp-Session-Id":      {"sess"},
		"Accept":              {"text/event-stream"},
		"X-Custom":            {"c"},
	}
	tests := []struct {
		name string
		r    headerRedactor
		want http.Header
	}{
		{"default", headerRedactor{}, http.Header{
			"Authorization":       {"Bearer <redacted:8-15>", "<redacted:8-15>"},
			"Proxy-Authorization": {"Basic <redacted:8-15>"},
			"Cookie":              {"<redacted:2-3>"},
			"Set-Cookie":          {"<redacted:8-15>"},
			"X-Api-Key":           {"<redacted:1-1>"},
			"X-My-Password":       {"<redacted:2-3>"},
			"X-Auth-User":         {"<redacted:2-3>"},
			"Mcp-Session-Id":      {"sess"},
			"Accept":              {"text/event-stream"},
			"X-Custom":            {"c"},
		}},
		{"extra", headerRedactor{extra: map[string]bool{"X-Custom": true}}, nil},
		{"off", headerRedactor{off: true}, h},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.r.headers(h)
			if tt.name == "extra" {
				if got.Get("X-Custom") != "<redacted:1-1>" || got.Get("Accept") != "text/event-stream" {
					t.Errorf("extra: %v", got)
				}
				return
			}
			for k, v := range tt.want {
				if strings.Join(got[k], "|") != strings.Join(v, "|") {
					t.Errorf("%s: got %q, want %q", k, got[k], v)
				}
			}
			if len(got) != len(tt.want) {
				t.Errorf("got %d headers, want %d", len(got), len(tt.want))
			}
		})
	}
	if h.Get("Authorization") != "Bearer abcdefgh" {
		t.Error("redaction altered the original headers")
	}
	if (&headerRedactor{}).headers(nil) != nil {
		t.Error("nil headers gave a map")
	}
}

func TestRedactQuery(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"a=1&b=2", "a=1&b=2"},
		{"sessionId=abc&api_key=s3cr3t", "sessionId=abc&api_key=%3Credacted%3A4-7%3E"},
		{"access%5Ftoken=xyz;x=1", "access%5Ftoken=%3Credacted%3A4-7%3E"},
		{"token", "token"},
		{"a=%zz&secret=%zz", "a=%zz&secret=%3Credacted%3A2-3%3E"},
		// OAuth's credentials by name; what only describes one is kept.
		{"code=abc&state=s&code_verifier=v", "code=%3Credacted%3A2-3%3E&state=s&code_verifier=%3Credacted%3A1-1%3E"},
		{"token=t&token_type_hint=refresh_token", "token=%3Credacted%3A1-1%3E&token_type_hint=refresh_token"},
	}
	for _, tt := range tests {
		if got := (&headerRedactor{}).query(tt.in); got != tt.want {
			t.Errorf("query(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := (&headerRedactor{off: true}).query("token=1"); got != "token=1" {
		t.Errorf("off: %q", got)
	}
	if got := RedactURL("https://u:pw@h/mcp?key=1&x=2"); got != "https://u:%3Credacted%3A2-3%3E@h/mcp?key=%3Credacted%3A1-1%3E&x=2" {
		t.Errorf("RedactURL: %q", got)
	}
}

// FuzzRedactQuery: redaction never fails, leaves a query with no secret
// parameter byte-identical, and leaves no secret parameter's value behind.
func FuzzRedactQuery(f *testing.F) {
	for _, s := range []string{"a=1&b=2", "api_key=xyz", "token=%41%42&x", "sessionId=1;password=2", "=&&=", "%zz=secret"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		got := (&headerRedactor{}).query(q)
		secret := false
		for part := range strings.SplitSeq(q, "&") {
			name, value, ok := strings.Cut(part, "=")
			if un, err := url.QueryUnescape(name); err == nil {
				name = un
			}
			if ok && IsSecretName(name) {
				secret = true
				if len(value) >= 4 && strings.Contains(got, "="+value) {
					t.Fatalf("query(%q) = %q keeps the value %q", q, got, value)
				}
			}
		}
		if !secret && got != q {
			t.Fatalf("query(%q) = %q: changed without a secret", q, got)
		}
		if strings.Count(got, "&") != strings.Count(q, "&") {
			t.Fatalf("query(%q) = %q: parameters lost or added", q, got)
		}
	})
}
