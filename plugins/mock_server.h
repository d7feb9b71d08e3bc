#pragma once
// `evalrun mock-server`: a deterministic OpenAI-compatible endpoint for tests, the demo and
// calibration (DESIGN.md section 7). One thread, one epoll loop, non-blocking sockets, HTTP/1.1
// keep-alive, paced with a timerfd (timer slack 1 ns) so event times are exact to well under a
// millisecond; with decode_tps = 0 it writes as fast as the socket takes it.
//
// Timing model, per chat completion (t0 = the request body fully read):
//   first event (1 token)  at t0 + ttft_ms + prompt_tokens / prefill_tps (that term 0 when
//                          prefill_tps is 0)
//   token i (i = 0..n-1)   is generated at t_first + i / decode_tps
//   event j >= 1 carries tokens_per_event tokens and is sent when its last token is generated,
//   so (n - 1) / (t_last - t_first) is decode_tps exactly, as with a real server whose first
//   token comes from prefill and later steps accept several draft tokens.
// The first `reasoning_tokens` tokens arrive as delta.reasoning_content, the rest as content.
//
// Chosen answers: when MockConfig::answers is not empty, the first rule whose `match` occurs in
// the last user message decides the reply: its reasoning then its content, cut into tokens by
// the MockTokenCount rule and paced like generated tokens (no rule matched: generated filler).
//
// Routes: POST /v1/chat/completions (stream true/false), GET /v1/models, GET /health,
// POST /tokenize ({"content": text} -> {"tokens": [ids...]}, llama.cpp's shape).
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace evalrun {

enum class MockUsageStyle {
  kSeparateChunk,  // OpenAI/vLLM: a final chunk with "choices": [] carrying usage (only when the
                   // request asked for stream_options.include_usage)
  kLastChunk,      // llama.cpp: usage (and timings) on the chunk carrying finish_reason
  kNone,           // no usage at all
};

enum class MockFault {
  kNone,
  kHttp500,     // answer HTTP 500 with an OpenAI-style error object
  kDrop,        // close the connection after `fault_after_events` events
  kStall,       // after `fault_after_events` events, send nothing for `stall_s` seconds, then go on
  kMalformed,   // event number `fault_after_events` carries JSON cut in half; the stream goes on
};

// One rule of the answer table (`evalrun mock-server --answers FILE`).
struct MockAnswer {
  std::string match;          // chosen when this is a substring of the last user message's text
                              // (a string content, or its text parts joined); non-empty
  std::string content;        // the reply, sent byte for byte; "" is an empty reply
  std::string reasoning;      // sent first, as reasoning_content; "" none
  std::string finish_reason;  // reported when the whole rule was sent ("" means "stop");
                              // "length" imitates a reply cut by max_tokens. A max_tokens below
                              // the rule's tokens cuts it, with "length", whatever this says.
};

struct MockConfig {
  std::string host = "127.0.0.1";
  int port = 0;                      // 0: pick a free port (see MockServer::port())
  std::string model = "evalrun-mock";
  double ttft_ms = 50;               // fixed time to first token
  double prefill_tps = 0;            // prompt tokens per second added to TTFT; 0: none
  double decode_tps = 100;           // tokens per second per stream; 0: no pacing at all
  int tokens_per_event = 1;          // > 1 imitates speculative decoding (first event: 1 token)
  int reasoning_tokens = 0;          // tokens sent as reasoning_content before the answer
  int answer_tokens = 64;            // natural answer length (EOS) when ignore_eos is not set
  bool honor_ignore_eos = true;      // false: imitate a server that ignores ignore_eos
  bool timings = true;               // llama.cpp-style `timings` object on the last chunk
  MockUsageStyle usage = MockUsageStyle::kSeparateChunk;
  MockFault fault = MockFault::kNone;
  std::vector<int64_t> fault_on;     // 1-based chat-completion request numbers that get the
                                     // fault, in arrival order; empty: every request
  int fault_after_events = 3;        // for kDrop, kStall, kMalformed
  double stall_s = 5;                // for kStall
  int64_t max_context = 0;           // > 0: silently cut prompts longer than this (llama.cpp
                                     // b4748 behaviour), reporting the cut prompt_tokens
  // The answer table, first match wins. A matched rule replaces reasoning_tokens and
  // answer_tokens for that request, and ignore_eos does not lengthen it. Text that is not valid
  // UTF-8 goes out with U+FFFD in place of the bad bytes; text that is only whitespace has no
  // tokens and goes out as nothing.
  std::vector<MockAnswer> answers;
};

// Reads an answer table: {"comment": "...", "answers": [{"match": ..., "content": ...,
// "reasoning": ..., "finish_reason": "stop"|"length", "comment": ...}]} (only "answers" and each
// rule's "match" and "content" required; comments are for readers and ignored). `name` (the
// file's path) starts every error message, e.g. "answers.json: answers[3]: 'match' must be a
// non-empty string"; unknown keys are errors with "did you mean", and so is a rule that an
// earlier rule always shadows (its match contains the earlier one's). Throws evalrun::Error.
std::vector<MockAnswer> ParseMockAnswers(std::string_view json_text, const std::string& name);
// ParseMockAnswers of the file at `path`; throws Error("<path>: cannot read it: <why>").
std::vector<MockAnswer> LoadMockAnswers(const std::string& path);
// The index of the first rule whose match occurs in `last_user_text`, or -1 when none does.
int64_t FindMockAnswer(const std::vector<MockAnswer>& answers, std::string_view last_user_text);

// The mock's tokenizer, shared by /tokenize and usage.prompt_tokens: each run of ASCII letters
// or digits is one token, each other non-space ASCII character is one token, each non-ASCII code
// point is one token, whitespace is free.
int64_t MockTokenCount(std::string_view text);
// Prompt tokens of a chat: sum over messages of (MockTokenCount(content) + 3), plus 3 (a
// ChatML-like template overhead), so that counting the bare text undercounts as with real
// servers.
inline constexpr int64_t kMockTokensPerMessage = 3;
inline constexpr int64_t kMockTokensPerChat = 3;

class MockServer {
 public:
  explicit MockServer(MockConfig config);
  ~MockServer();  // stops the server if running
  MockServer(const MockServer&) = delete;
  MockServer& operator=(const MockServer&) = delete;

  // Binds and listens (throws evalrun::Error naming the address on failure), then serves on a
  // background thread until Stop().
  void Start();
  // Binds, listens and serves on the calling thread until `stop` becomes true (checked at least
  // every 100 ms). For the `evalrun mock-server` command.
  void Run(const std::atomic<bool>& stop);
  void Stop();

  int port() const;            // the bound port (after Start/Run has bound)
  std::string base_url() const;  // "http://127.0.0.1:PORT"
  int64_t chat_requests() const;  // chat completions received so far

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace evalrun
