#!/usr/bin/env bash
# make bench: every performance target, each measured beside its baseline in
# the same run and reported as a ratio (custom metrics such as x-faster,
# ratio, records/s). Raw output goes to bench-out/; a summary to stdout.
# Run it on a quiet machine: the figures are wall-clock on shared cores.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p bench-out bin
OUT=bench-out/bench-$(date -u +%Y%m%dT%H%M%SZ).txt
go build -o bin/mcptape ./cmd/mcptape
export MCPTAPE_BIN=$PWD/bin/mcptape

run() { # run PKG BENCH-REGEX [go test flags...]
  local pkg=$1 re=$2; shift 2
  echo "== $pkg -bench '$re' $*" | tee -a "$OUT"
  go test -run '^$' -bench "$re" "$@" "$pkg" 2>&1 | tee -a "$OUT" | grep -E '^(Benchmark|ok|FAIL|---)' || true
}

run ./jsonrpc 'ClassifyRatio|Split|RewriteID' -benchtime 1s
run ./tape 'Writer|Compression' -benchtime 5x
run ./tape 'Reader' -benchtime 5x -cpu 1
run ./internal/jsondiff 'Compare' -benchtime 1s
run ./transport 'HTTPConn' -benchtime 2s
run ./internal/refserver 'StdioOverhead' -benchtime 2s
run ./capture 'RecordRoundTrip|RecordPipelined' -benchtime 5000x
run ./capture 'RecordRSS' -benchtime 1x
run ./capture 'HTTPProxy' -benchtime 3000x
run ./capture 'WSProxyThroughput' -benchtime 3000x
run ./capture 'SamplingThroughput' -benchtime 3000x
run ./analysis '^BenchmarkInspect$' -benchtime 9x
run ./analysis '^BenchmarkInspectStreamed$' -benchtime 5x   # streamed/plain: msgs/s on streamed parts vs plain responses (>= 0.9)
run ./analysis '^BenchmarkExportRequests$' -benchtime 5x
run ./analysis '^BenchmarkExportOTLP$' -benchtime 5x   # export --format otlp: CPU per message, and as a ratio of inspect's
run ./analysis 'InspectMemory10M' -benchtime 1x -timeout 30m
run ./replay 'ReplayMaxSpeed' -benchtime 1x
run ./mock 'MockVsServe' -benchtime 3000x
run ./mock 'MockIndexMemory' -benchtime 1x
run ./loadgen 'Generator' -benchtime 2s
run ./loadgen 'Results' -benchtime 200000x   # with/without-rate: --results costs at most 5% (>= 0.95)
echo "== scripts/bench-load.sh (mcptape load vs vegeta and wrk)" | tee -a "$OUT"
bash scripts/bench-load.sh bin/mcptape 2>&1 | tee -a "$OUT"
echo "raw output: $OUT"
