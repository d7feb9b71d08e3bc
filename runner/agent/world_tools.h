#pragma once
// Native evalrun world tasks driven through OpenAI tool calls (DESIGN.md section 9): a world in
// zx-bench's executionWorld shape (the task's agent.world) offered to the agent loop
// (runner/agent/agent_loop.h) as functions, each call run by a World (graders/zxbench/world.h), and the
// finished episode turned into the WorldEpisode the `world` grader scores (stored as the task's
// output with EpisodeToJson).
#include <string>

#include <nlohmann/json.hpp>

#include "plugins/sandbox.h"
#include "runner/agent/world_runtime.h"
#include "runner/agent/agent_loop.h"
#include "runner/agent/agent_tools.h"

namespace evalrun {

// The JSON-Schema `parameters` of a world tool: {"type": "object", "properties": {<arg>:
// {"type": <kind>}}, "required": [every arg], "additionalProperties": false}. requiredArgs maps
// each argument to one of zx-bench's kinds, string | number | boolean | object | array | any
// ("any", or a kind the driver does not know, gets the empty schema {}); the driver rejects a
// missing argument (INVALID_ARG_<name>) and an unknown one (UNKNOWN_ARG), so every argument is
// required and no other is allowed.
nlohmann::json WorldToolParameters(const zx::WorldTool& tool);

// A World as AgentTools. Not thread-safe; one per episode, on one thread (zx::World).
class WorldTools final : public AgentTools {
 public:
  // `config` and `sandbox` must outlive this object; the sandbox must be available
  // (zx::WorldUnavailable).
  WorldTools(const zx::WorldConfig& config, const Sandbox& sandbox, zx::WorldLimits limits = {});

  // [{"type": "function", "function": {"name", "description" (when the tool has one),
  // "parameters": WorldToolParameters}}], in the world's order.
  nlohmann::json Schemas() const override;
  // World::Call(name, arguments). observation: JsStringify of the result ({"error": <code>} for a
  // failed call; an unknown tool also lists "available_tools"); ok: the event's; record:
  // ToJson(WorldEvent); elapsed_ms: the event's total_ms. Unknown names are recorded calls too,
  // as zx-bench records them (TOOL_NOT_ALLOWED). Never submits: a world's final answer is a reply
  // without a call (AgentLoopOptions::text_reply_completes). Never throws.
  ToolOutcome Execute(const std::string& name, const nlohmann::json& arguments) override;

  const zx::World& world() const { return world_; }
  const zx::WorldConfig& config() const { return config_; }

 private:
  const zx::WorldConfig& config_;
  zx::World world_;
};

// The episode of a finished agent-loop run over `tools`' world, for ScoreWorldEpisode: has_turns
// false and final_message = the last assistant reply's content; the termination reason as the loop
// gave it, with the turn error zx-bench's own loop records for the same end (timeout
// "WORLD_TOTAL_TIMEOUT", turn_limit "WORLD_TURN_LIMIT", truncated "OUTPUT_TRUNCATED",
// protocol_error "PROTOCOL_ERROR", model_error "MODEL_ERROR"); the last request's finish reason;
// the calls and the final state; elapsed = the loop's wall time against `wall_budget_s`
// (AgentLimits::wall_s).
zx::WorldEpisode WorldEpisodeOf(const WorldTools& tools, const AgentLoopResult& result,
                                double wall_budget_s);

}  // namespace evalrun
