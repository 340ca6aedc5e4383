package analysis

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcptape/mcptape/tape"
)

// wsRec is one record of a hand-made WebSocket tape (session ws-1,
// exchange 1), as capture's WSProxy writes it.
func wsRec(at int, typ tape.Type, dir tape.Direction, event, body string) tape.Record {
	r := tape.Record{Type: typ, Time: testStart.Add(tick * time.Duration(at)).UnixNano(), Session: "ws-1", Dir: dir, Exchange: 1, Event: event}
	if typ == tape.TypeMessage {
		r.Frame, r.Stream = []byte(body), tape.StreamWS
	} else {
		r.Data = []byte(body)
	}
	return r
}

func TestExportHARWebSocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ws.jsonl.zst")
	writeRecords(t, path, "ws", []tape.Record{
		wsRec(1, tape.TypeEvent, "", tape.EventOpen, `{"kind":"websocket","how":"upgrade","conn":1}`),
		wsRec(1, tape.TypeEvent, "", tape.EventHTTP, `{"phase":"response","method":"GET","path":"/mcp","host":"127.0.0.1:8932","conn":1,"status":101,"request_headers":{"Sec-Websocket-Protocol":["mcp"]},"wait_ns":1000000}`),
		wsRec(2, tape.TypeMessage, tape.ClientToServer, "", `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`),
		wsRec(3, tape.TypeMessage, tape.ServerToClient, "", `{"jsonrpc":"2.0","id":1,"result":{}}`),
		wsRec(4, tape.TypeEvent, tape.ClientToServer, tape.EventWS, `{"kind":"binary","bytes":3,"b64":"AAEC"}`),
		wsRec(5, tape.TypeEvent, tape.ClientToServer, tape.EventWS, `{"kind":"ping","bytes":1,"b64":"AA=="}`),
		wsRec(6, tape.TypeMessage, tape.ClientToServer, "", `hello`),
		wsRec(7, tape.TypeEvent, tape.ClientToServer, tape.EventWS, `{"kind":"close","code":1000}`),
		wsRec(8, tape.TypeEvent, "", tape.EventClose, `{"by":"client","reason":"close-frame"}`),
		wsRec(8, tape.TypeEvent, "", tape.EventHTTP, `{"phase":"end","method":"GET","path":"/mcp","conn":1,"status":101,"duration_ns":7000000,"closed_by":"client"}`),
	})
	out, st := export(t, path, ExportHAR)
	entries := validateHAR(t, out)
	if st.Entries != 1 || len(entries) != 1 {
		t.Fatalf("%d entries, want one for the connection:\n%s", len(entries), out)
	}
	for _, c := range []struct{ path, want string }{
		{"request.url", "ws://127.0.0.1:8932/mcp"},
		{"response.status", "101"},
		{"_resourceType", "websocket"},
		{"_closedBy", "client"},
	} {
		if got := harField(entries[0], c.path); got != c.want {
			t.Errorf("%s = %q, want %q", c.path, got, c.want)
		}
	}
	// Text frames (a batch as one) and binary frames, in order; no ping or close.
	var msgs []harWSMessage
	if err := json.Unmarshal([]byte(harField(entries[0], "_webSocketMessages")), &msgs); err != nil {
		t.Fatal(err)
	}
	want := []harWSMessage{
		{"send", float64(testStart.Add(2*tick).UnixNano()) / 1e9, 1, `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`},
		{"receive", float64(testStart.Add(3*tick).UnixNano()) / 1e9, 1, `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{"send", float64(testStart.Add(4*tick).UnixNano()) / 1e9, 2, "AAEC"},
		{"send", float64(testStart.Add(6*tick).UnixNano()) / 1e9, 1, "hello"},
	}
	if len(msgs) != len(want) {
		t.Fatalf("%d messages, want %d: %+v", len(msgs), len(want), msgs)
	}
	for i := range want {
		if msgs[i] != want[i] {
			t.Errorf("message %d: %+v, want %+v", i, msgs[i], want[i])
		}
	}
}
