#pragma once
// zx-bench's text protocol for execution worlds (issue 6 item 2): the loop of
// packages/core/src/execution/worldLoop.ts (suncityldp/zx-bench at 8e0adf68) around a World
// (graders/zxbench/world.h). The system prompt lists the tools; the model writes one
// `CALL <tool> {json}` per line and then `SAY <reply>`; earlier turns are folded into the next
// user message; the episode ends completed | no_action | protocol_error | model_error |
// timeout | turn_limit | truncated and is scored as zx-bench scores it. Every turn is recorded
// (messages sent, reply, tool calls with results, timing) in a transcript.
//
// The model is a seam (STYLE.md 2): tests script it; SendChat is the real endpoint.
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/grade.h"
#include "core/request_record.h"
#include "plugins/sandbox.h"
#include "runner/agent/world_runtime.h"
#include "plugins/openai_backend.h"

namespace evalrun::zx {

// One model reply. `error`: the request failed (connection, HTTP, stream); `timed_out` says the
// failure was a timeout (L146: zx-bench matches /timeout|timed out/i on the error).
struct TurnReply {
  std::string content;
  std::string reasoning;
  std::string finish_reason;
  bool error = false;
  bool timed_out = false;
  std::string error_message;
  RequestRecord record;  // the request as measured; empty for a scripted model
};

// Sends `messages` (an OpenAI messages array: system, user) and returns the reply. Called on
// the loop's thread, once per turn; `remaining_s` is what is left of the episode's time.
using ModelTurn = std::function<TurnReply(const nlohmann::json& messages, double remaining_s)>;

struct WorldLoopOptions {
  double hard_timeout_s = 1200;  // the whole episode (zx-bench's hardTimeoutMs, L118)
  bool answer_first = false;     // the run asked for ANSWER: replies (L126, L61-67)
  WorldLimits limits;            // per tool call
};

struct WorldLoopResult {
  WorldEpisode episode;
  Grade grade;
  nlohmann::json transcript;  // schema_version 1; see RunWorldLoop
  // Steady-clock milliseconds: the whole episode, inside ModelTurn, and the rest (tool calls,
  // prompt building, parsing, recording) = evalrun's own time.
  double wall_ms = 0;
  double model_ms = 0;
  double outside_model_ms() const { return wall_ms - model_ms; }
};

// A CALL line as worldLoop.ts strictCalls reads it (L88-100).
struct WorldCall {
  std::string tool;
  ordered_json args;
};

// Thrown by ParseWorldCalls with zx-bench's code ("INVALID_CALL_SYNTAX", "INVALID_CALL_ARGS")
// or the JSON parser's message.
class WorldProtocolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The CALL lines before the first SAY line. Throws WorldProtocolError for a CALL line that is
// not `CALL <name> {json object}`; one bad line voids the turn's calls, as in zx-bench.
std::vector<WorldCall> ParseWorldCalls(std::string_view text);

// The system prompt of L122-130, word for word.
std::string WorldSystemPrompt(const WorldConfig& config, bool answer_first);

// Runs one episode: `task` is the entry's promptTemplate. When the world cannot run here
// (WorldUnavailable) the model is not called and the grade is kSkipped with the reason. A first
// turn whose request fails for a reason other than a timeout is kEnvError (zx-bench throws
// there, L147); later failures end the episode as model_error and it is scored. Never throws for
// what the model or the tools do.
//
// The transcript: {"schema_version": 1, "system": <prompt>, "termination_reason", "turn_errors",
// "turns": [{"turn", "user_message", "messages", "assistant_raw", "reasoning", "finish_reason",
// "request": RecordToJson (when the model was HTTP), "calls": [ToJson(WorldEvent)],
// "model_ms", "tools_ms", "loop_ms"}], "wall_ms", "model_ms", "outside_model_ms"}.
WorldLoopResult RunWorldLoop(const WorldConfig& config, std::string_view task,
                             const ModelTurn& model, const Sandbox* sandbox,
                             std::string_view evaluator, const WorldLoopOptions& options = {});

// /timeout|timed out/i, as zx-bench tells a timed-out model call from another failure.
bool LooksLikeTimeout(const std::string& message);

// The real model: POST {endpoint}/v1/chat/completions, streamed, `base` supplying model,
// max_tokens and sampling; its messages are replaced by `messages`. One attempt, no retries
// (the scheduler retries, as zx-bench's callModelWithRetry does).
TurnReply SendChat(const std::string& endpoint, const ServerInfo& server, const ChatRequest& base,
                   const nlohmann::json& messages, double idle_timeout_s, double total_timeout_s);

}  // namespace evalrun::zx
