package main

import (
	"testing"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
)

// plainTape is a recordTape that only writes.
type plainTape struct{ writes int }

func (p *plainTape) Write(*tape.Record) error { p.writes++; return nil }
func (p *plainTape) Close() error             { return nil }

// classifyingTape is a recordTape that classifies as it writes, as
// *tape.Writer does; its verdict is marked so that a test sees it was asked.
type classifyingTape struct {
	plainTape
	classified int
}

func (c *classifyingTape) WriteClassified(r *tape.Record) (jsonrpc.Info, error) {
	c.classified++
	info := jsonrpc.Classify(r.Frame)
	info.Method = "from-the-tape"
	return info, nil
}

// TestLateTapeClassifies checks that the late-bound tape of "mcptape
// record" lets the proxy classify a frame as the tape stores it (one parse)
// when the tape can, and classifies it itself when the tape cannot.
func TestLateTapeClassifies(t *testing.T) {
	frame := []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo"}}`)
	tests := []struct {
		name           string
		tape           recordTape
		wantMethod     string
		wantClassified int
	}{
		{"classifying tape", &classifyingTape{}, "from-the-tape", 1},
		{"plain tape", &plainTape{}, "tools/call", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cw, ok := any(&lateTape{w: tt.tape}).(interface {
				WriteClassified(*tape.Record) (jsonrpc.Info, error)
			})
			if !ok {
				t.Fatal("lateTape has no WriteClassified: the proxy parses every frame twice (once to store it, once to classify it)")
			}
			info, err := cw.WriteClassified(&tape.Record{Type: tape.TypeMessage, Frame: frame})
			if err != nil {
				t.Fatal(err)
			}
			if info.Method != tt.wantMethod || info.Kind != jsonrpc.KindRequest {
				t.Errorf("info = %+v, want a request with method %q", info, tt.wantMethod)
			}
			var writes, classified int
			switch w := tt.tape.(type) {
			case *classifyingTape:
				writes, classified = w.writes, w.classified
			case *plainTape:
				writes = w.writes
			}
			if writes+classified != 1 || classified != tt.wantClassified {
				t.Errorf("%d writes and %d classifying writes, want %d classifying of 1", writes, classified, tt.wantClassified)
			}
		})
	}
}
