package analysis

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/parquet-go/parquet-go"

	"github.com/mcptape/mcptape/internal/tapetest"
	"github.com/mcptape/mcptape/tape"
)

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
		export := func(f RequestsFormat) []byte {
			t.Helper()
			var buf bytes.Buffer
			if _, err := ExportRequests(ctx, []string{path}, &buf, f); err != nil {
				t.Fatal(err)
			}
			return buf.Bytes()
		}
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
