// zx-bench's world loop (runner/agent/zx_world_loop.h). L = packages/core/src/execution/worldLoop.ts of
// suncityldp/zx-bench at 8e0adf68; line numbers of that file.
#include "runner/agent/zx_world_loop.h"

#include <cctype>

#include "core/js_value.h"
#include "core/clock.h"
#include "core/speed_result.h"
#include "graders/zxbench/common.h"
#include "plugins/http_client.h"

namespace evalrun::zx {

using js::IsJsSpace;
using js::JsStringify;
using js::NextCodePoint;

namespace {

using json = nlohmann::json;

constexpr const char* kContinuePrompt = "（系统）如需继续操作请调用工具；完成后请用 SAY 回复。";

bool StartsWithWord(std::string_view line, std::string_view word, bool end_ok) {
  if (line.substr(0, word.size()) != word) return false;
  if (line.size() == word.size()) return end_ok;
  size_t i = word.size();
  return IsJsSpace(NextCodePoint(line, i));
}

size_t SkipSpace(std::string_view s, size_t i) {
  while (i < s.size()) {
    size_t next = i;
    if (!IsJsSpace(NextCodePoint(s, next))) break;
    i = next;
  }
  return i;
}

bool NameStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool NameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
}

// JavaScript's `.` does not match \n, \r, U+2028 or U+2029.
bool HasLineTerminator(std::string_view s) {
  return s.find('\r') != std::string_view::npos || s.find('\n') != std::string_view::npos ||
         s.find("\xE2\x80\xA8") != std::string_view::npos ||
         s.find("\xE2\x80\xA9") != std::string_view::npos;
}

// /^CALL\s+([A-Za-z_][\w.-]*)\s+(\{.*\})\s*$/ (L93): the name and the braces, or nullopt.
std::optional<std::pair<std::string_view, std::string_view>> MatchCall(std::string_view line) {
  size_t i = 4;
  const size_t after_call = SkipSpace(line, i);
  if (after_call == i) return std::nullopt;
  i = after_call;
  if (i >= line.size() || !NameStart(line[i])) return std::nullopt;
  const size_t name_start = i;
  while (i < line.size() && NameChar(line[i])) ++i;
  const std::string_view name = line.substr(name_start, i - name_start);
  const size_t after_name = SkipSpace(line, i);
  if (after_name == i || after_name >= line.size() || line[after_name] != '{') return std::nullopt;
  // `.*` is greedy: the braces end at the last '}' that only whitespace follows.
  const size_t close = line.rfind('}');
  if (close == std::string_view::npos || close < after_name) return std::nullopt;
  if (SkipSpace(line, close + 1) != line.size()) return std::nullopt;
  const std::string_view braces = line.substr(after_name, close + 1 - after_name);
  if (HasLineTerminator(braces)) return std::nullopt;
  return std::make_pair(name, braces);
}

}  // namespace

bool LooksLikeTimeout(const std::string& message) {
  std::string lower;
  for (char c : message) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower.find("timeout") != std::string::npos || lower.find("timed out") != std::string::npos;
}

std::vector<WorldCall> ParseWorldCalls(std::string_view text) {
  std::vector<WorldCall> calls;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t nl = text.find('\n', start);  // L90: split('\n'), a '\r' stays on the line
    const std::string_view line =
        text.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    if (StartsWithWord(line, "SAY", true)) break;
    if (StartsWithWord(line, "CALL", false)) {
      const auto match = MatchCall(line);
      if (!match) throw WorldProtocolError("INVALID_CALL_SYNTAX");
      ordered_json args;
      try {
        args = ordered_json::parse(match->second);
      } catch (const nlohmann::json::exception& e) {  // parse_error; out_of_range for 1e999
        throw WorldProtocolError(std::string("invalid JSON in CALL arguments: ") + e.what());
      }
      if (!args.is_object()) throw WorldProtocolError("INVALID_CALL_ARGS");
      calls.push_back({std::string(match->first), std::move(args)});
    }
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  return calls;
}

std::string WorldSystemPrompt(const WorldConfig& config, bool answer_first) {
  std::vector<std::string> lines = {
      "你必须通过下面的模拟工具完成用户任务。工具会真实运行并保留状态。",
      "每个工具调用单独一行：CALL <工具名> {\"参数名\":值}；面向用户的答复为 SAY <内容>。"};
  if (answer_first) {
    lines.push_back(
        "本次先答约束也允许使用 ANSWER: <内容> 交付最终答复；该答复所在轮不能同时调用工具。");
  }
  lines.push_back("SAY 开始最终答复，正文可以有多行；所有工具调用必须在 SAY 之前。");
  lines.push_back("参数必须是合法 JSON。不能声称未实际执行的动作已经完成。");
  lines.push_back("可用工具：");
  for (const auto& tool : config.tools) {
    lines.push_back(tool.name + "(" + JsStringify(tool.required_args) + ")" +
                    (tool.description.empty() ? "" : ": " + tool.description));
  }
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) out += (i ? "\n" : "") + lines[i];
  return out;
}

WorldLoopResult RunWorldLoop(const WorldConfig& config, std::string_view task,
                             const ModelTurn& model, const Sandbox* sandbox,
                             std::string_view evaluator, const WorldLoopOptions& options) {
  const TimePoint t0 = Clock::now();
  WorldLoopResult out;
  WorldEpisode& episode = out.episode;
  episode.initial_state = config.initial_state;
  episode.final_state = config.initial_state;
  episode.hard_timeout_ms = options.hard_timeout_s * 1000;
  episode.answer_first_requested = options.answer_first;
  const std::string system = WorldSystemPrompt(config, options.answer_first);
  json& transcript = out.transcript;
  transcript = {{"schema_version", 1},
                {"entry", config.entry_id},
                {"system", system},
                {"turns", json::array()}};
  auto finish = [&] {
    out.wall_ms = NanosToMs(NanosBetween(t0, Clock::now()));
    transcript["wall_ms"] = out.wall_ms;
    transcript["model_ms"] = out.model_ms;
    transcript["outside_model_ms"] = out.outside_model_ms();
    transcript["termination_reason"] = episode.termination_reason;
    transcript["turn_errors"] = episode.turn_errors;
    out.grade.evidence["wall_ms"] = out.wall_ms;
    out.grade.evidence["model_ms"] = out.model_ms;
    out.grade.evidence["outside_model_ms"] = out.outside_model_ms();
    out.grade.evidence["outside_model_share"] =
        out.wall_ms > 0 ? out.outside_model_ms() / out.wall_ms : 0.0;
  };

  if (auto why = WorldUnavailable(sandbox)) {
    out.grade.status = GradeStatus::kSkipped;
    out.grade.reason = "execution world cannot run here: " + *why;
    transcript["skipped"] = *why;
    finish();
    return out;
  }
  World world(config, *sandbox, options.limits);

  std::vector<std::string> folded;  // L124, L169-170: the transcript folded into the next prompt
  std::string pending(task);
  std::string termination = "turn_limit";
  std::string last_raw;
  int last_calls = 0;
  bool any_turn = false;
  for (int turn = 1; turn <= config.max_turns; ++turn) {
    const TimePoint t_turn = Clock::now();
    // L137-138.
    const double remaining_ms = episode.hard_timeout_ms - NanosToMs(NanosBetween(t0, t_turn));
    if (remaining_ms <= 0) {
      episode.turn_errors.push_back("WORLD_TOTAL_TIMEOUT");
      termination = "timeout";
      break;
    }
    // L139: [transcript.join('\n'), `【本轮用户】\n${pendingUser}`].filter(Boolean).join('\n\n').
    std::string user;
    for (size_t i = 0; i < folded.size(); ++i) user += (i ? "\n" : "") + folded[i];
    if (!user.empty()) user += "\n\n";
    user += "【本轮用户】\n" + pending;
    const json messages = json::array(
        {{{"role", "system"}, {"content", system}}, {{"role", "user"}, {"content", user}}});
    const TimePoint t_model = Clock::now();
    TurnReply reply = model(messages, remaining_ms / 1000.0);
    const double model_ms = NanosToMs(NanosBetween(t_model, Clock::now()));
    out.model_ms += model_ms;

    json record = {
        {"turn", turn}, {"user_message", pending}, {"messages", messages}, {"model_ms", model_ms}};
    if (reply.record.t_send != TimePoint{}) {
      record["request"] = RecordToJson(reply.record, reply.record.t_send, false);
    }
    if (reply.error) {
      // L145-150.
      const bool timed_out = reply.timed_out || LooksLikeTimeout(reply.error_message);
      record["error"] = reply.error_message;
      transcript["turns"].push_back(record);
      if (turn == 1 && !timed_out) {
        episode.termination_reason = "model_error";
        episode.turn_errors.push_back("TURN_1_MODEL_ERROR: " + reply.error_message);
        out.grade.status = GradeStatus::kEnvError;
        out.grade.reason = "the first request failed: " + reply.error_message +
                           " (zx-bench does not score the episode)";
        finish();
        return out;
      }
      termination = timed_out ? "timeout" : "model_error";
      episode.turn_errors.push_back("TURN_" + std::to_string(turn) +
                                    "_MODEL_ERROR: " + reply.error_message);
      break;
    }
    episode.last_finish_reason = reply.finish_reason;
    const std::string& raw = reply.content;
    record["assistant_raw"] = raw;
    record["reasoning"] = reply.reasoning;
    record["finish_reason"] = reply.finish_reason;
    record["calls"] = json::array();
    any_turn = true;
    last_raw = raw;
    last_calls = 0;
    if (reply.finish_reason == "length") {  // L158-164
      episode.turn_errors.push_back("TURN_" + std::to_string(turn) + "_OUTPUT_TRUNCATED");
      termination = "truncated";
      record["loop_ms"] = NanosToMs(NanosBetween(t_turn, Clock::now())) - model_ms;
      transcript["turns"].push_back(record);
      break;
    }
    std::vector<WorldCall> calls;
    try {  // L165-172
      calls = ParseWorldCalls(raw);
    } catch (const WorldProtocolError& e) {
      termination = "protocol_error";
      episode.turn_errors.push_back("TURN_" + std::to_string(turn) +
                                    "_PROTOCOL_ERROR: " + e.what());
      record["protocol_error"] = e.what();
    }
    double tools_ms = 0;
    const size_t first_event = world.events().size();
    for (const auto& call : calls) {  // L175
      const WorldEvent& event = world.Call(call.tool, call.args);
      tools_ms += event.total_ms;
      record["calls"].push_back(ToJson(event));
    }
    last_calls = static_cast<int>(calls.size());
    // L178-179.
    folded.push_back("[用户] " + pending);
    folded.push_back("[助手] " + raw);
    for (size_t i = first_event; i < world.events().size(); ++i) {
      const WorldEvent& e = world.events()[i];
      folded.push_back("[工具 " + e.tool + "] " + JsStringify(e.result));
    }
    record["tools_ms"] = tools_ms;
    record["loop_ms"] = NanosToMs(NanosBetween(t_turn, Clock::now())) - model_ms - tools_ms;
    transcript["turns"].push_back(record);
    // L180-185.
    const bool scripted = static_cast<size_t>(turn - 1) < config.user_script.size();
    if (termination == "protocol_error") break;
    if (scripted) {
      pending = config.user_script[turn - 1].value_or("null");
      continue;
    }
    if (!ExtractWorldFinalMessage(raw, options.answer_first).empty()) {
      termination = "completed";
      break;
    }
    if (calls.empty()) {
      termination = "no_action";
      break;
    }
    pending = kContinuePrompt;
  }
  if (termination == "turn_limit") episode.turn_errors.push_back("WORLD_TURN_LIMIT");  // L187

  episode.termination_reason = termination;
  episode.final_state = world.state();
  episode.events = world.events();
  episode.has_turns = any_turn;
  episode.last_assistant_raw = last_raw;
  episode.last_turn_calls = last_calls;
  episode.final_message = ExtractWorldFinalMessage(last_raw, options.answer_first);
  episode.elapsed_ms = NanosToMs(NanosBetween(t0, Clock::now()));
  out.grade = ScoreWorldEpisode(config, episode, evaluator);
  out.grade.evidence["transcript_turns"] = transcript["turns"].size();
  finish();
  return out;
}

TurnReply SendChat(const std::string& endpoint, const ServerInfo& server, const ChatRequest& base,
                   const nlohmann::json& messages, double idle_timeout_s, double total_timeout_s) {
  ChatRequest chat = base;
  chat.messages = messages;
  const json body = BuildChatBody(chat, server);
  TurnReply reply;
  reply.record.max_tokens = chat.max_tokens;
  reply.record.label = "world-turn";
  {
    ChatStreamReader reader(reply.record);
    StreamingClient client(4);
    client.Add(MakeChatHttpRequest(endpoint, body, idle_timeout_s, total_timeout_s), &reader);
    client.Run();
  }
  const RequestRecord& r = reply.record;
  reply.content = r.content;
  reply.reasoning = r.reasoning;
  reply.finish_reason = r.finish_reason;
  if (!r.ok()) {
    reply.error = true;
    reply.timed_out =
        r.outcome == RequestOutcome::kIdleTimeout || r.outcome == RequestOutcome::kTotalTimeout;
    reply.error_message = std::string(OutcomeName(r.outcome)) +
                          (r.error_message.empty() ? "" : ": " + r.error_message);
  }
  return reply;
}

}  // namespace evalrun::zx
