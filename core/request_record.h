#pragma once
// What one request to a model endpoint measured: plain data shared by plugins/ (which fills it
// from the stream), runner/ (which schedules), results/ (which stores and verifies) and the
// metric definitions in core/metrics.h. Times are nanoseconds since t_send on the steady clock,
// stamped when the bytes arrived, before parsing; -1 means "never happened".
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/clock.h"

namespace evalrun {

// How a request ended. Anything but kOk is an error recorded on the request.
enum class RequestOutcome {
  kOk,
  kConnectFailed,   // could not connect (refused, unreachable, connect timeout)
  kHttpError,       // a non-2xx status; the server's error body is in error_message
  kStreamError,     // an `error` object arrived inside a 200 stream
  kDropped,         // the connection closed before the stream finished
  kIdleTimeout,     // no bytes for longer than the idle-gap timeout
  kTotalTimeout,    // the whole request took longer than its total timeout
  kMalformed,       // an event whose JSON could not be read
  kCancelled,       // cancelled by evalrun (interrupt)
};

const char* OutcomeName(RequestOutcome outcome);
std::optional<RequestOutcome> ParseOutcome(std::string_view name);  // inverse of OutcomeName

struct Usage {
  int64_t prompt_tokens = -1;
  int64_t completion_tokens = -1;
  int64_t cached_tokens = -1;     // prompt_tokens_details.cached_tokens or meta_info
  int64_t reasoning_tokens = -1;  // completion_tokens_details.reasoning_tokens
  nlohmann::json raw;             // the usage object exactly as the server sent it
};

// llama.cpp's `timings` object (last chunk), SGLang's `meta_info`; absent fields stay empty.
struct ServerTimings {
  std::optional<double> prompt_n, prompt_ms, prompt_per_second;
  std::optional<double> predicted_n, predicted_ms, predicted_per_second;
  std::optional<double> draft_n, draft_n_accepted;  // speculative decoding, when reported
  std::optional<double> spec_accept_length;         // SGLang meta_info.spec_accept_length
  nlohmann::json raw_timings;                       // llama.cpp `timings`, verbatim
  nlohmann::json raw_meta_info;                     // SGLang `meta_info`, verbatim
};

// One function call the model asked for, assembled from streamed `tool_calls` fragments, read
// from a non-streamed `message.tool_calls`, or parsed from text by plugins/tool_call_text.h.
struct ToolCall {
  std::string id;         // the server's call id ("call_a"); made up for calls parsed from text
  std::string name;       // function.name
  std::string arguments;  // function.arguments: raw JSON text as sent (may be invalid JSON)
  int64_t index = 0;      // the server's `index` for the call, or its position
};

struct RequestRecord {
  // Set by the caller before sending.
  std::string label;                 // what this request measured, e.g. "pp512#3"
  std::string endpoint;              // the base URL it went to ("" unknown: the run's endpoint);
                                     // a run over several endpoints (docs/serving.md) sets it
  int64_t prompt_tokens_sent = -1;   // what evalrun meant to send (calibrated), -1 if unknown
  int64_t max_tokens = -1;

  // Timing (ns since t_send). t_first: first event the model generated (non-empty content or
  // reasoning, or a tool-call fragment: call arguments are generated tokens too);
  // t_first_content: first non-empty content; t_last: last such event; t_end: when the stream
  // ended ([DONE], or the connection closed after the last event).
  TimePoint t_send{};        // the request went on the wire (connection ready)
  int64_t queue_ns = 0;      // before that: waiting in the client for a connection, ns
  int64_t first_ns = -1;
  int64_t first_content_ns = -1;
  int64_t last_ns = -1;
  int64_t end_ns = -1;
  std::vector<int64_t> text_event_ns;  // arrival of every event that carried text or a
                                       // tool-call fragment

  // What came back.
  int http_status = 0;
  RequestOutcome outcome = RequestOutcome::kOk;
  std::string error_message;   // one line, for the user
  std::string content;         // the answer text
  std::string reasoning;       // reasoning_content / reasoning deltas, kept apart
  std::string finish_reason;   // "stop", "length", "tool_calls", ... ("" if none arrived)
  std::vector<ToolCall> tool_calls;  // native tool calls, in the order their first fragment came
  int64_t first_tool_call_ns = -1;   // first event carrying a tool_calls fragment (also counted
                                     // in first_ns/last_ns/text_event_ns above)
  std::string model;           // as echoed by the server
  std::string system_fingerprint;
  Usage usage;
  bool usage_reported = false;  // false: token counts were estimated from text events
  ServerTimings timings;
  int64_t events = 0;           // data events read (text or not), for client cost figures

  bool ok() const { return outcome == RequestOutcome::kOk; }
  int64_t text_events() const { return static_cast<int64_t>(text_event_ns.size()); }
  // Server counts where reported; otherwise the number of text events (and usage_reported says
  // so).
  int64_t completion_tokens() const {
    return usage_reported && usage.completion_tokens >= 0 ? usage.completion_tokens : text_events();
  }
};

}  // namespace evalrun
