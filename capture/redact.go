package capture

import "strings"

// Redaction rules, shared by every recorder that writes a command line or
// headers into a tape header:
//
//   - A name is secret when, lower-cased, it contains one of: token, secret,
//     key, password, passwd, auth, credential, cookie, private. Over-redaction
//     is preferred to a leak: "MONKEY" is redacted too.
//   - A secret value is replaced by RedactedClass's marker, "<redacted:A-B>"
//     giving the power-of-two range of its length, so that an empty or
//     unexpectedly short value stays visible without the exact length
//     narrowing down which kind of token it was. Command lines and HTTP
//     headers use the same marker.
//   - Only what goes into the tape is redacted; the child always gets the
//     real values.

// secretFragments are the lower-case name fragments that mark a secret.
func secretFragments() [9]string {
	return [...]string{"token", "secret", "key", "password", "passwd", "auth", "credential", "cookie", "private"}
}

// IsSecretName reports whether name (an environment variable, a flag name or
// a header name) looks like it holds a secret.
func IsSecretName(name string) bool {
	lower := strings.ToLower(name)
	for _, f := range secretFragments() {
		if strings.Contains(lower, f) {
			return true
		}
	}
	return false
}

// RedactAssignment redacts the value of "NAME=VALUE" whole when NAME
// looks secret, and otherwise the secrets its value shows (RedactSecrets:
// a URL's password, a token of a well-known shape). Anything else is
// returned unchanged.
func RedactAssignment(kv string) string {
	name, value, ok := strings.Cut(kv, "=")
	if !ok || !isName(name) {
		return RedactSecrets(kv)
	}
	if IsSecretName(name) {
		return name + "=" + RedactedClass(value)
	}
	return name + "=" + redactValue(value)
}

// RedactArgs returns a copy of a command line with secret values replaced:
//
//   - NAME=VALUE where NAME looks secret (environment assignments such as
//     "API_KEY=..." given to env(1) or to mcptape's --env);
//   - --name=VALUE where name looks secret ("--api-key=...");
//   - --name VALUE where name looks secret: the next argument, unless it
//     starts with "-";
//   - --flag=NAME=VALUE where NAME looks secret ("--env=API_KEY=...");
//   - "Name: value" headers whose name looks secret, alone or as a flag's
//     value ("--header", "Authorization: Bearer ..."): the value, a known
//     scheme word kept;
//   - URLs, alone or as a flag's value ("--upstream=https://u:pw@h/?token=x"),
//     and in the value of any NAME=VALUE ("DATABASE_URL=postgres://u:pw@h/db"):
//     the password and secret-looking query values (see RedactURL);
//   - tokens of a well-known shape anywhere (see RedactSecrets): "ghp_...",
//     "sk-...", "xoxb-...", "AKIA...", JWTs.
//
// Other secrets in positional arguments are not recognised.
func RedactArgs(args []string) []string {
	out := make([]string, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		out[i] = redactArg(a)
		if out[i] != a || !isFlag(a) || strings.Contains(a, "=") {
			continue
		}
		if IsSecretName(strings.TrimLeft(a, "-")) && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			i++
			out[i] = RedactedClass(args[i])
		}
	}
	return out
}

// redactArg redacts one argument on its own.
func redactArg(a string) string {
	if isFlag(a) {
		name, value, ok := strings.Cut(a, "=")
		if !ok {
			return a
		}
		if IsSecretName(strings.TrimLeft(name, "-")) {
			return name + "=" + RedactedClass(value)
		}
		return name + "=" + redactValue(value)
	}
	return redactValue(a)
}

// redactValue redacts a NAME=VALUE assignment (RedactAssignment), the
// value of a "Name: value" header whose name looks secret ("Authorization:
// Bearer ...", given to mcp-remote's --header or curl's -H; a known scheme
// word is kept, as in recorded headers), or the secrets anything else
// shows (RedactSecrets).
func redactValue(v string) string {
	if name, _, ok := strings.Cut(v, "="); ok && isName(name) {
		return RedactAssignment(v)
	}
	if name, value, ok := strings.Cut(v, ":"); ok && isName(name) && IsSecretName(name) {
		trimmed := strings.TrimLeft(value, " \t")
		return name + ":" + value[:len(value)-len(trimmed)] + redactCredential(trimmed)
	}
	return RedactSecrets(v)
}

// isFlag reports whether a looks like a command-line flag.
func isFlag(a string) bool {
	return len(a) > 1 && a[0] == '-' && isName(strings.TrimLeft(a[:strings.IndexByte(a+"=", '=')], "-"))
}

// isName reports whether s is a plausible variable or flag name: letters,
// digits, '_', '-' and '.', not empty.
func isName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// QuoteArgs renders args as one shell-like command line, quoting arguments
// that hold spaces or shell metacharacters with single quotes.
func QuoteArgs(args []string) string {
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(quoteArg(a))
	}
	return b.String()
}

func quoteArg(a string) string {
	if a == "" {
		return "''"
	}
	if strings.Contains(a, "<redacted:") && !strings.ContainsAny(a, " \t\n'") {
		return a // a redacted value reads better unquoted
	}
	for i := 0; i < len(a); i++ {
		c := a[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("_-./=:@,+%", c) >= 0) {
			return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return a
}
