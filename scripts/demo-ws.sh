#!/usr/bin/env bash
# demo-ws.sh: record over WebSocket (for make demo): mcptape load and a replay
# of the stdio demo tape -> mcptape record --upstream ws:// -> mcptape serve
# --ws, then inspect the tape.
# Usage: scripts/demo-ws.sh [MCPTAPE_BINARY] [OUTDIR] [STDIO_TAPE]
set -euo pipefail
trap 'exit 130' INT # Ctrl-C stops the demo, also where a step's exit code is shown (set +e): mcptape exits 130 on SIGINT, and bash goes on after that unless it traps SIGINT
MCPTAPE=${1:-bin/mcptape}
OUT=${2:-demo-out}
TAPE=${3:-$OUT/demo.jsonl.zst}
mkdir -p "$OUT"
. "$(dirname "$0")/demo-proxy.sh"

step "record over WebSocket: mcptape load and replay -> mcptape record --upstream ws:// -> mcptape serve --ws"
start_recording ws
"$MCPTAPE" load --url "$PROXY" --requests 20 --call 'tools/call echo {"message":"hi over WebSocket"}'
if [ -f "$TAPE" ]; then
  echo "  replaying $TAPE over WebSocket" >&2
  "$MCPTAPE" replay "$TAPE" --url "$PROXY"
fi
stop_recording
ls -l "$OUT/ws.jsonl.zst" >&2
"$MCPTAPE" inspect "$OUT/ws.jsonl.zst"
