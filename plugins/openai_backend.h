#pragma once
// The OpenAI-compatible chat backend: builds `/v1/chat/completions` requests and reads their
// streamed (or plain JSON) answers into a RequestRecord, stamping every event with the time its
// bytes arrived. Server-specific fields are read when present: llama.cpp `timings` (draft counts
// included), SGLang `meta_info`, OpenAI's usage-only chunk or usage on the last chunk.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/request_record.h"
#include "plugins/chunk_reader.h"
#include "plugins/http_client.h"
#include "plugins/server_probe.h"
#include "plugins/sse_parser.h"

namespace evalrun {

enum class Thinking { kAuto, kOn, kOff };
const char* ThinkingName(Thinking thinking);            // "auto", "on", "off"
std::optional<Thinking> ParseThinking(std::string_view text);

struct ChatRequest {
  std::string model;                 // "" -> omitted (servers use their loaded model)
  nlohmann::json messages = nlohmann::json::array();
  int64_t max_tokens = -1;           // -1 -> omitted
  std::optional<double> temperature;
  std::optional<double> top_p;
  std::optional<int64_t> seed;
  std::vector<std::string> stop;
  Thinking thinking = Thinking::kAuto;  // on/off -> chat_template_kwargs.enable_thinking
  bool ignore_eos = false;           // sent only where the server understands it
  std::optional<bool> cache_prompt;  // sent only where the server understands it (llama.cpp)
  bool stream = true;                // with stream_options.include_usage
  // OpenAI `tools` (an array of {"type": "function", "function": {...}}); sent when non-empty,
  // with `tool_choice` unless that is null. Assistant messages with `tool_calls` and `role: tool`
  // answers go in `messages`, which is sent verbatim.
  nlohmann::json tools = nlohmann::json::array();
  nlohmann::json tool_choice = "auto";
  nlohmann::json extra = nlohmann::json::object();  // merged last, verbatim
};

// The JSON body for `request` against `server`. Parameters the server does not understand
// (ignore_eos, cache_prompt on a generic endpoint) are left out rather than sent blindly.
nlohmann::json BuildChatBody(const ChatRequest& request, const ServerInfo& server);

// POST {base_url}/v1/chat/completions with the body and the given timeouts.
HttpRequest MakeChatHttpRequest(const std::string& base_url, const nlohmann::json& body,
                                double idle_timeout_s, double total_timeout_s);

// Reads one chat completion response into `record` as its bytes arrive. Streamed `tool_calls`
// fragments are assembled by `index` into record.tool_calls: the first fragment of an index
// brings id and function.name, later ones append to function.arguments. Thread-compatible: one
// reader per request, used on the event-loop thread. The record must outlive the transfer.
class ChatStreamReader : public StreamSink, private SseHandler {
 public:
  explicit ChatStreamReader(RequestRecord& record);

  void OnSent(TimePoint t_send) override;
  void OnResponseStart(int http_status, std::string_view content_type) override;
  bool OnBytes(std::string_view bytes, TimePoint arrived) override;
  void OnDone(const TransferResult& result) override;

  bool done() const { return done_; }

 private:
  void OnEvent(const SseEvent& event) override;
  void ReadStreamChunk(std::string_view data);
  void ReadJsonBody(std::string_view body);
  void ApplyRareFields();
  void ReadToolCallFragments();
  void Fail(RequestOutcome outcome, std::string message);

  RequestRecord& record_;
  SseParser parser_;
  ChunkFields fields_;
  std::string scratch_error_;
  TimePoint arrived_{};
  std::string content_type_;  // of the response, to name a body that is no event stream
  bool saw_done_ = false;
  bool done_ = false;
};

}  // namespace evalrun
