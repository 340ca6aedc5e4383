#!/usr/bin/env bash
# make demo: the main job of mcptape on the embedded reference server.
#  1. record: a scripted MCP client talks to `mcptape serve` through `mcptape record`;
#  2. inspect/show/check: the tape is read back offline, and checked as a CI gate.
#  (then HTTP and WebSocket recording, replay, mock of the tape, load: see the steps below)
set -euo pipefail
trap 'exit 130' INT # Ctrl-C stops the demo, also where a step's exit code is shown (set +e): mcptape exits 130 on SIGINT, and bash goes on after that unless it traps SIGINT
MCPTAPE=${1:-bin/mcptape}
OUT=demo-out
mkdir -p "$OUT"
TAPE=$OUT/demo.jsonl.zst
rm -f "$TAPE" "$OUT/replayed.jsonl.zst" # tapes are never overwritten: start afresh

step() { printf '\n\033[1m== %s\033[0m\n' "$*" >&2; }

step "1. record a stdio session: scripted client -> mcptape record -> mcptape serve"
coproc SRV { "$MCPTAPE" record -o "$TAPE" -- "$MCPTAPE" serve; }
send() { printf '%s\n' "$1" >&"${SRV[1]}"; printf '  -> %s\n' "$1" >&2; }
# await ID: print server lines until the response with that id arrives.
await() {
  local line
  while IFS= read -r line <&"${SRV[0]}"; do
    printf '  <- %.160s\n' "$line" >&2
    case "$line" in *"\"id\":$1,"*|*"\"id\":$1}"*) return 0 ;; esac
  done
  echo "server closed before answering id $1" >&2; return 1
}
send '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"demo-script","version":"1"}}}'
await 1
send '{"jsonrpc":"2.0","method":"notifications/initialized"}'
send '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
await 2
send '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello from make demo"}}}'
await 3
send '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":300,"steps":3},"_meta":{"progressToken":"p-1"}}}'
await 4
send '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":40}}}'
await 5
send '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"fail","arguments":{"mode":"rpc"}}}'
await 6
exec {SRV[1]}>&-   # close the server's stdin: record shuts it down and closes the tape
wait "$SRV_PID" || true
ls -l "$TAPE" >&2

step "2. inspect the tape offline: sessions, latency per method and tool, errors, violations"
"$MCPTAPE" inspect "$TAPE"

step "3. show the timeline"
"$MCPTAPE" show "$TAPE"

step "3a. check the tape as a CI gate would: the default signals pass (exit 0)"
"$MCPTAPE" check "$TAPE" --expect-tool echo --threshold 'tools/call echo:p99<2s'
"$MCPTAPE" baseline "$TAPE" -o "$OUT/surface.json"

step "3a'. a contract the session breaks: a tool it never called, one it must not call, a latency budget (exit 1)"
set +e
"$MCPTAPE" check "$TAPE" --fail-on error,violation,unanswered --expect-tool search --forbid-tool fail \
  --threshold 'tools/call sleep:p99<100ms' --format junit -o "$OUT/check.xml"
echo "check exit code: $? (1 = the contract is broken; JUnit in $OUT/check.xml)" >&2
"$MCPTAPE" check "$TAPE" --fail-on error,violation,unanswered --expect-tool search --forbid-tool fail \
  --threshold 'tools/call sleep:p99<100ms'
set -e

STEP_NO=3b bash "$(dirname "$0")/demo-http.sh" "$MCPTAPE" "$OUT"
STEP_NO=3c bash "$(dirname "$0")/demo-ws.sh" "$MCPTAPE" "$OUT" "$TAPE"

step "4. replay the recorded session against a fresh server: ids rewritten, answers compared"
"$MCPTAPE" replay "$TAPE" -o "$OUT/replayed.jsonl.zst" -- "$MCPTAPE" serve
"$MCPTAPE" diff "$TAPE" "$OUT/replayed.jsonl.zst" && echo "diff: the replayed tape matches the recording" >&2

step "5. replay against a server whose echo tool changed: the difference is found (exit 1)"
set +e
"$MCPTAPE" replay "$TAPE" -- "$MCPTAPE" serve --echo-prefix 'v2: '
echo "replay exit code: $? (1 = answers differ)" >&2
set -e

step "5b. mock: the tape served as an MCP server (no real server); the recording replayed against its own mock"
"$MCPTAPE" replay "$TAPE" -- "$MCPTAPE" mock "$TAPE"
step "5c. a client the recording did not foresee: the mock names the closest recorded request, then reports"
printf '%s\n' \
  '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"other-client","version":"2"}}}' \
  '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"something else"}}}' \
  '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":40}}}' \
  | "$MCPTAPE" mock "$TAPE" --speed max

# 6. a short load run on the reference server (open and closed models, merge, tape-driven)
STEP_NO=6 bash "$(dirname "$0")/demo-load.sh" "$MCPTAPE" "$TAPE"

{
  printf '\n\033[1m== done: what the demo wrote is in %s/\033[0m\n' "$OUT"
  printf '  %-26s %s\n' "$TAPE" "the stdio tape; beside it http.jsonl.zst, ws.jsonl.zst, replayed.jsonl.zst" \
    "$OUT/check.xml" "the JUnit result of the broken contract (step 3a')" \
    "$OUT/load.json" "the report of the open-model load run (step 6.1), histograms included"
  echo "Try next:"
  printf '  %-66s # %s\n' "$MCPTAPE report $TAPE -o $OUT/report.html" "the tape as one HTML page" \
    "$MCPTAPE report $OUT/load.json -o $OUT/load.html" "the load run's charts" \
    "$MCPTAPE record -o my.jsonl.zst -- YOUR-SERVER ARGS..." "record your own stdio server" \
    "$MCPTAPE wrap --client claude-desktop --all" "or have your MCP client record its servers" \
    "$MCPTAPE help" "every command; '$MCPTAPE help COMMAND' for one"
} >&2
