#!/usr/bin/env bash
# Checks that "go install github.com/mcptape/mcptape/cmd/mcptape@VERSION"
# gives a binary that reports VERSION (from debug.ReadBuildInfo, no
# -ldflags): the committed tree is served as that version by a module
# proxy in a temporary directory (nested modules left out, as the real
# proxy leaves them out), dependencies come from the local module cache,
# and nothing outside the temporary directory is written.
# Usage: scripts/install-check.sh [GO]
set -euo pipefail
go=${1:-go}
version=v0.0.0-installcheck
mod=github.com/mcptape/mcptape
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
src=$tmp/src/$mod@$version
mkdir -p "$src" "$tmp/proxy/$mod/@v"
git archive HEAD | tar -x -C "$src"
python3 - "$tmp/src" "$mod@$version" "$tmp/proxy/$mod/@v/$version.zip" <<'PY'
import os, sys, zipfile
base, top, out = sys.argv[1:]
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    for root, dirs, files in os.walk(os.path.join(base, top)):
        rel = os.path.relpath(root, base)
        if rel != top and "go.mod" in files:  # a nested module: not part of this one
            dirs[:] = []
            continue
        for f in files:
            z.write(os.path.join(root, f), os.path.join(rel, f))
PY
cp "$src/go.mod" "$tmp/proxy/$mod/@v/$version.mod"
echo "{\"Version\":\"$version\",\"Time\":\"2026-01-01T00:00:00Z\"}" > "$tmp/proxy/$mod/@v/$version.info"
echo "$version" > "$tmp/proxy/$mod/@v/list"
cache=$("$go" env GOMODCACHE)
GOMODCACHE=$tmp/modcache GOPROXY="file://$tmp/proxy,file://$cache/cache/download,off" GOSUMDB=off \
  GOFLAGS=-modcacherw GOBIN=$tmp/bin "$go" install "$mod/cmd/mcptape@$version"
got=$("$tmp/bin/mcptape" version)
[ "$got" = "mcptape $version" ] || { echo "install-check: go install @$version gives '$got'" >&2; exit 1; }
echo "install-check: go install ...@$version reports $version" >&2
