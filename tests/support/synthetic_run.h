#pragma once
// The synthetic run the command-line tests of export, verify and merge share: a temporary
// folder and the real evalrun binary (tests/support/evalrun_process.h), a 12-task suite pinned at
// two git commits (the second with task t001's gold answer edited), a mock answering it (task i
// right unless i % 3 == 2), and a run of it exported as a bundle. Header-only: EVALRUN_BINARY is
// each test program's own.
#include <cstdio>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "plugins/mock_server.h"
#include "results/store.h"
#include "tests/support/catch.h"
#include "tests/support/evalrun_process.h"

namespace evalrun::testing {

inline void Write(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

// Runs a shell command (git); returns its stdout without the trailing newline.
inline std::string Shell(const std::string& command) {
  FILE* p = popen(command.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  char buffer[256];
  while (std::fgets(buffer, sizeof buffer, p)) out += buffer;
  REQUIRE(pclose(p) == 0);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

using Result = ProcessResult;

// Runs the evalrun binary with `args` and `env` added to the environment (bounded: killed after
// 120 s).
inline Result Evalrun(const std::vector<std::string>& args, const TempDir& dir,
                      const std::vector<std::pair<std::string, std::string>>& env = {}) {
  ProcessOptions options;
  options.env = env;
  return RunEvalrunBinary(args, dir.File("stdout.txt"), dir.File("stderr.txt"), options);
}

inline const char* const kDimensions[] = {"math", "facts", "format"};
inline constexpr int kTasks = 12;

// suite.yaml of `n` tasks answering "ANSWER: <i>"; `gold_of_t001` is task t001's gold answer.
inline std::string SuiteYaml(int n, int gold_of_t001) {
  std::ostringstream suite;
  suite << "schema_version: 1\nsuite: synthetic\ndefaults: {max_tokens: 64, temperature: 0}\n"
        << "dimensions: {math: 2, facts: 1, format: 1}\ntasks:\n";
  for (int i = 0; i < n; ++i) {
    char id[16];
    std::snprintf(id, sizeof id, "t%03d", i);
    suite << "  - {id: " << id << ", dimension: " << kDimensions[i % 3]
          << ", difficulty: " << (i % 5 == 0 ? "hard" : "easy") << ", prompt: \"[" << id
          << "] What is " << i << " plus zero? End with ANSWER: <n>\", grader: {type: "
          << "answer_line, answer: " << (i == 1 ? gold_of_t001 : i) << "}}\n";
  }
  return suite.str();
}

// The mock's answers: task i gets the right answer unless i % 3 == 2.
inline MockConfig FastMock(int n) {
  MockConfig config;
  config.ttft_ms = 1;
  config.decode_tps = 4000;
  for (int i = 0; i < n; ++i) {
    char id[16];
    std::snprintf(id, sizeof id, "t%03d", i);
    evalrun::MockAnswer answer;
    answer.match = std::string("[") + id + "]";
    answer.content =
        "It is " + std::to_string(i) + ".\nANSWER: " + std::to_string(i % 3 == 2 ? i + 1 : i);
    config.answers.push_back(answer);
  }
  return config;
}

// A git repository whose folder suite/ holds the suite: commit one as written, commit two with
// t001's gold answer edited.
struct SuiteRepo {
  std::string repo, first, second;
};

inline SuiteRepo MakeRepo(const TempDir& dir) {
  SuiteRepo r;
  r.repo = dir.File("repo");
  std::filesystem::create_directories(r.repo + "/suite");
  Write(r.repo + "/suite/suite.yaml", SuiteYaml(kTasks, 1));
  Shell("cd " + r.repo +
        " && git init -q && git add -A && git -c user.name=t -c "
        "user.email=t@t commit -qm one");
  r.first = Shell("git -C " + r.repo + " rev-parse HEAD");
  Write(r.repo + "/suite/suite.yaml", SuiteYaml(kTasks, 42));
  Shell("cd " + r.repo + " && git -c user.name=t -c user.email=t@t commit -qam gold");
  r.second = Shell("git -C " + r.repo + " rev-parse HEAD");
  return r;
}

// Runs the suite with `extra` flags and exports the run; returns the bundle's path.
inline std::string RunAndExport(const std::string& spec, const std::vector<std::string>& extra,
                                const MockServer& mock, const TempDir& dir, const std::string& name,
                                const std::vector<std::pair<std::string, std::string>>& env = {}) {
  const std::string db = dir.File(name + ".db");
  std::vector<std::string> args = {
      "suite",   spec,   "--endpoint", mock.base_url(), "--no-env",
      "--quiet", "--db", db,           "--out",         dir.File(name + "-report")};
  args.insert(args.end(), extra.begin(), extra.end());
  const Result run = Evalrun(args, dir, env);
  INFO(run.err);
  REQUIRE(run.code == 0);
  evalrun::ResultStore store(db);
  const std::string run_id = store.ListRuns().front().id;
  const std::string bundle = dir.File(name + ".evalrun.json");
  const Result exported = Evalrun({"export", run_id, "--db", db, "--out", bundle}, dir);
  INFO(exported.err);
  REQUIRE(exported.code == 0);
  CHECK_THAT(exported.err, Catch::Contains("result hash "));
  return bundle;
}

}  // namespace evalrun::testing
