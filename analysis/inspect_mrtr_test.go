package analysis

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestMRTRSameToolWaits: the MRTR operations of one tool in one session
// each wait for their retry. The client calls ask maxWaitingMRTR+2 times,
// each asked for input, and retries only the last: it completes in two
// rounds, and every other operation is abandoned (the two oldest when the
// wait is full, the others at the end), listed by record. (A later
// operation replaced the one waiting: none was abandoned.)
func TestMRTRSameToolWaits(t *testing.T) {
	const calls = maxWaitingMRTR + 2
	var steps []step
	at := time.Duration(0)
	add := func(s func(time.Duration, string) step, msg string) {
		at += time.Millisecond
		steps = append(steps, s(at, msg))
	}
	for i := 1; i <= calls; i++ {
		add(c2s, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"ask"}}`, i))
		add(s2c, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"resultType":"input_required","inputRequests":{"x":{"method":"roots/list"}}}}`, i))
	}
	add(c2s, `{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"ask","inputResponses":{"x":{"roots":[]}}}}`)
	add(s2c, `{"jsonrpc":"2.0","id":99,"result":{"resultType":"complete","content":[]}}`)
	rep, err := Inspect(context.Background(), tempTape(t, steps...), WithSessionDetails(3))
	if err != nil {
		t.Fatal(err)
	}
	m := rep.Operations.MRTR
	if m.Abandoned != calls-1 || m.Operations != 1 || m.Rounds != 2 {
		t.Errorf("abandoned %d, operations %d in %d rounds; want %d, 1 in 2", m.Abandoned, m.Operations, m.Rounds, calls-1)
	}
	if len(m.AbandonedRequests) != calls-1 {
		t.Fatalf("%d abandoned listed, want %d", len(m.AbandonedRequests), calls-1)
	}
	for i, r := range m.AbandonedRequests {
		if want := fmt.Sprint(i + 1); r.ID != want || r.Seq != int64(2*i+1) {
			t.Errorf("abandoned %d: id %s record %d, want id %s record %d", i, r.ID, r.Seq, want, 2*i+1)
		}
	}
	s := rep.Sessions[0]
	if s.Abandoned != calls-1 || s.Details == nil || len(s.Details.Abandoned) != 3 || s.Details.Abandoned[2].ID != "3" {
		t.Errorf("session: %d abandoned, details %+v; want %d, ids 1 to 3", s.Abandoned, s.Details, calls-1)
	}
}
