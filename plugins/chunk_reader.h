#pragma once
// Reads one OpenAI-compatible `chat.completion.chunk` (the data of one SSE event) without
// building a JSON document: the per-event hot path of every measurement. Only
// choices[0].delta.{content,reasoning_content,reasoning}, finish_reason, model and
// system_fingerprint are decoded inline; the rare objects (usage, timings, meta_info, error,
// tool_calls) are located and returned as raw JSON text for the caller to parse with nlohmann.
//
// Reuse one ChunkFields across events: Read() clears it but keeps string capacity, so reading a
// stream allocates nothing per event after the first few.
#include <string>
#include <string_view>

namespace evalrun {

struct ChunkFields {
  std::string content;          // choices[0].delta.content, unescaped ("" if absent or null)
  std::string reasoning;        // delta.reasoning_content, or delta.reasoning
  std::string finish_reason;    // "" when absent or null
  std::string_view model;               // views into the event data
  std::string_view system_fingerprint;
  std::string_view usage_json;          // raw `usage` object, "" when absent or null
  std::string_view timings_json;        // raw llama.cpp `timings`
  std::string_view meta_info_json;      // raw SGLang `meta_info`
  std::string_view error_json;          // raw top-level `error` (object or string)
  std::string_view tool_calls_json;     // raw choices[0].delta.tool_calls array
  std::string_view message_json;        // raw choices[0].message (non-streamed completion body)
  bool has_choices = false;             // a non-empty `choices` array was present

  void Clear();
};

// Returns true when `data` is a well-formed JSON object; on false, `error` says what and where
// ("at byte 17: expected ':'"). Unknown keys are skipped. Strings are unescaped per RFC 8259,
// \uXXXX surrogate pairs included; invalid escapes make the chunk malformed.
bool ReadChunk(std::string_view data, ChunkFields& out, std::string* error);

}  // namespace evalrun
