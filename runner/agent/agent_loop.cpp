// The OpenAI tool-calling agent loop (runner/agent/agent_loop.h; docs/agent.md says what it sends and
// records).
//
// Choices the header leaves open:
// - Calls parsed from text are answered in ONE `user` message holding a `<tool_response>` block
//   per call, not `role: tool` messages: a `tool` message must answer an assistant message with
//   `tool_calls` (OpenAI rejects it otherwise: "Messages with role 'tool' must be a response to a
//   preceding message with 'tool_calls'", and chat templates raise "Message has tool role, but
//   there was no previous assistant message with a tool call!"), and the Qwen/Hermes templates
//   render tool results as exactly such a user turn anyway. The assistant message keeps its raw
//   content (the markup) and has no `tool_calls`.
// - A native call whose arguments are not a JSON object is sent back in the assistant message with
//   arguments "{}": servers parse arguments to render the template (llama.cpp fails the whole
//   request on invalid JSON there); the tool message answering it names the problem.
// - Arguments that are empty or only whitespace are read as {} (servers send that for a tool
//   without parameters) and sent back as "{}"; good arguments go back exactly as written.
// - Token counting uses RequestRecord::completion_tokens() (usage when reported, else text events,
//   tool-call fragments included, as core/metrics.h counts). A spent token budget ends the
//   episode `truncated` before a request would ask for max_tokens 0.
// - The wall budget is checked before each model turn and before each call; calls left when it
//   runs out are answered "not run" and the episode ends with `timeout`, as does a request that
//   times out. A submit wins over every other ending of the same turn.
#include "runner/agent/agent_loop.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <utility>

#include "core/clock.h"
#include "core/limits.h"
#include "plugins/http_client.h"

namespace evalrun {
namespace {

using json = nlohmann::json;

constexpr const char* kQwenXmlExample =
    "<tool_call>\n<function=NAME>\n<parameter=KEY>\nVALUE\n</parameter>\n</function>\n"
    "</tool_call>";
constexpr const char* kHermesExample =
    "<tool_call>\n{\"name\": \"NAME\", \"arguments\": {\"KEY\": \"VALUE\"}}\n</tool_call>";

bool IsBlank(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; });
}

// What is wrong with a call's arguments text, or "" when it is a JSON object (then in *parsed).
std::string ArgumentsProblem(const std::string& text, json* parsed) {
  if (IsBlank(text)) {
    *parsed = json::object();
    return {};
  }
  try {
    *parsed = json::parse(text);
  } catch (const json::exception& e) {
    // nlohmann: "[json.exception.parse_error.101] parse error at line 1, column 9: why", or
    // "[json.exception.out_of_range.406] number overflow parsing '1e999'": the text after the tag.
    std::string what = e.what();
    const size_t at = what.find("] ");
    return "not valid JSON: " + (at == std::string::npos ? what : what.substr(at + 2));
  }
  if (!parsed->is_object()) return std::string("a JSON ") + parsed->type_name() + ", not an object";
  return {};
}

// The tool message answering a call whose arguments are not a JSON object.
std::string FormatErrorReply(const ToolCall& call, const std::string& problem,
                             const std::map<std::string, std::string>& schemas) {
  std::string reply = "error: the arguments of this call to '" + call.name +
                      "' are not a JSON object (" + problem + "); ";
  auto it = schemas.find(call.name);
  if (it != schemas.end()) {
    return reply + "call it again with arguments that match its parameters: " + it->second;
  }
  std::string names;
  for (const auto& [name, schema] : schemas) names += (names.empty() ? "" : ", ") + name;
  return reply + "and there is no tool '" + call.name + "' (tools: " + names + ")";
}

// The user message answering a reply whose text tool calls could not be read.
std::string TextFormatErrorReply(const std::vector<std::string>& errors, ToolCallFormat format) {
  std::string reply = "error: your reply has tool calls that could not be read:\n";
  for (const std::string& line : errors) reply += line + "\n";
  if (format == ToolCallFormat::kQwenXml) {
    reply += "Write each call as:\n" + std::string(kQwenXmlExample);
  } else if (format == ToolCallFormat::kHermes) {
    reply += "Write each call as:\n" + std::string(kHermesExample);
  } else {
    reply += "Write each call as:\n" + std::string(kQwenXmlExample) + "\nor as:\n" + kHermesExample;
  }
  return reply;
}

const char* kSourceNames[] = {"native", "qwen_xml", "hermes"};

// "native", "qwen_xml", "hermes" from a bit set of them; "mixed" for more than one, "" for none.
std::string SourceName(unsigned bits) {
  if (bits == 0) return {};
  for (unsigned i = 0; i < 3; ++i) {
    if (bits == (1u << i)) return kSourceNames[i];
  }
  return "mixed";
}

unsigned SourceBit(const std::string& name) {
  for (unsigned i = 0; i < 3; ++i) {
    if (name == kSourceNames[i]) return 1u << i;
  }
  return 0;
}

double MsSince(TimePoint t) {
  return NanosToMs(NanosBetween(t, Clock::now()));
}

// The length of the well-formed UTF-8 sequence at text[i], or 0 when there is none.
size_t Utf8Length(std::string_view text, size_t i) {
  const auto at = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = at(i);
  const size_t len = c < 0x80           ? 1
                     : (c >> 5) == 0x6  ? 2
                     : (c >> 4) == 0xE  ? 3
                     : (c >> 3) == 0x1E ? 4
                                        : 0;
  if (len == 0 || i + len > text.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((at(i + k) & 0xC0) != 0x80) return 0;
  }
  if (len == 2 && c < 0xC2) return 0;  // overlong
  if (len == 3 && ((c == 0xE0 && at(i + 1) < 0xA0) || (c == 0xED && at(i + 1) >= 0xA0))) {
    return 0;  // overlong, surrogate
  }
  if (len == 4 &&
      (c > 0xF4 || (c == 0xF0 && at(i + 1) < 0x90) || (c == 0xF4 && at(i + 1) >= 0x90))) {
    return 0;  // overlong, > U+10FFFF
  }
  return len;
}

// `text` with each byte that is not part of a well-formed UTF-8 sequence replaced by U+FFFD:
// tool output may be any bytes, and a request body must be valid JSON (nlohmann's dump throws).
std::string ValidUtf8(std::string text) {
  size_t i = 0;
  for (size_t len; i < text.size() && (len = Utf8Length(text, i)) > 0;) i += len;
  if (i == text.size()) return text;  // the common case: nothing to change
  std::string out = text.substr(0, i);
  while (i < text.size()) {
    const size_t len = Utf8Length(text, i);
    if (len == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(text, i, len);
      i += len;
    }
  }
  return out;
}

}  // namespace

TurnCalls ExtractTurnCalls(const RequestRecord& record, ToolCallFormat format) {
  TurnCalls out;
  if (!record.tool_calls.empty()) {
    out.calls = record.tool_calls;
    out.formats.assign(out.calls.size(), "native");
    out.source = "native";
    return out;
  }
  if (format == ToolCallFormat::kNative) return out;
  TextToolCalls text = ParseToolCallsFromText(record.content, format);
  out.calls = std::move(text.calls);
  out.errors = std::move(text.errors);
  unsigned bits = 0;
  for (ToolCallFormat f : text.formats) {
    out.formats.emplace_back(ToolCallFormatName(f));
    bits |= SourceBit(out.formats.back());
  }
  out.source = SourceName(bits);
  return out;
}

std::string CutObservation(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  auto continuation = [&](size_t i) {
    return i < text.size() && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80;
  };
  size_t head = max_bytes / 2;
  while (head > 0 && continuation(head)) --head;  // text[head] starts a character
  size_t tail_start = text.size() - (max_bytes - max_bytes / 2);
  while (tail_start < text.size() && continuation(tail_start)) ++tail_start;
  const size_t left_out = tail_start - head;
  std::string out(text.substr(0, head));
  out += "\n[... " + std::to_string(left_out) + " bytes left out ...]\n";
  out += text.substr(tail_start);
  return out;
}

std::string ToolsSystemPrompt(const json& tools, ToolCallFormat format) {
  if (format == ToolCallFormat::kQwenXml) {
    // The shape of Qwen3-Coder's chat template, which its models were trained on.
    std::string out = "# Tools\n\nYou have access to the following functions:\n\n<tools>";
    for (const json& tool : tools) {
      if (!tool.is_object() || !tool.contains("function") || !tool["function"].is_object()) continue;
      const json& f = tool["function"];
      out += "\n<function>\n<name>" + f.value("name", "") + "</name>";
      if (f.contains("description") && f["description"].is_string()) {
        out += "\n<description>" + f["description"].get<std::string>() + "</description>";
      }
      out += "\n<parameters>";
      const json params = f.value("parameters", json::object());
      const json props = params.is_object() ? params.value("properties", json::object()) : json();
      if (props.is_object()) {
        for (const auto& [name, p] : props.items()) {
          out += "\n<parameter>\n<name>" + name + "</name>";
          if (p.is_object() && p.contains("type")) {
            out += "\n<type>" + (p["type"].is_string() ? p["type"].get<std::string>()
                                                        : p["type"].dump()) + "</type>";
          }
          if (p.is_object() && p.contains("description") && p["description"].is_string()) {
            out += "\n<description>" + p["description"].get<std::string>() + "</description>";
          }
          out += "\n</parameter>";
        }
      }
      if (params.is_object() && params.contains("required")) {
        out += "\n<required>" + params["required"].dump() + "</required>";
      }
      out += "\n</parameters>\n</function>";
    }
    out += "\n</tools>\n\nIf you choose to call a function ONLY reply in the following format "
           "with NO suffix:\n\n" + std::string(kQwenXmlExample) +
           "\n\nReminder:\n- Function calls MUST follow the specified format: an inner "
           "<function=...></function> block must be nested within <tool_call></tool_call> XML "
           "tags\n- Required parameters MUST be specified";
    return out;
  }
  // Hermes, as the Qwen2.5 and NousResearch Hermes templates write it.
  std::string out =
      "# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are "
      "provided with function signatures within <tools></tools> XML tags:\n<tools>";
  for (const json& tool : tools) out += "\n" + tool.dump();
  out += "\n</tools>\n\nFor each function call, return a json object with function name and "
         "arguments within <tool_call></tool_call> XML tags:\n" + std::string(kHermesExample);
  return out;
}

AgentLoopResult RunAgentLoop(const ChatRequest& base, AgentTools& tools, const AgentModel& model,
                             const AgentLoopOptions& options) {
  const TimePoint t0 = Clock::now();
  const AgentLimits& limits = options.limits;
  AgentLoopResult out;
  ChatRequest request = base;
  request.tools = tools.Schemas();
  // name -> compact JSON of its parameters, for format-error replies.
  std::map<std::string, std::string> schemas;
  for (const json& tool : request.tools) {
    if (!tool.is_object() || !tool.contains("function")) continue;
    const json& function = tool["function"];
    if (!function.is_object() || !function.contains("name") || !function["name"].is_string()) {
      continue;
    }
    schemas[function["name"].get<std::string>()] =
        function.value("parameters", json::object()).dump();
  }
  json& transcript = out.transcript;
  transcript = {{"schema_version", 1},    {"termination_reason", ""},  {"tool_call_source", ""},
                {"tools", request.tools}, {"messages", base.messages}, {"turns", json::array()}};
  // --tool-format hermes|qwen_xml: the server is not asked to handle tools at all (no `tools`
  // field, so a server without tool support or with a broken parser is no obstacle); the model
  // reads them from the system prompt and writes its calls as text.
  if (options.text_format == ToolCallFormat::kHermes ||
      options.text_format == ToolCallFormat::kQwenXml) {
    const std::string prompt = ToolsSystemPrompt(request.tools, options.text_format);
    if (!request.messages.empty() && request.messages[0].value("role", "") == "system" &&
        request.messages[0].contains("content") && request.messages[0]["content"].is_string()) {
      request.messages[0]["content"] =
          request.messages[0]["content"].get<std::string>() + "\n\n" + prompt;
    } else {
      request.messages.insert(request.messages.begin(),
                              json{{"role", "system"}, {"content", prompt}});
    }
    request.tools = json::array();
    transcript["tools_in"] = "system_prompt";
  } else {
    transcript["tools_in"] = "request";
  }
  unsigned sources = 0;
  int malformed_in_row = 0;

  for (;;) {
    if (out.steps >= limits.max_steps) {
      out.termination_reason = "turn_limit";
      break;
    }
    const double remaining_s = limits.wall_s - NanosToSeconds(NanosBetween(t0, Clock::now()));
    if (remaining_s <= 0) {
      out.termination_reason = "timeout";
      break;
    }
    request.max_tokens = base.max_tokens;
    if (limits.max_total_tokens >= 0) {
      const int64_t left = std::max<int64_t>(0, limits.max_total_tokens - out.completion_tokens);
      if (left == 0) {  // never ask for max_tokens 0 (servers refuse it)
        out.termination_reason = "truncated";
        break;
      }
      request.max_tokens = base.max_tokens < 0 ? left : std::min(base.max_tokens, left);
    }

    const TimePoint t_model = Clock::now();
    RequestRecord record;
    try {
      record = model(request, remaining_s);
    } catch (const std::exception& e) {  // the contract says it does not throw; stay whole
      record = RequestRecord();
      record.outcome = RequestOutcome::kMalformed;
      record.error_message = std::string("the request could not be sent: ") + e.what();
    }
    const double model_ms = MsSince(t_model);
    out.model_ms += model_ms;
    ++out.steps;
    record.label = "agent-turn-" + std::to_string(out.steps);
    out.completion_tokens =
        limits::SaturatingAdd(out.completion_tokens, std::max<int64_t>(0, record.completion_tokens()));

    const std::string content = ValidUtf8(record.content);
    json turn = {{"turn", out.steps},
                 {"content", content},
                 {"reasoning", ValidUtf8(record.reasoning)},
                 {"finish_reason", record.finish_reason},
                 {"source", ""},
                 {"calls", json::array()},
                 {"model_ms", model_ms},
                 {"tools_ms", 0.0}};
    auto end_turn = [&](std::string reason) {
      out.termination_reason = std::move(reason);
      transcript["turns"].push_back(std::move(turn));
      out.requests.push_back(std::move(record));
    };

    if (!record.ok()) {
      turn["error"] = std::string(OutcomeName(record.outcome)) +
                      (record.error_message.empty() ? "" : ": " + record.error_message);
      const bool timed_out = record.outcome == RequestOutcome::kIdleTimeout ||
                             record.outcome == RequestOutcome::kTotalTimeout;
      end_turn(timed_out ? "timeout" : "model_error");
      break;
    }
    out.final_message = record.content;
    TurnCalls calls = ExtractTurnCalls(record, options.text_format);
    turn["source"] = calls.source;
    if (!calls.errors.empty()) turn["text_errors"] = calls.errors;
    const bool cut = record.finish_reason == "length";

    // Parse every call's arguments first: a turn cut by max_tokens with no usable call ends here.
    std::vector<json> arguments(calls.calls.size());
    std::vector<std::string> problems(calls.calls.size());
    bool usable = false;
    for (size_t i = 0; i < calls.calls.size(); ++i) {
      problems[i] = ArgumentsProblem(calls.calls[i].arguments, &arguments[i]);
      usable = usable || problems[i].empty();
    }
    if (cut && !usable) {
      end_turn("truncated");
      break;
    }

    if (calls.calls.empty()) {
      if (calls.errors.empty()) {
        end_turn(options.text_reply_completes ? "completed" : "no_action");
        break;
      }
      // Text markup that is no call: a malformed turn, answered with the expected format.
      const std::string reply = TextFormatErrorReply(calls.errors, options.text_format);
      turn["format_error"] = reply;
      request.messages.push_back({{"role", "assistant"}, {"content", content}});
      request.messages.push_back({{"role", "user"}, {"content", reply}});
      ++out.format_errors;
      if (++malformed_in_row >= limits.max_format_errors) {
        end_turn("protocol_error");
        break;
      }
      transcript["turns"].push_back(std::move(turn));
      out.requests.push_back(std::move(record));
      continue;
    }

    // The assistant message, then one answer per call.
    const bool native = calls.source == "native";
    json assistant = {{"role", "assistant"}, {"content", content}};
    if (native) {
      json wire = json::array();
      for (size_t i = 0; i < calls.calls.size(); ++i) {
        const ToolCall& call = calls.calls[i];
        wire.push_back(
            {{"id", call.id},
             {"type", "function"},
             {"function",
              {{"name", call.name},
               // As the model wrote them (the server's prompt cache then matches), except blank
               // arguments (counted as {}): "{}", JSON servers can parse to render the template.
               {"arguments", problems[i].empty() && call.arguments.find_first_not_of(
                                                        " \t\r\n") != std::string::npos
                                 ? call.arguments
                                 : "{}"}}}});
      }
      if (content.empty()) assistant["content"] = nullptr;
      assistant["tool_calls"] = std::move(wire);
    }
    request.messages.push_back(std::move(assistant));

    const TimePoint t_tools = Clock::now();
    std::string text_results;  // text calls: one user message of <tool_response> blocks
    std::string format_problems;
    bool submitted = false;
    bool out_of_time = false;
    for (size_t i = 0; i < calls.calls.size() && !submitted; ++i) {
      const ToolCall& call = calls.calls[i];
      json entry = {{"id", call.id},
                    {"name", call.name},
                    {"arguments", call.arguments},
                    {"format", calls.formats[i]}};
      std::string observation;
      if (!problems[i].empty()) {
        observation = FormatErrorReply(call, problems[i], schemas);
        format_problems += (format_problems.empty() ? "" : "\n") + observation;
        entry["ok"] = false;
        entry["submitted"] = false;
        entry["format_error"] = problems[i];
        entry["record"] = nullptr;
        entry["elapsed_ms"] = 0.0;
      } else if (NanosToSeconds(NanosBetween(t0, Clock::now())) >= limits.wall_s) {
        // The episode's wall budget ran out during this turn's calls: the rest are not run.
        out_of_time = true;
        observation = "not run: the episode's time is up";
        entry["ok"] = false;
        entry["submitted"] = false;
        entry["record"] = nullptr;
        entry["elapsed_ms"] = 0.0;
      } else {
        ToolOutcome outcome = tools.Execute(call.name, arguments[i]);
        ++out.tool_calls;
        observation = std::move(outcome.observation);
        submitted = outcome.submitted;
        entry["ok"] = outcome.ok;
        entry["submitted"] = outcome.submitted;
        entry["record"] = std::move(outcome.record);
        entry["elapsed_ms"] = outcome.elapsed_ms;
      }
      if (observation.size() > limits.max_observation_bytes) {
        observation = CutObservation(observation, limits.max_observation_bytes);
      }
      observation = ValidUtf8(std::move(observation));
      entry["observation"] = observation;
      if (native) {
        request.messages.push_back(
            {{"role", "tool"}, {"tool_call_id", call.id}, {"content", observation}});
      } else {
        text_results += "<tool_response>\n" + observation + "\n</tool_response>\n";
      }
      turn["calls"].push_back(std::move(entry));
    }
    if (!native) {
      text_results.pop_back();  // the last newline
      request.messages.push_back({{"role", "user"}, {"content", std::move(text_results)}});
    }
    turn["tools_ms"] = MsSince(t_tools);
    sources |= native ? SourceBit("native") : 0;
    for (const std::string& f : calls.formats) sources |= SourceBit(f);

    if (submitted) {
      end_turn("completed");
      break;
    }
    if (out_of_time) {
      end_turn("timeout");
      break;
    }
    if (!format_problems.empty()) {
      turn["format_error"] = format_problems;
      ++out.format_errors;
      if (++malformed_in_row >= limits.max_format_errors) {
        end_turn("protocol_error");
        break;
      }
    } else {
      malformed_in_row = 0;
    }
    if (limits.max_total_tokens >= 0 && out.completion_tokens >= limits.max_total_tokens) {
      end_turn("truncated");
      break;
    }
    transcript["turns"].push_back(std::move(turn));
    out.requests.push_back(std::move(record));
  }

  out.tool_call_source = SourceName(sources);
  out.wall_ms = MsSince(t0);
  transcript["termination_reason"] = out.termination_reason;
  transcript["tool_call_source"] = out.tool_call_source;
  transcript["wall_ms"] = out.wall_ms;
  transcript["model_ms"] = out.model_ms;
  transcript["outside_model_ms"] = out.outside_model_ms();
  return out;
}

RequestRecord SendAgentTurn(const std::string& endpoint, const ServerInfo& server,
                            const ChatRequest& request, double idle_timeout_s,
                            double total_timeout_s) {
  RequestRecord record;
  record.label = "agent-turn";
  record.max_tokens = request.max_tokens;
  const json body = BuildChatBody(request, server);
  ChatStreamReader reader(record);
  StreamingClient client(1);
  client.Add(MakeChatHttpRequest(endpoint, body, idle_timeout_s, total_timeout_s), &reader);
  client.Run();
  return record;
}

}  // namespace evalrun
