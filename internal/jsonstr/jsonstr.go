// Package jsonstr holds the word-at-a-time scan that the JSON string
// encoders and decoders of the tape writer, the tape reader and the HTTP
// capture's event encoder share: finding where a run of bytes that a JSON
// string holds as they are (printable ASCII but the quote and the
// backslash) ends. Callers copy such a run whole and handle the byte that
// ends it themselves.
package jsonstr

// PlainRun returns the index of the first byte of b at or after i that a
// JSON string cannot hold as it is, or that is not ASCII: a control byte
// (below 0x20), '"', '\\' or a byte >= 0x80; len(b) when there is none. It
// tests eight bytes at a time.
func PlainRun[T ~string | ~[]byte](b T, i int) int {
	const lsb, msb = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(b); i += 8 {
		_ = b[i+7] // one bounds check; the compiler merges the loads
		x := uint64(b[i]) | uint64(b[i+1])<<8 | uint64(b[i+2])<<16 | uint64(b[i+3])<<24 |
			uint64(b[i+4])<<32 | uint64(b[i+5])<<40 | uint64(b[i+6])<<48 | uint64(b[i+7])<<56
		q := x ^ (lsb * '"')
		s := x ^ (lsb * '\\')
		// Each term has the high bit of a byte set when that byte is below
		// 0x20, a quote, a backslash, or >= 0x80 (borrows only cause false
		// alarms above a true one, and the byte loop below sorts it out).
		if ((x-lsb*0x20)&^x|(q-lsb)&^q|(s-lsb)&^s|x)&msb != 0 {
			break
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			return i
		}
	}
	return i
}
