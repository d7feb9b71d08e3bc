// zx-bench's agent loop (runner/agent/zx_agent_loop.h): loop.ts's runAgentLoop, step for step.
#include "runner/agent/zx_agent_loop.h"

#include "core/clock.h"
#include "core/js_value.h"
#include "core/speed_result.h"

namespace evalrun::zx {

namespace {

using json = nlohmann::json;

constexpr const char* kNudge =
    "（系统）如需继续操作请继续调用工具；若已完成，请用 SAY 给出最终答复。";

}  // namespace

AgentLoopRun RunAgentLoopEpisode(const AgentLoopConfig& config, std::string_view task,
                                 const ModelTurn& model, double hard_timeout_s) {
  AgentLoopRun out;
  const std::string system = AgentLoopSystemPrompt(config);
  json& transcript = out.transcript;
  transcript = {{"schema_version", 1}, {"system", system}, {"turns", json::array()}};
  const TimePoint t0 = Clock::now();
  double model_ms_total = 0;

  ordered_json state = config.state;
  ordered_json turns = ordered_json::array();
  std::vector<std::string> replies;
  std::vector<std::string> turn_errors;
  std::vector<std::string> folded;
  std::string pending(task);
  bool truncated = false;

  for (int turn = 1; turn <= config.max_turns; ++turn) {
    std::string user;
    if (!folded.empty()) {
      user = "【对话与操作记录】\n";
      for (size_t i = 0; i < folded.size(); ++i) user += (i ? "\n" : "") + folded[i];
      user += "\n\n";
    }
    user += "【本轮用户消息】\n" + pending + "\n\n【请输出第 " + std::to_string(turn) +
            " 轮回复（只输出协议规定的 CALL / SAY 行）】";
    const json messages = json::array(
        {{{"role", "system"}, {"content", system}}, {{"role", "user"}, {"content", user}}});
    const double elapsed_s = NanosToMs(NanosBetween(t0, Clock::now())) / 1000.0;
    const TimePoint t_model = Clock::now();
    TurnReply reply = model(messages, std::max(0.001, hard_timeout_s - elapsed_s));
    const double model_ms = NanosToMs(NanosBetween(t_model, Clock::now()));
    model_ms_total += model_ms;
    json record = {
        {"turn", turn}, {"user_message", pending}, {"messages", messages}, {"model_ms", model_ms}};
    if (reply.record.t_send != TimePoint{}) {
      record["request"] = RecordToJson(reply.record, reply.record.t_send, false);
    }
    if (reply.error) {
      record["error"] = reply.error_message;
      transcript["turns"].push_back(record);
      if (turn == 1) {  // zx-bench's loop throws: the evaluation fails, the entry is left out
        Grade failed;
        failed.status = GradeStatus::kEnvError;
        failed.reason = "the first request failed: " + reply.error_message +
                        " (zx-bench does not score the episode)";
        out.failed = failed;
        break;
      }
      const bool timeout = reply.timed_out || LooksLikeTimeout(reply.error_message);
      turn_errors.push_back("TURN_" + std::to_string(turn) + (timeout ? "_TIMEOUT: " : "_ERROR: ") +
                            reply.error_message);
      break;
    }
    if (reply.finish_reason == "length") truncated = true;
    out.last_reasoning = reply.reasoning;
    out.last_finish_reason = reply.finish_reason;
    const std::string& raw = reply.content;
    std::vector<ParsedCall> parsed;
    try {
      parsed = ParseAgentLoopCalls(raw, config.strict);
    } catch (const AgentLoopProtocolError& e) {
      turn_errors.push_back("TURN_" + std::to_string(turn) + "_PROTOCOL_ERROR: " + e.what());
      record["protocol_error"] = e.what();
    }
    const TimePoint t_tools = Clock::now();
    ordered_json calls = ordered_json::array();
    std::vector<RetailCall> executed;
    for (const ParsedCall& call : parsed) {
      executed.push_back(DispatchRetailCall(state, config, call));
      calls.push_back(CallToJson(executed.back()));
    }
    record["tools_ms"] = NanosToMs(NanosBetween(t_tools, Clock::now()));
    record["assistant_raw"] = raw;
    record["reasoning"] = reply.reasoning;
    record["finish_reason"] = reply.finish_reason;
    record["calls"] = json::parse(calls.dump());
    transcript["turns"].push_back(record);
    turns.push_back({{"turn", turn},
                     {"userMessage", pending},
                     {"assistantRaw", raw},
                     {"calls", std::move(calls)}});
    replies.push_back(raw);

    folded.push_back("[轮 " + std::to_string(turn) + " 用户] " + pending);
    const std::string_view trimmed = js::JsTrim(raw);
    folded.push_back("[轮 " + std::to_string(turn) + " Agent] " +
                     (trimmed.empty() ? std::string("（空回复）") : std::string(trimmed)));
    for (const RetailCall& c : executed) {
      folded.push_back("[工具 " + c.tool + "] " + js::JsStringify(c.result));
    }

    if (static_cast<size_t>(turn - 1) < config.user_script.size()) {
      pending = config.user_script[turn - 1];
      continue;
    }
    if (executed.empty() || turn == config.max_turns) break;
    pending = kNudge;
  }

  const double wall_ms = NanosToMs(NanosBetween(t0, Clock::now()));
  transcript["turn_errors"] = turn_errors;
  transcript["wall_ms"] = wall_ms;
  transcript["model_ms"] = model_ms_total;
  transcript["outside_model_ms"] = wall_ms - model_ms_total;
  if (out.failed) return out;
  const size_t used = turns.size();
  out.trace = {{"initialState", config.state},
               {"turns", std::move(turns)},
               {"turnsUsed", used},
               {"finalMessage", AgentLoopFinalMessage(replies)},
               {"state", std::move(state)},
               {"truncated", truncated},
               {"turnErrors", turn_errors},
               {"elapsedMs", wall_ms}};
  return out;
}

}  // namespace evalrun::zx
