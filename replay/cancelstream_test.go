package replay

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mcptape/mcptape/jsonrpc"
)

// streamOrder is a Streamable HTTP MCP server (no session id) that notes
// what it reads and when the client closes a stream: a call gets its
// event stream's headers at once and no answer, and "closed ID" is noted
// when the client closes that stream; a batch's requests other than
// calls are answered on the batch's event stream after answerDelay, and
// the stream is then held (its calls are never answered) until the
// client closes it ("closed batch").
type streamOrder struct {
	answerDelay time.Duration
	mu          sync.Mutex
	seen        []string
}

func (o *streamOrder) note(s string) {
	o.mu.Lock()
	o.seen = append(o.seen, s)
	o.mu.Unlock()
}

func (o *streamOrder) notes() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.seen)
}

func (o *streamOrder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil || r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	stream := func() {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		http.NewResponseController(w).Flush()
	}
	info := jsonrpc.Classify(body)
	switch {
	case info.Kind == jsonrpc.KindBatch:
		members, err := jsonrpc.Split(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var answers []string
		for _, m := range members {
			mi := jsonrpc.Classify(m)
			switch {
			case mi.Method == jsonrpc.MethodCancelled:
				o.note("cancel " + mi.CancelTarget.Key())
			case mi.Kind == jsonrpc.KindRequest && mi.Method != "tools/call":
				answers = append(answers, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, mi.ID.Raw))
			}
		}
		stream()
		select {
		case <-time.After(o.answerDelay):
		case <-r.Context().Done():
			o.note("closed batch")
			return
		}
		o.note("answering batch") // before the client can have the answers
		for _, a := range answers {
			fmt.Fprintf(w, "event: message\ndata: %s\n\n", a)
		}
		http.NewResponseController(w).Flush()
		<-r.Context().Done()
		o.note("closed batch")
	case info.Method == "initialize":
		var init struct {
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"params"`
		}
		_ = json.Unmarshal(body, &init)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":%q,"capabilities":{"tools":{}},"serverInfo":{"name":"order","version":"1"}}}`, info.ID.Raw, init.Params.ProtocolVersion)
	case info.Kind == jsonrpc.KindRequest:
		o.note("call " + info.ID.Key())
		stream()
		<-r.Context().Done()
		o.note("closed " + info.ID.Key())
	default:
		if info.Method == jsonrpc.MethodCancelled {
			o.note("cancel " + info.CancelTarget.Key())
		}
		w.WriteHeader(http.StatusAccepted)
	}
}

// TestReplayCancelKeepsStreams replays over Streamable HTTP a cancel that
// the recorded client sent while the stream of the call it names was
// open, and which it did not close (the tape would say so): the replay
// does not close it either. In a batch holding a call, its cancel and a
// ping, the batch's stream carries the ping's answer (closing the batch's
// exchange for the cancelled call cut it: the ping's answer went
// missing). A cancel in a later frame goes while the call's stream is
// open (the call's stream was closed first when the call's answer
// headers came while the cancel waited for the call to land).
func TestReplayCancelKeepsStreams(t *testing.T) {
	const c2s, s2c = "c2s", "s2c"
	call, cancel, ping := cancelTapeCall, cancelTapeCancel, cancelTapePing
	tests := []struct {
		name string
		msgs [][2]string
		want []string // the server's notes before the replay closed the connection
	}{
		{"call, its cancel and a ping in one batch", [][2]string{
			{c2s, "[" + call + "," + cancel + "," + ping + "]"}, {s2c, `{"jsonrpc":"2.0","id":3,"result":{}}`},
		}, []string{"cancel 2", "answering batch"}},
		{"cancel in a later frame", [][2]string{
			{c2s, call}, {c2s, cancel},
		}, []string{"call 2", "cancel 2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := &streamOrder{answerDelay: 200 * time.Millisecond}
			ts := httptest.NewServer(srv)
			t.Cleanup(ts.Close)
			replayCancelTape(t, tt.msgs, httpDial(ts.URL+"/mcp"), 5*time.Second)
			// The streams are closed as the replay ends, not before.
			notes := srv.notes()
			if n := len(tt.want); len(notes) < n || !slices.Equal(notes[:n], tt.want) {
				t.Errorf("the server saw %q: want %q first, then the streams closed", notes, tt.want)
			}
		})
	}
}
