package tape

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"
)

var update = flag.Bool("update", false, "rewrite the golden fixture tapes in testdata/tapes")

const fixtureDir = "../testdata/tapes"

// fixture is one golden tape: how to make it, byte for byte.
type fixture struct {
	name string
	make func(t *testing.T) []byte
}

var fixtures = []fixture{
	{"basic", func(t *testing.T) []byte { return framedFixture(t, basicExchange()) }},
	{"odd-frames", func(t *testing.T) []byte { return framedFixture(t, oddFrames()) }},
	{"cut", func(t *testing.T) []byte {
		// The basic exchange without its stats frame, cut in the middle of
		// its last frame.
		data, starts := framedTape(t, basicExchange(), 6)
		last := starts[len(starts)-2]
		return data[:last+(starts[len(starts)-1]-last)/2]
	}},
}

// framedFixture writes recs as a tape, six records per frame.
func framedFixture(t *testing.T, recs []*Record) []byte {
	data, _ := framedTape(t, recs, 6)
	return data
}

// at is the fixture clock: t0 plus ms milliseconds.
func at(ms int64) int64 { return t0.UnixNano() + ms*1_000_000 }

// basicExchange is a realistic MCP stdio session.
func basicExchange() []*Record {
	m := func(ms int64, dir Direction, frame string) *Record {
		return &Record{Type: TypeMessage, Time: at(ms), Session: "stdio-1", Dir: dir, Frame: []byte(frame)}
	}
	e := func(ms int64, event, data string) *Record {
		r := &Record{Type: TypeEvent, Time: at(ms), Session: "stdio-1", Event: event}
		if data != "" {
			r.Data = json.RawMessage(data)
		}
		return r
	}
	return []*Record{
		e(0, EventOpen, `{"command":["mcptape","serve"],"pid":4242}`),
		m(2, ClientToServer, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{},"elicitation":{}},"clientInfo":{"name":"example-client","version":"1.0.0"}}}`),
		m(9, ServerToClient, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true},"resources":{},"prompts":{},"logging":{}},"serverInfo":{"name":"mcptape-refserver","version":"0.1.0"}}}`),
		m(10, ClientToServer, `{"jsonrpc":"2.0","method":"notifications/initialized"}`),
		m(11, ClientToServer, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`),
		m(13, ServerToClient, `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"echo","description":"Echo a message back.","inputSchema":{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}},{"name":"sleep","description":"Sleep, reporting progress.","inputSchema":{"type":"object","properties":{"ms":{"type":"integer"},"steps":{"type":"integer"}}}}]}}`),
		m(20, ClientToServer, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":100,"steps":2},"_meta":{"progressToken":"p-2"}}}`),
		m(70, ServerToClient, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p-2","progress":1,"total":2}}`),
		e(75, EventStderr, `{"line":"refserver: sleep 100ms in 2 steps"}`),
		m(120, ServerToClient, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p-2","progress":2,"total":2}}`),
		m(121, ServerToClient, `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"slept 100ms"}]}}`),
		m(130, ClientToServer, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"héllo, wörld"}}}`),
		m(131, ServerToClient, `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"héllo, wörld"}]}}`),
		e(140, EventExit, `{"code":0}`),
		e(141, EventClose, `{"by":"client"}`),
	}
}

// oddFrames holds frames that cannot be embedded as JSON, and HTTP
// metadata.
func oddFrames() []*Record {
	m := func(ms int64, dir Direction, frame string) *Record {
		return &Record{Type: TypeMessage, Time: at(ms), Session: "odd", Dir: dir, Frame: []byte(frame)}
	}
	noeol := m(7, ServerToClient, `{"jsonrpc":"2.0","id":9,"result":{}}`)
	noeol.NoEOL = true
	sse := m(8, ServerToClient, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`)
	sse.Session, sse.Exchange, sse.Stream, sse.EventID = "http-7f3a", 12, "get", "evt-0042"
	post := m(9, ClientToServer, `{"jsonrpc":"2.0","id":10,"method":"ping"}`)
	post.Session, post.Exchange, post.Stream = "http-7f3a", 13, "post"
	return []*Record{
		m(0, ClientToServer, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\xfe\"}"), // invalid UTF-8
		m(1, ClientToServer, ""), // blank line
		m(2, ClientToServer, `{"jsonrpc":"2.0","id":2,"method":"ping"}`+"\r"),                 // CRLF line
		m(3, ServerToClient, `{"jsonrpc":"2.0","id":2,"result":`),                             // invalid JSON
		m(4, ServerToClient, "{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 3,\n  \"result\": {}\n}"), // pretty-printed
		m(5, ClientToServer, `{ "jsonrpc" : "2.0", "id" : 4, "method" : "ping" }`),            // spaces, kept
		m(6, ClientToServer, "Content-Length: 42"),                                            // not JSON
		noeol, sse, post,
		{Type: TypeEvent, Time: at(10), Session: "http-7f3a", Event: EventHTTP, Exchange: 13, Stream: "post",
			Data: json.RawMessage(`{"method":"POST","path":"/mcp","status":200,"content_type":"application/json","headers":{"authorization":"[redacted]"}}`)},
		{Type: TypeEvent, Time: at(11), Event: EventError, Data: json.RawMessage(`{"error":"upstream: connection reset"}`)},
	}
}

// goldenRecord is how a decoded record is written in a .golden.ndjson file:
// with encoding/json, independent of the tape encoder; the frame as text
// when it is valid UTF-8, else as base64.
type goldenRecord struct {
	Type      Type            `json:"type"`
	Time      int64           `json:"time,omitempty"`
	Session   string          `json:"session,omitempty"`
	Dir       Direction       `json:"dir,omitempty"`
	Exchange  uint64          `json:"exchange,omitempty"`
	Stream    string          `json:"stream,omitempty"`
	EventID   string          `json:"event_id,omitempty"`
	Event     string          `json:"event,omitempty"`
	Data      json.RawMessage `json:"data,omitempty"`
	NoEOL     bool            `json:"noeol,omitempty"`
	FrameText *string         `json:"frame_text,omitempty"`
	FrameB64  []byte          `json:"frame_b64,omitempty"`
	Header    *Header         `json:"header,omitempty"`
	Warning   string          `json:"warning,omitempty"`
}

// renderGolden decodes a tape into golden lines.
func renderGolden(t *testing.T, data []byte) []byte {
	t.Helper()
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.Encode(goldenRecord{Type: TypeHeader, Header: r.Header()})
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		g := goldenRecord{Type: rec.Type, Time: rec.Time, Session: rec.Session, Dir: rec.Dir, Exchange: rec.Exchange,
			Stream: rec.Stream, EventID: rec.EventID, Event: rec.Event, Data: rec.Data, NoEOL: rec.NoEOL, Header: rec.Header}
		if rec.Type == TypeMessage {
			if utf8.Valid(rec.Frame) {
				s := string(rec.Frame)
				g.FrameText = &s
			} else {
				g.FrameB64 = rec.Frame
			}
		}
		if err := enc.Encode(g); err != nil {
			t.Fatal(err)
		}
	}
	if w := r.Warning(); w != nil {
		enc.Encode(goldenRecord{Type: "warning", Warning: w.Error()})
	}
	return out.Bytes()
}

func TestGoldenFixtures(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			tapePath := filepath.Join(fixtureDir, fx.name+".jsonl.zst")
			goldenPath := filepath.Join(fixtureDir, fx.name+".golden.ndjson")
			made := fx.make(t)
			if *update {
				if err := os.MkdirAll(fixtureDir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(tapePath, made, 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(goldenPath, renderGolden(t, made), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			committed, err := os.ReadFile(tapePath)
			if err != nil {
				t.Fatalf("%v (run go test ./tape -run TestGoldenFixtures -update)", err)
			}
			golden, err := os.ReadFile(goldenPath)
			if err != nil {
				t.Fatal(err)
			}
			if got := renderGolden(t, committed); !bytes.Equal(got, golden) {
				t.Errorf("%s decodes to\n%s\nwant (%s)\n%s", tapePath, got, goldenPath, golden)
			}
			if !bytes.Equal(made, committed) {
				t.Errorf("%s is not reproducible: the writer now makes %d different bytes (zstd version changed? run with -update)",
					tapePath, len(made))
			}
		})
	}
}
