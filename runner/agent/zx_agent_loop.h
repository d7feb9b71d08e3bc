#pragma once
// zx-bench's agent loop (agent_loop_trace entries, requirements.agentLoop): loop.ts's runAgentLoop
// around the retail world (graders/zxbench/retail_world.h). Each turn is one independent chat
// call, system and user, the earlier turns folded into the user message as a transcript; the
// model writes `CALL <tool> {json}` and `SAY <reply>` lines; its calls run on the world and their
// results join the transcript; the user's next messages are the entry's fixed userScript. The
// output is zx-bench's trace (what zxbench:agent_loop_trace scores); every turn is also recorded
// (messages, reply, request timing, calls) in a transcript.
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/grade.h"
#include "graders/zxbench/retail_world.h"
#include "runner/agent/zx_world_loop.h"

namespace evalrun::zx {

struct AgentLoopRun {
  // zx-bench's AgentLoopTrace: {initialState, turns: [{turn, userMessage, assistantRaw, calls:
  // [{tool, args, ok, result, violations}]}], turnsUsed, finalMessage, state, truncated,
  // turnErrors, elapsedMs}. Null when the first turn's request failed.
  ordered_json trace;
  // Set (kEnvError) when the first request failed: zx-bench's evaluation fails there and the
  // entry is left out.
  std::optional<Grade> failed;
  // {"schema_version": 1, "system", "turns": [{"turn", "user_message", "messages",
  // "assistant_raw", "reasoning", "finish_reason", "request", "calls", "protocol_error",
  // "model_ms", "tools_ms"}], "turn_errors", "wall_ms", "model_ms", "outside_model_ms"}.
  nlohmann::json transcript;
  std::string last_reasoning;
  std::string last_finish_reason;
};

// Runs one episode; `task` is the entry's promptTemplate, `hard_timeout_s` the episode's budget
// (each call gets what is left). Never throws for what the model does.
AgentLoopRun RunAgentLoopEpisode(const AgentLoopConfig& config, std::string_view task,
                                 const ModelTurn& model, double hard_timeout_s = 600);

}  // namespace evalrun::zx
