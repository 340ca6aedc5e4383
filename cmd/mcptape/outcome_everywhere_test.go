package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// outcomeEverywhere checks that every output of the tape tp that names how
// a request ended says the same of its one request of method: inspect's
// JSON (the count under unanswered's key field, 1, no request never
// answered, and one session, closed by closedBy), check (exit code checkCode), the requests table (outcome)
// and the OTLP export (the span's outcome; an error status exactly when
// failed).
func outcomeEverywhere(t *testing.T, tp, closedBy, method, field, outcome string, checkCode int, failed bool) {
	t.Helper()
	code, out, stderr := runCLI(t, "", "inspect", "--format", "json", tp)
	if code != 0 {
		t.Fatalf("inspect: exit %d: %s", code, stderr)
	}
	var rep struct {
		Unanswered map[string]any `json:"unanswered"`
		Sessions   []struct {
			ClosedBy string `json:"closed_by"`
		} `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if n, _ := rep.Unanswered["count"].(float64); n != 0 || rep.Unanswered[field] != float64(1) || len(rep.Sessions) != 1 || rep.Sessions[0].ClosedBy != closedBy {
		t.Fatalf("inspect: unanswered %v, sessions %+v, want %s 1, no count, one session closed by %s:\n%s", rep.Unanswered, rep.Sessions, field, closedBy, out)
	}
	if code, out, _ := runCLI(t, "", "check", tp); code != checkCode {
		t.Errorf("check: exit %d, want %d:\n%s", code, checkCode, out)
	}
	code, out, stderr = runCLI(t, "", "export", "--format", "requests", tp)
	if code != 0 {
		t.Fatalf("export requests: exit %d: %s", code, stderr)
	}
	var outcomes []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var row struct {
			Method  string `json:"method"`
			Outcome string `json:"outcome"`
		}
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatal(err)
		}
		outcomes = append(outcomes, row.Method+" "+row.Outcome)
	}
	if !slices.Contains(outcomes, method+" "+outcome) {
		t.Errorf("requests table outcomes %q, want %s %s", outcomes, method, outcome)
	}
	code, out, stderr = runCLI(t, "", "export", "--format", "otlp", tp)
	if code != 0 || !strings.Contains(out, `"`+outcome+`"`) || strings.Contains(out, `"error.type"`) != failed {
		t.Errorf("export otlp: exit %d, want the span's outcome %s, an error status %v: %s\n%s", code, outcome, failed, stderr, out)
	}
}
