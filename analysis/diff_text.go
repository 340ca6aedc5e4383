package analysis

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/mcptape/mcptape/internal/english"
	"github.com/mcptape/mcptape/internal/jsondiff"
	"github.com/mcptape/mcptape/internal/termsafe"
)

// diffWidth is the line width of the text diff.
const diffWidth = 100

// WriteDiffText writes a diff report for a terminal: the two tapes, each
// mismatching message with its field differences, the messages found in one
// tape only, and a last line with the counts.
func WriteDiffText(w io.Writer, rep *DiffReport) error {
	safe := termsafe.NewWriter(w) // values from the tapes stay text
	bw := bufio.NewWriter(safe)
	side := func(mark string, s DiffSide) {
		fmt.Fprintf(bw, "%s %s (%s, %s)\n", mark, cmpName(s.File, mark), english.Count(s.Sessions, "session"), english.Count(s.Messages, "message"))
		if s.Warning != "" {
			fmt.Fprintf(bw, "    warning: %s\n", s.Warning)
		}
	}
	side("---", rep.A)
	side("+++", rep.B)
	fmt.Fprintf(bw, "ignored: %s\n", clip(strings.Join(rep.Ignored, ", "), diffWidth-9))
	for i := range rep.Mismatches {
		m := &rep.Mismatches[i]
		fmt.Fprintf(bw, "\n%s\n  a: record %d at %s in session %q; b: record %d at %s in session %q\n", m.MessageRef.label(),
			m.RecordA, offset(m.OffsetA), clip(m.SessionA, 24), m.RecordB, offset(m.OffsetB), clip(m.SessionB, 24))
		if err := jsondiff.Render(bw, m.Diffs, "    ", diffWidth); err != nil {
			return err
		}
	}
	if n := rep.Mismatched - int64(len(rep.Mismatches)); n > 0 {
		fmt.Fprintf(bw, "\n... and %d more mismatching messages (see --format json)\n", n)
	}
	if len(rep.Unmatched) > 0 {
		bw.WriteByte('\n')
	}
	for i := range rep.Unmatched {
		u := &rep.Unmatched[i]
		line := fmt.Sprintf("only in %s: %s, record %d at %s", u.Side, u.MessageRef.label(), u.Record, offset(u.OffsetNS))
		if u.Summary != "" {
			line += ": " + u.Summary
		}
		fmt.Fprintln(bw, clip(line, diffWidth))
	}
	if n := rep.OnlyA + rep.OnlyB - int64(len(rep.Unmatched)); n > 0 {
		fmt.Fprintf(bw, "... and %d more messages found in one tape only\n", n)
	}
	verdict := "tapes differ"
	if rep.Same() {
		verdict = "tapes are equal"
	}
	fmt.Fprintf(bw, "\n%s: %s compared, %d differ, %d only in a, %d only in b\n",
		verdict, english.Count(rep.Compared, "message"), rep.Mismatched, rep.OnlyA, rep.OnlyB)
	if err := bw.Flush(); err != nil {
		return err
	}
	return safe.Flush()
}

// WriteDiffJSON writes the report as indented JSON followed by a newline.
func WriteDiffJSON(w io.Writer, rep *DiffReport) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// label names a message: "session 1 c2s request tools/call #2".
func (r MessageRef) label() string {
	var b strings.Builder
	fmt.Fprintf(&b, "session %d %s %s", r.Session, r.Dir, r.Kind)
	if r.Method != "" {
		b.WriteString(" " + r.Method)
	}
	fmt.Fprintf(&b, " #%d", r.N)
	return b.String()
}

// cmpName names a tape in the header lines.
func cmpName(file, mark string) string {
	if file != "" {
		return file
	}
	if mark == "---" {
		return "a"
	}
	return "b"
}
