#!/usr/bin/env bash
# demo-load.sh: mcptape load on the embedded reference server (for make demo).
#  1. open model over Streamable HTTP with an HDR report and a CI threshold
#     on errors; then a latency threshold that breaks on any host (exit 3);
#  2. three generators at once, their reports merged exactly;
#  3. closed model over stdio with batches, progress, cancellation;
#  4. tape-driven load: a recorded session amplified (if a tape is given).
# Usage: scripts/demo-load.sh [MCPTAPE_BINARY] [TAPE]
set -euo pipefail
trap 'exit 130' INT # Ctrl-C stops the demo, also where a step's exit code is shown (set +e): mcptape exits 130 on SIGINT, and bash goes on after that unless it traps SIGINT
MCPTAPE=${1:-bin/mcptape}
TAPE=${2:-}
OUT=${OUT:-demo-out}
mkdir -p "$OUT"
# step N TITLE: a header on stderr; STEP_NO (make demo: 6) numbers it 6.N.
step() { local n=$1; shift; printf '\n\033[1m== %s%s. %s\033[0m\n' "${STEP_NO:+$STEP_NO.}" "$n" "$*" >&2; }

rm -f "$OUT/serve.err" # a background job opens it only once it runs: no old address
"$MCPTAPE" serve --http 127.0.0.1:0 2>"$OUT/serve.err" &
SRV=$!
trap 'kill $SRV 2>/dev/null || true' EXIT
for _ in $(seq 100); do URL=$(grep -o 'http://[^ ]*/mcp' "$OUT/serve.err" || true); [ -n "$URL" ] && break; sleep 0.1; done

# The CI gate (--threshold) is shown on what the demo controls: step 1
# gates on errors (the reference server answers every call), and step 1b
# on the latency of calls that sleep 200 ms, which no host answers within
# 100 ms: exit 3, and the demo fails if the gate does not fire. A latency
# budget on echo calls (p99<500ms) failed make demo on a loaded host.
step 1 "open model: 300 arrivals/s over 20 HTTP sessions for 4 s, latency from the intended send time"
"$MCPTAPE" load --url "$URL" --rate 300/s --sessions 20 --ramp 1s --duration 4s --every 1s \
  --call '3:tools/call echo {"message":"hi"}' --call 'tools/call add {"a":1,"b":2}' --call tools/list \
  --json "$OUT/load.json" --hgrm "$OUT/hgrm" \
  --threshold 'errors<1%'

step 1b "a latency gate: calls that sleep 200 ms held to p99<100ms (broken on any host: exit 3 expected)"
set +e
"$MCPTAPE" load -q --url "$URL" --sessions 2 --requests 4 --call 'tools/call sleep {"ms":200}' \
  --threshold 'tools/call:p99<100ms'
code=$?
set -e
echo "load exit code: $code (3 = a threshold broken)" >&2
[ "$code" -eq 3 ] || { echo "demo-load.sh: the latency gate did not fire (exit $code, want 3)" >&2; exit 1; }

step 2 "three generators at once (100/s each), merged exactly"
for i in 0 1 2; do
  "$MCPTAPE" load --url "$URL" -q --rate 100/s --sessions 5 --duration 3s \
    --call 'tools/call echo {"message":"hi"}' --json "$OUT/gen-$i.json" >/dev/null &
done
wait $(jobs -p | grep -v "^$SRV\$") 2>/dev/null || true
"$MCPTAPE" report merge "$OUT"/gen-*.json --json "$OUT/merged.json"

step 3 "stdio, closed model: 8 sessions x 4 in flight, each call reporting progress"
"$MCPTAPE" load -q --sessions 8 --inflight 4 --requests 400 --progress \
  --call 'tools/call sleep {"ms":20,"steps":2}' -- "$MCPTAPE" serve

step 4 "JSON-RPC batches of 4 over HTTP: protocol 2025-03-26 has them, every batch is answered"
"$MCPTAPE" load -q --url "$URL" --protocol 2025-03-26 --batch 4 --requests 40 --call 'tools/call echo {"message":"hi"}'

step 5 "the same batches on 2025-06-18, which has none: the server refuses them (HTTP 400; exit 1 expected)"
set +e
"$MCPTAPE" load -q --url "$URL" --batch 4 --requests 8 --call 'tools/call echo {"message":"hi"}'
echo "load exit code: $? (1 = not one request succeeded)" >&2
set -e

step 6 "cancellation: 8 slow calls cancelled 50 ms after they were sent; the server stops or answers anyway"
"$MCPTAPE" load -q --url "$URL" --sessions 4 --requests 8 --cancel-after 50ms --call 'tools/call sleep {"ms":2000}'

if [ -n "$TAPE" ]; then
  step 7 "tape-driven load: 20 virtual sessions each replay the recorded session (its fail call fails, as recorded)"
  "$MCPTAPE" load -q --tape "$TAPE" --sessions 20 --speed max -- "$MCPTAPE" serve
fi
