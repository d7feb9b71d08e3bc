// The coding suite (tasks/coding: real upstream fixes in public repositories) end to end, offline.
// CI cannot reach public git hosts, so tomli's history up to its fix 4e245a4 is kept as a small
// bare repository (tests/fixtures/coding/tomli.git, MIT, license beside it) and copied into a
// temporary EVALRUN_CACHE under the folder name the clone cache uses for
// https://github.com/hukkin/tomli: the task's base commit is then in the cache and nothing is
// fetched. The shipped task tomli-loads-type-error runs through `evalrun suite` against the mock
// endpoint scripted with tool calls (tests/fixtures/coding/*.json): an oracle writing the upstream
// fix (resolved), a null agent (not resolved), a near miss (not resolved, its fail_to_pass test
// failing in the evidence). `evalrun fetch` is tested with the same repository as a local URL.
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/support/catch.h"
#include <nlohmann/json.hpp>

#include "graders/grader.h"
#include "plugins/sandbox.h"
#include "plugins/mock_server.h"
#include "results/store.h"
#include "runner/suite_run.h"
#include "tasks/git_source.h"

namespace {

namespace fs = std::filesystem;
using evalrun::GradeStatus;
using evalrun::MockConfig;
using evalrun::MockServer;
using evalrun::ResultStore;
using evalrun::TaskResult;
using nlohmann::json;

const std::string kFixtures = EVALRUN_TEST_FIXTURES;
const std::string kCodingSuite = kFixtures + "/../../tasks/coding";
const std::string kTomliRepo = kFixtures + "/coding/tomli.git";
const std::string kTomliUrl = "https://github.com/hukkin/tomli";
const std::string kTask = "tomli-loads-type-error";
const std::string kFailToPass = "tests.test_error.TestError.test_type_error";

struct TempDir {
  fs::path path;
  TempDir() {
    char pattern[] = "/tmp/evalrun-coding-XXXXXX";
    path = mkdtemp(pattern);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string File(const std::string& name) const { return (path / name).string(); }
};

// Sets EVALRUN_CACHE for the test's lifetime, restoring the previous value.
struct ScopedCache {
  std::string previous;
  bool had = false;
  explicit ScopedCache(const std::string& dir) {
    if (const char* v = getenv("EVALRUN_CACHE")) {
      previous = v;
      had = true;
    }
    setenv("EVALRUN_CACHE", dir.c_str(), 1);
  }
  ~ScopedCache() {
    if (had) {
      setenv("EVALRUN_CACHE", previous.c_str(), 1);
    } else {
      unsetenv("EVALRUN_CACHE");
    }
  }
};

bool HaveSandbox() {
  static const auto sandbox = evalrun::MakeBubblewrapSandbox();
  if (auto why = sandbox->Unavailable()) {
    WARN("bubblewrap unavailable, the coding tasks are skipped here: " << *why);
    return false;
  }
  return true;
}

// The cache `evalrun fetch` would have prepared: tomli's clone where EnsureCachedClone looks.
void SeedCache(const fs::path& cache) {
  fs::create_directories(cache);
  fs::copy(kTomliRepo, cache / evalrun::CacheFolderName(kTomliUrl), fs::copy_options::recursive);
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Runs tomli-loads-type-error against a mock answering with `answers` (tests/fixtures/coding);
// returns the run's one task result.
TaskResult RunTomliTaskWith(const TempDir& dir, const std::string& answers) {
  const ScopedCache cache(dir.File("cache"));
  SeedCache(dir.File("cache"));
  MockConfig mock_config;
  mock_config.ttft_ms = 1;
  mock_config.decode_tps = 5000;
  mock_config.answers = evalrun::LoadMockAnswers(kFixtures + "/coding/" + answers);
  MockServer mock(mock_config);
  mock.Start();
  evalrun::SuiteRunConfig config;
  config.suite_spec = kCodingSuite;
  config.endpoint = mock.base_url();
  config.filters = {"id=" + kTask};
  config.db = dir.File(answers + ".db");
  config.no_speed = true;
  config.quiet = true;
  config.capture_environment = false;
  config.out_dir = dir.File(answers + ".report");
  std::ostringstream log;
  const int code = evalrun::RunSuite(config, nullptr, log);
  INFO(log.str());
  REQUIRE(code == 0);
  ResultStore store(config.db);
  auto run = store.LoadRun(store.ListRuns().front().id);
  REQUIRE(run.tasks.size() == 1);
  return run.tasks.front();
}

// Runs the evalrun program with `args` and EVALRUN_CACHE=`cache`; returns the exit code and sets
// `out` to stdout and stderr.
int RunEvalrun(const std::string& args, const std::string& cache, const std::string& out_file,
               std::string& out) {
  const std::string command = "EVALRUN_CACHE='" + cache + "' " + std::string(EVALRUN_BINARY) +
                              " " + args + " > '" + out_file + "' 2>&1";
  const int status = std::system(command.c_str());
  out = Slurp(out_file);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

TEST_CASE("coding suite: an oracle writing the upstream fix resolves a real repository's task",
          "[runner][coding]") {
  if (!HaveSandbox()) return;
  TempDir dir;
  const TaskResult r = RunTomliTaskWith(dir, "tomli-oracle.json");
  INFO(r.grade.reason << "\n" << r.grade.evidence.dump(2));
  CHECK(r.dimension == "agentic_coding");
  CHECK(r.grade.status == GradeStatus::kGraded);
  CHECK(r.grade.passed);
  CHECK(r.grade.score == 1.0);
  CHECK(r.transcript.at("turns").size() == 4);
  CHECK(r.transcript.at("termination_reason") == "completed");
  CHECK(r.grade.evidence.at("fail_to_pass").at(kFailToPass) == "passed");
  const json episode = json::parse(r.output);
  CHECK(episode.at("submitted") == true);
  CHECK(episode.at("diff").get<std::string>().find(
            "+    except (AttributeError, TypeError):") != std::string::npos);
  // The report's task table links the task to the upstream fix it was built from.
  const std::string upstream =
      "https://github.com/hukkin/tomli/commit/4e245a4bbbefed99e550e196095ea65c851cf31d";
  CHECK(r.grade.evidence.at("upstream") == upstream);
  const std::string html = Slurp(dir.File("tomli-oracle.json.report/report.html"));
  const std::string row =
      "<td><a href=\"" + upstream + "\">" + kTask + "</a></td><td>agentic_coding</td>";
  CHECK(html.find(row) != std::string::npos);
}

TEST_CASE("coding suite: a null agent does not resolve it", "[runner][coding]") {
  if (!HaveSandbox()) return;
  TempDir dir;
  const TaskResult r = RunTomliTaskWith(dir, "tomli-null.json");
  INFO(r.grade.reason << "\n" << r.grade.evidence.dump(2));
  CHECK(r.grade.status == GradeStatus::kGraded);
  CHECK_FALSE(r.grade.passed);
  CHECK(r.grade.score == 0.0);
  CHECK(r.transcript.at("termination_reason") == "no_action");
  CHECK(json::parse(r.output).at("diff") == "");
  CHECK(r.grade.evidence.at("fail_to_pass").at(kFailToPass) == "failed");
}

TEST_CASE("coding suite: a near miss does not resolve it, its fail_to_pass test failing",
          "[runner][coding]") {
  if (!HaveSandbox()) return;
  TempDir dir;
  const TaskResult r = RunTomliTaskWith(dir, "tomli-near-miss.json");
  INFO(r.grade.reason << "\n" << r.grade.evidence.dump(2));
  CHECK(r.grade.status == GradeStatus::kGraded);
  CHECK_FALSE(r.grade.passed);
  CHECK(r.grade.score == 0.0);
  CHECK(json::parse(r.output).at("submitted") == true);
  CHECK(r.grade.evidence.at("fail_to_pass").at(kFailToPass) == "failed");
  // Every pass_to_pass test still passes: only the fix itself is wrong.
  for (const auto& [name, status] : r.grade.evidence.at("pass_to_pass").items()) {
    INFO(name);
    CHECK(status == "passed");
  }
  CHECK(r.grade.evidence.at("log_tail").get<std::string>().find(
            "a bytes-like object is required, not 'str'") != std::string::npos);
}

TEST_CASE("coding suite: evalrun fetch clones a suite's repositories and verifies their commits",
          "[runner][coding]") {
  TempDir dir;
  const std::string cache = dir.File("cache");
  // A suite with two tasks of one repository, named by a local path (libgit2 clones it as it
  // would a URL): the base of tomli-loads-type-error, once with its tree and once with a wrong one.
  fs::create_directories(dir.path / "suite");
  const std::string task = R"(
    dimension: agentic_coding
    prompt: fix it
    grader: {type: repo_tests}
    agent:
      kind: repo
      repo:
        url: )" + kTomliRepo + R"(
        base_commit: facdab0f5aacc5eb223753c42604d5de7bdaee9d
        base_tree: TREE
      test_cmd: python3 -m unittest -v
      log_parser: unittest
      fail_to_pass: [tests.test_error.TestError.test_type_error]
)";
  std::string good = task, bad = task;
  good.replace(good.find("TREE"), 4, "d770228b229aa958ce1d789db922a7f930a2cb23");
  bad.replace(bad.find("TREE"), 4, "deadbeefdeadbeefdeadbeefdeadbeefdeadbeef");
  std::ofstream(dir.path / "suite" / "suite.yaml")
      << "schema_version: 1\nsuite: fetch-test\ndimensions: {agentic_coding: 1}\ntasks:\n"
         "  - id: good" << good;
  std::string out;
  const std::string dest = cache + "/" + evalrun::CacheFolderName(kTomliRepo);
  CHECK(RunEvalrun("fetch " + dir.File("suite"), cache, dir.File("fetch.out"), out) == 0);
  CHECK(out.find("ok   good: commit facdab0f5aac has tree d770228b229a\n") != std::string::npos);
  CHECK(out.find("     " + kTomliRepo + " -> " + dest + " (") != std::string::npos);
  CHECK(out.find("1 repository, 1 of 1 tasks verified, ") != std::string::npos);
  CHECK(fs::exists(dest + "/HEAD"));

  // Again with the wrong tree added: the clone is reused, the wrong task named, exit 3.
  std::ofstream(dir.path / "suite" / "suite.yaml", std::ios::app) << "  - id: bad" << bad;
  CHECK(RunEvalrun("fetch " + dir.File("suite"), cache, dir.File("fetch2.out"), out) == 3);
  INFO(out);
  CHECK(out.find("ok   good: commit facdab0f5aac has tree d770228b229a\n") != std::string::npos);
  CHECK(out.find("FAIL bad: commit facdab0f5aac has tree d770228b229aa958ce1d789db922a7f930a2cb23, "
                 "the task says deadbeefdeadbeefdeadbeefdeadbeefdeadbeef\n") != std::string::npos);
  CHECK(out.find("1 repository, 1 of 2 tasks verified, ") != std::string::npos);

  // A repository that cannot be cloned: each of its tasks fails with the reason, tried once.
  std::string gone = good;
  gone.replace(gone.find(kTomliRepo), kTomliRepo.size(), dir.File("gone.git"));
  std::ofstream(dir.path / "suite" / "suite.yaml")
      << "schema_version: 1\nsuite: fetch-test\ndimensions: {agentic_coding: 1}\ntasks:\n"
         "  - id: one" << gone << "  - id: two" << gone;
  CHECK(RunEvalrun("fetch " + dir.File("suite"), cache, dir.File("fetch4.out"), out) == 3);
  INFO(out);
  const std::string reason = "cannot fetch " + dir.File("gone.git") + ": ";
  const size_t one = out.find("FAIL one: " + reason);
  REQUIRE(one != std::string::npos);
  const std::string line = out.substr(one + 10, out.find('\n', one) - one - 10);
  CHECK_THAT(line, Catch::EndsWith("(offline? --suite-repo PATH uses a local clone)"));
  CHECK(out.find("FAIL two: " + line + "\n") != std::string::npos);
  CHECK(out.find("1 repository, 0 of 2 tasks verified, 0.0 MiB in the cache\n") !=
        std::string::npos);

  // A suite without repositories to fetch.
  CHECK(RunEvalrun("fetch " + kFixtures + "/../../tasks/smoke", cache, dir.File("fetch3.out"),
                   out) == 0);
  CHECK(out == "suite smoke needs no repositories (no task has agent.repo.url)\n");
}
