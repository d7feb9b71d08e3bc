// Parity of evalrun's zx-bench project_repair grader with zx-bench's, on the real bank entry
// CP-L4-JS-001 (tests/fixtures/zx-bench/more_entries.json) with three replies
// (project_repair_answers.json) and on small entries built for the parser and the skips.
// Expected scores were derived from zx-bench's sources:
//   P = packages/core/src/evaluators/projectRepair.ts (projectRepairEvaluator 1.2.0,
//       suncityldp/zx-bench): output_completeness 100 when parseFileBlocks finds a file, test_pass
//       round(100 passed / hidden tests with a script), api_stability 100 when functionName is
//       in the project (and still present), static_signals round(100 keywords in the reply /
//       keywords), scope_discipline 100 unless more files are replaced than the project has
//       (-20 each); total round(sum(axis * weight) / sum(weights of scored axes)) with
//       scoring.weights (CP-L4-JS-001: test .35, api .15, static .30, output .10, scope .10).
//   F = patchParser.ts parseFileBlocks (heading forms, the first fenced block under a heading,
//       the `# path.ext` first-line convention).
// Where bubblewrap or the stand-in's programs are missing, the tests check the skip and stop.
#include "tests/support/catch.h"

#include <map>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "graders/builtin.h"
#include "graders/grader.h"
#include "plugins/sandbox.h"
#include "tests/support/fixtures.h"
#include "tests/support/zx_grading.h"

namespace evalrun {
namespace {

using nlohmann::json;

const Grader& ProjectRepair() {
  static const std::unique_ptr<Grader> grader = MakeZxProjectRepairGrader();
  return *grader;
}

using testing::Bubblewrap;
using testing::ZxScore;

json RealEntry() {
  for (const json& e : json::parse(testing::ReadFixture("zx-bench/more_entries.json"))) {
    if (e["id"] == "CP-L4-JS-001") return e;
  }
  FAIL("CP-L4-JS-001 missing");
  return {};
}

std::string Reply(const std::string& name) {
  static const json replies =
      json::parse(testing::ReadFixture("zx-bench/project_repair_answers.json"));
  return replies["CP-L4-JS-001"][name].get<std::string>();
}

Grade RunGrader(const json& entry, const std::string& text, const Sandbox* sandbox) {
  Answer answer;
  answer.text = text;
  GradeContext context;
  context.sandbox = sandbox;
  return ProjectRepair().Run(entry, answer, context);
}

std::optional<Grade> GradeHere(const json& entry, const std::string& text) {
  return testing::GradeWhereRunnable(ProjectRepair(), entry, text);
}


TEST_CASE("zx project_repair: CP-L4-JS-001 scores as zx-bench scores it", "[graders][zxbench]") {
  const json entry = RealEntry();
  // The fix: 5/5 hidden tests, both keywords (重试, 退避) in the reply, Queue kept, 4 files
  // replaced of 6: every axis 100 -> 100.
  const auto fix = GradeHere(entry, Reply("fix"));
  if (!fix) return;
  CHECK(fix->status == GradeStatus::kGraded);
  CHECK(ZxScore(*fix) == 100);
  CHECK(fix->reason == "5/5 hidden tests pass, 4 file(s) replaced");
  CHECK(fix->evidence["files_replaced"] ==
        json::array({"src/queue.js", "src/jobs/http.js", "src/index.js", "src/deadline.js"}));
  CHECK(fix->evidence["image"] == "node:20-alpine");  // P LANG_IMAGE for javascript
  CHECK(fix->evidence["stand_in"]["userland"] == "BusyBox applets and the host's node");

  // src/queue.js returned unchanged: only the heartbeat test passes (the drain loop yields to
  // the event loop through setImmediate); the others fail (an unhandled rejection ends the
  // process, FIFO order, Date.now). test_pass 20, static 0, api, output, scope 100:
  // round(7 + 15 + 0 + 10 + 10) = 42.
  const auto as_given = GradeHere(entry, Reply("as_given"));
  REQUIRE(as_given);
  CHECK(ZxScore(*as_given) == 42);
  CHECK(as_given->evidence["zx_axes"] == json{{"api_stability", 100},
                                              {"output_completeness", 100},
                                              {"scope_discipline", 100},
                                              {"static_signals", 0},
                                              {"test_pass", 20}});
  CHECK(as_given->evidence["hidden_tests"][1]["description"] == "心跳存活");
  CHECK(as_given->evidence["hidden_tests"][1]["passed"] == true);

  // Prose naming the fix, no file: the original project runs (1/5), output_completeness 0,
  // static 100: round(7 + 15 + 30 + 0 + 10) = 62, zx-bench's pass mark.
  const auto prose = GradeHere(entry, Reply("prose"));
  REQUIRE(prose);
  CHECK(ZxScore(*prose) == 62);
  CHECK(prose->passed);
  CHECK(prose->reason == "1/5 hidden tests pass, 0 file(s) replaced");
}

// A Python project of two files whose hidden test checks add() and that the model did not touch
// the test file: the parser's heading forms decide which files are replaced.
json PythonEntry() {
  return {
      {"id", "PR-TEST"},
      {"dimension", "program"},
      {"language", "python"},
      {"grader", "project_repair"},
      {"scoring", {{"type", "project_repair"}}},
      {"requirements",
       {{"functionName", "add"},  // P reads requirements.functionName
        {"files",
         json::array({{{"path", "calc.py"}, {"content", "def add(a, b):\n    return a - b\n"}},
                      {{"path", "README.md"}, {"content", "calc\n"}}})},
        {"hiddenTestFiles",
         json::array({{{"path", "tests/check.py"},
                       {"content", "import calc\nassert calc.add(2, 3) == 5\n"}}})},
        {"hiddenTests",
         json::array({{{"description", "add"}, {"script", "PYTHONPATH=. python3 tests/check.py"}},
                      {{"description", "blank"}, {"script", "  "}}})},
        {"explanationKeywords", json::array({"sign"})}}}};
}

const std::string kFixed = "def add(a, b):\n    return a + b";

TEST_CASE("zx project_repair: file blocks under headings, as parseFileBlocks finds them",
          "[graders][zxbench]") {
  const json entry = PythonEntry();
  // Default weights (P): test .25, api .15, static .30, output .15, scope .15; all 100 -> 100.
  struct Row {
    std::string reply;
    json replaced;
    int score;
  };
  const std::vector<Row> rows = {
      {"The sign was wrong.\n### file: calc.py\n```python\n" + kFixed + "\n```", {"calc.py"}, 100},
      {"### `calc.py`\n```\n" + kFixed + "\n```\nsign", {"calc.py"}, 100},
      {"## 1. `./calc.py` —— the sign\n```py\n" + kFixed + "\n```", {"./calc.py"}, 100},
      // A heading that is no path (spaces, no extension) names no file; the `# calc.py` first
      // line of a block still does (F's second pass).
      {"### The fix\n```python\n# calc.py\n" + kFixed + "\n```\nsign", {"calc.py"}, 100},
      // A '#' line inside a fence is no heading: the block stays calc.py's.
      {"### calc.py\n```python\n# sign fixed\n" + kFixed + "\n```", {"calc.py"}, 100},
      // No block: nothing replaced, the original fails: test 0, output 0, static 100 (the
      // reply says "sign"), api 100, scope 100: round((0 + 15 + 30 + 0 + 15) / 1) = 60.
      {"Flip the sign in calc.py.", json::array(), 60},
  };
  for (const Row& row : rows) {
    INFO(row.reply);
    const auto g = GradeHere(entry, row.reply);
    if (!g) return;
    CHECK(g->evidence["files_replaced"] == row.replaced);
    CHECK(ZxScore(*g) == row.score);
    CHECK(g->evidence["tests_total"] == 1);  // the blank script is not a test (P)
  }
  // Replacing the hidden test itself does not help: hidden files are written last (P
  // buildWorkspaceFiles), so calc.py still fails: test 0. Four files replaced for a project of
  // two: scope 100 - 2 * 20 = 60; no "sign": static 0. round((0 + 15 + 0 + 15 + 9) / 1) = 39.
  const auto cheat = GradeHere(
      entry,
      "### tests/check.py\n```\nprint('ok')\n```\n### a.py\n```\n1\n```\n### b.py\n```\n2\n"
      "```\n### c.py\n```\n3\n```");
  REQUIRE(cheat);
  CHECK(cheat->evidence["zx_axes"]["test_pass"] == 0);
  CHECK(cheat->evidence["zx_axes"]["scope_discipline"] == 60);
  CHECK(ZxScore(*cheat) == 39);
}

TEST_CASE("zx project_repair: hostile files get a grade, and paths zx-bench refuses run nothing",
          "[graders][zxbench]") {
  const json entry = PythonEntry();
  // A path out of the workspace: zx-bench's container runner throws before any test; nothing
  // runs here, test_pass 0: round((0 + 15 + 0 + 15 + 15) / 1) = 45.
  const auto escape = GradeHere(entry, "### file: ../calc.py\n```\n" + kFixed + "\n```");
  if (!escape) return;
  CHECK(escape->evidence["refused"] == "the workspace path '../calc.py' is refused");
  CHECK(escape->evidence["hidden_tests"].empty());
  CHECK(ZxScore(*escape) == 45);
  CHECK(escape->reason ==
        "0/0 hidden tests pass, 1 file(s) replaced, nothing ran: the workspace path "
        "'../calc.py' is refused");
  // More than 8 MiB of output fails the test, and the grade comes back.
  const auto flood = GradeHere(entry,
                               "### file: calc.py\n```\nimport sys\nsys.stdout.write('x' * "
                               "9000000)\n" +
                                   kFixed + "\n```");
  REQUIRE(flood);
  CHECK(flood->evidence["hidden_tests"][0]["output_limit_exceeded"] == true);
  CHECK(flood->evidence["zx_axes"]["test_pass"] == 0);
  // A harness failure pattern (P detectEnvironmentError) isolates the entry: kEnvError.
  const auto env = GradeHere(entry,
                             "### file: calc.py\n```\nimport sys\nsys.stderr.write('EACCES: "
                             "permission denied')\n" +
                                 kFixed + "\n```");
  REQUIRE(env);
  CHECK(env->status == GradeStatus::kEnvError);
  CHECK(env->reason ==
        "the test environment failed (EACCES permission denied): zx-bench isolates such entries "
        "as not the model's fault");
}

TEST_CASE("zx project_repair: what cannot run here is skipped at load, naming why",
          "[graders][zxbench]") {
  json entry = PythonEntry();
  const std::string here = ProjectRepair().Unrunnable(entry);
  CHECK((here.empty() || here.find("is not installed") != std::string::npos));
  SECTION("an image without a stand-in") {
    entry["language"] = "go";
    CHECK(ProjectRepair().Unrunnable(entry) ==
          "needs the Docker image golang:1.22-alpine: evalrun has no stand-in for it");
    entry["requirements"]["image"] = "rust:1-alpine";
    CHECK(ProjectRepair().Unrunnable(entry) ==
          "needs the Docker image rust:1-alpine: evalrun has no stand-in for it");
  }
  SECTION("the network") {
    entry["requirements"]["executionPolicy"] = {{"network", "required"}};
    CHECK(ProjectRepair().Unrunnable(entry) ==
          "needs the network (requirements.executionPolicy.network: required), which evalrun's "
          "sandbox never opens");
  }
  SECTION("a project path zx-bench refuses") {
    entry["requirements"]["files"][1]["path"] = "C:/x.md";
    CHECK(ProjectRepair().Unrunnable(entry) ==
          "zx-bench cannot run this entry: it refuses the workspace path 'C:/x.md'");
  }
  SECTION("without bubblewrap") {
    const std::unique_ptr<Sandbox> unsafe = MakeUnsafeSandbox();
    const Grade g = RunGrader(entry, "### calc.py\n```\n" + kFixed + "\n```", unsafe.get());
    CHECK(g.status == GradeStatus::kSkipped);
    CHECK(g.reason ==
          "project_repair tests run at /workspace, which needs the bubblewrap sandbox (install "
          "bubblewrap; --unsafe-no-sandbox cannot stand in)");
  }
  SECTION("an empty reply") {
    CHECK(RunGrader(entry, "\n ", &Bubblewrap()).status == GradeStatus::kNoAnswer);
  }
}

// Three more real bank entries (tests/fixtures/zx-bench/project_repair_real.json, copied from the
// bank at 0dafc912 with their scenarioHash checked): neither kind runs here yet, and the skip says
// why. The two C# projects restore NuGet packages first (executionPolicy.network: required,
// dependencyPreflight `dotnet restore`); the Go one runs `go test ./tests/hidden -run ...` in
// golang:1.22-alpine, for which evalrun has no stand-in (a `go test` builds and runs the model's
// code in one command, so Go's shared build cache would be open to it: see code_repair's Go).
TEST_CASE("zx project_repair: real C# and Go entries are skipped, naming why",
          "[graders][zxbench]") {
  const json real =
      json::parse(testing::ReadFixture("zx-bench/project_repair_real.json"))["entries"];
  REQUIRE(real.size() == 3);
  const std::string network =
      "needs the network (requirements.executionPolicy.network: required), which evalrun's "
      "sandbox never opens";
  const std::map<std::string, std::string> expected = {
      {"CP-L4-CS-001", network},
      {"CP-L4-CS-002", network},
      {"CP-L4-GO-001", "needs the Docker image golang:1.22-alpine: evalrun has no stand-in for it"}};
  for (const json& entry : real) {
    INFO(entry["id"]);
    CHECK(ProjectRepair().Unrunnable(entry) == expected.at(entry["id"].get<std::string>()));
    const Grade g = RunGrader(entry, "### main.go\n```go\npackage main\n```", &Bubblewrap());
    CHECK(g.status == GradeStatus::kSkipped);
    CHECK(g.reason == expected.at(entry["id"].get<std::string>()));
  }
}

TEST_CASE("zx project_repair: the registry holds it under its zx-bench name",
          "[graders][zxbench]") {
  const Grader* grader = GraderRegistry::Builtin().Find("zxbench:project_repair");
  REQUIRE(grader != nullptr);
  CHECK(grader->version() == "1");
}

}  // namespace
}  // namespace evalrun
