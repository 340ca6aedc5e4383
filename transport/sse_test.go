package transport

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

// sseCollect frames input written in chunks of size chunk (0: all at once)
// and returns copies of the emitted events, Close included.
func sseCollect(t testing.TB, input []byte, chunk int, opts ...SSEOption) []SSEEvent {
	t.Helper()
	var out []SSEEvent
	f, err := NewSSEFramer(collectInto(&out), opts...)
	if err != nil {
		t.Fatal(err)
	}
	sseFeed(t, f, input, chunk)
	return out
}

// collectInto returns an emit function appending copies of the events to
// *out.
func collectInto(out *[]SSEEvent) func(*SSEEvent) error {
	return func(e *SSEEvent) error {
		c := *e
		c.Raw, c.Data = bytes.Clone(e.Raw), bytes.Clone(e.Data)
		*out = append(*out, c)
		return nil
	}
}

// sseFeed writes input to f in chunks of size chunk (0: all at once),
// then closes f.
func sseFeed(t testing.TB, f *SSEFramer, input []byte, chunk int) {
	t.Helper()
	if chunk <= 0 {
		chunk = len(input) + 1
	}
	for i := 0; i < len(input); i += chunk {
		if _, err := f.Write(input[i:min(i+chunk, len(input))]); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// sseView is the comparable part of an event.
type sseView struct {
	Type, ID, Data        string
	HasID, HasData        bool
	Retry                 int64
	HasRetry              bool
	Comments              int
	Truncated, Incomplete bool
	Raw                   string
	Size                  int64
}

func viewOf(evs []SSEEvent) []sseView {
	var v []sseView
	for _, e := range evs {
		v = append(v, sseView{e.Type, e.ID, string(e.Data), e.HasID, e.HasData, e.Retry, e.HasRetry,
			e.Comments, e.Truncated, e.Incomplete, string(e.Raw), e.Size})
	}
	return v
}

func TestSSEFramer(t *testing.T) {
	type ev = sseView
	tests := []struct {
		name string
		in   string
		want []ev
		opts []SSEOption
	}{
		{name: "message with id", in: "event: message\nid: 7\ndata: {\"a\":1}\n\n",
			want: []ev{{Type: "message", ID: "7", HasID: true, Data: `{"a":1}`, HasData: true, Raw: "event: message\nid: 7\ndata: {\"a\":1}\n\n"}}},
		{name: "priming event", in: "id: abc\ndata: \n\n",
			want: []ev{{ID: "abc", HasID: true, HasData: true, Raw: "id: abc\ndata: \n\n"}}},
		{name: "keep-alive comment", in: ": ping\n\n",
			want: []ev{{Comments: 1, Raw: ": ping\n\n"}}},
		{name: "multi-line data", in: "data: a\ndata:b\ndata:  c\n\n",
			want: []ev{{Data: "a\nb\n c", HasData: true, Raw: "data: a\ndata:b\ndata:  c\n\n"}}},
		{name: "CRLF and CR endings", in: "data: x\r\nretry: 1500\r\rdata: y\r\n\r\n",
			want: []ev{
				{Data: "x", HasData: true, Retry: 1500, HasRetry: true, Raw: "data: x\r\nretry: 1500\r\r"},
				{Data: "y", HasData: true, Raw: "data: y\r\n\r\n"}}},
		{name: "bad retry and NUL id ignored", in: "retry: 1s\nid: a\x00b\ndata: z\n\n",
			want: []ev{{Data: "z", HasData: true, Raw: "retry: 1s\nid: a\x00b\ndata: z\n\n"}}},
		{name: "empty id resets", in: "id\ndata\n\n",
			want: []ev{{HasID: true, HasData: true, Raw: "id\ndata\n\n"}}},
		{name: "unknown field and no colon", in: "foo: bar\nevent\ndata:1\n\n",
			want: []ev{{Data: "1", HasData: true, Raw: "foo: bar\nevent\ndata:1\n\n"}}},
		{name: "BOM", in: "\xef\xbb\xbfdata: 1\n\n",
			want: []ev{{Data: "1", HasData: true, Raw: "\xef\xbb\xbfdata: 1\n\n"}}},
		{name: "lone blank lines", in: "\n\ndata: 1\n\n",
			want: []ev{{Raw: "\n"}, {Raw: "\n"}, {Data: "1", HasData: true, Raw: "data: 1\n\n"}}},
		{name: "incomplete tail", in: "data: 1\n\nid: 2\ndata: {",
			want: []ev{{Data: "1", HasData: true, Raw: "data: 1\n\n"},
				{ID: "2", HasID: true, Data: "{", HasData: true, Incomplete: true, Raw: "id: 2\ndata: {"}}},
		{name: "truncated", in: "data: 0123456789\n\ndata: ok\n\n", opts: []SSEOption{WithMaxEvent(10)},
			want: []ev{{Data: "0123", HasData: true, Truncated: true, Raw: "data: 0123", Size: 18},
				{Data: "ok", HasData: true, Raw: "data: ok\n\n"}}},
		{name: "without raw", in: "data: 1\n\n", opts: []SSEOption{WithoutRaw()},
			want: []ev{{Data: "1", HasData: true, Size: 9}}},
		{name: "empty stream", in: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, chunk := range []int{0, 1, 2, 3, 7} {
				got := viewOf(sseCollect(t, []byte(tt.in), chunk, tt.opts...))
				if len(got) != len(tt.want) {
					t.Fatalf("chunk %d: got %d events %+v, want %d", chunk, len(got), got, len(tt.want))
				}
				for i := range got {
					want := tt.want[i]
					if want.Size == 0 {
						want.Size = int64(len(want.Raw))
					}
					if chunk != 0 && strings.Contains(tt.in, "\r\n") {
						// A CRLF split between writes may move its LF
						// (TestSSEFramerSplitCRLF); compare the rest.
						got[i].Raw, got[i].Size, want.Raw, want.Size = "", 0, "", 0
					}
					if got[i] != want {
						t.Errorf("chunk %d: event %d:\n got %+v\nwant %+v", chunk, i, got[i], want)
					}
				}
			}
		})
	}
}

// A CRLF split across two writes: the LF of a blank line's CRLF may land
// in the next event's Raw, but the bytes still add up to the stream and no
// spurious event appears.
func TestSSEFramerSplitCRLF(t *testing.T) {
	in := "data: a\r\n\r"
	rest := "\ndata: b\r\n\r\n"
	var raws []string
	f, _ := NewSSEFramer(func(e *SSEEvent) error {
		if !e.IsMessage() {
			t.Errorf("unexpected event without a message: %q", e.Raw)
		}
		raws = append(raws, string(e.Raw))
		return nil
	})
	f.Write([]byte(in))
	if len(raws) != 1 {
		t.Fatalf("the event was not dispatched at its blank line: %q", raws)
	}
	f.Write([]byte(rest))
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(raws, ""); got != in+rest {
		t.Fatalf("raw bytes %q, want %q", got, in+rest)
	}
}

func TestSSEFramerEmitError(t *testing.T) {
	boom := errors.New("boom")
	f, _ := NewSSEFramer(func(*SSEEvent) error { return boom })
	if _, err := f.Write([]byte("data: 1\n\ndata: 2\n\n")); !errors.Is(err, boom) {
		t.Fatalf("Write: %v, want boom", err)
	}
	if _, err := f.Write([]byte("x")); !errors.Is(err, boom) {
		t.Fatalf("second Write: %v, want boom", err)
	}
}

// TestSSEFramerReset: a framer Reset after any stream, cut anywhere,
// frames the next one as a new framer with the same options does (the
// state of the last stream, a cut line, event or BOM check, is gone), and
// passes the new emit function the events.
func TestSSEFramerReset(t *testing.T) {
	before := []string{"", "data: 1\n\n", "id: 9\nevent: x\nretry: 5\ndata: half", "data: a line with no end", "\xef\xbb", ": c\r",
		"data: " + strings.Repeat("x", 40) + "\n\n"}
	tests := []struct {
		name string
		in   string
		opts []SSEOption
	}{
		{"message", "event: message\nid: 1\ndata: {\"jsonrpc\":\"2.0\"}\n\n", nil},
		{"priming, comment, retry", "id: p\ndata: \n\n: keepalive\n\nretry: 100\n\n", nil},
		{"line endings", "data: a\r\ndata: b\r\rdata: c\n\n", nil},
		{"BOM", "\xef\xbb\xbfdata: bom\n\n", nil},
		{"LF first", "\ndata: 1\n\n", nil},
		{"incomplete", "data: cut", nil},
		{"without raw, truncated", "data: 0123456789\n\ndata: ok\n\n", []SSEOption{WithoutRaw(), WithMaxEvent(10)}},
	}
	for _, tt := range tests {
		want := viewOf(sseCollect(t, []byte(tt.in), 0, tt.opts...))
		for _, b := range before {
			for _, chunk := range []int{0, 1, 3} {
				var old, got []SSEEvent
				f, err := NewSSEFramer(collectInto(&old), WithMaxEvent(16))
				if err != nil {
					t.Fatal(err)
				}
				f.Write([]byte(b)) // not closed: the stream is cut
				if err := f.Reset(collectInto(&got), tt.opts...); err != nil {
					t.Fatal(err)
				}
				sseFeed(t, f, []byte(tt.in), chunk)
				if g := viewOf(got); !slices.Equal(g, want) && (chunk == 0 || !strings.Contains(tt.in, "\r")) {
					t.Errorf("%s after %q, chunk %d:\n got %+v\nwant %+v", tt.name, b, chunk, g, want)
				}
			}
		}
	}
	f, _ := NewSSEFramer(func(*SSEEvent) error { return nil })
	if err := f.Reset(nil); err == nil {
		t.Error("Reset with a nil emit function accepted")
	}
	if err := f.Reset(func(*SSEEvent) error { return nil }, WithMaxEvent(0)); err == nil {
		t.Error("Reset with max 0 accepted")
	}
	if _, err := f.Write([]byte("data: 1\n\n")); err == nil {
		t.Error("a framer whose Reset failed writes")
	}
}

func TestSSEFramerBadOptions(t *testing.T) {
	if _, err := NewSSEFramer(nil); err == nil {
		t.Error("nil emit accepted")
	}
	if _, err := NewSSEFramer(func(*SSEEvent) error { return nil }, WithMaxEvent(0)); err == nil {
		t.Error("max 0 accepted")
	}
}

func TestSSEReader(t *testing.T) {
	in := ": hi\n\nid: 1\ndata: {\"x\":1}\n\nevent: endpoint\ndata: /m?s=1\n\n"
	for _, name := range []string{"whole", "one byte", "half"} {
		t.Run(name, func(t *testing.T) {
			var src io.Reader = strings.NewReader(in)
			switch name {
			case "one byte":
				src = iotest.OneByteReader(src)
			case "half":
				src = iotest.HalfReader(src)
			}
			r, err := NewSSEReader(src)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for {
				e, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, e.Type+"|"+e.ID+"|"+string(e.Data))
			}
			want := []string{"||", "|1|{\"x\":1}", "endpoint||/m?s=1"}
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Fatalf("got %q, want %q", got, want)
			}
		})
	}
}

func TestSSEReaderCutStream(t *testing.T) {
	r, _ := NewSSEReader(strings.NewReader("data: 1\n\ndata: 2"))
	if e, err := r.Next(); err != nil || string(e.Data) != "1" {
		t.Fatalf("first: %v %v", e, err)
	}
	if _, err := r.Next(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("cut stream: %v, want ErrUnexpectedEOF", err)
	}
	boom := errors.New("read failed")
	r, _ = NewSSEReader(iotest.ErrReader(boom))
	if _, err := r.Next(); !errors.Is(err, boom) {
		t.Fatalf("read error: %v", err)
	}
}

func TestAppendSSE(t *testing.T) {
	tests := []struct {
		name string
		ev   SSEEvent
		want string
	}{
		{"message", SSEEvent{Type: "message", ID: "1", Data: []byte(`{"a":1}`)}, "event: message\nid: 1\ndata: {\"a\":1}\n\n"},
		{"multi-line", SSEEvent{Data: []byte("a\r\nb\rc\nd")}, "data: a\ndata: b\ndata: c\ndata: d\n\n"},
		{"priming", SSEEvent{HasID: true, ID: "p", HasData: true}, "id: p\ndata: \n\n"},
		{"retry", SSEEvent{HasRetry: true, Retry: 3000}, "retry: 3000\n\n"},
		{"nothing", SSEEvent{}, "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := AppendSSE([]byte("x"), &tt.ev)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != "x"+tt.want {
				t.Fatalf("got %q, want %q", got, "x"+tt.want)
			}
		})
	}
	for _, bad := range []SSEEvent{{ID: "a\nb"}, {ID: "a\x00"}, {Type: "x\ry"}} {
		if _, err := AppendSSE(nil, &bad); !errors.Is(err, ErrSSEField) {
			t.Errorf("%+v: err %v, want ErrSSEField", bad, err)
		}
	}
	if got := string(AppendSSEComment(nil, "a\r\nb")); got != ": a\n: b\n\n" {
		t.Errorf("comment: %q", got)
	}
}

// FuzzSSEFramer checks, for any stream: the events' Raw bytes add up to
// the stream (so forwarding events forwards the stream), the events do not
// depend on how the stream is cut into writes, and re-encoding an event
// with AppendSSE and parsing it again gives the same fields.
func FuzzSSEFramer(f *testing.F) {
	for _, s := range []string{
		"event: message\nid: 1\ndata: {\"jsonrpc\":\"2.0\"}\n\n",
		"id: p\ndata: \n\n: keepalive\n\nretry: 100\n\n",
		"data: a\r\ndata: b\r\rdata: c\n\n",
		"\xef\xbb\xbfdata: bom\n\n",
		"event: endpoint\ndata: /message?sessionId=1\n\n",
		"data: cut",
		"id: a\x00\ndata\n\n\r\n",
	} {
		f.Add([]byte(s), uint8(3))
	}
	f.Fuzz(func(t *testing.T, in []byte, chunk uint8) {
		whole := sseCollect(t, in, 0)
		var raw []byte
		for _, e := range whole {
			raw = append(raw, e.Raw...)
		}
		if !bytes.Equal(raw, in) {
			t.Fatalf("raw bytes %q, want %q", raw, in)
		}
		cut := viewOf(sseCollect(t, in, int(chunk%16)+1))
		wv := viewOf(whole)
		if len(cut) != len(wv) {
			t.Fatalf("chunked: %d events, whole: %d", len(cut), len(wv))
		}
		for i := range wv {
			c, w := cut[i], wv[i]
			// Where a CRLF is split between writes, its LF may move into
			// the next event's Raw; everything else must match.
			c.Raw, w.Raw, c.Size, w.Size = "", "", 0, 0
			if c != w {
				t.Fatalf("event %d differs when chunked:\n%+v\n%+v", i, c, w)
			}
		}
		for _, e := range whole {
			if e.Incomplete || e.Truncated {
				continue
			}
			enc, err := AppendSSE(nil, &e)
			if err != nil {
				continue // a type with a line break cannot come out of the parser; NUL in id is dropped
			}
			again := sseCollect(t, enc, 0)
			if len(again) != 1 {
				t.Fatalf("re-encoded %q parses to %d events", enc, len(again))
			}
			a := again[0]
			if a.Type != e.Type || a.ID != e.ID || !bytes.Equal(a.Data, e.Data) || a.HasData != (e.HasData || len(e.Data) > 0) ||
				a.Retry != e.Retry || a.HasRetry != e.HasRetry {
				t.Fatalf("round trip of %q via %q: got %+v", e.Raw, enc, a)
			}
		}
	})
}
