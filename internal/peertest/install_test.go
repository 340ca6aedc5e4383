package peertest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeRepo makes a directory that passes NewInstaller's check.
func fakeRepo(t *testing.T) string {
	t.Helper()
	repo := t.TempDir()
	dir := filepath.Join(repo, npmSrcDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "package-lock.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	return repo
}

func TestNewInstallerOptions(t *testing.T) {
	repo := fakeRepo(t)
	envCache := t.TempDir()
	tests := []struct {
		name      string
		env       string
		opts      []Option
		wantCache string
		wantErr   string
	}{
		{name: "default cache under repo", opts: []Option{WithRepoRoot(repo)}, wantCache: filepath.Join(repo, ".cache", "peers")},
		{name: "env cache", env: envCache, opts: []Option{WithRepoRoot(repo)}, wantCache: envCache},
		{name: "option beats env", env: envCache, opts: []Option{WithRepoRoot(repo), WithCacheDir(filepath.Join(repo, "c"))}, wantCache: filepath.Join(repo, "c")},
		{name: "empty repo", opts: []Option{WithRepoRoot("")}, wantErr: "repo root: empty path"},
		{name: "empty cache", opts: []Option{WithRepoRoot(repo), WithCacheDir("")}, wantErr: "cache dir: empty path"},
		{name: "nil log", opts: []Option{WithRepoRoot(repo), WithLog(nil)}, wantErr: "log: nil writer"},
		{name: "repo without peers", opts: []Option{WithRepoRoot(t.TempDir())}, wantErr: "package-lock.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(EnvCacheDir, tt.env)
			in, err := NewInstaller(tt.opts...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("NewInstaller error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if in.CacheDir() != tt.wantCache || in.RepoRoot() != repo {
				t.Fatalf("cache, repo = %s, %s; want %s, %s", in.CacheDir(), in.RepoRoot(), tt.wantCache, repo)
			}
		})
	}
}

func TestNodeMajor(t *testing.T) {
	tests := []struct {
		in      string
		want    int
		wantErr bool
	}{
		{"v20.20.2", 20, false},
		{"v22.7.5", 22, false},
		{"v8", 8, false},
		{"20.1.0", 0, true},
		{"v", 0, true},
		{"vx.1", 0, true},
		{"v-3.0", 0, true},
		{"", 0, true},
	}
	for _, tt := range tests {
		got, err := nodeMajor(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("nodeMajor(%q) = %d, %v; want %d, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func FuzzNodeMajor(f *testing.F) {
	for _, s := range []string{"v20.20.2", "v0.0.0", "v", "v99999999999999999999.1", "v+1.2", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := nodeMajor(s)
		if err != nil {
			return
		}
		if n < 0 || !strings.HasPrefix(s, "v") {
			t.Fatalf("nodeMajor(%q) = %d, accepted", s, n)
		}
	})
}

func TestHashFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a", "one")
	write("b", "two")
	base, err := hashFiles(dir, []string{"a", "b"}, "go1")
	if err != nil {
		t.Fatal(err)
	}
	if len(base) != 16 {
		t.Fatalf("key %q: want 16 hex digits", base)
	}
	changes := []struct {
		name  string
		files []string
		extra []string
		edit  func()
	}{
		{name: "other extra", files: []string{"a", "b"}, extra: []string{"go2"}},
		{name: "fewer files", files: []string{"a"}, extra: []string{"go1"}},
		{name: "content moved between files", files: []string{"a", "b"}, extra: []string{"go1"}, edit: func() { write("a", "onet"); write("b", "wo") }},
	}
	for _, c := range changes {
		t.Run(c.name, func(t *testing.T) {
			if c.edit != nil {
				c.edit()
			}
			got, err := hashFiles(dir, c.files, c.extra...)
			if err != nil {
				t.Fatal(err)
			}
			if got == base {
				t.Fatalf("key did not change: %s", got)
			}
		})
	}
	if _, err := hashFiles(dir, []string{"missing"}); err == nil {
		t.Fatal("hashFiles of a missing file: no error")
	}
}

func TestGoSourcesOfGopeers(t *testing.T) {
	files, err := goSources(filepath.Join(RepoRoot(t), goSrcDir))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"go.mod": true, "go.sum": true, "tools.go": true, "mcpgoserver/main.go": true}
	for _, f := range files {
		delete(want, f)
	}
	if len(want) > 0 {
		t.Fatalf("goSources = %v, missing %v", files, want)
	}
}

// TestEnsure checks the cache protocol with fake builds: one build per key
// however many callers race, nothing left behind by a failed build.
func TestEnsure(t *testing.T) {
	in := &Installer{cache: filepath.Join(t.TempDir(), "cache")}
	ctx := context.Background()
	var builds atomic.Int32
	good := func(key string) recipe {
		return recipe{name: "fake", key: key, want: []string{"bin/x"}, build: func(ctx context.Context, tmp string) error {
			builds.Add(1)
			time.Sleep(50 * time.Millisecond) // widen the race window
			if err := os.MkdirAll(filepath.Join(tmp, "bin"), 0o755); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(tmp, "bin/x"), []byte(key), 0o644)
		}}
	}

	var wg sync.WaitGroup
	dirs := make([]string, 6)
	errs := make([]error, 6)
	for i := range dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dirs[i], errs[i] = in.ensure(ctx, good("k1"))
		}()
	}
	wg.Wait()
	for i := range dirs {
		if errs[i] != nil || dirs[i] != filepath.Join(in.cache, "fake-k1") {
			t.Fatalf("caller %d: ensure = %q, %v", i, dirs[i], errs[i])
		}
	}
	if n := builds.Load(); n != 1 {
		t.Fatalf("%d builds for one key, want 1", n)
	}

	if _, err := in.ensure(ctx, good("k2")); err != nil || builds.Load() != 2 {
		t.Fatalf("new key: err %v, builds %d; want a second build", err, builds.Load())
	}
	if data, err := os.ReadFile(filepath.Join(in.cache, "fake-k1", "bin/x")); err != nil || string(data) != "k1" {
		t.Fatalf("old key's install changed: %q, %v", data, err)
	}

	tests := []struct {
		name    string
		build   func(ctx context.Context, tmp string) error
		wantErr string
	}{
		{"build fails", func(context.Context, string) error { return errors.New("no network") }, "no network"},
		{"build forgets a file", func(context.Context, string) error { return nil }, "did not produce bin/x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := recipe{name: "bad", key: strings.ReplaceAll(tt.name, " ", "-"), want: []string{"bin/x"}, build: tt.build}
			_, err := in.ensure(ctx, r)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("ensure error = %v, want %q", err, tt.wantErr)
			}
			for _, d := range []string{"bad-" + r.key, "bad-" + r.key + ".tmp"} {
				if _, err := os.Stat(filepath.Join(in.cache, d)); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("%s left behind (stat: %v)", d, err)
				}
			}
		})
	}
}

func TestLockFileWaitsAndTimesOut(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	held, err := lockFile(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*lockPoll)
	defer cancel()
	if l, err := lockFile(ctx, path); err == nil {
		l.unlock()
		t.Fatal("second lock taken while the first is held")
	} else if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second lock: %v, want a deadline error", err)
	}

	got := make(chan error, 1)
	go func() {
		l, err := lockFile(context.Background(), path)
		if err == nil {
			err = l.unlock()
		}
		got <- err
	}()
	time.Sleep(2 * lockPoll)
	select {
	case err := <-got:
		t.Fatalf("waiter returned while the lock was held: %v", err)
	default:
	}
	if err := held.unlock(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("waiter did not get the lock after unlock")
	}
}

func TestFindNode(t *testing.T) {
	tests := []struct {
		name    string
		script  string // body of a fake node; "" means no node in PATH
		want    string // version found
		wantErr string
	}{
		{name: "missing", wantErr: "apt-get install nodejs npm"},
		{name: "too old", script: "echo v16.20.0", wantErr: "need >= 20"},
		{name: "garbage", script: "echo nonsense", wantErr: "no leading v"},
		{name: "fails", script: "exit 1", wantErr: "--version"},
		{name: "good", script: "echo v22.1.0", want: "v22.1.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.script != "" {
				if err := os.WriteFile(filepath.Join(dir, "node"), []byte("#!/bin/sh\n"+tt.script+"\n"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			t.Setenv("PATH", dir)
			path, version, err := findNode(context.Background())
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("findNode = %q, %q, %v; want error containing %q", path, version, err, tt.wantErr)
				}
				return
			}
			if err != nil || version != tt.want || path != filepath.Join(dir, "node") {
				t.Fatalf("findNode = %q, %q, %v; want %s", path, version, err, tt.want)
			}
		})
	}
}
