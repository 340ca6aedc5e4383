package transport

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/mcptape/mcptape/jsonrpc"
)

// Header names of the MCP HTTP transports, in canonical form.
const (
	// HeaderSessionID carries the session id (2025-03-26 .. 2025-11-25).
	HeaderSessionID = "Mcp-Session-Id"
	// HeaderProtocolVersion carries the protocol version (2025-06-18 on).
	HeaderProtocolVersion = "Mcp-Protocol-Version"
	// HeaderMethod carries the JSON-RPC method (2026-07-28).
	HeaderMethod = "Mcp-Method"
	// HeaderName carries params.name, params.uri or params.taskId
	// (2026-07-28).
	HeaderName = "Mcp-Name"
	// HeaderLastEventID asks a server to resume a stream after an event.
	HeaderLastEventID = "Last-Event-Id"
)

// StandardHeadersVersion is the first protocol version whose requests
// carry the Mcp-Method and Mcp-Name headers.
const StandardHeadersVersion = "2026-07-28"

// metaVersionKey is the _meta key that carries a 2026-07-28 request's
// protocol version.
const metaVersionKey = "io.modelcontextprotocol/protocolVersion"

// Base64 wrapper of header values that are not plain printable ASCII.
const (
	base64Prefix = "=?base64?"
	base64Suffix = "?="
)

// EncodeHeaderValue returns s as an MCP header value: s itself when it is
// printable ASCII without leading or trailing blanks, otherwise
// "=?base64?" + the standard base64 of s + "?=". A plain value that looks
// like that wrapper is wrapped too, so that decoding is never ambiguous.
func EncodeHeaderValue(s string) string {
	if !needsBase64(s) {
		return s
	}
	return base64Prefix + base64.StdEncoding.EncodeToString([]byte(s)) + base64Suffix
}

func needsBase64(s string) bool {
	if s == "" {
		return false
	}
	if isBlank(s[0]) || isBlank(s[len(s)-1]) {
		return true
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return true
		}
	}
	return strings.HasPrefix(s, base64Prefix) && strings.HasSuffix(s, base64Suffix)
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' }

// DecodeHeaderValue undoes EncodeHeaderValue: a value wrapped in
// "=?base64?...?=" is decoded, any other value is returned as it is. A
// wrapped value that is not valid base64 is an error.
func DecodeHeaderValue(v string) (string, error) {
	inner, ok := strings.CutPrefix(v, base64Prefix)
	if !ok || len(inner) < len(base64Suffix) {
		return v, nil
	}
	inner, ok = strings.CutSuffix(inner, base64Suffix)
	if !ok {
		return v, nil
	}
	b, err := base64.StdEncoding.DecodeString(inner)
	if err != nil {
		return "", fmt.Errorf("transport: header value %q: bad base64: %w", v, err)
	}
	return string(b), nil
}

// headerFields are the members of a request that HTTP headers repeat.
type headerFields struct {
	name, uri, taskID string // params.name, params.uri, params.taskId
	version           string // params._meta["io.modelcontextprotocol/protocolVersion"]
}

// parseHeaderFields reads the members of frame that headers repeat. Keys
// match exactly, as in JSON-RPC (encoding/json's struct decoding would
// also accept "Name"); a member that is absent or not a string is left
// empty.
func parseHeaderFields(frame []byte) headerFields {
	var f headerFields
	var top, params, meta map[string]json.RawMessage
	if json.Unmarshal(frame, &top) != nil || json.Unmarshal(top["params"], &params) != nil {
		return f
	}
	str := func(raw json.RawMessage) string {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return ""
		}
		return s
	}
	f.name, f.uri, f.taskID = str(params["name"]), str(params["uri"]), str(params["taskId"])
	if json.Unmarshal(params["_meta"], &meta) == nil {
		f.version = str(meta[metaVersionKey])
	}
	return f
}

// nameMember returns which params member Mcp-Name repeats for method:
// "name", "uri", "taskId", or "" when it has none.
func nameMember(method string) string {
	switch {
	case method == "tools/call", method == "prompts/get":
		return "name"
	case method == "resources/read":
		return "uri"
	case strings.HasPrefix(method, "tasks/"):
		return "taskId"
	}
	return ""
}

// StandardHeaders returns the headers a Streamable HTTP POST of frame must
// carry so that they agree with its body:
//
//   - Mcp-Protocol-Version: params._meta["io.modelcontextprotocol/protocolVersion"]
//     when the frame has it, else version (omitted when both are empty);
//   - from protocol version 2026-07-28 on, for a request or a notification:
//     Mcp-Method (the method) and, for tools/call and prompts/get, Mcp-Name
//     (params.name), for resources/read params.uri, for tasks/* methods
//     params.taskId, encoded with EncodeHeaderValue.
//
// Mcp-Param-* headers need the tool's input schema and are the caller's.
// The map is freshly allocated; a frame that is not a request or
// notification gets at most the version header.
func StandardHeaders(frame []byte, version string) http.Header {
	info := jsonrpc.Classify(frame)
	h := make(http.Header, 3)
	var versionH []string
	if version != "" {
		versionH = []string{version}
	}
	setStandardHeaders(h, frame, &info, versionH)
	return h
}

// metaKeyBytes is metaVersionKey as bytes, for a quick look before parsing.
var metaKeyBytes = []byte(metaVersionKey)

// setStandardHeaders sets on h the headers StandardHeaders documents, the
// version being versionH's value (nil: none) unless the frame's _meta
// names another; the frame is parsed only when one of them needs a member
// of its params. It returns the version set ("": none); the other values
// it sets are valid field values by construction (EncodeHeaderValue).
func setStandardHeaders(h http.Header, frame []byte, info *jsonrpc.Info, versionH []string) (version string) {
	isMsg := info.Kind == jsonrpc.KindRequest || info.Kind == jsonrpc.KindNotification
	var f *headerFields
	if isMsg && bytes.Contains(frame, metaKeyBytes) {
		parsed := parseHeaderFields(frame)
		f = &parsed
		if v := f.version; v != "" && (len(versionH) == 0 || versionH[0] != v) {
			versionH = []string{v}
		}
	}
	if len(versionH) > 0 {
		version = versionH[0]
		h[HeaderProtocolVersion] = versionH
	}
	if !isMsg || version < StandardHeadersVersion || info.Method == "" {
		return version
	}
	h[HeaderMethod] = []string{EncodeHeaderValue(info.Method)}
	member := nameMember(info.Method)
	if member == "" {
		return version
	}
	if f == nil {
		parsed := parseHeaderFields(frame)
		f = &parsed
	}
	var name string
	switch member {
	case "name":
		name = f.name
	case "uri":
		name = f.uri
	case "taskId":
		name = f.taskID
	}
	if name != "" {
		h[HeaderName] = []string{EncodeHeaderValue(name)}
	}
	return version
}

// initializeVersion reads result.protocolVersion of an initialize answer.
func initializeVersion(frame []byte) string {
	var r struct {
		Result struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"result"`
	}
	if json.Unmarshal(frame, &r) != nil {
		return ""
	}
	return r.Result.ProtocolVersion
}
