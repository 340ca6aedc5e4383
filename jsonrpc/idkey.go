package jsonrpc

import (
	"bytes"
	"encoding/json"
	"slices"
)

// appendValueKey appends the canonical form of raw, an object, an array or
// a boolean id (see [ID.AppendKey]): compact, object keys sorted, numbers
// as appendNumberKey writes them, strings with their content unescaped
// then quoted the one way encoding/json does; raw as it is when it does
// not decode.
func appendValueKey(dst, raw []byte) []byte {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return append(dst, raw...)
	}
	return appendCanonical(dst, v)
}

// appendCanonical appends v, a value decoded with UseNumber, in canonical
// form.
func appendCanonical(dst []byte, v any) []byte {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendCanonical(dst, k)
			dst = append(dst, ':')
			dst = appendCanonical(dst, v[k])
		}
		return append(dst, '}')
	case []any:
		dst = append(dst, '[')
		for i, e := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendCanonical(dst, e)
		}
		return append(dst, ']')
	case json.Number:
		return appendNumberKey(dst, []byte(v))
	default: // string, bool, nil
		b, _ := json.Marshal(v)
		return append(dst, b...)
	}
}
