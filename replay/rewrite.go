package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/mcptape/mcptape/jsonrpc"
)

// idMap maps the recorded ids (or progress tokens) of one session to the
// fresh live ones, and back.
type idMap struct {
	prefix string
	space  idSpace
	n      int64             // fresh values given so far
	live   map[string][]byte // recorded key -> live raw
	rec    map[string]string // live key -> recorded key
}

// idSpace is the sequence of fresh numbers a session's idMap counts
// through: first, first+step, first+2*step, …
type idSpace struct{ first, step int64 }

// ownSpace counts up from 1: a session whose live ids no other session
// of the run can meet.
var ownSpace = idSpace{first: 1, step: 1}

// sharedSpace is the space of the i-th (from 0) of n sessions of a run
// whose live ids must be disjoint: the sessions take turns, so that every
// number is given to one session only, and ids stay small.
func sharedSpace(i, n int) idSpace {
	return idSpace{first: int64(i) + 1, step: int64(max(n, 1))}
}

func newIDMap(prefix string, space idSpace) *idMap {
	return &idMap{prefix: prefix, space: space, live: map[string][]byte{}, rec: map[string]string{}}
}

// assign gives the recorded key a fresh live value of JSON type t (a
// number or a string) and returns it. A recorded id used twice gets a new
// live id each time; the newest wins in the forward map.
func (m *idMap) assign(recKey string, t jsonrpc.IDType) []byte {
	v := m.space.first + m.n*m.space.step
	m.n++
	var raw []byte
	if t == jsonrpc.IDString {
		raw = append(raw, '"')
		raw = append(raw, m.prefix...)
		raw = strconv.AppendInt(raw, v, 10)
		raw = append(raw, '"')
	} else {
		raw = strconv.AppendInt(raw, v, 10)
	}
	m.live[recKey] = raw
	m.rec[string(raw)] = recKey // fresh ids are already in canonical form
	return raw
}

// rawIDKey returns the key (jsonrpc.ID.Key) of raw, a valid JSON id.
func rawIDKey(raw string) string {
	id := jsonrpc.ID{Raw: []byte(raw), Type: jsonrpc.IDOther}
	switch {
	case raw == "":
		return ""
	case raw[0] == '"':
		id.Type = jsonrpc.IDString
	case raw == "null":
		id.Type = jsonrpc.IDNull
	case raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9'):
		id.Type = jsonrpc.IDNumber
	}
	return id.Key()
}

// opaqueKeys are the keys whose string values the server chooses and the
// client echoes: they are learnt from responses and replaced in requests.
var opaqueKeys = map[string]bool{"taskId": true, "requestState": true}

// opaqueMarkers are the quoted key names whose presence in a client frame
// makes rewriteOpaque look for recorded values.
var opaqueMarkers = [][]byte{[]byte(`"taskId"`), []byte(`"requestState"`)}

// learnOpaque records, for every opaque key found at the same place in the
// recorded value rec and the live value live, the mapping of the recorded
// string to the live string.
func learnOpaque(rec, live any, into map[string]string) {
	switch r := rec.(type) {
	case map[string]any:
		l, ok := live.(map[string]any)
		if !ok {
			return
		}
		for k, rv := range r {
			lv, ok := l[k]
			if !ok {
				continue
			}
			if opaqueKeys[k] {
				rs, ok1 := rv.(string)
				ls, ok2 := lv.(string)
				if ok1 && ok2 && rs != ls {
					into[rs] = ls
				}
				continue
			}
			learnOpaque(rv, lv, into)
		}
	case []any:
		l, ok := live.([]any)
		if !ok {
			return
		}
		for i := 0; i < len(r) && i < len(l); i++ {
			learnOpaque(r[i], l[i], into)
		}
	}
}

// rewriteOpaque replaces, in a client frame that holds one of the opaque
// keys, every recorded opaque string with its live value. The frame is
// returned unchanged (not copied) when there is nothing to replace.
func rewriteOpaque(frame []byte, values map[string]string) []byte {
	if len(values) == 0 {
		return frame
	}
	found := false
	for _, m := range opaqueMarkers {
		if bytes.Contains(frame, m) {
			found = true
			break
		}
	}
	if !found {
		return frame
	}
	for rec, live := range values {
		rq, err1 := json.Marshal(rec)
		lq, err2 := json.Marshal(live)
		if err1 != nil || err2 != nil {
			continue
		}
		if bytes.Contains(frame, rq) {
			frame = bytes.ReplaceAll(frame, rq, lq)
		}
	}
	return frame
}

// paramsName returns params.name, or else params.uri, of a request ("" when
// neither is a string).
func paramsName(frame []byte) string {
	var m struct {
		Params struct {
			Name string `json:"name"`
			URI  string `json:"uri"`
		} `json:"params"`
	}
	if json.Unmarshal(frame, &m) != nil {
		return ""
	}
	if m.Params.Name != "" {
		return m.Params.Name
	}
	return m.Params.URI
}

// metaVersionKey is the _meta key of the 2026-07-28 protocol version.
const metaVersionKey = "io.modelcontextprotocol/protocolVersion"

// requestVersion returns the protocol version a client request asks for:
// initialize's params.protocolVersion, or the version in params._meta.
func requestVersion(frame []byte, method string) string {
	var m struct {
		Params struct {
			ProtocolVersion string         `json:"protocolVersion"`
			Meta            map[string]any `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(frame, &m) != nil {
		return ""
	}
	if method == "initialize" {
		return m.Params.ProtocolVersion
	}
	if v, ok := m.Params.Meta[metaVersionKey].(string); ok {
		return v
	}
	return ""
}

// fallbackAnswer returns the answer to a server request that has no
// recorded twin, under the live id (MCP-PROTOCOL.md section 8), and a
// short description of what was sent.
func fallbackAnswer(method string, liveID []byte) ([]byte, string) {
	var body string
	switch method {
	case "elicitation/create":
		body = `"result":{"action":"decline"}`
	case "sampling/createMessage":
		body = `"error":{"code":-1,"message":"mcptape replay: no recorded answer"}`
	case "ping":
		body = `"result":{}`
	default: // roots/list and anything unknown
		body = `"error":{"code":-32601,"message":"mcptape replay: no recorded answer"}`
	}
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,%s}`, liveID, body), body
}

// liveMarker starts every fresh string id and token (see newRunner).
var liveMarker = []byte("mcptape-")

// restoreRecorded returns the live frame with every fresh string id or
// progress token the replay made ("mcptape-N", "mcptape-progress-N"),
// wherever it appears (a server may echo a token in its answer), replaced
// by the recorded value it stands for, so that comparing the answer with
// the recorded one does not see the rewriting. Frames without the marker
// are returned as they are.
func restoreRecorded(live []byte, maps ...*idMap) []byte {
	if !bytes.Contains(live, liveMarker) {
		return live
	}
	var out []byte
	rest := live
	for {
		i := bytes.Index(rest, liveMarker)
		if i < 0 {
			break
		}
		j := i + len(liveMarker)
		var m *idMap
		for _, cand := range maps {
			p := cand.prefix[len(liveMarker):]
			if bytes.HasPrefix(rest[j:], []byte(p)) && (m == nil || len(p) > len(m.prefix)-len(liveMarker)) {
				m = cand
			}
		}
		if m != nil {
			j += len(m.prefix) - len(liveMarker)
		}
		k := j
		for k < len(rest) && rest[k] >= '0' && rest[k] <= '9' {
			k++
		}
		if m == nil || k == j {
			out = append(out, rest[:j]...)
			rest = rest[j:]
			continue
		}
		recKey, ok := m.rec[`"`+string(rest[i:k])+`"`]
		if !ok || len(recKey) < 2 || recKey[0] != '"' {
			out = append(out, rest[:k]...)
			rest = rest[k:]
			continue
		}
		enc, err := json.Marshal(recKey[1 : len(recKey)-1])
		if err != nil {
			out = append(out, rest[:k]...)
			rest = rest[k:]
			continue
		}
		out = append(out, rest[:i]...)
		out = append(out, enc[1:len(enc)-1]...)
		rest = rest[k:]
	}
	return append(out, rest...)
}
