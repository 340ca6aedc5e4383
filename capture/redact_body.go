package capture

// Body redaction for the HTTP recorder: what the tape keeps of the bodies
// of exchanges that are not MCP (OAuth and discovery endpoints on the
// proxied origin: /register, /token, /authorize, /.well-known/...) and of
// JSON error bodies that are not JSON-RPC. MCP messages are never
// field-redacted: replay needs them byte for byte, and a tool's arguments
// are the user's data to keep, not the transport's credentials.
//
//   - JSON bodies: the value of every member whose name IsSecretField
//     (and every scalar inside such a member) becomes the redaction marker;
//     other strings lose the secrets their shape shows (RedactSecrets); the
//     rest is kept, re-encoded compact.
//   - Form bodies (application/x-www-form-urlencoded): field values as
//     query values are (headerRedactor.query).
//   - Other bodies are kept as text, as error pages are.
//   - WithoutRedaction keeps every body as it came.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"strconv"
	"strings"

	"github.com/mcptape/mcptape/internal/jsonstr"
	"github.com/mcptape/mcptape/jsonrpc"
)

// oauthSecretFields are parameter names that carry a credential though
// IsSecretName does not say so: OAuth's authorization code, PKCE verifier,
// client assertions and device-flow codes.
var oauthSecretFields = [...]string{"code", "code_verifier", "assertion", "client_assertion", "device_code", "user_code"}

// IsSecretField reports whether a JSON member, form field or query
// parameter called name holds a credential: its name looks secret
// (IsSecretName: client_secret, access_token, refresh_token, id_token,
// password, ...) or it is one of OAuth's (code, code_verifier, ...),
// unless it names what describes a credential rather than the credential
// itself (see describingSuffixes: token_type, token_endpoint,
// token_endpoint_auth_methods_supported, client_secret_expires_at...).
func IsSecretField(name string) bool {
	for _, f := range oauthSecretFields {
		if strings.EqualFold(name, f) {
			return true
		}
	}
	if !IsSecretName(name) {
		return false
	}
	lower := strings.ToLower(name)
	for _, s := range describingSuffixes {
		if strings.HasSuffix(lower, s) {
			return false
		}
	}
	return true
}

// describingSuffixes end the names of fields that describe a credential
// (its type, where to get one, which methods are supported, when it
// expires) and hold no secret: OAuth metadata and token responses are
// full of them.
var describingSuffixes = [...]string{"_type", "_endpoint", "_uri", "_uris", "_url", "_supported", "_method", "_methods", "_expires_at", "_expires_in", "_hint"}

// maxPlainBody bounds what an "end" event keeps of a JSON or form body
// that is not a message (after redaction).
const maxPlainBody = 64 << 10

// bodyNote returns what the tape keeps of a body that is not recorded as
// messages, of content type ctype: JSON and form bodies with their secret
// fields redacted (up to maxPlainBody bytes), anything else as text (up to
// maxNoteBody bytes), invalid UTF-8 replaced.
func (r *headerRedactor) bodyNote(ctype string, b []byte) string {
	t := bytes.TrimSpace(b)
	if len(t) == 0 {
		return ""
	}
	mt, _, _ := mime.ParseMediaType(ctype)
	limit := maxNoteBody
	switch {
	case mt == "application/x-www-form-urlencoded":
		limit = maxPlainBody
		if !r.off {
			b = []byte(r.query(string(t)))
		}
	case isJSONType(mt) || t[0] == '{' || t[0] == '[':
		limit = maxPlainBody
		if !r.off {
			red, err := redactJSON(t)
			if err != nil {
				return fmt.Sprintf("(%d bytes of invalid JSON withheld: it may hold credentials; --no-redact records it)", len(b))
			}
			b = red
		}
	}
	return strings.ToValidUTF8(string(b[:min(len(b), limit)]), "\uFFFD")
}

// isJSONType reports whether the media type mt is JSON.
func isJSONType(mt string) bool {
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// redactJSON returns the JSON value b, compact, with the values of
// secret-named members replaced by redaction markers (a string, number
// or every scalar of an object or array; null and booleans are kept).
// Member order is kept.
func redactJSON(b []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	type level struct {
		obj    bool
		n      int  // tokens so far: keys and values alternate in an object
		secret bool // every scalar below is redacted
		key    bool // in an object: the member being read has a secret name
	}
	var (
		out   []byte
		stack []level
		done  bool
	)
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			switch {
			case len(stack) > 0:
				return nil, io.ErrUnexpectedEOF
			case !done:
				return nil, errors.New("no JSON value")
			}
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if done {
			return nil, errors.New("more than one JSON value")
		}
		var top *level
		secret := false
		if len(stack) > 0 {
			top = &stack[len(stack)-1]
			secret = top.secret || (top.obj && top.key)
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			out = append(out, byte(d))
			done = len(stack) == 0
			continue
		}
		if top != nil {
			switch {
			case top.obj && top.n%2 == 1:
				out = append(out, ':')
			case top.n > 0:
				out = append(out, ',')
			}
			top.n++
		}
		switch v := tok.(type) {
		case json.Delim: // '{' or '['
			stack = append(stack, level{obj: v == '{', secret: secret})
			out = append(out, byte(v))
			continue
		case string:
			if top != nil && top.obj && top.n%2 == 1 { // a member name
				top.key = IsSecretField(v)
				out = jsonstr.AppendString(out, v)
				continue
			}
			if secret {
				v = RedactedClass(v)
			} else {
				v = RedactSecrets(v) // a URL's password, a token by its shape
			}
			out = jsonstr.AppendString(out, v)
		case json.Number:
			if secret {
				out = jsonstr.AppendString(out, RedactedClass(v.String()))
			} else {
				out = append(out, v...)
			}
		case bool:
			out = strconv.AppendBool(out, v)
		case nil:
			out = append(out, "null"...)
		}
		done = len(stack) == 0
	}
}

// looksJSONRPC reports whether body is meant as JSON-RPC: an object with
// a "jsonrpc" member, or an array whose first member is one. A malformed
// message still counts (inspect is there to flag it); an OAuth or
// discovery document does not.
func looksJSONRPC(body []byte) bool {
	b := bytes.TrimSpace(body)
	if len(b) > 0 && b[0] == '[' {
		m, err := jsonrpc.Split(b)
		if err != nil || len(m) == 0 {
			return bytes.Contains(b[:min(len(b), 4096)], []byte(`"jsonrpc"`))
		}
		b = m[0]
	}
	if len(b) == 0 || b[0] != '{' {
		return false
	}
	v := jsonrpc.Classify(b).Violations
	if v.Has(jsonrpc.ViolationInvalidJSON) {
		return bytes.Contains(b[:min(len(b), 4096)], []byte(`"jsonrpc"`))
	}
	return !v.Has(jsonrpc.ViolationMissingJSONRPC)
}
