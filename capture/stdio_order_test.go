package capture

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcptape/mcptape/tape"
)

// runAnswerPeer is the "answer" peer: it answers every request read on
// stdin at once, one write per answer, and meanwhile sends PEER_ASK
// requests of its own, counting the client's answers. It ends with stdin.
func runAnswerPeer(code int) int {
	var mu sync.Mutex
	send := func(line []byte) {
		mu.Lock()
		defer mu.Unlock()
		os.Stdout.Write(line)
	}
	ask, _ := strconv.Atoi(os.Getenv("PEER_ASK"))
	go func() {
		for i := range ask {
			send([]byte(`{"jsonrpc":"2.0","id":"s` + strconv.Itoa(i) + `","method":"ping"}` + "\n"))
		}
	}()
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil || m.Method == "" || m.ID == nil {
			continue
		}
		send([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{}}` + "\n"))
	}
	return code
}

// answeringClient plays the client of the "answer" peer: it sends
// requests in bursts, answers the server's requests as soon as it sees
// them, and closes its stdin once it has every answer and has answered
// every request. Its Write is the proxy's stdout; it never blocks on stdin.
type answeringClient struct {
	want, ask int // answers expected, server requests expected

	mu       sync.Mutex
	partial  []byte
	queue    [][]byte // lines waiting to go to stdin
	wake     chan struct{}
	answers  int
	answered int
}

func (c *answeringClient) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.partial = append(c.partial, p...)
	for {
		i := bytes.IndexByte(c.partial, '\n')
		if i < 0 {
			break
		}
		line := c.partial[:i]
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if err := json.Unmarshal(line, &m); err == nil {
			if m.Method != "" {
				c.queue = append(c.queue, []byte(`{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"roots":[]}}`+"\n"))
				c.answered++
			} else {
				c.answers++
			}
		}
		c.partial = c.partial[i+1:]
	}
	c.signal()
	return len(p), nil
}

func (c *answeringClient) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// feed writes requests and answers to w until the exchange is over, then
// closes w.
func (c *answeringClient) feed(w io.WriteCloser) {
	defer w.Close()
	const burst = 200
	next := 0
	for {
		c.mu.Lock()
		var out []byte
		for _, l := range c.queue {
			out = append(out, l...)
		}
		c.queue = c.queue[:0]
		finished := c.answers == c.want && c.answered == c.ask
		c.mu.Unlock()
		for i := 0; i < burst && next < c.want; i, next = i+1, next+1 {
			out = fmt.Appendf(out, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo"}}`+"\n", next)
		}
		if len(out) > 0 {
			if _, err := w.Write(out); err != nil {
				return
			}
			continue
		}
		if finished {
			return
		}
		select {
		case <-c.wake:
		case <-time.After(5 * time.Second):
			return // the test reports what is missing
		}
	}
}

// tapeOrderViolations reads a tape and returns the answers found before
// the request they answer, in file order, and the records stamped out of
// order (an answer before its request, a message before the one before it
// in its direction).
func tapeOrderViolations(t *testing.T, data []byte) (msgs int, bad []string) {
	t.Helper()
	r, err := tape.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	// The time each request was read, by direction and id; the time of the
	// last record of each direction.
	seen := map[tape.Direction]map[string]int64{tape.ClientToServer: {}, tape.ServerToClient: {}}
	last := map[tape.Direction]int64{}
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if rec.Type != tape.TypeMessage {
			continue
		}
		msgs++
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if err := json.Unmarshal(rec.Frame, &m); err != nil {
			t.Fatalf("record %d: %v", msgs, err)
		}
		if rec.Time < last[rec.Dir] {
			bad = append(bad, fmt.Sprintf("%s message %d is older than the one before it", rec.Dir, msgs))
		}
		last[rec.Dir] = rec.Time
		id := string(m.ID)
		if m.Method != "" {
			seen[rec.Dir][id] = rec.Time
			continue
		}
		other := tape.ClientToServer
		if rec.Dir == tape.ClientToServer {
			other = tape.ServerToClient
		}
		switch at, ok := seen[other][id]; {
		case !ok:
			bad = append(bad, fmt.Sprintf("%s answer to %s at message %d", rec.Dir, id, msgs))
		case at > rec.Time:
			bad = append(bad, fmt.Sprintf("%s answer to %s at message %d is stamped before its request", rec.Dir, id, msgs))
		}
	}
	return msgs, bad
}

func TestRunStdioRecordsAnswersAfterRequests(t *testing.T) {
	// Every answer comes straight back from the peer, so without ordering
	// the pump of one direction regularly records answers before the other
	// pump has recorded their requests.
	const calls, asks = 4000, 1000
	argv, env := peerCmd(t, "answer", "PEER_ASK="+strconv.Itoa(asks))
	var buf bytes.Buffer
	tw, err := tape.NewWriter(&buf, tape.Header{Transport: "stdio"})
	if err != nil {
		t.Fatal(err)
	}
	client := &answeringClient{want: calls, ask: asks, wake: make(chan struct{}, 1)}
	inR, inW := io.Pipe()
	go client.feed(inW)
	var logMu sync.Mutex
	var logs []string
	debugf := func(format string, args ...any) {
		logMu.Lock()
		defer logMu.Unlock()
		logs = append(logs, fmt.Sprintf(format, args...))
	}
	res, err := RunStdio(context.Background(), StdioOptions{Command: argv, Env: env, Stdin: inR, Stdout: client, Tape: tw, Debugf: debugf})
	if err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if res.ClientMessages != calls+asks || res.ServerMessages != calls+asks {
		t.Fatalf("recorded %d/%d messages, want %d each way", res.ClientMessages, res.ServerMessages, calls+asks)
	}
	msgs, bad := tapeOrderViolations(t, buf.Bytes())
	if msgs != 2*(calls+asks) {
		t.Fatalf("tape holds %d messages, want %d", msgs, 2*(calls+asks))
	}
	if len(bad) > 0 {
		logMu.Lock()
		defer logMu.Unlock()
		t.Fatalf("%d answers recorded before their request; first: %s; log: %q", len(bad), bad[0], logs)
	}
}

func TestRunStdioOrderingYieldsToBlockedForwarding(t *testing.T) {
	// The client writes everything before it reads anything, while the
	// server writes as it reads. The s2c pump blocks forwarding to the
	// client, so the c2s pump cannot wait for it to record: if it did, it
	// would stop reading the client, which waits to finish writing before
	// reading, and the three would wait for each other.
	var s2c, c2s bytes.Buffer
	for i := range 4000 {
		fmt.Fprintf(&s2c, `{"jsonrpc":"2.0","method":"notifications/message","params":{"n":%d}}`+"\n", i)
		fmt.Fprintf(&c2s, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"n":%d,"pad":"%0250d"}}`+"\n", i, 0)
	}
	dir := t.TempDir()
	argv, env := peerCmd(t, "script", "PEER_S2C="+writeTemp(t, "s2c", s2c.Bytes()), "PEER_C2S_OUT="+dir+"/c2s")
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	// The client starts writing once the s2c pump is forwarding (and
	// blocked: nobody reads outR yet).
	blocked := &signalWriter{w: outW, first: make(chan struct{})}
	got := make(chan []byte, 1)
	go func() {
		<-blocked.first
		inW.Write(c2s.Bytes())
		inW.Close()
		b, _ := io.ReadAll(outR)
		got <- b
	}()
	mem := &memTape{}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	res, err := RunStdio(ctx, StdioOptions{Command: argv, Env: env, Stdin: inR, Stdout: blocked, CloseStdout: true, Tape: mem})
	if err != nil {
		t.Fatal(err)
	}
	// Waiting the full orderMaxWait for each of the 19 c2s chunks would
	// take 19 s; giving way after orderWriteWait takes a fraction of one.
	if d := time.Since(start); d > 8*time.Second {
		t.Errorf("the run took %v: the pumps waited for each other", d)
	}
	checkSame(t, "client got", <-got, s2c.Bytes())
	checkSame(t, "recorded s2c", frames(mem.records(), tape.ServerToClient), s2c.Bytes())
	checkSame(t, "recorded c2s", frames(mem.records(), tape.ClientToServer), c2s.Bytes())
	if res.ClientMessages != 4000 || res.ServerMessages != 4000 {
		t.Fatalf("recorded %d/%d messages, want 4000 each way", res.ClientMessages, res.ServerMessages)
	}
}

// signalWriter closes first when its first Write begins.
type signalWriter struct {
	w     io.WriteCloser
	first chan struct{}
	once  sync.Once
}

func (s *signalWriter) Write(p []byte) (int, error) {
	s.once.Do(func() { close(s.first) })
	return s.w.Write(p)
}

func (s *signalWriter) Close() error { return s.w.Close() }

// TestProgressWaitRecorded: how long waitRecorded waits, and what it
// says, in each state of the chunk. It runs in a synctest bubble, where
// time moves only when every goroutine waits: the waits are exact,
// whatever the machine's load (measured in real time, a wait of 250 ms
// came back after 615 ms once on a loaded machine, over the 500 ms bound).
func TestProgressWaitRecorded(t *testing.T) {
	for _, tc := range []struct {
		name  string
		set   func(g *progress) // state before the wait (chunk 1 under way)
		later func(g *progress) // done by another goroutine after 20 ms
		want  bool
		took  time.Duration
	}{
		{name: "already recorded", set: func(g *progress) { g.recorded(1) }, want: true, took: 0},
		{name: "recorded later", set: func(g *progress) { g.forwarded() }, later: func(g *progress) { g.recorded(1) },
			want: true, took: 20 * time.Millisecond},
		{name: "parked later", set: func(g *progress) { g.forwarded() }, later: func(g *progress) { g.park() },
			want: true, took: 20 * time.Millisecond},
		{name: "recording, tape stalled", set: func(g *progress) { g.forwarded() }, want: false, took: orderMaxWait},
		{name: "blocked forwarding", want: false, took: orderWriteWait},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				g := &progress{}
				target := g.forwarding(start.UnixNano())
				if tc.set != nil {
					tc.set(g)
				}
				if tc.later != nil {
					timer := time.AfterFunc(20*time.Millisecond, func() { tc.later(g) })
					defer timer.Stop()
				}
				ok := g.waitRecorded(target)
				d := time.Since(start)
				if ok != tc.want {
					t.Errorf("waitRecorded = %v, want %v", ok, tc.want)
				}
				if d != tc.took {
					t.Errorf("waited %v, want %v", d, tc.took)
				}
			})
		})
	}
}

// rawPump returns a c2s pump that records into mem and writes into a new
// pipe through its raw connection, and the pipe's read end.
func rawPump(t *testing.T, mem *memTape) (*pump, *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	p := newPump(newRecorder(mem, "1", func(string, ...any) {}), tape.ClientToServer, nil, w, 0)
	p.own = &progress{}
	if p.raw, err = w.SyscallConn(); err != nil {
		t.Fatal(err)
	}
	return p, r
}

func TestForwardRawRecordsBeforeWaitingForRoom(t *testing.T) {
	// A chunk much larger than the pipe: the write must wait for the
	// reader, and before it does, the lines already in the pipe (which the
	// reader could answer) must be in the tape.
	var chunk []byte
	for i := range 100 {
		chunk = fmt.Appendf(chunk, `{"jsonrpc":"2.0","id":%d,"method":"x","params":"%02000d"}`+"\n", i, 0)
	}
	mem := &memTape{}
	p, r := rawPump(t, mem)
	seq := p.own.forwarding(time.Now().UnixNano())
	type result struct {
		framed int
		err    error
	}
	done := make(chan result, 1)
	go func() {
		framed, err := p.forwardRaw(chunk)
		done <- result{framed, err}
	}()
	if !p.own.waitRecorded(seq) { // returns once parked
		t.Fatal("the write neither parked nor ended")
	}
	parkedAt := len(mem.records())
	if parkedAt == 0 {
		t.Fatal("parked with nothing recorded")
	}
	got, err := io.ReadAll(io.LimitReader(r, int64(len(chunk))))
	if err != nil {
		t.Fatal(err)
	}
	res := <-done
	if res.err != nil {
		t.Fatal(res.err)
	}
	checkSame(t, "forwarded", got, chunk)
	if res.framed == 0 || res.framed > len(chunk) {
		t.Fatalf("framed %d of %d bytes", res.framed, len(chunk))
	}
	p.framer.Write(chunk[res.framed:]) // as run does
	checkSame(t, "recorded", frames(mem.records(), tape.ClientToServer), chunk)
	if parkedAt >= 100 {
		t.Fatalf("%d records when the write parked, want fewer than all 100", parkedAt)
	}
}

func TestForwardRawReaderGone(t *testing.T) {
	mem := &memTape{}
	p, r := rawPump(t, mem)
	r.Close()
	framed, err := p.forwardRaw([]byte("{}\n"))
	if !errors.Is(err, syscall.EPIPE) || framed != 0 {
		t.Fatalf("forwardRaw = %d, %v; want 0, EPIPE", framed, err)
	}
	if p.own.parked.Load() {
		t.Fatal("still parked after the write ended")
	}
}
