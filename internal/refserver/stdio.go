package refserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/mcptape/mcptape/internal/syncio"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServeStdio runs one session of s over in (the client's messages) and out
// (the server's), newline-delimited JSON as on a child process's stdin and
// stdout. It returns nil when the session ends normally: after in reaches
// EOF, when ctx is done, or when out is a pipe nobody reads any more (the
// client left: a write failed with EPIPE or io.ErrClosedPipe). Any other
// end is an error.
//
// At EOF the server first answers every call it has received (so a
// scripted client, `printf ... | mcptape serve`, gets all its answers,
// whatever the timing), unless it is itself waiting for an answer from the
// client (ask), which can no longer come: then, or when ctx is done, the
// session stops reading and the SDK cancels the calls still running. A
// client that wants its calls stopped cancels them (notifications/cancelled)
// or signals the process.
//
// A frame the SDK cannot decode (invalid JSON, a batch on 2025-06-18 or
// later) ends the session with an error: its decoder cannot resynchronise.
//
// A read of in that never returns (a terminal's stdin) is left behind in a
// goroutine when ServeStdio returns: there is no portable way to interrupt
// it. It ends at the next byte or EOF.
func ServeStdio(ctx context.Context, s *mcp.Server, in io.Reader, out io.Writer) error {
	return ServeStdioChat(ctx, s, Chat{}, in, out)
}

// ServeStdioChat is [ServeStdio] with the chat tool's calls streamed as
// chat says (see [Chat]): each is answered in its own goroutine, its frames
// written whole between the SDK's, so answers to concurrent calls
// interleave. A stream stopped by ctx, or cancelled by the client
// (notifications/cancelled), ends without its end result.
func ServeStdioChat(ctx context.Context, s *mcp.Server, chat Chat, in io.Reader, out io.Writer) error {
	if err := chat.check(); err != nil {
		return fmt.Errorf("refserver: %w", err)
	}
	out = syncio.NewWriter(out) // the SDK and the chat streams write
	// The SDK reads with a context that never ends, so the client's bytes
	// reach it through a pipe, fed by pump, whose read side is closed when
	// ctx is done: the session then stops reading, cancels its calls and
	// ends.
	pr, pw := io.Pipe()
	tr := newTracker()
	if chat.enabled() {
		tr.chat = func(frame []byte) bool { return tr.streamChat(ctx, chat, out, frame) }
	}
	go tr.pump(ctx, pw, in)
	stop := context.AfterFunc(ctx, func() { pr.CloseWithError(ctx.Err()) })
	defer func() {
		stop()
		// Release pump if the session ended on its own (a bad frame, a
		// failed write) while pump waits at EOF. (Its writes already fail:
		// the SDK closes pr when the session ends.)
		tr.stop()
	}()

	t := &mcp.IOTransport{
		Reader:        pr,
		Writer:        trackingWriter{w: out, t: tr},
		MaxLineLength: MaxFrameBytes,
	}
	ss, err := s.Connect(ctx, t, nil)
	if err != nil {
		return fmt.Errorf("refserver: stdio: %w", err)
	}
	err = ss.Wait()
	_ = ss.Close() // idempotent; the session has ended already
	if err == nil || errors.Is(err, io.EOF) || ctx.Err() != nil || tr.readerGone.Load() {
		return nil
	}
	return fmt.Errorf("refserver: stdio session: %w", err)
}

// tracker follows the calls crossing a stdio session in both directions,
// keyed by their ids, so that pump can hold the client's EOF back until the
// server has answered every call.
type tracker struct {
	mu          sync.Mutex
	clientCalls map[string]struct{} // client requests the server has not answered
	serverCalls map[string]struct{} // server requests the client has not answered
	changed     chan struct{}       // closed and replaced at every change
	stopped     chan struct{}       // closed when the session has ended
	readerGone  atomic.Bool         // a write failed because the client stopped reading
	chat        func([]byte) bool   // answers a chat call itself (true), or not; nil when off
	streams     sync.WaitGroup      // chat answers being written
	runs        chatRuns            // the chat answers being written, to cancel
	stopOnce    sync.Once
}

func newTracker() *tracker {
	return &tracker{
		clientCalls: make(map[string]struct{}),
		serverCalls: make(map[string]struct{}),
		changed:     make(chan struct{}),
		stopped:     make(chan struct{}),
	}
}

// stop tells pump that the session has ended: there is nothing to wait for.
func (t *tracker) stop() { t.stopOnce.Do(func() { close(t.stopped) }) }

// pump copies src to dst line by line, noting the calls of each line before
// passing it on (so that an answer is never seen before its call). At EOF it
// waits until the session is done with the client (see [ServeStdio]), then
// closes dst.
func (t *tracker) pump(ctx context.Context, dst *io.PipeWriter, src io.Reader) {
	br := bufio.NewReaderSize(src, 256<<10)
	var line []byte // a line longer than br's buffer, being gathered
	skipping := false
	for {
		chunk, err := br.ReadSlice('\n')
		full := err == bufio.ErrBufferFull
		if full && !skipping && len(line)+len(chunk) <= MaxFrameBytes {
			line = append(line, chunk...)
			continue
		}
		frame := chunk
		if len(line) > 0 {
			frame, line = append(line, chunk...), nil
		}
		// A line over MaxFrameBytes goes on untracked: the SDK rejects it
		// and ends the session.
		whole := !full && !skipping && len(frame) > 0
		if whole {
			t.note(frame, true)
			if t.chat != nil {
				t.runs.cancelFrom("", frame)
			}
		}
		skipping = full
		if len(frame) > 0 && (!whole || t.chat == nil || !t.chat(frame)) {
			if _, werr := dst.Write(frame); werr != nil {
				return // the session stopped reading
			}
		}
		switch {
		case err == nil, full:
			continue
		case err == io.EOF:
			t.waitDone(ctx)
			t.streams.Wait()
			dst.Close()
		default:
			dst.CloseWithError(err)
		}
		return
	}
}

// waitDone returns once the server has answered every client call or waits
// for the client itself, or when the session or ctx has ended.
func (t *tracker) waitDone(ctx context.Context) {
	for {
		t.mu.Lock()
		done := len(t.clientCalls) == 0 || len(t.serverCalls) > 0
		changed := t.changed
		t.mu.Unlock()
		if done {
			return
		}
		select {
		case <-changed:
		case <-t.stopped:
			return
		case <-ctx.Done():
			return
		}
	}
}

// trackingWriter passes the server's messages on and notes them. The SDK
// writes one message (or batch) and its newline per Write.
type trackingWriter struct {
	w io.Writer
	t *tracker
}

func (w trackingWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	switch {
	case err == nil:
		w.t.note(p, false)
	case errors.Is(err, io.ErrClosedPipe) || errors.Is(err, syscall.EPIPE):
		// Nobody reads the server's output any more: the client left,
		// which ends the session as the end of its input does.
		w.t.readerGone.Store(true)
	}
	return n, err
}

// Close does nothing: closing the session must not close the caller's
// writer.
func (trackingWriter) Close() error { return nil }

// wireMsg is what the tracker needs of one JSON-RPC message.
type wireMsg struct {
	ID     json.RawMessage `json:"id"`
	Method *string         `json:"method"`
	Params struct {
		RequestID json.RawMessage `json:"requestId"`
	} `json:"params"`
}

// note records the calls and answers in frame, sent by the client or the
// server. Frames it cannot read are ignored: the SDK answers those itself,
// or ends the session.
func (t *tracker) note(frame []byte, fromClient bool) {
	frame = bytes.TrimSpace(frame)
	var msgs []wireMsg
	if m, ok := peekServerFrame(frame); ok && !fromClient {
		msgs = []wireMsg{m}
	} else if msgs, ok = decodeWire(frame); !ok {
		return
	}
	mine, theirs := t.clientCalls, t.serverCalls // calls sent by the frame's sender, by its peer
	if !fromClient {
		mine, theirs = theirs, mine
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	changed := false
	for _, m := range msgs {
		id, hasID := idKey(m.ID)
		switch {
		case m.Method == nil && hasID: // an answer
			_, ok := theirs[id]
			delete(theirs, id)
			changed = changed || ok
		case m.Method == nil:
		case hasID: // a call
			mine[id] = struct{}{}
			changed = true
		case *m.Method == "notifications/cancelled":
			if target, ok := idKey(m.Params.RequestID); ok {
				_, ok := mine[target]
				delete(mine, target)
				changed = changed || ok
			}
		}
	}
	if changed {
		close(t.changed)
		t.changed = make(chan struct{})
	}
}

// decodeWire reads the messages of frame (trimmed), a message or a
// batch; false when a single message cannot be read (the members of a
// batch that cannot be read are left out).
func decodeWire(frame []byte) ([]wireMsg, bool) {
	var msgs []wireMsg
	if len(frame) > 0 && frame[0] == '[' {
		_ = unmarshalTolerant(frame, &msgs)
		return msgs, true
	}
	var m wireMsg
	if unmarshalTolerant(frame, &m) != nil {
		return nil, false
	}
	return []wireMsg{m}, true
}

// unmarshalTolerant is json.Unmarshal that accepts values of unexpected
// types (such as array params): those fields stay empty.
func unmarshalTolerant(data []byte, v any) error {
	err := json.Unmarshal(data, v)
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return nil
	}
	return err
}

// idKey returns a key equal for ids the SDK takes as equal, and false for a
// missing, null or non-scalar id. Like the SDK, it reads a number as a
// float64 and truncates it to an int64 (1, 1.0 and 1.5 are all id 1).
func idKey(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 {
		return "", false
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", false
		}
		return "s" + s, true
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		return "", false
	}
	return "n" + strconv.FormatInt(int64(f), 10), true
}

// sdkPrefix starts every message the SDK writes: its encoder puts the keys
// in the order jsonrpc, id, method, params, result, error.
const sdkPrefix = `{"jsonrpc":"2.0",`

// peekServerFrame reads the kind and id of a message written by the SDK from
// its first keys, without scanning a result that may be 64 MiB long. It
// reports false for any other shape, which is then fully decoded.
func peekServerFrame(b []byte) (wireMsg, bool) {
	var m wireMsg
	rest, ok := bytes.CutPrefix(b, []byte(sdkPrefix))
	if !ok {
		return m, false
	}
	if r, ok := bytes.CutPrefix(rest, []byte(`"id":`)); ok {
		n := scalarLen(r)
		if n == 0 || n >= len(r) || r[n] != ',' {
			return m, false
		}
		m.ID, rest = json.RawMessage(r[:n]), r[n+1:]
	}
	switch {
	case bytes.HasPrefix(rest, []byte(`"method":"`)):
		method := "" // only presence matters here, except for cancellations
		if bytes.HasPrefix(rest, []byte(`"method":"notifications/cancelled"`)) {
			return m, false // rare: let the full decoder read params
		}
		m.Method = &method
	case bytes.HasPrefix(rest, []byte(`"result":`)), bytes.HasPrefix(rest, []byte(`"error":`)):
	default:
		return m, false
	}
	return m, true
}

// scalarLen is the length of the JSON string or number at the start of b,
// or 0 if there is none.
func scalarLen(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	if b[0] == '"' {
		for i := 1; i < len(b); i++ {
			switch b[i] {
			case '\\':
				i++
			case '"':
				return i + 1
			}
		}
		return 0
	}
	i := 0
	for i < len(b) && bytes.IndexByte([]byte("-+.0123456789eE"), b[i]) >= 0 {
		i++
	}
	return i
}

// streamChat answers frame itself, in a goroutine, when it is a chat call:
// the start and deltas go straight to out, the end result through the
// tracking writer, which marks the call answered. The client's
// notifications/cancelled for the call stops the stream (pump sees it):
// no further part, no end result.
func (t *tracker) streamChat(ctx context.Context, chat Chat, out io.Writer, frame []byte) bool {
	id, query, ok := parseChatCall(frame)
	if !ok {
		return false
	}
	t.streams.Add(1)
	ctx, end := t.runs.start(ctx, "", id) // before the next frame: its cancel
	go func() {
		defer t.streams.Done()
		defer end()
		tw := trackingWriter{w: out, t: t}
		_ = chat.stream(ctx, id, query, func(f []byte, last bool) error {
			f = append(f, '\n')
			if last {
				_, err := tw.Write(f)
				return err
			}
			_, err := out.Write(f)
			return err
		})
	}()
	return true
}
