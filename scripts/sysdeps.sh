#!/usr/bin/env bash
# Installs the named Debian packages when their command is missing.
# Usage: scripts/sysdeps.sh PKG...   (each package provides /usr/bin/PKG)
set -euo pipefail
missing=()
for p in "$@"; do
  command -v "$p" >/dev/null 2>&1 || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "sysdeps: missing ${missing[*]} and cannot install it here (needs root and apt-get); tests that need it will skip" >&2
  exit 0
fi
echo "sysdeps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
