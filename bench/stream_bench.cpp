// stream_bench: what the measuring client costs and how exact it is, against evalrun's own mock
// server running in a child process (so the client's CPU time and memory are its own).
//
//   build/bench/stream_bench [--quick]
//
// 1. Client CPU per SSE event: the mock streams with no pacing; the event-loop thread's CPU time
//    (CLOCK_THREAD_CPUTIME_ID) divided by the events read. Goal: <= 2 us/event.
// 2. 512 concurrent streams on one event loop: peak resident memory of this process. Goal:
//    < 100 MB.
// 3. Timing error versus the mock's configured pacing (TTFT 200 ms, 50 tokens/s) at concurrency
//    1, 8, 64 and 256, three rounds each: median and worst deviation of ttft_ms and decode_tps
//    per request.
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "core/metrics.h"
#include "core/stats.h"
#include "plugins/mock_server.h"
#include "plugins/openai_backend.h"

using namespace evalrun;

namespace {

// Starts a mock server in a child process; returns its pid and port.
pid_t StartMock(const MockConfig& config, int* port) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    MockServer server(config);
    server.Start();
    const int p = server.port();
    (void)!write(fds[1], &p, sizeof p);
    close(fds[1]);
    pause();  // until the parent kills us
    _exit(0);
  }
  close(fds[1]);
  if (read(fds[0], port, sizeof *port) != sizeof *port) *port = 0;
  close(fds[0]);
  return pid;
}

void StopMock(pid_t pid) {
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

long PeakRssKb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

ServerInfo MockInfo(int port) {
  ServerInfo s;
  s.kind = ServerKind::kMock;
  s.base_url = "http://127.0.0.1:" + std::to_string(port);
  s.understands_ignore_eos = true;
  return s;
}

// Runs `streams` concurrent requests of `max_tokens` tokens; returns the records.
std::vector<RequestRecord> RunStreams(const ServerInfo& server, int streams, int64_t max_tokens,
                                      double* client_cpu_s) {
  StreamingClient client(streams + 16);
  std::vector<std::unique_ptr<RequestRecord>> records;
  std::vector<std::unique_ptr<ChatStreamReader>> readers;
  for (int i = 0; i < streams; ++i) {
    ChatRequest chat;
    chat.messages = nlohmann::json::array(
        {{{"role", "user"}, {"content", "bench request " + std::to_string(i)}}});
    chat.max_tokens = max_tokens;
    chat.ignore_eos = true;
    auto record = std::make_unique<RequestRecord>();
    record->max_tokens = max_tokens;
    auto reader = std::make_unique<ChatStreamReader>(*record);
    client.Add(MakeChatHttpRequest(server.base_url, BuildChatBody(chat, server), 60, 600),
               reader.get());
    records.push_back(std::move(record));
    readers.push_back(std::move(reader));
  }
  const double cpu0 = ThreadCpuSeconds();
  client.Run();
  if (client_cpu_s) *client_cpu_s = ThreadCpuSeconds() - cpu0;
  std::vector<RequestRecord> out;
  for (auto& r : records) out.push_back(std::move(*r));
  return out;
}

void EventCost(bool quick) {
  MockConfig config;
  config.ttft_ms = 0;
  config.decode_tps = 0;  // no pacing: as fast as the socket takes it
  config.timings = false;
  int port = 0;
  const pid_t pid = StartMock(config, &port);
  const ServerInfo server = MockInfo(port);
  std::printf("## 1. Client CPU per SSE event (mock with pacing off, child process)\n\n");
  std::printf("| streams | events | client CPU s | wall s | us CPU/event | events/s (wall) |\n");
  std::printf("|---:|---:|---:|---:|---:|---:|\n");
  for (int streams : {1, 4, 16}) {
    const int64_t tokens = (quick ? 100000 : 400000) / streams;
    double cpu = 0;
    const TimePoint t0 = Clock::now();
    const auto records = RunStreams(server, streams, tokens, &cpu);
    const double wall = NanosToSeconds(NanosBetween(t0, Clock::now()));
    int64_t events = 0, errors = 0;
    for (const auto& r : records) {
      events += r.events;
      errors += r.ok() ? 0 : 1;
    }
    std::printf("| %d | %lld | %.3f | %.3f | %.3f | %.0f |%s\n", streams,
                static_cast<long long>(events), cpu, wall, cpu / static_cast<double>(events) * 1e6,
                static_cast<double>(events) / wall, errors ? " errors!" : "");
  }
  StopMock(pid);
}

void ManyStreams(int streams) {
  MockConfig config;
  config.ttft_ms = 100;
  config.decode_tps = 50;
  config.timings = false;
  int port = 0;
  const pid_t pid = StartMock(config, &port);
  const ServerInfo server = MockInfo(port);
  const long rss_before = PeakRssKb();
  double cpu = 0;
  const auto records = RunStreams(server, streams, 64, &cpu);
  int64_t ok = 0;
  for (const auto& r : records) ok += r.ok() ? 1 : 0;
  std::printf("\n## 2. %d concurrent streams on one event loop (50 t/s, 64 tokens each)\n\n",
              streams);
  std::printf("ok %lld/%d, peak RSS of the process %.1f MB (peak before these streams: %.1f MB), "
              "client CPU %.3f s\n",
              static_cast<long long>(ok), streams, static_cast<double>(PeakRssKb()) / 1024.0,
              static_cast<double>(rss_before) / 1024.0, cpu);
  StopMock(pid);
}

void TimingError(bool quick) {
  MockConfig config;
  config.ttft_ms = 200;
  config.decode_tps = 50;
  config.timings = false;
  int port = 0;
  const pid_t pid = StartMock(config, &port);
  const ServerInfo server = MockInfo(port);
  std::printf("\n## 3. Timing error versus the mock's pacing (TTFT 200 ms, 50 tokens/s, %d tokens)\n\n",
              quick ? 32 : 64);
  std::printf("| concurrency | requests | ttft_ms median | ttft error median / max (ms) | "
              "decode_tps median | decode error median / max (%%) |\n");
  std::printf("|---:|---:|---:|---:|---:|---:|\n");
  for (int conc : {1, 8, 64, 256}) {
    // Three rounds per level (the first opens the connections: t_send is taken when the request
    // goes on the wire, so that is not counted either way).
    std::vector<RequestRecord> records;
    for (int round = 0; round < 3; ++round) {
      auto more = RunStreams(server, conc, quick ? 32 : 64, nullptr);
      records.insert(records.end(), std::make_move_iterator(more.begin()),
                     std::make_move_iterator(more.end()));
    }
    std::vector<double> ttft, ttft_err, decode, decode_err;
    for (const auto& r : records) {
      if (!r.ok()) continue;
      const RequestMetrics m = ComputeMetrics(r);
      if (!m.ttft_ms || !m.decode_tps) continue;
      ttft.push_back(*m.ttft_ms);
      ttft_err.push_back(std::abs(*m.ttft_ms - 200.0));
      decode.push_back(*m.decode_tps);
      decode_err.push_back(std::abs(*m.decode_tps - 50.0) / 50.0 * 100.0);
    }
    const Summary t = Summarize(ttft), te = Summarize(ttft_err), d = Summarize(decode),
                  de = Summarize(decode_err);
    std::printf("| %d | %lld | %.2f | %.2f / %.2f | %.3f | %.3f / %.3f |\n", conc,
                static_cast<long long>(t.count), t.median, te.median, te.max, d.median,
                de.median, de.max);
  }
  StopMock(pid);
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  EventCost(quick);
  ManyStreams(512);
  TimingError(quick);
  return 0;
}
