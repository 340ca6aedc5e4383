#!/usr/bin/env bash
# demo-http.sh: record over HTTP (for make demo): curl -> mcptape record
# --upstream -> mcptape serve --http, then show the tape.
# Usage: scripts/demo-http.sh [MCPTAPE_BINARY] [OUTDIR]
set -euo pipefail
MCPTAPE=${1:-bin/mcptape}
OUT=${2:-demo-out}
mkdir -p "$OUT"
step() { printf '\n\033[1m== %s\033[0m\n' "$*" >&2; }
command -v curl >/dev/null || { echo "demo-http: curl is not installed; skipping the HTTP recording demo" >&2; exit 0; }
# wait_for PATTERN FILE: print the first match once it appears (10 s at most).
wait_for() {
  for _ in $(seq 100); do grep -o "$1" "$2" 2>/dev/null && return 0; sleep 0.1; done
  echo "demo-http: gave up waiting for '$1' in $2:" >&2; cat "$2" >&2; return 1
}

step "record over HTTP: curl -> mcptape record --upstream -> mcptape serve --http"
# A background job opens its log only once it runs: remove the last run's
# logs first, or wait_for could read an old address from them.
rm -f "$OUT/serve-http.log" "$OUT/record-http.log"
rm -f "$OUT/http.jsonl.zst" # record -o does not overwrite the last run's tape
"$MCPTAPE" serve --http 127.0.0.1:0 2> "$OUT/serve-http.log" & SRV=$!
"$MCPTAPE" record --upstream "$(wait_for 'http://[^ ]*/mcp' "$OUT/serve-http.log")" \
  --listen 127.0.0.1:0 -o "$OUT/http.jsonl.zst" 2> "$OUT/record-http.log" & REC=$!
PROXY=$(wait_for 'proxying http://[^ ]*' "$OUT/record-http.log" | cut -d' ' -f2)
echo "  proxy at $PROXY" >&2
post() { # post SESSION BODY: print the answer's data lines
  printf '  -> %s\n' "$2" >&2
  curl -sS -D "$OUT/headers.txt" "$PROXY" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -H 'MCP-Protocol-Version: 2025-11-25' ${1:+-H "Mcp-Session-Id: $1"} -d "$2" | sed -n 's/^data: \(..*\)/  <- \1/p' | cut -c1-160 >&2
}
post "" '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"demo-curl","version":"1"}}}'
SID=$(tr -d '\r' < "$OUT/headers.txt" | sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: //p')
post "$SID" '{"jsonrpc":"2.0","method":"notifications/initialized"}'
post "$SID" '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello over HTTP"}}}'
post "$SID" '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":300,"steps":3},"_meta":{"progressToken":"p-1"}}}'
curl -sS -X DELETE "$PROXY" -H "Mcp-Session-Id: $SID" -H 'MCP-Protocol-Version: 2025-11-25' -o /dev/null -w '  DELETE -> %{http_code}\n' >&2
kill -INT "$REC"; wait "$REC"; kill "$SRV"; wait "$SRV" 2>/dev/null || true
ls -l "$OUT/http.jsonl.zst" >&2
"$MCPTAPE" show "$OUT/http.jsonl.zst"
