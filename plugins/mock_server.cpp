// The mock endpoint's engine: one epoll loop on one thread (see mock_server.h for the timing
// model and routes).
//
// Why one file (1.8k lines): the loop, the connection state machine, the timer heap and the
// answer formatting share `Conn` and `Job` and are one piece of timing-critical state (the
// tokenizer rule, MockTokenCount, is the part others use). Split by behaviour, every part would
// need the loop's internals.
//
// Shape of the loop. Every connection is a `Conn` owned by `conns`, indexed by its fd. A chat
// completion in flight is the connection's `Job`; the loop keeps a min-heap of (due time, seq, fd)
// entries, at most one live entry per connection (an entry whose seq no longer matches its
// connection's `timer_seq` is stale and skipped), and a timerfd armed at the heap's earliest due
// time with an absolute CLOCK_MONOTONIC deadline, the clock behind std::chrono::steady_clock.
// With timer slack set to 1 ns on the serving thread, lateness is the kernel's wake-up latency
// plus one send(): ~0.1-0.3 ms on a loaded 2-vCPU VM, tens of microseconds on bare metal.
//
// Paced streams (decode_tps > 0) format every event whose due time has passed into the
// connection's output buffer and send it at once. Unpaced streams (decode_tps == 0) "pump": they
// format up to kPumpFill bytes ahead, send, and repeat until the socket says EAGAIN (then wait for
// EPOLLOUT) or the connection has used its kPumpBudget for this turn (then yield to the others;
// level-triggered EPOLLOUT brings it back next turn). Nothing spins without sending. ttft_ms and
// prefill_tps still delay the first event when decode_tps is 0.
//
// Closing is deferred: a closed connection moves to `graveyard` until the end of the loop turn,
// so references held up the call stack stay valid; epoll events carry the connection's
// generation so an event for a closed fd is never applied to a new connection on the same fd.
//
// Choices the header leaves open: every POST to the chat route counts as a chat request (for
// chat_requests() and fault_on), even one answered 400; an event spanning the reasoning/answer
// boundary carries both delta.reasoning_content and delta.content; the kMalformed event replaces
// a text event (its tokens are lost, usage still counts them); fault_after_events beyond the
// text events means "before the finish chunk"; non-streamed faults: kDrop closes without an
// answer, kStall delays the body, kMalformed cuts the body in half.
#include "plugins/mock_server.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <deque>
#include <functional>
#include <optional>
#include <thread>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/clock.h"
#include "core/error.h"

namespace evalrun {
namespace {

using Json = nlohmann::ordered_json;

constexpr size_t kMaxHeaderBytes = 64 * 1024;
constexpr size_t kMaxBodyBytes = 64 * 1024 * 1024;
constexpr size_t kReadChunk = 64 * 1024;
constexpr size_t kReadBudget = 1024 * 1024;       // bytes read from one connection per turn
constexpr size_t kPumpFill = 256 * 1024;          // unpaced: bytes formatted ahead of a send()
constexpr size_t kPumpBudget = 4 * 1024 * 1024;   // unpaced: bytes one connection sends per turn
constexpr size_t kCompactAt = 1024 * 1024;        // drop sent bytes from the output buffer
constexpr int64_t kLingerNs = 1000000000;  // how long an error close waits for the client's EOF
constexpr int kPollMs = 100;                      // stop flags are checked at least this often
constexpr int kMaxEvents = 512;
constexpr int64_t kDefaultMaxTokens = 256;
constexpr rlim_t kWantedFdLimit = 65536;

// The words generated tokens are made of: token i is kWords[i % size]. Each is a single run of
// ASCII letters after one space, so MockTokenCount(text) counts exactly the tokens sent, and none
// needs JSON escaping.
constexpr std::string_view kWords[] = {
    " the",   " quick", " brown", " fox",   " jumps",  " over",  " a",       " lazy",
    " dog",   " and",   " then",  " runs",  " far",    " into",  " deep",    " green",
    " woods", " where", " small", " birds", " sing",   " every", " bright",  " morning",
    " while", " old",   " trees", " sway",  " gently", " in",    " cool",    " wind",
};
constexpr size_t kWordCount = sizeof(kWords) / sizeof(kWords[0]);

std::string_view TokenWord(int64_t i) { return kWords[static_cast<size_t>(i) % kWordCount]; }

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

std::string Dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

bool IsAsciiSpace(unsigned char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
bool IsAsciiAlnum(unsigned char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// Calls fn(piece) for each token of `text` by the rule of MockTokenCount. A malformed UTF-8
// sequence counts as one code point per lead byte (or stray continuation byte).
template <typename Fn>
void ForEachMockToken(std::string_view text, Fn&& fn) {
  size_t i = 0;
  while (i < text.size()) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (IsAsciiSpace(c)) {
        ++i;
      } else if (IsAsciiAlnum(c)) {
        size_t j = i + 1;
        while (j < text.size() && IsAsciiAlnum(static_cast<unsigned char>(text[j]))) ++j;
        fn(text.substr(i, j - i));
        i = j;
      } else {
        fn(text.substr(i, 1));
        ++i;
      }
      continue;
    }
    size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    size_t j = i + 1;
    while (j < text.size() && j < i + len && (static_cast<unsigned char>(text[j]) & 0xC0) == 0x80) {
      ++j;
    }
    fn(text.substr(i, j - i));
    i = j;
  }
}

// A stable id for a token piece (FNV-1a), so /tokenize gives equal ids for equal pieces.
int64_t TokenId(std::string_view piece) {
  uint32_t h = 2166136261u;
  for (char ch : piece) {
    h ^= static_cast<unsigned char>(ch);
    h *= 16777619u;
  }
  return static_cast<int64_t>(h % 100000u);
}

// One RAII owner for a file descriptor (STYLE.md 11).
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { Reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
      Reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  void Reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

std::string_view ReasonPhrase(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 411: return "Length Required";
    case 413: return "Payload Too Large";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    default: return "Unknown";
  }
}

void AppendResponse(std::string& out, int status, std::string_view body, bool close) {
  char num[24];
  out += "HTTP/1.1 ";
  out.append(num, std::to_chars(num, num + sizeof num, status).ptr);
  out += ' ';
  out += ReasonPhrase(status);
  out += "\r\nServer: evalrun-mock\r\nContent-Type: application/json\r\nContent-Length: ";
  out.append(num, std::to_chars(num, num + sizeof num, body.size()).ptr);
  out += close ? "\r\nConnection: close\r\n\r\n" : "\r\nConnection: keep-alive\r\n\r\n";
  out += body;
}

void AppendChunk(std::string& out, std::string_view payload) {
  char hex[20];
  out.append(hex, std::to_chars(hex, hex + sizeof hex, payload.size(), 16).ptr);
  out += "\r\n";
  out += payload;
  out += "\r\n";
}

std::string ErrorBody(std::string_view message, std::string_view type, int code) {
  Json error = {{"message", message}, {"type", type}, {"code", code}};
  return Dump(Json{{"error", std::move(error)}});
}

// A scripted call written as a model without a tool parser writes it: Hermes
// (<tool_call>{"name", "arguments"}</tool_call>) or Qwen XML (<function=..><parameter=..>).
std::string CallAsText(const MockToolCall& call, const std::string& format) {
  const Json args = Json::parse(call.arguments, nullptr, false);
  if (format == "qwen_xml") {
    std::string out = "\n<tool_call>\n<function=" + call.name + ">\n";
    if (args.is_object()) {
      for (const auto& [key, value] : args.items()) {
        out += "<parameter=" + key + ">\n" +
               (value.is_string() ? value.get<std::string>() : value.dump()) + "\n</parameter>\n";
      }
    }
    return out + "</function>\n</tool_call>";
  }
  return "\n<tool_call>\n" +
         Dump(Json{{"name", call.name},
                   {"arguments", args.is_discarded() ? Json(call.arguments) : args}}) +
         "\n</tool_call>";
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i] >= 'A' && a[i] <= 'Z' ? static_cast<char>(a[i] - 'A' + 'a') : a[i];
    char y = b[i] >= 'A' && b[i] <= 'Z' ? static_cast<char>(b[i] - 'A' + 'a') : b[i];
    if (x != y) return false;
  }
  return true;
}

std::string_view TrimBlanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool ContainsTokenIgnoreCase(std::string_view list, std::string_view token) {
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    if (EqualsIgnoreCase(TrimBlanks(item), token)) return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

struct HttpRequest {
  std::string method;
  std::string target;
  size_t header_bytes = 0;    // request line and headers, through the blank line
  size_t content_length = 0;
  bool keep_alive = true;
  bool expect_continue = false;
};

// Parses a request head (through "\r\n\r\n"). Returns 0 on success, else the HTTP status to
// answer with before closing, with `message` saying why.
int ParseHead(std::string_view head, HttpRequest* req, std::string* message) {
  req->header_bytes = head.size();
  req->content_length = 0;
  req->expect_continue = false;
  size_t eol = head.find("\r\n");
  std::string_view line = head.substr(0, eol);
  size_t sp1 = line.find(' ');
  size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos) {
    *message = "malformed request line";
    return 400;
  }
  req->method.assign(line.substr(0, sp1));
  req->target.assign(line.substr(sp1 + 1, sp2 - sp1 - 1));
  std::string_view version = line.substr(sp2 + 1);
  if (version == "HTTP/1.1") {
    req->keep_alive = true;
  } else if (version == "HTTP/1.0") {
    req->keep_alive = false;
  } else {
    *message = "unsupported HTTP version";
    return 400;
  }
  bool have_length = false;
  size_t pos = eol + 2;
  while (pos < head.size()) {
    size_t end = head.find("\r\n", pos);
    if (end == std::string_view::npos || end == pos) break;
    std::string_view header = head.substr(pos, end - pos);
    pos = end + 2;
    size_t colon = header.find(':');
    if (colon == std::string_view::npos) {
      *message = "malformed header line";
      return 400;
    }
    std::string_view name = header.substr(0, colon);
    std::string_view value = header.substr(colon + 1);
    value = TrimBlanks(value);
    if (EqualsIgnoreCase(name, "content-length")) {
      size_t length = 0;
      auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), length);
      if (ec != std::errc() || ptr != value.data() + value.size() || value.empty() ||
          (have_length && length != req->content_length)) {
        *message = "invalid Content-Length";
        return 400;
      }
      have_length = true;
      req->content_length = length;
    } else if (EqualsIgnoreCase(name, "transfer-encoding")) {
      *message = "request bodies must carry Content-Length (Transfer-Encoding is not supported)";
      return 411;
    } else if (EqualsIgnoreCase(name, "connection")) {
      if (ContainsTokenIgnoreCase(value, "close")) req->keep_alive = false;
      if (ContainsTokenIgnoreCase(value, "keep-alive")) req->keep_alive = true;
    } else if (EqualsIgnoreCase(name, "expect")) {
      req->expect_continue = EqualsIgnoreCase(value, "100-continue");
    }
  }
  if (!have_length && req->method == "POST") {
    *message = "request bodies must carry Content-Length";
    return 411;
  }
  if (req->content_length > kMaxBodyBytes) {
    *message = "request body too large";
    return 413;
  }
  return 0;
}

// Text of a message's content: a string, or the text parts of an array of content parts.
int64_t ContentTokens(const nlohmann::json& content) {
  if (content.is_string()) return MockTokenCount(content.get_ref<const std::string&>());
  int64_t tokens = 0;
  if (content.is_array()) {
    for (const auto& part : content) {
      if (part.is_object()) {
        auto text = part.find("text");
        if (text != part.end() && text->is_string()) {
          tokens += MockTokenCount(text->get_ref<const std::string&>());
        }
      }
    }
  }
  return tokens;
}

// The text a rule's `match` is looked for in: a string content, or its text parts concatenated
// (in `joined`, which the result then views).
std::string_view MessageText(const nlohmann::json& message, std::string* joined) {
  auto content = message.find("content");
  if (content == message.end()) return {};
  if (content->is_string()) return content->get_ref<const std::string&>();
  if (content->is_array()) {
    for (const auto& part : *content) {
      if (!part.is_object()) continue;
      auto text = part.find("text");
      if (text != part.end() && text->is_string()) *joined += text->get_ref<const std::string&>();
    }
  }
  return *joined;
}

// A chosen reply cut into the mock's tokens for streaming. Token k's piece runs from the end of
// token k-1 to the end of its own text, so it carries the whitespace before it (like the filler's
// " word"); the last piece also carries the trailing whitespace. So the first k pieces are a
// prefix of the text, all of them are the text byte for byte, and each piece counts as exactly
// one token. Pieces are kept raw (non-streamed bodies) and JSON-escaped (SSE events, which
// append them without allocating). Built once, when the server is made.
class TokenizedText {
 public:
  TokenizedText() = default;
  explicit TokenizedText(std::string_view text) {
    size_t done = 0;
    ForEachMockToken(text, [&](std::string_view token) {
      size_t end = static_cast<size_t>(token.data() - text.data()) + token.size();
      Append(text.substr(done, end - done));
      done = end;
    });
    if (!raw_ends_.empty() && done < text.size()) {  // trailing whitespace joins the last piece
      raw_ends_.pop_back();
      json_ends_.pop_back();
      Append(text.substr(done));
    }
  }

  int64_t tokens() const { return static_cast<int64_t>(raw_ends_.size()); }
  // Tokens [begin, end), 0 <= begin <= end <= tokens().
  std::string_view Raw(int64_t begin, int64_t end) const {
    return Slice(raw_, raw_ends_, begin, end);
  }
  std::string_view Escaped(int64_t begin, int64_t end) const {
    return Slice(json_, json_ends_, begin, end);
  }

 private:
  // Adds `bytes` to the last piece when one was just popped, else as a new piece.
  void Append(std::string_view bytes) {
    raw_ += bytes;
    std::string quoted = Dump(Json(std::string(bytes)));
    json_.append(quoted, 1, quoted.size() - 2);
    raw_ends_.push_back(raw_.size());
    json_ends_.push_back(json_.size());
  }

  static std::string_view Slice(const std::string& text, const std::vector<size_t>& ends,
                                int64_t begin, int64_t end) {
    if (begin >= end) return {};
    size_t from = begin == 0 ? 0 : ends[static_cast<size_t>(begin - 1)];
    return std::string_view(text).substr(from, ends[static_cast<size_t>(end - 1)] - from);
  }

  std::string raw_;
  std::string json_;
  std::vector<size_t> raw_ends_;
  std::vector<size_t> json_ends_;
};

// A native tool call of a scripted turn, ready to stream.
struct PreparedCall {
  std::string name;         // as JSON text, quoted
  TokenizedText arguments;
};

// One reply of a rule, ready to stream: its reasoning, content, then its tool calls' arguments.
struct PreparedTurn {
  TokenizedText reasoning;
  TokenizedText content;
  std::vector<PreparedCall> calls;
  const char* finish_reason = "stop";  // when max_tokens does not cut it; points into the config
};

// A rule of MockConfig::answers: one turn, or the turns of a scripted conversation.
struct PreparedAnswer {
  std::vector<PreparedTurn> turns;
  bool scripted = false;
};

}  // namespace

int64_t MockTokenCount(std::string_view text) {
  int64_t count = 0;
  ForEachMockToken(text, [&](std::string_view) { ++count; });
  return count;
}

namespace {

// ", did you mean 'x'?" when a candidate is close, else the list of valid ones.
std::string Suggest(const std::string& word, const std::vector<std::string>& candidates) {
  const std::string best = ClosestMatch(word, candidates);
  if (!best.empty()) return ", did you mean '" + best + "'?";
  std::string list;
  for (const auto& candidate : candidates) list += (list.empty() ? "" : ", ") + candidate;
  return " (expected one of: " + list + ")";
}

void CheckKeys(const nlohmann::json& object, const std::vector<std::string>& known,
               const std::string& where) {
  for (const auto& item : object.items()) {
    if (std::find(known.begin(), known.end(), item.key()) == known.end()) {
      throw Error(where + "unknown key '" + item.key() + "'" + Suggest(item.key(), known));
    }
  }
}

// The string at `key` of a rule ("" when absent and not required). Text that is only whitespace
// is refused: it has no tokens, so the mock could not send it.
std::string RuleString(const nlohmann::json& rule, const char* key, bool required,
                       const std::string& where) {
  auto it = rule.find(key);
  if (it == rule.end() && !required) return {};
  if (it == rule.end() || !it->is_string()) {
    throw Error(where + "'" + key + "' must be a string");
  }
  std::string text = it->get<std::string>();
  if (!text.empty() && MockTokenCount(text) == 0) {
    throw Error(where + "'" + key +
                "' is only whitespace, which has no tokens to send (\"\" is an empty reply)");
  }
  return text;
}

void CheckComment(const nlohmann::json& object, const std::string& where) {
  if (auto comment = object.find("comment"); comment != object.end() && !comment->is_string()) {
    throw Error(where + "'comment' must be a string");
  }
}

// The finish_reason of a rule or turn, "" when absent; one of `reasons`.
std::string FinishReason(const nlohmann::json& rule, const std::vector<std::string>& reasons,
                         const std::string& where) {
  auto finish = rule.find("finish_reason");
  if (finish == rule.end()) return {};
  if (!finish->is_string()) throw Error(where + "'finish_reason' must be a string");
  std::string reason = finish->get<std::string>();
  if (std::find(reasons.begin(), reasons.end(), reason) == reasons.end()) {
    throw Error(where + "finish_reason '" + reason + "' is not known" + Suggest(reason, reasons));
  }
  return reason;
}

// A rule's "turns" (`path` is "file: answers[i].turns").
std::vector<MockTurn> ParseTurns(const nlohmann::json& list, const std::string& path) {
  if (!list.is_array() || list.empty()) {
    throw Error(path + ": must be a non-empty list of {\"content\": ..., \"tool_calls\": [...]} "
                       "turns");
  }
  std::vector<MockTurn> turns;
  for (size_t t = 0; t < list.size(); ++t) {
    const nlohmann::json& item = list[t];
    const std::string where = path + "[" + std::to_string(t) + "]: ";
    if (!item.is_object()) {
      throw Error(where + "expected an object {\"content\": ..., \"tool_calls\": [...]}");
    }
    CheckKeys(item, {"content", "reasoning", "tool_calls", "finish_reason", "comment"}, where);
    CheckComment(item, where);
    MockTurn turn;
    turn.content = RuleString(item, "content", false, where);
    turn.reasoning = RuleString(item, "reasoning", false, where);
    turn.finish_reason = FinishReason(item, {"stop", "length", "tool_calls"}, where);
    if (auto calls = item.find("tool_calls"); calls != item.end()) {
      if (!calls->is_array() || calls->empty()) {
        throw Error(where + "'tool_calls' must be a non-empty list of {\"name\": ..., "
                            "\"arguments\": {...}} calls");
      }
      for (size_t c = 0; c < calls->size(); ++c) {
        const nlohmann::json& call = (*calls)[c];
        const std::string at = path + "[" + std::to_string(t) + "].tool_calls[" +
                               std::to_string(c) + "]: ";
        if (!call.is_object()) {
          throw Error(at + "expected an object {\"name\": ..., \"arguments\": {...}}");
        }
        CheckKeys(call, {"name", "arguments", "comment"}, at);
        CheckComment(call, at);
        MockToolCall mock_call;
        auto call_name = call.find("name");
        if (call_name == call.end() || !call_name->is_string() ||
            call_name->get<std::string>().empty()) {
          throw Error(at + "'name' must be a non-empty string");
        }
        mock_call.name = call_name->get<std::string>();
        auto arguments = call.find("arguments");
        if (arguments == call.end() || !(arguments->is_object() || arguments->is_string())) {
          throw Error(at + "'arguments' must be an object, or a string sent verbatim");
        }
        if (arguments->is_object()) {
          mock_call.arguments = arguments->dump();
        } else {
          mock_call.arguments = RuleString(call, "arguments", true, at);
          if (mock_call.arguments.empty()) {
            throw Error(at + "'arguments' is empty, which has no tokens to send");
          }
        }
        turn.tool_calls.push_back(std::move(mock_call));
      }
    } else if (!item.contains("content")) {
      throw Error(where + "a turn needs 'content' or 'tool_calls'");
    }
    turns.push_back(std::move(turn));
  }
  return turns;
}

}  // namespace

std::vector<MockAnswer> ParseMockAnswers(std::string_view json_text, const std::string& name) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::parse_error& e) {
    // nlohmann says "[json.exception.parse_error.101] parse error at line 3, column 5: why";
    // keep the position and the why, in the file:line:col form of our other errors.
    std::string what = e.what();
    size_t at = what.find(" at line ");
    size_t why = what.find(": ", at == std::string::npos ? 0 : at);
    std::string position;
    if (at != std::string::npos && why != std::string::npos) {
      int line = 0;
      int column = 0;
      if (std::sscanf(what.c_str() + at, " at line %d, column %d", &line, &column) == 2) {
        position = ":" + std::to_string(line) + ":" + std::to_string(column);
      }
    }
    throw Error(name + position + ": not valid JSON: " +
                (why == std::string::npos ? what : what.substr(why + 2)));
  } catch (const nlohmann::json::out_of_range& e) {  // 1e999: valid JSON no double holds
    std::string what = e.what();
    const size_t tag = what.find("] ");
    throw Error(name + ": not valid JSON: " + (tag == std::string::npos ? what : what.substr(tag + 2)));
  }
  if (!doc.is_object()) {
    throw Error(name + ": expected a JSON object {\"answers\": [{\"match\": ..., \"content\": "
                       "...}, ...]}");
  }
  CheckKeys(doc, {"answers", "comment"}, name + ": ");
  if (auto comment = doc.find("comment"); comment != doc.end() && !comment->is_string()) {
    throw Error(name + ": 'comment' must be a string");
  }
  auto list = doc.find("answers");
  if (list == doc.end() || !list->is_array()) {
    throw Error(name + ": 'answers' must be a list of {\"match\": ..., \"content\": ...} rules");
  }
  std::vector<MockAnswer> answers;
  for (size_t i = 0; i < list->size(); ++i) {
    const nlohmann::json& rule = (*list)[i];
    const std::string where = name + ": answers[" + std::to_string(i) + "]: ";
    if (!rule.is_object()) {
      throw Error(where + "expected an object {\"match\": ..., \"content\": ...}");
    }
    CheckKeys(rule, {"match", "content", "reasoning", "finish_reason", "comment", "turns"}, where);
    CheckComment(rule, where);
    MockAnswer answer;
    auto match = rule.find("match");
    if (match == rule.end() || !match->is_string() || match->get<std::string>().empty()) {
      throw Error(where + "'match' must be a non-empty string");
    }
    answer.match = match->get<std::string>();
    if (auto turns = rule.find("turns"); turns != rule.end()) {
      for (const char* key : {"content", "reasoning", "finish_reason"}) {
        if (rule.contains(key)) {
          throw Error(where + "'" + key + "' cannot be used with 'turns': give it to each turn");
        }
      }
      answer.turns = ParseTurns(*turns, name + ": answers[" + std::to_string(i) + "].turns");
    } else {
      answer.content = RuleString(rule, "content", true, where);
      answer.reasoning = RuleString(rule, "reasoning", false, where);
      answer.finish_reason = FinishReason(rule, {"stop", "length"}, where);
    }
    for (size_t k = 0; k < answers.size(); ++k) {
      if (answers[k].turns.empty() != answer.turns.empty()) continue;  // they read other messages
      if (answer.match.find(answers[k].match) != std::string::npos) {
        throw Error(where + "never chosen: the 'match' of answers[" + std::to_string(k) +
                    "], which comes first, is part of this one's");
      }
    }
    answers.push_back(std::move(answer));
  }
  return answers;
}

std::vector<MockAnswer> LoadMockAnswers(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) throw Error(path + ": cannot read it: " + std::strerror(errno));
  // A deleter type, not decltype(&std::fclose): glibc declares fclose with attributes that GCC 14
  // warns are ignored in a template argument (-Wignored-attributes).
  struct Close {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  std::unique_ptr<std::FILE, Close> owner(file);
  std::string text;
  char buf[64 * 1024];
  size_t got = 0;
  while ((got = std::fread(buf, 1, sizeof buf, file)) > 0) text.append(buf, got);
  if (std::ferror(file)) throw Error(path + ": cannot read it: " + std::strerror(errno));
  return ParseMockAnswers(text, path);
}

int64_t FindMockAnswer(const std::vector<MockAnswer>& answers, std::string_view last_user_text) {
  return FindMockAnswer(answers, last_user_text, last_user_text);
}

int64_t FindMockAnswer(const std::vector<MockAnswer>& answers, std::string_view first_user_text,
                       std::string_view last_user_text) {
  for (size_t i = 0; i < answers.size(); ++i) {
    const std::string_view text = answers[i].turns.empty() ? last_user_text : first_user_text;
    if (text.find(answers[i].match) != std::string_view::npos) return static_cast<int64_t>(i);
  }
  return -1;
}

struct MockServer::Impl {
  // One chat completion in flight on a connection. "Items" are the text events 0..events-1
  // followed by item `events`, the closing group (finish chunk, usage chunk, [DONE], 0-chunk).
  struct Job {
    bool active = false;
    bool streaming = false;
    bool paced = false;          // decode_tps > 0
    bool pumping = false;        // unpaced stream: started and not stalled
    bool keep_alive = true;
    bool include_usage = false;  // request asked for stream_options.include_usage
    double decode_tps = 0;
    int64_t n = 0;               // completion tokens
    int64_t reasoning = 0;       // of which reasoning (the first ones)
    int64_t per_event = 1;
    int64_t events = 0;          // text events
    int64_t next = 0;            // next item to emit
    int64_t prompt_tokens = 0;
    int64_t cached_tokens = 0;   // of prompt_tokens, served by the prompt cache
    double prompt_ms = 0;        // ttft + prefill, as reported in timings
    int64_t t_first_ns = 0;      // due time of the first event (steady_clock ns)
    int64_t first_sent_ns = 0;   // when the first / last text event were written (unpaced
    int64_t last_sent_ns = 0;    // timings)
    // Faults; -1 when not applied.
    int64_t drop_item = -1;
    int64_t stall_item = -1;
    int64_t stall_ns = 0;
    bool stall_done = false;     // unpaced: the stall was taken
    int64_t malformed_item = -1;
    const char* finish_reason = "stop";
    const PreparedTurn* answer = nullptr;  // the chosen reply; null: generated filler
    // A chosen reply's tokens are its reasoning, content, then its calls' arguments; the first
    // `text_n` (reasoning and content) go in `text_events` text events, the arguments in
    // `tool_items` events after them (events = text_events + tool_items.size()).
    int64_t text_n = 0;
    int64_t text_events = 0;
    struct ToolItem {
      int64_t call = 0;        // index into answer->calls
      bool header = false;     // the call's first fragment: id, type, name, arguments ""
      int64_t begin = 0;       // argument tokens [begin, end) of a piece
      int64_t end = 0;
      int64_t last_token = 0;  // completion-token index that makes the item due
    };
    std::vector<ToolItem> tool_items;
    int64_t turn = 0;          // assistant messages in the request (call ids "call_<turn>_<i>")
    std::string id;
    std::string model;
    int64_t created = 0;
    std::string prefix;          // "data: {...,\"delta\":{" shared by every text event
    std::string suffix;          // what follows the delta's members: "},...}\n\n"
  };

  struct Conn {
    UniqueFd fd;
    uint32_t gen = 0;            // distinguishes connections that reuse an fd number
    bool closed = false;
    bool epollout = false;       // EPOLLOUT currently requested
    bool have_head = false;      // `req` holds the parsed head of the request being read
    bool responding = false;     // a response is in progress; input waits
    bool close_after_flush = false;
    bool linger = false;         // on close: shut down writing, discard input until EOF
    bool lingering = false;      // doing so (for at most kLingerNs)
    uint64_t timer_seq = 0;      // seq of this connection's live heap entry; 0: none
    HttpRequest req;
    std::string in;
    std::string out;
    size_t out_off = 0;          // bytes of `out` already sent
    Job job;
  };

  struct Due {
    int64_t due_ns;
    uint64_t seq;
    int fd;
    bool operator>(const Due& other) const {
      return due_ns != other.due_ns ? due_ns > other.due_ns : seq > other.seq;
    }
  };

  enum class WriteResult { kDrained, kBlocked, kClosed };

  // The loop's own descriptors live as long as the server, so Stop() from another thread can
  // always write the eventfd; only the listener and connections come and go with Serve().
  explicit Impl(MockConfig c) : config(std::move(c)) {
    epoll_fd.Reset(::epoll_create1(EPOLL_CLOEXEC));
    timer_fd.Reset(::timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC));
    wake_fd.Reset(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
    if (!epoll_fd.valid() || !timer_fd.valid() || !wake_fd.valid()) {
      throw Error(std::string("mock server: cannot create its event loop: ") +
                  std::strerror(errno));
    }
    for (int watched : {timer_fd.get(), wake_fd.get()}) Watch(watched);
    prepared.reserve(config.answers.size());
    for (const MockAnswer& rule : config.answers) {
      PreparedAnswer& answer = prepared.emplace_back();
      answer.scripted = !rule.turns.empty();
      if (!answer.scripted) {
        PreparedTurn& turn = answer.turns.emplace_back();
        turn.reasoning = TokenizedText(rule.reasoning);
        turn.content = TokenizedText(rule.content);
        if (!rule.finish_reason.empty()) turn.finish_reason = rule.finish_reason.c_str();
        continue;
      }
      for (const MockTurn& scripted : rule.turns) {
        PreparedTurn& turn = answer.turns.emplace_back();
        turn.reasoning = TokenizedText(scripted.reasoning);
        if (!config.tool_calls_as_text.empty() && !scripted.tool_calls.empty()) {
          // A server without a tool parser: the calls are just text the model wrote.
          std::string text = scripted.content;
          for (const MockToolCall& call : scripted.tool_calls) {
            text += CallAsText(call, config.tool_calls_as_text);
          }
          turn.content = TokenizedText(text);
          turn.finish_reason = "stop";
          continue;
        }
        turn.content = TokenizedText(scripted.content);
        for (const MockToolCall& call : scripted.tool_calls) {
          turn.calls.push_back({Dump(Json(call.name)), TokenizedText(call.arguments)});
        }
        if (!scripted.finish_reason.empty()) {
          turn.finish_reason = scripted.finish_reason.c_str();
        } else if (!turn.calls.empty()) {
          turn.finish_reason = "tool_calls";
        }
      }
    }
  }

  void Watch(int fd) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = static_cast<uint32_t>(fd);  // generation 0: not a connection
    ::epoll_ctl(epoll_fd.get(), EPOLL_CTL_ADD, fd, &ev);
  }

  MockConfig config;              // never changes after construction
  std::vector<PreparedAnswer> prepared;  // config.answers, tokenized; same order
  std::atomic<int> port{0};
  std::atomic<int64_t> chat_requests{0};
  std::atomic<bool> stop{false};
  std::thread thread;
  int64_t outage_start_ns = -1;  // the loop thread's; -1: the outage has not started
  bool refuse_pending = false;   // close everything at the end of this loop turn
  bool refusing = false;         // the listening socket is closed for the outage

  UniqueFd listen_fd;
  UniqueFd epoll_fd;
  UniqueFd timer_fd;
  UniqueFd wake_fd;
  UniqueFd spare_fd;             // given up to accept-and-drop when out of descriptors

  std::vector<std::unique_ptr<Conn>> conns;
  std::vector<std::unique_ptr<Conn>> graveyard;
  std::vector<Due> heap;         // min-heap on due_ns (std::greater)
  uint64_t next_seq = 0;
  uint32_t next_gen = 0;
  int64_t armed_ns = 0;          // the timerfd's deadline; 0: disarmed or expired
  std::string scratch;           // one SSE event being formatted
  // MockConfig::prompt_cache: keys of the last kCachedPrompts cached prompts, oldest first.
  static constexpr size_t kCachedPrompts = 64;
  std::deque<size_t> cached_prompts;
  std::vector<int64_t> slot_free_ns;  // MockConfig::slots: when each slot is next free
  std::vector<char> read_buf = std::vector<char>(kReadChunk);

  // --- setup -----------------------------------------------------------------------------------

  [[noreturn]] void ThrowListen(int port_number, const std::string& why) {
    throw Error("cannot listen on " + config.host + ":" + std::to_string(port_number) + ": " + why);
  }

  void Bind() {
    if (listen_fd.valid() || thread.joinable()) throw Error("mock server is already running");
    RaiseFdLimit();
    UniqueFd fd = OpenListener(config.port);
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len);
    port = addr.ss_family == AF_INET6
               ? ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port)
               : ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
    spare_fd.Reset(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    Watch(fd.get());
    listen_fd = std::move(fd);
  }

  // A listening socket on config.host:`port_number` (0: any free port).
  UniqueFd OpenListener(int port_number) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    addrinfo* found = nullptr;
    std::string service = std::to_string(port_number);
    int rc = ::getaddrinfo(config.host.c_str(), service.c_str(), &hints, &found);
    if (rc != 0) ThrowListen(port_number, ::gai_strerror(rc));
    std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> results(found, &::freeaddrinfo);
    UniqueFd fd(::socket(found->ai_family, found->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                         found->ai_protocol));
    if (!fd.valid()) ThrowListen(port_number, std::strerror(errno));
    int one = 1;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd.get(), found->ai_addr, found->ai_addrlen) != 0 ||
        ::listen(fd.get(), 4096) != 0) {  // the kernel caps it at net.core.somaxconn
      ThrowListen(port_number, std::strerror(errno));
    }
    return fd;
  }

  // A client and this server in one process (the tests) need two descriptors per connection;
  // the common soft limit of 1024 would cap them near 500, so lift it toward the hard limit.
  static void RaiseFdLimit() {
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
    rlim_t wanted = std::min(limit.rlim_max, kWantedFdLimit);
    if (limit.rlim_cur < wanted) {
      limit.rlim_cur = wanted;
      ::setrlimit(RLIMIT_NOFILE, &limit);
    }
  }

  // --- the loop --------------------------------------------------------------------------------

  void Serve(const std::atomic<bool>* external_stop) {
    ::prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    std::vector<epoll_event> events(kMaxEvents);
    while (!stop.load(std::memory_order_relaxed) &&
           !(external_stop != nullptr && external_stop->load(std::memory_order_relaxed))) {
      RunDue();
      ArmTimer();
      graveyard.clear();
      int count = ::epoll_wait(epoll_fd.get(), events.data(), kMaxEvents, kPollMs);
      if (count < 0) {
        if (errno == EINTR) continue;
        std::fprintf(stderr, "evalrun: mock-server: epoll_wait: %s\n", std::strerror(errno));
        break;
      }
      // Requests that arrived together are stamped with the same wake-up time, so that reading
      // and parsing one does not delay the clock of the next (t0 of the timing model).
      const int64_t woke = NowNs();
      for (int i = 0; i < count; ++i) {
        auto fd = static_cast<int>(static_cast<uint32_t>(events[i].data.u64));
        auto gen = static_cast<uint32_t>(events[i].data.u64 >> 32);
        if (gen == 0) {
          if (fd == listen_fd.get()) {
            Accept();
          } else {
            uint64_t value = 0;
            [[maybe_unused]] ssize_t r = ::read(fd, &value, sizeof value);
            if (fd == timer_fd.get()) armed_ns = 0;
          }
          continue;
        }
        if (static_cast<size_t>(fd) >= conns.size() || !conns[fd] || conns[fd]->gen != gen) {
          continue;
        }
        Conn& c = *conns[fd];
        if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) HandleReadable(c, woke);
        if (!c.closed && (events[i].events & EPOLLOUT)) HandleWritable(c);
      }
      if (refuse_pending) {
        // The outage with refused connections: nothing listens until it is over.
        refuse_pending = false;
        refusing = true;
        for (auto& conn : conns) {
          if (conn) Close(*conn);
        }
        ::epoll_ctl(epoll_fd.get(), EPOLL_CTL_DEL, listen_fd.get(), nullptr);
        listen_fd.Reset();
      }
      if (refusing && static_cast<double>(NowNs() - outage_start_ns) >= config.outage_s * 1e9) {
        refusing = false;
        UniqueFd fd = OpenListener(port);
        Watch(fd.get());
        listen_fd = std::move(fd);
      }
    }
    graveyard.clear();
    conns.clear();  // closes every connection (and drops it from epoll)
    heap.clear();
    ::epoll_ctl(epoll_fd.get(), EPOLL_CTL_DEL, listen_fd.get(), nullptr);
    listen_fd.Reset();
    spare_fd.Reset();
    itimerspec disarm{};
    ::timerfd_settime(timer_fd.get(), TFD_TIMER_ABSTIME, &disarm, nullptr);
    armed_ns = 0;
    uint64_t value = 0;
    [[maybe_unused]] ssize_t r = ::read(wake_fd.get(), &value, sizeof value);
    stop = false;  // a later Start() or Run() serves again
  }

  Conn* Live(const Due& entry) {
    if (static_cast<size_t>(entry.fd) >= conns.size()) return nullptr;
    Conn* c = conns[entry.fd].get();
    return c != nullptr && c->timer_seq == entry.seq ? c : nullptr;
  }

  void RunDue() {
    int64_t now = NowNs();
    while (!heap.empty()) {
      if (heap.front().due_ns > now) {
        now = NowNs();
        if (heap.front().due_ns > now) break;
      }
      std::pop_heap(heap.begin(), heap.end(), std::greater<>());
      Due entry = heap.back();
      heap.pop_back();
      Conn* c = Live(entry);
      if (c == nullptr) continue;
      c->timer_seq = 0;
      OnDue(*c, now);
    }
  }

  void ArmTimer() {
    while (!heap.empty() && Live(heap.front()) == nullptr) {
      std::pop_heap(heap.begin(), heap.end(), std::greater<>());
      heap.pop_back();
    }
    int64_t want = heap.empty() ? 0 : std::max<int64_t>(heap.front().due_ns, 1);
    if (want == armed_ns) return;
    itimerspec spec{};
    spec.it_value.tv_sec = static_cast<time_t>(want / 1000000000);
    spec.it_value.tv_nsec = static_cast<long>(want % 1000000000);
    ::timerfd_settime(timer_fd.get(), TFD_TIMER_ABSTIME, &spec, nullptr);
    armed_ns = want;
  }

  void Schedule(Conn& c, int64_t due_ns) {
    c.timer_seq = ++next_seq;
    heap.push_back(Due{due_ns, c.timer_seq, c.fd.get()});
    std::push_heap(heap.begin(), heap.end(), std::greater<>());
  }

  void Accept() {
    for (;;) {
      int fd = ::accept4(listen_fd.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if ((errno == EMFILE || errno == ENFILE) && spare_fd.valid()) {
          // Out of descriptors: shed the pending connection rather than spin on it.
          spare_fd.Reset();
          int shed = ::accept(listen_fd.get(), nullptr, nullptr);
          if (shed >= 0) ::close(shed);
          spare_fd.Reset(::open("/dev/null", O_RDONLY | O_CLOEXEC));
          continue;
        }
        return;  // EAGAIN, or an error the next readiness report retries
      }
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      // The kernel stamps each received segment: t0 of a request is when its bytes reached the
      // socket, not when this loop got round to reading them.
      ::setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);
      if (config.send_buffer > 0) {
        ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &config.send_buffer, sizeof config.send_buffer);
      }
      auto conn = std::make_unique<Conn>();
      conn->fd.Reset(fd);
      conn->gen = ++next_gen == 0 ? ++next_gen : next_gen;
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.u64 = (static_cast<uint64_t>(conn->gen) << 32) | static_cast<uint32_t>(fd);
      if (::epoll_ctl(epoll_fd.get(), EPOLL_CTL_ADD, fd, &ev) != 0) continue;  // closes fd
      if (static_cast<size_t>(fd) >= conns.size()) conns.resize(static_cast<size_t>(fd) + 1);
      conns[fd] = std::move(conn);
    }
  }

  void Close(Conn& c) {
    if (c.closed) return;
    int fd = c.fd.get();
    ::epoll_ctl(epoll_fd.get(), EPOLL_CTL_DEL, fd, nullptr);
    c.closed = true;
    c.timer_seq = 0;
    c.job.active = false;
    c.job.pumping = false;
    graveyard.push_back(std::move(conns[fd]));  // `c` stays valid until the turn ends
    c.fd.Reset();
  }

  void UpdateInterest(Conn& c) {
    if (c.closed) return;
    bool want = c.out_off < c.out.size() || c.job.pumping;
    if (want == c.epollout) return;
    epoll_event ev{};
    ev.events = EPOLLIN | (want ? EPOLLOUT : 0u);
    ev.data.u64 = (static_cast<uint64_t>(c.gen) << 32) | static_cast<uint32_t>(c.fd.get());
    ::epoll_ctl(epoll_fd.get(), EPOLL_CTL_MOD, c.fd.get(), &ev);
    c.epollout = want;
  }

  WriteResult WriteOut(Conn& c) {
    while (c.out_off < c.out.size()) {
      ssize_t sent = ::send(c.fd.get(), c.out.data() + c.out_off, c.out.size() - c.out_off,
                            MSG_NOSIGNAL);
      if (sent > 0) {
        c.out_off += static_cast<size_t>(sent);
        continue;
      }
      if (sent < 0 && errno == EINTR) continue;
      if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        if (c.out_off >= kCompactAt) {
          c.out.erase(0, c.out_off);
          c.out_off = 0;
        }
        UpdateInterest(c);
        return WriteResult::kBlocked;
      }
      Close(c);
      return WriteResult::kClosed;
    }
    c.out.clear();
    c.out_off = 0;
    if (c.close_after_flush) {
      if (c.linger && !c.lingering) {
        // Closing with unread request bytes would send RST, which can destroy our error response
        // in the client's receive queue; send FIN instead and drain until the client closes.
        ::shutdown(c.fd.get(), SHUT_WR);
        c.lingering = true;
        c.in.clear();
        Schedule(c, NowNs() + kLingerNs);
        UpdateInterest(c);
      } else if (!c.lingering) {
        Close(c);
      }
      return WriteResult::kClosed;
    }
    return WriteResult::kDrained;
  }

  void Flush(Conn& c) {
    if (WriteOut(c) != WriteResult::kClosed) UpdateInterest(c);
  }

  // recv() into read_buf that also returns, through `arrived` when given, the kernel's receive
  // timestamp (SO_TIMESTAMPNS, CLOCK_REALTIME) converted to the steady clock.
  ssize_t ReceiveStamped(int fd, int64_t* arrived) {
    iovec iov{read_buf.data(), read_buf.size()};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(timespec))];
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    if (arrived) {
      msg.msg_control = control;
      msg.msg_controllen = sizeof control;
    }
    const ssize_t got = ::recvmsg(fd, &msg, 0);
    if (got > 0 && arrived) {
      for (cmsghdr* cm = CMSG_FIRSTHDR(&msg); cm != nullptr; cm = CMSG_NXTHDR(&msg, cm)) {
        if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_TIMESTAMPNS) {
          timespec real{};
          std::memcpy(&real, CMSG_DATA(cm), sizeof real);
          timespec real_now{};
          ::clock_gettime(CLOCK_REALTIME, &real_now);
          const int64_t age = (static_cast<int64_t>(real_now.tv_sec) - real.tv_sec) * 1000000000 +
                              (real_now.tv_nsec - real.tv_nsec);
          *arrived = NowNs() - std::max<int64_t>(0, age);
        }
      }
    }
    return got;
  }

  void HandleReadable(Conn& c, int64_t woke) {
    if (c.lingering) {
      for (size_t total = 0; total < kReadBudget;) {
        ssize_t got = ::recv(c.fd.get(), read_buf.data(), read_buf.size(), 0);
        if (got > 0) {
          total += static_cast<size_t>(got);
          continue;
        }
        if (got < 0 && errno == EINTR) continue;
        if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        return Close(c);
      }
      return;
    }
    size_t total = 0;
    int64_t arrived = -1;  // kernel receive time of the first bytes read now, steady clock ns
    while (total < kReadBudget) {
      ssize_t got = ReceiveStamped(c.fd.get(), arrived < 0 ? &arrived : nullptr);
      if (got > 0) {
        c.in.append(read_buf.data(), static_cast<size_t>(got));
        total += static_cast<size_t>(got);
        if (static_cast<size_t>(got) < read_buf.size()) break;
        continue;
      }
      if (got < 0 && errno == EINTR) continue;
      if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      Close(c);  // EOF or error: the client is gone, whatever was in flight
      return;
    }
    // A kernel stamp later than the wake-up cannot be right (clock adjustment): keep the wake-up.
    const int64_t now = arrived > 0 && arrived <= woke ? arrived : woke;
    if (c.in.size() > kMaxHeaderBytes + kMaxBodyBytes) {
      Close(c);
      return;
    }
    if (!c.responding) ProcessInput(c, now);
  }

  void HandleWritable(Conn& c) {
    if (c.job.pumping) {
      Pump(c);
    } else {
      Flush(c);
    }
  }

  // --- requests --------------------------------------------------------------------------------

  void ProcessInput(Conn& c, int64_t now) {
    while (!c.closed && !c.responding && !c.close_after_flush) {
      if (!c.have_head) {
        size_t end = c.in.find("\r\n\r\n");
        if (end == std::string::npos) {
          if (c.in.size() > kMaxHeaderBytes) FailAndClose(c, 431, "request head too large");
          break;
        }
        if (end + 4 > kMaxHeaderBytes) {
          FailAndClose(c, 431, "request head too large");
          break;
        }
        std::string message;
        int status = ParseHead(std::string_view(c.in).substr(0, end + 4), &c.req, &message);
        if (status != 0) {
          FailAndClose(c, status, message);
          break;
        }
        c.have_head = true;
        if (c.req.expect_continue && c.in.size() < c.req.header_bytes + c.req.content_length) {
          c.out += "HTTP/1.1 100 Continue\r\n\r\n";
        }
      }
      size_t total = c.req.header_bytes + c.req.content_length;
      if (c.in.size() < total) break;
      Dispatch(c, std::string_view(c.in).substr(c.req.header_bytes, c.req.content_length), now);
      c.in.erase(0, total);
      c.have_head = false;
    }
    if (!c.closed) Flush(c);
  }

  void FailAndClose(Conn& c, int status, std::string_view message) {
    AppendResponse(c.out, status, ErrorBody(message, "invalid_request_error", status), true);
    c.close_after_flush = true;
    c.linger = true;
  }

  void Reply(Conn& c, int status, std::string_view body) {
    AppendResponse(c.out, status, body, !c.req.keep_alive);
    if (!c.req.keep_alive) c.close_after_flush = true;
  }

  void ReplyError(Conn& c, int status, std::string_view message, std::string_view type) {
    Reply(c, status, ErrorBody(message, type, status));
  }

  void Dispatch(Conn& c, std::string_view body, int64_t now) {
    std::string_view target = c.req.target;
    std::string_view path = target.substr(0, target.find('?'));
    const std::string& method = c.req.method;
    auto wrong_method = [&] {
      ReplyError(c, 405, "method " + method + " not allowed on " + std::string(path),
                 "invalid_request_error");
    };
    const bool chat = path == "/v1/chat/completions" || path == "/chat/completions";
    if (InOutage(now, chat)) {
      if (config.outage_refuse) return;  // closed at the end of this turn, with the listener
      return ReplyError(c, config.outage_status, config.outage_message, "unavailable_error");
    }
    if (chat) {
      if (method != "POST") return wrong_method();
      return StartChat(c, body, now);
    }
    if (path == "/v1/models" || path == "/models") {
      if (method != "GET") return wrong_method();
      Json model = {{"id", config.model}, {"object", "model"}, {"owned_by", "evalrun-mock"}};
      if (config.max_context > 0 && !config.hide_context) {
        model["max_model_len"] = config.max_context;
      }
      return Reply(c, 200, Dump(Json{{"object", "list"}, {"data", Json::array({model})}}));
    }
    if (path == "/health") {
      if (method != "GET") return wrong_method();
      return Reply(c, 200, R"({"status":"ok"})");
    }
    if (path == "/props" && config.slots > 0) {
      if (method != "GET") return wrong_method();
      Json settings = {{"n_ctx", config.max_context > 0 ? config.max_context : 4096}};
      return Reply(c, 200,
                   Dump(Json{{"default_generation_settings", std::move(settings)},
                             {"total_slots", config.slots},
                             {"model_path", config.model},
                             {"build_info", "mock"}}));
    }
    if (path == "/tokenize") {
      if (method != "POST") return wrong_method();
      auto doc = nlohmann::json::parse(body, nullptr, false);
      if (doc.is_discarded() || !doc.is_object() || !doc.contains("content") ||
          !doc["content"].is_string()) {
        return ReplyError(c, 400, "expected a JSON object with a string \"content\"",
                          "invalid_request_error");
      }
      Json ids = Json::array();
      ForEachMockToken(doc["content"].get_ref<const std::string&>(),
                       [&](std::string_view piece) { ids.push_back(TokenId(piece)); });
      return Reply(c, 200, Dump(Json{{"tokens", std::move(ids)}}));
    }
    ReplyError(c, 404, "unknown route: " + method + " " + std::string(path),
               "invalid_request_error");
  }

  // Whether the outage (MockConfig::outage_*) is on at `now`; a chat request arriving after
  // outage_after of them starts it.
  bool InOutage(int64_t now, bool chat) {
    if (config.outage_after < 0 || config.outage_s <= 0) return false;
    if (outage_start_ns < 0) {
      if (!chat || chat_requests.load() < config.outage_after) return false;
      outage_start_ns = now;
      if (config.outage_refuse) refuse_pending = true;
    }
    return static_cast<double>(now - outage_start_ns) < config.outage_s * 1e9;
  }

  bool FaultApplies(int64_t number) const {
    if (config.fault == MockFault::kNone) return false;
    return config.fault_on.empty() ||
           std::find(config.fault_on.begin(), config.fault_on.end(), number) !=
               config.fault_on.end();
  }

  void StartChat(Conn& c, std::string_view body, int64_t now) {
    int64_t number = chat_requests.fetch_add(1) + 1;
    auto doc = nlohmann::json::parse(body, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) {
      return ReplyError(c, 400, "request body is not a JSON object", "invalid_request_error");
    }
    int64_t prompt_tokens = kMockTokensPerChat;
    int64_t max_tokens = kDefaultMaxTokens;
    bool stream = false;
    bool ignore_eos = false;
    bool include_usage = false;
    std::string model = config.model;
    const PreparedTurn* answer = nullptr;
    int64_t assistants = 0;
    bool cache_prompt = true;
    std::optional<size_t> prompt_key;  // the prompt cache's key for these messages
    try {
      auto messages = doc.find("messages");
      if (messages == doc.end() || !messages->is_array()) {
        return ReplyError(c, 400, "\"messages\" must be an array", "invalid_request_error");
      }
      const nlohmann::json* first_user = nullptr;
      const nlohmann::json* last_user = nullptr;
      for (const auto& message : *messages) {
        prompt_tokens += kMockTokensPerMessage;
        if (message.is_object() && message.contains("content")) {
          prompt_tokens += ContentTokens(message["content"]);
        }
        if (!message.is_object()) continue;
        auto role = message.find("role");
        if (role == message.end()) continue;
        if (*role == "user") {
          last_user = &message;
          if (first_user == nullptr) first_user = &message;
        } else if (*role == "assistant") {
          ++assistants;
        }
      }
      if (!prepared.empty() && last_user != nullptr) {
        std::string first_joined;
        std::string last_joined;
        int64_t rule = FindMockAnswer(config.answers, MessageText(*first_user, &first_joined),
                                      MessageText(*last_user, &last_joined));
        if (rule >= 0) {
          const std::vector<PreparedTurn>& turns = prepared[static_cast<size_t>(rule)].turns;
          answer = &turns[static_cast<size_t>(
              std::min<int64_t>(assistants, static_cast<int64_t>(turns.size()) - 1))];
        }
      }
      for (const char* key : {"max_tokens", "max_completion_tokens"}) {
        auto it = doc.find(key);
        if (it == doc.end() || it->is_null()) continue;
        if (!it->is_number() || it->get<double>() < 0) {
          return ReplyError(c, 400, std::string("\"") + key + "\" must be a non-negative integer",
                            "invalid_request_error");
        }
        max_tokens = std::llround(it->get<double>());
        break;
      }
      if (auto it = doc.find("stream"); it != doc.end() && it->is_boolean()) {
        stream = it->get<bool>();
      }
      if (auto it = doc.find("ignore_eos"); it != doc.end() && it->is_boolean()) {
        ignore_eos = it->get<bool>();
      }
      if (auto it = doc.find("stream_options"); it != doc.end() && it->is_object()) {
        auto usage = it->find("include_usage");
        include_usage = usage != it->end() && usage->is_boolean() && usage->get<bool>();
      }
      if (auto it = doc.find("model"); it != doc.end() && it->is_string()) {
        model = it->get<std::string>();
      }
      if (auto it = doc.find("cache_prompt"); it != doc.end() && it->is_boolean()) {
        cache_prompt = it->get<bool>();
      }
      if (config.prompt_cache && cache_prompt) {
        prompt_key = std::hash<std::string>{}(Dump(*messages));
      }
    } catch (const nlohmann::json::exception& e) {
      return ReplyError(c, 400, e.what(), "invalid_request_error");
    }
    if (config.refuse_stream_options && doc.contains("stream_options")) {
      return ReplyError(c, 400, "Unrecognized request argument supplied: stream_options",
                        "invalid_request_error");
    }
    const auto tools = doc.find("tools");
    const bool has_tools = tools != doc.end() && tools->is_array() && !tools->empty();
    if (has_tools && config.tools_require_jinja) {
      return ReplyError(c, 500, "tools param requires --jinja flag", "server_error");
    }
    if (has_tools && stream && config.refuse_streamed_tools) {
      return ReplyError(c, 500, "Cannot use tools with stream", "server_error");
    }
    bool fault = FaultApplies(number);
    if (fault && config.fault == MockFault::kHttp400) {
      return ReplyError(c, 400, "mock fault: injected HTTP 400", "invalid_request_error");
    }
    if (fault && config.fault == MockFault::kHttp500) {
      return ReplyError(c, 500, "mock fault: injected HTTP 500", "server_error");
    }
    if (config.strict_context && config.max_context > 0) {
      // llama.cpp 0.7 (b11669): a prompt longer than the slot's context is refused, with this
      // body (tests/fixtures/llama-0.7/ctx-exceeded-nonstream.http); a generation that fills
      // the context ends there ("length"), whatever max_tokens said.
      if (prompt_tokens > config.max_context) {
        Json error = {{"code", 400},
                      {"message", "request (" + std::to_string(prompt_tokens) +
                                      " tokens) exceeds the available context size (" +
                                      std::to_string(config.max_context) +
                                      " tokens), try increasing it"},
                      {"type", "exceed_context_size_error"},
                      {"n_prompt_tokens", prompt_tokens},
                      {"n_ctx", config.max_context}};
        return Reply(c, 400, Dump(Json{{"error", std::move(error)}}));
      }
      max_tokens = std::min(max_tokens, config.max_context - prompt_tokens);
    }
    if (config.max_context > 0) prompt_tokens = std::min(prompt_tokens, config.max_context);

    Job& j = c.job;
    j.answer = answer;
    j.turn = assistants;
    j.per_event = std::max(1, config.tokens_per_event);
    j.tool_items.clear();
    if (answer != nullptr) {
      // A chosen reply has its own length: ignore_eos cannot lengthen it, max_tokens cuts it.
      int64_t reasoning = answer->reasoning.tokens();
      int64_t text = reasoning + answer->content.tokens();
      int64_t natural = text;
      for (const PreparedCall& call : answer->calls) natural += call.arguments.tokens();
      j.n = std::min(max_tokens, natural);
      j.finish_reason = max_tokens < natural ? "length" : answer->finish_reason;
      j.reasoning = std::min(reasoning, j.n);
      j.text_n = std::min(text, j.n);
      // Each call: its first fragment, then its arguments in pieces of per_event tokens, as far
      // as max_tokens lets them come.
      int64_t at = text;
      for (size_t call = 0; call < answer->calls.size() && at < j.n; ++call) {
        const int64_t tokens = answer->calls[call].arguments.tokens();
        j.tool_items.push_back({static_cast<int64_t>(call), true, 0, 0, at});
        for (int64_t begin = 0; begin < tokens && at + begin < j.n; begin += j.per_event) {
          const int64_t end = std::min({begin + j.per_event, tokens, j.n - at});
          j.tool_items.push_back({static_cast<int64_t>(call), false, begin, end, at + end - 1});
        }
        at += tokens;
      }
    } else {
      int64_t natural = std::max(0, config.reasoning_tokens) + std::max(0, config.answer_tokens);
      bool use_ignore_eos = ignore_eos && config.honor_ignore_eos;
      j.n = use_ignore_eos ? max_tokens : std::min(max_tokens, natural);
      j.finish_reason = use_ignore_eos || max_tokens < natural ? "length" : "stop";
      j.reasoning = std::min<int64_t>(std::max(0, config.reasoning_tokens), j.n);
      j.text_n = j.n;
    }
    j.text_events = j.text_n == 0 ? 0 : 1 + (j.text_n - 1 + j.per_event - 1) / j.per_event;
    j.events = j.text_events + static_cast<int64_t>(j.tool_items.size());
    j.next = 0;
    j.active = true;
    j.streaming = stream;
    j.paced = config.decode_tps > 0;
    j.pumping = false;
    j.keep_alive = c.req.keep_alive;
    j.include_usage = include_usage;
    j.decode_tps = config.decode_tps;
    j.prompt_tokens = prompt_tokens;
    j.cached_tokens = 0;
    if (prompt_key) {
      const bool hit = std::find(cached_prompts.begin(), cached_prompts.end(), *prompt_key) !=
                       cached_prompts.end();
      if (hit) {
        j.cached_tokens = std::max<int64_t>(0, prompt_tokens - 1);
      } else {
        if (cached_prompts.size() >= kCachedPrompts) cached_prompts.pop_front();
        cached_prompts.push_back(*prompt_key);
      }
    }
    double prefill_ms = config.prefill_tps > 0 ? static_cast<double>(prompt_tokens -
                                                                      j.cached_tokens) *
                                                     1000.0 / config.prefill_tps
                                               : 0.0;
    j.prompt_ms = std::max(0.0, config.ttft_ms) + prefill_ms;
    int64_t start = now;  // when a slot takes the request
    size_t slot = 0;
    if (config.slots > 0) {
      if (slot_free_ns.size() != static_cast<size_t>(config.slots)) {
        slot_free_ns.assign(static_cast<size_t>(config.slots), 0);
      }
      slot = static_cast<size_t>(std::min_element(slot_free_ns.begin(), slot_free_ns.end()) -
                                 slot_free_ns.begin());
      start = std::max(now, slot_free_ns[slot]);
    }
    j.t_first_ns = start + std::llround(j.prompt_ms * 1e6);
    j.first_sent_ns = j.last_sent_ns = 0;
    j.drop_item = j.stall_item = j.malformed_item = -1;
    j.stall_ns = 0;
    j.stall_done = false;
    int64_t after = std::max(0, config.fault_after_events);
    if (fault && config.fault == MockFault::kDrop) j.drop_item = std::min(after, j.events);
    if (fault && config.fault == MockFault::kStall) {
      j.stall_item = std::min(after, j.events);
      j.stall_ns = std::llround(std::max(0.0, config.stall_s) * 1e9);
    }
    if (fault && config.fault == MockFault::kMalformed && j.events > 0) {
      j.malformed_item = std::clamp<int64_t>(after, 1, j.events) - 1;
    }
    if (config.slots > 0) slot_free_ns[slot] = j.paced ? ItemDue(j, j.events) : j.t_first_ns;
    j.id = "chatcmpl-mock-" + std::to_string(number);
    j.model = std::move(model);
    j.created = static_cast<int64_t>(std::time(nullptr));
    c.responding = true;

    if (!stream) {
      // The whole body leaves when the last token would have been generated.
      int64_t due = ItemDue(j, j.events);
      if (!j.paced && j.stall_item >= 0) due += j.stall_ns;
      return Schedule(c, due);
    }
    SetEventFrame(j);
    c.out +=
        "HTTP/1.1 200 OK\r\nServer: evalrun-mock\r\nContent-Type: text/event-stream\r\n"
        "Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n";
    c.out += j.keep_alive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n";
    // Unpaced streams take their stall in Pump(), so their first due time is the bare t_first.
    Schedule(c, j.paced ? ItemDue(j, 0) : j.t_first_ns);
  }

  // When item i is due: text event i is sent when its last token is generated; the closing group
  // goes with the last text event. A stall delays every item from `stall_item` on.
  static int64_t ItemDue(const Job& j, int64_t i) {
    int64_t last = 0;
    if (i >= j.events) {
      last = j.n > 0 ? j.n - 1 : 0;
    } else if (i >= j.text_events) {
      last = j.tool_items[static_cast<size_t>(i - j.text_events)].last_token;
    } else if (i > 0) {
      last = std::min(i * j.per_event, j.text_n - 1);
    }
    int64_t due = j.t_first_ns;
    if (j.paced) due += std::llround(static_cast<double>(last) * 1e9 / j.decode_tps);
    if (j.paced && j.stall_item >= 0 && i >= j.stall_item) due += j.stall_ns;
    return due;
  }

  void OnDue(Conn& c, int64_t now) {
    if (c.lingering) return Close(c);
    Job& j = c.job;
    if (!j.active) return;
    if (!j.streaming) return FinishNonStreamed(c, now);
    if (!j.paced) {
      j.pumping = true;
      return Pump(c);
    }
    while (j.active && ItemDue(j, j.next) <= now) EmitItem(c, now);
    Flush(c);
    if (c.closed) return;
    if (j.active) return Schedule(c, ItemDue(j, j.next));
    if (!c.close_after_flush) FinishResponse(c, now);
  }

  // Unpaced: format ahead and send until the socket is full, the stream ends or stalls, or this
  // connection has had its share of the turn.
  void Pump(Conn& c) {
    Job& j = c.job;
    size_t budget = kPumpBudget;
    for (;;) {
      while (j.pumping && c.out.size() - c.out_off < kPumpFill) {
        if (j.next == j.stall_item && !j.stall_done) {
          j.stall_done = true;
          j.pumping = false;
          Schedule(c, NowNs() + j.stall_ns);
          break;
        }
        EmitItem(c, NowNs());
      }
      size_t pending = c.out.size() - c.out_off;
      WriteResult result = WriteOut(c);
      if (result == WriteResult::kClosed) return;
      // Not drained: EPOLLOUT is requested and brings the connection back, to Pump while the
      // job pumps, else to Flush. A job that has ended is complete in the buffer already, so the
      // next request is read now (below): Flush never looks for it, and a request sent after
      // the answer's last byte would wait unanswered (evalrun speed met it about once in ten
      // runs of -n 200000).
      if (result != WriteResult::kDrained) {
        if (j.pumping) return;
        break;
      }
      if (!j.pumping) break;
      if (pending >= budget) return UpdateInterest(c);  // EPOLLOUT (level) brings us back
      budget -= pending;
    }
    UpdateInterest(c);
    if (!j.active && !c.close_after_flush) FinishResponse(c, NowNs());
  }

  // The response is complete in the output buffer: read the next request, if any.
  void FinishResponse(Conn& c, int64_t now) {
    c.responding = false;
    ProcessInput(c, now);
  }

  // Appends item `j.next` to the output buffer (or, at the drop point, ends the connection).
  void EmitItem(Conn& c, int64_t now) {
    Job& j = c.job;
    int64_t i = j.next;
    if (i == j.drop_item) {
      j.active = false;
      j.pumping = false;
      c.close_after_flush = true;  // what was written goes out, then the socket closes mid-body
      return;
    }
    ++j.next;
    if (i < j.events) {
      if (i == 0) j.first_sent_ns = now;
      j.last_sent_ns = now;
      if (i == j.malformed_item) {
        AppendChunk(c.out, "data: {\"choices\":[{\"delta\":{\"content\":\"bro\n\n");
        return;
      }
      if (i >= j.text_events) return AppendToolItem(c, j, i - j.text_events);
      int64_t begin = i == 0 ? 0 : 1 + (i - 1) * j.per_event;
      int64_t end = i == 0 ? 1 : std::min(1 + i * j.per_event, j.text_n);
      scratch.assign(j.prefix);
      if (begin < j.reasoning) {
        scratch += "\"reasoning_content\":\"";
        AppendTokens(j, begin, std::min(end, j.reasoning));
        scratch += '"';
      }
      if (end > j.reasoning) {
        if (begin < j.reasoning) scratch += ',';
        scratch += "\"content\":\"";
        AppendTokens(j, std::max(begin, j.reasoning), end);
        scratch += '"';
      }
      scratch += j.suffix;
      AppendChunk(c.out, scratch);
      return;
    }
    // The closing group.
    j.active = false;
    j.pumping = false;
    bool separate = config.usage == MockUsageStyle::kSeparateChunk && j.include_usage;
    Json finish = ChunkHead(j);
    finish["choices"] = Json::array(
        {Json{{"index", 0}, {"delta", Json::object()}, {"finish_reason", j.finish_reason}}});
    if (config.usage == MockUsageStyle::kLastChunk) finish["usage"] = Usage(j);
    if (config.timings && !separate) finish["timings"] = Timings(j);
    AppendEvent(c.out, finish);
    if (separate) {
      Json usage = ChunkHead(j);
      usage["choices"] = Json::array();
      usage["usage"] = Usage(j);
      if (config.timings) usage["timings"] = Timings(j);
      AppendEvent(c.out, usage);
    }
    AppendChunk(c.out, "data: [DONE]\n\n");
    c.out += "0\r\n\r\n";
    if (!j.keep_alive) c.close_after_flush = true;
  }

  // One streamed tool-call fragment (OpenAI's shape: the first brings id, type and name with
  // empty arguments; later ones only an arguments piece).
  void AppendToolItem(Conn& c, const Job& j, int64_t item) {
    const Job::ToolItem& t = j.tool_items[static_cast<size_t>(item)];
    const PreparedCall& call = j.answer->calls[static_cast<size_t>(t.call)];
    char num[24];
    scratch.assign(j.prefix);
    scratch += "\"tool_calls\":[{\"index\":";
    scratch.append(num, std::to_chars(num, num + sizeof num, t.call).ptr);
    if (t.header) {
      scratch += ",\"id\":\"";
      scratch += CallId(j, t.call);
      scratch += "\",\"type\":\"function\",\"function\":{\"name\":";
      scratch += call.name;
      scratch += ",\"arguments\":\"\"}";
    } else {
      scratch += ",\"function\":{\"arguments\":\"";
      scratch += call.arguments.Escaped(t.begin, t.end);
      scratch += "\"}";
    }
    scratch += "}]";
    scratch += j.suffix;
    AppendChunk(c.out, scratch);
  }

  // The text event's frame in the configured layout (MockChunkLayout): the delta's members go
  // between prefix and suffix.
  void SetEventFrame(Job& j) const {
    const std::string id = "\"" + j.id + "\"";
    const std::string model = Dump(Json(j.model));
    const std::string created = std::to_string(j.created);
    switch (config.chunk_layout) {
      case MockChunkLayout::kEvalrun:
        j.prefix = "data: {\"id\":" + id + ",\"object\":\"chat.completion.chunk\",\"created\":" +
                   created + ",\"model\":" + model +
                   ",\"system_fingerprint\":\"evalrun-mock\",\"choices\":[{\"index\":0,\"delta\":{";
        j.suffix = "},\"finish_reason\":null}]}\n\n";
        return;
      case MockChunkLayout::kLlamaCpp:
        j.prefix = "data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{";
        j.suffix = "}}],\"created\":" + created + ",\"id\":" + id + ",\"model\":" + model +
                   ",\"system_fingerprint\":\"b4748-c392e5094\",\"object\":\"chat.completion."
                   "chunk\"}\n\n";
        return;
      case MockChunkLayout::kOpenAI:
        j.prefix = "data: {\"id\":" + id + ",\"object\":\"chat.completion.chunk\",\"created\":" +
                   created + ",\"model\":" + model +
                   ",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_f9f4fb6dbf\","
                   "\"choices\":[{\"index\":0,\"delta\":{";
        j.suffix = "},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null,"
                   "\"obfuscation\":\"Xq3Zp\"}\n\n";
        return;
      case MockChunkLayout::kSglang:
        j.prefix = "data: {\"id\":" + id + ",\"object\":\"chat.completion.chunk\",\"created\":" +
                   created + ",\"model\":" + model +
                   ",\"choices\":[{\"index\":0,\"delta\":{\"role\":null,";
        j.suffix = "},\"logprobs\":null,\"finish_reason\":null,\"matched_stop\":null}],"
                   "\"usage\":null}\n\n";
        return;
    }
  }

  static std::string CallId(const Job& j, int64_t call) {
    return "call_" + std::to_string(j.turn) + "_" + std::to_string(call);
  }

  // Appends to `scratch` the JSON-escaped text of tokens [begin, end), which lie all in the
  // reasoning (the first j.reasoning tokens) or all in the content. No allocation once `scratch`
  // has grown to its working size.
  void AppendTokens(const Job& j, int64_t begin, int64_t end) {
    if (j.answer == nullptr) {
      for (int64_t t = begin; t < end; ++t) scratch += TokenWord(t);
    } else if (begin < j.reasoning) {
      scratch += j.answer->reasoning.Escaped(begin, end);
    } else {
      scratch += j.answer->content.Escaped(begin - j.reasoning, end - j.reasoning);
    }
  }

  void FinishNonStreamed(Conn& c, int64_t now) {
    Job& j = c.job;
    j.active = false;
    if (j.drop_item >= 0) return Close(c);  // nothing sent: the connection just goes away
    std::string content;
    std::string reasoning;
    if (j.answer != nullptr) {
      reasoning = j.answer->reasoning.Raw(0, j.reasoning);
      content = j.answer->content.Raw(0, j.text_n - j.reasoning);
    } else {
      for (int64_t t = 0; t < j.n; ++t) (t < j.reasoning ? reasoning : content) += TokenWord(t);
    }
    Json message = {{"role", "assistant"}, {"content", content}};
    if (j.reasoning > 0) message["reasoning_content"] = reasoning;
    if (!j.tool_items.empty()) {
      Json calls = Json::array();
      for (const Job::ToolItem& t : j.tool_items) {
        const PreparedCall& call = j.answer->calls[static_cast<size_t>(t.call)];
        if (t.header) {
          calls.push_back(Json{{"index", t.call},
                               {"id", CallId(j, t.call)},
                               {"type", "function"},
                               {"function", Json{{"name", Json::parse(call.name)},
                                                 {"arguments", ""}}}});
        } else {
          calls.back()["function"]["arguments"].get_ref<std::string&>() +=
              call.arguments.Raw(t.begin, t.end);
        }
      }
      if (content.empty()) message["content"] = nullptr;
      message["tool_calls"] = std::move(calls);
    }
    j.first_sent_ns = j.last_sent_ns = now;
    Json doc = {{"id", j.id},
                {"object", "chat.completion"},
                {"created", j.created},
                {"model", j.model},
                {"system_fingerprint", "evalrun-mock"},
                {"choices", Json::array({Json{{"index", 0},
                                              {"message", std::move(message)},
                                              {"finish_reason", j.finish_reason}}})}};
    if (config.usage != MockUsageStyle::kNone) doc["usage"] = Usage(j);
    if (config.timings) doc["timings"] = Timings(j);
    std::string body = Dump(doc);
    if (j.malformed_item >= 0) body.resize(body.size() / 2);  // JSON cut in half
    AppendResponse(c.out, 200, body, !j.keep_alive);
    if (!j.keep_alive) c.close_after_flush = true;
    FinishResponse(c, now);
  }

  static Json ChunkHead(const Job& j) {
    return Json{{"id", j.id},
                {"object", "chat.completion.chunk"},
                {"created", j.created},
                {"model", j.model},
                {"system_fingerprint", "evalrun-mock"}};
  }

  static Json Usage(const Job& j) {
    Json usage = {{"prompt_tokens", j.prompt_tokens},
                  {"completion_tokens", j.n},
                  {"total_tokens", j.prompt_tokens + j.n},
                  {"prompt_tokens_details", Json{{"cached_tokens", j.cached_tokens}}}};
    if (j.reasoning > 0) {
      usage["completion_tokens_details"] = Json{{"reasoning_tokens", j.reasoning}};
    }
    return usage;
  }

  // llama.cpp's `timings`. Paced, predicted_per_second is decode_tps exactly (predicted_ms =
  // n / decode_tps); unpaced, predicted_ms is the time actually taken between the first and last
  // text event. With tokens_per_event k > 1 each decode step after the first drafts k tokens and
  // accepts all but the last (the target model's own token replaces it): draft_n = steps * k,
  // draft_n_accepted = (n - 1) - steps, so the step emits accepted + 1 tokens.
  Json Timings(const Job& j) const {
    double predicted_ms = j.paced ? static_cast<double>(j.n) * 1000.0 / j.decode_tps
                                  : NanosToMs(j.last_sent_ns - j.first_sent_ns);
    const int64_t processed = j.prompt_tokens - j.cached_tokens;
    Json t = {{"cache_n", j.cached_tokens},
              {"prompt_n", processed},
              {"prompt_ms", j.prompt_ms},
              {"prompt_per_second",
               j.prompt_ms > 0 ? static_cast<double>(processed) * 1000.0 / j.prompt_ms : 0.0},
              {"predicted_n", j.n},
              {"predicted_ms", predicted_ms},
              {"predicted_per_second",
               predicted_ms > 0 ? static_cast<double>(j.n) * 1000.0 / predicted_ms : 0.0}};
    if (j.per_event > 1) {
      int64_t steps = j.events > 0 ? j.events - 1 : 0;
      t["draft_n"] = steps * j.per_event;
      t["draft_n_accepted"] = j.n > 0 ? j.n - 1 - steps : 0;
    }
    return t;
  }

  void AppendEvent(std::string& out, const Json& event) {
    scratch.assign("data: ");
    scratch += Dump(event);
    scratch += "\n\n";
    AppendChunk(out, scratch);
  }
};

MockServer::MockServer(MockConfig config) : impl_(std::make_unique<Impl>(std::move(config))) {}

MockServer::~MockServer() { Stop(); }

void MockServer::Start() {
  impl_->stop = false;
  impl_->Bind();
  Impl* impl = impl_.get();
  impl_->thread = std::thread([impl] {
    try {
      impl->Serve(nullptr);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "evalrun: mock-server stopped: %s\n", e.what());
    }
  });
}

void MockServer::Run(const std::atomic<bool>& stop) {
  impl_->Bind();
  impl_->Serve(&stop);
}

void MockServer::Stop() {
  impl_->stop = true;
  uint64_t one = 1;
  [[maybe_unused]] ssize_t r = ::write(impl_->wake_fd.get(), &one, sizeof one);
  if (impl_->thread.joinable()) impl_->thread.join();
}

int MockServer::port() const { return impl_->port.load(); }

std::string MockServer::base_url() const {
  const std::string& host = impl_->config.host;
  std::string shown = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return "http://" + shown + ":" + std::to_string(port());
}

int64_t MockServer::chat_requests() const { return impl_->chat_requests.load(); }

}  // namespace evalrun
