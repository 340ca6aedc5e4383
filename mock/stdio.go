package mock

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/transport"
)

// ServeStdio serves one client over newline-delimited JSON-RPC: frames
// from in, answers to out. It returns at the end of in (nil), when ctx
// ends (nil), or when the run must end (Mock.Err: a strict mismatch, the
// disconnect fault). At the end of in, the answers still due are sent,
// and of what the recorded server sent after an answer, what is due by
// then. Playback still running when it returns is stopped: nothing is
// written to out once it has returned.
func (m *Mock) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	lr, err := transport.NewLineReader(in, 0)
	if err != nil {
		return fmt.Errorf("mock: %w", err)
	}
	var wmu sync.Mutex
	write := func(_ context.Context, frame []byte) error {
		wmu.Lock()
		defer wmu.Unlock()
		if _, err := out.Write(append(frame[:len(frame):len(frame)], '\n')); err != nil {
			return fmt.Errorf("mock: writing to the client: %w", err)
		}
		return nil
	}
	c := m.NewConn(write)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	frames := make(chan []byte)
	readErr := make(chan error, 1)
	go func() {
		for {
			f, err := lr.Next()
			if err != nil {
				readErr <- err
				return
			}
			data := bytes.TrimSpace(f.Data)
			if len(data) == 0 {
				continue
			}
			data = append([]byte(nil), data...)
			if f.Truncated {
				data = data[:0:0] // too long to be kept whole: a parse error
			}
			select {
			case frames <- data:
			case <-ctx.Done():
				return
			}
		}
	}()
	var plays sync.WaitGroup
	defer func() {
		cancel()
		plays.Wait()
		c.Close() // after the plays: they start the tails
	}()
	for {
		select {
		case f := <-frames:
			if len(f) == 0 {
				_ = write(ctx, errorFrame(nil, codeParse, "Parse error: the line is longer than the maximum frame size"))
				continue
			}
			reply, flush := Stream(write), func() {}
			if f[0] == '[' {
				reply, flush = batchReply(write, f)
			}
			p := c.Handle(ctx, f, 0, reply)
			if p == nil {
				flush()
				continue
			}
			plays.Add(1)
			go func() { defer plays.Done(); p(ctx); flush() }()
		case err := <-readErr:
			if errors.Is(err, io.EOF) {
				// Like a server that finishes what it was asked: the
				// answers still due are sent, and the tails up to their
				// first message not due yet (all at --speed max, however
				// the goroutines are scheduled), then the run ends.
				// A strict mismatch or a disconnect may have ended the
				// run already, with the end of input racing it: the run's
				// error is returned either way.
				c.InputClosed()
				if waitOrDone(ctx, m, &plays) {
					waitOrDone(ctx, m, &c.tails)
				}
				return m.Err()
			}
			return fmt.Errorf("mock: reading from the client: %w", err)
		case <-m.Done():
			return m.Err()
		case <-ctx.Done():
			return nil
		}
	}
}

// waitOrDone waits for wg, or until ctx ends or m's run must end; it
// reports whether wg was done.
func waitOrDone(ctx context.Context, m *Mock, wg *sync.WaitGroup) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-ctx.Done():
	case <-m.Done():
	}
	return false
}

// batchReply returns the stream for the answers to a batch: responses are
// held and written by flush as one array (JSON-RPC 2.0 batch), in the
// order of the requests in the batch; every other message (progress, logs,
// server requests) goes out at once. A batch that holds no request
// flushes nothing; an empty batch's answer goes out as it is.
func batchReply(write Stream, batch []byte) (Stream, func()) {
	order := map[string]int{}
	members, _ := jsonrpc.Split(batch) // an invalid batch has no order to keep
	if len(members) == 0 {
		return write, func() {} // its one error response is no array
	}
	for i, m := range members {
		order[jsonrpc.Classify(m).ID.Key()] = i
	}
	type held struct {
		pos   int
		frame []byte
	}
	var mu sync.Mutex
	var answers []held
	reply := func(ctx context.Context, frame []byte) error {
		info := jsonrpc.Classify(frame)
		switch info.Kind {
		case jsonrpc.KindResponse, jsonrpc.KindError:
			pos, ok := order[info.ID.Key()]
			if !ok {
				pos = len(members)
			}
			mu.Lock()
			answers = append(answers, held{pos, frame})
			mu.Unlock()
			return nil
		}
		return write(ctx, frame)
	}
	flush := func() {
		mu.Lock()
		defer mu.Unlock()
		if len(answers) == 0 {
			return
		}
		sort.SliceStable(answers, func(i, j int) bool { return answers[i].pos < answers[j].pos })
		out := []byte{'['}
		for i, a := range answers {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, a.frame...)
		}
		_ = write(context.Background(), append(out, ']'))
	}
	return reply, flush
}
