#!/usr/bin/env bash
# Measures what sharding buys on the mock (docs/sharding.md, "What to expect in time"): the
# shipped smoke suite, pinned at this checkout's HEAD, run whole and then as N shards started
# together, each shard against its own `evalrun mock-server --slots 1` (a rig serving one request
# at a time); prints the wall time from the start to the last shard's export, and the merge's.
# Usage: scripts/shard_timing.sh [MAX_SHARDS (default 3)] [EVALRUN (default build/runner/evalrun)]
set -euo pipefail
cd "$(dirname "$0")/.."
max=${1:-3}
evalrun=$(realpath "${2:-build/runner/evalrun}")
suite="tasks/smoke@$(git rev-parse HEAD)"
work=$(mktemp -d)
servers=()
cleanup() {
  for pid in "${servers[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
for ((i = 0; i < max; i++)); do
  "$evalrun" mock-server --port $((18430 + i)) --slots 1 --answer-tokens 128 --decode-tps 100 \
      >/dev/null &
  servers+=($!)
done
sleep 1

# One shard (or the whole run when SHARD is ""): run, then export. Exit 1 (some tasks ended in
# environment errors, e.g. no sandbox for the code tasks here) still exports.
run_one() {
  local name=$1 port=$2 shard=$3
  local args=(suite "$suite" --endpoint "http://127.0.0.1:$port" --no-speed --no-env --quiet
              --db "$work/$name.db" --out "$work/$name-report")
  [ -n "$shard" ] && args+=(--shard "$shard")
  "$evalrun" "${args[@]}" || test $? -eq 1
  local run
  run=$("$evalrun" runs --db "$work/$name.db" | awk 'NR == 2 {print $1}')
  "$evalrun" export "$run" --db "$work/$name.db" --out "$work/$name.evalrun.json" 2>/dev/null
}

now() { date +%s.%N; }
printf '%-8s %10s %10s\n' shards wall_s merge_s
start=$(now)
run_one whole 18430 ""
printf '%-8s %10.1f %10s\n' "none" "$(echo "$(now) - $start" | bc)" "-"
for ((n = 1; n <= max; n++)); do
  start=$(now)
  pids=()
  for ((i = 0; i < n; i++)); do
    run_one "n$n-s$i" $((18430 + i)) "$i/$n" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid"; done
  wall=$(echo "$(now) - $start" | bc)
  start=$(now)
  "$evalrun" merge "$work"/n$n-s*.evalrun.json --out "$work/n$n.evalrun.json" 2>/dev/null
  merge=$(echo "$(now) - $start" | bc)
  "$evalrun" verify "$work/n$n.evalrun.json" >/dev/null || test $? -eq 4
  printf '%-8s %10.1f %10.2f\n' "$n" "$wall" "$merge"
done
