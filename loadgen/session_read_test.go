package loadgen

import (
	"testing"
	"time"

	"github.com/mcptape/mcptape/jsonrpc"
)

// TestDispatchHandoff: the answer to the request of the goroutine that
// drains the connection is put in its handoff, not on its call's channel;
// the answer to another request of the session (several in flight) still
// goes to that one's channel.
func TestDispatchHandoff(t *testing.T) {
	mine := &call{done: make(chan reply, 1)}
	other := &call{done: make(chan reply, 1)}
	s := &session{pending: map[int64]*call{1: mine, 2: other}}
	own := &handoff{c: mine}
	at := time.Unix(1000, 0)
	tests := []struct {
		frame   string
		want    *call // whose answer it is
		handoff bool  // handed over in own
	}{
		{`{"jsonrpc":"2.0","id":2,"result":{}}`, other, false},
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"no"}}`, mine, true},
	}
	for _, tt := range tests {
		frame := []byte(tt.frame)
		info := jsonrpc.Classify(frame)
		s.dispatch(nil, at, &info, frame, own)
		if own.got != tt.handoff {
			t.Errorf("%s: handed over in own %v, want %v", tt.frame, own.got, tt.handoff)
		}
		if got := len(tt.want.done); got != map[bool]int{true: 0, false: 1}[tt.handoff] {
			t.Errorf("%s: %d replies on the call's channel", tt.frame, got)
		}
	}
	if own.rep.id != 1 || own.rep.info.kind != jsonrpc.KindError || own.rep.info.errorCode != -32000 || !own.rep.at.Equal(at) {
		t.Errorf("handed over %+v", own.rep)
	}
	if len(s.pending) != 0 {
		t.Errorf("%d calls still pending", len(s.pending))
	}
}
