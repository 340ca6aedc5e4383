package analysis

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestTextReportsKeepControlCharactersOut checks that names read from a
// tape (a client's name, a method, a tool name) cannot drive the terminal
// through the text reports of inspect, diff and diff --surface: their
// control characters come out as marks.
func TestTextReportsKeepControlCharactersOut(t *testing.T) {
	steps := after(
		c2s(10*ms, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x\u001b[2Jred","arguments":{}}}`),
		s2c(15*ms, `{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`),
		c2s(20*ms, `{"jsonrpc":"2.0","id":3,"method":"to\u001b]0;title\u0007ols/list"}`),
		s2c(21*ms, `{"jsonrpc":"2.0","id":3,"result":{"tools":[]}}`),
		// C1 controls written raw in the frame (valid JSON): CSI U+009B.
		c2s(30*ms, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"re\u009b2Jsources/list\"}"),
		s2c(31*ms, "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"resources\":[{\"name\":\"r\u009b1m\"}]}}"),
	)
	path := tempTape(t, steps...)
	rep, err := Inspect(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	other := after(c2s(10*ms, `{"jsonrpc":"2.0","id":2,"method":"ping"}`))
	tests := []struct {
		name  string
		write func(*bytes.Buffer) error
		want  string
	}{
		{"inspect", func(b *bytes.Buffer) error { return WriteText(b, rep) }, "to·]0;title·ols/list"},
		{"inspect C1", func(b *bytes.Buffer) error { return WriteText(b, rep) }, "re·2Jsources/list"},
		{"show", func(b *bytes.Buffer) error { _, err := Show(context.Background(), path, b); return err }, "to·]0;title·ols/list"},
		{"show C1", func(b *bytes.Buffer) error { _, err := Show(context.Background(), path, b); return err }, "re·2Jsources/list"},
		{"diff C1", func(b *bytes.Buffer) error {
			return WriteDiffText(b, diffFiles(t, "c.jsonl.zst", "d.jsonl.zst", steps, other))
		}, "re·2Jsources/list"},
		{"diff", func(b *bytes.Buffer) error {
			return WriteDiffText(b, diffFiles(t, "a.jsonl.zst", "b.jsonl.zst", steps, other))
		}, "to·]0;title·ols/list"},
		{"surface diff", func(b *bytes.Buffer) error {
			return WriteSurfaceDiffText(b, []SurfaceChange{{Kind: KindTool, Name: "ev\x1b]0;x\x07il", Change: "removed", Breaking: true}}, nil)
		}, "tool ev·]0;x·il removed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tc.write(&b); err != nil {
				t.Fatal(err)
			}
			if strings.ContainsAny(b.String(), "\x1b\x07\u009b") || !strings.Contains(b.String(), tc.want) {
				t.Errorf("text report holds control characters or lacks %q:\n%q", tc.want, b.String())
			}
		})
	}
}

// TestShowMarksLoneC1Bytes checks that a byte 0x80 to 0x9F outside any
// UTF-8 sequence, written raw by a peer into a frame, reaches the terminal
// as a mark through show (which prints a result as the frame has it): a
// terminal reading 8-bit controls takes a lone 0x9B as CSI.
func TestShowMarksLoneC1Bytes(t *testing.T) {
	path := tempTape(t, after(
		c2s(10*ms, `{"jsonrpc":"2.0","id":4,"method":"vendor/list"}`),
		s2c(31*ms, "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"items\":[{\"name\":\"r\x9b1m\"}]}}"),
	)...)
	var b bytes.Buffer
	if _, err := Show(context.Background(), path, &b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "\x9b") || !strings.Contains(b.String(), `"name":"r·1m"`) {
		t.Errorf("show passed a lone C1 byte or lost the name:\n%q", b.String())
	}
}
