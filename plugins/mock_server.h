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
// Scripted agent conversations: a rule with `turns` matches the FIRST user message (the task
// statement; later messages are tool results) and replies with turns[k], k = the number of
// assistant messages already in the request; past the end of the script, the last turn is
// repeated (so a script that ends in a plain reply keeps giving it). A turn's native tool calls
// come after its reasoning and content, streamed as real servers stream them: per call, a first
// fragment {index, id, type, function: {name, arguments: ""}} and then its arguments text in
// pieces of tokens_per_event mock tokens (id "call_<k>_<i>", i the call's index), paced like
// tokens, then finish_reason "tool_calls"; a non-streamed request gets message.tool_calls (and
// content null when the turn has none). The arguments text counts as completion tokens by the
// mock tokenizer, and max_tokens cuts it like any text (finish_reason "length"). A turn that
// imitates a server without a tool parser writes its calls as text in `content` (Qwen XML or
// Hermes markup): that is just content.
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

// How each streamed text event's JSON is laid out: the same fields a real server sends, in its
// order, so that the client's per-event cost is measured on realistic bytes.
enum class MockChunkLayout {
  kEvalrun,   // {"id","object","created","model","system_fingerprint","choices":[{"index",
              // "delta","finish_reason"}]}: short, the mock's own
  kLlamaCpp,  // llama.cpp b4748 (tests/fixtures/sse/llamacpp-b4748-chat-stream.http): "choices"
              // first, then "created","id","model","system_fingerprint","object"
  kOpenAI,    // OpenAI's chat.completion.chunk: "service_tier", "system_fingerprint", choices
              // with "logprobs":null, "usage":null and "obfuscation" padding
  kSglang,    // SGLang: delta with "role":null and "tool_calls":null, "logprobs",
              // "matched_stop", "usage":null
};

enum class MockUsageStyle {
  kSeparateChunk,  // OpenAI/vLLM: a final chunk with "choices": [] carrying usage (only when the
                   // request asked for stream_options.include_usage)
  kLastChunk,      // llama.cpp: usage (and timings) on the chunk carrying finish_reason
  kNone,           // no usage at all
};

enum class MockFault {
  kNone,
  kHttp500,     // answer HTTP 500 with an OpenAI-style error object
  kHttp400,     // answer HTTP 400 "mock fault: injected HTTP 400" (a request the server refuses:
                // permanent, never retried)
  kDrop,        // close the connection after `fault_after_events` events
  kStall,       // after `fault_after_events` events, send nothing for `stall_s` seconds, then go on
  kMalformed,   // event number `fault_after_events` carries JSON cut in half; the stream goes on
};

// One native tool call of a scripted turn.
struct MockToolCall {
  std::string name;
  std::string arguments;  // the arguments text sent, byte for byte (compact JSON of the rule's
                          // object, or the rule's string verbatim, which may be invalid JSON)
};

// One reply of a scripted agent conversation (MockAnswer::turns).
struct MockTurn {
  std::string content;        // "" none
  std::string reasoning;      // "" none
  std::vector<MockToolCall> tool_calls;
  std::string finish_reason;  // "" means "tool_calls" when there are calls, else "stop"
};

// One rule of the answer table (`evalrun mock-server --answers FILE`).
struct MockAnswer {
  std::string match;          // chosen when this is a substring of the last user message's text
                              // (a string content, or its text parts joined); non-empty. With
                              // `turns`: of the first user message's text.
  std::string content;        // the reply, sent byte for byte; "" is an empty reply
  std::string reasoning;      // sent first, as reasoning_content; "" none
  std::string finish_reason;  // reported when the whole rule was sent ("" means "stop");
                              // "length" imitates a reply cut by max_tokens. A max_tokens below
                              // the rule's tokens cuts it, with "length", whatever this says.
  // Non-empty: a scripted conversation (content, reasoning and finish_reason are then unused):
  // the reply to a request holding k assistant messages is turns[min(k, size - 1)].
  std::vector<MockTurn> turns;
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
  // > 0: a llama.cpp-like server with this many slots. At most `slots` completions are
  // processed at once; a request arriving while all are busy waits for the slot that frees
  // first (its TTFT includes the wait; timings.prompt_ms does not, as in llama.cpp). A slot is
  // busy until the job's last token is due (paced) or its first (unpaced); a client that leaves
  // early does not free it sooner. /props answers with total_slots and n_ctx (max_context).
  int slots = 0;
  // llama.cpp's prompt cache: a request whose messages equal an earlier request's (one of the
  // last 64) reuses all but the last prompt token: timings.prompt_n 1 and cache_n, and
  // usage.prompt_tokens_details.cached_tokens, report it, and only one token's prefill is paid.
  // A request with "cache_prompt": false neither uses nor feeds the cache.
  bool prompt_cache = false;
  // > 0: SO_SNDBUF of every connection, in bytes (a server whose socket buffers are small, so
  // that writes block early; the kernel may round it).
  int send_buffer = 0;
  MockUsageStyle usage = MockUsageStyle::kSeparateChunk;
  MockChunkLayout chunk_layout = MockChunkLayout::kEvalrun;
  MockFault fault = MockFault::kNone;
  std::vector<int64_t> fault_on;     // 1-based chat-completion request numbers that get the
                                     // fault, in arrival order; empty: every request
  int fault_after_events = 3;        // for kDrop, kStall, kMalformed
  double stall_s = 5;                // for kStall
  int64_t max_context = 0;           // > 0: silently cut prompts longer than this (llama.cpp
                                     // b4748 behaviour), reporting the cut prompt_tokens; the
                                     // context is then also reported as /v1/models
                                     // max_model_len (as vLLM does) unless hide_context
  bool hide_context = false;         // do not report max_context (a server whose context is
                                     // unknown to the client)
  bool strict_context = false;       // with max_context, llama.cpp 0.7 (b11669) instead of the
                                     // cut: a longer prompt is refused with HTTP 400
                                     // exceed_context_size_error, and an answer ends when
                                     // prompt plus answer fill the context (finish_reason
                                     // "length"), whatever max_tokens said
  // An endpoint away for a while (docs/serving.md). When chat request number outage_after + 1
  // arrives, an outage of outage_s seconds starts: every route (/health and /v1/models too)
  // answers outage_status with llama.cpp's body {"error":{"code":503,"message":"Loading
  // model","type":"unavailable_error"}} (outage_message in it), or, with outage_refuse, the
  // server closes every connection and its listening socket (connections are refused) and
  // listens again when the outage is over. -1: no outage.
  int64_t outage_after = -1;
  double outage_s = 0;
  int outage_status = 503;
  std::string outage_message = "Loading model";
  bool outage_refuse = false;
  // Tool-call behaviours of real servers:
  // refuse_streamed_tools: a streamed request with a non-empty `tools` gets llama.cpp's (before
  //   mid-2025) HTTP 500 {"error":{"code":500,"message":"Cannot use tools with stream",
  //   "type":"server_error"}}; non-streamed ones are answered.
  // tools_require_jinja: any request with a non-empty `tools` gets llama.cpp b4748's answer
  //   without --jinja: HTTP 500 "tools param requires --jinja flag".
  // tool_calls_as_text "hermes" | "qwen_xml": a server that ignores `tools` (no tool parser):
  //   scripted turns' calls are written into content in that markup, never as tool_calls.
  bool refuse_streamed_tools = false;
  bool tools_require_jinja = false;
  // refuse_stream_options: a request with `stream_options` gets HTTP 400 "Unrecognized request
  //   argument supplied: stream_options" (OpenAI-style servers that do not know the field).
  bool refuse_stream_options = false;
  std::string tool_calls_as_text;
  // The answer table, first match wins. A matched rule replaces reasoning_tokens and
  // answer_tokens for that request, and ignore_eos does not lengthen it. Text that is not valid
  // UTF-8 goes out with U+FFFD in place of the bad bytes; text that is only whitespace has no
  // tokens and goes out as nothing.
  std::vector<MockAnswer> answers;
};

// Reads an answer table: {"comment": "...", "answers": [{"match": ..., "content": ...,
// "reasoning": ..., "finish_reason": "stop"|"length", "comment": ...}]} (only "answers" and each
// rule's "match" and "content" required; comments are for readers and ignored). A scripted rule
// has "match" and "turns" instead of "content" (and no "reasoning" or "finish_reason"):
//   "turns": [{"content": ..., "reasoning": ..., "finish_reason": "stop"|"length"|"tool_calls",
//              "tool_calls": [{"name": "bash", "arguments": {"command": "ls"}}], "comment": ...}]
// each turn needing "content" or a non-empty "tool_calls"; "arguments" is an object (sent as
// compact JSON) or a string sent verbatim (to script malformed arguments). `name` (the file's
// path) starts every error message, e.g. "answers.json: answers[3]: 'match' must be a non-empty
// string", "answers.json: answers[0].turns[1].tool_calls[0]: 'name' must be a non-empty string";
// unknown keys are errors with "did you mean", and so is a rule that an earlier rule of the same
// kind (scripted or not) always shadows (its match contains the earlier one's). Throws
// evalrun::Error.
std::vector<MockAnswer> ParseMockAnswers(std::string_view json_text, const std::string& name);
// ParseMockAnswers of the file at `path`; throws Error("<path>: cannot read it: <why>").
std::vector<MockAnswer> LoadMockAnswers(const std::string& path);
// The index of the first rule whose match occurs in `last_user_text`, or -1 when none does.
// (A conversation with one user message: the same as the overload below.)
int64_t FindMockAnswer(const std::vector<MockAnswer>& answers, std::string_view last_user_text);
// The index of the first rule whose match occurs in its text: `first_user_text` for a rule with
// turns, `last_user_text` for the others; -1 when none matches.
int64_t FindMockAnswer(const std::vector<MockAnswer>& answers, std::string_view first_user_text,
                       std::string_view last_user_text);

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
