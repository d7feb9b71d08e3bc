#!/usr/bin/env bash
# The main job on a machine with no model server: install, build, start `evalrun mock-server`
# (TTFT 200 ms, 50 tokens/s, 4 tokens per event like speculative decoding) and run
# `evalrun speed` against it. Pass --endpoint URL to measure a real server instead; any other
# arguments go to `evalrun speed`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh >/dev/null
bash scripts/build.sh
evalrun=build/runner/evalrun

if printf '%s\n' "$@" | grep -q -- '^--endpoint'; then
  exec "$evalrun" speed "$@"
fi

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$evalrun" mock-server --port "$port" --ttft-ms 200 --decode-tps 50 --tokens-per-event 4 \
  --prefill-tps 20000 >/dev/null &
mock=$!
trap 'kill $mock 2>/dev/null; wait $mock 2>/dev/null || true' EXIT
for _ in $(seq 50); do
  curl -fsS "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break
  sleep 0.1
done
"$evalrun" speed --endpoint "http://127.0.0.1:$port" -p 512,2048 -n 64 -r 2 -c 1,4 \
  --label demo=mock-server "$@"
