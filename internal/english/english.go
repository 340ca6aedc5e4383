// Package english words counts for people: every summary of every command
// writes a count with its noun through Count, so that "1 session" and
// "2 sessions" agree (and "0 batches", "3 entries" are spelled right).
package english

import (
	"strconv"
	"strings"
)

// Integer is any integer type a count comes in.
type Integer interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// Count writes n and noun, singular for 1 and plural otherwise: "1
// session", "2 sessions", "0 error responses".
func Count[N Integer](n N, noun string) string {
	var s string
	if n < 0 {
		s = strconv.FormatInt(int64(n), 10)
	} else {
		s = strconv.FormatUint(uint64(n), 10)
	}
	return s + " " + Noun(n, noun)
}

// Noun returns noun as it agrees with n: as given for 1, plural otherwise
// (for "N of M" phrases, whose noun agrees with M). The plural of a phrase
// is its last word's ("error response": "error responses"): +es after s,
// x, z, ch and sh, y after a consonant to ies, +s otherwise.
func Noun[N Integer](n N, noun string) string {
	if n == 1 || noun == "" {
		return noun
	}
	switch last := noun[len(noun)-1]; {
	case last == 's' || last == 'x' || last == 'z' || strings.HasSuffix(noun, "ch") || strings.HasSuffix(noun, "sh"):
		return noun + "es"
	case last == 'y' && len(noun) > 1 && !strings.ContainsRune("aeiou", rune(noun[len(noun)-2])):
		return noun[:len(noun)-1] + "ies"
	}
	return noun + "s"
}
