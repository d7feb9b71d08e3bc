#include "plugins/http_client.h"

#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <deque>
#include <vector>

#include "core/error.h"
#include "core/limits.h"
#include "plugins/curl_handles.h"

namespace evalrun {

namespace curl {
void EnsureGlobalInit() {
  static const bool initialised = [] {
    curl_global_init(CURL_GLOBAL_DEFAULT);
    return true;
  }();
  (void)initialised;
}
}  // namespace curl

namespace {

long Millis(double seconds) { return static_cast<long>(seconds * 1000.0 + 0.5); }

// Options every evalrun request shares: HTTP/1.1 with keep-alive, no signals (we run threads),
// no Nagle, no "Expect: 100-continue" round trip before large prompt bodies.
curl::Slist ApplyCommonOptions(CURL* easy, const HttpRequest& request) {
  curl_easy_setopt(easy, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy, CURLOPT_TCP_NODELAY, 1L);
  curl_easy_setopt(easy, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_1_1));
  curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, Millis(request.connect_timeout_s));
  curl_easy_setopt(easy, CURLOPT_PROXY, "");  // a benchmark never goes through a proxy
  if (request.method == "GET") {
    curl_easy_setopt(easy, CURLOPT_HTTPGET, 1L);
  } else {
    curl_easy_setopt(easy, CURLOPT_POST, 1L);
    curl_easy_setopt(easy, CURLOPT_POSTFIELDS, request.body.data());
    curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(request.body.size()));
    if (request.method != "POST") {
      curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, request.method.c_str());
    }
  }
  curl_slist* list = curl_slist_append(nullptr, "Expect:");
  if (!request.body.empty()) list = curl_slist_append(list, "Content-Type: application/json");
  for (const auto& h : request.headers) list = curl_slist_append(list, h.c_str());
  curl_easy_setopt(easy, CURLOPT_HTTPHEADER, list);
  return curl::Slist(list);
}

std::string ContentType(CURL* easy) {
  char* type = nullptr;
  curl_easy_getinfo(easy, CURLINFO_CONTENT_TYPE, &type);
  return type ? type : "";
}

int ResponseCode(CURL* easy) {
  long code = 0;
  curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &code);
  return static_cast<int>(code);
}

size_t AppendBody(char* data, size_t size, size_t count, void* user) {
  auto& body = *static_cast<std::string*>(user);
  // A body past the cap (docs/limits.md) ends the transfer (curl: write error) instead of
  // growing without bound.
  if (body.size() + size * count > limits::kResponseBodyBytes) return 0;
  body.append(data, size * count);
  return size * count;
}

TransferStatus StatusFor(CURLcode code) {
  switch (code) {
    case CURLE_OK: return TransferStatus::kCompleted;
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_OPERATION_TIMEDOUT:  // only the connect timeout is curl's; the rest are ours
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL: return TransferStatus::kConnectFailed;
    case CURLE_WRITE_ERROR:
    case CURLE_ABORTED_BY_CALLBACK: return TransferStatus::kCancelled;
    default: return TransferStatus::kDropped;
  }
}

}  // namespace

HttpResponse Fetch(const HttpRequest& request) {
  curl::EnsureGlobalInit();
  HttpResponse response;
  curl::Easy easy(curl_easy_init());
  if (!easy) {
    response.error = "curl_easy_init failed";
    return response;
  }
  char error_buffer[CURL_ERROR_SIZE] = {};
  curl::Slist headers = ApplyCommonOptions(easy.get(), request);
  curl_easy_setopt(easy.get(), CURLOPT_TIMEOUT_MS, Millis(request.total_timeout_s));
  // The idle gap, as the streaming client enforces it: under 1 byte/s for that many seconds
  // (whole seconds, curl's unit), so a silent server costs idle_timeout_s, not the total.
  curl_easy_setopt(easy.get(), CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(easy.get(), CURLOPT_LOW_SPEED_TIME,
                   static_cast<long>(std::max(1.0, std::ceil(request.idle_timeout_s))));
  curl_easy_setopt(easy.get(), CURLOPT_WRITEFUNCTION, AppendBody);
  curl_easy_setopt(easy.get(), CURLOPT_WRITEDATA, &response.body);
  curl_easy_setopt(easy.get(), CURLOPT_ERRORBUFFER, error_buffer);
  const CURLcode code = curl_easy_perform(easy.get());
  response.status = ResponseCode(easy.get());
  response.content_type = ContentType(easy.get());
  if (code != CURLE_OK) {
    response.error = error_buffer[0] ? error_buffer : curl_easy_strerror(code);
    if (response.status == 0) response.body.clear();
  }
  return response;
}

// ---------------------------------------------------------------------------------------------
// StreamingClient: curl's multi_socket API driven by epoll. curl tells us which sockets to watch
// (socket callback) and when to call it back (timer callback); we stamp the clock in the write
// callback, the moment bytes are handed over, before the sink parses anything.

struct StreamingClient::Impl {
  struct Transfer {
    HttpRequest request;
    StreamSink* sink = nullptr;
    curl::Easy easy;
    curl::Slist headers;
    TimePoint t_queued{};
    TimePoint last_bytes{};
    bool sent = false;
    bool response_started = false;
    bool aborted_by_sink = false;
    char error_buffer[CURL_ERROR_SIZE] = {};
  };

  curl::Multi multi;
  int epoll_fd = -1;
  bool curl_timer_set = false;  // curl asked to be called back at curl_deadline
  TimePoint curl_deadline{};
  std::deque<std::unique_ptr<Transfer>> pending;
  std::vector<std::unique_ptr<Transfer>> running;
  std::vector<curl::Easy> idle_handles;  // reused easy handles (their DNS/connection hints stay)
  std::atomic<bool> cancel{false};

  explicit Impl(int max_connections) {
    curl::EnsureGlobalInit();
    multi.reset(curl_multi_init());
    epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    if (!multi || epoll_fd < 0) throw Error("cannot start the HTTP event loop", ExitCode::kSomeFailed);
    curl_multi_setopt(multi.get(), CURLMOPT_SOCKETFUNCTION, &Impl::OnSocket);
    curl_multi_setopt(multi.get(), CURLMOPT_SOCKETDATA, this);
    curl_multi_setopt(multi.get(), CURLMOPT_TIMERFUNCTION, &Impl::OnTimer);
    curl_multi_setopt(multi.get(), CURLMOPT_TIMERDATA, this);
    curl_multi_setopt(multi.get(), CURLMOPT_MAXCONNECTS, static_cast<long>(max_connections));
  }

  ~Impl() {
    for (auto& t : running) curl_multi_remove_handle(multi.get(), t->easy.get());
    running.clear();
    if (epoll_fd >= 0) close(epoll_fd);
  }

  static int OnSocket(CURL*, curl_socket_t fd, int what, void* user, void* socket_data) {
    auto* self = static_cast<Impl*>(user);
    if (what == CURL_POLL_REMOVE) {
      epoll_ctl(self->epoll_fd, EPOLL_CTL_DEL, fd, nullptr);
      curl_multi_assign(self->multi.get(), fd, nullptr);
      return 0;
    }
    epoll_event ev{};
    ev.data.fd = fd;
    if (what == CURL_POLL_IN || what == CURL_POLL_INOUT) ev.events |= EPOLLIN;
    if (what == CURL_POLL_OUT || what == CURL_POLL_INOUT) ev.events |= EPOLLOUT;
    // socket_data marks a socket we already registered (curl hands it back on every call).
    const int op = socket_data ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
    if (epoll_ctl(self->epoll_fd, op, fd, &ev) != 0 && errno == EEXIST) {
      epoll_ctl(self->epoll_fd, EPOLL_CTL_MOD, fd, &ev);
    }
    if (!socket_data) curl_multi_assign(self->multi.get(), fd, self);
    return 0;
  }

  static int OnTimer(CURLM*, long timeout_ms, void* user) {
    auto* self = static_cast<Impl*>(user);
    self->curl_timer_set = timeout_ms >= 0;
    self->curl_deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    return 0;
  }

  static size_t OnWrite(char* data, size_t size, size_t count, void* user) {
    const TimePoint arrived = Clock::now();  // first thing: the arrival stamp
    auto* t = static_cast<Transfer*>(user);
    t->last_bytes = arrived;
    if (!t->response_started) {
      t->response_started = true;
      const std::string type = ContentType(t->easy.get());
      t->sink->OnResponseStart(ResponseCode(t->easy.get()), type);
    }
    if (!t->sink->OnBytes(std::string_view(data, size * count), arrived)) {
      t->aborted_by_sink = true;
      return 0;  // makes curl end the transfer with CURLE_WRITE_ERROR
    }
    return size * count;
  }

  // CURLOPT_PREREQFUNCTION: the connection is ready and the request is about to be written.
  static int OnPrerequest(void* user, char*, char*, int, int) {
    auto* t = static_cast<Transfer*>(user);
    if (!t->sent) {
      t->sent = true;
      t->sink->OnSent(Clock::now());
    }
    return CURL_PREREQFUNC_OK;
  }

  curl::Easy TakeHandle() {
    if (!idle_handles.empty()) {
      curl::Easy h = std::move(idle_handles.back());
      idle_handles.pop_back();
      curl_easy_reset(h.get());
      return h;
    }
    return curl::Easy(curl_easy_init());
  }

  void StartPending() {
    while (!pending.empty()) {
      std::unique_ptr<Transfer> t = std::move(pending.front());
      pending.pop_front();
      t->easy = TakeHandle();
      CURL* easy = t->easy.get();
      t->headers = ApplyCommonOptions(easy, t->request);
      curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &Impl::OnWrite);
      curl_easy_setopt(easy, CURLOPT_WRITEDATA, t.get());
      curl_easy_setopt(easy, CURLOPT_PRIVATE, t.get());
      curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, t->error_buffer);
      curl_easy_setopt(easy, CURLOPT_BUFFERSIZE, 256L * 1024L);
      curl_easy_setopt(easy, CURLOPT_PREREQFUNCTION, &Impl::OnPrerequest);
      curl_easy_setopt(easy, CURLOPT_PREREQDATA, t.get());
      t->t_queued = Clock::now();
      t->last_bytes = t->t_queued;
      curl_multi_add_handle(multi.get(), easy);
      running.push_back(std::move(t));
    }
  }

  // Removes `t` from the loop and reports how it ended. Safe to call with a new Add() pending.
  void Finish(Transfer* t, TransferStatus status, std::string message) {
    curl_multi_remove_handle(multi.get(), t->easy.get());
    TransferResult result;
    result.status = status;
    result.http_status = ResponseCode(t->easy.get());
    result.content_type = ContentType(t->easy.get());
    result.message = std::move(message);
    result.t_end = Clock::now();
    result.t_queued = t->t_queued;
    if (!t->sent) {
      t->sent = true;
      t->sink->OnSent(t->t_queued);
    }
    long new_connections = 0;
    curl_easy_getinfo(t->easy.get(), CURLINFO_NUM_CONNECTS, &new_connections);
    result.reused_connection = status == TransferStatus::kCompleted && new_connections == 0;
    if (!t->response_started && result.http_status != 0) {
      t->response_started = true;
      t->sink->OnResponseStart(result.http_status, result.content_type);
    }
    auto it = std::find_if(running.begin(), running.end(),
                           [t](const std::unique_ptr<Transfer>& p) { return p.get() == t; });
    std::unique_ptr<Transfer> owned = std::move(*it);
    running.erase(it);
    StreamSink* sink = owned->sink;
    idle_handles.push_back(std::move(owned->easy));
    owned.reset();
    sink->OnDone(result);  // last: the sink may Add() a follow-up request
  }

  void DrainMessages() {
    int left = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi.get(), &left)) {
      if (msg->msg != CURLMSG_DONE) continue;
      Transfer* t = nullptr;
      curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, reinterpret_cast<char**>(&t));
      const CURLcode code = msg->data.result;
      TransferStatus status = StatusFor(code);
      if (t->aborted_by_sink) status = TransferStatus::kCancelled;
      std::string message;
      if (code != CURLE_OK) {
        message = t->error_buffer[0] ? t->error_buffer : curl_easy_strerror(code);
      }
      Finish(t, status, std::move(message));
    }
  }

  // Our own idle-gap and total deadlines (curl's low-speed limit has one-second resolution and
  // cannot tell the two apart).
  void CheckDeadlines(TimePoint now) {
    for (size_t i = 0; i < running.size();) {
      Transfer* t = running[i].get();
      const double idle_s = NanosToSeconds(NanosBetween(t->last_bytes, now));
      const double total_s = NanosToSeconds(NanosBetween(t->t_queued, now));
      if (cancel.load(std::memory_order_relaxed)) {
        Finish(t, TransferStatus::kCancelled, "cancelled");
      } else if (total_s > t->request.total_timeout_s) {
        char text[96];
        std::snprintf(text, sizeof text, "no complete response within %.1f s (total timeout)",
                      t->request.total_timeout_s);
        Finish(t, TransferStatus::kTotalTimeout, text);
      } else if (idle_s > t->request.idle_timeout_s) {
        char text[96];
        std::snprintf(text, sizeof text, "no bytes for %.1f s (idle timeout)",
                      t->request.idle_timeout_s);
        Finish(t, TransferStatus::kIdleTimeout, text);
      } else {
        ++i;
        continue;
      }
      // Finish erased running[i]; the next transfer is now at i.
    }
  }

  void Run() {
    int still_running = 0;
    std::array<epoll_event, 256> events{};
    TimePoint next_deadline_check = Clock::now();
    constexpr auto kDeadlineCheckEvery = std::chrono::milliseconds(20);
    while (!pending.empty() || !running.empty()) {
      StartPending();
      if (running.empty()) continue;
      // Wait for sockets or curl's timer, at most until the next deadline check.
      long wait_ms = 20;
      if (curl_timer_set) {
        const int64_t until = NanosBetween(Clock::now(), curl_deadline);
        wait_ms = std::clamp<long>(static_cast<long>((until + 999'999) / 1'000'000), 0, wait_ms);
      }
      const int n = epoll_wait(epoll_fd, events.data(), static_cast<int>(events.size()),
                               static_cast<int>(wait_ms));
      if (n < 0 && errno != EINTR) {
        throw Error(std::string("epoll_wait: ") + std::strerror(errno), ExitCode::kSomeFailed);
      }
      for (int i = 0; i < n; ++i) {
        int mask = 0;
        if (events[i].events & EPOLLIN) mask |= CURL_CSELECT_IN;
        if (events[i].events & EPOLLOUT) mask |= CURL_CSELECT_OUT;
        if (events[i].events & (EPOLLERR | EPOLLHUP)) mask |= CURL_CSELECT_ERR;
        curl_multi_socket_action(multi.get(), events[i].data.fd, mask, &still_running);
      }
      TimePoint now = Clock::now();
      if (curl_timer_set && now >= curl_deadline) {
        curl_timer_set = false;
        curl_multi_socket_action(multi.get(), CURL_SOCKET_TIMEOUT, 0, &still_running);
      }
      DrainMessages();
      now = Clock::now();
      if (now >= next_deadline_check || cancel.load(std::memory_order_relaxed)) {
        CheckDeadlines(now);
        next_deadline_check = now + kDeadlineCheckEvery;
      }
    }
    cancel.store(false);
  }
};

StreamingClient::StreamingClient(int max_connections)
    : impl_(std::make_unique<Impl>(max_connections)) {}
StreamingClient::~StreamingClient() = default;

void StreamingClient::Add(HttpRequest request, StreamSink* sink) {
  auto t = std::make_unique<Impl::Transfer>();
  t->request = std::move(request);
  t->sink = sink;
  impl_->pending.push_back(std::move(t));
}

void StreamingClient::Run() { impl_->Run(); }
void StreamingClient::CancelAll() { impl_->cancel.store(true); }
int64_t StreamingClient::active() const {
  return static_cast<int64_t>(impl_->running.size() + impl_->pending.size());
}

}  // namespace evalrun
