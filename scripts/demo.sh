#!/usr/bin/env bash
# The main job on a machine with no model server: install, build, start `evalrun mock-server`
# (TTFT 120 ms, 120 tokens/s, 4 tokens per event like speculative decoding) with the smoke
# suite's answer table (some answers right, some wrong, deterministically), run the built-in
# smoke suite against it with `evalrun suite` (grades, speed per request, then the quick speed
# protocol), and write report.md, report.html and card.svg to demo-output/; then the agent suite
# (tasks/agent: a tool-calling world and a repository bug fix, in the sandbox) against a mock
# scripted with tool calls, its report in demo-output/agent/. Pass --endpoint URL to
# run the smoke suite against a real server instead; any other arguments go to `evalrun suite`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh >/dev/null
bash scripts/build.sh
evalrun=build/runner/evalrun
out=demo-output
mkdir -p "$out"

if printf '%s\n' "$@" | grep -q -- '^--endpoint'; then
  exec "$evalrun" suite tasks/smoke --db "$out/evalrun.db" --out "$out" "$@"
fi

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$evalrun" mock-server --port "$port" --ttft-ms 120 --decode-tps 120 --tokens-per-event 4 \
  --prefill-tps 20000 --answers tasks/smoke/mock-answers.json >/dev/null &
mock=$!
trap 'kill $mock 2>/dev/null; wait $mock 2>/dev/null || true' EXIT
for _ in $(seq 50); do
  curl -fsS "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break
  sleep 0.1
done
"$evalrun" suite tasks/smoke --endpoint "http://127.0.0.1:$port" --db "$out/evalrun.db" \
  --out "$out" --label demo=mock-server "$@"

# The agent suite: a second mock whose answers are whole tool-calling conversations.
agent_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$evalrun" mock-server --port "$agent_port" --ttft-ms 120 --decode-tps 120 --tokens-per-event 4 \
  --prefill-tps 20000 --answers tasks/agent/mock-answers.json >/dev/null &
agent_mock=$!
trap 'kill $mock $agent_mock 2>/dev/null; wait $mock $agent_mock 2>/dev/null || true' EXIT
for _ in $(seq 50); do
  curl -fsS "http://127.0.0.1:$agent_port/health" >/dev/null 2>&1 && break
  sleep 0.1
done
"$evalrun" suite tasks/agent --endpoint "http://127.0.0.1:$agent_port" --db "$out/evalrun.db" \
  --out "$out/agent" --no-speed --label demo=mock-server "$@"
"$evalrun" runs --db "$out/evalrun.db"
