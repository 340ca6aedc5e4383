package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/internal/syncio"
)

// fakeTerminal is a stderr that says it is a terminal (isTerminal): load
// draws its live bar on it as on one.
type fakeTerminal struct{ syncio.Buffer }

func (*fakeTerminal) IsTerminal() bool { return true }

// stderrHelperEnv switches TestServerStderrHelperProcess into a stdio
// server (mcptape serve) that writes on its stderr the first half of a
// line as it starts, the second half and a whole line once its session
// ended (load's run lasted meanwhile, its bar drawn), then a last line
// with no newline.
const stderrHelperEnv = "MCPTAPE_STDERR_HELPER"

// Lines the helper server writes on its stderr, as they end up whole.
var helperStderrLines = []string{"server: first half and second half", "server: a whole line", "server: the last words"}

func TestServerStderrHelperProcess(t *testing.T) {
	if os.Getenv(stderrHelperEnv) == "" {
		t.Skip("helper process for TestServerStderrAboveBar")
	}
	// The halves are written in this order by one goroutine, the session
	// between them: they were 600ms apart, and a session shorter than
	// that on a loaded machine (the helper slow to start) put the last
	// words before the second half.
	os.Stderr.WriteString("server: first half")
	code := run(context.Background(), &stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr}, []string{"serve"})
	os.Stderr.WriteString(" and second half\nserver: a whole line\n")
	os.Stderr.WriteString("server: the last words")
	os.Exit(code)
}

// barEscapes are what starts a frame of the bar on a line: the cursor
// moved up over the last frame and the screen cleared below, then a
// carriage return.
var barEscapes = regexp.MustCompile(`^(\x1b\[\d+A\x1b\[J)?\r?`)

// TestServerStderrAboveBar: with load's live bar on the terminal
// (--server-stderr -, the default), a stdio server's stderr lines are
// printed above the bar as its notices are, each whole: a line the server
// writes in two parts while frames are drawn is held until it ends, and
// the unfinished last one is ended at the end of the run; no line of the
// terminal holds both a server's text and a frame. They were written to
// the terminal as they came, a frame drawn after half a line.
func TestServerStderrAboveBar(t *testing.T) {
	t.Setenv(stderrHelperEnv, "1")
	term := &fakeTerminal{}
	var out bytes.Buffer
	args := []string{"load", "--duration", "1500ms", "--call", "tools/list", "--", os.Args[0], "-test.run=^TestServerStderrHelperProcess$"}
	code := run(context.Background(), &stdio{in: strings.NewReader(""), out: &out, err: term}, args)
	screen := term.String()
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%q", code, out.String(), screen)
	}
	var frames int
	var server []string
	for _, line := range strings.Split(strings.TrimSuffix(screen, "\n"), "\n") {
		line = barEscapes.ReplaceAllString(line, "")
		switch {
		case strings.HasPrefix(line, "load ") && strings.Contains(line, "[") && !strings.Contains(line, "server:"):
			frames++
		case strings.HasPrefix(line, "load: "): // a notice
		case countsRow.MatchString(line): // the row under the bar
		default:
			server = append(server, line)
		}
	}
	if frames < 2 {
		t.Errorf("%d frames of the bar, want some:\n%q", frames, screen)
	}
	if !slices.Equal(server, helperStderrLines) {
		t.Errorf("lines besides the bar's:\n%q\nwant the server's, each whole on its own line:\n%q\nscreen:\n%q", server, helperStderrLines, screen)
	}
}

// countsRow matches the row of counts under the live bar.
var countsRow = regexp.MustCompile(`^  \d+ ok(, |$)`)

// TestLineWriter: whole lines are passed on at once, an unfinished one is
// held until a later write ends it or Flush, and one longer than the bound
// is passed on in parts, each ended with a newline.
func TestLineWriter(t *testing.T) {
	long := strings.Repeat("x", maxHeldLine)
	for _, tt := range []struct {
		name   string
		writes []string
		want   []string // what out got, Flush included
	}{
		{"whole lines", []string{"a\nb\n", "c\n"}, []string{"a\nb\n", "c\n"}},
		{"a line in parts", []string{"a", "b", "c\nd"}, []string{"abc\n", "d\n"}},
		{"lines and a part", []string{"a\nb", "c\n"}, []string{"a\n", "bc\n"}},
		{"nothing held", []string{"a\n"}, []string{"a\n"}},
		{"a long line", []string{long[:10], long[10:] + "yz"}, []string{long + "\n", "yz\n"}},
		{"a long unfinished line", []string{long + long[1:]}, []string{long + "\n", long[1:] + "\n"}},
		{"a long line whole", []string{long + long + "\n"}, []string{long + long + "\n"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			w := &lineWriter{out: func(b []byte) { got = append(got, string(b)) }}
			for _, s := range tt.writes {
				if n, err := w.Write([]byte(s)); n != len(s) || err != nil {
					t.Fatalf("Write %q: %d, %v", s, n, err)
				}
			}
			w.Flush()
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", clip(got), clip(tt.want))
			}
		})
	}
}

// clip shortens long strings for a message.
func clip(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s
		if len(s) > 20 {
			out[i] = fmt.Sprintf("%s...(%d bytes)", s[:10], len(s))
		}
	}
	return out
}
