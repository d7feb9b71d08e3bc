#pragma once
// The evalrun binary run from a test as a user runs it: a temporary folder that removes itself,
// the binary started in a folder of choice with some environment added (and none of the shard
// variables of the environment the test runs in), its stdout and stderr captured, and a bound on
// its time (killed, and the test failed, past it). Header-only: EVALRUN_BINARY is each test
// program's own.
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/support/catch.h"

namespace evalrun::testing {

class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "evalrun-test") {
    std::string pattern = "/tmp/" + prefix + "-XXXXXX";
    path = mkdtemp(pattern.data());
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string File(const std::string& name) const { return (path / name).string(); }

  std::filesystem::path path;
};

inline std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct ProcessResult {
  int code = -1;  // the exit status, 128 + the signal when killed by one
  std::string out;
  std::string err;
};

struct ProcessOptions {
  std::string cwd;  // "" for the test's own
  std::vector<std::pair<std::string, std::string>> env;
  double timeout_s = 120;
};

// Runs the evalrun binary with `args`; stdout and stderr go to `out_path` and `err_path` and come
// back in the result.
inline ProcessResult RunEvalrunBinary(const std::vector<std::string>& args,
                                      const std::string& out_path, const std::string& err_path,
                                      const ProcessOptions& options = {}) {
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    if (!options.cwd.empty() && chdir(options.cwd.c_str()) != 0) _exit(126);
    FILE* out = std::fopen(out_path.c_str(), "w");
    FILE* err = std::fopen(err_path.c_str(), "w");
    if (out) dup2(fileno(out), STDOUT_FILENO);
    if (err) dup2(fileno(err), STDERR_FILENO);
    for (const char* name : {"EVALRUN_SHARD", "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT",
                             "SLURM_ARRAY_TASK_MIN", "JOB_COMPLETION_INDEX"}) {
      unsetenv(name);
    }
    for (const auto& [name, value] : options.env) setenv(name.c_str(), value.c_str(), 1);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(EVALRUN_BINARY));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(EVALRUN_BINARY, argv.data());
    _exit(127);
  }
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(options.timeout_s);
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      FAIL("evalrun did not finish within " << options.timeout_s << " s: " << Slurp(err_path));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ProcessResult r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = Slurp(out_path);
  r.err = Slurp(err_path);
  return r;
}

}  // namespace evalrun::testing
