package analysis

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/parquet-go/parquet-go"

	"github.com/mcptape/mcptape/internal/tapetest"
	"github.com/mcptape/mcptape/tape"
)

// invalidUTF8Tape writes a stdio tape whose frames hold strings that are
// not UTF-8 (the tape keeps such frames as base64): the client's name, a
// tool name, a string id, a resource URI and a method.
func invalidUTF8Tape(t *testing.T, dir string) string {
	t.Helper()
	start := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	recs := tapetest.Messages("1", start,
		"> "+`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"cli`+"\xff"+`","version":"1`+"\xc3"+`"}}}`,
		"< "+`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`,
		"> "+`{"jsonrpc":"2.0","id":"a`+"\xfe"+`","method":"tools/call","params":{"name":"bin`+"\xff\xfe"+`","arguments":{}}}`,
		"< "+`{"jsonrpc":"2.0","id":"a`+"\xfe"+`","result":{"content":[]}}`,
		"> "+`{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"file:///`+"\xe2\x82"+`"}}`,
		"< "+`{"jsonrpc":"2.0","id":2,"result":{"contents":[]}}`,
		"> "+`{"jsonrpc":"2.0","id":3,"method":"x/`+"\x80"+`","params":{}}`,
		"< "+`{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"no"}}`,
	)
	return tapetest.Write(t, filepath.Join(dir, "bad-utf8.jsonl.zst"), tape.Header{Format: 1, Transport: "stdio"}, recs)
}

// TestExportRequestsInvalidUTF8: strings of the tape that are not UTF-8
// are written as valid UTF-8, each bad byte a U+FFFD, alike in the three
// formats: NDJSON always did so, and a Parquet or CSV file holding one
// such string could not be read at all (DuckDB refuses the whole file).
func TestExportRequestsInvalidUTF8(t *testing.T) {
	path := invalidUTF8Tape(t, t.TempDir())
	export := func(f RequestsFormat) []byte { return exportRequestsBytes(t, path, f) }
	var rows []parquetRow
	for dec := json.NewDecoder(bytes.NewReader(export(RequestsNDJSON))); dec.More(); {
		var r parquetRow
		if err := dec.Decode(&r); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
	}
	if len(rows) != 4 {
		t.Fatalf("%d rows, want 4", len(rows))
	}
	if r := rows[1]; sv(r.Tool) != "bin\uFFFD\uFFFD" || sv(r.ID) != "\"a\uFFFD\"" || sv(r.ClientName) != "cli\uFFFD" || sv(r.ClientVersion) != "1\uFFFD" {
		t.Errorf("ndjson row %+v", r)
	}

	pq := export(RequestsParquet)
	prows, err := parquet.Read[parquetRow](bytes.NewReader(pq), int64(len(pq)))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(prows, rows) {
		t.Errorf("parquet rows\n%+v\nndjson rows\n%+v", prows, rows)
	}

	recs, err := csv.NewReader(bytes.NewReader(export(RequestsCSV))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for i, rec := range recs {
		for j, v := range rec {
			if !utf8.ValidString(v) {
				t.Errorf("csv record %d, column %s: %q is not UTF-8", i, requestColumns[j], v)
			}
		}
	}
	if len(recs) == 5 {
		col := map[string]int{}
		for j, c := range recs[0] {
			col[c] = j
		}
		for i, r := range rows {
			rec := recs[i+1]
			for c, want := range map[string]string{"tool": sv(r.Tool), "id": sv(r.ID), "target": sv(r.Target), "method": r.Method, "client_name": sv(r.ClientName), "client_version": sv(r.ClientVersion)} {
				if got := rec[col[c]]; got != want {
					t.Errorf("csv row %d %s: %q, ndjson %q", i, c, got, want)
				}
			}
		}
	} else {
		t.Errorf("csv: %d records, want 5", len(recs))
	}
}

// exportRequestsBytes returns the requests export of the tape at path in
// format f.
func exportRequestsBytes(t *testing.T, path string, f RequestsFormat) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := ExportRequests(context.Background(), []string{path}, &buf, f); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestDuckDBReadsInvalidUTF8Export reads the Parquet and CSV requests of
// a tape with strings that are not UTF-8 with the pinned DuckDB, which
// refused both files when they held those bytes as they were.
func TestDuckDBReadsInvalidUTF8Export(t *testing.T) {
	duck, ctx, dir := duckDir(t)
	path := invalidUTF8Tape(t, dir)
	for _, name := range []string{"r.parquet", "r.csv"} {
		exportFile(t, ctx, path, filepath.Join(dir, name))
	}
	res := runQueries(t, ctx, duck, dir, []docQuery{
		{Name: "parquet", SQL: "SELECT tool FROM 'r.parquet' WHERE method = 'tools/call'"},
		{Name: "csv", SQL: "SELECT tool FROM read_csv('r.csv', all_varchar = true) WHERE method = 'tools/call'"},
	})
	for _, q := range []string{"parquet", "csv"} {
		rows := res[q]
		if len(rows) != 1 || str(rows[0]["tool"]) != "bin\uFFFD\uFFFD" {
			t.Errorf("%s: %v, want one tool bin\uFFFD\uFFFD", q, rows)
		}
	}
}

// sv returns the string p points at, "" for nil (null).
func sv(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// TestExportRequestsWholeClientName: the requests export keeps the
// client's name and version whole in NDJSON, CSV and Parquet, up to
// maxPeerText characters (a longer one cut there, ending in "…", as
// docs/requests-format.md says); the terminal report clips them with an
// ellipsis. (Every export cut the name at 80 characters and the version
// at 40, undocumented.)
func TestExportRequestsWholeClientName(t *testing.T) {
	ctx := context.Background()
	long := strings.Repeat("ä", 150) + "\tend" // 154 characters, a tab kept
	version := strings.Repeat("9", 60)
	huge := strings.Repeat("x", maxPeerText+500)
	for _, tc := range []struct{ name, version, wantName, wantVersion string }{
		{long, version, long, version},
		{huge, "1", strings.Repeat("x", maxPeerText-1) + "…", "1"},
	} {
		start := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
		info, _ := json.Marshal(map[string]string{"name": tc.name, "version": tc.version})
		path := tapetest.Write(t, filepath.Join(t.TempDir(), "t.jsonl.zst"), tape.Header{Format: 1, Transport: "stdio"}, tapetest.Messages("1", start,
			`> {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":`+string(info)+`}}`,
			`< {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`,
			`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}`,
			`< {"jsonrpc":"2.0","id":1,"result":{"content":[]}}`,
		))
		export := func(f RequestsFormat) []byte { return exportRequestsBytes(t, path, f) }
		got := map[string][2]string{} // format -> name, version of the tools/call row
		for dec := json.NewDecoder(bytes.NewReader(export(RequestsNDJSON))); dec.More(); {
			var r parquetRow
			if err := dec.Decode(&r); err != nil {
				t.Fatal(err)
			}
			got["ndjson"] = [2]string{sv(r.ClientName), sv(r.ClientVersion)}
		}
		pq := export(RequestsParquet)
		prows, err := parquet.Read[parquetRow](bytes.NewReader(pq), int64(len(pq)))
		if err != nil || len(prows) == 0 {
			t.Fatalf("parquet: %v, %d rows", err, len(prows))
		}
		got["parquet"] = [2]string{sv(prows[len(prows)-1].ClientName), sv(prows[len(prows)-1].ClientVersion)}
		recs, err := csv.NewReader(bytes.NewReader(export(RequestsCSV))).ReadAll()
		if err != nil || len(recs) < 2 {
			t.Fatalf("csv: %v, %d records", err, len(recs))
		}
		col := map[string]int{}
		for j, c := range recs[0] {
			col[c] = j
		}
		last := recs[len(recs)-1]
		got["csv"] = [2]string{last[col["client_name"]], last[col["client_version"]]}
		for f, g := range got {
			if g != [2]string{tc.wantName, tc.wantVersion} {
				t.Errorf("%s: client %q (%d characters) version %q; want %d characters, version %q", f, g[0], utf8.RuneCountInString(g[0]), g[1],
					utf8.RuneCountInString(tc.wantName), tc.wantVersion)
			}
		}
		rep, err := Inspect(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		var text bytes.Buffer
		if err := WriteText(&text, rep); err != nil {
			t.Fatal(err)
		}
		if want := "client " + string([]rune(tc.name)[0]); !strings.Contains(text.String(), "…") || strings.Contains(text.String(), tc.wantName) || !strings.Contains(text.String(), want) {
			t.Errorf("the text report does not clip the client's name with an ellipsis:\n%s", text.String())
		}
	}
}
