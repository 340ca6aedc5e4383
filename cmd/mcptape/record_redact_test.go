package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/mcptape/mcptape/tape"
)

// TestRecordRedactsEnvValues: --env values and server arguments that show
// a secret by their shape (a URL's password, a GitHub, Slack or OpenAI
// token, a JWT) are redacted in the tape, whatever their names; the
// server still gets them (repro D2).
func TestRecordRedactsEnvValues(t *testing.T) {
	t.Setenv(recordHelperEnv, "1")
	tp := filepath.Join(t.TempDir(), "t.jsonl.zst")
	secrets := []string{"s3cretA", "ghp_s3cretB", "s3cretC", "xoxb-s3cretD", "s3cretE"}
	args := slices.Concat([]string{"record", "-o", tp,
		"--env", "API_KEY=s3cretA", "--env", "GITHUB_PAT=ghp_s3cretB", "--env", "DATABASE_URL=postgres://u:s3cretC@db/x",
		"--env", "RECORD_HELPER_EXIT=0", "--"}, helperArgv(), []string{"xoxb-s3cretD", "--db=mysql://root:s3cretE@h/d"})
	code, _, stderr := runCLI(t, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n", args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	f, err := os.Open(tp)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := zstd.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets {
		if bytes.Contains(raw, []byte(s)) {
			t.Errorf("%s in the tape", s)
		}
	}
	r, err := tape.Open(tp)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, want := range []string{"--env", "GITHUB_PAT=<redacted:8-15>", "DATABASE_URL=postgres://u:%3Credacted%3A4-7%3E@db/x", "<redacted:8-15>", "--db=mysql://root:%3Credacted%3A4-7%3E@h/d"} {
		if !slices.Contains(r.Header().Argv, want) {
			t.Errorf("argv %q lacks %q", r.Header().Argv, want)
		}
	}
	for {
		if _, err := r.Next(); err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			break
		}
	}
}
