package analysis

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/mcptape/mcptape/internal/tapetest"
	"github.com/mcptape/mcptape/tape"
)

// nullsTape writes a stdio tape whose operations leave the tool column
// null after a row that has one, and the target column null around one
// that has one: initialize, a tools/call, a resources/read, a method of
// no tool or target.
func nullsTape(t *testing.T, dir string) string {
	t.Helper()
	recs := tapetest.Messages("1", time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC),
		`> {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`< {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"content":[]}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"file:///x"}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"contents":[]}}`,
		`> {"jsonrpc":"2.0","id":3,"method":"x/y","params":{}}`,
		`< {"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"no"}}`,
	)
	return tapetest.Write(t, filepath.Join(dir, "nulls.jsonl.zst"), tape.Header{Format: 1, Transport: "stdio"}, recs)
}

// TestExportRequestsParquetNulls: a missing string value is null in the
// Parquet file wherever the NDJSON has null (the file's definition
// levels, not what a reader makes of them). The empty strings of a
// non-pointer optional field were written as "" in some rows: a tool
// column of "" for resources/read after a tools/call row.
func TestExportRequestsParquetNulls(t *testing.T) {
	ctx := context.Background()
	path := nullsTape(t, t.TempDir())
	var nd, pq bytes.Buffer
	if _, err := ExportRequests(ctx, []string{path}, &nd, RequestsNDJSON); err != nil {
		t.Fatal(err)
	}
	if _, err := ExportRequests(ctx, []string{path}, &pq, RequestsParquet); err != nil {
		t.Fatal(err)
	}
	var want []map[string]any
	for dec := json.NewDecoder(&nd); dec.More(); {
		var r map[string]any
		if err := dec.Decode(&r); err != nil {
			t.Fatal(err)
		}
		want = append(want, r)
	}
	f, err := parquet.OpenFile(bytes.NewReader(pq.Bytes()), int64(pq.Len()))
	if err != nil {
		t.Fatal(err)
	}
	leaves := f.Schema().Columns()
	var got []parquet.Row
	for _, rg := range f.RowGroups() {
		rows := rg.Rows()
		buf := make([]parquet.Row, 16)
		for {
			n, err := rows.ReadRows(buf)
			for _, r := range buf[:n] {
				got = append(got, r.Clone())
			}
			if errors.Is(err, io.EOF) || n == 0 {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		rows.Close()
	}
	if len(got) != len(want) || len(want) != 4 {
		t.Fatalf("parquet: %d rows, ndjson %d, want 4", len(got), len(want))
	}
	for i, r := range got {
		for _, v := range r {
			col := leaves[v.Column()][0]
			if null := want[i][col] == nil; v.IsNull() != null {
				t.Errorf("row %d (%s) column %s: null %v in the Parquet file, ndjson %v", i, want[i]["method"], col, v.IsNull(), want[i][col])
			}
		}
	}
}

// TestDuckDBReadsParquetNulls: DuckDB reads a missing tool or target as
// NULL, never as an empty string, so that IS NULL, count(tool) and coalesce work as
// docs/sql.md's queries expect.
func TestDuckDBReadsParquetNulls(t *testing.T) {
	duck, ctx, dir := duckDir(t)
	exportFile(t, ctx, nullsTape(t, dir), filepath.Join(dir, "r.parquet"))
	res := runQueries(t, ctx, duck, dir, []docQuery{{Name: "nulls", SQL: `SELECT count(tool) AS tools, count(target) AS targets,
		count(*) FILTER (WHERE tool = '' OR target = '') AS empty FROM 'r.parquet'`}})
	if r := res["nulls"]; len(r) != 1 || num(t, r[0]["tools"]) != 1 || num(t, r[0]["targets"]) != 1 || num(t, r[0]["empty"]) != 0 {
		t.Errorf("DuckDB: %v, want 1 tool, 1 target, 0 empty", r)
	}
}
