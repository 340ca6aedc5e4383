package mock

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/mcptape/mcptape/jsonrpc"
)

// FuzzMockHandle feeds arbitrary client frames to a mock: it never panics
// or hangs, answers every frame that is a request with exactly one
// response under the request's id, and answers invalid JSON with a parse
// error.
func FuzzMockHandle(f *testing.F) {
	for _, l := range baseTape {
		if l[0] == '>' {
			f.Add([]byte(l[2:]))
		}
	}
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"roll","arguments":{"sides":[1,{"a":null}]}}}`))
	f.Add([]byte(`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"x"}]`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"\u0061","method":"tools/list","params":[]}`))
	f.Add([]byte(`{`))
	s := loadSessionsOf(f, baseTape)
	f.Fuzz(func(t *testing.T, frame []byte) {
		if bytes.ContainsAny(frame, "\r\n") {
			return // one line per frame on stdio
		}
		m, err := New(s, WithMaxSpeed())
		if err != nil {
			t.Fatal(err)
		}
		var out [][]byte
		c := m.NewConn(nil)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		reply := func(_ context.Context, b []byte) error { out = append(out, append([]byte(nil), b...)); return nil }
		if p := c.Handle(ctx, frame, 0, reply); p != nil {
			p(ctx)
		}
		info := jsonrpc.Classify(frame)
		switch {
		case info.Violations.Has(jsonrpc.ViolationInvalidJSON):
			if len(out) != 1 || !bytes.Contains(out[0], []byte(`"code":-32700`)) {
				t.Fatalf("invalid JSON %q answered %q", frame, out)
			}
		case info.Kind == jsonrpc.KindRequest && info.Violations == 0:
			responses := 0
			for _, o := range out {
				oi := jsonrpc.Classify(o)
				if oi.Kind == jsonrpc.KindResponse || oi.Kind == jsonrpc.KindError {
					responses++
					if oi.ID.Key() != info.ID.Key() {
						t.Fatalf("request %q answered under id %s", frame, oi.ID.Raw)
					}
				}
			}
			if responses != 1 {
				t.Fatalf("request %q got %d responses: %q", frame, responses, out)
			}
		}
	})
}
