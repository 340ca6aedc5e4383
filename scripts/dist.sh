#!/usr/bin/env bash
# Builds the release binaries: one static, stripped (-s -w), path-free
# (-trimpath) mcptape per target into dist/, named
# mcptape-VERSION-OS-ARCH[.exe], with their SHA-256 sums in
# dist/SHA256SUMS; then checks what it built (sums, build settings, and the
# version the binary for this machine prints).
# Usage: scripts/dist.sh [--check] VERSION [GO]   (--check: only check dist/)
set -euo pipefail
build=1
[ "${1:-}" = --check ] && { build=; shift; }
version=${1:?usage: dist.sh [--check] VERSION [GO]}
go=${2:-go}
targets="linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 freebsd/amd64"
sum() { if command -v sha256sum >/dev/null; then sha256sum "$@"; else shasum -a 256 "$@"; fi; }
[ -n "$build" ] && rm -rf dist && mkdir -p dist
for t in $targets; do
  [ -n "$build" ] || break
  os=${t%/*} arch=${t#*/} ext=
  [ "$os" = windows ] && ext=.exe
  out=dist/mcptape-$version-$os-$arch$ext
  echo "dist: $out" >&2
  CGO_ENABLED=0 GOOS=$os GOARCH=$arch "$go" build -trimpath \
    -ldflags "-s -w -X main.version=$version" -o "$out" ./cmd/mcptape
done
[ -n "$build" ] && (cd dist && sum mcptape-* > SHA256SUMS)

# Checks.
fail() { echo "dist: $*" >&2; exit 1; }
(cd dist && sum -c SHA256SUMS >/dev/null) || fail "SHA256SUMS does not match"
for t in $targets; do
  os=${t%/*} arch=${t#*/} ext=
  [ "$os" = windows ] && ext=.exe
  f=dist/mcptape-$version-$os-$arch$ext
  grep -q " ${f#dist/}\$" dist/SHA256SUMS || fail "no sum for $f"
  info=$("$go" version -m "$f") || fail "$f is not a Go binary"
  grep -q $'build\t-trimpath=true' <<<"$info" || fail "$f not built with -trimpath"
  grep -q $'build\tCGO_ENABLED=0' <<<"$info" || fail "$f not static"
  grep -q $'build\tGOOS='"$os"'$' <<<"$info" || fail "$f is not for $os"
  # -s -w: no symbol table (Mach-O keeps the few that dyld needs).
  symbols=$("$go" tool nm "$f" 2>/dev/null | wc -l || true)
  [ "$symbols" -lt 1000 ] || fail "$f not stripped ($symbols symbols)"
done
host=dist/mcptape-$version-$("$go" env GOOS)-$("$go" env GOARCH)
[ "$("$go" env GOOS)" = windows ] && host=$host.exe
if [ -x "$host" ]; then
  got=$("$host" version)
  [ "$got" = "mcptape $version" ] || { echo "dist: $host version prints '$got', want 'mcptape $version'" >&2; exit 1; }
fi
echo "dist: 6 binaries and SHA256SUMS in dist/, checked" >&2
