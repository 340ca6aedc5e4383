#!/usr/bin/env bash
# demo-load.sh: mcptape load on the embedded reference server (for make demo).
#  1. open model over Streamable HTTP with an HDR report and CI thresholds;
#  2. three generators at once, their reports merged exactly;
#  3. closed model over stdio with batches, progress, cancellation;
#  4. tape-driven load: a recorded session amplified (if a tape is given).
# Usage: scripts/demo-load.sh [MCPTAPE_BINARY] [TAPE]
set -euo pipefail
MCPTAPE=${1:-bin/mcptape}
TAPE=${2:-}
OUT=${OUT:-demo-out}
mkdir -p "$OUT"
step() { printf '\n\033[1m== %s\033[0m\n' "$*" >&2; }

rm -f "$OUT/serve.err" # a background job opens it only once it runs: no old address
"$MCPTAPE" serve --http 127.0.0.1:0 2>"$OUT/serve.err" &
SRV=$!
trap 'kill $SRV 2>/dev/null || true' EXIT
for _ in $(seq 100); do URL=$(grep -o 'http://[^ ]*/mcp' "$OUT/serve.err" || true); [ -n "$URL" ] && break; sleep 0.1; done

step "1. open model: 300 arrivals/s over 20 HTTP sessions for 4 s, latency from the intended send time"
"$MCPTAPE" load --url "$URL" --rate 300/s --sessions 20 --ramp 1s --duration 4s --every 1s \
  --call '3:tools/call echo {"message":"hi"}' --call 'tools/call add {"a":1,"b":2}' --call tools/list \
  --json "$OUT/load.json" --hgrm "$OUT/hgrm" \
  --threshold 'tools/call:p99<500ms' --threshold 'errors<1%'

step "2. three generators at once (100/s each), merged exactly"
for i in 0 1 2; do
  "$MCPTAPE" load --url "$URL" -q --rate 100/s --sessions 5 --duration 3s \
    --call 'tools/call echo {"message":"hi"}' --json "$OUT/gen-$i.json" >/dev/null &
done
wait $(jobs -p | grep -v "^$SRV\$") 2>/dev/null || true
"$MCPTAPE" report merge "$OUT"/gen-*.json --json "$OUT/merged.json"

step "3. stdio, closed model: 8 sessions x 4 in flight, progress; then batches (version-aware) and cancellation"
"$MCPTAPE" load -q --sessions 8 --inflight 4 --requests 400 --progress \
  --call 'tools/call sleep {"ms":20,"steps":2}' -- "$MCPTAPE" serve
"$MCPTAPE" load -q --url "$URL" --batch 4 --requests 40 --call 'tools/call echo {"message":"hi"}' || true
"$MCPTAPE" load -q --url "$URL" --sessions 4 --requests 8 --cancel-after 50ms --call 'tools/call sleep {"ms":2000}'

if [ -n "$TAPE" ]; then
  step "4. tape-driven load: every virtual session replays the recorded session"
  "$MCPTAPE" load -q --tape "$TAPE" --sessions 20 --speed max -- "$MCPTAPE" serve
fi
