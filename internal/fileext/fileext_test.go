package fileext

import "testing"

func TestPick(t *testing.T) {
	exts := []Ext[string]{{".csv", "csv"}, {".ndjson", "ndjson"}, {".jsonl", "ndjson"}}
	for _, c := range []struct{ name, want, err string }{
		{name: "r.csv", want: "csv"},
		{name: "DIR/R.NDJSON", want: "ndjson"},
		{name: "r.jsonl", want: "ndjson"},
		{name: "r.xlsx", err: `"r.xlsx": want a name ending in .csv, .ndjson or .jsonl`},
		{name: "csv", err: `"csv": want a name ending in .csv, .ndjson or .jsonl`},
		{name: "", err: `"": want a name ending in .csv, .ndjson or .jsonl`},
	} {
		got, err := Pick(c.name, exts...)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%q: %q, %v; want error %q", c.name, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q: %q, %v; want %q", c.name, got, err, c.want)
		}
	}
	if _, err := Pick("r.csv", Ext[string]{".csv", "csv"}); err != nil {
		t.Errorf("one extension: %v", err)
	}
	if _, err := Pick("r.txt", Ext[string]{".csv", "csv"}); err == nil || err.Error() != `"r.txt": want a name ending in .csv` {
		t.Errorf("one extension: %v", err)
	}
}

func TestFit(t *testing.T) {
	for _, c := range []struct{ name, err string }{
		{name: "r.html"},
		{name: "DIR/R.HTM"},
		{name: "report"},       // no extension: nothing contradicts HTML
		{name: "dir.d/report"}, // a dot in the directory is no extension
		{name: "r.pdf", err: `"r.pdf": want a name ending in .html or .htm`},
		{name: "r.html.gz", err: `"r.html.gz": want a name ending in .html or .htm`},
		{name: ".html", err: ""}, // ends in .html
		{name: "r.", err: `"r.": want a name ending in .html or .htm`},
	} {
		err := Fit(c.name, ".html", ".htm")
		if (err == nil) != (c.err == "") || (err != nil && err.Error() != c.err) {
			t.Errorf("%q: %v, want %q", c.name, err, c.err)
		}
	}
}
