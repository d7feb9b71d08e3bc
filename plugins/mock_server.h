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
};

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
