package tape

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// t0 is the fixed start time of test tapes.
var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// fixedClock returns a clock that always says t0.
func fixedClock() func() time.Time { return func() time.Time { return t0 } }

func testHeader() Header {
	return Header{Version: "test", Time: t0.UnixNano(), Transport: "stdio",
		Target: "refserver", Argv: []string{"mcptape", "record", "--", "refserver"}, Host: "test-host"}
}

// writeTape writes recs to an in-memory tape and returns its bytes.
func writeTape(tb testing.TB, recs []*Record, opts ...Option) []byte {
	tb.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, testHeader(), append([]Option{WithClock(fixedClock())}, opts...)...)
	if err != nil {
		tb.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// readTape reads a whole tape; it returns the records (the closing stats
// event left out when dropStats), the header and the warning.
func readTape(tb testing.TB, data []byte, dropStats bool, opts ...ReaderOption) ([]*Record, *Header, error) {
	tb.Helper()
	r, err := NewReader(bytes.NewReader(data), opts...)
	if err != nil {
		tb.Fatal(err)
	}
	defer r.Close()
	var recs []*Record
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			tb.Fatal(err)
		}
		if dropStats && rec.Type == TypeEvent && rec.Event == EventStats {
			continue
		}
		recs = append(recs, rec)
	}
	return recs, r.Header(), r.Warning()
}

// diffRecord describes how got differs from want, "" when equal.
func diffRecord(want, got *Record) string {
	var d []string
	if want.Type != got.Type {
		d = append(d, fmt.Sprintf("type %q != %q", got.Type, want.Type))
	}
	if want.Time != got.Time {
		d = append(d, fmt.Sprintf("time %d != %d", got.Time, want.Time))
	}
	if want.Session != got.Session {
		d = append(d, fmt.Sprintf("session %q != %q", got.Session, want.Session))
	}
	if want.Dir != got.Dir {
		d = append(d, fmt.Sprintf("dir %q != %q", got.Dir, want.Dir))
	}
	if !bytes.Equal(want.Frame, got.Frame) {
		d = append(d, fmt.Sprintf("frame %.200q != %.200q", got.Frame, want.Frame))
	}
	if want.NoEOL != got.NoEOL {
		d = append(d, fmt.Sprintf("noeol %v != %v", got.NoEOL, want.NoEOL))
	}
	if want.Exchange != got.Exchange {
		d = append(d, fmt.Sprintf("exchange %d != %d", got.Exchange, want.Exchange))
	}
	if want.Stream != got.Stream {
		d = append(d, fmt.Sprintf("stream %q != %q", got.Stream, want.Stream))
	}
	if want.EventID != got.EventID {
		d = append(d, fmt.Sprintf("event_id %q != %q", got.EventID, want.EventID))
	}
	if want.Event != got.Event {
		d = append(d, fmt.Sprintf("event %q != %q", got.Event, want.Event))
	}
	if !bytes.Equal(want.Data, got.Data) {
		d = append(d, fmt.Sprintf("data %q != %q", got.Data, want.Data))
	}
	return strings.Join(d, "; ")
}

func msg(t int64, dir Direction, frame string) *Record {
	return &Record{Type: TypeMessage, Time: t, Session: "s1", Dir: dir, Frame: []byte(frame)}
}

// mcpTraffic generates n records resembling a real MCP session mix:
// initialize, tools/list with JSON schemas, tools/call requests and
// results, progress and logging notifications, stderr lines. It is
// deterministic for a given seed.
func mcpTraffic(n int, seed uint64) []*Record {
	rng := rand.New(rand.NewPCG(seed, 1))
	words := strings.Fields("the a server tool call result file path read write list search query user " +
		"data value error status ok temperature weather city forecast repository issue commit branch " +
		"message content text image resource prompt token progress step done")
	sentence := func(k int) string {
		var b strings.Builder
		for i := range k {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[rng.IntN(len(words))])
		}
		return b.String()
	}
	var recs []*Record
	now := t0.UnixNano()
	add := func(dir Direction, frame string) {
		now += int64(rng.IntN(2_000_000)) + 1000
		recs = append(recs, &Record{Type: TypeMessage, Time: now, Session: "1", Dir: dir, Frame: []byte(frame)})
	}
	add(ClientToServer, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":true},"sampling":{},"elicitation":{}},"clientInfo":{"name":"claude-code","version":"1.0.44"}}}`)
	add(ServerToClient, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true},"resources":{"subscribe":true},"prompts":{},"logging":{}},"serverInfo":{"name":"mcptape-refserver","version":"0.1.0"},"instructions":"Reference server for mcptape tests."}}`)
	add(ClientToServer, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	id := 1
	for len(recs) < n {
		switch k := rng.IntN(20); {
		case k == 0: // tools/list
			add(ClientToServer, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, id))
			var tools []string
			for i := range 12 {
				tools = append(tools, fmt.Sprintf(`{"name":"tool_%d","description":%q,"inputSchema":{"type":"object","properties":{"query":{"type":"string","description":%q},"limit":{"type":"integer","minimum":1,"maximum":100}},"required":["query"]},"annotations":{"readOnlyHint":true}}`,
					i, sentence(12+rng.IntN(20)), sentence(6)))
			}
			add(ServerToClient, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"tools":[%s]}}`, id, strings.Join(tools, ",")))
		case k < 4: // progress notifications
			for p := 1; p <= 3; p++ {
				add(ServerToClient, fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok-%d","progress":%d,"total":3,"message":%q}}`, id, p, sentence(4)))
			}
		case k == 4: // log notification
			add(ServerToClient, fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"refserver","data":%q}}`, sentence(10)))
		case k == 5: // stderr line
			now += 1000
			recs = append(recs, &Record{Type: TypeEvent, Time: now, Session: "1", Event: EventStderr,
				Data: []byte(fmt.Sprintf(`{"line":%q}`, "INFO "+sentence(8)))})
		default: // tools/call
			add(ClientToServer, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"tool_%d","arguments":{"query":%q,"limit":%d},"_meta":{"progressToken":"tok-%d"}}}`,
				id, rng.IntN(12), sentence(3+rng.IntN(6)), 1+rng.IntN(50), id))
			add(ServerToClient, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":%q}],"isError":false}}`,
				id, sentence(10+rng.IntN(80))))
		}
		id++
	}
	return recs[:n]
}

// messages200 returns n message records whose frames are about 200 bytes.
func messages200(n int) []*Record {
	recs := make([]*Record, n)
	for i := range recs {
		frame := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"message":"%s"}}}`,
			i, strings.Repeat("x", 100+i%37))
		dir := ClientToServer
		if i%2 == 1 {
			dir = ServerToClient
		}
		recs[i] = &Record{Type: TypeMessage, Time: t0.UnixNano() + int64(i)*1000, Session: "1", Dir: dir, Frame: []byte(frame)}
	}
	return recs
}
