// Tests for the mock endpoint, spoken to over real sockets by a small blocking HTTP/1.1 client
// defined here (independent of plugins/http_client, so a bug there cannot hide one here).
#include "plugins/mock_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include "tests/support/catch.h"
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "core/error.h"

namespace evalrun {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

struct HttpResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;                            // de-chunked
  std::vector<std::string> chunks;             // chunked bodies: one entry per HTTP chunk
  std::vector<TimePoint> chunk_times;          // when each chunk's last byte arrived
  int64_t chunk_count = 0;                     // counted even when chunks are not kept
  bool complete = false;                       // the whole message arrived
};

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// An incremental HTTP/1.1 response parser: bytes in any split, stamped with their arrival time.
class ResponseParser {
 public:
  explicit ResponseParser(bool keep = true) : keep_(keep) {}

  // Feeds bytes that arrived at `at`; true once a whole response has been read (leftover bytes
  // stay for the next response).
  bool Feed(std::string_view bytes, TimePoint at) {
    buf_.append(bytes);
    for (;;) {
      std::string_view rest = std::string_view(buf_).substr(pos_);
      switch (state_) {
        case State::kHead: {
          size_t end = rest.find("\r\n\r\n");
          if (end == std::string_view::npos) return false;
          ParseHead(rest.substr(0, end));
          pos_ += end + 4;
          if (response_.status == 100) {
            response_ = HttpResponse();
            continue;
          }
          if (Lower(response_.headers["transfer-encoding"]) == "chunked") {
            state_ = State::kChunkSize;
          } else {
            remaining_ = std::stoull("0" + response_.headers["content-length"]);
            state_ = State::kBody;
          }
          continue;
        }
        case State::kBody:
          if (rest.size() < remaining_) return false;
          response_.body.assign(rest.substr(0, remaining_));
          pos_ += remaining_;
          return Done();
        case State::kChunkSize: {
          size_t eol = rest.find("\r\n");
          if (eol == std::string_view::npos) return false;
          remaining_ = std::stoull(std::string(rest.substr(0, eol)), nullptr, 16);
          pos_ += eol + 2;
          state_ = remaining_ == 0 ? State::kTrailer : State::kChunkData;
          continue;
        }
        case State::kChunkData: {
          if (rest.size() < remaining_ + 2) return false;
          ++response_.chunk_count;
          response_.chunk_times.push_back(at);
          if (keep_) {
            response_.chunks.emplace_back(rest.substr(0, remaining_));
            response_.body.append(rest.substr(0, remaining_));
          }
          pos_ += remaining_ + 2;
          state_ = State::kChunkSize;
          if (pos_ > (1 << 20)) {
            buf_.erase(0, pos_);
            pos_ = 0;
          }
          continue;
        }
        case State::kTrailer: {
          size_t eol = rest.find("\r\n");
          if (eol == std::string_view::npos) return false;
          pos_ += eol + 2;
          if (eol == 0) return Done();
          continue;
        }
        case State::kDone:
          return true;
      }
    }
  }

  // The response read so far (complete or not); the parser is ready for the next one.
  HttpResponse Take() {
    HttpResponse r = std::move(response_);
    response_ = HttpResponse();
    buf_.erase(0, pos_);
    pos_ = 0;
    state_ = State::kHead;
    return r;
  }

 private:
  enum class State { kHead, kBody, kChunkSize, kChunkData, kTrailer, kDone };

  bool Done() {
    response_.complete = true;
    state_ = State::kDone;
    return true;
  }

  void ParseHead(std::string_view head) {
    size_t eol = head.find("\r\n");
    std::string_view status_line = head.substr(0, eol);
    response_.status = std::stoi(std::string(status_line.substr(9, 3)));
    while (eol != std::string_view::npos) {
      size_t start = eol + 2;
      eol = head.find("\r\n", start);
      std::string_view line = head.substr(start, eol == std::string_view::npos ? eol : eol - start);
      size_t colon = line.find(':');
      if (colon == std::string_view::npos) continue;
      std::string_view value = line.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
      response_.headers[Lower(std::string(line.substr(0, colon)))] = std::string(value);
    }
  }

  bool keep_;
  std::string buf_;
  size_t pos_ = 0;
  State state_ = State::kHead;
  size_t remaining_ = 0;
  HttpResponse response_;
};

// A blocking keep-alive client on 127.0.0.1 with a 10 s receive timeout (a hung server fails the
// test instead of hanging it).
class TestClient {
 public:
  explicit TestClient(int port, bool keep = true, int receive_buffer = 0) : parser_(keep) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd_ >= 0);
    if (receive_buffer > 0) {  // before connect, so the window is small from the start
      ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    timeval timeout{10, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  ~TestClient() { ::close(fd_); }
  TestClient(const TestClient&) = delete;
  TestClient& operator=(const TestClient&) = delete;

  int fd() const { return fd_; }

  // Sends all of `raw`; returns the time the last byte was handed to the kernel.
  TimePoint Send(std::string_view raw) {
    while (!raw.empty()) {
      ssize_t n = ::send(fd_, raw.data(), raw.size(), MSG_NOSIGNAL);
      REQUIRE(n > 0);
      raw.remove_prefix(static_cast<size_t>(n));
    }
    return Clock::now();
  }

  // Reads one response. When the server closes (or the timeout passes) first, the response comes
  // back with complete == false and closed() is true.
  HttpResponse Read() {
    char buf[256 * 1024];
    if (parser_.Feed({}, Clock::now())) return parser_.Take();
    for (;;) {
      ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      TimePoint at = Clock::now();
      if (n <= 0) {
        closed_ = true;
        return parser_.Take();
      }
      if (parser_.Feed(std::string_view(buf, static_cast<size_t>(n)), at)) return parser_.Take();
    }
  }

  // Raw bytes up to and including the first blank line (for 100 Continue).
  std::string ReadHead() {
    std::string head;
    char c = 0;
    while (head.size() < 4 || head.compare(head.size() - 4, 4, "\r\n\r\n") != 0) {
      if (::recv(fd_, &c, 1, 0) != 1) break;
      head += c;
    }
    return head;
  }

  HttpResponse Exchange(std::string_view raw) {
    Send(raw);
    return Read();
  }

  // Feeds bytes already received by a caller that polls many clients.
  bool Feed(std::string_view bytes, TimePoint at) { return parser_.Feed(bytes, at); }
  HttpResponse Take() { return parser_.Take(); }
  bool closed() const { return closed_; }

 private:
  int fd_ = -1;
  ResponseParser parser_;
  bool closed_ = false;
};

std::string Request(std::string_view method, std::string_view path, std::string_view body = {},
                    std::string_view extra_headers = {}) {
  std::string r = std::string(method) + " " + std::string(path) + " HTTP/1.1\r\n";
  r += "Host: 127.0.0.1\r\n";
  r += extra_headers;
  if (method == "POST") {
    r += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\n";
  }
  r += "\r\n";
  r += body;
  return r;
}

std::string Chat(const json& body) { return Request("POST", "/v1/chat/completions", body.dump()); }

// A chat request: one user message "Hello, world!" (4 tokens: 1 message -> 4 + 3 + 3 = 10
// prompt tokens).
json ChatBody(bool stream, int max_tokens = 100) {
  json body = {{"model", "m1"},
               {"messages", json::array({{{"role", "user"}, {"content", "Hello, world!"}}})},
               {"max_tokens", max_tokens}};
  if (stream) body["stream"] = true;
  return body;
}

MockConfig FastConfig() {
  MockConfig config;
  config.ttft_ms = 0;
  config.decode_tps = 0;
  config.answer_tokens = 10;
  return config;
}

// A streamed response, decoded: its data events, text and usage.
struct Stream {
  std::vector<json> events;             // every parsed data event but [DONE]
  std::vector<std::string> raw;         // every data payload, verbatim
  std::vector<TimePoint> text_times;    // arrival of each text event
  std::vector<int64_t> text_tokens;     // tokens in each text event
  std::vector<bool> text_is_reasoning;  // the event's first field is reasoning_content
  std::string content;
  std::string reasoning;
  std::string finish_reason;
  json usage;                           // null when none came
  json timings;
  int usage_chunks = 0;                 // "choices": [] chunks
  bool usage_on_finish = false;
  bool done = false;                    // saw data: [DONE]
  bool parse_errors = false;
};

Stream Decode(const HttpResponse& r) {
  Stream s;
  for (size_t i = 0; i < r.chunks.size(); ++i) {
    const std::string& chunk = r.chunks[i];
    REQUIRE(chunk.rfind("data: ", 0) == 0);
    REQUIRE(chunk.size() >= 8);
    REQUIRE(chunk.compare(chunk.size() - 2, 2, "\n\n") == 0);
    std::string payload = chunk.substr(6, chunk.size() - 8);
    s.raw.push_back(payload);
    if (payload == "[DONE]") {
      s.done = true;
      continue;
    }
    json event = json::parse(payload, nullptr, false);
    if (event.is_discarded()) {
      s.parse_errors = true;
      continue;
    }
    s.events.push_back(event);
    if (event.contains("usage")) s.usage = event["usage"];
    if (event.contains("timings")) s.timings = event["timings"];
    if (event["choices"].empty()) {
      ++s.usage_chunks;
      continue;
    }
    const json& choice = event["choices"][0];
    if (!choice["finish_reason"].is_null()) {
      s.finish_reason = choice["finish_reason"];
      s.usage_on_finish = event.contains("usage");
      CHECK(choice["delta"].empty());
      continue;
    }
    const json& delta = choice["delta"];
    std::string reasoning = delta.value("reasoning_content", "");
    std::string content = delta.value("content", "");
    s.reasoning += reasoning;
    s.content += content;
    s.text_times.push_back(r.chunk_times[i]);
    s.text_tokens.push_back(MockTokenCount(reasoning) + MockTokenCount(content));
    s.text_is_reasoning.push_back(delta.begin().key() == "reasoning_content");
  }
  return s;
}

double Ms(TimePoint from, TimePoint to) { return NanosToMs(NanosBetween(from, to)); }

TEST_CASE("mock_server: MockTokenCount follows the tokenizer rule", "[mock_server]") {
  auto [text, tokens] = GENERATE(table<std::string, int64_t>({
      {"", 0},
      {" \t\r\n  ", 0},
      {"hello", 1},
      {"hello world", 2},
      {"  hello \n world  ", 2},
      {"Hello, world!", 4},
      {"abc123def", 1},
      {"3.14", 3},
      {"a_b", 3},
      {"x+=1;", 5},
      {"don't", 3},
      {"你好世界", 4},
      {"你好, world", 4},
      {"héllo", 3},
      {"\xF0\x9F\x91\x8D", 1},                  // thumbs up
      {"\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD", 2},  // thumbs up + skin tone: two code points
      {"\xE3\x80\x80", 1},                      // ideographic space is not ASCII whitespace
  }));
  CAPTURE(text);
  CHECK(MockTokenCount(text) == tokens);
}

TEST_CASE("mock_server: routes answer with their JSON", "[mock_server]") {
  MockConfig config = FastConfig();
  config.model = "mock-7b";
  MockServer server(config);
  server.Start();
  REQUIRE(server.port() > 0);
  CHECK(server.base_url() == "http://127.0.0.1:" + std::to_string(server.port()));
  TestClient client(server.port());

  SECTION("GET /health") {
    HttpResponse r = client.Exchange(Request("GET", "/health"));
    CHECK(r.status == 200);
    CHECK(r.headers["server"] == "evalrun-mock");
    CHECK(r.headers["content-type"] == "application/json");
    CHECK(json::parse(r.body) == json{{"status", "ok"}});
  }
  SECTION("GET /v1/models") {
    HttpResponse r = client.Exchange(Request("GET", "/v1/models"));
    CHECK(r.status == 200);
    CHECK(r.headers["server"] == "evalrun-mock");
    CHECK(json::parse(r.body) ==
          json::parse(R"({"object":"list","data":[{"id":"mock-7b","object":"model",)"
                      R"("owned_by":"evalrun-mock"}]})"));
  }
  SECTION("POST /tokenize counts like MockTokenCount, equal pieces get equal ids") {
    HttpResponse r = client.Exchange(
        Request("POST", "/tokenize", json{{"content", "Hello, world! Hello 你好"}}.dump()));
    CHECK(r.status == 200);
    json tokens = json::parse(r.body)["tokens"];
    REQUIRE(tokens.size() == 7);
    CHECK(tokens[0] == tokens[4]);
    CHECK(tokens[0] != tokens[2]);
    HttpResponse bad = client.Exchange(Request("POST", "/tokenize", R"({"text":"x"})"));
    CHECK(bad.status == 400);
  }
  SECTION("unknown path: 404 with a JSON error") {
    HttpResponse r = client.Exchange(Request("GET", "/v2/nothing?x=1"));
    CHECK(r.status == 404);
    CHECK(r.headers["server"] == "evalrun-mock");
    json error = json::parse(r.body)["error"];
    CHECK(error["message"] == "unknown route: GET /v2/nothing");
    CHECK(error["code"] == 404);
  }
  SECTION("known path, wrong method: 405") {
    CHECK(client.Exchange(Request("GET", "/v1/chat/completions")).status == 405);
  }
  CHECK(server.chat_requests() == 0);
}

TEST_CASE("mock_server: a streamed completion", "[mock_server]") {
  MockConfig config = FastConfig();
  json body = ChatBody(true);

  SECTION("separate usage chunk when include_usage is asked for") {
    config.usage = MockUsageStyle::kSeparateChunk;
    body["stream_options"] = {{"include_usage", true}};
    MockServer server(config);
    server.Start();
    HttpResponse r = TestClient(server.port()).Exchange(Chat(body));
    REQUIRE(r.complete);
    CHECK(r.status == 200);
    CHECK(r.headers["content-type"] == "text/event-stream");
    CHECK(r.headers["transfer-encoding"] == "chunked");
    CHECK(r.headers["server"] == "evalrun-mock");
    Stream s = Decode(r);
    CHECK(r.chunks.size() == 13);  // 10 text, finish, usage, [DONE]
    CHECK(s.text_tokens == std::vector<int64_t>(10, 1));
    CHECK(s.content.rfind(" the quick brown fox", 0) == 0);
    CHECK(MockTokenCount(s.content) == 10);
    CHECK(s.reasoning.empty());
    CHECK(s.finish_reason == "stop");
    CHECK(s.usage_chunks == 1);
    CHECK_FALSE(s.usage_on_finish);
    CHECK(s.done);
    CHECK(s.raw.back() == "[DONE]");
    CHECK(s.usage == json::parse(R"({"prompt_tokens":10,"completion_tokens":10,"total_tokens":20,)"
                                 R"("prompt_tokens_details":{"cached_tokens":0}})"));
    json first = s.events.front();
    CHECK(first["object"] == "chat.completion.chunk");
    CHECK(first["model"] == "m1");
    CHECK(first["system_fingerprint"] == "evalrun-mock");
    CHECK(first["id"] == "chatcmpl-mock-1");
    CHECK(first["choices"][0]["index"] == 0);
    CHECK(first["choices"][0]["finish_reason"].is_null());
    CHECK(s.events.back()["choices"].empty());
    CHECK(s.timings["predicted_n"] == 10);
    CHECK(s.timings["prompt_n"] == 10);
    CHECK(server.chat_requests() == 1);
  }
  SECTION("separate style, include_usage not asked for: no usage") {
    config.usage = MockUsageStyle::kSeparateChunk;
    MockServer server(config);
    server.Start();
    HttpResponse r = TestClient(server.port()).Exchange(Chat(body));
    Stream s = Decode(r);
    CHECK(r.chunks.size() == 12);
    CHECK(s.usage.is_null());
    CHECK(s.usage_chunks == 0);
    CHECK(s.finish_reason == "stop");
    CHECK(s.timings["predicted_n"] == 10);  // timings ride on the finish chunk then
  }
  SECTION("usage on the finish chunk (llama.cpp), with or without include_usage") {
    config.usage = MockUsageStyle::kLastChunk;
    MockServer server(config);
    server.Start();
    HttpResponse r = TestClient(server.port()).Exchange(Chat(body));
    Stream s = Decode(r);
    CHECK(r.chunks.size() == 12);
    CHECK(s.usage_on_finish);
    CHECK(s.usage_chunks == 0);
    CHECK(s.usage["completion_tokens"] == 10);
  }
  SECTION("no usage at all") {
    config.usage = MockUsageStyle::kNone;
    config.timings = false;
    body["stream_options"] = {{"include_usage", true}};
    MockServer server(config);
    server.Start();
    HttpResponse r = TestClient(server.port()).Exchange(Chat(body));
    Stream s = Decode(r);
    CHECK(r.chunks.size() == 12);
    CHECK(s.usage.is_null());
    CHECK(s.timings.is_null());
    CHECK(s.usage_chunks == 0);
  }
  SECTION("model defaults to the configured one") {
    body.erase("model");
    MockServer server(config);
    server.Start();
    Stream s = Decode(TestClient(server.port()).Exchange(Chat(body)));
    CHECK(s.events.front()["model"] == "evalrun-mock");
  }
}

TEST_CASE("mock_server: reasoning tokens come first as reasoning_content", "[mock_server]") {
  MockConfig config = FastConfig();
  config.reasoning_tokens = 3;
  config.answer_tokens = 5;
  config.usage = MockUsageStyle::kLastChunk;
  MockServer server(config);
  server.Start();
  Stream s = Decode(TestClient(server.port()).Exchange(Chat(ChatBody(true))));
  CHECK(s.text_is_reasoning == std::vector<bool>{true, true, true, false, false, false, false,
                                                 false});
  CHECK(MockTokenCount(s.reasoning) == 3);
  CHECK(MockTokenCount(s.content) == 5);
  CHECK(s.usage["completion_tokens"] == 8);
  CHECK(s.usage["completion_tokens_details"]["reasoning_tokens"] == 3);
  CHECK(s.finish_reason == "stop");
}

TEST_CASE("mock_server: ignore_eos and max_tokens decide the length", "[mock_server]") {
  MockConfig config = FastConfig();  // natural answer: 10 tokens
  config.usage = MockUsageStyle::kLastChunk;
  json body = ChatBody(true, 20);
  body["ignore_eos"] = true;

  SECTION("honoured: max_tokens tokens, finish_reason length") {
    MockServer server(config);
    server.Start();
    Stream s = Decode(TestClient(server.port()).Exchange(Chat(body)));
    CHECK(s.text_tokens.size() == 20);
    CHECK(s.usage["completion_tokens"] == 20);
    CHECK(s.finish_reason == "length");
  }
  SECTION("a server that ignores ignore_eos stops at its natural end") {
    config.honor_ignore_eos = false;
    MockServer server(config);
    server.Start();
    Stream s = Decode(TestClient(server.port()).Exchange(Chat(body)));
    CHECK(s.text_tokens.size() == 10);
    CHECK(s.usage["completion_tokens"] == 10);
    CHECK(s.finish_reason == "stop");
  }
  SECTION("without ignore_eos, max_tokens below the natural length cuts it") {
    MockServer server(config);
    server.Start();
    Stream s = Decode(TestClient(server.port()).Exchange(Chat(ChatBody(true, 4))));
    CHECK(s.text_tokens.size() == 4);
    CHECK(s.finish_reason == "length");
  }
  SECTION("max_completion_tokens is read too") {
    json b = ChatBody(true);
    b.erase("max_tokens");
    b["max_completion_tokens"] = 3;
    MockServer server(config);
    server.Start();
    Stream s = Decode(TestClient(server.port()).Exchange(Chat(b)));
    CHECK(s.text_tokens.size() == 3);
  }
  SECTION("max_tokens absent: 256 with ignore_eos") {
    json b = ChatBody(true);
    b.erase("max_tokens");
    b["ignore_eos"] = true;
    MockServer server(config);
    server.Start();
    Stream s = Decode(TestClient(server.port()).Exchange(Chat(b)));
    CHECK(s.usage["completion_tokens"] == 256);
  }
}

TEST_CASE("mock_server: tokens_per_event imitates speculative decoding", "[mock_server]") {
  MockConfig config = FastConfig();
  config.tokens_per_event = 4;
  config.answer_tokens = 13;
  config.reasoning_tokens = 0;
  config.usage = MockUsageStyle::kLastChunk;

  SECTION("first event 1 token, then 4 each; drafts consistent with that") {
    MockServer server(config);
    server.Start();
    Stream s = Decode(TestClient(server.port()).Exchange(Chat(ChatBody(true))));
    CHECK(s.text_tokens == std::vector<int64_t>{1, 4, 4, 4});
    CHECK(s.usage["completion_tokens"] == 13);
    CHECK(s.timings["draft_n"] == 12);          // 3 steps x 4 drafted
    CHECK(s.timings["draft_n_accepted"] == 9);  // 3 accepted per step, + 1 own token = 4
  }
  SECTION("a last event may carry fewer; reasoning and content can share an event") {
    config.answer_tokens = 7;
    config.reasoning_tokens = 3;
    MockServer server(config);
    server.Start();
    Stream s = Decode(TestClient(server.port()).Exchange(Chat(ChatBody(true))));
    CHECK(s.text_tokens == std::vector<int64_t>{1, 4, 4, 1});
    CHECK(MockTokenCount(s.reasoning) == 3);
    CHECK(MockTokenCount(s.content) == 7);
    CHECK(s.events[1]["choices"][0]["delta"].contains("reasoning_content"));
    CHECK(s.events[1]["choices"][0]["delta"].contains("content"));
  }
}

TEST_CASE("mock_server: a non-streamed completion", "[mock_server]") {
  MockConfig config = FastConfig();
  config.reasoning_tokens = 2;
  config.answer_tokens = 6;
  MockServer server(config);
  server.Start();
  HttpResponse r = TestClient(server.port()).Exchange(Chat(ChatBody(false)));
  CHECK(r.status == 200);
  CHECK(r.headers["content-type"] == "application/json");
  json doc = json::parse(r.body);
  CHECK(doc["object"] == "chat.completion");
  CHECK(doc["model"] == "m1");
  json choice = doc["choices"][0];
  CHECK(choice["message"]["role"] == "assistant");
  CHECK(MockTokenCount(choice["message"]["content"].get<std::string>()) == 6);
  CHECK(MockTokenCount(choice["message"]["reasoning_content"].get<std::string>()) == 2);
  CHECK(choice["finish_reason"] == "stop");
  CHECK(doc["usage"]["completion_tokens"] == 8);
  CHECK(doc["usage"]["prompt_tokens"] == 10);
  CHECK(doc["timings"]["predicted_n"] == 8);
}

TEST_CASE("mock_server: the request after an unpaced stream whose end could not be sent at "
          "once is answered", "[mock_server]") {
  // Small socket buffers on both ends and a client that reads nothing for a while: the first
  // answer (about 170 KB) is formatted whole while its last bytes cannot go out. The second
  // request (sent with the first) must be answered once they drain; it once waited forever.
  MockConfig config = FastConfig();
  config.send_buffer = 4096;
  MockServer server(config);
  server.Start();
  TestClient client(server.port(), true, 8192);
  json long_body = ChatBody(true, 1000);
  long_body["ignore_eos"] = true;
  client.Send(Chat(long_body) + Chat(ChatBody(true)));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const Stream first = Decode(client.Read());  // bounded by the client's 10 s receive timeout
  CHECK(first.done);
  CHECK(first.text_tokens.size() == 1000);
  const Stream second = Decode(client.Read());
  CHECK(second.done);
  CHECK(second.text_tokens.size() == 10);
  CHECK_FALSE(client.closed());
}

TEST_CASE("mock_server: keep-alive serves many requests on one connection", "[mock_server]") {
  MockConfig config = FastConfig();
  config.decode_tps = 1000;
  MockServer server(config);
  server.Start();
  TestClient client(server.port());
  for (int i = 0; i < 3; ++i) {
    Stream s = Decode(client.Exchange(Chat(ChatBody(true))));
    CHECK(s.text_tokens.size() == 10);
    CHECK(s.done);
    HttpResponse plain = client.Exchange(Chat(ChatBody(false)));
    CHECK(plain.status == 200);
    CHECK(json::parse(plain.body)["usage"]["completion_tokens"] == 10);
  }
  CHECK(client.Exchange(Request("GET", "/health")).status == 200);
  CHECK_FALSE(client.closed());
  CHECK(server.chat_requests() == 6);

  SECTION("HTTP/1.0 without keep-alive: answered, then closed") {
    HttpResponse r = client.Exchange("GET /health HTTP/1.0\r\n\r\n");
    CHECK(r.status == 200);
    client.Read();
    CHECK(client.closed());
  }
  SECTION("Connection: close is honoured") {
    HttpResponse r = client.Exchange(Request("GET", "/health", {}, "Connection: close\r\n"));
    CHECK(r.headers["connection"] == "close");
    client.Read();
    CHECK(client.closed());
  }
}

TEST_CASE("mock_server: bad requests are answered, not crashed on", "[mock_server]") {
  MockServer server(FastConfig());
  server.Start();
  TestClient client(server.port());

  SECTION("bad JSON: 400 with an OpenAI error object; the connection stays usable") {
    HttpResponse r = client.Exchange(Request("POST", "/v1/chat/completions", "{\"messages\": ["));
    CHECK(r.status == 400);
    json error = json::parse(r.body)["error"];
    CHECK(error["type"] == "invalid_request_error");
    CHECK(error["code"] == 400);
    CHECK(error["message"].is_string());
    CHECK(client.Exchange(Request("GET", "/health")).status == 200);
  }
  SECTION("messages missing: 400") {
    HttpResponse r = client.Exchange(Chat(json{{"max_tokens", 3}}));
    CHECK(r.status == 400);
    CHECK(json::parse(r.body)["error"]["message"] == "\"messages\" must be an array");
  }
  SECTION("a chunked request body: 411 and close") {
    HttpResponse r = client.Exchange(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        "2\r\n{}\r\n0\r\n\r\n");
    CHECK(r.status == 411);
    client.Read();
    CHECK(client.closed());
  }
  SECTION("POST without Content-Length: 411") {
    CHECK(client.Exchange("POST /tokenize HTTP/1.1\r\nHost: x\r\n\r\n").status == 411);
  }
  SECTION("garbage request line: 400") {
    CHECK(client.Exchange("NONSENSE\r\n\r\n").status == 400);
  }
  SECTION("Expect: 100-continue gets its interim answer") {
    std::string body = ChatBody(false).dump();
    client.Send("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
                "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n");
    CHECK(client.ReadHead() == "HTTP/1.1 100 Continue\r\n\r\n");
    HttpResponse r = client.Exchange(body);
    CHECK(r.status == 200);
  }
}

TEST_CASE("mock_server: max_context cuts prompt_tokens silently", "[mock_server]") {
  MockConfig config = FastConfig();
  config.usage = MockUsageStyle::kLastChunk;
  json body = ChatBody(true);
  body["messages"] = json::array({{{"role", "system"}, {"content", "You are terse."}},
                                  {{"role", "user"}, {"content", "one two three four five"}}});
  // (4 + 3) + (5 + 3) + 3 = 18 prompt tokens.
  SECTION("no limit") {
    MockServer server(config);
    server.Start();
    CHECK(Decode(TestClient(server.port()).Exchange(Chat(body))).usage["prompt_tokens"] == 18);
  }
  SECTION("limit 12") {
    config.max_context = 12;
    MockServer server(config);
    server.Start();
    HttpResponse r = TestClient(server.port()).Exchange(Chat(body));
    CHECK(r.status == 200);
    Stream s = Decode(r);
    CHECK(s.usage["prompt_tokens"] == 12);
    CHECK(s.timings["prompt_n"] == 12);
  }
  SECTION("content parts count their text") {
    body["messages"] = json::array(
        {{{"role", "user"},
          {"content", json::array({{{"type", "text"}, {"text", "a b"}},
                                   {{"type", "image_url"}, {"image_url", {{"url", "x"}}}}})}}});
    MockServer server(config);
    server.Start();
    CHECK(Decode(TestClient(server.port()).Exchange(Chat(body))).usage["prompt_tokens"] == 8);
  }
}

TEST_CASE("mock_server: injected faults", "[mock_server]") {
  MockConfig config = FastConfig();
  config.fault_after_events = 3;
  config.usage = MockUsageStyle::kLastChunk;

  SECTION("HTTP 500 on the listed requests only") {
    config.fault = MockFault::kHttp500;
    config.fault_on = {2};
    MockServer server(config);
    server.Start();
    TestClient client(server.port());
    CHECK(client.Exchange(Chat(ChatBody(true))).status == 200);
    HttpResponse r = client.Exchange(Chat(ChatBody(true)));
    CHECK(r.status == 500);
    CHECK(json::parse(r.body) ==
          json::parse(R"({"error":{"message":"mock fault: injected HTTP 500",)"
                      R"("type":"server_error","code":500}})"));
    CHECK(client.Exchange(Chat(ChatBody(true))).status == 200);
  }
  SECTION("drop: the connection closes mid-body after N events") {
    config.fault = MockFault::kDrop;
    MockServer server(config);
    server.Start();
    TestClient client(server.port());
    HttpResponse r = client.Exchange(Chat(ChatBody(true)));
    CHECK(r.status == 200);
    CHECK_FALSE(r.complete);
    CHECK(client.closed());
    Stream s = Decode(r);
    CHECK(s.text_tokens.size() == 3);
    CHECK_FALSE(s.done);
  }
  SECTION("drop, not streamed: no answer at all") {
    config.fault = MockFault::kDrop;
    MockServer server(config);
    server.Start();
    TestClient client(server.port());
    HttpResponse r = client.Exchange(Chat(ChatBody(false)));
    CHECK(r.status == 0);
    CHECK(client.closed());
  }
  SECTION("stall: a pause after N events, then the rest") {
    config.fault = MockFault::kStall;
    config.stall_s = 0.3;
    bool paced = GENERATE(false, true);
    if (paced) config.decode_tps = 100;
    CAPTURE(paced);
    MockServer server(config);
    server.Start();
    Stream s = Decode(TestClient(server.port()).Exchange(Chat(ChatBody(true))));
    REQUIRE(s.text_times.size() == 10);
    CHECK(s.done);
    // The gap is measured where the client reads: event 2 read a little late
    // (the client thread not scheduled at once) shortens it below the server's
    // 300 ms sleep, so the floor leaves 30 ms for that; no stall would be ~0.
    double gap = Ms(s.text_times[2], s.text_times[3]);
    CHECK(gap >= 270);
    CHECK(gap < 400);
    CHECK(Ms(s.text_times[3], s.text_times[4]) < 50);
  }
  SECTION("malformed: event N is cut JSON, the stream goes on") {
    config.fault = MockFault::kMalformed;
    config.fault_after_events = 2;
    MockServer server(config);
    server.Start();
    HttpResponse r = TestClient(server.port()).Exchange(Chat(ChatBody(true)));
    CHECK(r.complete);
    CHECK(r.chunks[1] == "data: {\"choices\":[{\"delta\":{\"content\":\"bro\n\n");
    Stream s = Decode(r);
    CHECK(s.parse_errors);
    CHECK(s.text_tokens.size() == 9);  // the malformed event replaced a text event
    CHECK(s.done);
    CHECK(s.finish_reason == "stop");
  }
  SECTION("malformed, not streamed: the body is cut in half") {
    config.fault = MockFault::kMalformed;
    MockServer server(config);
    server.Start();
    HttpResponse r = TestClient(server.port()).Exchange(Chat(ChatBody(false)));
    CHECK(r.status == 200);
    CHECK(json::parse(r.body, nullptr, false).is_discarded());
  }
}

TEST_CASE("mock_server: without pacing, long streams arrive whole", "[mock_server]") {
  MockConfig config = FastConfig();
  config.usage = MockUsageStyle::kLastChunk;
  MockServer server(config);
  server.Start();
  json body = ChatBody(true, 20000);
  body["ignore_eos"] = true;
  TestClient client(server.port());
  for (int round = 0; round < 2; ++round) {
    HttpResponse r = client.Exchange(Chat(body));
    REQUIRE(r.complete);
    Stream s = Decode(r);
    CHECK(s.text_tokens.size() == 20000);
    CHECK(std::all_of(s.text_tokens.begin(), s.text_tokens.end(),
                      [](int64_t n) { return n == 1; }));
    CHECK(MockTokenCount(s.content) == 20000);
    CHECK(s.usage["completion_tokens"] == 20000);
    CHECK(s.finish_reason == "length");
    CHECK(s.done);
  }
}

TEST_CASE("mock_server: concurrent streams all complete", "[mock_server]") {
  MockConfig config = FastConfig();
  config.decode_tps = 500;
  config.answer_tokens = 20;
  config.usage = MockUsageStyle::kLastChunk;
  MockServer server(config);
  server.Start();
  std::vector<std::unique_ptr<TestClient>> clients;
  for (int i = 0; i < 64; ++i) {
    clients.push_back(std::make_unique<TestClient>(server.port()));
    clients.back()->Send(Chat(ChatBody(true)));
  }
  for (auto& client : clients) {
    Stream s = Decode(client->Read());
    CHECK(s.text_tokens.size() == 20);
    CHECK(s.usage["completion_tokens"] == 20);
  }
  CHECK(server.chat_requests() == 64);
}

TEST_CASE("mock_server: holds 1024 connections at once", "[mock_server]") {
  MockServer server(FastConfig());
  server.Start();
  std::vector<std::unique_ptr<TestClient>> clients;
  for (int i = 0; i < 1024; ++i) clients.push_back(std::make_unique<TestClient>(server.port()));
  for (auto& client : clients) client->Send(Request("GET", "/health"));
  int ok = 0;
  for (auto& client : clients) ok += client->Read().status == 200 ? 1 : 0;
  CHECK(ok == 1024);
}

TEST_CASE("mock_server: bind failure names the address", "[mock_server]") {
  MockServer first(FastConfig());
  first.Start();
  MockConfig config = FastConfig();
  config.port = first.port();
  MockServer second(config);
  CHECK_THROWS_WITH(second.Start(), "cannot listen on 127.0.0.1:" + std::to_string(first.port()) +
                                        ": Address already in use");
}

TEST_CASE("mock_server: Run serves on the calling thread until stop", "[mock_server]") {
  MockServer server(FastConfig());
  std::atomic<bool> stop{false};
  std::thread runner([&] { server.Run(stop); });
  for (int i = 0; i < 500 && server.port() == 0; ++i) std::this_thread::sleep_for(2ms);
  REQUIRE(server.port() > 0);
  CHECK(TestClient(server.port()).Exchange(Request("GET", "/health")).status == 200);
  TimePoint asked = Clock::now();
  stop = true;
  runner.join();
  CHECK(Ms(asked, Clock::now()) < 250);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Timing on a shared machine sees scheduler hiccups of a few milliseconds now and then (the
// client's as much as the server's), so each figure is the median of three requests.
TEST_CASE("mock_server: pacing is exact", "[mock_server][slow]") {
  MockConfig config;
  config.ttft_ms = 100;
  config.decode_tps = 50;
  config.answer_tokens = 51;  // 50 gaps of 20 ms
  config.usage = MockUsageStyle::kLastChunk;
  MockServer server(config);
  server.Start();
  TestClient client(server.port());
  client.Exchange(Request("GET", "/health"));  // connection warm
  std::vector<double> ttfts;
  std::vector<double> rates;
  std::vector<double> lateness;  // of each event against t_first + i / decode_tps
  for (int round = 0; round < 3; ++round) {
    TimePoint sent = client.Send(Chat(ChatBody(true)));
    Stream s = Decode(client.Read());
    REQUIRE(s.text_times.size() == 51);
    ttfts.push_back(Ms(sent, s.text_times.front()));
    rates.push_back(50.0 / (Ms(s.text_times.front(), s.text_times.back()) / 1000));
    for (size_t i = 0; i < s.text_times.size(); ++i) {
      lateness.push_back(Ms(s.text_times.front(), s.text_times[i]) - 20.0 * static_cast<double>(i));
    }
    CHECK(s.timings["predicted_per_second"] == Approx(50));
    CHECK(s.timings["prompt_ms"] == Approx(100));
  }
  CAPTURE(ttfts, rates);
  // Bounds that catch a wrong schedule yet hold on a loaded 2-core CI machine; the exactness
  // itself is shown by bench/stream_bench (docs/performance.md), not by a timed test.
  CHECK(Median(ttfts) == Approx(100).margin(10));
  CHECK(Median(rates) == Approx(50).epsilon(0.02));
  CHECK(Median(lateness) == Approx(0).margin(5));
}

// --- Figures for the record (hidden: run with `plugins_mock_server_test [perf]`) -------------

// Reads `clients` together (one thread, poll) and returns each one's response.
std::vector<HttpResponse> ReadAll(std::vector<std::unique_ptr<TestClient>>& clients) {
  std::vector<HttpResponse> responses(clients.size());
  std::vector<bool> done(clients.size(), false);
  size_t left = clients.size();
  std::vector<char> buf(256 * 1024);
  while (left > 0) {
    std::vector<pollfd> fds;
    std::vector<size_t> index;
    for (size_t i = 0; i < clients.size(); ++i) {
      if (!done[i]) {
        fds.push_back(pollfd{clients[i]->fd(), POLLIN, 0});
        index.push_back(i);
      }
    }
    REQUIRE(::poll(fds.data(), fds.size(), 10000) > 0);
    for (size_t k = 0; k < fds.size(); ++k) {
      if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      size_t i = index[k];
      ssize_t n = ::recv(fds[k].fd, buf.data(), buf.size(), 0);
      TimePoint at = Clock::now();
      if (n <= 0 || clients[i]->Feed(std::string_view(buf.data(), static_cast<size_t>(n)), at)) {
        responses[i] = clients[i]->Take();
        done[i] = true;
        --left;
      }
    }
  }
  return responses;
}

// Prints, over all events of `concurrency` simultaneous streams (ttft 50 ms, 50 tok/s, 100
// tokens): the first event's lateness against t_send + ttft (includes reading the request), and
// each later event's lateness against its own stream's t_first + i / decode_tps.
void ReportLateness(int concurrency) {
  MockConfig config;
  config.ttft_ms = 50;
  config.decode_tps = 50;
  config.answer_tokens = 100;
  config.usage = MockUsageStyle::kLastChunk;
  MockServer server(config);
  server.Start();
  std::vector<std::unique_ptr<TestClient>> clients;
  for (int i = 0; i < concurrency; ++i) {
    clients.push_back(std::make_unique<TestClient>(server.port()));
    clients.back()->Exchange(Request("GET", "/health"));
  }
  std::vector<TimePoint> sent;
  for (auto& client : clients) sent.push_back(client->Send(Chat(ChatBody(true))));
  std::vector<HttpResponse> responses = ReadAll(clients);
  std::vector<double> first;
  std::vector<double> later;
  for (size_t c = 0; c < responses.size(); ++c) {
    Stream s = Decode(responses[c]);
    REQUIRE(s.text_times.size() == 100);
    first.push_back(Ms(sent[c], s.text_times[0]) - 50.0);
    for (size_t i = 1; i < s.text_times.size(); ++i) {
      later.push_back(Ms(s.text_times[0], s.text_times[i]) - 20.0 * static_cast<double>(i));
    }
  }
  auto print = [&](const char* what, std::vector<double> v) {
    std::sort(v.begin(), v.end());
    double sum = 0;
    for (double x : v) sum += x;
    std::printf("concurrency %3d, %-26s n=%5zu mean %.3f ms  median %.3f  p99 %.3f  max %.3f\n",
                concurrency, what, v.size(), sum / static_cast<double>(v.size()), v[v.size() / 2],
                v[v.size() * 99 / 100], v.back());
  };
  print("first event vs t_send+ttft", first);
  print("later events vs t_first+i/tps", later);
}

TEST_CASE("mock_server: figures: pacing error by concurrency", "[.][perf]") {
  for (int concurrency : {1, 64, 512}) ReportLateness(concurrency);
}

TEST_CASE("mock_server: figures: unpaced events per second on one connection", "[.][perf]") {
  MockConfig config = FastConfig();
  config.usage = MockUsageStyle::kLastChunk;
  MockServer server(config);
  server.Start();
  TestClient client(server.port(), /*keep=*/false);
  json body = ChatBody(true, 1000000);
  body["ignore_eos"] = true;
  TimePoint sent = client.Send(Chat(body));
  HttpResponse r = client.Read();
  REQUIRE(r.complete);
  double seconds = Ms(sent, r.chunk_times.back()) / 1000;
  std::printf("unpaced: %lld chunks in %.3f s: %.0f events/s on one connection\n",
              static_cast<long long>(r.chunk_count), seconds,
              static_cast<double>(r.chunk_count) / seconds);
}

// --- The answer table ------------------------------------------------------------------------

json UserChat(bool stream, const std::string& text, int max_tokens = 100) {
  json body = ChatBody(stream, max_tokens);
  body["messages"] = json::array({{{"role", "user"}, {"content", text}}});
  return body;
}

MockConfig AnswerConfig(std::vector<MockAnswer> answers) {
  MockConfig config = FastConfig();
  config.usage = MockUsageStyle::kLastChunk;
  config.answers = std::move(answers);
  return config;
}

TEST_CASE("mock_server: the answer table picks the first rule in the last user message",
          "[mock_server][answers]") {
  MockServer server(AnswerConfig({{"colour", "red", "", "", {}},
                                  {"17 × 23", "ANSWER: 391", "", "", {}},
                                  {"17", "seventeen", "", "", {}}}));
  server.Start();
  TestClient client(server.port());
  auto reply = [&](const json& body) { return Decode(client.Exchange(Chat(body))).content; };

  CHECK(reply(UserChat(true, "Name a primary colour.")) == "red");
  SECTION("the first of several matching rules wins") {
    CHECK(reply(UserChat(true, "Compute 17 × 23.")) == "ANSWER: 391");
    CHECK(reply(UserChat(true, "Is 17 prime?")) == "seventeen");
  }
  SECTION("only the last user message counts, not the system prompt or earlier turns") {
    json body = ChatBody(true);
    body["messages"] = json::array({{{"role", "system"}, {"content", "Mind the colour."}},
                                    {{"role", "user"}, {"content", "Pick a colour."}},
                                    {{"role", "assistant"}, {"content", "Is 17 fine?"}},
                                    {{"role", "user"}, {"content", "Now a number: 17."}}});
    CHECK(reply(body) == "seventeen");
    body["messages"][3]["content"] = "Now anything.";
    CHECK(MockTokenCount(reply(body)) == 10);  // no rule: the filler
  }
  SECTION("content parts: their text is joined") {
    json body = ChatBody(true);
    body["messages"] = json::array(
        {{{"role", "user"},
          {"content", json::array({{{"type", "text"}, {"text", "Compute 17 "}},
                                   {{"type", "image_url"}, {"image_url", {{"url", "x"}}}},
                                   {{"type", "text"}, {"text", "× 23 now."}}})}}});
    CHECK(reply(body) == "ANSWER: 391");
  }
  SECTION("stream false gets the same text in one body") {
    HttpResponse r = client.Exchange(Chat(UserChat(false, "Compute 17 × 23.")));
    CHECK(r.status == 200);
    json doc = json::parse(r.body);
    CHECK(doc["choices"][0]["message"]["content"] == "ANSWER: 391");
    CHECK_FALSE(doc["choices"][0]["message"].contains("reasoning_content"));
    CHECK(doc["choices"][0]["finish_reason"] == "stop");
    CHECK(doc["usage"]["completion_tokens"] == 3);
  }
}

TEST_CASE("mock_server: a chosen answer streams its exact bytes, one token per event",
          "[mock_server][answers]") {
  const std::string content =
      "  Hello, \"world\"!\n\t\xE4\xBD\xA0\xE5\xA5\xBD \xF0\x9F\x91\x8D x\\y\x01z\r\n\n-- end \n";
  const int per_event = GENERATE(1, 3);
  const bool paced = GENERATE(false, true);
  CAPTURE(per_event, paced);
  MockConfig config = AnswerConfig({{"say it", content, "", "", {}}});
  config.tokens_per_event = per_event;
  if (paced) config.decode_tps = 2000;
  MockServer server(config);
  server.Start();
  TestClient client(server.port());
  HttpResponse r = client.Exchange(Chat(UserChat(true, "Please say it.")));
  REQUIRE(r.complete);
  Stream s = Decode(r);
  CHECK_FALSE(s.parse_errors);
  CHECK(s.content == content);  // the deltas concatenated, byte for byte
  CHECK(s.reasoning.empty());
  const int64_t tokens = MockTokenCount(content);
  CHECK(tokens == 17);
  CHECK(s.usage["completion_tokens"] == tokens);
  CHECK(s.timings["predicted_n"] == tokens);
  int64_t sent = 0;
  for (size_t i = 0; i < s.text_tokens.size(); ++i) {
    CHECK(s.text_tokens[i] == std::min<int64_t>(i == 0 ? 1 : per_event, tokens - sent));
    sent += s.text_tokens[i];
  }
  CHECK(sent == tokens);
  CHECK(s.finish_reason == "stop");
  CHECK(s.done);

  HttpResponse plain = client.Exchange(Chat(UserChat(false, "Please say it.")));
  json doc = json::parse(plain.body);
  CHECK(doc["choices"][0]["message"]["content"] == content);
  CHECK(doc["usage"]["completion_tokens"] == tokens);
}

TEST_CASE("mock_server: a chosen answer's reasoning goes first, apart", "[mock_server][answers]") {
  const std::string reasoning = "27 / 3 = 9 groups,\n9 × 2 = 18.";
  const std::string content = "ANSWER: 18";
  MockServer server(AnswerConfig({{"pencils", content, reasoning, "", {}}}));
  server.Start();
  TestClient client(server.port());
  Stream s = Decode(client.Exchange(Chat(UserChat(true, "How much do 27 pencils cost?"))));
  const int64_t r = MockTokenCount(reasoning);
  const int64_t c = MockTokenCount(content);
  CHECK(s.reasoning == reasoning);
  CHECK(s.content == content);
  std::vector<bool> expected(static_cast<size_t>(r + c), false);
  std::fill_n(expected.begin(), r, true);
  CHECK(s.text_is_reasoning == expected);
  CHECK(s.usage["completion_tokens"] == r + c);
  CHECK(s.usage["completion_tokens_details"]["reasoning_tokens"] == r);
  CHECK(s.finish_reason == "stop");

  json doc = json::parse(client.Exchange(Chat(UserChat(false, "27 pencils?"))).body);
  CHECK(doc["choices"][0]["message"]["reasoning_content"] == reasoning);
  CHECK(doc["choices"][0]["message"]["content"] == content);
  CHECK(doc["usage"]["completion_tokens_details"]["reasoning_tokens"] == r);
}

TEST_CASE("mock_server: max_tokens cuts a chosen answer with finish_reason length",
          "[mock_server][answers]") {
  MockServer server(AnswerConfig({{"count", "one, two three\nfour five ", "", "", {}},
                                  {"think", "done", "a b c d", "", {}},
                                  {"cut", "3 + 6 +", "", "length", {}}}));
  server.Start();
  TestClient client(server.port());

  SECTION("in the content: the first max_tokens tokens, without what follows them") {
    Stream s = Decode(client.Exchange(Chat(UserChat(true, "count", 3))));
    CHECK(s.content == "one, two");
    CHECK(s.usage["completion_tokens"] == 3);
    CHECK(s.finish_reason == "length");
    json doc = json::parse(client.Exchange(Chat(UserChat(false, "count", 4))).body);
    CHECK(doc["choices"][0]["message"]["content"] == "one, two three");
    CHECK(doc["choices"][0]["finish_reason"] == "length");
  }
  SECTION("exactly long enough: not cut, trailing whitespace included") {
    Stream s = Decode(client.Exchange(Chat(UserChat(true, "count", 6))));
    CHECK(s.content == "one, two three\nfour five ");
    CHECK(s.finish_reason == "stop");
  }
  SECTION("in the reasoning: no content at all") {
    Stream s = Decode(client.Exchange(Chat(UserChat(true, "think", 2))));
    CHECK(s.reasoning == "a b");
    CHECK(s.content.empty());
    CHECK(s.usage["completion_tokens"] == 2);
    CHECK(s.usage["completion_tokens_details"]["reasoning_tokens"] == 2);
    CHECK(s.finish_reason == "length");
  }
  SECTION("ignore_eos does not lengthen a chosen answer") {
    json body = UserChat(true, "count", 50);
    body["ignore_eos"] = true;
    Stream s = Decode(client.Exchange(Chat(body)));
    CHECK(s.content == "one, two three\nfour five ");
    CHECK(s.usage["completion_tokens"] == 6);
    CHECK(s.finish_reason == "stop");
  }
  SECTION("a rule's own finish_reason length imitates a cut reply") {
    Stream s = Decode(client.Exchange(Chat(UserChat(true, "cut it"))));
    CHECK(s.content == "3 + 6 +");
    CHECK(s.finish_reason == "length");
  }
}

TEST_CASE("mock_server: no rule matched falls back to the filler", "[mock_server][answers]") {
  MockServer server(AnswerConfig({{"never said", "x", "", "", {}}}));
  server.Start();
  Stream s = Decode(TestClient(server.port()).Exchange(Chat(ChatBody(true))));
  CHECK(s.content.rfind(" the quick brown fox", 0) == 0);
  CHECK(MockTokenCount(s.content) == 10);
  CHECK(s.usage["completion_tokens"] == 10);
  CHECK(s.finish_reason == "stop");
}

TEST_CASE("mock_server: answer files are read with exact errors", "[mock_server][answers]") {
  SECTION("a good file") {
    std::vector<MockAnswer> answers = ParseMockAnswers(
        R"({"comment": "for tests", "answers": [
             {"match": "17", "content": "ANSWER: 391", "comment": "math-003"},
             {"match": "planet", "content": "", "reasoning": "Mars is one.",
              "finish_reason": "length"}]})",
        "answers.json");
    REQUIRE(answers.size() == 2);
    CHECK(answers[0].match == "17");
    CHECK(answers[0].content == "ANSWER: 391");
    CHECK(answers[0].reasoning.empty());
    CHECK(answers[0].finish_reason.empty());
    CHECK(answers[1].content.empty());
    CHECK(answers[1].reasoning == "Mars is one.");
    CHECK(answers[1].finish_reason == "length");
    CHECK(FindMockAnswer(answers, "Name a planet, 17 times") == 0);
    CHECK(FindMockAnswer(answers, "Name a planet") == 1);
    CHECK(FindMockAnswer(answers, "Name a star") == -1);
    CHECK(ParseMockAnswers(R"({"answers": []})", "answers.json").empty());
  }
  SECTION("bad files") {
    auto [text, message] = GENERATE(table<std::string, std::string>({
        {R"([1, 2])",
         "answers.json: expected a JSON object "
         R"({"answers": [{"match": ..., "content": ...}, ...]})"},
        {R"({"answer": []})", "answers.json: unknown key 'answer', did you mean 'answers'?"},
        {R"({"rules": []})",
         "answers.json: unknown key 'rules' (expected one of: answers, comment)"},
        {R"({"comment": "x"})",
         R"(answers.json: 'answers' must be a list of {"match": ..., "content": ...} rules)"},
        {R"({"answers": {}})",
         R"(answers.json: 'answers' must be a list of {"match": ..., "content": ...} rules)"},
        {R"({"comment": 3, "answers": []})", "answers.json: 'comment' must be a string"},
        {R"({"answers": ["x"]})",
         R"(answers.json: answers[0]: expected an object {"match": ..., "content": ...})"},
        {R"({"answers": [{"match": "a", "content": "x"}, {"match": "b", "content": "y"},
                         {"match": "c", "content": "z"}, {"content": "w"}]})",
         "answers.json: answers[3]: 'match' must be a non-empty string"},
        {R"({"answers": [{"match": "", "content": "x"}]})",
         "answers.json: answers[0]: 'match' must be a non-empty string"},
        {R"({"answers": [{"match": 7, "content": "x"}]})",
         "answers.json: answers[0]: 'match' must be a non-empty string"},
        {R"({"answers": [{"match": "a", "contents": "x"}]})",
         "answers.json: answers[0]: unknown key 'contents', did you mean 'content'?"},
        {R"({"answers": [{"match": "a", "content": "x", "reasonng": "y"}]})",
         "answers.json: answers[0]: unknown key 'reasonng', did you mean 'reasoning'?"},
        {R"({"answers": [{"match": "a"}]})",
         "answers.json: answers[0]: 'content' must be a string"},
        {R"({"answers": [{"match": "a", "content": null}]})",
         "answers.json: answers[0]: 'content' must be a string"},
        {R"({"answers": [{"match": "a", "content": "x", "reasoning": 1}]})",
         "answers.json: answers[0]: 'reasoning' must be a string"},
        {R"({"answers": [{"match": "a", "content": " \n "}]})",
         "answers.json: answers[0]: 'content' is only whitespace, which has no tokens to send "
         R"(("" is an empty reply))"},
        {R"({"answers": [{"match": "a", "content": "x", "finish_reason": "lenght"}]})",
         "answers.json: answers[0]: finish_reason 'lenght' is not known, did you mean 'length'?"},
        {R"({"answers": [{"match": "a", "content": "x", "finish_reason": "tool_calls"}]})",
         "answers.json: answers[0]: finish_reason 'tool_calls' is not known (expected one of: "
         "stop, length)"},
        {R"({"answers": [{"match": "a", "content": "x", "finish_reason": 1}]})",
         "answers.json: answers[0]: 'finish_reason' must be a string"},
        {R"({"answers": [{"match": "a", "content": "x", "comment": []}]})",
         "answers.json: answers[0]: 'comment' must be a string"},
        {R"({"answers": [{"match": "17", "content": "x"}, {"match": "17 × 23", "content": "y"}]})",
         "answers.json: answers[1]: never chosen: the 'match' of answers[0], which comes first, "
         "is part of this one's"},
        {"{\"answers\": [\n  {\"match\": \"a\",}\n]}",
         "answers.json:2:17: not valid JSON: syntax error while parsing object key - unexpected "
         "'}'; expected string literal"},
    }));
    CAPTURE(text);
    CHECK_THROWS_WITH(ParseMockAnswers(text, "answers.json"), message);
  }
  SECTION("a file that cannot be read") {
    CHECK_THROWS_WITH(LoadMockAnswers("/nonexistent/answers.json"),
                      "/nonexistent/answers.json: cannot read it: No such file or directory");
  }
}


// --- Scripted agent conversations --------------------------------------------------------------

// The native tool calls of a streamed reply, with the fragments each came in.
struct StreamedCalls {
  std::vector<json> fragments;            // every element of every delta.tool_calls, in order
  std::map<int64_t, json> calls;          // by index: {"id", "name", "arguments"} assembled
};

StreamedCalls ToolFragments(const Stream& s) {
  StreamedCalls out;
  for (const json& event : s.events) {
    if (event["choices"].empty()) continue;
    const json& delta = event["choices"][0]["delta"];
    if (!delta.contains("tool_calls")) continue;
    for (const json& fragment : delta["tool_calls"]) {
      out.fragments.push_back(fragment);
      json& call = out.calls[fragment["index"].get<int64_t>()];
      if (fragment.contains("id")) call["id"] = fragment["id"];
      if (fragment.contains("function") && fragment["function"].contains("name")) {
        call["name"] = fragment["function"]["name"];
      }
      call["arguments"] = call.value("arguments", "") +
                          fragment["function"]["arguments"].get<std::string>();
    }
  }
  return out;
}

constexpr const char* kScript = R"({"answers": [
  {"match": "the repository", "turns": [
    {"content": "Let me look.",
     "tool_calls": [{"name": "bash", "arguments": {"command": "ls -la"}}]},
    {"tool_calls": [{"name": "read_file", "arguments": {"path": "src/main.c"}},
                    {"name": "bash", "arguments": "{\"command\": \"make"}]},
    {"content": "done"}]},
  {"match": "tool result", "content": "plain rule"}]})";

// A conversation: the task, then `assistants` assistant turns each followed by a tool result.
json AgentChat(bool stream, int assistants, int max_tokens = 1000) {
  json body = ChatBody(stream, max_tokens);
  body["messages"] = json::array(
      {{{"role", "system"}, {"content", "You are an agent."}},
       {{"role", "user"}, {"content", "Fix the build in the repository."}}});
  for (int k = 0; k < assistants; ++k) {
    body["messages"].push_back({{"role", "assistant"}, {"content", nullptr}});
    body["messages"].push_back({{"role", "user"}, {"content", "tool result " + std::to_string(k)}});
  }
  return body;
}

TEST_CASE("mock_server: answer files script agent conversations with turns",
          "[mock_server][answers][agent]") {
  const std::vector<MockAnswer> answers = ParseMockAnswers(kScript, "script.json");
  REQUIRE(answers.size() == 2);
  REQUIRE(answers[0].turns.size() == 3);
  CHECK(answers[0].content.empty());
  CHECK(answers[0].turns[0].content == "Let me look.");
  REQUIRE(answers[0].turns[0].tool_calls.size() == 1);
  CHECK(answers[0].turns[0].tool_calls[0].name == "bash");
  CHECK(answers[0].turns[0].tool_calls[0].arguments == R"({"command":"ls -la"})");
  CHECK(answers[0].turns[1].tool_calls[1].arguments == R"({"command": "make)");  // verbatim
  CHECK(answers[0].turns[2].tool_calls.empty());
  // A scripted rule reads the first user message, the others the last one.
  CHECK(FindMockAnswer(answers, "Fix the repository", "tool result 0") == 0);
  CHECK(FindMockAnswer(answers, "Fix it", "tool result 0") == 1);
  CHECK(FindMockAnswer(answers, "Fix it", "the repository") == -1);
  CHECK(FindMockAnswer(answers, "the repository") == 0);  // one user message: both
  // Rules of different kinds read different messages, so neither shadows the other.
  CHECK(ParseMockAnswers(R"({"answers": [{"match": "a", "turns": [{"content": "x"}]},
                                         {"match": "ab", "content": "y"}]})",
                         "script.json")
            .size() == 2);
}

TEST_CASE("mock_server: scripted turns are read with exact errors",
          "[mock_server][answers][agent]") {
  auto [text, message] = GENERATE(table<std::string, std::string>({
      {R"({"answers": [{"match": "a", "turns": []}]})",
       R"(script.json: answers[0].turns: must be a non-empty list of {"content": ..., "tool_calls": [...]} turns)"},
      {R"({"answers": [{"match": "a", "turns": {}}]})",
       R"(script.json: answers[0].turns: must be a non-empty list of {"content": ..., "tool_calls": [...]} turns)"},
      {R"({"answers": [{"match": "a", "content": "x", "turns": [{"content": "y"}]}]})",
       "script.json: answers[0]: 'content' cannot be used with 'turns': give it to each turn"},
      {R"({"answers": [{"match": "a", "turn": [{"content": "y"}]}]})",
       "script.json: answers[0]: unknown key 'turn', did you mean 'turns'?"},
      {R"({"answers": [{"match": "a", "turns": [{"content": "x"}, 3]}]})",
       R"(script.json: answers[0].turns[1]: expected an object {"content": ..., "tool_calls": [...]})"},
      {R"({"answers": [{"match": "a", "turns": [{"comment": "nothing"}]}]})",
       "script.json: answers[0].turns[0]: a turn needs 'content' or 'tool_calls'"},
      {R"({"answers": [{"match": "a", "turns": [{"tool_call": []}]}]})",
       "script.json: answers[0].turns[0]: unknown key 'tool_call', did you mean 'tool_calls'?"},
      {R"({"answers": [{"match": "a", "turns": [{"tool_calls": []}]}]})",
       R"(script.json: answers[0].turns[0]: 'tool_calls' must be a non-empty list of {"name": ..., "arguments": {...}} calls)"},
      {R"({"answers": [{"match": "a", "turns": [{"content": "x", "finish_reason": "tool_call"}]}]})",
       "script.json: answers[0].turns[0]: finish_reason 'tool_call' is not known, did you mean "
       "'tool_calls'?"},
      {R"({"answers": [{"match": "a", "turns": [{"content": "x"}, {"tool_calls": [{"name": "bash", "arguments": {}}, {"arguments": {}}]}]}]})",
       "script.json: answers[0].turns[1].tool_calls[1]: 'name' must be a non-empty string"},
      {R"({"answers": [{"match": "a", "turns": [{"tool_calls": [{"name": "bash", "argument": {}}]}]}]})",
       "script.json: answers[0].turns[0].tool_calls[0]: unknown key 'argument', did you mean "
       "'arguments'?"},
      {R"({"answers": [{"match": "a", "turns": [{"tool_calls": [{"name": "bash", "arguments": [1]}]}]}]})",
       "script.json: answers[0].turns[0].tool_calls[0]: 'arguments' must be an object, or a "
       "string sent verbatim"},
      {R"({"answers": [{"match": "a", "turns": [{"tool_calls": [{"name": "bash", "arguments": ""}]}]}]})",
       "script.json: answers[0].turns[0].tool_calls[0]: 'arguments' is empty, which has no tokens "
       "to send"},
      {R"({"answers": [{"match": "a", "turns": [{"content": "x"}]}, {"match": "ab", "turns": [{"content": "y"}]}]})",
       "script.json: answers[1]: never chosen: the 'match' of answers[0], which comes first, is "
       "part of this one's"},
  }));
  CAPTURE(text);
  CHECK_THROWS_WITH(ParseMockAnswers(text, "script.json"), message);
}

TEST_CASE("mock_server: a scripted turn streams its tool calls in fragments, chosen by turn",
          "[mock_server][answers][agent]") {
  MockServer server(AnswerConfig(ParseMockAnswers(kScript, "script.json")));
  server.Start();
  TestClient client(server.port());

  SECTION("turn 0: content, then one call in pieces") {
    Stream s = Decode(client.Exchange(Chat(AgentChat(true, 0))));
    CHECK(s.content == "Let me look.");
    CHECK(s.finish_reason == "tool_calls");
    StreamedCalls calls = ToolFragments(s);
    REQUIRE(calls.calls.size() == 1);
    CHECK(calls.calls[0] == json{{"id", "call_0_0"}, {"name", "bash"},
                                 {"arguments", R"({"command":"ls -la"})"}});
    // The first fragment brings id, type and name with empty arguments; the arguments follow in
    // one piece per token (tokens_per_event 1).
    const int64_t argument_tokens = MockTokenCount(R"({"command":"ls -la"})");
    REQUIRE(calls.fragments.size() == 1 + static_cast<size_t>(argument_tokens));
    CHECK(calls.fragments[0] == json{{"index", 0}, {"id", "call_0_0"}, {"type", "function"},
                                     {"function", {{"name", "bash"}, {"arguments", ""}}}});
    CHECK(calls.fragments[1] == json{{"index", 0}, {"function", {{"arguments", "{"}}}});
    CHECK_FALSE(calls.fragments[2].contains("id"));
    // Usage counts the arguments text by the mock tokenizer.
    CHECK(s.usage["completion_tokens"] ==
          MockTokenCount("Let me look.") + MockTokenCount(R"({"command":"ls -la"})"));
  }
  SECTION("turn 1 (matched on the first user message): two calls, one with broken arguments") {
    Stream s = Decode(client.Exchange(Chat(AgentChat(true, 1))));
    CHECK(s.content.empty());
    StreamedCalls calls = ToolFragments(s);
    REQUIRE(calls.calls.size() == 2);
    CHECK(calls.calls[0] == json{{"id", "call_1_0"}, {"name", "read_file"},
                                 {"arguments", R"({"path":"src/main.c"})"}});
    CHECK(calls.calls[1] == json{{"id", "call_1_1"}, {"name", "bash"},
                                 {"arguments", R"({"command": "make)"}});
    CHECK(s.finish_reason == "tool_calls");
  }
  SECTION("turn 2, and past the end of the script the last turn again") {
    for (int assistants : {2, 3, 7}) {
      Stream s = Decode(client.Exchange(Chat(AgentChat(true, assistants))));
      CHECK(s.content == "done");
      CHECK(s.finish_reason == "stop");
      CHECK(ToolFragments(s).calls.empty());
    }
  }
  SECTION("max_tokens cuts the arguments, with finish_reason length") {
    // 4 content tokens, then 3 of the arguments: `{`, `"`, `command`.
    Stream s = Decode(client.Exchange(Chat(AgentChat(true, 0, 7))));
    CHECK(s.finish_reason == "length");
    StreamedCalls calls = ToolFragments(s);
    REQUIRE(calls.calls.size() == 1);
    CHECK(calls.calls[0]["arguments"] == "{\"command");
    CHECK(s.usage["completion_tokens"] == 7);
    // Cut before the arguments: no call at all.
    Stream none = Decode(client.Exchange(Chat(AgentChat(true, 0, 4))));
    CHECK(none.finish_reason == "length");
    CHECK(ToolFragments(none).calls.empty());
  }
  SECTION("not streamed: message.tool_calls, and content null when the turn has none") {
    HttpResponse r = client.Exchange(Chat(AgentChat(false, 1)));
    REQUIRE(r.status == 200);
    json doc = json::parse(r.body);
    const json& choice = doc["choices"][0];
    CHECK(choice["finish_reason"] == "tool_calls");
    CHECK(choice["message"]["content"].is_null());
    CHECK(choice["message"]["tool_calls"] ==
          json::array({{{"index", 0}, {"id", "call_1_0"}, {"type", "function"},
                        {"function",
                         {{"name", "read_file"}, {"arguments", R"({"path":"src/main.c"})"}}}},
                       {{"index", 1}, {"id", "call_1_1"}, {"type", "function"},
                        {"function", {{"name", "bash"}, {"arguments", R"({"command": "make)"}}}}}));
    CHECK(doc["usage"]["completion_tokens"] ==
          MockTokenCount(R"({"path":"src/main.c"})") + MockTokenCount(R"({"command": "make)"));
  }
  SECTION("a plain rule still reads the last user message") {
    json body = AgentChat(true, 0);
    body["messages"][1]["content"] = "no script here";
    body["messages"].push_back({{"role", "user"}, {"content", "tool result 9"}});
    CHECK(Decode(client.Exchange(Chat(body))).content == "plain rule");
  }
}

}  // namespace
}  // namespace evalrun
