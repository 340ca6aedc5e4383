package capture

import "net/http"

// headerCache keeps the tape encoding of the last header map one lean
// connection's "response" events recorded (one cache for request headers,
// one for response headers): a session's exchanges repeat their headers,
// and the redaction (headerRedactor.headers) and encoding (sorted names,
// escaped strings) of equal maps give equal bytes, the redactor's rules
// being fixed for the proxy's life. Telling that a map equals the last one
// costs a lookup per name; encoding it again cost that many redaction
// verdicts, a sort and the escaping of every name and value.
//
// A cache belongs to one connection, whose exchanges come one after
// another: it is not safe for concurrent use.
type headerCache struct {
	ok    bool
	names []string // the names of the map encoded
	count []int    // how many values each name has
	vals  []string // the values, name after name
	enc   []byte   // the JSON object appendHeaderObject wrote for it
}

// maxHeaderCache bounds the encoding a headerCache keeps.
const maxHeaderCache = 8 << 10

// encode returns the tape's JSON object for h as redacted by r (nil when
// h is empty, as appendHeaderField writes nothing then). The bytes are
// valid until the next call.
func (c *headerCache) encode(r *headerRedactor, h http.Header) []byte {
	if len(h) == 0 {
		return nil
	}
	if c.same(h) {
		return c.enc
	}
	c.enc = appendHeaderObject(c.enc[:0], r.headers(h))
	c.ok = false
	if len(c.enc) > maxHeaderCache {
		enc := c.enc
		*c = headerCache{}
		return enc
	}
	c.names, c.count, c.vals = c.names[:0], c.count[:0], c.vals[:0]
	for name, values := range h {
		if len(values) == 0 { // nil and empty encode apart: not kept
			return c.enc
		}
		c.names = append(c.names, name)
		c.count = append(c.count, len(values))
		c.vals = append(c.vals, values...)
	}
	c.ok = true
	return c.enc
}

// same reports whether h holds the names and values c encoded, no more.
func (c *headerCache) same(h http.Header) bool {
	if !c.ok || len(h) != len(c.names) {
		return false
	}
	k := 0
	for i, name := range c.names {
		values, found := h[name]
		if !found || len(values) != c.count[i] {
			return false
		}
		for _, v := range values {
			if v != c.vals[k] {
				return false
			}
			k++
		}
	}
	return true
}
