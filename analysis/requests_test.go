package analysis

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// checkRowsMatchReport checks that the rows of one tape add up to what
// Inspect reports of it.
func checkRowsMatchReport(t *testing.T, rows []parquetRow, rep *Report) {
	t.Helper()
	answered := map[[2]string]int64{}
	tools := map[string]int64{}
	outcomes := map[string]int64{}
	var rounds, mrtrOps, toolErrs int64
	for _, r := range rows {
		if r.SchemaVersion != RequestsSchemaVersion {
			t.Errorf("row %+v: schema version %d", r, r.SchemaVersion)
		}
		outcomes[r.Outcome]++
		if r.LatencyNS != nil {
			answered[[2]string{r.Direction, r.Method}]++
			if r.Method == mToolsCall && r.Tool != nil {
				tools[*r.Tool]++
			}
			if r.MRTRRounds > 0 {
				mrtrOps++
			}
		}
		rounds += r.MRTRRounds
		if r.Outcome == OutcomeToolError {
			toolErrs++
		}
		if (r.Outcome == OutcomeError) != (r.ErrorCode != nil) {
			t.Errorf("row %+v: error code and outcome disagree", r)
		}
	}
	var wantAnswered int64
	for _, l := range rep.Latency {
		wantAnswered += l.Count
		if got := answered[[2]string{l.Dir, l.Method}]; got != l.Count {
			t.Errorf("%s %s: %d answered rows, inspect counts %d", l.Dir, l.Method, got, l.Count)
		}
	}
	if got := outcomes[OutcomeOK] + outcomes[OutcomeError] + outcomes[OutcomeToolError]; got != wantAnswered {
		t.Errorf("%d answered rows, inspect %d", got, wantAnswered)
	}
	var wantToolErrs int64
	for _, ts := range rep.Tools {
		wantToolErrs += ts.ToolErrors
		if tools[ts.Name] != ts.Calls {
			t.Errorf("tool %s: %d rows, inspect %d calls", ts.Name, tools[ts.Name], ts.Calls)
		}
	}
	for _, c := range []struct {
		what      string
		got, want int64
	}{
		{"unanswered", outcomes[OutcomeUnanswered], rep.Unanswered.Count},
		{"cancelled", outcomes[OutcomeCancelled], rep.Unanswered.Cancelled},
		{"abandoned", outcomes[OutcomeAbandoned], rep.Operations.MRTR.Abandoned},
		{"unfinished", outcomes[OutcomeUnfinished], rep.Operations.Tasks.Unfinished},
		{"refused", outcomes[OutcomeRefused], rep.Refused.Count},
		{"cut by shutdown", outcomes[OutcomeCutByShutdown], rep.Unanswered.CutByShutdown},
		{"tool errors", toolErrs, wantToolErrs},
		{"MRTR operations", mrtrOps, rep.Operations.MRTR.Operations},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d rows, inspect %d", c.what, c.got, c.want)
		}
	}
	if rep.Operations.MRTR.Abandoned == 0 && rounds != rep.Operations.MRTR.Rounds {
		t.Errorf("MRTR rounds: %d, inspect %d", rounds, rep.Operations.MRTR.Rounds)
	}
}

// checkExport exports the requests of the tape at path and checks them
// against rep, Inspect's report of the tape.
func checkExport(t *testing.T, ctx context.Context, path string, rep *Report) {
	t.Helper()
	var buf bytes.Buffer
	if _, err := ExportRequests(ctx, []string{path}, &buf, RequestsNDJSON); err != nil {
		t.Fatal(err)
	}
	var rows []parquetRow
	for dec := json.NewDecoder(&buf); dec.More(); {
		var r parquetRow
		if err := dec.Decode(&r); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
	}
	checkRowsMatchReport(t, rows, rep)
}

// TestExportRequestsMatchesInspect exports the fixture tapes' requests in
// every format and checks each against Inspect's report of the tape.
func TestExportRequestsMatchesInspect(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"operations", "operations-http", "gosdk-refserver", "everything-stdio", "everything-http", "violations", "violations-http", "cut"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("..", "testdata", "analysis", name+".jsonl.zst")
			rep, err := Inspect(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			var nd, cs, pq bytes.Buffer
			st, err := ExportRequests(ctx, []string{path}, &nd, RequestsNDJSON)
			if err != nil {
				t.Fatal(err)
			}
			var rows []parquetRow
			dec := json.NewDecoder(&nd)
			for dec.More() {
				var r parquetRow
				if err := dec.Decode(&r); err != nil {
					t.Fatal(err)
				}
				rows = append(rows, r)
			}
			if int64(len(rows)) != st.Rows || st.Messages != rep.Tape.Messages {
				t.Errorf("stats %+v, %d rows decoded, inspect %d messages", st, len(rows), rep.Tape.Messages)
			}
			checkRowsMatchReport(t, rows, rep)
			for _, r := range rows {
				// The first chunk is the first message back on the request's
				// HTTP exchange: at the latest its answer; none over stdio.
				// (The stream-copy case's answer comes on an event stream,
				// another exchange, as in the LangGraph dialect: none.)
				http := r.Transport == "http" && r.Direction == "c2s" && r.LatencyNS != nil && r.MRTRRounds == 0 && !r.Task &&
					!strings.HasPrefix(r.Session, RuleStreamCopy+"/")
				switch {
				case r.Transport == "stdio" && r.FirstChunkNS != nil,
					http && (r.FirstChunkNS == nil || *r.FirstChunkNS > *r.LatencyNS):
					t.Errorf("row %+v: first chunk %v", r, r.FirstChunkNS)
				}
			}

			if _, err := ExportRequests(ctx, []string{path}, &cs, RequestsCSV); err != nil {
				t.Fatal(err)
			}
			recs, err := csv.NewReader(&cs).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != len(rows)+1 || len(recs[0]) != len(requestColumns) {
				t.Errorf("csv: %d records of %d fields, want %d of %d", len(recs), len(recs[0]), len(rows)+1, len(requestColumns))
			}
			if _, err := ExportRequests(ctx, []string{path}, &pq, RequestsParquet); err != nil {
				t.Fatal(err)
			}
			prows, err := parquet.Read[parquetRow](bytes.NewReader(pq.Bytes()), int64(pq.Len()))
			if err != nil {
				t.Fatal(err)
			}
			if len(prows) != len(rows) {
				t.Fatalf("parquet: %d rows, want %d", len(prows), len(rows))
			}
			for i, p := range prows {
				if !reflect.DeepEqual(p, rows[i]) {
					t.Errorf("parquet row %d %+v, ndjson %+v", i, p, rows[i])
				}
			}
		})
	}
}

func TestRequestsFormatFor(t *testing.T) {
	for _, c := range []struct {
		name string
		want RequestsFormat // "" for an error
	}{
		{"r.csv", RequestsCSV}, {"r.CSV", RequestsCSV}, {"a/r.parquet", RequestsParquet},
		{"r.ndjson", RequestsNDJSON}, {"r.jsonl", RequestsNDJSON}, {"r.json", RequestsNDJSON}, {"-", RequestsNDJSON},
		{"r.xlsx", ""}, {"requests", ""},
	} {
		got, err := RequestsFormatFor(c.name)
		if got != c.want || (c.want == "") != (err != nil) {
			t.Errorf("%s: %q %v, want %q", c.name, got, err, c.want)
		}
	}
}

// TestRequestsSchemaVersionDocumented: docs/requests-format.md documents
// the current RequestsSchemaVersion (its title, and the last entry of its
// version list) and every outcome: in the outcome column and in the
// version that introduced it. A new outcome is a new version (a query
// listing the outcomes would miss it): documenting it under a version
// the constant does not reach fails here, and so does an outcome that no
// version names (cut_by_shutdown came without a bump).
func TestRequestsSchemaVersionDocumented(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "docs", "requests-format.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	if want := fmt.Sprintf("# The requests table (schema version %d)", RequestsSchemaVersion); !strings.HasPrefix(doc, want) {
		t.Errorf("the title is not %q", want)
	}
	_, versioning, ok := strings.Cut(doc, "## Versioning")
	if !ok {
		t.Fatal("no Versioning section")
	}
	versions := map[int]string{} // version: its entry
	last := 0
	for _, entry := range strings.Split(versioning, "\n- `")[1:] {
		var v int
		if _, err := fmt.Sscanf(entry, "%d`:", &v); err != nil {
			t.Fatalf("version entry %q: %v", entry, err)
		}
		versions[v], last = entry, max(last, v)
	}
	if last != RequestsSchemaVersion || len(versions) != last {
		t.Errorf("versions %d..%d documented (%d entries), want 1..%d", 1, last, len(versions), RequestsSchemaVersion)
	}
	column := doc[strings.Index(doc, "| `outcome` |"):]
	column = column[:strings.Index(column, "\n")]
	for outcome := range outcomes {
		q := "`" + outcome + "`"
		if !strings.Contains(column, q) {
			t.Errorf("outcome %s: not in the outcome column", q)
		}
		in := 0
		for v, entry := range versions {
			if strings.Contains(entry, q) && (in == 0 || v < in) {
				in = v
			}
		}
		if in == 0 {
			t.Errorf("outcome %s: no version introduces it", q)
		}
	}
}
