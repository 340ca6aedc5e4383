# demo-proxy.sh: helpers sourced by demo-http.sh and demo-ws.sh (not run on
# its own). Needs MCPTAPE and OUT set.

# step TITLE: a header on stderr, numbered STEP_NO when make demo sets it.
step() { printf '\n\033[1m== %s%s\033[0m\n' "${STEP_NO:+$STEP_NO. }" "$*" >&2; }

# wait_for PATTERN FILE: print the first match once it appears (10 s at most).
wait_for() {
  for _ in $(seq 100); do grep -o "$1" "$2" 2>/dev/null && return 0; sleep 0.1; done
  echo "demo: gave up waiting for '$1' in $2:" >&2; cat "$2" >&2; return 1
}

# start_recording KIND (http or ws): start `mcptape serve --KIND` and
# `mcptape record --upstream` in front of it, recording to
# $OUT/KIND.jsonl.zst; sets SRV and REC (their pids) and PROXY (the
# recorder's KIND:// URL).
start_recording() {
  # A background job opens its log only once it runs: remove the last run's
  # logs first, or wait_for could read an old address from them.
  rm -f "$OUT/serve-$1.log" "$OUT/record-$1.log"
  rm -f "$OUT/$1.jsonl.zst" # record -o does not overwrite the last run's tape
  # Whatever ends the script before stop_recording (a failed step, Ctrl-C
  # reaching the script but not a server still starting up) stops both.
  SRV='' REC=''
  trap 'kill $REC $SRV 2>/dev/null; wait 2>/dev/null' EXIT
  "$MCPTAPE" serve "--$1" 127.0.0.1:0 2> "$OUT/serve-$1.log" & SRV=$!
  "$MCPTAPE" record --upstream "$(wait_for "$1://[^ ]*/mcp" "$OUT/serve-$1.log")" \
    --listen 127.0.0.1:0 -o "$OUT/$1.jsonl.zst" 2> "$OUT/record-$1.log" & REC=$!
  PROXY=$(wait_for "proxying $1://[^ ]*" "$OUT/record-$1.log" | cut -d' ' -f2)
  echo "  proxy at $PROXY" >&2
}

# stop_recording: stop the recorder as Ctrl-C does (it closes the tape), then
# the server.
stop_recording() {
  kill -INT "$REC"; wait "$REC"; kill "$SRV"; wait "$SRV" 2>/dev/null || true
  trap - EXIT
}
