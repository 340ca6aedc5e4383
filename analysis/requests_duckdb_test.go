package analysis

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/internal/refserver"
	"github.com/mcptape/mcptape/internal/tapetest"
	"github.com/mcptape/mcptape/tape"
)

// sqlQueryRE finds the queries of docs/sql.md: a "<!-- query: NAME -->"
// line, then a fenced sql block.
var sqlQueryRE = regexp.MustCompile("(?s)<!-- query: (\\S+) -->\n```sql\n(.*?)```")

// docQuery is one query of docs/sql.md.
type docQuery struct {
	Name string `json:"name"`
	SQL  string `json:"sql"`
}

// docQueries reads the queries of docs/sql.md.
func docQueries(t *testing.T) []docQuery {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(peertest.RepoRoot(t), "docs", "sql.md"))
	if err != nil {
		t.Fatal(err)
	}
	var qs []docQuery
	for _, m := range sqlQueryRE.FindAllStringSubmatch(string(doc), -1) {
		qs = append(qs, docQuery{Name: m[1], SQL: m[2]})
	}
	return qs
}

// runQueries runs qs with DuckDB in dir and returns each query's rows.
func runQueries(t *testing.T, ctx context.Context, duck *peertest.DuckDBPeers, dir string, qs []docQuery) map[string][]map[string]any {
	t.Helper()
	file := filepath.Join(t.TempDir(), "queries.json")
	data, err := json.Marshal(qs)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := peertest.Command(ctx, append(slices.Clone(duck.Query), file), nil)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("duckdb: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("duckdb: %v", err)
	}
	var res map[string][]map[string]any
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("duckdb output: %v\n%s", err, out)
	}
	return res
}

// num reads a number DuckDB printed (big integers come as strings); -1
// for null.
func num(t *testing.T, v any) int64 {
	t.Helper()
	switch v := v.(type) {
	case nil:
		return -1
	case float64:
		return int64(v)
	case string:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("number %q: %v", v, err)
		}
		return n
	}
	t.Fatalf("number %v (%T)", v, v)
	return 0
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// opKeyOf is a method and tool ("" for methods other than tools/call).
type mtKey struct{ method, tool string }

// opFigures are what inspect says of the answered operations of one key.
type opFigures struct {
	calls, errors, max int64
	lat                *Latency
}

// answeredByKey sums the answered operations of reports by method and tool.
func answeredByKey(reps ...*Report) map[mtKey]*opFigures {
	out := map[mtKey]*opFigures{}
	add := func(k mtKey, calls, errs, mx int64, lat Latency) {
		f := out[k]
		if f == nil {
			f = &opFigures{}
			out[k] = f
		}
		f.calls += calls
		f.errors += errs
		f.max = max(f.max, mx)
		if len(reps) == 1 {
			f.lat = &lat
		}
	}
	for _, rep := range reps {
		for _, l := range rep.Latency {
			if l.Method != mToolsCall {
				add(mtKey{l.Method, ""}, l.Count, l.Errors, l.MaxNS, l.Latency)
			}
		}
		for _, ts := range rep.Tools {
			add(mtKey{mToolsCall, ts.Name}, ts.Calls, ts.Errors+ts.ToolErrors, ts.MaxNS, ts.Latency)
		}
	}
	return out
}

// shiftTape copies the tape src to dst with every time moved by d.
func shiftTape(t *testing.T, src, dst string, d time.Duration) {
	t.Helper()
	r, err := tape.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	h := *r.Header()
	h.Time += int64(d)
	w, err := tape.Create(dst, h)
	if err != nil {
		t.Fatal(err)
	}
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		rec.Time += int64(d)
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// refserverTools lists the reference server's tools.
func refserverTools(t *testing.T, ctx context.Context) []string {
	t.Helper()
	srv, err := refserver.New()
	if err != nil {
		t.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// TestDuckDBQueries records three tapes through mcptape record with the
// reference server, exports their requests table, runs every query of
// docs/sql.md with the pinned DuckDB on the tapes and the export, and
// checks the numbers against mcptape inspect --format json: counts
// exactly, percentiles within the HDR histograms' precision.
func TestDuckDBQueries(t *testing.T) {
	if testing.Short() {
		t.Skip("DuckDB: not in -short mode")
	}
	duck := peertest.DuckDB(t)
	qs := docQueries(t)
	if len(qs) < 6 {
		t.Fatalf("docs/sql.md: %d queries found, want at least 6", len(qs))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	bin := mcptapeBin(t)
	fleet, one := t.TempDir(), t.TempDir()
	for _, d := range []string{filepath.Join(fleet, "tapes"), filepath.Join(fleet, "requests"), filepath.Join(one, "tapes"), filepath.Join(one, "requests")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tapeA := filepath.Join(fleet, "tapes", "a.jsonl.zst")
	tapeB := filepath.Join(fleet, "tapes", "b.jsonl.zst")
	tapeC := filepath.Join(fleet, "tapes", "c.jsonl.zst") // the day before
	recordRefserver(t, ctx, bin, tapeA)                   // MRTR, progress, both errors, a cancel
	goClient(t, ctx, bin, tapeB, "2025-06-18", []string{bin, "serve"}, func(ctx context.Context, cs *mcp.ClientSession, cl *canceller) {
		for i := range 20 { // enough calls for percentiles that differ
			call(t, ctx, cs, "echo", map[string]any{"message": strconv.Itoa(i)}, nil)
		}
		for i := range 5 {
			call(t, ctx, cs, "sleep", map[string]any{"ms": 5 + 5*i, "steps": 2}, "p-b"+strconv.Itoa(i))
		}
		call(t, ctx, cs, "fail", map[string]any{"mode": "rpc"}, nil)
		cl.cancelAfterProgress(t, ctx, cs, "sleep", map[string]any{"ms": 5000, "steps": 50})
		call(t, ctx, cs, "echo", map[string]any{"message": "after the cancel"}, nil) // the cancel goes out before the close
	})
	dayBefore := filepath.Join(t.TempDir(), "c.jsonl.zst")
	goClient(t, ctx, bin, dayBefore, "", []string{bin, "serve"}, func(ctx context.Context, cs *mcp.ClientSession, _ *canceller) {
		call(t, ctx, cs, "echo", map[string]any{"message": "yesterday"}, nil)
		call(t, ctx, cs, "add", map[string]any{"a": 1, "b": 2}, nil)
		call(t, ctx, cs, "fail", map[string]any{"mode": "tool"}, nil)
	})
	shiftTape(t, dayBefore, tapeC, -24*time.Hour)
	data, err := os.ReadFile(tapeB)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(one, "tapes", "b.jsonl.zst"), data, 0o600); err != nil {
		t.Fatal(err)
	}

	run := func(dir string, args ...string) []byte {
		t.Helper()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("mcptape %v: %v", args, err)
		}
		return out
	}
	run(fleet, "export", "tapes/a.jsonl.zst", "tapes/b.jsonl.zst", "--format", "requests", "-o", "requests/today.parquet")
	run(fleet, "export", "tapes/c.jsonl.zst", "--format", "requests", "-o", "requests/yesterday.parquet")
	run(one, "export", "tapes/b.jsonl.zst", "--format", "requests", "-o", "requests/b.parquet")
	reps := map[string]*Report{}
	for _, name := range []string{"a", "b", "c"} {
		rep := decodeReport(t, run(fleet, "inspect", "--format", "json", "tapes/"+name+".jsonl.zst"))
		if rep.Tape.Warning != "" {
			t.Fatalf("%s: %s", name, rep.Tape.Warning)
		}
		reps[name] = rep
	}
	a, b, c := reps["a"], reps["b"], reps["c"]
	if a.Operations.MRTR.Operations == 0 || a.Progress.Streams == 0 || a.Cancellations.Count+b.Cancellations.Count == 0 || len(a.Errors) == 0 {
		t.Fatalf("the session mix lacks MRTR, progress, cancels or errors: %+v %+v", a.Operations, a.Cancellations)
	}

	res := runQueries(t, ctx, duck, fleet, qs)
	for _, q := range qs {
		if _, ok := res[q.Name]; !ok {
			t.Errorf("query %s: no result", q.Name)
		}
	}
	t.Run("latency-by-hour", func(t *testing.T) {
		want := answeredByKey(a, b, c)
		got := map[mtKey]*opFigures{}
		for _, row := range res["latency-by-hour"] {
			k := mtKey{str(row["method"]), str(row["tool"])}
			if got[k] == nil {
				got[k] = &opFigures{}
			}
			got[k].calls += num(t, row["calls"])
			got[k].max = max(got[k].max, num(t, row["max_ns"]))
		}
		checkFigures(t, got, want, false)
		checkPercentiles(t, runQueries(t, ctx, duck, one, qs)["latency-by-hour"], answeredByKey(b))
	})
	t.Run("errors-by-hour", func(t *testing.T) {
		want, got := map[int64]int64{}, map[int64]int64{}
		for _, rep := range []*Report{a, b, c} {
			for _, e := range rep.Errors {
				want[e.Code] += e.Count
			}
		}
		for _, row := range res["errors-by-hour"] {
			got[num(t, row["code"])] += num(t, row["errors"])
		}
		if !maps.Equal(got, want) || len(want) == 0 {
			t.Errorf("errors by code %v, inspect %v", got, want)
		}
	})
	t.Run("slowest-sessions", func(t *testing.T) {
		rows := res["slowest-sessions"]
		if len(rows) != 3 {
			t.Fatalf("%d sessions, want 3: %v", len(rows), rows)
		}
		for i, row := range rows {
			rep := reps[filepath.Base(str(row["tape"]))[:1]]
			var answered, mx int64
			for _, l := range rep.Latency {
				answered += l.Count
				mx = max(mx, l.MaxNS)
			}
			ops := answered + rep.Unanswered.Count + rep.Unanswered.Cancelled + rep.Operations.MRTR.Abandoned + rep.Operations.Tasks.Unfinished
			if num(t, row["answered"]) != answered || num(t, row["operations"]) != ops || num(t, row["max_ns"]) != mx {
				t.Errorf("row %v: inspect: %d answered of %d operations, max %d ns", row, answered, ops, mx)
			}
			if i > 0 && num(t, rows[i-1]["max_ns"]) < num(t, row["max_ns"]) {
				t.Errorf("not slowest first: %v", rows)
			}
		}
	})
	t.Run("tools-never-called", func(t *testing.T) {
		called := map[string]bool{}
		for _, rep := range []*Report{a, b, c} {
			for _, ts := range rep.Tools {
				called[ts.Name] = true
			}
		}
		var want, got []string
		for _, name := range refserverTools(t, ctx) {
			if !called[name] {
				want = append(want, name)
			}
		}
		for _, row := range res["tools-never-called"] {
			if str(row["target"]) != "mcptape serve" {
				t.Errorf("target %v", row)
			}
			got = append(got, str(row["tool"]))
		}
		slices.Sort(want)
		if !slices.Equal(got, want) || len(want) == 0 {
			t.Errorf("never called %v, want %v", got, want)
		}
	})
	t.Run("clients", func(t *testing.T) {
		want := map[string]int64{}
		for _, rep := range []*Report{a, b, c} {
			for _, s := range rep.Sessions {
				if s.Client != nil {
					want[s.Client.Name+" "+s.Client.Version]++
				}
			}
		}
		got := map[string]int64{}
		for _, row := range res["clients"] {
			got[str(row["name"])+" "+str(row["version"])] += num(t, row["sessions"])
		}
		if !maps.Equal(got, want) || want["mcptape-fixture 1.0.0"] != 3 {
			t.Errorf("clients %v, inspect %v", got, want)
		}
	})
	t.Run("diff-days", func(t *testing.T) {
		before, after := answeredByKey(c), answeredByKey(a, b)
		gotBefore, gotAfter := map[mtKey]*opFigures{}, map[mtKey]*opFigures{}
		for _, row := range res["diff-days"] {
			k := mtKey{str(row["method"]), str(row["tool"])}
			if n := num(t, row["calls_before"]); n > 0 {
				gotBefore[k] = &opFigures{calls: n, errors: num(t, row["errors_before"])}
			}
			if n := num(t, row["calls_after"]); n > 0 {
				gotAfter[k] = &opFigures{calls: n, errors: num(t, row["errors_after"])}
			}
		}
		checkFigures(t, gotBefore, before, true)
		checkFigures(t, gotAfter, after, true)
	})
}

// decodeReport reads the JSON report of inspect, but for its problems and
// violations (whose severities are written as names only).
func decodeReport(t *testing.T, data []byte) *Report {
	t.Helper()
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		t.Fatal(err)
	}
	delete(fields, "problems")
	delete(fields, "violations")
	data, err := json.Marshal(fields)
	if err != nil {
		t.Fatal(err)
	}
	var rep Report
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	return &rep
}

// checkFigures compares call counts (and maxima, or errors) by key.
func checkFigures(t *testing.T, got, want map[mtKey]*opFigures, errs bool) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%d methods and tools, inspect %d", len(got), len(want))
	}
	for k, w := range want {
		g := got[k]
		switch {
		case g == nil:
			t.Errorf("%v: missing, inspect %+v", k, *w)
		case g.calls != w.calls:
			t.Errorf("%v: %d calls, inspect %d", k, g.calls, w.calls)
		case errs && g.errors != w.errors:
			t.Errorf("%v: %d errors, inspect %d", k, g.errors, w.errors)
		case !errs && g.max != w.max:
			t.Errorf("%v: max %d ns, inspect %d", k, g.max, w.max)
		}
	}
}

// checkPercentiles compares the percentiles of the latency query on one
// tape with inspect's, where the two pick the same rank: DuckDB's
// quantile_disc takes the value of rank ceil(nq) (nearest rank, from 1),
// the HDR histogram the one of rank round(nq); the HDR value is that
// value's bucket, within 1% of it (two significant digits).
func checkPercentiles(t *testing.T, rows []map[string]any, want map[mtKey]*opFigures) {
	t.Helper()
	hours := map[mtKey]int{}
	for _, row := range rows {
		hours[mtKey{str(row["method"]), str(row["tool"])}]++
	}
	compared := 0 // percentiles of more than two calls compared
	for _, row := range rows {
		k := mtKey{str(row["method"]), str(row["tool"])}
		w := want[k]
		if w == nil || hours[k] > 1 { // recorded across an hour boundary
			continue
		}
		n := num(t, row["calls"])
		for _, p := range []struct {
			col string
			q   float64
			hdr int64
		}{{"p50_ns", 0.50, w.lat.P50NS}, {"p90_ns", 0.90, w.lat.P90NS}, {"p99_ns", 0.99, w.lat.P99NS}} {
			if max(int64(math.Ceil(float64(n)*p.q)), 1) != max(int64(float64(n)*p.q+0.5), 1) {
				continue // different ranks: not comparable
			}
			got := num(t, row[p.col])
			if math.Abs(float64(p.hdr-got)) > float64(got)*0.01+1 {
				t.Errorf("%v %s: DuckDB %d ns, inspect %d ns: beyond HDR precision", k, p.col, got, p.hdr)
			}
			if n > 2 {
				compared++
			}
		}
	}
	if compared < 2 {
		t.Errorf("no percentile compared: %v", rows)
	}
}

// TestDuckDBQueriesTextFrames runs the raw-tape queries of docs/sql.md on
// a tape of a stdio server that ends its lines with CRLF, as one on
// Windows may: the tape keeps those messages in "text", not "frame"
// (their bytes are not a bare JSON value), and the queries read them from
// there. They counted none of the server's messages: no error, no tool
// listed.
func TestDuckDBQueriesTextFrames(t *testing.T) {
	duck, ctx, dir := duckDir(t)
	if err := os.Mkdir(filepath.Join(dir, "tapes"), 0o755); err != nil {
		t.Fatal(err)
	}
	recs := tapetest.Messages("1", time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC),
		`> {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"crlf-client","version":"3"}}}`,
		`< {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}},{"name":"b","inputSchema":{"type":"object"}}]}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a","arguments":{}}}`,
		`< {"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"boom"}}`,
	)
	for _, r := range recs {
		if r.Dir == tape.ServerToClient {
			r.Frame = append(r.Frame, '\r')
		}
	}
	path := tapetest.Write(t, filepath.Join(dir, "tapes", "crlf.jsonl.zst"), tape.Header{Format: 1, Transport: "stdio", Target: "srv"}, recs)
	rep, err := Inspect(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	var errs int64
	for _, e := range rep.Errors {
		errs += e.Count
	}
	if errs != 1 {
		t.Fatalf("inspect: %d errors, want 1", errs)
	}
	var qs []docQuery
	for _, q := range docQueries(t) {
		if q.Name == "errors-by-hour" || q.Name == "clients" || q.Name == "tools-never-called" {
			qs = append(qs, q)
		}
	}
	if len(qs) != 3 {
		t.Fatalf("docs/sql.md: %d of the raw-tape queries found, want 3", len(qs))
	}
	qs = append(qs, docQuery{Name: "text", SQL: `SELECT count(*) AS n FROM read_json('tapes/*.jsonl.zst', format = 'newline_delimited',
		compression = 'zstd', columns = {text: 'VARCHAR'}) WHERE text IS NOT NULL`})
	res := runQueries(t, ctx, duck, dir, qs)
	if r := res["text"]; len(r) != 1 || num(t, r[0]["n"]) != 3 {
		t.Fatalf("records with text: %v, want the server's 3", r)
	}
	var got int64
	for _, r := range res["errors-by-hour"] {
		got += num(t, r["errors"])
	}
	if got != errs {
		t.Errorf("errors-by-hour: %d errors, inspect %d (%v)", got, errs, res["errors-by-hour"])
	}
	if r := res["clients"]; len(r) != 1 || str(r[0]["name"]) != "crlf-client" || num(t, r[0]["sessions"]) != 1 {
		t.Errorf("clients: %v, want crlf-client in 1 session", r)
	}
	if r := res["tools-never-called"]; len(r) != 1 || str(r[0]["tool"]) != "b" {
		t.Errorf("tools-never-called: %v, want b", r)
	}
}

// TestDuckDBReadsRequestsCSV reads a CSV export with the query of
// docs/requests-format.md and finds the rows DuckDB reads from the
// Parquet export of the same tape. Left to guess, DuckDB read the
// client_version 1.10 as the number 1.1, the session "1" and the ids as
// numbers and the protocol version as a date.
func TestDuckDBReadsRequestsCSV(t *testing.T) {
	duck, ctx, dir := duckDir(t)
	doc, err := os.ReadFile(filepath.Join(peertest.RepoRoot(t), "docs", "requests-format.md"))
	if err != nil {
		t.Fatal(err)
	}
	var csvQuery string
	for _, m := range sqlQueryRE.FindAllStringSubmatch(string(doc), -1) {
		if m[1] == "requests-csv" {
			csvQuery = m[2]
		}
	}
	if csvQuery == "" {
		t.Fatal("docs/requests-format.md: no requests-csv query")
	}
	if err := os.Mkdir(filepath.Join(dir, "requests"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := tapetest.Write(t, filepath.Join(dir, "t.jsonl.zst"), tape.Header{Format: 1, Transport: "stdio"},
		tapetest.Messages("1", time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC),
			`> {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"7","version":"1.10"}}}`,
			`< {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`,
			`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"2","arguments":{}}}`,
			`< {"jsonrpc":"2.0","id":1,"result":{"content":[]}}`,
			`> {"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"2","arguments":{}}}`,
			`< {"jsonrpc":"2.0","id":20,"error":{"code":-32000,"message":"boom"}}`,
		))
	for _, name := range []string{"r.csv", "r.parquet"} {
		exportFile(t, ctx, path, filepath.Join(dir, "requests", name))
	}
	res := runQueries(t, ctx, duck, dir, []docQuery{{Name: "csv", SQL: csvQuery},
		{Name: "parquet", SQL: "SELECT * FROM 'requests/*.parquet'"}})
	csvRows, pqRows := res["csv"], res["parquet"]
	if len(csvRows) != 3 || len(pqRows) != 3 {
		t.Fatalf("csv %d rows, parquet %d, want 3", len(csvRows), len(pqRows))
	}
	for i, p := range pqRows {
		// DuckDB prints a BIGINT as a string, an INTEGER as a number: the
		// values are compared as text.
		for k, v := range p {
			if c, ok := csvRows[i][k]; !ok || fmt.Sprint(c) != fmt.Sprint(v) {
				t.Errorf("row %d, %s: csv %#v, parquet %#v", i, k, c, v)
			}
		}
	}
	if v := pqRows[0]["client_version"]; v != "1.10" {
		t.Errorf("parquet client_version %v, want 1.10", v)
	}
}

// duckDir skips the test in -short mode; else it returns the pinned
// DuckDB, the test's context and a new directory to query in.
func duckDir(t *testing.T) (*peertest.DuckDBPeers, context.Context, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("DuckDB: not in -short mode")
	}
	duck := peertest.DuckDB(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return duck, ctx, t.TempDir()
}

// exportFile writes the requests of the tape at path to file, in the
// format its extension names.
func exportFile(t *testing.T, ctx context.Context, path, file string) {
	t.Helper()
	f, err := RequestsFormatFor(file)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := ExportRequests(ctx, []string{path}, &buf, f); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}
