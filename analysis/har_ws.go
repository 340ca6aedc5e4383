package analysis

import (
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/mcptape/mcptape/tape"
)

// A WebSocket session (capture's WSProxy: one exchange, its upgrade) is one
// HAR entry: the upgrade's request and its 101 response, with its frames in
// _webSocketMessages, the extension the browsers' devtools write and read
// (and _resourceType "websocket"). Text frames are messages; binary frames
// come from the tape's "ws" events (base64, opcode 2). Ping, pong and close
// frames are not listed, as devtools do not list them.

// harWSMessage is one entry of _webSocketMessages.
type harWSMessage struct {
	Type   string  `json:"type"`   // "send" (client to server) or "receive"
	Time   float64 `json:"time"`   // seconds since the Unix epoch
	Opcode int     `json:"opcode"` // 1 text, 2 binary
	Data   string  `json:"data"`   // the payload; base64 for binary
}

// harMaxWSMessages bounds the frames listed for one connection.
const harMaxWSMessages = 100000

// addWS lists one frame of the connection.
func (x *harExchange) addWS(rec *tape.Record, opcode int, data string) {
	if len(x.ws) >= harMaxWSMessages {
		x.cut = true
		return
	}
	typ := "receive"
	if rec.Dir == tape.ClientToServer {
		typ = "send"
	}
	if len(data) > harMaxBody {
		data, x.cut = data[:harMaxBody], true
	}
	x.ws = append(x.ws, harWSMessage{Type: typ, Time: float64(rec.Time) / 1e9, Opcode: opcode, Data: data})
}

// addWSEvent lists the binary frame of a "ws" event.
func (x *harExchange) addWSEvent(rec *tape.Record) {
	var e struct {
		Kind string `json:"kind"`
		B64  string `json:"b64"`
	}
	if json.Unmarshal(rec.Data, &e) != nil || e.Kind != "binary" {
		return
	}
	if _, err := base64.StdEncoding.DecodeString(e.B64); err != nil {
		return
	}
	x.addWS(rec, 2, e.B64)
}

// wsEntry completes the entry of a WebSocket connection.
func (x *harExchange) wsEntry(e *harEntry) {
	if x.stream != tape.StreamWS && x.ws == nil {
		return
	}
	e.ResourceType = "websocket"
	// The URL the client used: ws or wss, whatever the tape's target says.
	if rest, ok := strings.CutPrefix(e.Request.URL, "http"); ok {
		e.Request.URL = "ws" + rest
	}
	e.WebSocketMessages = x.ws
	if e.WebSocketMessages == nil {
		e.WebSocketMessages = []harWSMessage{}
	}
	if x.cut {
		e.Response.Content.Comment = "frames cut by mcptape"
	}
}
