#include "plugins/http_client.h"

#include <sys/socket.h>
#include <netinet/in.h>
#include <unistd.h>

#include <thread>

#include "tests/support/catch.h"

#include "plugins/mock_server.h"

using namespace evalrun;

namespace {

// Collects what the transport hands a sink.
struct RecordingSink : StreamSink {
  TimePoint sent{};
  int status = 0;
  std::string content_type;
  std::string body;
  int chunks = 0;
  TimePoint first_bytes{};
  TransferResult result;
  bool done = false;
  void OnSent(TimePoint t) override { sent = t; }
  void OnResponseStart(int s, std::string_view type) override {
    status = s;
    content_type = type;
  }
  bool OnBytes(std::string_view bytes, TimePoint arrived) override {
    if (chunks++ == 0) first_bytes = arrived;
    body.append(bytes);
    return true;
  }
  void OnDone(const TransferResult& r) override {
    result = r;
    done = true;
  }
};

HttpRequest Chat(const std::string& base, int max_tokens) {
  HttpRequest r;
  r.url = base + "/v1/chat/completions";
  r.body = R"({"messages":[{"role":"user","content":"hi"}],"stream":true,"ignore_eos":true,"max_tokens":)" +
           std::to_string(max_tokens) + "}";
  return r;
}

// A port with nothing listening: bind, read the port, close.
int UnusedPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

}  // namespace

TEST_CASE("http: Fetch returns status, body and content type: failures in words", "[http]") {
  MockServer mock(MockConfig{});
  mock.Start();
  HttpRequest get;
  get.method = "GET";
  get.url = mock.base_url() + "/health";
  const HttpResponse ok = Fetch(get);
  CHECK(ok.status == 200);
  CHECK(ok.error.empty());
  CHECK(ok.body.find("ok") != std::string::npos);
  CHECK(ok.content_type.rfind("application/json", 0) == 0);

  get.url = "http://127.0.0.1:" + std::to_string(UnusedPort()) + "/health";
  const HttpResponse refused = Fetch(get);
  CHECK(refused.status == 0);
  CHECK_THAT(refused.error, Catch::Contains("Failed to connect"));
}

TEST_CASE("http: many concurrent streams on one loop, stamped on arrival", "[http]") {
  MockConfig config;
  config.ttft_ms = 30;
  config.decode_tps = 200;
  MockServer mock(config);
  mock.Start();
  StreamingClient client;
  std::vector<RecordingSink> sinks(32);
  for (auto& sink : sinks) client.Add(Chat(mock.base_url(), 10), &sink);
  client.Run();
  for (auto& sink : sinks) {
    CHECK(sink.done);
    CHECK(sink.result.status == TransferStatus::kCompleted);
    CHECK(sink.status == 200);
    CHECK(sink.content_type == "text/event-stream");
    CHECK(sink.body.find("data: [DONE]") != std::string::npos);
    // First bytes (the response head's body) come no earlier than the mock's TTFT.
    CHECK(NanosToMs(NanosBetween(sink.sent, sink.first_bytes)) >= 29.0);
  }
  CHECK(client.active() == 0);
}

TEST_CASE("http: kept-alive connections are reused across rounds", "[http]") {
  MockConfig config;
  config.ttft_ms = 1;
  config.decode_tps = 0;
  MockServer mock(config);
  mock.Start();
  StreamingClient client;
  RecordingSink first, second;
  client.Add(Chat(mock.base_url(), 5), &first);
  client.Run();
  client.Add(Chat(mock.base_url(), 5), &second);
  client.Run();
  CHECK_FALSE(first.result.reused_connection);
  CHECK(second.result.reused_connection);
}

TEST_CASE("http: refused, idle, total and cancelled transfers end with their status",
          "[http]") {
  SECTION("refused") {
    StreamingClient client;
    RecordingSink sink;
    client.Add(Chat("http://127.0.0.1:" + std::to_string(UnusedPort()), 5), &sink);
    client.Run();
    CHECK(sink.result.status == TransferStatus::kConnectFailed);
    CHECK_FALSE(sink.result.message.empty());
  }
  MockConfig config;
  config.ttft_ms = 5;
  config.decode_tps = 100;
  config.fault = MockFault::kStall;
  config.fault_after_events = 2;
  config.stall_s = 3;
  MockServer mock(config);
  mock.Start();
  SECTION("idle gap") {
    StreamingClient client;
    RecordingSink sink;
    HttpRequest r = Chat(mock.base_url(), 20);
    r.idle_timeout_s = 0.3;
    client.Add(r, &sink);
    const TimePoint t0 = Clock::now();
    client.Run();
    CHECK(sink.result.status == TransferStatus::kIdleTimeout);
    CHECK(sink.result.message == "no bytes for 0.3 s (idle timeout)");
    CHECK(NanosToSeconds(NanosBetween(t0, Clock::now())) < 2.0);
  }
  SECTION("total") {
    StreamingClient client;
    RecordingSink sink;
    HttpRequest r = Chat(mock.base_url(), 20);
    r.total_timeout_s = 0.4;
    client.Add(r, &sink);
    client.Run();
    CHECK(sink.result.status == TransferStatus::kTotalTimeout);
    CHECK(sink.result.message == "no complete response within 0.4 s (total timeout)");
  }
  SECTION("cancelled from another thread") {
    StreamingClient client;
    RecordingSink sink;
    client.Add(Chat(mock.base_url(), 20), &sink);
    std::thread canceller([&client] {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      client.CancelAll();
    });
    client.Run();
    canceller.join();
    CHECK(sink.result.status == TransferStatus::kCancelled);
  }
}
