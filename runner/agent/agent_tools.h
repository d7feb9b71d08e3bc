#pragma once
// What an agent task lets the model do (DESIGN.md section 9): a set of tools offered as OpenAI
// `tools`, each call executed by evalrun. The agent loop (runner/agent/agent_loop.h) is written against
// this interface only; the simulated worlds (runner/agent/world_tools.h) and the repository workspace
// (runner/agent/repo_tools.h) implement it. Not thread-safe: one object per episode.
#include <string>

#include <nlohmann/json.hpp>

namespace evalrun {

// The result of one tool call, as the model will see it and as the transcript records it.
struct ToolOutcome {
  // What goes back to the model in the `role: tool` message (already cut to the task's
  // observation limit by the tool set; the loop cuts again to its own limit if larger).
  std::string observation;
  // false: the call failed (unknown tool, bad arguments, the command failed to start, ...). The
  // episode goes on; the failure is part of what the model sees.
  bool ok = true;
  // true: the model submitted (the `submit` tool, or a world's final answer). The loop stops
  // with termination reason `completed` after this call.
  bool submitted = false;
  // Whatever the tool set wants recorded beside the call in the transcript (exit code, timing,
  // files changed, sandbox refusals). An object, or null.
  nlohmann::json record;
  // Milliseconds evalrun spent on the call (sandbox start, state load, running, recording).
  double elapsed_ms = 0;
};

class AgentTools {
 public:
  virtual ~AgentTools() = default;
  // The OpenAI `tools` array: [{"type": "function", "function": {name, description,
  // parameters}}]. Stable for the episode.
  virtual nlohmann::json Schemas() const = 0;
  // Runs one call. `arguments` is the parsed JSON object the model gave (the loop answers
  // malformed argument text itself and never calls Execute with it). Never throws for what the
  // model asks; an unknown tool name is an ok=false outcome naming the tools there are.
  virtual ToolOutcome Execute(const std::string& name, const nlohmann::json& arguments) = 0;
};

}  // namespace evalrun
