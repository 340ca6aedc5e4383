#!/usr/bin/env bash
# beside.sh 'BACKGROUND' FOREGROUND [ARGS...]: runs the shell command
# BACKGROUND while FOREGROUND runs, and fails when either fails.
# BACKGROUND runs at the lowest CPU priority (nice 19): it takes the CPU
# that FOREGROUND leaves idle, and slows FOREGROUND's timed work as
# little as the kernel allows. Its output is held in a temporary file
# and shown after FOREGROUND's (so that the two never interleave),
# followed by its exit status when it failed. Nothing is left running: it
# waits for both.
#
# 'make test' runs vet and 'make cross' (compiling only, CPU-bound) beside
# the race tests, which leave the CPU idle much of the time while they
# wait on peers, timers and sockets.
set -uo pipefail
if [ $# -lt 2 ]; then
	echo "usage: beside.sh 'BACKGROUND' FOREGROUND [ARGS...]" >&2
	exit 2
fi
bg=$1
shift
log=$(mktemp "${TMPDIR:-/tmp}/beside.XXXXXX") || exit 2
trap 'rm -f "$log"' EXIT
# BACKGROUND gets a process group of its own, ended on INT and TERM.
set -m
nice -n 19 bash -c "$bg" >"$log" 2>&1 &
pid=$!
set +m
trap 'kill -TERM -- -"$pid" 2>/dev/null; wait "$pid"; exit 130' INT TERM
"$@"
fg=$?
wait "$pid"
bgst=$?
cat "$log"
if [ "$bgst" -ne 0 ]; then
	echo "beside.sh: '$bg' failed (exit status $bgst)" >&2
fi
if [ "$fg" -ne 0 ]; then
	exit "$fg"
fi
exit "$bgst"
