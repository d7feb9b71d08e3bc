// stream_bench: what the measuring client costs and how exact it is, against evalrun's own mock
// server running in a child process (so the client's CPU time and memory are its own).
//
//   build/bench/stream_bench [--quick] [--uni-bench PATH/uni_bench.py]
//
// 1. Client CPU per SSE event, event-loop thread: the mock streams with no pacing in each real
//    server's chunk layout (evalrun's own short one, llama.cpp b4748's, OpenAI's, SGLang's);
//    the loop thread's CPU time (CLOCK_THREAD_CPUTIME_ID) divided by the events read.
// 2. 512 concurrent streams on one event loop: peak resident memory of this process. Goal:
//    < 100 MB.
// 3. Timing error versus the mock's configured pacing (TTFT 200 ms, 50 tokens/s) at concurrency
//    1, 8, 64 and 256, three rounds each: median and worst deviation of ttft_ms and decode_tps
//    per request.
// 4. The whole `evalrun speed` process, per layout: its marginal CPU per event (user + system
//    time of a run generating 200,000 tokens per request less one generating 20,000, over the
//    events between them; goal: at most 0.5 us) and its peak memory with each output format
//    (two 200,000-token requests; goal: under 30 MB).
// 5. With --uni-bench: the community script uni_bench.py and `evalrun speed --preset uni-bench`
//    against the same mock (SGLang's layout) in this one run: each one's marginal CPU per event,
//    and the ratio.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
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

struct Layout {
  const char* name;
  MockChunkLayout layout;
  MockUsageStyle usage;
};
constexpr Layout kLayouts[] = {
    {"evalrun", MockChunkLayout::kEvalrun, MockUsageStyle::kSeparateChunk},
    {"llama.cpp", MockChunkLayout::kLlamaCpp, MockUsageStyle::kLastChunk},
    {"openai", MockChunkLayout::kOpenAI, MockUsageStyle::kSeparateChunk},
    {"sglang", MockChunkLayout::kSglang, MockUsageStyle::kSeparateChunk},
};

MockConfig Unpaced(const Layout& layout) {
  MockConfig config;
  config.ttft_ms = 0;
  config.decode_tps = 0;  // no pacing: as fast as the socket takes it
  config.chunk_layout = layout.layout;
  config.usage = layout.usage;
  config.timings = layout.layout == MockChunkLayout::kLlamaCpp;
  config.answer_tokens = 10'000'000;  // requests without ignore_eos get their max_tokens
  return config;
}

void EventCost(bool quick) {
  std::printf("## 1. Client CPU per SSE event, event-loop thread (mock with pacing off, child "
              "process)\n\n");
  std::printf("| layout | streams | events | client CPU s | wall s | us CPU/event | events/s "
              "(wall) |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|\n");
  for (const Layout& layout : kLayouts) {
    int port = 0;
    const pid_t pid = StartMock(Unpaced(layout), &port);
    const ServerInfo server = MockInfo(port);
    for (int streams : {1, 16}) {
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
      std::printf("| %s | %d | %lld | %.3f | %.3f | %.3f | %.0f |%s\n", layout.name, streams,
                  static_cast<long long>(events), cpu, wall,
                  cpu / static_cast<double>(events) * 1e6, static_cast<double>(events) / wall,
                  errors ? " errors!" : "");
    }
    StopMock(pid);
  }
}

struct ChildCost {
  double cpu_s = -1;  // user + system
  long peak_kb = 0;
  int status = -1;
};

// Runs argv[0] with its output thrown away; its CPU time and peak memory from wait4.
ChildCost RunChild(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  ChildCost cost;
  rusage usage{};
  if (wait4(pid, &cost.status, 0, &usage) != pid) return cost;
  cost.cpu_s = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
               static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  cost.peak_kb = usage.ru_maxrss;
  return cost;
}

// The median CPU of `repeat` runs of `args`; false when one failed.
bool MedianCpu(const std::vector<std::string>& args, int repeat, double* cpu, long* peak_kb) {
  std::vector<double> cpus;
  long peak = 0;
  for (int i = 0; i < repeat; ++i) {
    const ChildCost c = RunChild(args);
    if (c.status != 0) return false;
    cpus.push_back(c.cpu_s);
    peak = std::max(peak, c.peak_kb);
  }
  *cpu = Summarize(cpus).median;
  if (peak_kb) *peak_kb = peak;
  return true;
}

std::vector<std::string> SpeedArgs(int port, int64_t tokens, const std::string& format,
                                   const std::string& out) {
  return {EVALRUN_BINARY, "speed", "--endpoint", "http://127.0.0.1:" + std::to_string(port),
          "-p", "16", "-n", std::to_string(tokens), "-r", "1", "-c", "1", "--prompts",
          "distinct", "--no-env", "-q", "-o", format, "--out", out};
}

void WholeProcess(bool quick) {
  const int repeat = quick ? 1 : 3;
  constexpr int64_t kSmall = 20'000, kBig = 200'000;
  // pp16 (one event), then tg and c1-distinct of N tokens each.
  const double events = 2.0 * static_cast<double>(kBig - kSmall);
  const std::string out =
      (std::filesystem::temp_directory_path() / ("stream_bench-" + std::to_string(getpid())))
          .string();
  std::printf("\n## 4. The whole `evalrun speed` process (user + system CPU, median of %d)\n\n",
              repeat);
  std::printf("| layout | CPU s, N = 20,000 | CPU s, N = 200,000 | marginal us CPU/event | peak "
              "MB md | json | csv | jsonl |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const Layout& layout : kLayouts) {
    int port = 0;
    const pid_t pid = StartMock(Unpaced(layout), &port);
    double small = 0, big = 0;
    const bool ok = MedianCpu(SpeedArgs(port, kSmall, "json", out), repeat, &small, nullptr) &&
                    MedianCpu(SpeedArgs(port, kBig, "json", out), repeat, &big, nullptr);
    std::string peaks;
    for (const char* format : {"md", "json", "csv", "jsonl"}) {
      const ChildCost c = RunChild(SpeedArgs(port, kBig, format, out));
      peaks += c.status == 0 ? " " + std::to_string(c.peak_kb / 1024) + "." +
                                   std::to_string((c.peak_kb % 1024) * 10 / 1024) + " |"
                             : " failed |";
    }
    StopMock(pid);
    if (!ok) {
      std::printf("| %s | failed | | | |\n", layout.name);
      continue;
    }
    std::printf("| %s | %.3f | %.3f | %.3f |%s\n", layout.name, small, big,
                (big - small) / events * 1e6, peaks.c_str());
  }
  std::filesystem::remove(out);
}

void UniBenchSideBySide(const std::string& script, bool quick) {
  const int repeat = quick ? 1 : 3;
  constexpr int64_t kSmall = 2'000, kBig = 20'000;
  // Both send the uni-bench v1 protocol: four single scenarios and two pairs, one round: eight
  // requests of N tokens.
  const double events = 8.0 * static_cast<double>(kBig - kSmall);
  const Layout sglang = kLayouts[3];
  int port = 0;
  const pid_t pid = StartMock(Unpaced(sglang), &port);
  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  const auto evalrun = [&](int64_t n) {
    return std::vector<std::string>{EVALRUN_BINARY, "speed",  "--endpoint", url, "--preset",
                                    "uni-bench",    "-n",     std::to_string(n), "-r", "1",
                                    "--no-env",     "-q",     "-o",     "json"};
  };
  const auto community = [&](int64_t n) {
    return std::vector<std::string>{"python3", script, "--base-url", url, "--model",
                                    "evalrun-mock", "--rounds", "1", "--max-tokens",
                                    std::to_string(n)};
  };
  double e_small = 0, e_big = 0, u_small = 0, u_big = 0;
  const bool ok = MedianCpu(evalrun(kSmall), repeat, &e_small, nullptr) &&
                  MedianCpu(evalrun(kBig), repeat, &e_big, nullptr) &&
                  MedianCpu(community(kSmall), repeat, &u_small, nullptr) &&
                  MedianCpu(community(kBig), repeat, &u_big, nullptr);
  StopMock(pid);
  std::printf("\n## 5. Side by side with uni_bench.py (SGLang's layout, the same mock, this run; "
              "median of %d)\n\n",
              repeat);
  if (!ok) {
    std::printf("a run failed (is %s a uni_bench.py?)\n", script.c_str());
    return;
  }
  const double e = (e_big - e_small) / events * 1e6;
  const double u = (u_big - u_small) / events * 1e6;
  std::printf("| client | CPU s, N = 2,000 | CPU s, N = 20,000 | marginal us CPU/event |\n");
  std::printf("|---|---:|---:|---:|\n");
  std::printf("| evalrun speed --preset uni-bench | %.3f | %.3f | %.3f |\n", e_small, e_big, e);
  std::printf("| python3 uni_bench.py | %.3f | %.3f | %.3f |\n", u_small, u_big, u);
  std::printf("\nuni_bench.py costs %.1fx evalrun's CPU per event.\n", e > 0 ? u / e : 0.0);
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
  bool quick = false;
  std::string uni_bench;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else if (std::strcmp(argv[i], "--uni-bench") == 0 && i + 1 < argc) {
      uni_bench = argv[++i];
    } else {
      std::fprintf(stderr, "usage: stream_bench [--quick] [--uni-bench PATH/uni_bench.py]\n");
      return 2;
    }
  }
  EventCost(quick);
  ManyStreams(512);
  TimingError(quick);
  WholeProcess(quick);
  if (!uni_bench.empty()) UniBenchSideBySide(uni_bench, quick);
  return 0;
}
