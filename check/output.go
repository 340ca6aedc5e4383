package check

import (
	"cmp"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/mcptape/mcptape/internal/english"
	"github.com/mcptape/mcptape/internal/termsafe"
)

// WriteText writes the failures, the notes (signals that fired but are
// not selected) and a summary line.
func WriteText(w io.Writer, r *Result) error {
	var b strings.Builder
	for _, e := range r.Errors {
		fmt.Fprintf(&b, "ERROR %s: %s\n", e.Tape, e.Error)
	}
	notes := 0
	for _, c := range r.Cases {
		if !c.Fired && !(c.Signal == SignalDrift && len(c.Details) > 0) {
			continue
		}
		mark := "FAIL "
		if !c.Failed() {
			mark = "note "
			notes++
		}
		fmt.Fprintf(&b, "%s %-28s %s: %s\n", mark, c.Name, where(&c), c.Message)
		for _, d := range c.Details {
			fmt.Fprintf(&b, "        %s\n", d)
		}
	}
	verdict := "ok"
	switch {
	case len(r.Errors) > 0: // exit code 2, before a failure's 1
		verdict = "ERROR"
	case r.Failed():
		verdict = "FAILED"
	}
	fmt.Fprintf(&b, "check %s: %s, %s, %s, %d failed, %s", verdict, english.Count(int64(len(r.Tapes)), "tape"),
		english.Count(int64(r.Sessions), "session"), english.Count(int64(len(r.Cases)), "check"), r.Failures, english.Count(int64(notes), "note"))
	if len(r.Errors) > 0 {
		fmt.Fprintf(&b, ", %s unreadable", english.Count(int64(len(r.Errors)), "tape"))
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, termsafe.String(b.String())) // names from the tapes stay text
	return err
}

// where names the tape and session of a case.
func where(c *Case) string {
	switch {
	case c.Tape == "":
		return "(all tapes)"
	case c.Session == "" && c.Folded == 0:
		return c.Tape
	}
	return fmt.Sprintf("%s [%s]", c.Tape, sessionName(c))
}

// sessionName names the session of a case, or the sessions it covers
// together ("1,234 more sessions": beyond the listing bound).
func sessionName(c *Case) string {
	if c.Folded > 0 {
		return english.Count(int64(c.Folded), "more session")
	}
	return c.Session
}

// WriteJSON writes the result as one indented JSON object.
func WriteJSON(w io.Writer, r *Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("check: write json: %w", err)
	}
	return nil
}

// JUnit XML, the subset GitHub Actions reporters and GitLab read:
// testsuites > testsuite (one per tape, one for the assertions on the
// whole run) > testcase (one per signal and session, one per assertion)
// with a failure, an error (a tape that could not be read) or a
// system-out (a note).
type (
	junitSuites struct {
		XMLName  xml.Name     `xml:"testsuites"`
		Name     string       `xml:"name,attr"`
		Tests    int          `xml:"tests,attr"`
		Failures int          `xml:"failures,attr"`
		Errors   int          `xml:"errors,attr"`
		Suites   []junitSuite `xml:"testsuite"`
	}
	junitSuite struct {
		Name     string      `xml:"name,attr"`
		Tests    int         `xml:"tests,attr"`
		Failures int         `xml:"failures,attr"`
		Errors   int         `xml:"errors,attr"`
		Skipped  int         `xml:"skipped,attr"`
		Time     string      `xml:"time,attr"`
		Cases    []junitCase `xml:"testcase"`
	}
	junitCase struct {
		Name      string        `xml:"name,attr"`
		Classname string        `xml:"classname,attr"`
		File      string        `xml:"file,attr,omitempty"`
		Time      string        `xml:"time,attr"`
		Failure   *junitProblem `xml:"failure,omitempty"`
		Error     *junitProblem `xml:"error,omitempty"`
		SystemOut string        `xml:"system-out,omitempty"`
	}
	junitProblem struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Text    string `xml:",chardata"`
	}
)

// WriteJUnit writes the result as JUnit XML.
func WriteJUnit(w io.Writer, r *Result) error {
	out := junitSuites{Name: "mcptape check"}
	suites := map[string]int{}
	suite := func(name string) *junitSuite {
		i, ok := suites[name]
		if !ok {
			i = len(out.Suites)
			suites[name] = i
			out.Suites = append(out.Suites, junitSuite{Name: name, Time: "0"})
		}
		return &out.Suites[i]
	}
	for _, path := range r.Tapes {
		suite(path)
	}
	for _, e := range r.Errors {
		s := suite(e.Tape)
		s.Cases = append(s.Cases, junitCase{Name: "read tape", Classname: "mcptape.check", File: e.Tape, Time: "0",
			Error: &junitProblem{Message: e.Error, Type: "input"}})
		s.Errors++
	}
	for _, c := range r.Cases {
		s := suite(cmp.Or(c.Tape, "(all tapes)"))
		name := c.Name
		if c.Session != "" || c.Folded > 0 {
			name += " [" + sessionName(&c) + "]"
		}
		jc := junitCase{Name: name, Classname: "mcptape.check." + c.Signal, File: c.Tape, Time: "0"}
		text := strings.Join(c.Details, "\n")
		switch {
		case c.Failed():
			jc.Failure = &junitProblem{Message: c.Message, Type: c.Signal, Text: text}
			s.Failures++
		case c.Fired || text != "":
			note := "note: "
			if !c.Selected {
				note = "note (not in --fail-on): "
			}
			jc.SystemOut = strings.TrimSpace(note + c.Message + "\n" + text)
		}
		s.Cases = append(s.Cases, jc)
	}
	for i := range out.Suites {
		s := &out.Suites[i]
		s.Tests = len(s.Cases)
		out.Tests += s.Tests
		out.Failures += s.Failures
		out.Errors += s.Errors
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("check: write junit: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}
