#include "plugins/openai_backend.h"

#include <fstream>
#include <random>
#include <sstream>

#include <catch2/catch.hpp>

#include "tests/support/fixtures.h"

using namespace evalrun;

namespace {

std::string ReadFixture(const std::string& name) { return testing::ReadFixture("sse/" + name); }

struct Captured {
  int status = 200;
  std::string content_type = "text/event-stream";
  std::string body;
};

Captured ReadCapture(const std::string& name) {
  const testing::HttpCapture http = testing::ReadHttpCapture("sse/" + name);
  Captured c;
  c.status = http.status;
  c.content_type = http.content_type.rfind("text/event-stream", 0) == 0 ? "text/event-stream"
                                                                        : "application/json";
  c.body = http.body;
  return c;
}

// Feeds `body` to a reader in slices of random size, each slice arriving 1 ms after the last.
RequestRecord Replay(const Captured& c, unsigned seed, TransferStatus end = TransferStatus::kCompleted,
                     int64_t max_tokens = 64) {
  RequestRecord record;
  record.max_tokens = max_tokens;
  ChatStreamReader reader(record);
  const TimePoint t0 = TimePoint(std::chrono::seconds(1000));
  reader.OnSent(t0);
  reader.OnResponseStart(c.status, c.content_type);
  std::mt19937 rng(seed);
  TimePoint t = t0;
  for (size_t pos = 0; pos < c.body.size();) {
    const size_t n = seed == 0 ? c.body.size() : 1 + rng() % 40;
    t += std::chrono::milliseconds(1);
    reader.OnBytes(std::string_view(c.body).substr(pos, n), t);
    pos += n;
  }
  TransferResult done;
  done.status = end;
  done.http_status = c.status;
  done.t_end = t + std::chrono::milliseconds(1);
  if (end == TransferStatus::kDropped) done.message = "transfer closed with outstanding read data remaining";
  reader.OnDone(done);
  CHECK(reader.done());
  return record;
}

Captured Sse(const std::string& name) {
  Captured c;
  c.body = ReadFixture(name);
  return c;
}

ServerInfo Llama() {
  ServerInfo s;
  s.kind = ServerKind::kLlamaCpp;
  s.understands_ignore_eos = true;
  s.understands_cache_prompt = true;
  return s;
}

}  // namespace

TEST_CASE("backend: the request body carries what was asked, and only what the server understands",
          "[backend]") {
  ChatRequest r;
  r.model = "qwen";
  r.messages = nlohmann::json::array({{{"role", "user"}, {"content", "hi"}}});
  r.max_tokens = 128;
  r.temperature = 0;
  r.top_p = 0.9;
  r.seed = 7;
  r.stop = {"</s>"};
  r.thinking = Thinking::kOff;
  r.ignore_eos = true;
  r.cache_prompt = false;
  const auto llama = BuildChatBody(r, Llama());
  CHECK(llama["model"] == "qwen");
  CHECK(llama["max_tokens"] == 128);
  CHECK(llama["temperature"] == 0);
  CHECK(llama["top_p"] == 0.9);
  CHECK(llama["seed"] == 7);
  CHECK(llama["stop"] == nlohmann::json::array({"</s>"}));
  CHECK(llama["chat_template_kwargs"]["enable_thinking"] == false);
  CHECK(llama["ignore_eos"] == true);
  CHECK(llama["cache_prompt"] == false);
  CHECK(llama["stream"] == true);
  CHECK(llama["stream_options"]["include_usage"] == true);

  const auto generic = BuildChatBody(r, ServerInfo{});
  CHECK_FALSE(generic.contains("ignore_eos"));
  CHECK_FALSE(generic.contains("cache_prompt"));

  r.thinking = Thinking::kAuto;
  r.stream = false;
  const auto plain = BuildChatBody(r, Llama());
  CHECK_FALSE(plain.contains("chat_template_kwargs"));
  CHECK_FALSE(plain.contains("stream_options"));
  CHECK(plain["stream"] == false);
}

TEST_CASE("backend: llama.cpp stream gives text, usage and timings on the last chunk", "[backend]") {
  const Captured c = ReadCapture("llamacpp-b4748-chat-stream.http");
  for (unsigned seed : {0u, 1u, 2u, 3u}) {
    const RequestRecord r = Replay(c, seed);
    CHECK(r.ok());
    CHECK(r.http_status == 200);
    CHECK(r.usage_reported);
    CHECK(r.usage.completion_tokens > 0);
    CHECK(r.timings.predicted_per_second.has_value());
    CHECK(r.timings.prompt_n.has_value());
    CHECK(r.system_fingerprint == "b0-unknown");
    CHECK(r.model == "x");
    CHECK(r.content.rfind("\"He", 0) == 0);
    CHECK(r.first_ns > 0);
    CHECK(r.last_ns >= r.first_ns);
    CHECK(r.end_ns >= r.last_ns);  // equal when the whole body arrives at once
    CHECK(r.text_events() == r.usage.completion_tokens);  // one event per token
  }
}

TEST_CASE("backend: OpenAI's separate usage chunk and cached tokens", "[backend]") {
  const RequestRecord r = Replay(Sse("constructed-openai-usage-chunk.sse"), 5);
  CHECK(r.ok());
  CHECK(r.content == "Hello world");
  CHECK(r.text_events() == 2);  // the empty role chunk carries no text
  CHECK(r.usage.prompt_tokens == 12);
  CHECK(r.usage.completion_tokens == 2);
  CHECK(r.usage.cached_tokens == 8);
  CHECK(r.finish_reason == "stop");
}

TEST_CASE("backend: reasoning is kept apart from the answer", "[backend]") {
  const RequestRecord r = Replay(Sse("constructed-reasoning-crlf.sse"), 9);
  CHECK(r.ok());
  CHECK(r.reasoning == "Let me think about 6*7.");
  CHECK(r.content == "ANSWER: 42");
  CHECK(r.first_ns < r.first_content_ns);
  CHECK(r.usage.reasoning_tokens == 6);
}

TEST_CASE("backend: SGLang meta_info and multi-token chunks", "[backend]") {
  const RequestRecord r = Replay(Sse("constructed-multitoken-chunks.sse"), 11);
  CHECK(r.ok());
  CHECK(r.text_events() == 2);
  CHECK(r.completion_tokens() == 12);
  CHECK(r.timings.spec_accept_length == 4.0);
  CHECK(r.usage.cached_tokens == 0);
}

TEST_CASE("backend: an error object after a 200 status ends the request with its message",
          "[backend]") {
  const RequestRecord r = Replay(Sse("constructed-midstream-error.sse"), 13);
  CHECK(r.outcome == RequestOutcome::kStreamError);
  CHECK(r.error_message == "server error in stream: CUDA error: out of memory");
  CHECK(r.content == "Partial");
}

TEST_CASE("backend: HTTP errors answered as JSON name the status and the server's message",
          "[backend]") {
  const RequestRecord r = Replay(ReadCapture("llamacpp-b4748-tools-without-jinja.http"), 17);
  CHECK(r.outcome == RequestOutcome::kHttpError);
  CHECK(r.error_message == "HTTP 500: tools param requires --jinja flag");
}

TEST_CASE("backend: a non-streamed completion is read from its JSON body", "[backend]") {
  const RequestRecord r = Replay(ReadCapture("llamacpp-b4748-chat-nonstream.http"), 0);
  CHECK(r.ok());
  CHECK(r.content == "\"Here?\" Asked Jack.\nThey ran arou");
  CHECK(r.finish_reason == "length");
  CHECK(r.usage.completion_tokens == 24);
  CHECK(r.timings.predicted_n == 24);
}

TEST_CASE("backend: the silently truncated prompt shows in usage.prompt_tokens", "[backend]") {
  RequestRecord r = Replay(ReadCapture("llamacpp-b4748-prompt-silently-truncated.http"), 19);
  CHECK(r.ok());
  CHECK(r.usage.prompt_tokens == 849);
}

TEST_CASE("backend: transport failures become recorded errors with clear messages", "[backend]") {
  const Captured c = Sse("constructed-openai-usage-chunk.sse");
  Captured cut = c;
  // Up to the end of the second event: the role chunk and "Hello".
  const size_t third = c.body.find("data:", c.body.find("Hello"));
  cut.body = c.body.substr(0, third);
  SECTION("dropped mid-stream") {
    const RequestRecord r = Replay(cut, 0, TransferStatus::kDropped);
    CHECK(r.outcome == RequestOutcome::kDropped);
    CHECK(r.error_message ==
          "connection dropped after 2 events: transfer closed with outstanding read data remaining");
  }
  SECTION("completed without finish_reason or [DONE]") {
    const RequestRecord r = Replay(cut, 0, TransferStatus::kCompleted);
    CHECK(r.outcome == RequestOutcome::kDropped);
    CHECK(r.error_message == "the stream ended without finish_reason or [DONE] after 2 events");
  }
  SECTION("a malformed event") {
    Captured bad;
    bad.body = "data: {\"choices\":[{\"delta\":{\"content\":\"bro\n\ndata: [DONE]\n\n";
    const RequestRecord r = Replay(bad, 0);
    CHECK(r.outcome == RequestOutcome::kMalformed);
    CHECK(r.error_message.rfind("event 1: malformed JSON", 0) == 0);
  }
}

TEST_CASE("backend: no usage means token counts estimated from text events", "[backend]") {
  Captured c;
  c.body =
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n"
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"b\"}}]}\n\n"
      "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
      "data: [DONE]\n\n";
  const RequestRecord r = Replay(c, 0);
  CHECK(r.ok());
  CHECK_FALSE(r.usage_reported);
  CHECK(r.completion_tokens() == 2);
}
