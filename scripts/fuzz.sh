#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) with Debian's clang in build-fuzz/ and runs each for a
# bounded time, starting from its seed corpus (copied from tests/fixtures). Exits non-zero when a
# target crashes (a crash-* file is left in build-fuzz/findings/<target>/; turn it into a
# regression test). Prints each target's run count.
#   scripts/fuzz.sh [SECONDS_PER_TARGET]   (default 60)
# The seed is fixed (EVALRUN_FUZZ_SEED, default 1) so that CI repeats the same inputs and a red run
# means the code changed, not the dice; set EVALRUN_FUZZ_SEED=0 for a fresh random seed when
# fuzzing by hand for longer.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
jobs="${EVALRUN_FUZZ_JOBS:-2}"
fuzz_seed="${EVALRUN_FUZZ_SEED:-1}"
build=build-fuzz

cxx=""
for candidate in clang++ clang++-19 clang++-16 clang++-14; do
  if command -v "$candidate" >/dev/null 2>&1; then cxx="$candidate"; break; fi
done
if [ -z "$cxx" ]; then
  echo "fuzz: no clang++ found (scripts/install-deps.sh installs clang and libclang-rt-dev)" >&2
  exit 2
fi

launcher=()
command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$cxx" \
  -DEVALRUN_FUZZ=ON -DEVALRUN_BUILD_TESTS=OFF -DEVALRUN_BUILD_BENCH=OFF "${launcher[@]}" >/dev/null
targets=(sse_parser_fuzz chunk_reader_fuzz task_yaml_fuzz bundle_fuzz js_date_fuzz)
cmake --build "$build" -j"$jobs" --target "${targets[@]}"

# Seed corpora: the fixtures each parser is meant for, and the crashes found so far (fuzz/regressions).
seed() {
  local target=$1; shift
  local dir="$build/corpus/$target"
  mkdir -p "$dir"
  for f in "$@"; do [ -f "$f" ] && cp -f "$f" "$dir/" || true; done
}
seed sse_parser_fuzz tests/fixtures/sse/* fuzz/regressions/sse_parser/*
# One chunk per line of the captured streams: the `data:` payloads.
mkdir -p "$build/corpus/chunk_reader_fuzz"
n=0
for f in tests/fixtures/sse/*; do
  while IFS= read -r line; do
    case "$line" in
      data:\ \{*)
        n=$((n + 1))
        printf '%s' "${line#data: }" | tr -d '\r' > "$build/corpus/chunk_reader_fuzz/chunk-$n.json"
        [ "$n" -ge 200 ] && break 2;;
    esac
  done < "$f"
done
seed chunk_reader_fuzz fuzz/regressions/chunk_reader/*
seed task_yaml_fuzz $(find tests/fixtures/tasks tasks/smoke -name '*.yaml' | head -100) fuzz/regressions/task_yaml/*
seed bundle_fuzz $(find tests/fixtures -name '*.evalrun.json' | head -20) fuzz/regressions/bundle/*
# The strings Node 20 answered (tests/fixtures/js_date_node20.json), one file each.
mkdir -p "$build/corpus/js_date_fuzz"
python3 - "$build/corpus/js_date_fuzz" <<'PY'
import json, sys
cases = json.load(open('tests/fixtures/js_date_node20.json', encoding='utf-8'))['cases']
for i, (text, _) in enumerate(cases[:400]):
    open(f'{sys.argv[1]}/date-{i}', 'wb').write(text.encode('utf-8', 'surrogatepass'))
PY
seed js_date_fuzz fuzz/regressions/js_date/*

status=0
for target in "${targets[@]}"; do
  findings="$build/findings/$target"
  mkdir -p "$findings"
  log="$build/$target.log"
  max_len=65536
  [ "$target" = bundle_fuzz ] && max_len=262144  # the seed bundle is ~120 KB
  echo "fuzz: $target for ${seconds}s"
  if "$build/fuzz/$target" "$build/corpus/$target" -max_total_time="$seconds" -seed="$fuzz_seed" -rss_limit_mb=2048 \
      -timeout=10 -max_len="$max_len" -artifact_prefix="$findings/" -print_final_stats=1 >"$log" 2>&1; then
    runs=$(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
    echo "fuzz: $target: ok, $runs runs"
  else
    status=1
    echo "fuzz: $target: FAILED (log: $log; findings: $findings)" >&2
    tail -40 "$log" >&2
  fi
done
exit $status
