// Package browsertest renders HTML pages in headless Chromium for the
// tests of the HTML reports: the page as a browser draws it, as an image.
package browsertest

import (
	"context"
	"image"
	_ "image/png" // Chromium's screenshots
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// Chromium is Debian's headless browser; scripts/sysdeps.sh installs it
// ("apt-get install -y chromium").
const Chromium = "/usr/bin/chromium"

// Screenshot renders the HTML file page in headless Chromium in a window
// of w×h pixels and returns the screenshot. It skips the test when
// Chromium is absent or with -short. With MCPTAPE_KEEP_SCREENSHOTS=DIR the
// screenshot is kept there as name.png, to be looked at.
func Screenshot(t testing.TB, page, name string, w, h int) image.Image {
	t.Helper()
	if _, err := os.Stat(Chromium); err != nil {
		t.Skipf("%s is absent (apt-get install -y chromium): the page is not rendered", Chromium)
	}
	if testing.Short() {
		t.Skip("renders in a browser; skipped with -short")
	}
	shot := filepath.Join(t.TempDir(), name+".png")
	if keep := os.Getenv("MCPTAPE_KEEP_SCREENSHOTS"); keep != "" {
		shot = filepath.Join(keep, name+".png")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	abs, err := filepath.Abs(page)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, Chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+t.TempDir(), "--screenshot="+shot, "--window-size="+strconv.Itoa(w)+","+strconv.Itoa(h), "file://"+abs)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, msg)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, _, err := image.Decode(f)
	if err != nil {
		t.Fatalf("screenshot %s: %v", shot, err)
	}
	return img
}
