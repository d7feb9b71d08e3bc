// Verifying a 1,000-task bundle (issue 7, "Performance": under one second, without --spot).
// Runs a 1,000-task synthetic suite, pinned at a git commit, against the in-process mock,
// exports the run, then times what `evalrun verify BUNDLE` does: reading the bundle and every
// check (hash, tasks, re-grading every output, recomputing the figures, loading the suite at its
// commit and comparing every task hash). Exits 1 when the goal is missed or a check fails.
//
//   build/bench/verify_bench [TASKS] [REPEATS]
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "core/canonical_json.h"
#include "plugins/sandbox.h"
#include "plugins/mock_server.h"
#include "results/bundle.h"
#include "results/store.h"
#include "runner/suite_run.h"
#include "runner/commands/verify_commands.h"

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  const int tasks = argc > 1 ? std::atoi(argv[1]) : 1000;
  const int repeats = argc > 2 ? std::max(1, std::atoi(argv[2])) : 5;

  char pattern[] = "/tmp/evalrun-verify-bench-XXXXXX";
  const fs::path dir = mkdtemp(pattern);
  const fs::path repo = dir / "repo";
  fs::create_directories(repo / "suite");
  evalrun::MockConfig mock_config;
  mock_config.ttft_ms = 1;
  mock_config.decode_tps = 0;  // no pacing: the run is only the means to a bundle
  {
    std::ofstream out(repo / "suite" / "suite.yaml");
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
  const std::string git = "cd " + repo.string() +
                          " && git init -q && git add -A && git -c user.name=b -c "
                          "user.email=b@b commit -qm bench";
  if (std::system(git.c_str()) != 0) {
    std::fprintf(stderr, "verify_bench: git failed\n");
    return 1;
  }
  evalrun::MockServer mock(mock_config);
  mock.Start();

  evalrun::SuiteRunConfig config;
  config.suite_spec = (repo / "suite").string() + "@HEAD";
  config.endpoint = mock.base_url();
  config.concurrency = 8;
  config.db = (dir / "bench.db").string();
  config.no_speed = true;
  config.quiet = true;
  config.capture_environment = false;
  config.out_dir = (dir / "report").string();
  std::ostringstream log;
  if (evalrun::RunSuite(config, nullptr, log) != 0) {
    std::fprintf(stderr, "verify_bench: the suite run failed\n%s", log.str().c_str());
    return 1;
  }
  const evalrun::ResultStore store(config.db);
  const std::string run_id = store.ListRuns().front().id;
  const std::string bundle_path = (dir / "bench.evalrun.json").string();
  {
    const std::string text = evalrun::CanonicalJson(evalrun::ExportBundle(store, run_id, {}, nullptr));
    std::ofstream out(bundle_path, std::ios::binary);
    out << text;
  }

  const std::unique_ptr<evalrun::Sandbox> sandbox = evalrun::MakeBubblewrapSandbox();
  double best = 1e9, worst = 0;
  bool all_ok = true;
  std::string report;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    const evalrun::Bundle bundle = evalrun::ReadBundle(bundle_path);
    evalrun::VerifyConfig verify;
    verify.sandbox = sandbox.get();
    const auto checks = evalrun::VerifyBundle(bundle, verify);
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::min(best, s);
    worst = std::max(worst, s);
    for (const auto& c : checks) all_ok &= c.state == evalrun::VerifyCheck::State::kOk;
    report = evalrun::RenderVerifyReport(checks);
  }
  std::printf("%s", report.c_str());
  std::printf("%d-task bundle (%.1f MB): verify best %.3f s, worst %.3f s over %d runs\n", tasks,
              static_cast<double>(fs::file_size(bundle_path)) / 1e6, best, worst, repeats);
  const bool met = worst < 1.0;
  std::printf("goal: under 1 s: %s\n", met ? "met" : "MISSED");
  fs::remove_all(dir);
  return met && all_ok ? 0 : 1;
}
