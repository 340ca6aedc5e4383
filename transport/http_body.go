// Reading and judging the bodies of HTTP answers.

package transport

import (
	"bytes"
	"io"
	"net/http"
	"strings"

	"github.com/mcptape/mcptape/jsonrpc"
)

// printableASCII reports whether s holds only printable ASCII.
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// isMessage reports whether body is a JSON-RPC message or batch.
func isMessage(body []byte) bool {
	return jsonrpc.Classify(body).Kind != jsonrpc.KindInvalid
}

// sessionExpired reports whether a status answered to a request that
// carried a session id means the session is gone: 404 as the
// specification says, or 400 with a body saying the session is unknown
// (the TypeScript SDK's example servers, server-everything among them).
func sessionExpired(status int, body []byte) bool {
	switch status {
	case http.StatusNotFound:
		return true
	case http.StatusBadRequest:
		b := bytes.ToLower(body[:min(len(body), 1024)])
		if !bytes.Contains(b, []byte("session")) {
			return false
		}
		for _, s := range []string{"not found", "no valid", "invalid", "unknown", "expired"} {
			if bytes.Contains(b, []byte(s)) {
				return true
			}
		}
	}
	return false
}

// mediaType returns the media type of a Content-Type value, lower case,
// without parameters.
func mediaType(ct string) string {
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	return strings.ToLower(strings.TrimSpace(ct))
}

func isJSONType(mt string) bool {
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// readBody reads a whole body of the announced length (-1 if unknown),
// keeping at most max bytes; it reads to the end so that the connection
// can be reused, unless the body is longer than max.
func readBody(r io.Reader, length int64, max int) ([]byte, bool, error) {
	size := 512
	if length >= 0 {
		size = int(min(length, int64(max))) + 1
	}
	buf := make([]byte, 0, size)
	for {
		if len(buf) > max {
			// Longer than max: keep the first max bytes; the rest is not
			// read (the connection will not be reused).
			return buf[:max], true, nil
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):min(cap(buf), max+1)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			if len(buf) > max {
				return buf[:max], true, nil
			}
			return buf, false, nil
		}
		if err != nil {
			return buf, false, err
		}
	}
}

// readCapped reads up to max bytes of r and drains a little more so that
// the connection can be reused. It returns nil for an empty body.
func readCapped(r io.Reader, max int) ([]byte, error) {
	body, _, err := readBody(r, -1, max)
	if err == nil {
		_, err = io.CopyN(io.Discard, r, 4*MaxErrorBody)
		if err == io.EOF {
			err = nil
		}
	}
	if len(body) == 0 {
		body = nil
	}
	return body, err
}
