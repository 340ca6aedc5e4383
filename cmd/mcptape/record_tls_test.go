package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeTestCert writes httptest's certificate (for 127.0.0.1) and key as
// PEM files and returns their paths and a pool that trusts the
// certificate.
func writeTestCert(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	s := httptest.NewTLSServer(http.NotFoundHandler())
	defer s.Close()
	c := s.TLS.Certificates[0]
	key, err := x509.MarshalPKCS8PrivateKey(c.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Certificate[0]}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: key}), 0o600); err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(s.Certificate())
	return certFile, keyFile, pool
}

// TestRecordHTTPS: --tls-cert and --tls-key make the proxy listen with
// HTTPS and announce an https URL.
func TestRecordHTTPS(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}))
	defer up.Close()
	cert, key, pool := writeTestCert(t)
	tp := filepath.Join(t.TempDir(), "t.jsonl.zst")
	run := startHTTPRecord(t, "--listen", "127.0.0.1:0", "--upstream", up.URL+"/mcp", "-o", tp, "--tls-cert", cert, "--tls-key", key)
	if !strings.HasPrefix(run.url, "https://") {
		t.Fatalf("announced %s", run.url)
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := c.Post(run.url, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"result"`) {
		t.Fatalf("client got %q", body)
	}
	if err := run.stop(); err != nil {
		t.Fatal(err)
	}
	if _, recs := readTapeFile(t, tp); len(recs) == 0 {
		t.Error("nothing recorded")
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--tls-cert", cert}, "go together"},
		{[]string{"--tls-cert", cert, "--tls-key", cert}, "--tls-cert"},
	} {
		args := append([]string{"record", "--listen", "127.0.0.1:0", "--upstream", up.URL, "-o", filepath.Join(t.TempDir(), "x.jsonl.zst")}, tc.args...)
		if code, _, errs := runCLI(t, "", args...); code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%q: %d %s", tc.args, code, errs)
		}
	}
}
