package check

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/tape"
)

// TestFailureLines: a broken threshold or max-duration reads as one line
// that names the spec once (in the case name) and the measured value
// rounded to 3 significant digits, in the text and JUnit outputs; the
// JSON output keeps the exact value.
func TestFailureLines(t *testing.T) {
	at := time.Date(2026, 7, 28, 0, 0, 0, 0, time.UTC).UnixNano()
	const took = 301039636 // ns
	path := writeRecords(t, "stdio",
		&tape.Record{Type: tape.TypeMessage, Time: at, Session: "s", Dir: tape.ClientToServer,
			Frame: []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}`)},
		&tape.Record{Type: tape.TypeMessage, Time: at + took, Session: "s", Dir: tape.ServerToClient,
			Frame: []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`)})
	res, err := Run(context.Background(), []string{path}, WithFailOn(),
		WithThreshold("tools/call echo:max<300ms"), WithMaxDuration("tools/call echo:300ms"), WithMaxDuration("300ms"),
		WithSlow(300*time.Millisecond), WithFailOn(SignalSlow))
	if err != nil {
		t.Fatal(err)
	}
	var text, js, junit bytes.Buffer
	for _, w := range []struct {
		b *bytes.Buffer
		f func(io.Writer, *Result) error
	}{{&text, WriteText}, {&js, WriteJSON}, {&junit, WriteJUnit}} {
		if err := w.f(w.b, res); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name, message string
	}{
		{"threshold tools/call echo:max<300ms", "measured 301ms"},
		{"max-duration tools/call echo:300ms", "tools/call echo took up to 301ms"},
		{"max-duration 300ms", "the session lasted 301ms"},
		{"slow", "tools/call echo took 301ms (more than 300ms)"},
	}
	var back Result
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line := "FAIL  " + tt.name
			i := strings.Index(text.String(), line)
			if i < 0 {
				t.Fatalf("text lacks %q:\n%s", line, text.String())
			}
			line = text.String()[i:]
			line = line[:strings.IndexByte(line, '\n')]
			if !strings.HasSuffix(line, ": "+tt.message) || strings.Count(line, "300ms") != 1 && tt.name != "slow" {
				t.Errorf("text line %q, want it to end with %q and give the spec once", line, tt.message)
			}
			if !strings.Contains(junit.String(), `message="`+tt.message+`"`) {
				t.Errorf("JUnit lacks the message %q:\n%s", tt.message, junit.String())
			}
			for _, c := range back.Cases {
				if c.Name == tt.name && c.Signal == "assertion" && (c.Measured == nil || *c.Measured != took) {
					t.Errorf("JSON measured %v, want the exact %d ns", c.Measured, took)
				}
			}
		})
	}
}
