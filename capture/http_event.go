package capture

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/mcptape/mcptape/internal/jsonstr"
)

// HTTPEvent is the payload of the tape's "http" events. An exchange has a
// "response" event when its response headers arrive and an "end" event when
// it is over; an exchange that got no response has only the "end" event,
// which then also carries the request's fields.
type HTTPEvent struct {
	Phase           string      `json:"phase"`                      // "response" or "end"
	Method          string      `json:"method"`                     // request method
	Path            string      `json:"path"`                       // path and query, secret query values redacted
	Host            string      `json:"host,omitempty"`             // the Host header the client sent
	Conn            uint64      `json:"conn"`                       // client connection number (see "conn-N" sessions)
	Status          int         `json:"status,omitempty"`           // response status
	ContentType     string      `json:"content_type,omitempty"`     // response Content-Type
	RequestHeaders  http.Header `json:"request_headers,omitempty"`  // as the client sent them, secrets redacted
	ResponseHeaders http.Header `json:"response_headers,omitempty"` // as the upstream sent them (hop-by-hop removed), secrets redacted
	WaitNs          int64       `json:"wait_ns,omitempty"`          // from the request's arrival to the response headers
	DurationNs      int64       `json:"duration_ns,omitempty"`      // "end": from the request's arrival to the end
	ClosedBy        string      `json:"closed_by,omitempty"`        // "end": ClosedByServer, ClosedByClient or ClosedByProxy
	RequestBytes    int64       `json:"request_bytes,omitempty"`    // request body bytes forwarded
	ResponseBytes   int64       `json:"response_bytes,omitempty"`   // response body bytes forwarded
	Batch           int         `json:"batch,omitempty"`            // members of a batch request body
	Messages        int         `json:"messages,omitempty"`         // server messages recorded from the response
	Events          int         `json:"events,omitempty"`           // SSE events in the response
	Comments        int         `json:"comments,omitempty"`         // SSE comment lines (keep-alives)
	LastEventID     string      `json:"last_event_id,omitempty"`    // id of the last SSE event
	RequestBody     string      `json:"request_body,omitempty"`     // a plain (not MCP) exchange's request body, secrets redacted
	Body            string      `json:"body,omitempty"`             // a response body that is not messages: an error page's first 4 KiB, a plain exchange's body (secrets redacted)
	Error           string      `json:"error,omitempty"`            // why the exchange failed

	// The JSON objects of RequestHeaders and ResponseHeaders, redacted,
	// when the recorder has them already (headerCache): appendJSON then
	// writes them instead of encoding the maps.
	reqHeadersJSON, respHeadersJSON []byte
}

// maxNoteBody is how much of a non-JSON response body an "end" event keeps.
const maxNoteBody = 4 << 10

// marshalData encodes an event payload as JSON, leaving <, > and & as
// they are (redaction markers stay readable in `zstdcat | grep`).
func marshalData(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil { // plain structs, maps and strings: cannot happen
		return json.RawMessage(`{"error":"cannot encode event data"}`)
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

// appendJSON appends e as JSON, as encoding/json would encode it (field
// order and omitempty as tagged, header names sorted, invalid UTF-8 as
// U+FFFD) but without reflection, two of these being written for every
// exchange, and with strings written as the tape writes its own
// (jsonstr.AppendString): nothing escaped beyond what JSON requires, so
// <, >, & and U+2028 stay as they are.
func (e *HTTPEvent) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"phase":`...)
	dst = jsonstr.AppendString(dst, e.Phase)
	dst = append(dst, `,"method":`...)
	dst = jsonstr.AppendString(dst, e.Method)
	dst = append(dst, `,"path":`...)
	dst = jsonstr.AppendString(dst, e.Path)
	dst = appendStringField(dst, "host", e.Host)
	dst = append(dst, `,"conn":`...)
	dst = strconv.AppendUint(dst, e.Conn, 10)
	dst = appendIntField(dst, "status", int64(e.Status))
	dst = appendStringField(dst, "content_type", e.ContentType)
	dst = appendHeaderField(dst, "request_headers", e.RequestHeaders, e.reqHeadersJSON)
	dst = appendHeaderField(dst, "response_headers", e.ResponseHeaders, e.respHeadersJSON)
	dst = appendIntField(dst, "wait_ns", e.WaitNs)
	dst = appendIntField(dst, "duration_ns", e.DurationNs)
	dst = appendStringField(dst, "closed_by", e.ClosedBy)
	dst = appendIntField(dst, "request_bytes", e.RequestBytes)
	dst = appendIntField(dst, "response_bytes", e.ResponseBytes)
	dst = appendIntField(dst, "batch", int64(e.Batch))
	dst = appendIntField(dst, "messages", int64(e.Messages))
	dst = appendIntField(dst, "events", int64(e.Events))
	dst = appendIntField(dst, "comments", int64(e.Comments))
	dst = appendStringField(dst, "last_event_id", e.LastEventID)
	dst = appendStringField(dst, "request_body", e.RequestBody)
	dst = appendStringField(dst, "body", e.Body)
	dst = appendStringField(dst, "error", e.Error)
	return append(dst, '}')
}

func appendStringField(dst []byte, name, v string) []byte {
	if v == "" {
		return dst
	}
	dst = append(append(append(dst, ',', '"'), name...), '"', ':')
	return jsonstr.AppendString(dst, v)
}

func appendIntField(dst []byte, name string, v int64) []byte {
	if v == 0 {
		return dst
	}
	dst = append(append(append(dst, ',', '"'), name...), '"', ':')
	return strconv.AppendInt(dst, v, 10)
}

// appendHeaderField appends the field name with h's JSON object, or enc
// when it is not nil (h's object encoded before), or nothing when h is
// empty.
func appendHeaderField(dst []byte, name string, h http.Header, enc []byte) []byte {
	if len(h) == 0 && enc == nil {
		return dst
	}
	dst = append(append(append(dst, ',', '"'), name...), '"', ':')
	if enc != nil {
		return append(dst, enc...)
	}
	return appendHeaderObject(dst, h)
}

// appendHeaderObject appends h as a JSON object, names sorted, as
// encoding/json writes an http.Header (a nil map as {}).
func appendHeaderObject(dst []byte, h http.Header) []byte {
	dst = append(dst, '{')
	type field struct {
		name   string
		values []string
	}
	var fields [32]field
	fs := fields[:0]
	for k, v := range h {
		fs = append(fs, field{k, v})
	}
	slices.SortFunc(fs, func(a, b field) int { return strings.Compare(a.name, b.name) })
	for i, f := range fs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(jsonstr.AppendString(dst, f.name), ':')
		if f.values == nil {
			dst = append(dst, "null"...)
			continue
		}
		dst = append(dst, '[')
		for j, v := range f.values {
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = jsonstr.AppendString(dst, v)
		}
		dst = append(dst, ']')
	}
	return append(dst, '}')
}
