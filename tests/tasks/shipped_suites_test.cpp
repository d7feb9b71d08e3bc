// tasks/shipped_suites.cpp: the suites shipped with evalrun found by name, from the build tree and
// from an installed prefix (issue 12). The installed case is what a user of the .deb or of
// `cmake --install` meets: the real `cmake --install` into a temporary prefix, the installed
// program run from another folder with no source tree reachable by a relative path, against the
// in-process mock with the smoke suite's answer table; its grades must equal the build tree's.
#include "tasks/shipped_suites.h"

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "tests/support/catch.h"
#include <nlohmann/json.hpp>

#include "plugins/mock_server.h"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

const fs::path kSource = fs::weakly_canonical(fs::path(EVALRUN_TEST_FIXTURES) / "../..");

struct TempDir {
  fs::path path;
  explicit TempDir(const char* what) {
    std::string pattern = std::string("/tmp/evalrun-") + what + "-XXXXXX";
    path = mkdtemp(pattern.data());
  }
  ~TempDir() { fs::remove_all(path); }
  std::string File(const std::string& name) const { return (path / name).string(); }
};

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Result {
  int code = -1;
  std::string out;
  std::string err;
};

// Runs `program args...` in folder `cwd` to completion (bounded), capturing stdout and stderr.
Result Run(const std::string& program, const std::vector<std::string>& args, const fs::path& cwd,
           double timeout_s = 240) {
  static int calls = 0;
  const std::string stem = "/tmp/evalrun-shipped-" + std::to_string(getpid()) + "-" +
                           std::to_string(++calls);
  const std::string out_path = stem + ".out";
  const std::string err_path = stem + ".err";
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    if (chdir(cwd.c_str()) != 0) _exit(126);
    FILE* err = std::fopen(err_path.c_str(), "w");
    if (err) dup2(fileno(err), STDERR_FILENO);
    FILE* out = std::fopen(out_path.c_str(), "w");
    if (out) dup2(fileno(out), STDOUT_FILENO);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(program.c_str()));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(program.c_str(), argv.data());
    _exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      FAIL(program << " did not finish within " << timeout_s << " s: " << Slurp(err_path));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  Result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = Slurp(out_path);
  r.err = Slurp(err_path);
  std::remove(out_path.c_str());
  std::remove(err_path.c_str());
  return r;
}

// The id of the one run in `db` (a fresh database per run here).
std::string OnlyRun(const std::string& evalrun, const std::string& db, const fs::path& cwd) {
  const Result runs = Run(evalrun, {"runs", "--db", db}, cwd);
  REQUIRE(runs.code == 0);
  const size_t at = runs.out.find("\nr");
  REQUIRE(at != std::string::npos);
  return runs.out.substr(at + 1, runs.out.find_first_of(" \t", at + 1) - at - 1);
}

// Runs the smoke suite (given as `suite`) with `evalrun` from folder `cwd` against `mock`,
// exports the run and returns the bundle.
json SmokeBundle(const std::string& evalrun, const std::string& suite, const fs::path& cwd,
                 const evalrun::MockServer& mock) {
  const Result r = Run(evalrun,
                       {"suite", suite, "--endpoint", mock.base_url(), "--no-speed", "--no-env",
                        "--quiet", "--db", "runs.db", "--out", "report"},
                       cwd);
  INFO(r.err);
  REQUIRE(r.code == 0);
  const std::string id = OnlyRun(evalrun, "runs.db", cwd);
  const Result e = Run(evalrun, {"export", id, "--db", "runs.db", "--out", "run.evalrun.json"}, cwd);
  INFO(e.err);
  REQUIRE(e.code == 0);
  return json::parse(Slurp((cwd / "run.evalrun.json").string()));
}

// task id -> "status score passed" of every task record.
std::map<std::string, std::string> Grades(const json& bundle) {
  std::map<std::string, std::string> grades;
  for (const json& t : bundle["tasks"]) {
    const json& g = t["grade"];
    grades[t["task_id"].get<std::string>()] = g["status"].get<std::string>() + " " +
                                              g["score"].dump() + " " + g["passed"].dump();
  }
  return grades;
}

evalrun::MockConfig SmokeMock() {
  evalrun::MockConfig config;
  config.ttft_ms = 1;
  config.decode_tps = 4000;
  config.answers = evalrun::LoadMockAnswers((kSource / "tasks/smoke/mock-answers.json").string());
  return config;
}

}  // namespace

TEST_CASE("shipped suites: a build-tree evalrun reads them from its source tree", "[tasks]") {
  // This test program is not installed, so the source tree's tasks/ is the folder.
  CHECK(evalrun::ShippedSuitesDir() == (kSource / "tasks").string());
  const std::vector<std::string> names = evalrun::ShippedSuiteNames();
  CHECK(names == std::vector<std::string>{"agent", "coding", "smoke"});
  CHECK(evalrun::ShippedSuitePath("smoke") == (kSource / "tasks/smoke").string());
  CHECK(evalrun::ShippedSuitePath("smoek").empty());
  CHECK(evalrun::ShippedSuitePath("../tasks").empty());
  CHECK(evalrun::ShippedSuitePath("").empty());
}

TEST_CASE("shipped suites: an installed evalrun finds them by name from any folder and grades "
          "as the build tree does",
          "[tasks][install][slow]") {
  TempDir prefix("install-prefix");
  TempDir elsewhere("install-cwd");
  TempDir build_cwd("install-build-cwd");
  const Result install =
      Run(EVALRUN_CMAKE_COMMAND, {"--install", EVALRUN_BUILD_DIR, "--prefix", prefix.path.string()},
          elsewhere.path);
  INFO(install.out << install.err);
  REQUIRE(install.code == 0);
  const std::string installed = prefix.File("bin/evalrun");
  for (const char* file :
       {"bin/evalrun", "share/evalrun/suites/smoke/suite.yaml",
        "share/evalrun/suites/smoke/mock-answers.json", "share/evalrun/suites/agent/suite.yaml",
        "share/evalrun/suites/coding/suite.yaml", "share/evalrun/suites/coding/README.md",
        "share/evalrun/schema.sql", "share/doc/evalrun/README.md", "share/doc/evalrun/metrics.md"}) {
    INFO(file);
    CHECK(fs::is_regular_file(prefix.path / file));
  }

  SECTION("--version names the version and the commit, like the build tree's") {
    const Result v = Run(installed, {"--version"}, elsewhere.path);
    CHECK(v.code == 0);
    CHECK_THAT(v.out, Catch::StartsWith("evalrun 0.1.0 (commit "));
    CHECK(v.out == Run(EVALRUN_BINARY, {"--version"}, elsewhere.path).out);
  }

  SECTION("evalrun suites lists the installed suites") {
    const Result s = Run(installed, {"suites"}, elsewhere.path);
    CHECK(s.code == 0);
    const std::string root = fs::weakly_canonical(prefix.path / "share/evalrun/suites").string();
    CHECK_THAT(s.out, Catch::Contains("smoke            evalrun  " + root + "/smoke  (shipped)\n"));
    CHECK_THAT(s.out, Catch::Contains("agent            evalrun  " + root + "/agent  (shipped)\n"));
    CHECK_THAT(s.out, Catch::Contains("coding           evalrun  " + root + "/coding  (shipped)\n"));
  }

  SECTION("the installed agent suite validates: its repository's files kept their modes") {
    const Result v = Run(installed, {"validate", "agent"}, elsewhere.path);
    INFO(v.out << v.err);
    CHECK(v.code == 0);
  }

  SECTION("a misspelt name suggests the shipped one") {
    const Result r = Run(installed, {"validate", "smoek"}, elsewhere.path);
    CHECK(r.code == 2);
    CHECK(r.err ==
          "evalrun: error: unknown suite 'smoek', did you mean 'smoke'? (evalrun suites lists "
          "them)\n");
  }

  SECTION("evalrun suite smoke from another folder: the same tasks, hashes and grades") {
    evalrun::MockServer mock(SmokeMock());
    mock.Start();
    const json from_install = SmokeBundle(installed, "smoke", elsewhere.path, mock);
    const json from_build =
        SmokeBundle(EVALRUN_BINARY, (kSource / "tasks/smoke").string(), build_cwd.path, mock);
    CHECK(from_install["suite"]["spec"] == "smoke");
    CHECK(from_install["suite"]["tasks"] == from_build["suite"]["tasks"]);  // ids, hashes, data
    CHECK(from_install["tasks"].size() == 26);
    CHECK(Grades(from_install) == Grades(from_build));
    CHECK(from_install["summary"]["overall"] == from_build["summary"]["overall"]);
    // The installed program re-grades the bundle from the installed suite, found by name again.
    // A shipped suite is read from disk, so the result is unpinned (exit 3, as for any bare
    // PATH); every other check holds.
    const Result verify = Run(installed, {"verify", "run.evalrun.json"}, elsewhere.path);
    INFO(verify.out << verify.err);
    CHECK_THAT(verify.out, Catch::Contains("grades: ok (26 of 26 grades rechecked, all equal)\n"));
    CHECK_THAT(verify.out, Catch::Contains("suite: ok (all 26 planned task hashes match the "
                                           "folder on disk 'smoke' (unpinned: not a commit))\n"));
    CHECK_THAT(verify.out, Catch::Contains("verify: FAILED (pinned)\n"));
  }
}
