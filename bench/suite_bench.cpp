// The suite run's own cost (issue 5, "Performance"): a 1,000-task synthetic suite against the
// in-process mock endpoint at concurrency 8. Goals: evalrun's own time outside waiting for the
// model (scheduling, grading, storing) under 2% of the workers' time, and the database write
// for a finished task under 1 ms median. Prints the figures the run itself records (its "stats"
// event) and exits 1 when a goal is missed.
//
//   build/bench/suite_bench [TASKS] [CONCURRENCY] [DECODE_TPS]
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "plugins/mock_server.h"
#include "results/store.h"
#include "runner/suite_run.h"

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  const int tasks = argc > 1 ? std::atoi(argv[1]) : 1000;
  const int concurrency = argc > 2 ? std::atoi(argv[2]) : 8;
  const double decode_tps = argc > 3 ? std::atof(argv[3]) : 400;

  char pattern[] = "/tmp/evalrun-suite-bench-XXXXXX";
  const fs::path dir = mkdtemp(pattern);
  const fs::path suite = dir / "suite";
  fs::create_directories(suite);
  evalrun::MockConfig mock_config;
  mock_config.ttft_ms = 20;
  mock_config.decode_tps = decode_tps;
  {
    std::ofstream out(suite / "suite.yaml");
    out << "schema_version: 1\nsuite: bench\ndefaults: {max_tokens: 64}\ntasks:\n";
    for (int i = 0; i < tasks; ++i) {
      const std::string id = "t" + std::to_string(i);
      out << "  - {id: " << id << ", dimension: d" << i % 5 << ", prompt: \"[" << id
          << "] What is " << i << "?\", grader: {type: answer_line, answer: " << i << "}}\n";
      evalrun::MockAnswer answer;
      answer.match = "[" + id + "]";
      answer.content = "Reasoning about the question, step by step, then the answer.\nANSWER: " +
                       std::to_string(i % 4 ? i : i + 1);
      mock_config.answers.push_back(answer);
    }
  }
  evalrun::MockServer mock(mock_config);
  mock.Start();

  evalrun::SuiteRunConfig config;
  config.suite_spec = suite.string();
  config.endpoint = mock.base_url();
  config.concurrency = concurrency;
  config.db = (dir / "bench.db").string();
  config.no_speed = true;
  config.quiet = true;
  config.capture_environment = false;
  config.out_dir = (dir / "report").string();
  std::ostringstream log;
  const auto start = std::chrono::steady_clock::now();
  const int code = evalrun::RunSuite(config, nullptr, log);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  evalrun::ResultStore store(config.db);
  const auto runs = store.ListRuns();
  std::string stats;
  for (const auto& e : store.LoadRun(runs.front().id).events) {
    if (e.kind == "stats") stats = e.message;
  }
  std::printf("%d tasks, concurrency %d, mock %.0f tokens/s: wall %.2f s, exit %d\n%s\n", tasks,
              concurrency, decode_tps, wall, code, stats.c_str());
  double own = 100, median = 100;
  std::sscanf(stats.c_str(), "client overhead: %lf%%", &own);
  const size_t at = stats.find("median ");
  if (at != std::string::npos) median = std::atof(stats.c_str() + at + 7);
  const bool ok = code == 0 && own < 2.0 && median < 1.0;
  std::printf("goals: own time %.2f%% < 2%%: %s; commit median %.3f ms < 1 ms: %s\n", own,
              own < 2.0 ? "met" : "MISSED", median, median < 1.0 ? "met" : "MISSED");
  fs::remove_all(dir);
  return ok ? 0 : 1;
}
