package mock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/mcptape/mcptape/capture"
	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
)

// BatchShape is how the mock answers a client batch POSTed over
// Streamable HTTP: the shape the recorded server answered batches in.
type BatchShape int

const (
	// BatchJSON answers with one JSON array of the responses, as
	// application/json, once every member is answered. Should anything
	// else have to go out first (progress, a server request), the POST
	// turns into an event stream, and the responses follow as one event
	// each: a JSON body cannot carry what must come before it.
	BatchJSON BatchShape = iota
	// BatchEvents answers with an event stream, each message (every
	// response too) its own event.
	BatchEvents
	// BatchEventArray answers with an event stream whose responses come
	// as one JSON array in one event, after the other messages.
	BatchEventArray
)

// String names the shape.
func (s BatchShape) String() string {
	switch s {
	case BatchJSON:
		return "json"
	case BatchEvents:
		return "events"
	case BatchEventArray:
		return "event-array"
	}
	return fmt.Sprintf("BatchShape(%d)", int(s))
}

// RecordedBatchShape reads the tape r and returns the shape in which the
// recorded HTTP server answered the first client batch it answered with
// status 200 (from the exchange's "http" events: the response's content
// type, and for an event stream whether an event held several messages),
// and ok false when it answered none (a stdio tape, or no batch). It
// reads r to its end.
func RecordedBatchShape(r *tape.Reader) (shape BatchShape, ok bool, err error) {
	json200 := map[uint64]bool{} // exchange -> answered 200 application/json
	for {
		rec, err := r.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return BatchJSON, false, nil
			}
			return BatchJSON, false, fmt.Errorf("mock: reading the tape: %w", err)
		}
		if rec.Type != tape.TypeEvent || rec.Event != tape.EventHTTP || rec.Exchange == 0 {
			continue
		}
		var ev capture.HTTPEvent
		if json.Unmarshal(rec.Data, &ev) != nil || ev.Method != http.MethodPost {
			continue
		}
		switch ev.Phase {
		case "response":
			if ev.Status == http.StatusOK && strings.HasPrefix(ev.ContentType, "application/json") {
				json200[rec.Exchange] = true
			}
		case "end":
			switch {
			case ev.Batch == 0 || ev.Status != http.StatusOK || ev.Messages == 0:
			case json200[rec.Exchange]:
				return BatchJSON, true, nil
			case ev.Events < ev.Messages:
				return BatchEventArray, true, nil
			default:
				return BatchEvents, true, nil
			}
			delete(json200, rec.Exchange)
		}
	}
}

// WithBatchShape sets how a client batch POSTed over Streamable HTTP is
// answered (default BatchJSON); see RecordedBatchShape.
func WithBatchShape(s BatchShape) Option {
	return func(o *options) error {
		if s < BatchJSON || s > BatchEventArray {
			return fmt.Errorf("unknown batch shape %d", s)
		}
		o.batch = s
		return nil
	}
}

// batchPost returns the stream for the answers to a batch POSTed over
// Streamable HTTP, in shape s, and the function that ends the response
// once every member is played.
func batchPost(s BatchShape, w http.ResponseWriter, stream *sseStream, body []byte) (Stream, func()) {
	switch s {
	case BatchEvents:
		return stream.send, stream.close
	case BatchEventArray:
		reply, flush := batchReply(stream.send, body)
		return reply, func() { flush(); stream.close() }
	}
	j := &jsonBatch{w: w, stream: stream}
	reply, flush := batchReply(j.send, body)
	return reply, func() { flush(); j.close() }
}

// jsonBatch writes the answers to a batch as one application/json array,
// unless another message went out first: then as an event stream.
type jsonBatch struct {
	w         http.ResponseWriter
	stream    *sseStream
	mu        sync.Mutex
	streaming bool // a message other than the responses went out
	written   bool // the JSON body is written
}

// send takes the array of responses flushed by batchReply, or another
// message.
func (j *jsonBatch) send(ctx context.Context, frame []byte) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if len(frame) == 0 || frame[0] != '[' {
		j.streaming = true
		return j.stream.send(ctx, frame)
	}
	if j.streaming {
		members, err := jsonrpc.Split(frame)
		if err != nil {
			return fmt.Errorf("mock: %w", err)
		}
		for _, m := range members {
			if err := j.stream.send(ctx, m); err != nil {
				return err
			}
		}
		return nil
	}
	j.written = true
	j.w.Header().Set("Content-Type", "application/json")
	j.w.WriteHeader(http.StatusOK)
	if _, err := j.w.Write(frame); err != nil {
		return fmt.Errorf("mock: writing to the client: %w", err)
	}
	return nil
}

// close ends the response: with nothing sent, an empty event stream.
func (j *jsonBatch) close() {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.written {
		j.stream.close()
	}
}
