package replay

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
)

// FuzzLoad feeds Load tapes of arbitrary frames, alternating directions:
// it must not panic, every step must be a single JSON-RPC message and its
// dependencies must name server messages of the session.
func FuzzLoad(f *testing.F) {
	f.Add(`{"jsonrpc":"2.0","id":1,"method":"initialize"}` + "\n" + `{"jsonrpc":"2.0","id":1,"result":{}}`)
	f.Add(`[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"n"}]` + "\n" + `[{"jsonrpc":"2.0","id":1,"result":{}}]`)
	f.Add(`{"jsonrpc":"2.0","id":"r","result":{}}` + "\n" + `{"jsonrpc":"2.0","id":"r","method":"sampling/createMessage"}`)
	f.Add("not json\n{}\n[]\n" + `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`)
	f.Fuzz(func(t *testing.T, data string) {
		var buf bytes.Buffer
		w, err := tape.NewWriter(&buf, tape.Header{Tool: "mcptape"})
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(data, "\n") {
			dir := tape.ClientToServer
			if i%2 == 1 {
				dir = tape.ServerToClient
			}
			w.Write(&tape.Record{Type: tape.TypeMessage, Time: int64(i), Session: "s", Dir: dir, Frame: []byte(line)})
		}
		w.Close()
		r, err := tape.NewReader(&buf)
		if err != nil {
			t.Fatal(err)
		}
		sessions, _, err := Load(r)
		if err != nil {
			return
		}
		for _, s := range sessions {
			for _, st := range s.Steps {
				// A step is a recorded frame or one member of it, as it
				// is: a frame that is not a message is sent as recorded.
				if k := jsonrpc.Classify(st.Frame).Kind; k != st.Kind {
					t.Fatalf("step %q has kind %v, classified %v", st.Frame, st.Kind, k)
				}
				if st.Batch > 0 && (st.BatchLen < 1 || st.Kind == jsonrpc.KindBatch && st.BatchLen == 1 && string(st.Frame) == "[]") {
					t.Fatalf("step %q: batch %d of %d", st.Frame, st.Batch, st.BatchLen)
				}
				for _, d := range st.Deps {
					if d < 0 || d >= len(s.Server) {
						t.Fatalf("dependency %d out of range", d)
					}
				}
			}
		}
	})
}

// FuzzRestoreRecorded checks that restoring recorded ids never panics and
// leaves frames without fresh ids alone.
func FuzzRestoreRecorded(f *testing.F) {
	f.Add(`{"id":"mcptape-1","t":"mcptape-progress-2 mcptape-"}`)
	f.Add(`mcptape-99999999999999999999`)
	f.Fuzz(func(t *testing.T, s string) {
		ids, toks := newIDMap("mcptape-", ownSpace), newIDMap("mcptape-progress-", ownSpace)
		ids.assign(`"a"`, jsonrpc.IDString)
		toks.assign(`"b"`, jsonrpc.IDString)
		out := restoreRecorded([]byte(s), ids, toks)
		if !strings.Contains(s, "mcptape-") && string(out) != s {
			t.Fatalf("changed %q into %q", s, out)
		}
	})
}
