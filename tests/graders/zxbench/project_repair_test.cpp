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
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "graders/builtin.h"
#include "graders/grader.h"
#include "graders/zxbench/offline_packages.h"
#include "plugins/sandbox.h"
#include "tests/support/fixtures.h"
#include "tests/support/loopback_listener.h"
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

// Why an entry whose tests install packages over the network is skipped without
// --sandbox-network.
const std::string kNetwork =
    "needs the network (requirements.executionPolicy.network: required), which evalrun's sandbox "
    "opens only with --sandbox-network";

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
  CHECK(fix->evidence["stand_in"]["userland"] == "BusyBox applets and the host's node" + evalrun::testing::AlpineNc());

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
    entry["language"] = "csharp";
    CHECK(ProjectRepair().Unrunnable(entry) ==
          "needs the Docker image mcr.microsoft.com/dotnet/sdk:8.0: evalrun has no stand-in for "
          "it");
    entry["language"] = "php";
    CHECK(ProjectRepair().Unrunnable(entry) ==
          "needs the Docker image php:8.2-cli-alpine: evalrun has no stand-in for it");
    entry["requirements"]["image"] = "zxbench-java-spring:3.2.5";
    CHECK(ProjectRepair().Unrunnable(entry) ==
          "needs the Docker image zxbench-java-spring:3.2.5: evalrun has no stand-in for it");
  }
  SECTION("java's image stands in, or names the package it needs") {
    entry["language"] = "java";
    const std::string why = ProjectRepair().Unrunnable(entry);
    CHECK((why.empty() ||
           why.rfind("stands in for maven:3.9-eclipse-temurin-17-alpine") != std::string::npos));
  }
  SECTION("the network") {
    entry["requirements"]["executionPolicy"] = {{"network", "required"}};
    CHECK(ProjectRepair().NeedsNetwork(entry) == kNetwork);
    CHECK(ProjectRepair().Unrunnable(entry) == here);
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
// bank at 0dafc912 with their scenarioHash checked). The two C# projects restore NuGet packages
// first (executionPolicy.network: required, dependencyPreflight `dotnet restore`) in the .NET
// SDK's image, which has no stand-in: skipped for the image, with or without the network.
TEST_CASE("zx project_repair: the real C# entries need the .NET SDK's image and are skipped",
          "[graders][zxbench]") {
  const json real =
      json::parse(testing::ReadFixture("zx-bench/project_repair_real.json"))["entries"];
  REQUIRE(real.size() == 3);
  int csharp = 0;
  for (const json& entry : real) {
    if (entry["language"] != "csharp") continue;
    INFO(entry["id"]);
    ++csharp;
    const std::string image =
        "needs the Docker image mcr.microsoft.com/dotnet/sdk:8.0: evalrun has no stand-in for it";
    CHECK(ProjectRepair().Unrunnable(entry) == image);
    CHECK(ProjectRepair().NeedsNetwork(entry) == kNetwork);
    const Grade g = RunGrader(entry, "### Program.cs\n```csharp\nclass P {}\n```", &Bubblewrap());
    CHECK(g.status == GradeStatus::kSkipped);
    CHECK(g.reason == image);
  }
  CHECK(csharp == 2);
}

// CP-L4-GO-001: a KV HTTP server to give graceful shutdown, timeouts and health routes. Each
// hidden test is `go test ./tests/hidden -run X -v` in golang:1.22-alpine, and the test itself
// `go build`s the server and signals it. The stand-in is BusyBox and the host's go, with a cold
// build cache per test as each container has (P: weights test .35, api .15 (no functionName:
// not scored), static .30, output .10, scope .10; one keyword, 内存).
json GoEntry() {
  const json real = json::parse(testing::ReadFixture("zx-bench/project_repair_real.json"));
  for (const json& e : real["entries"]) {
    if (e["id"] == "CP-L4-GO-001") return e;
  }
  FAIL("CP-L4-GO-001 missing");
  return {};
}

std::string GoReply(const char* name) {
  static const json replies =
      json::parse(testing::ReadFixture("zx-bench/project_repair_answers.json"));
  return replies["CP-L4-GO-001"][name].get<std::string>();
}

// Each hidden test compiles the standard library cold (about 6 s with Go 1.19 here, 20 s with
// Go 1.24 in the Debian 13 chroot), so the two replies are two test cases.
TEST_CASE("zx project_repair: CP-L4-GO-001 runs its Go tests: the repair passes all five",
          "[graders][zxbench][slow]") {
  const json entry = GoEntry();
  const std::string here = ProjectRepair().Unrunnable(entry);
  CHECK((here.empty() || here == "go is not installed (Debian package golang-go): it stands in "
                                 "for golang:1.22-alpine"));
  // The fix: 5/5 hidden tests, the keyword, 3 files of 7 replaced: 100.
  const auto fix = GradeHere(entry, GoReply("fix"));
  if (!fix) return;
  INFO(fix->evidence.dump(1));
  CHECK(fix->status == GradeStatus::kGraded);
  CHECK(fix->reason == "5/5 hidden tests pass, 3 file(s) replaced");
  CHECK(ZxScore(*fix) == 100);
  CHECK(fix->evidence["image"] == "golang:1.22-alpine");
  CHECK_THAT(fix->evidence["stand_in"]["programs"]["go"].get<std::string>(),
             Catch::StartsWith("go version go1."));
  CHECK_THAT(fix->evidence["hidden_tests"][0]["stdout"].get<std::string>(),
             Catch::Contains("--- PASS: TestShutdownDrain"));
}

TEST_CASE("zx project_repair: CP-L4-GO-001 runs its Go tests: the server as given fails them",
          "[graders][zxbench][slow]") {
  // The server returned unchanged: SIGTERM kills it (Go reports -1 for a signal) and the in-flight
  // request is cut. Two of the five hidden tests (TestShutdownDrain, TestDoubleSignal) are
  // enough to show it; 0/2, no keyword: round((10 + 10) / .85) = 24, as with 0/5.
  json entry = GoEntry();
  json& tests = entry["requirements"]["hiddenTests"];
  tests = json::array({tests[0], tests[1]});
  const auto given = GradeHere(entry, GoReply("as_given"));
  if (!given) return;
  INFO(given->evidence.dump(1));
  CHECK(given->reason == "0/2 hidden tests pass, 1 file(s) replaced");
  CHECK(ZxScore(*given) == 24);
  CHECK_THAT(given->evidence["hidden_tests"][0]["stdout"].get<std::string>(),
             Catch::Contains("--- FAIL: TestShutdownDrain"));
  CHECK_THAT(given->evidence["hidden_tests"][1]["stdout"].get<std::string>(),
             Catch::Contains("--- FAIL: TestDoubleSignal"));
}

// A Go module that asks for Go 1.22 and a reply that needs it (range over an int, min). The
// image's Go 1.22 builds it; a host Go older than that fails with Go's own "note: module requires
// Go 1.22", and the entry is an environment error naming the versions, never the model's 0.
TEST_CASE("zx project_repair: a Go build that fails only on an older host Go is not scored",
          "[graders][zxbench]") {
  const json entry = {
      {"id", "PR-GO"},
      {"dimension", "program"},
      {"language", "go"},
      {"grader", "project_repair"},
      {"scoring", {{"type", "project_repair"}}},
      {"requirements",
       {{"files", json::array({{{"path", "go.mod"}, {"content", "module example.com/x\n\ngo 1.22\n"}},
                               {{"path", "x.go"}, {"content", "package x\n\nfunc Sum() int { return 0 }\n"}}})},
        {"hiddenTestFiles",
         json::array({{{"path", "x_test.go"},
                       {"content", "package x\n\nimport \"testing\"\n\nfunc TestSum(t *testing.T) "
                                   "{\n\tif Sum() != 3 {\n\t\tt.Fatal(Sum())\n\t}\n}\n"}}})},
        {"hiddenTests", json::array({{{"description", "sum"}, {"script", "go test ./... -v"}}})}}}};
  const std::string modern =
      "### file: x.go\n```go\npackage x\n\nfunc Sum() int {\n\ts := 0\n\tfor i := range 3 "
      "{\n\t\ts += i\n\t}\n\treturn min(s, 9)\n}\n```\n";
  const auto g = GradeHere(entry, modern);
  if (!g) return;
  const std::string go = g->evidence["stand_in"]["programs"]["go"].get<std::string>();
  INFO(go << "\n" << g->evidence["hidden_tests"].dump(1));
  int minor = 0;
  if (go.rfind("go version go1.", 0) == 0) minor = std::stoi(go.substr(15));
  REQUIRE(minor > 0);
  if (minor >= 22) {
    CHECK(g->status == GradeStatus::kGraded);
    CHECK(g->reason == "1/1 hidden tests pass, 1 file(s) replaced");
    return;
  }
  const std::string host = go.substr(11, go.find(' ', 11) - 11);  // "go1.19.8"
  CHECK(g->status == GradeStatus::kEnvError);
  CHECK(g->reason == "the host's Go (" + host +
                         ") is older than the module's Go 1.22 and a build failed on it (\"note: "
                         "module requires Go 1.22\"): the image's Go would have built it, so the "
                         "entry is not scored; install Go 1.22 or later as `go` (Debian 13's "
                         "golang-go)");
  // Go 1.19 adds the note to every failed build of the module, the model's own errors too, and
  // evalrun does not guess which is which: not scored either.
  const auto broken = GradeHere(entry, "### file: x.go\n```go\npackage x\n\nfunc Sum() int { "
                                       "return undefinedName }\n```\n");
  REQUIRE(broken);
  CHECK(broken->status == GradeStatus::kEnvError);
  // A module asking for more than the image's Go 1.22 fails in zx-bench too: the model's 0.
  json newer = entry;
  newer["requirements"]["files"][0]["content"] = "module example.com/x\n\ngo 1.23\n";
  const auto too_new = GradeHere(newer, modern);
  REQUIRE(too_new);
  CHECK(too_new->status == GradeStatus::kGraded);
  CHECK(too_new->reason == "0/1 hidden tests pass, 1 file(s) replaced");
}

// The other sixteen project_repair entries of the bank (tests/fixtures/zx-bench/
// project_repair_bank.json, hashes checked). Five install packages over the network
// (executionPolicy.network: required: pip, npm, cargo fetch); three need an image evalrun has no
// stand-in for (a private Spring image with its Maven repository, Rust, a PostgreSQL server);
// the other eight run. Five of them are run here with one project file returned unchanged: the
// hidden tests run and fail for the model's reasons, and the axes are P's (the project's own
// weights: test .35, api .15, static .30, output .10, scope .10).
TEST_CASE("zx project_repair: the bank's other project entries run or are skipped naming why",
          "[graders][zxbench]") {
  const json bank = json::parse(testing::ReadFixture("zx-bench/project_repair_bank.json"));
  std::map<std::string, json> entries;
  for (const json& e : bank["entries"]) entries[e["id"].get<std::string>()] = e;
  REQUIRE(entries.size() == 16);
  const auto no_stand_in = [](const std::string& image) {
    return "needs the Docker image " + image + ": evalrun has no stand-in for it";
  };
  // npm: the network (with --sandbox-network they run where npm is installed). PY-001's pip
  // install of requests runs offline on Debian's copy, RS-001's cargo fetch of tokio on Debian's
  // crate sources.
  const std::set<std::string> network = {"CP-L4-TS-001", "CP-L4-TS-002", "CP-L4-TS-003"};
  const std::map<std::string, std::string> skipped = {
      {"CP-L4-JV-001", no_stand_in("zxbench-java-spring:3.2.5")}};
  for (const auto& [id, entry] : entries) {
    INFO(id);
    const std::string why = ProjectRepair().Unrunnable(entry);
    if (id != "CP-L4-PY-001" && id != "CP-L4-RS-001") {
      CHECK(ProjectRepair().NeedsNetwork(entry) == (network.count(id) ? kNetwork : ""));
    }
    if (const auto it = skipped.find(id); it != skipped.end()) {
      CHECK(why == it->second);
    } else if (network.count(id)) {
      CHECK((why.empty() ||
             why == kNetwork + "; its tests install packages with npm, which is not installed (npm)"));
    } else if (id == "CP-L4-RS-001") {
      const std::string need = ProjectRepair().NeedsNetwork(entry);
      CHECK(need == (evalrun::zx::DebianCrate("tokio").empty()
                         ? kNetwork + ": its tests build with the crate tokio; with Debian's "
                                      "librust-tokio-dev installed, they build offline from "
                                      "Debian's crate sources (/usr/share/cargo/registry)"
                         : ""));
    } else if (id == "CP-L4-PY-001") {
      CHECK((why.empty() || why.find("is not installed") != std::string::npos));
      const std::string need = ProjectRepair().NeedsNetwork(entry);
      CHECK((need.empty() || need == kNetwork + ": its tests install requests; with Debian's "
                                                "python3-requests installed, they run offline on "
                                                "the host's copy"));
    } else {
      // Runs here, or names the package its stand-in needs.
      CHECK((why.empty() || why.find("is not installed (Debian package") != std::string::npos));
    }
  }
  // One project file returned as it was.
  const auto as_given = [&](const std::string& id) {
    const json& file = entries.at(id)["requirements"]["files"][0];
    std::string content = file["content"].get<std::string>();
    if (content.back() != '\n') content += '\n';
    return GradeHere(entries.at(id),
                     "### file: " + file["path"].get<std::string>() + "\n```\n" + content + "```\n");
  };
  struct Row {
    const char* id;
    const char* reason;
    int score;
    const char* first_output;  // in the first hidden test's stdout or stderr
  };
  const std::vector<Row> rows = {
      // 2/6 (TTL and concurrency already hold): round((33 * .35 + 100 * .15 + 50 * .30 + 10 +
      // 10) / 1) = 62; "retry" and "stream" of four keywords are in gateway.py.
      {"CP-L4-PY-002", "2/6 hidden tests pass, 1 file(s) replaced", 62, "retry_after"},
      // 2/5: round((40 * .35 + 15 + 0 + 10 + 10) / 1) = 49.
      {"CP-L4-PY-004", "2/5 hidden tests pass, 1 file(s) replaced", 49, ""},
      // No functionName (api unscored), one keyword of five: round((0 + 6 + 10 + 10) / .85) = 31.
      {"CP-L4-SH-001", "0/5 hidden tests pass, 1 file(s) replaced", 31, "FAIL: "},
      // The project does not build as given (parser.h uses size_t and Session unseen):
      // round((0 + 15 + 0 + 10 + 10) / 1) = 35.
      {"CP-L4-CC-001", "0/5 hidden tests pass, 1 file(s) replaced", 35, "BUILD-FAIL"},
      // javac and java in the maven image's stand-in: round((0 + 6 + 10 + 10) / .85) = 31.
      {"CP-L4-JV-002", "0/5 hidden tests pass, 1 file(s) replaced", 31, "FAIL: TaskQueue"},
      // The missing price already reads 0 and the writer already writes all 1500 rows; the
      // retry test patches `time.sleep`, which api_fetcher does not import: 2/3.
      // round(67 * .35 + 15 + 0 + 10 + 10) = 58.
      {"CP-L4-PY-001", "2/3 hidden tests pass, 1 file(s) replaced", 58, "Ran 1 test"},
      // No V2 migration but the bad one: every test stops at need_v2, after starting PostgreSQL
      // and seeding. round((0 + 0 + 10 + 10) / .85) = 24.
      {"CP-L4-SQL-001", "0/5 hidden tests pass, 1 file(s) replaced", 24,
       "FAIL: 未找到重写后的 V2 迁移"},
      // The crate does not build as given (iter.rs calls Shard::entries, which is not there):
      // no functionName, no keyword in Cargo.toml, round((0 + 0 + 10 + 10) / .85) = 24.
      {"CP-L4-RS-002", "0/5 hidden tests pass, 1 file(s) replaced", 24,
       "no method named `entries`"},
  };
  for (const Row& row : rows) {
    INFO(row.id);
    const auto g = as_given(row.id);
    if (!g) continue;  // a stand-in's program is missing here
    INFO(g->evidence.dump(1));
    CHECK(g->status == GradeStatus::kGraded);
    CHECK(g->reason == row.reason);
    CHECK(ZxScore(*g) == row.score);
    const json& first = g->evidence["hidden_tests"][0];
    CHECK_THAT(first["stdout"].get<std::string>() + first["stderr"].get<std::string>(),
               Catch::Contains(row.first_output));
  }
}

json BankEntry(const std::string& id) {
  const json bank = json::parse(testing::ReadFixture("zx-bench/project_repair_bank.json"));
  for (const json& e : bank["entries"]) {
    if (e["id"] == id) return e;
  }
  FAIL(id << " missing");
  return {};
}

std::string BankReply(const std::string& id) {
  static const json replies =
      json::parse(testing::ReadFixture("zx-bench/project_repair_answers.json"));
  return replies[id]["fix"].get<std::string>();
}

// CP-L4-SQL-001: zero-downtime migration, rollback and a report on PostgreSQL. Each hidden test
// is a bash script that makes its own database on the server zx-bench starts first (initdb and
// pg_ctl as the postgres:15 image's user, 180 s), seeds up to a million rows and times writes
// during the migration. The stand-in is the host's PostgreSQL (15 on Debian 12, 17 on Debian 13)
// with /tmp on disk. The repair (its backfill paused between batches, so the test's inserts keep
// their share of a loaded machine): 5/5, three keywords of three, four files: 100 (P: no
// functionName).
TEST_CASE("zx project_repair: CP-L4-SQL-001 runs on a PostgreSQL server: the repair passes all five",
          "[graders][zxbench][slow]") {
  const json entry = BankEntry("CP-L4-SQL-001");
  const std::string here = ProjectRepair().Unrunnable(entry);
  CHECK((here.empty() || here.find("is not installed (Debian package postgresql") !=
                                std::string::npos));
  const auto fix = GradeHere(entry, BankReply("CP-L4-SQL-001"));
  if (!fix) return;
  INFO(fix->evidence.dump(1));
  CHECK(fix->status == GradeStatus::kGraded);
  CHECK(fix->reason == "5/5 hidden tests pass, 4 file(s) replaced");
  CHECK(ZxScore(*fix) == 100);
  CHECK(fix->evidence["image"] == "postgres:15");
  CHECK_THAT(fix->evidence["stand_in"]["programs"]["postgres"].get<std::string>(),
             Catch::StartsWith("postgres (PostgreSQL) "));
  CHECK_THAT(fix->evidence["hidden_tests"][0]["stdout"].get<std::string>(),
             Catch::Contains("PASS: 迁移期间写可用性达标"));
  CHECK_THAT(fix->evidence["hidden_tests"][4]["stdout"].get<std::string>(),
             Catch::Contains("PASS: 等价性通过、性能达标"));
}

// CP-L4-RS-002: a sharded concurrent map to make deadlock-free and atomic. Each hidden test is a
// `cargo test` in rust:1-alpine; the stand-in is BusyBox with the host's cargo and rustc (and cc
// as the linker), offline, the target directory fresh per test. The repair: 5/5, both keywords,
// four files: 100.
TEST_CASE("zx project_repair: CP-L4-RS-002 runs its cargo tests: the repair passes all five",
          "[graders][zxbench][slow]") {
  const json entry = BankEntry("CP-L4-RS-002");
  const std::string here = ProjectRepair().Unrunnable(entry);
  CHECK((here.empty() || here.find("stands in for rust:1-alpine") != std::string::npos));
  const auto fix = GradeHere(entry, BankReply("CP-L4-RS-002"));
  if (!fix) return;
  INFO(fix->evidence.dump(1));
  CHECK(fix->status == GradeStatus::kGraded);
  CHECK(fix->reason == "5/5 hidden tests pass, 4 file(s) replaced");
  CHECK(ZxScore(*fix) == 100);
  CHECK(fix->evidence["image"] == "rust:1-alpine");
  CHECK(fix->evidence["stand_in"]["userland"] ==
        "BusyBox applets and the host's cargo, rustc, rustdoc, cc, gcc, ld, as" +
            evalrun::testing::AlpineNc());
  CHECK_THAT(fix->evidence["hidden_tests"][0]["stdout"].get<std::string>(),
             Catch::Contains("test cross_iter_write_no_deadlock ... ok"));
}

// The same repair with one let-else statement (Rust 1.65). The image's newest Rust builds it; a
// host rustc older than 1.65 (Debian 12's 1.63) reports it unstable (E0658), and the entry is an
// environment error naming the versions, never the model's 0.
TEST_CASE("zx project_repair: a Rust build that fails only on an older host rustc is not scored",
          "[graders][zxbench]") {
  json entry = BankEntry("CP-L4-RS-002");
  json& tests = entry["requirements"]["hiddenTests"];
  tests = json::array({tests[1]});  // get_or_insert 唯一性
  static const json replies =
      json::parse(testing::ReadFixture("zx-bench/project_repair_answers.json"));
  const auto g = GradeHere(entry, replies["CP-L4-RS-002"]["fix_let_else"].get<std::string>());
  if (!g) return;
  INFO(g->evidence.dump(1));
  const std::string rustc = g->evidence["stand_in"]["programs"]["rustc"].get<std::string>();
  REQUIRE_THAT(rustc, Catch::StartsWith("rustc 1."));
  if (std::stoi(rustc.substr(8)) < 65) {
    CHECK(g->status == GradeStatus::kEnvError);
    CHECK(g->reason == "the host's Rust (" + rustc +
                           ") is older than rust:1-alpine's newest stable Rust and a build failed "
                           "on what it lacks (\"error[E0658]: `let...else` statements are "
                           "unstable\"): the image's Rust would have built it, so the entry is not "
                           "scored; install a newer rustc and cargo as `rustc` and `cargo` "
                           "(Debian 13's are 1.85)");
  } else {
    CHECK(g->status == GradeStatus::kGraded);
    CHECK(g->reason == "1/1 hidden tests pass, 4 file(s) replaced");
  }
}

// CP-L4-RS-001: a tokio server to make lock-safe, cancel-safe, bounded and gracefully stopping.
// Its tests `cargo fetch` tokio (executionPolicy.network: required); here Debian's crate sources
// stand in for crates.io (tokio 1.24, and the tokio-util and anyhow the repair adds). Two of its
// five hidden tests: the bounded channel under a 5000-request pipeline, and the shell script that
// waits for the port with `nc -z` (Alpine's BusyBox has it; the host's netcat-openbsd stands in),
// sends SIGTERM with a half request open and wants exit 0 within 5 s.
TEST_CASE("zx project_repair: CP-L4-RS-001 builds offline from Debian's crate sources",
          "[graders][zxbench][slow]") {
  json entry = BankEntry("CP-L4-RS-001");
  if (const std::string need = ProjectRepair().NeedsNetwork(entry); !need.empty()) {
    WARN("Debian's crate sources are not installed here, not tested: " << need);
    return;
  }
  json& tests = entry["requirements"]["hiddenTests"];
  tests = json::array({tests[2], tests[3]});  // 有界背压, 优雅关闭时限
  const auto fix = GradeHere(entry, BankReply("CP-L4-RS-001"));
  if (!fix) return;
  INFO(fix->evidence.dump(1));
  CHECK(fix->status == GradeStatus::kGraded);
  CHECK(fix->reason == "2/2 hidden tests pass, 6 file(s) replaced");
  CHECK_THAT(fix->evidence["offline_dependencies"]["tokio"].get<std::string>(),
             Catch::Matches("librust-tokio-dev 1\\.[0-9.]+, Debian's crate sources in "
                            "/usr/share/cargo/registry \\(cargo would download the newest\\)"));
  CHECK_THAT(fix->evidence["hidden_tests"][0]["stderr"].get<std::string>(),
             Catch::Contains("Compiling tokio-util v0."));
  CHECK_THAT(fix->evidence["hidden_tests"][1]["stdout"].get<std::string>(),
             Catch::StartsWith("SHUTDOWN-OK"));
}

// A reply that adds a crate Debian's sources lack: zx-bench's container would have downloaded
// it, so the build's failure is the stand-in's and the entry an environment error naming the
// package, never the model's 0.
TEST_CASE("zx project_repair: a crate missing from Debian's sources is not the model's failure",
          "[graders][zxbench]") {
  json entry = BankEntry("CP-L4-RS-001");
  if (const std::string need = ProjectRepair().NeedsNetwork(entry); !need.empty()) {
    WARN("Debian's crate sources are not installed here, not tested: " << need);
    return;
  }
  json& tests = entry["requirements"]["hiddenTests"];
  tests = json::array({tests[2]});
  const auto g = GradeHere(entry,
                           "### file: Cargo.toml\n```toml\n[package]\nname = \"kv-server\"\n"
                           "version = \"0.1.0\"\nedition = \"2021\"\n[dependencies]\n"
                           "tokio = { version = \"1\", features = [\"full\"] }\n"
                           "zxbench-no-such-crate = \"1\"\n```\n");
  if (!g) return;
  INFO(g->evidence.dump(1));
  CHECK(g->status == GradeStatus::kEnvError);
  CHECK(g->reason ==
        "the crate zxbench-no-such-crate (or the version asked for) is not in Debian's crate "
        "sources, which stand in for crates.io here (/usr/share/cargo/registry): zx-bench's "
        "container would have downloaded it, so the entry is not scored; install Debian's "
        "librust-zxbench-no-such-crate-dev or grade with --sandbox-network");
}

// CP-L4-PY-001: its tests `pip install requests` (executionPolicy.network: required); here the
// host's Debian python3-requests stands in for the download, named in the evidence. The repair:
// 3/3, the entry function kept, three keywords of three: 100.
TEST_CASE("zx project_repair: CP-L4-PY-001 runs offline on Debian's requests: the repair passes",
          "[graders][zxbench]") {
  const json entry = BankEntry("CP-L4-PY-001");
  const auto fix = GradeHere(entry, BankReply("CP-L4-PY-001"));
  if (!fix) return;
  INFO(fix->evidence.dump(1));
  CHECK(fix->status == GradeStatus::kGraded);
  CHECK(fix->reason == "3/3 hidden tests pass, 5 file(s) replaced");
  CHECK(ZxScore(*fix) == 100);
  CHECK_THAT(fix->evidence["offline_dependencies"]["requests"].get<std::string>(),
             Catch::Matches("python3-requests [0-9.]+(\\+[a-z0-9]+)?(-[0-9]+)?, the host's \\(pip "
                            "would download the newest\\)"));
}

// Which preflights run offline: one `pip install` of packages Debian installed for the host's
// python3; anything else (npm, cargo, a requirements file, a second command, a package the host
// lacks, a non-Python image) still needs the network, and says which package would do.
TEST_CASE("zx project_repair: a network preflight runs offline only on the host's Debian copies",
          "[graders][zxbench]") {
  json entry = BankEntry("CP-L4-PY-001");
  json& preflight = entry["requirements"]["executionPolicy"]["dependencyPreflight"]["command"];
  const auto why = [&](const std::string& command) {
    preflight = command;
    return ProjectRepair().NeedsNetwork(entry);
  };
  CHECK(why("python3 -m pip install -q --target /tmp/x zxbench-no-such_package==1") ==
        kNetwork + ": its tests install zxbench-no-such_package; with Debian's "
                  "python3-zxbench-no-such-package installed, they run offline on the host's "
                  "copy");
  // Runs where python3-requests is installed (scripts/install-deps.sh installs it).
  const std::string requests = why("pip install --no-cache-dir requests");
  CHECK((requests.empty() || requests.find("with Debian's python3-requests installed") !=
                                 std::string::npos));
  CHECK(why("pip install 'requests>=2'") == kNetwork);      // quoting is not parsed
  for (const char* command :
       {"npm install --ignore-scripts", "CARGO_HOME=/tmp/.cargo cargo fetch",
        "pip install -r requirements.txt", "pip install requests && curl http://x",
        "python -m pip install", "pip download requests"}) {
    INFO(command);
    CHECK(why(command) == kNetwork);
  }
  entry["language"] = "javascript";
  CHECK(why("pip install requests") == kNetwork);
}

// --sandbox-network (GradeContext::network): an entry whose tests need the network runs on the
// host's, and only then. The entry's hidden test connects to a port this test listens on at the
// host's 127.0.0.1, which the sandbox's own network namespace never reaches.
TEST_CASE("zx project_repair: with --sandbox-network the tests reach the host's network",
          "[graders][zxbench]") {
  const testing::LoopbackListener listener;
  REQUIRE(listener.ok());
  const json entry = {
      {"id", "PR-NET"},
      {"language", "javascript"},
      {"grader", "project_repair"},
      {"requirements",
       {{"files", json::array({{{"path", "index.js"}, {"content", "module.exports = 1;\n"}}})},
        {"hiddenTests",
         json::array({{{"description", "reaches the host"},
                       {"script", listener.NodeProbe()}}})},
        {"executionPolicy",
         {{"network", "required"}, {"dependencyPreflight", {{"command", "node -e 1"}}}}}}}};
  const std::string reply = "### index.js\n```js\nmodule.exports = 2;\n```\n";
  if (const std::string here = ProjectRepair().Unrunnable(entry); !here.empty()) {
    CHECK(here == "node is not installed (Debian package nodejs): it stands in for node:20-alpine");
    return;
  }
  CHECK(ProjectRepair().NeedsNetwork(entry) == kNetwork);
  Answer answer;
  answer.text = reply;
  GradeContext context;
  context.sandbox = &Bubblewrap();
  const Grade offline = ProjectRepair().Run(entry, answer, context);
  CHECK(offline.status == GradeStatus::kSkipped);
  CHECK(offline.reason == kNetwork);
  context.network = true;
  if (const auto why = Bubblewrap().Unavailable()) {
    WARN("bubblewrap unavailable: " << *why);
    return;
  }
  const Grade online = ProjectRepair().Run(entry, answer, context);
  INFO(online.evidence.dump(1));
  CHECK(online.status == GradeStatus::kGraded);
  CHECK(online.reason == "1/1 hidden tests pass, 1 file(s) replaced");
  CHECK(online.evidence["hidden_tests"][0]["stdout"] == "REACHED\n");
  CHECK(online.evidence["network"] ==
        "the host's, for the tests' package installs (--sandbox-network), as zx-bench's container "
        "has");
  // A package manager the host lacks: skipped with or without the network, naming it.
  json missing = entry;
  missing["requirements"]["executionPolicy"]["dependencyPreflight"]["command"] =
      "zxbench-no-such-tool install";
  CHECK(ProjectRepair().Unrunnable(missing) ==
        kNetwork + "; its tests install packages with zxbench-no-such-tool, which is not installed");
  missing["requirements"]["executionPolicy"]["dependencyPreflight"]["command"] = "npm ci";
  const std::string npm = ProjectRepair().Unrunnable(missing);
  CHECK((npm.empty() ||
         npm == kNetwork + "; its tests install packages with npm, which is not installed (npm)"));
}

TEST_CASE("zx project_repair: the registry holds it under its zx-bench name",
          "[graders][zxbench]") {
  const Grader* grader = GraderRegistry::Builtin().Find("zxbench:project_repair");
  REQUIRE(grader != nullptr);
  CHECK(grader->version() == "1");
}

}  // namespace
}  // namespace evalrun
