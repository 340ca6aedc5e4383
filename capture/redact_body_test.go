package capture

import (
	"net/http"
	"strings"
	"testing"
)

func TestIsSecretField(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"client_secret", true}, {"access_token", true}, {"refresh_token", true}, {"id_token", true},
		{"code", true}, {"CODE", true}, {"code_verifier", true}, {"client_assertion", true}, {"device_code", true},
		{"password", true}, {"api_key", true},
		{"code_challenge", false}, {"client_id", false}, {"redirect_uri", false}, {"state", false},
		{"grant_type", false}, {"expires_in", false}, {"scope", false}, {"zipcode", false},
		// Names that describe a credential, not hold one.
		{"token_type", false}, {"token_endpoint", false}, {"authorization_endpoint", false},
		{"token_endpoint_auth_methods_supported", false}, {"token_endpoint_auth_method", false},
		{"client_secret_expires_at", false}, {"token_type_hint", false}, {"jwks_uri", false},
	}
	for _, tt := range tests {
		if got := IsSecretField(tt.name); got != tt.want {
			t.Errorf("IsSecretField(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestRedactJSON(t *testing.T) {
	tests := []struct {
		name, in, want, err string
	}{
		{name: "DCR response", in: `{"client_id":"cid","client_secret":"sekrit-client-secret","redirect_uris":["http://localhost:3000/cb"]}`,
			want: `{"client_id":"cid","client_secret":"<redacted:16-31>","redirect_uris":["http://localhost:3000/cb"]}`},
		{name: "token response", in: `{ "access_token": "sekrit-token-123", "token_type": "Bearer", "expires_in": 3600, "refresh_token": "r", "id_token": "eyJ.a.b" }`,
			want: `{"access_token":"<redacted:16-31>","token_type":"Bearer","expires_in":3600,"refresh_token":"<redacted:1-1>","id_token":"<redacted:4-7>"}`},
		{name: "metadata kept", in: `{"issuer":"https://as","token_endpoint":"https://as/token","token_endpoint_auth_methods_supported":["client_secret_post"]}`,
			want: `{"issuer":"https://as","token_endpoint":"https://as/token","token_endpoint_auth_methods_supported":["client_secret_post"]}`},
		{name: "secrets by shape in other strings", in: `{"note":"use ghp_abc","db":"postgres://u:pw@h/d"}`,
			want: `{"note":"use <redacted:4-7>","db":"postgres://u:%3Credacted%3A2-3%3E@h/d"}`},
		{name: "numbers, null and booleans", in: `{"pin_code":1234,"password":null,"secret":true,"n":-1.5e3}`,
			want: `{"pin_code":1234,"password":null,"secret":true,"n":-1.5e3}`},
		{name: "number secret", in: `{"code":123456}`, want: `{"code":"<redacted:4-7>"}`},
		{name: "nested secret member", in: `{"credentials":{"user":"u","list":["a","bb"]},"after":{"x":"y"}}`,
			want: `{"credentials":{"user":"<redacted:1-1>","list":["<redacted:1-1>","<redacted:2-3>"]},"after":{"x":"y"}}`},
		{name: "array of objects", in: `[{"code":"c1"},{"code":"c22","keep":"k"}]`,
			want: `[{"code":"<redacted:2-3>"},{"code":"<redacted:2-3>","keep":"k"}]`},
		{name: "escapes kept readable", in: `{"a":"<b>\u0026\"","code":"x"}`, want: `{"a":"<b>&\"","code":"<redacted:1-1>"}`},
		{name: "empty object and array", in: `{"a":{},"b":[]}`, want: `{"a":{},"b":[]}`},
		{name: "scalar", in: `"just a string"`, want: `"just a string"`},
		{name: "invalid", in: `{"code":"x",`, err: "unexpected EOF"},
		{name: "two values", in: `{} {}`, err: "more than one"},
		{name: "nothing", in: ``, err: "no JSON value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := redactJSON([]byte(tt.in))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("redactJSON = %s, %v\nwant %s", got, err, tt.want)
			}
		})
	}
}

func TestBodyNote(t *testing.T) {
	on, off := &headerRedactor{}, &headerRedactor{off: true}
	big := `{"a":"` + strings.Repeat("x", maxPlainBody) + `"}`
	tests := []struct {
		name  string
		r     *headerRedactor
		ctype string
		body  string
		want  string
	}{
		{"form", on, "application/x-www-form-urlencoded", "grant_type=authorization_code&code=sekrit-auth-code&code_verifier=v&client_id=c\n",
			"grant_type=authorization_code&code=%3Credacted%3A16-31%3E&code_verifier=%3Credacted%3A1-1%3E&client_id=c"},
		{"json", on, "application/json; charset=utf-8", `{"access_token":"abc"}`, `{"access_token":"<redacted:2-3>"}`},
		{"json by its first byte", on, "text/plain", ` {"client_secret":"abc"}`, `{"client_secret":"<redacted:2-3>"}`},
		{"invalid json withheld", on, "application/json", `{"access_token":"abc"`, "(21 bytes of invalid JSON withheld: it may hold credentials; --no-redact records it)"},
		{"text kept", on, "text/html", "<h1>Bad</h1>\n", "<h1>Bad</h1>\n"},
		{"no redaction", off, "application/json", `{"access_token":"abc"}`, `{"access_token":"abc"}`},
		{"no redaction, form", off, "application/x-www-form-urlencoded", `code=abc`, `code=abc`},
		{"empty", on, "application/json", " \n", ""},
		{"cut at the bound", on, "application/json", big, big[:maxPlainBody]},
		{"invalid UTF-8", on, "text/plain", "a\xffb", "a\uFFFDb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.r.bodyNote(tt.ctype, []byte(tt.body)); got != tt.want {
				t.Errorf("bodyNote = %.200q\nwant %.200q", got, tt.want)
			}
		})
	}
}

func TestLooksJSONRPC(t *testing.T) {
	tests := []struct {
		body string
		want bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"initialize"}`, true},
		{`{"id":1,"jsonrpc":"1.0","result":{}}`, true}, // wrong, but meant as JSON-RPC: inspect flags it
		{` [{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","method":"b"}]`, true},
		{`{"jsonrpc":"2.0","id":1,"method":"x","params":{"s":"AAA`, true}, // cut
		{`{"redirect_uris":["http://localhost:3000/cb"]}`, false},
		{`{"error":"invalid_token"}`, false},
		{`{"params":{"jsonrpc":"2.0"}}`, false},
		{`[]`, false},
		{`[1,2]`, false},
		{`grant_type=authorization_code`, false},
		{``, false},
	}
	for _, tt := range tests {
		if got := looksJSONRPC([]byte(tt.body)); got != tt.want {
			t.Errorf("looksJSONRPC(%s) = %v, want %v", tt.body, got, tt.want)
		}
	}
}

// TestRedactURLHeaders: the query and fragment of Location, Content-Location
// and Referer lose their secrets; headers with none are shared as they are.
func TestRedactURLHeaders(t *testing.T) {
	r := &headerRedactor{}
	tests := []struct {
		name, header, in, want string
	}{
		{"redirect with code", "Location", "http://localhost:3000/cb?code=sekrit-auth-code&state=xyz", "http://localhost:3000/cb?code=%3Credacted%3A16-31%3E&state=xyz"},
		{"implicit flow fragment", "Location", "https://app/cb#access_token=tok123&token_type=Bearer&state=s", "https://app/cb#access_token=%3Credacted%3A4-7%3E&token_type=Bearer&state=s"},
		{"referer", "Referer", "http://localhost:3000/cb?code=c", "http://localhost:3000/cb?code=%3Credacted%3A1-1%3E"},
		{"nothing secret", "Location", "/mcp?session=1", "/mcp?session=1"},
		{"not a URL header", "X-Next", "http://h/?code=c", "http://h/?code=c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{tt.header: {tt.in}, "Content-Type": {"text/plain"}}
			got := r.headers(h)
			if v := got.Get(tt.header); v != tt.want {
				t.Errorf("%s: %q, want %q", tt.header, v, tt.want)
			}
			if h.Get(tt.header) != tt.in {
				t.Errorf("the headers themselves were changed")
			}
			if off := (&headerRedactor{off: true}).headers(h); off.Get(tt.header) != tt.in {
				t.Errorf("redaction off: %q", off.Get(tt.header))
			}
		})
	}
}
