#pragma once
// The OpenAI tool-calling agent loop (DESIGN.md section 9, issue 6 item 1): sends the
// conversation with `tools`, reads the reply's tool calls (the server's native `tool_calls`, or,
// when it has none and a text format is selected, calls written as text: Qwen XML or Hermes,
// plugins/tool_call_text.h), runs each call through AgentTools, answers each with a
// `role: tool` message, and goes on until the model submits or replies without a call, or a
// step, token or time budget runs out, or repeated malformed calls end it (a format-error reply
// naming the problem and the tool schemas is sent first). Every turn is recorded with its request
// (timing and token counts), so agent tasks report throughput too.
//
// Termination reasons (one per episode):
//   completed       the model submitted (ToolOutcome::submitted), or, with
//                   text_reply_completes, replied without calling a tool
//   no_action       the model replied without calling a tool (text_reply_completes false)
//   protocol_error  max_format_errors malformed turns in a row (bad JSON arguments, unknown
//                   tool names are NOT format errors: they are failed calls the model sees)
//   model_error     a request failed (connection, HTTP, stream) for a reason other than time
//   timeout         the episode's wall budget ran out (or a request timed out)
//   turn_limit      max_steps model turns were made without an end
//   truncated       a reply was cut by max_tokens (finish_reason "length") with no usable call,
//                   or the episode's token budget ran out
//
// The model is a seam (STYLE.md 2): tests script it; SendAgentTurn is the real endpoint.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/request_record.h"
#include "plugins/openai_backend.h"
#include "plugins/server_probe.h"
#include "plugins/tool_call_text.h"
#include "runner/agent/agent_tools.h"

namespace evalrun {

struct AgentLimits {
  int max_steps = 30;                   // model turns
  int64_t max_total_tokens = -1;        // completion tokens over the episode; -1: no limit
  double wall_s = 1800;                 // the whole episode
  int max_format_errors = 3;            // malformed turns in a row before protocol_error
  size_t max_observation_bytes = 16384; // a tool result longer than this is cut (head + tail)
};

struct AgentLoopOptions {
  AgentLimits limits;
  // Where calls are read from when a reply has no native tool_calls: kNative reads none from
  // text; kQwenXml, kHermes, kAuto read that text format. Recorded per turn ("native",
  // "qwen_xml", "hermes") and for the episode.
  ToolCallFormat text_format = ToolCallFormat::kAuto;
  bool text_reply_completes = false;    // worlds: a reply without a call is the final answer
};

// Sends `request` (the whole conversation so far, with tools) and returns it as measured. A
// failed request comes back with its outcome set; the function does not throw for that.
// `remaining_s` is what is left of the episode's wall budget.
using AgentModel = std::function<RequestRecord(const ChatRequest& request, double remaining_s)>;

struct AgentLoopResult {
  std::string termination_reason;
  std::string final_message;            // the last assistant reply's content ("" when none)
  std::string tool_call_source;         // how calls were read: "native", "qwen_xml", "hermes",
                                        // "mixed", or "" when the model made none
  int steps = 0;                        // model turns made
  int tool_calls = 0;                   // calls executed
  int format_errors = 0;                // malformed turns, in all
  int64_t completion_tokens = 0;        // over the episode (usage, or estimates)
  std::vector<RequestRecord> requests;  // one per turn, in order, labels "agent-turn-<n>"
  // {"schema_version": 1, "termination_reason", "tool_call_source", "tools": <schemas>,
  //  "messages": <the initial messages>, "turns": [{"turn", "content", "reasoning",
  //  "finish_reason", "source", "format_error" (or absent), "text_errors" (or absent), "error"
  //  (a failed request; or absent), "calls": [{"id", "name", "arguments", "format", "ok",
  //  "submitted", "observation", "record", "elapsed_ms", "format_error" (or absent)}],
  //  "model_ms", "tools_ms"}], "wall_ms", "model_ms", "outside_model_ms"} (docs/agent.md)
  nlohmann::json transcript;
  double wall_ms = 0;                   // steady clock, the whole episode
  double model_ms = 0;                  // inside AgentModel
  double outside_model_ms() const { return wall_ms - model_ms; }
};

// A turn's tool calls as the loop reads them: the server's native `tool_calls` when the reply has
// any (its text is then left alone), else, unless `format` is kNative, the calls written as text
// in its content (plugins/tool_call_text.h). Pure; never throws.
struct TurnCalls {
  std::vector<ToolCall> calls;
  std::vector<std::string> formats;  // formats[i]: how calls[i] came ("native", "qwen_xml",
                                     // "hermes")
  std::string source;                // the turn's: "native", "qwen_xml", "hermes", "mixed" (both
                                     // text formats), "" when there are no calls
  std::vector<std::string> errors;   // text blocks that could not be read (TextToolCalls::errors)
};
TurnCalls ExtractTurnCalls(const RequestRecord& record, ToolCallFormat format);

// `text` cut to at most `max_bytes` bytes of it: the first and the last max_bytes / 2 bytes (each
// moved back to a UTF-8 character boundary), with a line between them saying how many bytes were
// left out: "\n[... 1234 bytes left out ...]\n". Text within the limit is returned as is.
std::string CutObservation(std::string_view text, size_t max_bytes);

// The tool list written into the system prompt for --tool-format hermes|qwen_xml, in the shape
// the models' own chat templates use (Hermes: the function schemas as JSON lines inside
// <tools></tools>; Qwen XML: Qwen3-Coder's <function><name>..<parameters> layout), ending with
// how to write a call. With those formats RunAgentLoop sends no `tools` field: this text is
// appended to the first system message (or becomes one), and the transcript's "tools_in" is
// "system_prompt" ("request" otherwise).
std::string ToolsSystemPrompt(const nlohmann::json& tools, ToolCallFormat format);

// Runs one episode. `base` holds the initial messages (system, user), model, max_tokens and
// sampling; the loop sets its tools from `tools.Schemas()` and appends to its messages.
// Never throws for what the model or the tools do.
AgentLoopResult RunAgentLoop(const ChatRequest& base, AgentTools& tools, const AgentModel& model,
                             const AgentLoopOptions& options = {});

// The real model: POST {endpoint}/v1/chat/completions, streamed, one attempt (the caller
// retries environment failures). Pass min(your total timeout, remaining_s) as total_timeout_s so
// a request cannot outlive the episode: it then comes back kTotalTimeout, which the loop ends
// with `timeout`. Never throws for what the server does; label "agent-turn".
RequestRecord SendAgentTurn(const std::string& endpoint, const ServerInfo& server,
                            const ChatRequest& request, double idle_timeout_s,
                            double total_timeout_s);

}  // namespace evalrun
