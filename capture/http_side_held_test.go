package capture

import (
	"fmt"
	"slices"
	"testing"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
)

// TestSideHeldParts: a part a stream carries ahead of the answer's owner
// is held, then recorded in its stream's session when the owner records
// it (a copy), or in the request's session when the owner ends without it
// (the stream holding it takes over, the answer's end included), or in its
// stream's session when that stream ends. Before, such a part was taken
// for a copy at once, and lost when the owner ended without it.
func TestSideHeldParts(t *testing.T) {
	part := func(i int) []byte {
		return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":"x","result":{"type":"content_delta","delta":"%d"}}`, i)
	}
	end := []byte(`{"jsonrpc":"2.0","id":"x","result":{"type":"content_end"}}`)
	// steps: "a N"/"b N": stream a (the owner) or b carries part N (0:
	// the end part); "a end"/"b end": the stream ends. want: per step, where
	// its message goes ("held", or "SESSION N"), then the held records it
	// lets go, in order.
	tests := []struct {
		name  string
		steps []string
		want  [][]string
		left  bool // the request still in flight at the end
	}{
		{"owner carries it", []string{"a 1", "b 1", "b 2", "b 3", "a 2", "a 3"},
			[][]string{{"req 1"}, {"b 1"}, {"held"}, {"held"}, {"req 2", "b 2"}, {"req 3", "b 3"}}, true},
		{"owner ends without it", []string{"a 1", "b 1", "b 2", "b 3", "a end", "b 4", "b 0"},
			[][]string{{"req 1"}, {"b 1"}, {"held"}, {"held"}, {"req 2", "req 3"}, {"req 4"}, {"req 0"}}, false},
		{"the end part held", []string{"a 1", "b 1", "b 2", "b 0", "a end"},
			[][]string{{"req 1"}, {"b 1"}, {"held"}, {"held"}, {"req 2", "req 0"}}, false},
		{"the holder ends", []string{"a 1", "b 2", "b end", "a 2"},
			[][]string{{"req 1"}, {"held"}, {"b 2"}, {"req 2"}}, true},
		{"the answer ends", []string{"a 1", "b 2", "b 0", "a 2", "a 0"},
			[][]string{{"req 1"}, {"held"}, {"held"}, {"req 2", "b 2"}, {"req 0", "b 0"}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &HTTPProxy{}
			host := "127.0.0.1"
			post := &exchange{p: p, id: 1, conn: &connInfo{id: 1, session: "req", host: host}}
			streams := map[string]*exchange{}
			for i, name := range []string{"a", "b"} {
				streams[name] = &exchange{p: p, id: uint64(10 + i), side: true, session: name, stream: StreamGET,
					conn: &connInfo{id: uint64(2 + i), session: name, host: host}}
			}
			s := &p.side
			s.streamSeen()
			info := jsonrpc.Classify([]byte(`{"jsonrpc":"2.0","id":"x","method":"tools/call"}`))
			s.note(post, &info.ID)
			label := func(r tape.Record) string { // "SESSION N"
				n := 0
				for i := 1; i < 10; i++ {
					if string(r.Frame) == string(part(i)) {
						n = i
					}
				}
				return fmt.Sprintf("%s %d", r.Session, n)
			}
			for i, step := range tt.steps {
				var who string
				var n int
				var ended bool
				if _, err := fmt.Sscanf(step, "%s %d", &who, &n); err != nil {
					ended = true
					who = step[:1]
				}
				x := streams[who]
				var out []tape.Record
				var got []string
				if ended {
					s.streamEnded(x.id, &out)
				} else {
					m := part(n)
					if n == 0 {
						m = end
					}
					rec := tape.Record{Type: tape.TypeMessage, Time: int64(i + 1), Dir: tape.ServerToClient, Frame: m, Stream: x.stream}
					session, verdict := s.answer(x, x.id, m, &rec, &out)
					switch verdict {
					case sideHeldOff:
						got = append(got, "held")
					case sideOwn:
						rec.Session = session
						got = append(got, label(rec))
					default:
						rec.Session = x.session
						got = append(got, label(rec))
					}
				}
				for _, r := range out {
					if r.Exchange != streams["b"].id || r.Stream != StreamGET {
						t.Errorf("step %q: let go a record of exchange %d, stream %q: want b's", step, r.Exchange, r.Stream)
					}
					got = append(got, label(r))
				}
				if !slices.Equal(got, tt.want[i]) {
					t.Errorf("step %d %q: got %q, want %q", i+1, step, got, tt.want[i])
				}
			}
			if left := len(s.reqs) > 0; left != tt.left {
				t.Errorf("request in flight at the end: %v, want %v", left, tt.left)
			}
		})
	}
}
