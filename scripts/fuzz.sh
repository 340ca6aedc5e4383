#!/usr/bin/env bash
# Runs every native Go fuzz target of the module for a short time each.
# Usage: scripts/fuzz.sh [DURATION]   (default 10s per target)
set -euo pipefail
t=${1:-10s}
for pkg in $(go list ./...); do
  for f in $(go test -list '^Fuzz' "$pkg" 2>/dev/null | grep '^Fuzz' || true); do
    echo "== $pkg $f ($t)"
    go test -run '^$' -fuzz "^${f}\$" -fuzztime "$t" "$pkg"
  done
done
