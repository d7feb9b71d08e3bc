// Specification of ReadChunk (plugins/chunk_reader.h). nlohmann::json is the oracle: on every
// chunk of every fixture, on random strings and on mutated chunks, ReadChunk must accept what it
// accepts and read the fields it would give.
#include "plugins/chunk_reader.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <new>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/catch.h"

#include "tests/support/allocation_counter.h"
#include "tests/support/fixtures.h"
#include <nlohmann/json.hpp>

#include "plugins/sse_parser.h"

namespace evalrun {
namespace {

using nlohmann::json;

std::string ReadFixture(const std::string& name) { return testing::ReadFixture("sse/" + name); }

std::vector<std::string> FixtureNames() { return testing::FixtureNames("sse"); }

// The body of a `curl -i` capture (after the first blank line, CRLF or LF), or a whole .sse file.
std::string Body(const std::string& name) {
  std::string text = ReadFixture(name);
  if (name.size() < 5 || name.substr(name.size() - 5) != ".http") return text;
  return testing::SplitHttpCapture(text).body;
}

class DataCollector : public SseHandler {
 public:
  void OnEvent(const SseEvent& event) override { data.emplace_back(event.data); }
  std::vector<std::string> data;
};

// The data of every event in a fixture's body, "[DONE]" left out; a JSON body is one event.
std::vector<std::string> Chunks(const std::string& name) {
  SseParser parser;
  DataCollector collector;
  parser.Feed(Body(name), collector);
  parser.Finish(collector);
  std::vector<std::string> chunks;
  for (std::string& data : collector.data) {
    if (data != "[DONE]") chunks.push_back(std::move(data));
  }
  return chunks;
}

ChunkFields Read(std::string_view data) {
  ChunkFields fields;
  std::string error;
  INFO(data);
  CHECK(ReadChunk(data, fields, &error));
  CHECK(error.empty());
  return fields;
}

std::string ReadError(std::string_view data) {
  ChunkFields fields;
  std::string error;
  CHECK_FALSE(ReadChunk(data, fields, &error));
  return error;
}

const json* Member(const json* object, const char* key) {
  if (object == nullptr || !object->is_object()) return nullptr;
  const auto it = object->find(key);
  return it == object->end() ? nullptr : &*it;
}

std::string StringMember(const json* object, const char* key) {
  const json* value = Member(object, key);
  return value != nullptr && value->is_string() ? value->get<std::string>() : "";
}

// A raw span must parse to the member when the member is there with the kind named by
// `present`, and be empty otherwise.
template <typename Present>
void CheckSpan(std::string_view span, const json* member, Present present, const char* what) {
  INFO(what);
  if (member != nullptr && present(*member)) {
    REQUIRE_FALSE(span.empty());
    CHECK(json::parse(span) == *member);
  } else {
    CHECK(span.empty());
  }
}

// Every field of `fields`, as nlohmann::json reads `data`.
void CheckAgainstNlohmann(const std::string& data, const ChunkFields& fields) {
  INFO(data);
  const json chunk = json::parse(data);
  const json* choices = Member(&chunk, "choices");
  const bool has_choices = choices != nullptr && choices->is_array() && !choices->empty();
  const json* choice = has_choices ? &(*choices)[0] : nullptr;
  const json* delta = Member(choice, "delta");
  CHECK(fields.has_choices == has_choices);
  CHECK(fields.content == StringMember(delta, "content"));
  const std::string reasoning_content = StringMember(delta, "reasoning_content");
  CHECK(fields.reasoning ==
        (reasoning_content.empty() ? StringMember(delta, "reasoning") : reasoning_content));
  CHECK(fields.finish_reason == StringMember(choice, "finish_reason"));
  // model and system_fingerprint are the raw text between the quotes.
  for (const auto& [view, key] : {std::pair{fields.model, "model"},
                                  std::pair{fields.system_fingerprint, "system_fingerprint"}}) {
    const json* value = Member(&chunk, key);
    if (value != nullptr && value->is_string()) {
      CHECK(json::parse("\"" + std::string(view) + "\"") == *value);
    } else {
      CHECK(view.empty());
    }
  }
  const auto is_object = [](const json& j) { return j.is_object(); };
  const auto is_array = [](const json& j) { return j.is_array(); };
  const auto is_not_null = [](const json& j) { return !j.is_null(); };
  CheckSpan(fields.usage_json, Member(&chunk, "usage"), is_object, "usage");
  CheckSpan(fields.timings_json, Member(&chunk, "timings"), is_object, "timings");
  CheckSpan(fields.meta_info_json, Member(&chunk, "meta_info"), is_object, "meta_info");
  CheckSpan(fields.error_json, Member(&chunk, "error"), is_not_null, "error");
  CheckSpan(fields.tool_calls_json, Member(delta, "tool_calls"), is_array, "tool_calls");
  CheckSpan(fields.message_json, Member(choice, "message"), is_object, "message");
}

const std::vector<std::string> kChatStreams = {
    "constructed-midstream-error.sse",    "constructed-multitoken-chunks.sse",
    "constructed-openai-usage-chunk.sse", "constructed-qwen-xml-tool-call-in-content.sse",
    "constructed-reasoning-crlf.sse",     "constructed-tool-call-fragments.sse",
    "llamacpp-b4748-chat-stream.http",    "llamacpp-b4748-prompt-silently-truncated.http",
    "llamacpp-b4748-prompt-cache-hit.http",
};

TEST_CASE("chunk: every data event of every fixture reads as nlohmann::json reads it", "[chunk]") {
  int chunks_read = 0;
  for (const std::string& name : FixtureNames()) {
    INFO(name);
    if (name == "llamacpp-b4748-metrics.http") continue;  // Prometheus text: no events
    for (const std::string& data : Chunks(name)) {
      if (data.front() == '[') continue;  // the /slots body is an array, not a chunk
      const ChunkFields fields = Read(data);
      CheckAgainstNlohmann(data, fields);
      ++chunks_read;
    }
  }
  CHECK(chunks_read == 84);  // 75, and the 9 of llamacpp-b4748-prompt-cache-hit.http
}

TEST_CASE("chunk: streamed content adds up to what nlohmann::json reads", "[chunk]") {
  for (const std::string& name : kChatStreams) {
    INFO(name);
    std::string content, reasoning, expected_content, expected_reasoning;
    ChunkFields fields;  // reused, as the backend reuses it
    for (const std::string& data : Chunks(name)) {
      REQUIRE(ReadChunk(data, fields, nullptr));
      content += fields.content;
      reasoning += fields.reasoning;
      const json chunk = json::parse(data);
      if (!chunk.contains("choices") || chunk["choices"].empty()) continue;
      const json& delta = chunk["choices"][0]["delta"];
      if (delta.contains("content") && delta["content"].is_string()) {
        expected_content += delta["content"].get<std::string>();
      }
      if (delta.contains("reasoning_content") && delta["reasoning_content"].is_string()) {
        expected_reasoning += delta["reasoning_content"].get<std::string>();
      }
    }
    CHECK(content == expected_content);
    CHECK(reasoning == expected_reasoning);
  }
  SECTION("the stream and the non-streamed answer to the same request agree") {
    std::string streamed;
    for (const std::string& data : Chunks("llamacpp-b4748-chat-stream.http")) {
      streamed += Read(data).content;
    }
    CHECK(streamed == "\"Here?\" Asked Jack.\nThey ran arou");
    const std::string body = Body("llamacpp-b4748-chat-nonstream.http");
    CHECK(json::parse(Read(body).message_json)["content"] == streamed);
  }
}

TEST_CASE("chunk: llama.cpp's last chunk carries finish_reason, usage and timings", "[chunk]") {
  const std::vector<std::string> chunks = Chunks("llamacpp-b4748-chat-stream.http");
  REQUIRE(chunks.size() == 25);
  const ChunkFields first = Read(chunks.front());
  CHECK(first.content == "\"");
  CHECK(first.finish_reason.empty());
  CHECK(first.usage_json.empty());
  CHECK(first.model == "x");
  CHECK(first.system_fingerprint == "b0-unknown");
  const ChunkFields last = Read(chunks.back());
  CHECK(last.has_choices);
  CHECK(last.content.empty());
  CHECK(last.finish_reason == "length");
  CHECK(json::parse(last.usage_json) ==
        json{{"completion_tokens", 24}, {"prompt_tokens", 46}, {"total_tokens", 70}});
  const json timings = json::parse(last.timings_json);
  CHECK(timings["prompt_n"] == 46);
  CHECK(timings["predicted_n"] == 24);
  CHECK(timings["predicted_ms"] == 3.979);
}

TEST_CASE("chunk: an OpenAI usage chunk has empty choices", "[chunk]") {
  const std::vector<std::string> chunks = Chunks("constructed-openai-usage-chunk.sse");
  REQUIRE(chunks.size() == 5);
  const ChunkFields role = Read(chunks[0]);  // the role-only first chunk
  CHECK(role.has_choices);
  CHECK(role.content.empty());
  CHECK(Read(chunks[3]).finish_reason == "stop");
  const ChunkFields usage = Read(chunks[4]);
  CHECK_FALSE(usage.has_choices);
  CHECK(usage.model == "m");
  CHECK(json::parse(usage.usage_json)["prompt_tokens_details"]["cached_tokens"] == 8);
}

TEST_CASE("chunk: reasoning deltas, null content", "[chunk]") {
  const std::vector<std::string> chunks = Chunks("constructed-reasoning-crlf.sse");
  REQUIRE(chunks.size() == 4);
  const ChunkFields first = Read(chunks[0]);
  CHECK(first.content.empty());  // "content":null
  CHECK(first.reasoning == "Let me think");
  CHECK(Read(chunks[1]).reasoning == " about 6*7.");
  CHECK(Read(chunks[2]).content == "ANSWER: 42");
  CHECK(Read(chunks[2]).reasoning.empty());
  const ChunkFields last = Read(chunks[3]);
  CHECK(json::parse(last.usage_json)["completion_tokens_details"]["reasoning_tokens"] == 6);
}

TEST_CASE("chunk: reasoning_content wins over reasoning when both are sent", "[chunk]") {
  const auto [delta, reasoning] = GENERATE(table<std::string, std::string>({
      {R"({"reasoning_content":"a","reasoning":"a"})", "a"},
      {R"({"reasoning":"b","reasoning_content":"a"})", "a"},
      {R"({"reasoning":"b"})", "b"},
      {R"({"reasoning":"b","reasoning_content":null})", "b"},
      {R"({"reasoning_content":"","reasoning":"b"})", "b"},
      {R"({"reasoning_content":"a","reasoning":null})", "a"},
      {R"({"reasoning":"\u00e9\n"})", "é\n"},
      {R"({"reasoning":null})", ""},
  }));
  INFO(delta);
  CHECK(Read(R"({"choices":[{"delta":)" + delta + "}]}").reasoning == reasoning);
}

TEST_CASE("chunk: streamed tool-call fragments are returned raw", "[chunk]") {
  const std::vector<std::string> chunks = Chunks("constructed-tool-call-fragments.sse");
  REQUIRE(chunks.size() == 5);
  const ChunkFields first = Read(chunks[0]);
  CHECK(first.content.empty());
  const json calls = json::parse(first.tool_calls_json);
  CHECK(calls[0]["id"] == "call_a");
  CHECK(calls[0]["function"]["name"] == "bash");
  CHECK(json::parse(Read(chunks[1]).tool_calls_json)[0]["function"]["arguments"] == "{\"comm");
  const ChunkFields last = Read(chunks[4]);
  CHECK(last.tool_calls_json.empty());
  CHECK(last.finish_reason == "tool_calls");
}

TEST_CASE("chunk: SGLang meta_info is returned raw", "[chunk]") {
  const std::vector<std::string> chunks = Chunks("constructed-multitoken-chunks.sse");
  REQUIRE(chunks.size() == 4);
  CHECK(Read(chunks[1]).content == "\n    return a + b");
  const json meta = json::parse(Read(chunks[3]).meta_info_json);
  CHECK(meta["spec_accept_length"] == 4.0);
  CHECK(meta["spec_verify_ct"] == 3);
}

TEST_CASE("chunk: an error object or string", "[chunk]") {
  SECTION("mid-stream, after normal chunks") {
    const std::vector<std::string> chunks = Chunks("constructed-midstream-error.sse");
    REQUIRE(chunks.size() == 2);
    CHECK(Read(chunks[0]).error_json.empty());
    const ChunkFields error = Read(chunks[1]);
    CHECK_FALSE(error.has_choices);
    CHECK(json::parse(error.error_json)["message"] == "CUDA error: out of memory");
  }
  SECTION("as the JSON body of an HTTP 500") {
    const std::string body = Body("llamacpp-b4748-tools-without-jinja.http");
    const ChunkFields error = Read(body);  // its views point into `body`
    CHECK(json::parse(error.error_json) == json{{"code", 500},
                                                {"message", "tools param requires --jinja flag"},
                                                {"type", "server_error"}});
  }
  SECTION("a bare string") {
    CHECK(Read(R"({"error": "model \"x\" not found"})").error_json == R"("model \"x\" not found")");
  }
  SECTION("null is no error") {
    CHECK(Read(R"({"error":null})").error_json.empty());
  }
}

TEST_CASE("chunk: a non-streamed completion gives its message raw", "[chunk]") {
  const std::string data = Body("llamacpp-b4748-chat-nonstream.http");
  const ChunkFields body = Read(data);
  CHECK(body.has_choices);
  CHECK(body.content.empty());  // not a delta
  CHECK(body.finish_reason == "length");
  CHECK(json::parse(body.message_json)["role"] == "assistant");
  CHECK(json::parse(body.usage_json)["prompt_tokens"] == 46);
  CHECK(json::parse(body.timings_json)["predicted_n"] == 24);
}

TEST_CASE("chunk: llama.cpp's native /completion stream reads without choices", "[chunk]") {
  const std::vector<std::string> chunks = Chunks("llamacpp-b4748-native-completion-stream.http");
  REQUIRE(chunks.size() == 13);
  CHECK_FALSE(Read(chunks[0]).has_choices);
  CHECK(Read(chunks[0]).content.empty());  // top-level `content` is not a chat delta
  CHECK(json::parse(Read(chunks[12]).timings_json)["predicted_n"] == 12);
  CHECK(Read(chunks[12]).model == "gpt-3.5-turbo");
}

TEST_CASE("chunk: null, absent and oddly typed fields read as empty", "[chunk]") {
  SECTION("nulls") {
    const ChunkFields f = Read(R"({"choices":[{"delta":{"content":null,"tool_calls":null},)"
                               R"("finish_reason":null,"message":null}],"usage":null,)"
                               R"("timings":null,"model":null,"error":null})");
    CHECK(f.has_choices);
    CHECK(f.content.empty());
    CHECK(f.finish_reason.empty());
    CHECK(f.tool_calls_json.empty());
    CHECK(f.message_json.empty());
    CHECK(f.usage_json.empty());
    CHECK(f.timings_json.empty());
    CHECK(f.model.empty());
    CHECK(f.error_json.empty());
  }
  SECTION("an empty object") {
    const ChunkFields f = Read("{}");
    CHECK_FALSE(f.has_choices);
    CHECK(f.content.empty());
  }
  SECTION("a choice that is not an object counts as a choice") {
    const ChunkFields f = Read(R"({"choices":[null]})");
    CHECK(f.has_choices);
    CHECK(f.content.empty());
  }
  SECTION("other types are skipped") {
    const ChunkFields f = Read(R"({"choices":{"delta":1},"usage":[1],)"
                               R"("model":7,"x":{"choices":[{"delta":{"content":"no"}}]}})");
    CHECK_FALSE(f.has_choices);
    CHECK(f.content.empty());
    CHECK(f.usage_json.empty());
    CHECK(f.model.empty());
  }
}

TEST_CASE("chunk: only choices[0] is read", "[chunk]") {
  const ChunkFields f = Read(R"({"choices":[{"index":0,"delta":{"content":"zero"}},)"
                             R"({"index":1,"delta":{"content":"one"},"finish_reason":"stop"}]})");
  CHECK(f.content == "zero");
  CHECK(f.finish_reason.empty());
}

TEST_CASE("chunk: a repeated key counts its last value, as in nlohmann::json", "[chunk]") {
  const std::string data = R"({"choices":[{"delta":{"content":"a","content":"b"}}],)"
                           R"("usage":{"n":1},"usage":null,"model":"p","model":"q"})";
  const ChunkFields f = Read(data);
  CHECK(f.content == "b");
  CHECK(f.usage_json.empty());
  CHECK(f.model == "q");
  CheckAgainstNlohmann(data, f);
}

TEST_CASE("chunk: keys written with escapes still match", "[chunk]") {
  const ChunkFields f =
      Read(R"({"\u0063hoices":[{"delta":{"con\u0074ent":"x","reasoning\u005fcontent":"r"}}]})");
  CHECK(f.content == "x");
  CHECK(f.reasoning == "r");
  SECTION("a key longer than any looked for is skipped") {
    CHECK(Read(R"({"choices_and_a_very_long_key_indeed":[{"delta":{"content":"x"}}]})")
              .content.empty());
  }
}

TEST_CASE("chunk: escapes decode as RFC 8259 says", "[chunk]") {
  using namespace std::string_literals;
  const auto [escaped, text] = GENERATE(table<std::string, std::string>({
      {R"(\"\\\/\b\f\n\r\t)", "\"\\/\b\f\n\r\t"},
      {R"(\u00e9\u00E9)", "éé"},
      {R"(\u4f60\u597d)", "你好"},
      {R"(\ud83d\ude00)", "😀"},
      {R"(\uD83D\uDE00)", "😀"},
      {R"(\udbff\udfff)", "\xF4\x8F\xBF\xBF"},  // U+10FFFF
      {R"(a\u0000b)", "a\0b"s},
      {R"(\u007f\u0080\u07ff\u0800\uffff)", "\x7F\xC2\x80\xDF\xBF\xE0\xA0\x80\xEF\xBF\xBF"},
      {"raw 你好 🙂", "raw 你好 🙂"},
      // the edges of RFC 3629's table: U+0080, U+07FF, U+0800, U+D7FF, U+E000, U+10000, U+10FFFF
      {"\xC2\x80\xDF\xBF\xE0\xA0\x80\xED\x9F\xBF\xEE\x80\x80\xF0\x90\x80\x80\xF4\x8F\xBF\xBF",
       "\xC2\x80\xDF\xBF\xE0\xA0\x80\xED\x9F\xBF\xEE\x80\x80\xF0\x90\x80\x80\xF4\x8F\xBF\xBF"},
      {"", ""},
  }));
  INFO(escaped);
  const std::string data = R"({"choices":[{"delta":{"content":")" + escaped + R"("}}]})";
  CHECK(Read(data).content == text);
  CHECK(json::parse(data)["choices"][0]["delta"]["content"] == text);
}

// Random text of every kind of code point, written three ways: nlohmann's dump (raw UTF-8),
// its ASCII dump (\uXXXX and surrogate pairs), and a random mix of every escape JSON allows.
std::string EncodeUtf8(uint32_t cp) {
  std::string out;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return out;
}

std::string Hex4(uint32_t unit, bool upper) {
  char buffer[8];
  std::snprintf(buffer, sizeof(buffer), upper ? "\\u%04X" : "\\u%04x", unit);
  return buffer;
}

TEST_CASE("chunk: random strings round-trip through nlohmann::json and ReadChunk", "[chunk]") {
  std::mt19937 rng(20250101);
  auto uniform = [&rng](uint32_t lo, uint32_t hi) {
    return std::uniform_int_distribution<uint32_t>(lo, hi)(rng);
  };
  ChunkFields fields;
  for (int round = 0; round < 3000; ++round) {
    std::vector<uint32_t> code_points(uniform(0, 24));
    for (uint32_t& cp : code_points) {
      // Ranges of code points: controls, the characters JSON escapes, the rest of ASCII, two-
      // and three-byte UTF-8 on either side of the surrogates, four-byte UTF-8.
      static constexpr std::pair<uint32_t, uint32_t> kRanges[] = {
          {0, 0x1F},     {'"', '"'},      {'\\', '\\'},     {'/', '/'},         {0x20, 0x7F},
          {0x80, 0x7FF}, {0x800, 0xD7FF}, {0xE000, 0xFFFF}, {0x10000, 0x10FFFF}};
      const auto [lo, hi] = kRanges[uniform(0, std::size(kRanges) - 1)];
      cp = uniform(lo, hi);
    }
    std::string text, mixed;
    for (uint32_t cp : code_points) {
      text += EncodeUtf8(cp);
      const bool upper = uniform(0, 1) == 1;
      const char* short_escape = cp == '"'    ? "\\\""
                                 : cp == '\\' ? "\\\\"
                                 : cp == '/'  ? "\\/"
                                 : cp == '\b' ? "\\b"
                                 : cp == '\f' ? "\\f"
                                 : cp == '\n' ? "\\n"
                                 : cp == '\r' ? "\\r"
                                 : cp == '\t' ? "\\t"
                                              : nullptr;
      const bool must_escape = cp < 0x20 || cp == '"' || cp == '\\';
      const uint32_t way = uniform(0, 2);
      if (way == 0 && !must_escape) {
        mixed += EncodeUtf8(cp);
      } else if (way == 1 && short_escape != nullptr) {
        mixed += short_escape;
      } else if (cp >= 0x10000) {
        mixed += Hex4(0xD800 + ((cp - 0x10000) >> 10), upper);
        mixed += Hex4(0xDC00 + ((cp - 0x10000) & 0x3FF), upper);
      } else {
        mixed += Hex4(cp, upper);
      }
    }
    json chunk;
    chunk["choices"] =
        json::array({json{{"delta", json{{"content", text}}}, {"finish_reason", text}}});
    std::string mixed_chunk = R"({"choices":[{"delta":{"content":")";
    mixed_chunk += mixed;
    mixed_chunk += R"("},"finish_reason":")";
    mixed_chunk += mixed;
    mixed_chunk += R"("}]})";
    INFO("round " << round);
    REQUIRE(json::parse(mixed_chunk) == chunk);  // the mixed writing is valid JSON for `text`
    for (const std::string& data :
         {chunk.dump(), chunk.dump(-1, ' ', true), chunk.dump(2), mixed_chunk}) {
      INFO(data);
      std::string error;
      REQUIRE(ReadChunk(data, fields, &error));
      REQUIRE(fields.content == text);
      REQUIRE(fields.finish_reason == text);
    }
  }
}

TEST_CASE("chunk: malformed chunks are rejected with the byte offset", "[chunk]") {
  const auto [data, error] = GENERATE(table<std::string, std::string>({
      // truncated object
      {R"({"choices":[{"delta":{"content":"hi"}}])",
       "at byte 39: expected ',' or '}', got end of input"},
      // bad escape
      {R"({"content":"a\qb"})",
       R"(at byte 13: invalid escape '\q' (JSON allows \" \\ \/ \b \f \n \r \t \uXXXX))"},
      // trailing garbage
      {R"({"a":1} x)", "at byte 8: expected end of input, got 'x'"},
      {R"({"a":1}})", "at byte 7: expected end of input, got '}'"},
      // unterminated string: the offset is where it opened
      {R"({"a":"abc)", "at byte 5: unterminated string"},
      {R"({"a":"x\)", "at byte 5: unterminated string"},
      {R"({"a":"\u12)", "at byte 5: unterminated string"},
      {"{\"a\":\"\xE4\xBD", "at byte 5: unterminated string"},
      // missing colon
      {R"({"a" 1})", "at byte 5: expected ':', got '1'"},
      {"", "at byte 0: expected '{', got end of input"},
      {"[DONE]", "at byte 0: expected '{', got '['"},
      {R"({a:1})", "at byte 1: expected a string key or '}', got 'a'"},
      {R"({"a":1,})", "at byte 7: expected a string key, got '}'"},
      {R"({"a":01})", "at byte 6: expected ',' or '}', got '1'"},
      {R"({"a":-})", "at byte 6: expected a digit, got '}'"},
      {R"({"a":1.})", "at byte 7: expected a digit after '.', got '}'"},
      {R"({"a":1e+})", "at byte 8: expected a digit in the exponent, got '}'"},
      {R"({"a":})", "at byte 5: expected a value, got '}'"},
      {R"({"a":nul})", "at byte 5: invalid literal, expected 'null'"},
      {R"({"a":[1 2]})", "at byte 8: expected ',' or ']', got '2'"},
      {"{\"a\":\"x\ny\"}", "at byte 7: control character in string (it must be escaped)"},
      {"{\"a\":\"\xC3\x28\"}", "at byte 6: invalid UTF-8 in string"},
      {"{\"a\":\"\xED\xA0\x80\"}", "at byte 6: invalid UTF-8 in string"},      // a surrogate
      {"{\"a\":\"\xC0\xAF\"}", "at byte 6: invalid UTF-8 in string"},          // overlong '/'
      {"{\"a\":\"\xE0\x80\xAF\"}", "at byte 6: invalid UTF-8 in string"},      // overlong, 3 bytes
      {"{\"a\":\"\xF0\x8F\xBF\xBF\"}", "at byte 6: invalid UTF-8 in string"},  // overlong, 4
      {"{\"a\":\"\xF4\x90\x80\x80\"}", "at byte 6: invalid UTF-8 in string"},  // > U+10FFFF
      {"{\"a\":\"\xF5\x80\x80\x80\"}", "at byte 6: invalid UTF-8 in string"},
      {"{\"a\":\"x\x80\"}", "at byte 7: invalid UTF-8 in string"},  // a lone continuation byte
      {R"({"a":"\ud83d x"})",
       R"(at byte 6: high surrogate \ud83d not followed by a low surrogate)"},
      {R"({"a":"\ud83d\u0041"})",
       R"(at byte 6: high surrogate \ud83d not followed by a low surrogate)"},
      {R"({"a":"\ude00"})",
       R"(at byte 6: low surrogate \ude00 without a high surrogate before it)"},
      {R"({"a":"\u12g4"})", R"(at byte 10: expected 4 hex digits after '\u', got 'g')"},
      {"{\"a\":1}\x01", "at byte 7: expected end of input, got byte 0x01"},
  }));
  INFO(data);
  CHECK(ReadError(data) == error);
  INFO("nlohmann::json rejects it too");
  CHECK_FALSE(json::accept(data));
}

TEST_CASE("chunk: a failed read leaves every field empty", "[chunk]") {
  ChunkFields fields;
  CHECK_FALSE(ReadChunk(R"({"choices":[{"delta":{"content":"half"}}],"model":"m",)", fields,
                        nullptr));  // a null error pointer is allowed
  CHECK(fields.content.empty());
  CHECK(fields.model.empty());
  CHECK_FALSE(fields.has_choices);
}

TEST_CASE("chunk: nesting is limited to 512 levels", "[chunk]") {
  auto nested = [](int depth) {
    return R"({"x":)" + std::string(depth, '[') + std::string(depth, ']') +
           R"(,"choices":[{"delta":{"content":"ok"}}]})";
  };
  CHECK(Read(nested(511)).content == "ok");  // 511 arrays inside the top-level object
  // nlohmann::json has no limit; ours keeps recursion off the stack's edge.
  CHECK(ReadError(nested(512)) == "at byte 516: nesting deeper than 512 levels");
}

// One to three random edits of a valid chunk: bytes JSON cares about, bytes that break or
// nearly break UTF-8, escapes, truncation. Never NUL: nlohmann::json takes a NUL outside a string
// for the end of the input, which no server sends and ReadChunk rightly rejects.
std::string Mutate(std::string data, std::mt19937& rng) {
  static const std::string kBytes = std::string("{}[]\":,\\/019-+.eEtrunlfasxb \t\n\r") +
                                    "\x01\x1f\x7f\x80\xbf\xc0\xc3\xe4\xed\xa0\xf0\xf4\xf5\xff";
  static const char* kSnippets[] = {
      "\\u", "\\ud83d", "\\udc00", "\\ud83d\\ude00", "1e5",   "-0", "true", "null",
      "[]",  "{}",      ",",       "\"\"",           "\":\"", "\\", "1e999"};
  auto uniform = [&rng](size_t lo, size_t hi) {
    return std::uniform_int_distribution<size_t>(lo, hi)(rng);
  };
  const size_t edits = uniform(1, 3);
  for (size_t e = 0; e < edits && !data.empty(); ++e) {
    const size_t at = uniform(0, data.size() - 1);
    char byte = kBytes[uniform(0, kBytes.size() - 1)];
    if (uniform(0, 9) == 0) byte = static_cast<char>(uniform(1, 255));
    switch (uniform(0, 5)) {
      case 0:
        data[at] = byte;
        break;
      case 1:
        data.insert(at, 1, byte);
        break;
      case 2:
        data.erase(at, 1);
        break;
      case 3:
        data.resize(at);
        break;
      case 4:
        data.insert(at, kSnippets[uniform(0, std::size(kSnippets) - 1)]);
        break;
      default:
        data.insert(at, data.substr(at, uniform(1, 8)));
        break;
    }
  }
  return data;
}

TEST_CASE("chunk: accepts exactly what nlohmann::json accepts, on mutated chunks", "[chunk]") {
  std::vector<std::string> chunks;
  for (const std::string& name : kChatStreams) {
    for (std::string& data : Chunks(name)) chunks.push_back(std::move(data));
  }
  chunks.push_back(Body("llamacpp-b4748-chat-nonstream.http"));
  std::mt19937 rng(7);
  int accepted = 0, rejected = 0, overflow = 0;
  ChunkFields fields;
  for (int round = 0; round < 1000; ++round) {
    for (const std::string& chunk : chunks) {
      const std::string data = Mutate(chunk, rng);
      std::string error;
      const bool ours = ReadChunk(data, fields, &error);
      bool theirs = false;
      try {
        theirs = json::parse(data).is_object();
      } catch (const json::out_of_range&) {
        // "number overflow" (1e999): nlohmann::json refuses a number no double holds; a chunk
        // reader must not fail a whole chunk over a field it does not read.
        ++overflow;
        continue;
      } catch (const json::parse_error&) {
        theirs = false;
      }
      INFO(data);
      INFO(error);
      REQUIRE(ours == theirs);
      if (ours) {
        ++accepted;
        CheckAgainstNlohmann(data, fields);
      } else {
        ++rejected;
        REQUIRE(error.rfind("at byte ", 0) == 0);
      }
    }
  }
  // Both outcomes must be common for the comparison to mean something.
  CHECK(accepted > 2000);
  CHECK(rejected > 2000);
  CHECK(overflow > 0);
}

TEST_CASE("chunk: reading a stream allocates nothing once the strings have grown", "[chunk]") {
  std::vector<std::string> chunks;
  for (const std::string& name : kChatStreams) {
    for (std::string& data : Chunks(name)) chunks.push_back(std::move(data));
  }
  ChunkFields fields;
  size_t content_bytes = 0;
  const long start = evalrun::testing::AllocationCount();
  for (const std::string& data : chunks) ReadChunk(data, fields, nullptr);  // strings grow
  const long before = evalrun::testing::AllocationCount();
  CHECK(before > start);  // the counter counts
  bool all_read = true;
  for (int pass = 0; pass < 10; ++pass) {
    for (const std::string& data : chunks) {
      all_read = ReadChunk(data, fields, nullptr) && all_read;
      content_bytes += fields.content.size();
    }
  }
  const long allocations = evalrun::testing::AllocationCount() - before;
  CHECK(all_read);
  CHECK(allocations == 0);
  CHECK(content_bytes > 0);
}

}  // namespace
}  // namespace evalrun
