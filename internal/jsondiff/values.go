package jsondiff

import (
	"bytes"
	"encoding/json"
)

// decimal is a number in canonical form: value = ±0.digits × 10^exp, with no
// leading or trailing zero in digits (zero has no digits and no sign).
type decimal struct {
	neg    bool
	digits []byte
	exp    int64
	huge   bool // the exponent overflowed: compare raw text instead
}

// maxExp bounds exponents; beyond it numbers are compared by their text.
const maxExp = 1 << 50

// parseDecimal reads a number already validated by the parser, appending its
// digits to buf.
func parseDecimal(raw []byte, buf []byte) decimal {
	var d decimal
	i := 0
	if raw[0] == '-' {
		d.neg = true
		i++
	}
	digits := buf[:0]
	point := 0 // digits before the decimal point, leading zeros excluded
	seenNonZero := false
	for ; i < len(raw) && isDigit(raw[i]); i++ {
		if raw[i] != '0' || seenNonZero {
			seenNonZero = true
			digits = append(digits, raw[i])
			point++
		}
	}
	if i < len(raw) && raw[i] == '.' {
		for i++; i < len(raw) && isDigit(raw[i]); i++ {
			if raw[i] != '0' || seenNonZero {
				seenNonZero = true
				digits = append(digits, raw[i])
			} else {
				point-- // a zero right after the point (or after zeros) shifts the value down
			}
		}
	}
	var exp int64
	if i < len(raw) && (raw[i] == 'e' || raw[i] == 'E') {
		i++
		neg := false
		if raw[i] == '+' || raw[i] == '-' {
			neg = raw[i] == '-'
			i++
		}
		for ; i < len(raw); i++ {
			exp = exp*10 + int64(raw[i]-'0')
			if exp > maxExp {
				d.huge = true
				exp = maxExp
			}
		}
		if neg {
			exp = -exp
		}
	}
	for len(digits) > 0 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
	}
	if len(digits) == 0 {
		return decimal{} // zero, whatever its sign and exponent
	}
	d.digits, d.exp = digits, int64(point)+exp
	return d
}

// numbersEqual compares two valid JSON numbers by value.
func numbersEqual(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var ba, bb [32]byte
	da, db := parseDecimal(a, ba[:0]), parseDecimal(b, bb[:0])
	if da.huge || db.huge {
		return false // texts differ and the exponents are out of any sane range
	}
	return da.neg == db.neg && da.exp == db.exp && bytes.Equal(da.digits, db.digits)
}

// stringsEqual compares two valid JSON strings (with their quotes) after
// unescaping. esc says whether each holds an escape.
func stringsEqual(a []byte, escA bool, b []byte, escB bool) bool {
	if !escA && !escB {
		return bytes.Equal(a, b)
	}
	return unquote(a, escA) == unquote(b, escB)
}

// unquote returns the content of a valid JSON string.
func unquote(raw []byte, esc bool) string {
	if !esc {
		return string(raw[1 : len(raw)-1])
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return string(raw) // not reached for a validated string
	}
	return s
}
