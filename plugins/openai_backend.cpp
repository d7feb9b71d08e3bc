#include "plugins/openai_backend.h"

#include <algorithm>
#include <cstdio>

#include "core/json_depth.h"
#include "core/limits.h"
#include "core/terminal_text.h"

namespace evalrun {

const char* ThinkingName(Thinking thinking) {
  switch (thinking) {
    case Thinking::kAuto: return "auto";
    case Thinking::kOn: return "on";
    case Thinking::kOff: return "off";
  }
  return "auto";
}

std::optional<Thinking> ParseThinking(std::string_view text) {
  if (text == "auto") return Thinking::kAuto;
  if (text == "on") return Thinking::kOn;
  if (text == "off") return Thinking::kOff;
  return std::nullopt;
}

nlohmann::json BuildChatBody(const ChatRequest& request, const ServerInfo& server) {
  nlohmann::json body = nlohmann::json::object();
  if (!request.model.empty()) body["model"] = request.model;
  body["messages"] = request.messages;
  if (request.max_tokens >= 0) body["max_tokens"] = request.max_tokens;
  if (request.temperature) body["temperature"] = *request.temperature;
  if (request.top_p) body["top_p"] = *request.top_p;
  if (request.seed) body["seed"] = *request.seed;
  if (!request.stop.empty()) body["stop"] = request.stop;
  if (request.thinking != Thinking::kAuto) {
    body["chat_template_kwargs"] = {{"enable_thinking", request.thinking == Thinking::kOn}};
  }
  if (request.ignore_eos && server.understands_ignore_eos) body["ignore_eos"] = true;
  if (request.cache_prompt && server.understands_cache_prompt) {
    body["cache_prompt"] = *request.cache_prompt;
  }
  if (request.tools.is_array() && !request.tools.empty()) {
    body["tools"] = request.tools;
    if (!request.tool_choice.is_null()) body["tool_choice"] = request.tool_choice;
  }
  body["stream"] = request.stream;
  if (request.stream) body["stream_options"] = {{"include_usage", true}};
  for (const auto& [key, value] : request.extra.items()) body[key] = value;
  return body;
}

HttpRequest MakeChatHttpRequest(const std::string& base_url, const nlohmann::json& body,
                                double idle_timeout_s, double total_timeout_s) {
  HttpRequest http;
  http.method = "POST";
  http.url = base_url + "/v1/chat/completions";
  http.body = body.dump();
  http.headers = {"Accept: text/event-stream, application/json"};
  http.idle_timeout_s = idle_timeout_s;
  http.total_timeout_s = total_timeout_s;
  return http;
}

namespace {

std::optional<double> Number(const nlohmann::json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

// A token count as the server sent it: -1 when absent or not a number; kImpossible when it is a
// number no request can have (negative, fractional, above limits::kMaxTokenCount).
constexpr int64_t kImpossible = -2;

int64_t Count(const nlohmann::json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return -1;
  if (it->is_number_unsigned()) {
    const auto n = it->get<uint64_t>();
    return n > static_cast<uint64_t>(limits::kMaxTokenCount) ? kImpossible : static_cast<int64_t>(n);
  }
  if (it->is_number_integer()) {
    const auto n = it->get<int64_t>();
    return n < 0 || n > limits::kMaxTokenCount ? kImpossible : n;
  }
  const double d = it->get<double>();  // 12.0 is a count; 1e300, -1, 0.5 and nan are not
  if (!(d >= 0 && d <= static_cast<double>(limits::kMaxTokenCount)) || d != static_cast<int64_t>(d)) {
    return kImpossible;
  }
  return static_cast<int64_t>(d);
}

// The server's error text from `{"error": {"message": ...}}`, `{"error": "..."}`, or the raw body.
std::string ErrorText(const nlohmann::json& error) {
  if (error.is_string()) return error.get<std::string>();
  if (error.is_object()) {
    auto it = error.find("message");
    if (it != error.end() && it->is_string()) return it->get<std::string>();
  }
  return error.dump();
}

// The server's words as one printable line: newlines become spaces, other control characters,
// bidi overrides and invalid UTF-8 visible escapes (core/terminal_text.h).
std::string OneLine(std::string text, size_t limit = 300) {
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  if (text.size() > limit) text = text.substr(0, limit) + "...";
  return TerminalText(text);
}

// Text for a flag: the JSON value, cut short.
std::string Shown(const nlohmann::json& value) {
  std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() > 40) text = text.substr(0, 40) + "...";
  return text;
}

// Reads the server's token counts. A count no request can have (negative, fractional, above
// limits::kMaxTokenCount, cached above prompt, reasoning above completion, completion far above
// max_tokens) is never turned into a figure: every count is dropped (the figures fall back to
// text events, as for a server that reports none), the raw object is kept, and the request is
// flagged in error_message: "server reported an impossible value: ...". Its outcome stays ok: the
// answer itself may be fine and is still graded.
void ReadUsage(const nlohmann::json& usage, RequestRecord& record) {
  if (!usage.is_object()) return;
  record.usage.raw = usage;
  Usage u;
  u.raw = usage;
  u.prompt_tokens = Count(usage, "prompt_tokens");
  u.completion_tokens = Count(usage, "completion_tokens");
  const nlohmann::json* prompt_details = nullptr;
  const nlohmann::json* completion_details = nullptr;
  if (auto it = usage.find("prompt_tokens_details"); it != usage.end() && it->is_object()) {
    prompt_details = &*it;
    u.cached_tokens = Count(*it, "cached_tokens");
  }
  if (auto it = usage.find("completion_tokens_details"); it != usage.end() && it->is_object()) {
    completion_details = &*it;
    u.reasoning_tokens = Count(*it, "reasoning_tokens");
  }
  std::string impossible;
  const auto check = [&](int64_t value, const nlohmann::json* object, const char* key,
                         const char* path) {
    if (value == kImpossible && impossible.empty()) {
      impossible = std::string(path) + " = " + Shown((*object)[key]);
    }
  };
  check(u.prompt_tokens, &usage, "prompt_tokens", "usage.prompt_tokens");
  check(u.completion_tokens, &usage, "completion_tokens", "usage.completion_tokens");
  if (prompt_details) {
    check(u.cached_tokens, prompt_details, "cached_tokens",
          "usage.prompt_tokens_details.cached_tokens");
  }
  if (completion_details) {
    check(u.reasoning_tokens, completion_details, "reasoning_tokens",
          "usage.completion_tokens_details.reasoning_tokens");
  }
  if (impossible.empty() && u.cached_tokens >= 0 && u.prompt_tokens >= 0 &&
      u.cached_tokens > u.prompt_tokens) {
    impossible = "cached_tokens " + std::to_string(u.cached_tokens) + " > prompt_tokens " +
                 std::to_string(u.prompt_tokens);
  }
  if (impossible.empty() && u.reasoning_tokens >= 0 && u.completion_tokens >= 0 &&
      u.reasoning_tokens > u.completion_tokens) {
    impossible = "reasoning_tokens " + std::to_string(u.reasoning_tokens) +
                 " > completion_tokens " + std::to_string(u.completion_tokens);
  }
  // A server may count a stop token past max_tokens; twice the budget is not a miscount.
  if (impossible.empty() && record.max_tokens > 0 && u.completion_tokens > 2 * record.max_tokens + 16) {
    impossible = "completion_tokens " + std::to_string(u.completion_tokens) + " for max_tokens " +
                 std::to_string(record.max_tokens);
  }
  if (!impossible.empty()) {
    record.usage = Usage{};
    record.usage.raw = usage;
    record.usage_reported = false;
    if (record.error_message.empty()) {
      record.error_message = "server reported an impossible value: " + impossible;
    }
    return;
  }
  record.usage = std::move(u);
  record.usage_reported = record.usage.completion_tokens >= 0;
}

// llama.cpp's `timings` and SGLang's `meta_info` are a handful of numbers; a server that sends a
// larger object has it replaced by a note, so the store does not grow by megabytes per request.
nlohmann::json CappedRaw(const nlohmann::json& value, size_t text_bytes) {
  if (text_bytes <= limits::kTimingsBytes) return value;
  return {{"evalrun_dropped",
           "object of " + std::to_string(text_bytes) + " bytes, above the " +
               std::to_string(limits::kTimingsBytes >> 10) + " KiB kept (docs/limits.md)"}};
}

void ReadTimings(const nlohmann::json& timings, size_t text_bytes, RequestRecord& record) {
  if (!timings.is_object()) return;
  ServerTimings& t = record.timings;
  t.raw_timings = CappedRaw(timings, text_bytes);
  t.prompt_n = Number(timings, "prompt_n");
  t.prompt_ms = Number(timings, "prompt_ms");
  t.prompt_per_second = Number(timings, "prompt_per_second");
  t.predicted_n = Number(timings, "predicted_n");
  t.predicted_ms = Number(timings, "predicted_ms");
  t.predicted_per_second = Number(timings, "predicted_per_second");
  t.draft_n = Number(timings, "draft_n");
  t.draft_n_accepted = Number(timings, "draft_n_accepted");
}

void ReadMetaInfo(const nlohmann::json& meta, size_t text_bytes, RequestRecord& record) {
  if (!meta.is_object()) return;
  record.timings.raw_meta_info = CappedRaw(meta, text_bytes);
  record.timings.spec_accept_length = Number(meta, "spec_accept_length");
  if (record.usage.cached_tokens < 0) {
    record.usage.cached_tokens = std::max<int64_t>(-1, Count(meta, "cached_tokens"));
  }
}

// The call a `tool_calls` element belongs to, created when its index is new. Elements without
// an `index` (outside the OpenAI format, but seen) take `position` when it is given (a
// non-streamed message lists whole calls), else continue the last call unless they bring a new
// id.
ToolCall& CallFor(const nlohmann::json& element, std::vector<ToolCall>& calls,
                  std::optional<int64_t> position) {
  int64_t index = -1;
  if (auto it = element.find("index"); it != element.end() && it->is_number_integer()) {
    index = it->get<int64_t>();
  } else if (position) {
    index = *position;
  } else {
    auto id = element.find("id");
    const std::string* text =
        id != element.end() && id->is_string() ? &id->get_ref<const std::string&>() : nullptr;
    const bool new_id = text && !text->empty() && (calls.empty() || calls.back().id != *text);
    if (!calls.empty() && !new_id) return calls.back();
    index = calls.empty() ? 0 : calls.back().index + 1;
  }
  for (ToolCall& call : calls) {
    if (call.index == index) return call;
  }
  ToolCall& call = calls.emplace_back();
  call.index = index;
  return call;
}

// Merges one `tool_calls` element (a streamed fragment or a whole call) into `calls`: id and
// name are kept from the first fragment that has them (a server that repeats them is not
// doubled; a name split across fragments is joined), argument text is appended as sent.
void MergeToolCall(const nlohmann::json& element, std::vector<ToolCall>& calls,
                   std::optional<int64_t> position) {
  if (!element.is_object()) return;
  ToolCall& call = CallFor(element, calls, position);
  if (auto id = element.find("id"); id != element.end() && id->is_string() && call.id.empty()) {
    call.id = id->get<std::string>();
  }
  auto function = element.find("function");
  if (function == element.end() || !function->is_object()) return;
  if (auto name = function->find("name"); name != function->end() && name->is_string()) {
    const auto& text = name->get_ref<const std::string&>();
    if (call.name.empty()) {
      call.name = text;
    } else if (text != call.name) {
      call.name += text;
    }
  }
  if (auto args = function->find("arguments"); args != function->end()) {
    if (args->is_string()) {
      call.arguments += args->get_ref<const std::string&>();
    } else if (!args->is_null()) {
      call.arguments += args->dump();  // an object where the format says string: kept as JSON
    }
  }
}

}  // namespace

namespace {
constexpr int64_t kReserveTokens = 1 << 17;
}  // namespace

ChatStreamReader::ChatStreamReader(RequestRecord& record) : record_(record) {}

void ChatStreamReader::OnSent(TimePoint t_send) {
  record_.t_send = t_send;
  if (record_.max_tokens > 0) {
    // Grown once here, so appending per event does not allocate. Capped: max_tokens is a budget,
    // not a promise, and a huge one must not reserve gigabytes (vectors grow past this anyway).
    const auto expected = static_cast<size_t>(std::min<int64_t>(record_.max_tokens, kReserveTokens));
    record_.text_event_ns.reserve(expected + 8);
    record_.content.reserve(expected * 6);
  }
}

void ChatStreamReader::OnResponseStart(int http_status, std::string_view content_type) {
  record_.http_status = http_status;
  content_type_.assign(content_type);  // once per request, before the body
}

bool ChatStreamReader::OnBytes(std::string_view bytes, TimePoint arrived) {
  arrived_ = arrived;
  parser_.Feed(bytes, *this);
  if (parser_.overflow() == SseParser::Overflow::kNone) return true;
  // Ends the transfer: the rest of a 1 GB line is never read.
  Fail(RequestOutcome::kMalformed,
       parser_.overflow() == SseParser::Overflow::kLine
           ? "an SSE line longer than " + std::to_string(parser_.max_line_bytes() >> 20) +
                 " MiB after " + std::to_string(record_.events) + " events (docs/limits.md)"
           : "a response body longer than " + std::to_string(parser_.max_body_bytes() >> 20) +
                 " MiB (docs/limits.md)");
  return false;
}

void ChatStreamReader::Fail(RequestOutcome outcome, std::string message) {
  if (record_.outcome != RequestOutcome::kOk) return;  // the first error is the one to report
  record_.outcome = outcome;
  record_.error_message = OneLine(std::move(message));
}

void ChatStreamReader::OnEvent(const SseEvent& event) {
  ++record_.events;
  if (event.type == "json") {
    ReadJsonBody(event.data);
    return;
  }
  if (event.data == "[DONE]") {
    saw_done_ = true;
    record_.end_ns = NanosBetween(record_.t_send, arrived_);
    return;
  }
  if (record_.http_status >= 400) {
    // An error answered as an event stream: keep its text.
    Fail(RequestOutcome::kHttpError,
         "HTTP " + std::to_string(record_.http_status) + ": " + std::string(event.data));
    return;
  }
  ReadStreamChunk(event.data);
}

void ChatStreamReader::ReadStreamChunk(std::string_view data) {
  if (!ReadChunk(data, fields_, &scratch_error_)) {
    Fail(RequestOutcome::kMalformed, "event " + std::to_string(record_.events) +
                                         ": malformed JSON " + scratch_error_ + ": " +
                                         std::string(data.substr(0, 80)));
    return;
  }
  if (!fields_.content.empty() || !fields_.reasoning.empty()) {
    const int64_t at = NanosBetween(record_.t_send, arrived_);
    record_.text_event_ns.push_back(at);
    if (record_.first_ns < 0) record_.first_ns = at;
    if (!fields_.content.empty() && record_.first_content_ns < 0) record_.first_content_ns = at;
    record_.last_ns = at;
    record_.content += fields_.content;
    record_.reasoning += fields_.reasoning;
  }
  if (!fields_.tool_calls_json.empty()) ReadToolCallFragments();
  if (!fields_.finish_reason.empty()) record_.finish_reason = fields_.finish_reason;
  if (record_.model.empty() && !fields_.model.empty()) record_.model = fields_.model;
  if (record_.system_fingerprint.empty() && !fields_.system_fingerprint.empty()) {
    record_.system_fingerprint = fields_.system_fingerprint;
  }
  if (!fields_.usage_json.empty() || !fields_.timings_json.empty() ||
      !fields_.meta_info_json.empty() || !fields_.error_json.empty()) {
    ApplyRareFields();
  }
}

// usage, timings, meta_info and error arrive once per request: parsed with nlohmann off the hot
// path.
void ChatStreamReader::ApplyRareFields() {
  auto parse = [](std::string_view text) {
    return nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  };
  if (!fields_.usage_json.empty()) ReadUsage(parse(fields_.usage_json), record_);
  if (!fields_.timings_json.empty()) {
    ReadTimings(parse(fields_.timings_json), fields_.timings_json.size(), record_);
  }
  if (!fields_.meta_info_json.empty()) {
    ReadMetaInfo(parse(fields_.meta_info_json), fields_.meta_info_json.size(), record_);
  }
  if (!fields_.error_json.empty()) {
    Fail(RequestOutcome::kStreamError, "server error in stream: " + ErrorText(parse(fields_.error_json)));
  }
}

// Tool-call fragments are parsed with nlohmann only when a chunk has them, so plain answers never
// pay for it; argument text is appended in place. Servers stream a call's arguments a piece per
// event, so an agent turn that writes a long call does parse each piece (a small array): a
// dedicated scanner in ChunkReader would remove that if it ever shows in a profile.
void ChatStreamReader::ReadToolCallFragments() {
  const std::string_view text = fields_.tool_calls_json;
  const auto array = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
  if (!array.is_array()) return;  // ReadChunk already checked it is well-formed JSON
  const int64_t at = NanosBetween(record_.t_send, arrived_);
  if (record_.first_tool_call_ns < 0) record_.first_tool_call_ns = at;
  // Call arguments are generated tokens like text: the event counts for TTFT and decode timing
  // (once, when the same chunk also carried text).
  if (fields_.content.empty() && fields_.reasoning.empty()) {
    record_.text_event_ns.push_back(at);
    if (record_.first_ns < 0) record_.first_ns = at;
    record_.last_ns = at;
  }
  for (const auto& element : array) MergeToolCall(element, record_.tool_calls, std::nullopt);
}

void ChatStreamReader::ReadJsonBody(std::string_view body) {
  if (const auto at = JsonDepthExceeded(body, limits::kJsonDepth)) {
    Fail(RequestOutcome::kMalformed, "response body nests JSON more than " +
                                         std::to_string(limits::kJsonDepth) +
                                         " levels deep (at byte " + std::to_string(*at) + ")");
    return;
  }
  const auto json = nlohmann::json::parse(body.begin(), body.end(), nullptr, false);
  const std::string status = "HTTP " + std::to_string(record_.http_status);
  if (json.is_discarded() || !json.is_object()) {
    if (record_.http_status >= 400) {
      Fail(RequestOutcome::kHttpError, status + ": " + std::string(body.substr(0, 200)));
    } else {
      Fail(RequestOutcome::kMalformed, "response body is not JSON: " + std::string(body.substr(0, 80)));
    }
    return;
  }
  if (auto it = json.find("error"); it != json.end()) {
    Fail(record_.http_status >= 400 ? RequestOutcome::kHttpError : RequestOutcome::kStreamError,
         status + ": " + ErrorText(*it));
    return;
  }
  if (record_.http_status >= 400) {
    Fail(RequestOutcome::kHttpError, status + ": " + std::string(body.substr(0, 200)));
    return;
  }
  // A non-streamed completion: the whole answer arrived at once.
  const int64_t at = NanosBetween(record_.t_send, arrived_);
  if (auto choices = json.find("choices"); choices != json.end() && choices->is_array() &&
                                           !choices->empty()) {
    const auto& choice = (*choices)[0];
    if (auto m = choice.find("message"); m != choice.end() && m->is_object()) {
      for (const char* key : {"reasoning_content", "reasoning"}) {
        if (auto r = m->find(key); r != m->end() && r->is_string()) {
          record_.reasoning = r->get<std::string>();
          break;
        }
      }
      if (auto c = m->find("content"); c != m->end() && c->is_string()) {
        record_.content = c->get<std::string>();
      }
      if (auto calls = m->find("tool_calls"); calls != m->end() && calls->is_array()) {
        for (size_t i = 0; i < calls->size(); ++i) {
          MergeToolCall((*calls)[i], record_.tool_calls, static_cast<int64_t>(i));
        }
        if (!record_.tool_calls.empty()) record_.first_tool_call_ns = at;
      }
    }
    if (auto f = choice.find("finish_reason"); f != choice.end() && f->is_string()) {
      record_.finish_reason = f->get<std::string>();
    }
  }
  if (!record_.content.empty() || !record_.reasoning.empty() || !record_.tool_calls.empty()) {
    record_.text_event_ns.push_back(at);
    record_.first_ns = record_.last_ns = at;
    if (!record_.content.empty()) record_.first_content_ns = at;
  }
  if (auto m = json.find("model"); m != json.end() && m->is_string()) record_.model = *m;
  if (auto f = json.find("system_fingerprint"); f != json.end() && f->is_string()) {
    record_.system_fingerprint = *f;
  }
  if (auto u = json.find("usage"); u != json.end()) ReadUsage(*u, record_);
  if (auto t = json.find("timings"); t != json.end()) {
    ReadTimings(*t, t->is_object() ? t->dump().size() : 0, record_);
  }
  if (auto mi = json.find("meta_info"); mi != json.end()) {
    ReadMetaInfo(*mi, mi->is_object() ? mi->dump().size() : 0, record_);
  }
  saw_done_ = true;
}

void ChatStreamReader::OnDone(const TransferResult& result) {
  arrived_ = result.t_end;
  if (result.t_queued != TimePoint{}) record_.queue_ns = NanosBetween(result.t_queued, record_.t_send);
  if (result.status == TransferStatus::kCompleted) parser_.Finish(*this);
  if (record_.end_ns < 0) record_.end_ns = NanosBetween(record_.t_send, result.t_end);
  if (record_.http_status == 0) record_.http_status = result.http_status;
  switch (result.status) {
    case TransferStatus::kCompleted:
      if (record_.http_status >= 400) {
        Fail(RequestOutcome::kHttpError, "HTTP " + std::to_string(record_.http_status) +
                                             " with an empty body");
      } else if (record_.http_status >= 300 && record_.http_status < 400) {
        Fail(RequestOutcome::kHttpError,
             "HTTP " + std::to_string(record_.http_status) +
                 " redirect: evalrun does not follow redirects (give --endpoint the server's own "
                 "address)");
      } else if (record_.events == 0 && !saw_done_ && record_.finish_reason.empty() &&
                 content_type_.find("event-stream") == std::string::npos &&
                 content_type_.find("json") == std::string::npos) {
        Fail(RequestOutcome::kMalformed,
             "HTTP " + std::to_string(record_.http_status) + " answered with " +
                 (content_type_.empty() ? std::string("no Content-Type")
                                        : "Content-Type " + content_type_) +
                 ", not an event stream or JSON (is --endpoint an OpenAI-compatible server?)");
      } else if (!saw_done_ && record_.finish_reason.empty()) {
        Fail(RequestOutcome::kDropped,
             "the stream ended without finish_reason or [DONE] after " +
                 std::to_string(record_.events) + " events");
      }
      break;
    case TransferStatus::kConnectFailed:
      Fail(RequestOutcome::kConnectFailed, "cannot connect: " + result.message);
      break;
    case TransferStatus::kDropped:
      Fail(RequestOutcome::kDropped, "connection dropped after " +
                                         std::to_string(record_.events) + " events: " +
                                         result.message);
      break;
    case TransferStatus::kIdleTimeout:
      Fail(RequestOutcome::kIdleTimeout, result.message + " after " +
                                             std::to_string(record_.events) + " events");
      break;
    case TransferStatus::kTotalTimeout:
      Fail(RequestOutcome::kTotalTimeout, result.message);
      break;
    case TransferStatus::kCancelled:
      Fail(RequestOutcome::kCancelled, "cancelled");
      break;
  }
  done_ = true;
}

}  // namespace evalrun
