package analysis

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
)

// fuzzItems turns fuzz input into items: each line a message, alternating
// directions (so that line 2n+1 may answer line 2n), sessions changing
// every two lines, with every fifth line an event whose payload is the
// line.
// With listed, messages carry the members of their params or result, as
// the Scanner gives them to Inspect.
func fuzzItems(data []byte, listed bool) []Item {
	var items []Item
	events := []string{tape.EventStderr, tape.EventExit, tape.EventClose, tape.EventError, tape.EventHTTP}
	for i, ln := range bytes.Split(data, []byte("\n")) {
		rec := &tape.Record{Type: tape.TypeMessage, Time: int64(i) * 1000, Session: string(rune('a' + i/2%2)), Dir: tape.ClientToServer, Frame: ln}
		if i%2 == 1 {
			rec.Dir = tape.ServerToClient
		}
		if i%5 == 4 {
			rec.Type, rec.Event, rec.Frame, rec.Data = tape.TypeEvent, events[i%len(events)], nil, ln
			items = append(items, Item{Rec: rec, Seq: int64(i + 1), Member: -1})
			continue
		}
		var info jsonrpc.Info
		members := jsonrpc.ClassifyMembers(ln, &info, nil)
		item := Item{Rec: rec, Seq: int64(i + 1), Frame: ln, Info: info, Member: -1}
		if listed {
			item.fields = &fieldSet{}
			item.fields.fill(ln, &info, members)
		}
		items = append(items, item)
		if info.Kind == jsonrpc.KindBatch {
			members, _ := jsonrpc.Split(ln)
			for j, m := range members {
				items = append(items, Item{Rec: rec, Seq: int64(i + 1), Frame: m, Info: jsonrpc.Classify(m), Batch: len(members), Member: j})
			}
		}
	}
	return items
}

// FuzzInspect feeds arbitrary messages and events to an Inspector and the
// timeline writers: they must not panic, the report must encode, and it
// must not depend on whether the params and result members come listed
// by Classify or are found by walking the frames.
func FuzzInspect(f *testing.F) {
	seeds := []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":1}}}` + "\n" +
			`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":"x"}}` + "\n" +
			`{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","isError":true,"task":{"taskId":5}}}`,
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"clientInfo":{"name":1}}}` + "\n" + `{"jsonrpc":"2.0","id":0,"result":{"serverInfo":[]}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"initialize"},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}]`,
		`{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"T"}}` + "\n" + `{"jsonrpc":"2.0","id":2,"result":{"status":"completed"}}`,
		"\n\n\n\n" + `{"line":"x"}`,
		"\n\n\n\n" + `{"method":"POST","request_headers":{"a":1},"response_headers":{"Mcp-Session-Id":["x"]}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"\u0000"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"a"},"params":[1]}` + "\n" + `{"jsonrpc":"2.0","id":3,"result":{"isError":true},"result":{"is\u0045rror":true,"isError":false}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"c","n\u0061me":"b"}}` + "\n" + `{"jsonrpc":"2.0","id":4,"result":{"is\u0045rror":true}}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// The members Classify lists give the report walking the frames
		// gives.
		walked, err := json.Marshal(fuzzReport(t, fuzzItems(data, false)))
		if err != nil {
			t.Fatal(err)
		}
		items := fuzzItems(data, true)
		in, err := NewInspector(&tape.Header{Time: 1}, WithMaxSessions(1), WithMaxDistinct(3))
		if err != nil {
			t.Fatal(err)
		}
		pairs := NewPairer[*showReq]()
		for i := range items {
			in.Add(&items[i])
			m := line{item: &items[i]}
			if items[i].IsMessage() {
				pairLine(pairs, &m)
			}
			_ = textLine(&m)
			w := newShowWriter(io.Discard, FormatNDJSON)
			if err := w.ndjson(&m); err != nil {
				t.Fatalf("ndjson: %v", err)
			}
		}
		rep := in.Finish(nil)
		listed, err := json.Marshal(rep)
		if err != nil {
			t.Fatalf("report does not encode: %v", err)
		}
		if !bytes.Equal(listed, walked) {
			t.Fatalf("report from listed members:\n%s\nfrom walking the frames:\n%s", listed, walked)
		}
		if err := WriteText(io.Discard, rep); err != nil {
			t.Fatal(err)
		}
	})
}

// fuzzReport inspects items alone.
func fuzzReport(t *testing.T, items []Item) *Report {
	in, err := NewInspector(&tape.Header{Time: 1}, WithMaxSessions(1), WithMaxDistinct(3))
	if err != nil {
		t.Fatal(err)
	}
	for i := range items {
		in.Add(&items[i])
	}
	return in.Finish(nil)
}
