#pragma once
// The world runtime: zx-bench's execution worlds run without Docker (issue 6 item 2, FORMAT.md
// "Execution worlds"). A World runs one tool call at a time — the tool's Python `script` in
// python3 inside evalrun's sandbox, the JSON state kept here between calls — and records each
// call as a WorldEvent. The world's data (WorldConfig, WorldEvent, WorldEpisode) and the scoring
// of a finished episode are graders/zxbench/world.h, below this: the runtime produces what the
// grader scores. The loops that drive a World: runner/agent/zx_world_loop.h (zx-bench's text
// protocol) and runner/agent/world_tools.h (native tool calls).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "graders/zxbench/world.h"
#include "plugins/sandbox.h"

namespace evalrun::zx {

// Why worlds cannot run here ("bubblewrap (bwrap) is not installed: ...", "python3 is not
// installed"), or nullopt. `sandbox` null: no sandbox was configured.
std::optional<std::string> WorldUnavailable(const Sandbox* sandbox);

struct WorldLimits {
  SandboxLimits sandbox;  // per tool call; wall_seconds 10 by default
  // false (the default): one sandboxed python3 per episode (a SandboxSession) answers every
  // call; it is launched with the World and again right after a call that killed it. true, or a
  // sandbox that holds no sessions: a fresh sandbox and python3 for every call (slower by their
  // start-up; bench/world_bench.cpp measures both).
  bool process_per_call = false;
  // The session's whole life: CPU seconds (its RLIMIT_CPU; the driver still holds each call to
  // sandbox.cpu_seconds) and wall seconds (SandboxLimits::session_seconds).
  double session_cpu_seconds = 600;
  double session_seconds = 3600;
};

// The state of one episode and the tool calls made on it. Not thread-safe; one per episode, used
// on one thread, which must outlive it (SandboxSession).
class World {
 public:
  // `sandbox` must outlive the World and be available (see WorldUnavailable). Launches the
  // episode's driver (fork and exec; a few milliseconds) without waiting for it: bubblewrap and
  // python3 boot while the caller asks the model for its first turn, and the first call waits
  // only for what is left of that.
  World(const WorldConfig& config, const Sandbox& sandbox, WorldLimits limits = {});
  ~World();  // kills the episode's driver and everything it started
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  // Runs one call: the driver checks the tool exists and the arguments (TOOL_NOT_ALLOWED,
  // INVALID_ARGS, INVALID_ARG_<key>, UNKNOWN_ARG, PRIOR_CALL_REQUIRED, ...), runs the tool, and
  // the state changes only when it succeeds or sets tool_error (an exception rolls back), as
  // toolWorld.ts does. Never throws for what the script does.
  const WorldEvent& Call(const std::string& tool, const ordered_json& args);

  const ordered_json& state() const { return state_; }
  const std::vector<WorldEvent>& events() const { return events_; }

 private:
  struct DriverOutput;
  DriverOutput RunProcess(const std::string& request, WorldEvent& event);
  DriverOutput RunSession(const std::string& request, WorldEvent& event);
  void Launch();  // starts the driver's session without waiting for it

  const WorldConfig& config_;
  const Sandbox& sandbox_;
  WorldLimits limits_;
  std::unique_ptr<SandboxSession> session_;  // the episode's driver
  bool ready_ = false;                       // session_ answered the handshake
  bool sessions_unsupported_ = false;        // Sandbox::Start gave nullptr
  ordered_json tools_;  // the tool specs, as the driver reads them
  ordered_json state_;
  ordered_json history_ = ordered_json::array();  // what the driver's requirePriorCall reads
  std::vector<WorldEvent> events_;
};

}  // namespace evalrun::zx
