#!/usr/bin/env bash
# demo-http.sh: record over HTTP (for make demo): curl -> mcptape record
# --upstream -> mcptape serve --http, then show the tape.
# Usage: scripts/demo-http.sh [MCPTAPE_BINARY] [OUTDIR]
set -euo pipefail
trap 'exit 130' INT # Ctrl-C stops the demo, also where a step's exit code is shown (set +e): mcptape exits 130 on SIGINT, and bash goes on after that unless it traps SIGINT
MCPTAPE=${1:-bin/mcptape}
OUT=${2:-demo-out}
mkdir -p "$OUT"
. "$(dirname "$0")/demo-proxy.sh"
command -v curl >/dev/null || { echo "demo-http: curl is not installed; skipping the HTTP recording demo" >&2; exit 0; }

step "record over HTTP: curl -> mcptape record --upstream -> mcptape serve --http"
start_recording http
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
stop_recording
ls -l "$OUT/http.jsonl.zst" >&2
"$MCPTAPE" show "$OUT/http.jsonl.zst"
