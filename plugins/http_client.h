#pragma once
// HTTP over libcurl: a blocking Fetch for introspection calls, and StreamingClient, which runs
// many concurrent streaming requests on one event loop (curl multi + epoll), handing every run of
// received bytes to its sink with the steady-clock time it arrived, before any parsing.
// This header does not include curl; only http_client.cpp does.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/clock.h"
#include "plugins/http_types.h"

namespace evalrun {

// Blocking request (GET when body is empty and method is "GET"). Never throws: transport
// failures come back in HttpResponse::error with status 0.
HttpResponse Fetch(const HttpRequest& request);

// How a streamed transfer ended, as seen by the transport.
enum class TransferStatus {
  kCompleted,      // the server finished the response
  kConnectFailed,  // refused, unresolvable or connect timeout
  kDropped,        // the connection broke before the response was complete
  kIdleTimeout,    // no bytes for longer than HttpRequest::idle_timeout_s
  kTotalTimeout,   // longer than HttpRequest::total_timeout_s
  kCancelled,      // StreamingClient::CancelAll
};

struct TransferResult {
  TransferStatus status = TransferStatus::kCompleted;
  int http_status = 0;
  std::string content_type;
  std::string message;  // curl's words for a failure, "" on success
  TimePoint t_end{};    // when the transfer ended, steady clock
  bool reused_connection = false;  // served over a kept-alive connection (no new connect)
  TimePoint t_queued{};  // when the transfer entered the loop (t_send minus this = client queueing)
};

// Receives one transfer's events. Called on the thread that runs StreamingClient::Run, never
// concurrently for the same sink; must not block.
class StreamSink {
 public:
  virtual ~StreamSink() = default;
  // Once, before anything else: the moment the request goes on the wire (curl's pre-request
  // callback, on a connected or reused connection), so connection set-up and the loop's own
  // queueing are not counted as the server's time. A transfer that never got that far (refused
  // connection) reports the time it was queued, just before OnDone.
  virtual void OnSent(TimePoint t_send) = 0;
  // Response status and content type, once, before any body bytes.
  virtual void OnResponseStart(int http_status, std::string_view content_type) = 0;
  // A run of body bytes and the time it arrived (taken before this call). The view is valid only
  // during the call. Return false to abort the transfer (it then ends as kCancelled).
  virtual bool OnBytes(std::string_view bytes, TimePoint arrived) = 0;
  // Once, last.
  virtual void OnDone(const TransferResult& result) = 0;
};

class StreamingClient {
 public:
  // max_connections: connection cache size, so kept-alive connections are reused across rounds.
  explicit StreamingClient(int max_connections = 1024);
  ~StreamingClient();
  StreamingClient(const StreamingClient&) = delete;
  StreamingClient& operator=(const StreamingClient&) = delete;

  // Queues a request; it is handed to the transport (StreamSink::OnSent) at the next turn of
  // Run(). `sink` must outlive the transfer. May be called from OnDone to keep a pipeline full,
  // never from OnBytes.
  void Add(HttpRequest request, StreamSink* sink);
  // Runs the event loop until every queued transfer has ended.
  void Run();
  // Ends every running transfer as kCancelled at the next loop turn. Thread-safe.
  void CancelAll();
  int64_t active() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace evalrun
