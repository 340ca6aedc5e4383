package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcptape/mcptape/internal/english"
	"github.com/mcptape/mcptape/internal/privfile"
	"github.com/mcptape/mcptape/loadreport"
)

// isLoadReport reports whether the file at path is the JSON report of a
// load run ("mcptape load --json"): a JSON object with "model" and
// "series" members. Anything else (a zstd tape, a JSONL tape whose first
// record is its header) is taken for a tape.
func isLoadReport(path string) bool {
	isJSON, err := probeLoadReport(path)
	return isJSON && err == nil
}

// probeLoadReport tells whether the file at path holds JSON (its first
// byte, past blanks, is "{") and, if so, why it is not a load report (nil
// when it is one). A tape is zstd data: a JSON file is never one.
func probeLoadReport(path string) (isJSON bool, err error) {
	fh, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer fh.Close()
	br := bufio.NewReader(fh)
	head, _ := br.Peek(64)
	if !bytes.HasPrefix(bytes.TrimLeft(head, " \t\r\n"), []byte("{")) {
		return false, nil
	}
	var top map[string]json.RawMessage
	if err := json.NewDecoder(br).Decode(&top); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return true, err
	}
	for _, member := range []string{"model", "series"} {
		if _, ok := top[member]; !ok {
			return true, fmt.Errorf("no %q member", member)
		}
	}
	return true, nil
}

// runLoadReport writes the HTML page of load reports: one run, or two or
// more compared against the first. A failed page leaves no file behind.
func runLoadReport(st *stdio, paths []string, out, title string) error {
	var runs []loadreport.Run
	for _, p := range paths {
		rep, err := readReportFile(st, p)
		if err != nil {
			return withCode(2, err)
		}
		runs = append(runs, loadreport.Run{Name: filepath.Base(p), Report: rep})
	}
	if title == "" {
		var names []string
		for _, r := range runs {
			names = append(names, r.Name)
		}
		title = "Load report: " + strings.Join(names, " vs ")
	}
	if out == "-" {
		return loadreport.WriteHTML(st.out, title, runs...)
	}
	if err := refuseInputAsOutput(out, paths); err != nil {
		return err
	}
	fh, err := privfile.Create(out)
	if err != nil {
		return withCode(2, err)
	}
	werr := loadreport.WriteHTML(fh, title, runs...)
	if err := errors.Join(werr, fh.Close()); err != nil {
		privfile.Remove(out)
		return withCode(2, fmt.Errorf("report %s: %w", out, err))
	}
	fmt.Fprintf(st.err, "mcptape report: wrote %s (%s)\n", out, english.Count(len(runs), "run"))
	return nil
}
