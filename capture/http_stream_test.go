package capture

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/tape"
)

// TestHTTPLeanKeptChunks: the chunks of an event stream reach the
// recorder once the upstream goes silent, not only at the end: here the
// stream sends two events and holds still, and both messages and the
// "response" event are recorded while it holds, the "response" event
// first, each message timed before the stream ends.
func TestHTTPLeanKeptChunks(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	up := upstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fmt.Fprint(w, "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n")
		w.(http.Flusher).Flush()
		fmt.Fprint(w, "id: 2\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n")
		w.(http.Flusher).Flush()
		<-release
	}))
	t.Cleanup(free) // before the upstream's Close, which waits for the handler
	rig := startProxy(t, up.URL)
	resp := peertest.PostJSON(t, freshClient(t), rig.url+"/mcp", "S1", "", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":1}}}`)
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	for seen := 0; seen < 2; {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the stream: %v", err)
		}
		if strings.HasPrefix(line, "data: ") {
			seen++
		}
	}
	// The upstream holds still: what came must reach the recorder anyway.
	var recs []tape.Record
	waitFor(t, func() bool {
		recs = rig.tape.records()
		return len(msgs(recs, tape.ServerToClient)) == 2
	})
	ended := time.Now()
	free()
	peertest.ReadAnswer(t, resp)
	recs = waitEnded(t, rig, 1)

	var order []string
	for _, r := range recs {
		switch {
		case r.Type == tape.TypeMessage && r.Dir == tape.ServerToClient:
			order = append(order, "message "+r.EventID)
			if r.Time >= ended.UnixNano() {
				t.Errorf("message of event %s timed %v, after the stream held still (%v)", r.EventID, time.Unix(0, r.Time), ended)
			}
		case r.Type == tape.TypeEvent && r.Event == tape.EventHTTP:
			var e HTTPEvent
			if err := json.Unmarshal(r.Data, &e); err != nil {
				t.Fatal(err)
			}
			order = append(order, e.Phase)
		}
	}
	if got, want := strings.Join(order, ", "), "response, message 1, message 2, end"; got != want {
		t.Fatalf("records: %s; want %s", got, want)
	}
}
