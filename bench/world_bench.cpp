// The cost of an execution world outside the model (issue 6, "Performance"): zx-bench's
// TC-CN-055-RECOVERY-1 world run through RunWorldLoop for eight turns, each turn a scripted model
// that sleeps for its "thinking" and calls query_order (the last turn also replies with SAY).
// Goal: a world task with eight turns spends under 5% of its wall time outside the model. Runs
// each model speed with one sandboxed driver per episode (the default) and with one sandbox and
// python3 per call (WorldLimits::process_per_call, the old way), and prints, per tool call, the
// driver's start-up, the exchange, evalrun's recording, and the share of the episode's wall time
// spent outside the model. Exits 1 when the per-episode driver misses the goal, 2 when worlds
// cannot run here.
//
//   build/bench/world_bench [MS_PER_TURN ...]     (default: 2000 500)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "plugins/sandbox.h"
#include "runner/agent/world_runtime.h"
#include "runner/agent/zx_world_loop.h"

namespace {

using evalrun::zx::ordered_json;

// The parts of tests/fixtures/zx-bench/fixtures.json's TC-CN-055-RECOVERY-1 the loop reads.
constexpr const char* kEntry = R"JSON({
  "id": "TC-CN-055-RECOVERY-1",
  "promptTemplate": "只查询订单 67890 的状态并回复，不要取消或退款。",
  "grader": "tool_call_trace",
  "graderVersion": "tool_trace_v5",
  "requirements": {"executionWorld": {
    "maxTurns": 8,
    "scoreMode": "strict",
    "initialState": {"orders": {"67890": "运输中"}, "queries": 0, "cancellations": [],
                     "refunds": [], "other": "keep"},
    "tools": [
      {"name": "query_order", "kind": "script", "path": "business", "requiredArgs": {"id": "string"},
       "script": "if args['id'] not in state['orders']: raise ValueError('ORDER_NOT_FOUND')\nstate['queries']+=1; result={'status':state['orders'][args['id']]}",
       "description": "只读订单状态。"},
      {"name": "cancel_order", "kind": "script", "path": "business", "requiredArgs": {"id": "string"},
       "script": "state['cancellations'].append(args['id']); result={'cancelled':True}",
       "description": "取消订单副作用。"},
      {"name": "refund_order", "kind": "script", "path": "business", "requiredArgs": {"id": "string"},
       "script": "state['refunds'].append(args['id']); result={'refunded':True}",
       "description": "退款副作用。"}],
    "requiredCalls": [{"tool": "query_order", "args": {"id": "67890"}}],
    "forbiddenCalls": ["cancel_order", "refund_order"],
    "expectedState": [{"path": "queries", "atLeast": 1}, {"path": "cancellations", "equals": []},
                      {"path": "refunds", "equals": []}],
    "unchangedState": ["orders", "other"],
    "finalMessageMustContain": ["67890", "运输中"]
  }}
})JSON";

constexpr int kTurns = 8;

struct Stats {
  double mean = 0;
  double median = 0;
};

Stats Of(std::vector<double> values) {
  Stats s;
  if (values.empty()) return s;
  for (double v : values) s.mean += v;
  s.mean /= static_cast<double>(values.size());
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  s.median = n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  return s;
}

struct Episode {
  int score = -1;
  size_t calls = 0;
  int starts = 0;          // driver start-ups (per-episode driver: 1)
  Stats start_ms;          // over the calls that started one
  Stats exchange_ms;       // sandbox_ms: the exchange (per call: the whole Sandbox::Run)
  Stats recording_ms;      // total - start - exchange: request building, parsing, recording
  Stats script_ms;         // the tool's own Python
  double wall_ms = 0;      // RunWorldLoop's
  double model_ms = 0;
  double outside_ms = 0;
  double tools_ms = 0;     // the calls' total_ms, summed
  double teardown_ms = 0;  // after RunWorldLoop returned its grade: the World's destructor
};

Episode Run(const evalrun::zx::WorldConfig& config, const std::string& task,
            const evalrun::Sandbox& sandbox, int ms_per_turn, bool process_per_call) {
  int turn = 0;
  const evalrun::zx::ModelTurn model = [&](const nlohmann::json&, double) {
    ++turn;
    std::this_thread::sleep_for(std::chrono::milliseconds(ms_per_turn));
    evalrun::zx::TurnReply reply;
    reply.finish_reason = "stop";
    reply.content = "CALL query_order {\"id\":\"67890\"}";
    if (turn == kTurns) reply.content += "\nSAY 订单 67890 当前状态：运输中。";
    return reply;
  };
  evalrun::zx::WorldLoopOptions options;
  options.limits.process_per_call = process_per_call;
  const auto t0 = std::chrono::steady_clock::now();
  evalrun::zx::WorldLoopResult r =
      evalrun::zx::RunWorldLoop(config, task, model, &sandbox, "tool_call_trace@tool_trace_v5",
                                options);
  const double outer_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  Episode e;
  e.score = r.grade.evidence.value("zx_score", -1);
  e.calls = r.episode.events.size();
  std::vector<double> start, exchange, recording, script;
  for (const auto& event : r.episode.events) {
    if (event.start_ms > 0) {
      ++e.starts;
      start.push_back(event.start_ms);
    }
    exchange.push_back(event.sandbox_ms);
    recording.push_back(event.total_ms - event.start_ms - event.sandbox_ms);
    script.push_back(event.script_ms);
    e.tools_ms += event.total_ms;
  }
  e.start_ms = Of(start);
  e.exchange_ms = Of(exchange);
  e.recording_ms = Of(recording);
  e.script_ms = Of(script);
  e.wall_ms = r.wall_ms;
  e.model_ms = r.model_ms;
  e.outside_ms = r.outside_model_ms();
  e.teardown_ms = outer_ms - r.wall_ms;
  return e;
}

void Print(const char* mode, const Episode& e) {
  std::printf("  %-22s score %3d, %zu calls, %d start%s | start %7.1f ms | exchange mean %6.2f "
              "median %6.2f ms | recording mean %5.2f median %5.2f ms | script mean %5.3f ms\n",
              mode, e.score, e.calls, e.starts, e.starts == 1 ? " " : "s", e.start_ms.mean,
              e.exchange_ms.mean, e.exchange_ms.median, e.recording_ms.mean,
              e.recording_ms.median, e.script_ms.mean);
  std::printf("  %-22s wall %8.1f ms, model %8.1f ms, outside the model %6.1f ms = %5.2f%% "
              "(tool calls %.1f ms, the rest of the loop %.1f ms: launching the driver, prompts, "
              "parsing, scoring; + %.1f ms teardown after the grade)\n",
              "", e.wall_ms, e.model_ms, e.outside_ms, 100 * e.outside_ms / e.wall_ms, e.tools_ms,
              e.outside_ms - e.tools_ms, e.teardown_ms);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> speeds;
  for (int i = 1; i < argc; ++i) speeds.push_back(std::atoi(argv[i]));
  if (speeds.empty()) speeds = {2000, 500};

  const std::unique_ptr<evalrun::Sandbox> sandbox = evalrun::MakeBubblewrapSandbox();
  if (auto why = evalrun::zx::WorldUnavailable(sandbox.get())) {
    std::printf("world_bench: execution worlds cannot run here: %s\n", why->c_str());
    return 2;
  }
  const ordered_json entry = ordered_json::parse(kEntry);
  const evalrun::zx::WorldConfig config = evalrun::zx::ParseWorldConfig(entry);
  const std::string task = entry["promptTemplate"].get<std::string>();
  std::printf("world_bench: %s, %d turns, one query_order call per turn, %s\n",
              config.entry_id.c_str(), kTurns, sandbox->Describe().c_str());
  // What the first call would wait with no model turn to boot behind: launch, then call at once.
  std::vector<double> boot, launch;
  for (int i = 0; i < 5; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    evalrun::zx::World world(config, *sandbox);
    launch.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    boot.push_back(world.Call("query_order", {{"id", "67890"}}).start_ms);
  }
  std::printf("driver start-up, 5 runs: launch (in World's constructor) mean %.1f ms; boot "
              "(bubblewrap + python3, waited for by a call made at once) mean %.1f median "
              "%.1f ms\n",
              Of(launch).mean, Of(boot).mean, Of(boot).median);
  std::printf("  (in an episode the driver boots while the model takes its first turn; 'start' "
              "below is what the first call still waited)\n");
  bool met = true;
  for (int ms : speeds) {
    std::printf("model %d ms per turn:\n", ms);
    const Episode session = Run(config, task, *sandbox, ms, false);
    Print("driver per episode", session);
    const Episode per_call = Run(config, task, *sandbox, ms, true);
    Print("process per call (old)", per_call);
    std::printf("  outside-the-model time: %.1f ms vs %.1f ms (%.1fx less); goal < 5%%: %s\n",
                session.outside_ms, per_call.outside_ms,
                session.outside_ms > 0 ? per_call.outside_ms / session.outside_ms : 0.0,
                100 * session.outside_ms / session.wall_ms < 5 ? "met" : "MISSED");
    met = met && 100 * session.outside_ms / session.wall_ms < 5;
  }
  return met ? 0 : 1;
}
