package capture

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
)

// plainWriter hides a *tape.Writer's WriteClassified: the recorder then
// writes with Write and classifies the frame itself.
type plainWriter struct{ w *tape.Writer }

func (p plainWriter) Write(r *tape.Record) error { return p.w.Write(r) }

// recordLines records frames as messages through a recorder on a real
// tape (through WriteClassified unless plain) and returns the tape's
// message lines, and the classification the recorder returned for each.
func recordLines(t testing.TB, frames [][]byte, plain bool) ([]string, []jsonrpc.Info) {
	t.Helper()
	var buf bytes.Buffer
	w, err := tape.NewWriter(&buf, tape.Header{Transport: "stdio", Time: 1})
	if err != nil {
		t.Fatal(err)
	}
	var rw RecordWriter = w
	if plain {
		rw = plainWriter{w}
	}
	rec := newRecorder(rw, "1", func(f string, a ...any) { t.Errorf("recorder: "+f, a...) })
	if (rec.cw != nil) == plain {
		t.Fatalf("recorder classifies through the tape: %v, want %v", rec.cw != nil, !plain)
	}
	var infos []jsonrpc.Info
	for i, f := range frames {
		r := tape.Record{Type: tape.TypeMessage, Time: int64(i + 1), Dir: tape.ClientToServer, Frame: f, NoEOL: i%2 == 1}
		infos = append(infos, rec.message(&r))
	}
	rec.close()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	d, err := zstd.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	all, err := io.ReadAll(d)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.SplitAfter(string(all), "\n") {
		if strings.HasPrefix(l, `{"type":"message"`) {
			lines = append(lines, l)
		}
	}
	if len(lines) != len(frames) {
		t.Fatalf("%d message lines in the tape, want %d", len(lines), len(frames))
	}
	return lines, infos
}

// checkClassified checks that recording frames through WriteClassified
// writes the very lines Write writes, and returns Classify's verdicts.
func checkClassified(t testing.TB, frames [][]byte) {
	t.Helper()
	got, infos := recordLines(t, frames, false)
	want, plainInfos := recordLines(t, frames, true)
	for i, f := range frames {
		if got[i] != want[i] {
			t.Fatalf("frame %q: recorded as\n%s\nwant (as Write records it)\n%s", f, got[i], want[i])
		}
		wantInfo := jsonrpc.Classify(f)
		if infos[i].Kind != wantInfo.Kind || infos[i].Violations != wantInfo.Violations ||
			plainInfos[i].Kind != wantInfo.Kind || plainInfos[i].Violations != wantInfo.Violations {
			t.Fatalf("frame %q: classified %v/%v (tape) and %v/%v (recorder), want %v/%v", f,
				infos[i].Kind, infos[i].Violations, plainInfos[i].Kind, plainInfos[i].Violations, wantInfo.Kind, wantInfo.Violations)
		}
	}
}

// TestRecorderMessageClassifiedOnce: with a *tape.Writer the recorder
// takes a frame's classification from the tape, which validates the frame
// once for both; the tape must store every kind of frame exactly as Write
// does (verbatim JSON, text, base64) and the classification must be
// jsonrpc.Classify's.
func TestRecorderMessageClassifiedOnce(t *testing.T) {
	tests := []struct {
		name  string
		frame string
	}{
		{"request", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`},
		{"response", `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}`},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{"spaces inside", "{ \"jsonrpc\" :\t\"2.0\", \"method\": \"m\" }"},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"}]`},
		{"not an object", `123`},
		{"invalid JSON-RPC", `{"jsonrpc":"1.0","id":{},"method":7}`},
		{"invalid JSON", `{"jsonrpc":"2.0",`},
		{"trailing data", `{} {}`},
		{"text", `hello, world`},
		{"CRLF line", "{\"jsonrpc\":\"2.0\",\"method\":\"m\"}\r"},
		{"leading space", ` {"jsonrpc":"2.0","method":"m"}`},
		{"trailing tab", "{\"jsonrpc\":\"2.0\",\"method\":\"m\"}\t"},
		{"bad UTF-8 in a string", "{\"jsonrpc\":\"2.0\",\"method\":\"m\\u00e9\xff\"}"},
		{"bad UTF-8 outside", "{\"jsonrpc\":\"2.0\"}\xff"},
		{"control bytes", "\x00\x01\x02\x1b[31m"},
		{"quotes and backslashes", `say "\hi\"`},
		{"empty", ``},
		{"deep", strings.Repeat("[", 10001) + strings.Repeat("]", 10001)},
		{"just deep enough", strings.Repeat("[", 10000) + strings.Repeat("]", 10000)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkClassified(t, [][]byte{[]byte(tt.frame)}) })
	}
	t.Run("all in one tape", func(t *testing.T) {
		var frames [][]byte
		for _, tt := range tests {
			frames = append(frames, []byte(tt.frame))
		}
		checkClassified(t, frames)
	})
}

func FuzzRecorderMessageClassified(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`,
		"{\"a\":\"\xff\"}", "{}\r", " {}", `"\u0000"`, "[[[", "\x00", "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		checkClassified(t, [][]byte{frame})
	})
}

// BenchmarkRecorderMessage measures recording one message frame and
// classifying it: through WriteClassified, which validates the frame once
// (ours), and with Write and a separate jsonrpc.Classify (baseline, two
// passes over the frame). It reports the ratio ours/baseline of ns/op.
func BenchmarkRecorderMessage(b *testing.B) {
	frames := [][]byte{
		[]byte(`{"jsonrpc":"2.0","id":12345,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello, mcptape"}}}`),
		[]byte(`{"jsonrpc":"2.0","id":12345,"result":{"content":[{"type":"text","text":"hello, mcptape"}],"structuredContent":{"message":"hello, mcptape"}}}`),
	}
	var ns [2]float64
	for i, plain := range []bool{false, true} {
		name := "ours"
		if plain {
			name = "baseline"
		}
		b.Run(name, func(b *testing.B) {
			w, err := tape.NewWriter(io.Discard, tape.Header{Transport: "stdio"})
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			var rw RecordWriter = w
			if plain {
				rw = plainWriter{w}
			}
			rec := newRecorder(rw, "1", func(string, ...any) {})
			r := tape.Record{Type: tape.TypeMessage, Time: 1, Dir: tape.ClientToServer}
			n := 0
			for b.Loop() {
				r.Frame = frames[n%2]
				n++
				if info := rec.message(&r); info.Kind == jsonrpc.KindInvalid {
					b.Fatal("invalid")
				}
			}
			ns[i] = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		})
	}
	if ns[1] > 0 {
		b.ReportMetric(ns[0]/ns[1], "ratio")
	}
}
