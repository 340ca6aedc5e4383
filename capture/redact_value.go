package capture

import "strings"

// Redaction by value: secrets recognised by their shape, whatever name
// they go by (an --env NAME that does not look secret, a positional
// argument, a URL in a variable).
//
//   - URLs (anything with "://"): the userinfo password and secret-looking
//     query values (RedactURL); the scheme need not be http
//     ("postgres://u:PASS@h/db").
//   - Tokens of a well-known shape, as whole words (runs of letters,
//     digits, '_', '-' and '.'): GitHub ("ghp_", "gho_", "ghu_", "ghs_",
//     "ghr_", "github_pat_"), GitLab ("glpat-"), Slack ("xoxb-", "xoxp-",
//     any "xox?-"), OpenAI/Anthropic-style "sk-" keys of 20 characters or
//     more, AWS access key ids ("AKIA"/"ASIA" and 16 upper-case letters or
//     digits) and JWTs ("eyJ" and three dot-separated base64url parts).
//
// The word is replaced by RedactedClass's marker; the rest of the value is
// kept.

// RedactSecrets returns v with the secrets its shape shows redacted: a
// URL's password and secret query values, and tokens of a well-known
// shape anywhere in it.
func RedactSecrets(v string) string {
	if strings.Contains(v, "://") {
		v = redactURLs(v)
	}
	return redactTokens(v)
}

// redactURLs applies RedactURL to every whitespace-separated word of v that
// holds "://".
func redactURLs(v string) string {
	if !strings.ContainsAny(v, " \t\n") {
		return RedactURL(v)
	}
	var b strings.Builder
	start := -1
	flush := func(end int) {
		if start >= 0 {
			w := v[start:end]
			if strings.Contains(w, "://") {
				w = RedactURL(w)
			}
			b.WriteString(w)
			start = -1
		}
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c == ' ' || c == '\t' || c == '\n' {
			flush(i)
			b.WriteByte(c)
		} else if start < 0 {
			start = i
		}
	}
	flush(len(v))
	return b.String()
}

// redactTokens replaces every word of v shaped like a well-known token.
func redactTokens(v string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(v); {
		if !isTokenByte(v[i]) {
			i++
			continue
		}
		j := i
		for j < len(v) && isTokenByte(v[j]) {
			j++
		}
		if w := v[i:j]; isTokenShape(w) {
			b.WriteString(v[last:i])
			b.WriteString(RedactedClass(w))
			last = j
		}
		i = j
	}
	if last == 0 {
		return v
	}
	b.WriteString(v[last:])
	return b.String()
}

// isTokenByte reports whether c may be part of a token word.
func isTokenByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.'
}

// tokenPrefixes are prefixes that mark a token whatever follows.
var tokenPrefixes = [...]string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-"}

// isTokenShape reports whether the word w looks like a well-known token.
func isTokenShape(w string) bool {
	for _, p := range tokenPrefixes {
		if len(w) > len(p) && strings.HasPrefix(w, p) {
			return true
		}
	}
	switch {
	case len(w) > 5 && strings.HasPrefix(w, "xox") && isLower(w[3]) && w[4] == '-': // Slack: xoxb-, xoxp-, xoxa-...
		return true
	case len(w) >= 20 && strings.HasPrefix(w, "sk-"):
		return true
	case len(w) == 20 && (strings.HasPrefix(w, "AKIA") || strings.HasPrefix(w, "ASIA")) && isUpperAlnum(w[4:]):
		return true
	case strings.HasPrefix(w, "eyJ"):
		parts := strings.Split(w, ".")
		return len(parts) == 3 && len(parts[0]) >= 10 && len(parts[1]) > 0
	}
	return false
}

func isLower(c byte) bool { return 'a' <= c && c <= 'z' }

// isUpperAlnum reports whether s holds only upper-case letters and digits.
func isUpperAlnum(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}
