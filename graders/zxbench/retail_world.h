#pragma once
// zx-bench's agent-loop world (agent_loop_trace, agent_loop_v1): the retail customer-service
// engine, the text protocol its loop speaks and the trace its grader scores. Written for evalrun
// from the behaviour of zx-bench's agentLoop/retailRuntime.ts and loop.ts (Little-Star888/zx-bench
// at a5f6a19; docs/upstream/zx-bench-agent-loop.md): the same ten tools with the same checks,
// texts and state changes, the same prompts and CALL parsing. The loop that drives a model
// through it is runner/agent/zx_agent_loop.h; the grader graders/zxbench/agent_loop_trace.cpp.
//
// State and results are ordered_json so that what the model is shown (JSON.stringify of a
// result) keeps the entry's key order, as zx-bench's does.
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/js_value.h"

namespace evalrun::zx {

using ordered_json = js::ordered_json;

struct RetailViolation {
  std::string code;
  std::string detail;
  bool blocked = false;  // refused by the engine (an attempt); false: it took effect
};

// One tool call as executed: `result` is what the model is shown.
struct RetailCall {
  std::string tool;
  ordered_json args = ordered_json::object();
  bool ok = false;
  ordered_json result;
  std::vector<RetailViolation> violations;
};

// requirements.agentLoop.
struct AgentLoopConfig {
  ordered_json state;  // the initial world
  int max_turns = 1;   // max(1, maxTurns)
  std::vector<std::string> user_script;
  bool strict = false;             // backend "docker": strict parsing and argument checks
  std::string policy;              // "" : the retail policy
  std::vector<std::string> tools;  // empty: all ten
};

// Parses requirements.agentLoop of a bank entry; throws evalrun::Error naming what is wrong.
AgentLoopConfig ParseAgentLoopConfig(const ordered_json& entry);
// Whether the entry has requirements.agentLoop (zx-bench then runs the loop, whatever the grader).
bool HasAgentLoop(const nlohmann::json& entry);

// The system prompt (buildAgentSystemPrompt with the policy, item 9 when approvals are
// required, and the allowed tools' catalogue), word for word.
std::string AgentLoopSystemPrompt(const AgentLoopConfig& config);

// The allowed tools (the config's list, else all ten, in the catalogue's order).
std::vector<std::string> AgentLoopTools(const AgentLoopConfig& config);

// parseToolCalls: the CALL (or 调用) lines of a reply, split on '\n'. Strict: a malformed CALL
// line or arguments that are not one JSON object throw AgentLoopProtocolError with zx-bench's
// code ("INVALID_CALL_SYNTAX", "INVALID_CALL_ARGS"); lenient: bare `tool({...})` lines of a
// retail tool count too and bad JSON falls back to key=value pairs.
class AgentLoopProtocolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
struct ParsedCall {
  std::string tool;
  ordered_json args = ordered_json::object();
};
std::vector<ParsedCall> ParseAgentLoopCalls(std::string_view reply, bool strict);

// One call dispatched as the loop does: a tool outside the allowed list, then (strict) arguments
// that do not fit the tool's parameters, else executeRetailTool on `state`.
RetailCall DispatchRetailCall(ordered_json& state, const AgentLoopConfig& config,
                              const ParsedCall& call);

// extractFinalMessage: the SAY (回复, 说明) lines of the last turn that has any, else the last
// reply trimmed.
std::string AgentLoopFinalMessage(const std::vector<std::string>& replies);

// Whether a reply line is a protocol line (format_valid): /^\s*(?:CALL|调用|SAY|回复|说明)\s+/.
bool HasProtocolLine(std::string_view reply);

ordered_json ViolationToJson(const RetailViolation& v);
ordered_json CallToJson(const RetailCall& call);

}  // namespace evalrun::zx
