#!/usr/bin/env bash
# demo-ws.sh: record over WebSocket (for make demo): mcptape load and a replay
# of the stdio demo tape -> mcptape record --upstream ws:// -> mcptape serve
# --ws, then inspect the tape.
# Usage: scripts/demo-ws.sh [MCPTAPE_BINARY] [OUTDIR] [STDIO_TAPE]
set -euo pipefail
MCPTAPE=${1:-bin/mcptape}
OUT=${2:-demo-out}
TAPE=${3:-$OUT/demo.jsonl.zst}
mkdir -p "$OUT"
step() { printf '\n\033[1m== %s\033[0m\n' "$*" >&2; }
# wait_for PATTERN FILE: print the first match once it appears (10 s at most).
wait_for() {
  for _ in $(seq 100); do grep -o "$1" "$2" 2>/dev/null && return 0; sleep 0.1; done
  echo "demo-ws: gave up waiting for '$1' in $2:" >&2; cat "$2" >&2; return 1
}

step "record over WebSocket: mcptape load and replay -> mcptape record --upstream ws:// -> mcptape serve --ws"
# A background job opens its log only once it runs: remove the last run's
# logs first, or wait_for could read an old address from them.
rm -f "$OUT/serve-ws.log" "$OUT/record-ws.log"
rm -f "$OUT/ws.jsonl.zst" # record -o does not overwrite the last run's tape
"$MCPTAPE" serve --ws 127.0.0.1:0 2> "$OUT/serve-ws.log" & SRV=$!
"$MCPTAPE" record --upstream "$(wait_for 'ws://[^ ]*/mcp' "$OUT/serve-ws.log")" \
  --listen 127.0.0.1:0 -o "$OUT/ws.jsonl.zst" 2> "$OUT/record-ws.log" & REC=$!
PROXY=$(wait_for 'proxying ws://[^ ]*' "$OUT/record-ws.log" | cut -d' ' -f2)
echo "  proxy at $PROXY" >&2
"$MCPTAPE" load --url "$PROXY" --requests 20 --call 'tools/call echo {"message":"hi over WebSocket"}'
if [ -f "$TAPE" ]; then
  echo "  replaying $TAPE over WebSocket" >&2
  "$MCPTAPE" replay "$TAPE" --url "$PROXY"
fi
kill -INT "$REC"; wait "$REC"; kill "$SRV"; wait "$SRV" 2>/dev/null || true
ls -l "$OUT/ws.jsonl.zst" >&2
"$MCPTAPE" inspect "$OUT/ws.jsonl.zst"
