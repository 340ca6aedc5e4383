package capture

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
)

// seenMessages is an HTTPObserver that lists the messages as
// "DIR KIND METHOD".
type seenMessages struct {
	mu   sync.Mutex
	msgs []string
}

func (s *seenMessages) Exchange(*ExchangeStats) {}

func (s *seenMessages) Message(dir tape.Direction, kind jsonrpc.Kind, method string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.msgs = append(s.msgs, string(dir)+" "+kind.String()+" "+method)
}

func (s *seenMessages) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.msgs
	s.msgs = nil
	slices.Sort(out)
	return out
}

// TestObserverPairsResponses: a server's response is reported under the
// method of the request it answers in the same exchange (a JSON body, an
// event stream, a batch); a response to no request of its exchange, and
// a client's response to nothing known, under "" (after parkAnswerFor).
func TestObserverPairsResponses(t *testing.T) {
	up := upstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		b := string(body)
		switch {
		case strings.HasPrefix(b, "["):
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `[{"jsonrpc":"2.0","id":"b","result":{}},{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"no"}}]`)
		case strings.Contains(b, `"result"`): // a client's response
			w.WriteHeader(http.StatusAccepted)
		case strings.Contains(b, "resources/read"):
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n"+
				"data: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\n\n")
		default: // answers an id the request did not have
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":99,"result":{}}`)
		}
	}))
	obs := &seenMessages{}
	rig := startProxy(t, up.URL+"/mcp", WithObserver(obs))
	tests := []struct {
		body string
		want []string
	}{
		{`{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{}}`,
			[]string{"c2s request resources/read", "s2c notification notifications/progress", "s2c response resources/read"}},
		{`[{"jsonrpc":"2.0","id":"b","method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"prompts/list"}]`,
			[]string{"c2s request prompts/list", "c2s request tools/list", "s2c error prompts/list", "s2c response tools/list"}},
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, []string{"c2s request ping", "s2c response "}},
		{`{"jsonrpc":"2.0","id":5,"result":{}}`, []string{"c2s response "}},
	}
	client := freshClient(t)
	for i, tt := range tests {
		req, _ := http.NewRequest(http.MethodPost, rig.url+"/mcp", strings.NewReader(tt.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		waitEnded(t, rig, i+1)   // the observer has seen every message of the exchange
		waitFor(t, func() bool { // but a client's answer to nothing known, after parkAnswerFor
			obs.mu.Lock()
			defer obs.mu.Unlock()
			return len(obs.msgs) >= len(tt.want)
		})
		if got := obs.take(); !slices.Equal(got, tt.want) {
			t.Errorf("%s:\n got %q\nwant %q", tt.body, got, tt.want)
		}
	}
}
