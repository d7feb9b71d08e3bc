#include "graders/native/repo_tests.h"

#include <filesystem>
#include <fstream>
#include <map>

#include "tests/support/catch.h"

#include "graders/grader.h"

// The repo_tests grader through GradeOutput, against a small Python project with a real bug
// (add subtracts), unittest tests, and a hidden test; the bubblewrap sandbox runs them (tests
// return early, with a warning, where it cannot start).

namespace evalrun {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const Sandbox& Bubblewrap() {
  static const std::unique_ptr<Sandbox> sandbox = MakeBubblewrapSandbox();
  return *sandbox;
}

bool HaveBubblewrap() {
  if (auto why = Bubblewrap().Unavailable()) {
    WARN("bubblewrap unavailable, repo_tests not tested: " << *why);
    return false;
  }
  return true;
}

const std::vector<RepoFile> kRepo = {
    {"calc.py", "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n", false},
    {"tests/__init__.py", "", false},
    {"tests/test_calc.py",
     "import unittest\n\nimport calc\n\n\nclass CalcTests(unittest.TestCase):\n"
     "    def test_sub(self):\n        self.assertEqual(calc.sub(5, 3), 2)\n",
     false}};

const char* kHidden =
    "import unittest\n\nimport calc\n\n\nclass HiddenTests(unittest.TestCase):\n"
    "    def test_add(self):\n        self.assertEqual(calc.add(2, 3), 5)\n";

struct Fixture {
  Fixture() {
    for (const auto& f : kRepo) suite["repo/" + f.path] = f.content;
    suite["files/test_hidden.py"] = kHidden;
    json listed = json::array();
    for (const auto& f : kRepo) listed.push_back({{"path", f.path}, {"executable", false}});
    task.id = "calc-add";
    task.grader = {{"type", "repo_tests"}};
    task.agent = {{"kind", "repo"},
                  {"repo", {{"path", "repo"}, {"base_tree", GitTreeId(kRepo)}, {"files", listed}}},
                  {"test_cmd", "python3 -m unittest -v"},
                  {"log_parser", "unittest"},
                  {"hidden_tests", {{{"from", "files/test_hidden.py"}, {"to", "tests/test_hidden.py"}}}},
                  {"protected", {"tests"}},
                  {"fail_to_pass", {"tests.test_hidden.HiddenTests.test_add"}},
                  {"pass_to_pass", {"tests.test_calc.CalcTests.test_sub"}},
                  {"limits", {{"wall_s", 60}}}};
    context.read_file = [this](const std::string& path) -> std::optional<std::string> {
      const auto it = suite.find(path);
      if (it == suite.end()) return std::nullopt;
      return it->second;
    };
    context.sandbox = &Bubblewrap();
  }

  // The diff an agent leaves after `edit` changes a workspace at the base.
  std::string DiffAfter(const std::function<void(const fs::path&)>& edit) {
    const auto ws = RepoWorkspace::Create(ParseRepoTask(task.agent), context.read_file);
    edit(ws->path());
    return ws->Diff().patch;
  }

  Grade GradeDiff(const std::string& diff) {
    Output output;
    output.content = json{{"diff", diff}, {"termination_reason", "completed"}, {"submitted", true}}.dump();
    return GradeOutput(task, output, context);
  }

  std::map<std::string, std::string> suite;
  Task task;
  GradeContext context;
};

void Write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

TEST_CASE("repo_tests: a fix resolves the task", "[repo_tests][sandbox]") {
  if (!HaveBubblewrap()) return;
  Fixture f;
  const std::string diff = f.DiffAfter([](const fs::path& root) {
    Write(root / "calc.py", "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n");
  });
  const Grade grade = f.GradeDiff(diff);
  INFO(grade.evidence.dump(2));
  CHECK(grade.status == GradeStatus::kGraded);
  CHECK(grade.passed);
  CHECK(grade.score == 1);
  CHECK(grade.grader == "repo_tests");
  CHECK(grade.reason == "resolved: every fail_to_pass and pass_to_pass test passes");
  CHECK(grade.evidence["fail_to_pass"] == json{{"tests.test_hidden.HiddenTests.test_add", "passed"}});
  CHECK(grade.evidence["pass_to_pass"] == json{{"tests.test_calc.CalcTests.test_sub", "passed"}});
  CHECK(grade.evidence["diff_applied"] == true);
  CHECK(grade.evidence["submitted"] == true);
  CHECK(grade.evidence["log_tail"].get<std::string>().find("Ran 2 tests") != std::string::npos);
}

TEST_CASE("repo_tests: doing nothing does not resolve", "[repo_tests][sandbox]") {
  if (!HaveBubblewrap()) return;
  Fixture f;
  const Grade grade = f.GradeDiff("");
  CHECK(grade.status == GradeStatus::kGraded);
  CHECK_FALSE(grade.passed);
  CHECK(grade.score == 0);
  CHECK(grade.reason == "not resolved: fail_to_pass tests.test_hidden.HiddenTests.test_add failed");
}

TEST_CASE("repo_tests: editing the tests instead of the code does not resolve",
          "[repo_tests][sandbox]") {
  if (!HaveBubblewrap()) return;
  Fixture f;
  // Patches calc.add from the test package and plants its own hidden test: both undone, since
  // tests/ is protected and hidden test destinations always are.
  const std::string diff = f.DiffAfter([](const fs::path& root) {
    Write(root / "tests/__init__.py", "import calc\ncalc.add = lambda a, b: a + b\n");
    Write(root / "tests/test_hidden.py",
          "import unittest\n\nclass HiddenTests(unittest.TestCase):\n"
          "    def test_add(self):\n        pass\n");
  });
  REQUIRE(diff.find("tests/__init__.py") != std::string::npos);
  const Grade grade = f.GradeDiff(diff);
  CHECK(grade.status == GradeStatus::kGraded);
  CHECK_FALSE(grade.passed);
  CHECK(grade.evidence["fail_to_pass"] == json{{"tests.test_hidden.HiddenTests.test_add", "failed"}});

  SECTION("without protection the same diff would pass: the restore is what stops it") {
    f.task.agent["protected"] = json::array();
    f.task.agent["hidden_tests"] = json::array();
    f.task.agent["fail_to_pass"] = {"tests.test_hidden.HiddenTests.test_add"};
    const Grade unprotected = f.GradeDiff(diff);
    CHECK(unprotected.passed);
  }
}

TEST_CASE("repo_tests: a diff that does not apply is graded 0 with the reason",
          "[repo_tests][sandbox]") {
  if (!HaveBubblewrap()) return;
  Fixture f;
  const std::string diff =
      "diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n"
      " def nothing_like_this():\n-    return 0\n+    return 1\n";
  const Grade grade = f.GradeDiff(diff);
  CHECK(grade.status == GradeStatus::kGraded);
  CHECK(grade.score == 0);
  CHECK(grade.reason.rfind("not resolved: the diff does not apply: ", 0) == 0);
  CHECK(grade.evidence["diff_applied"] == false);
}

TEST_CASE("repo_tests: a run that says nothing is invalid: not resolved, never a pass",
          "[repo_tests][sandbox]") {
  if (!HaveBubblewrap()) return;
  Fixture f;
  // After the agent's diff, a run that says nothing can be the change's doing, so it counts as
  // not resolved (score 0) rather than leaving the task out of the score as env_error would.
  SECTION("no tests in the log") {
    f.task.agent["test_cmd"] = "echo nothing here";
    const Grade grade = f.GradeDiff("");
    CHECK(grade.status == GradeStatus::kGraded);
    CHECK_FALSE(grade.passed);
    CHECK(grade.score == 0);
    CHECK(grade.reason ==
          "not resolved: invalid run: no test results in the log of 'echo nothing here' (exit "
          "code 0, log parser unittest)");
  }
  SECTION("code that exits at import leaves no test in the log") {
    const std::string diff = f.DiffAfter([](const fs::path& root) {
      Write(root / "calc.py", "import os\nos._exit(0)\n");
    });
    const Grade grade = f.GradeDiff(diff);
    CHECK(grade.status == GradeStatus::kGraded);
    CHECK(grade.score == 0);
    CHECK_THAT(grade.reason, Catch::StartsWith("not resolved: invalid run: "));
  }
  SECTION("a failing exit with no failed test") {
    f.task.agent["test_cmd"] = "python3 -m unittest -v tests.test_calc; exit 4";
    const Grade grade = f.GradeDiff("");
    CHECK(grade.status == GradeStatus::kGraded);
    CHECK(grade.reason ==
          "not resolved: invalid run: 'python3 -m unittest -v tests.test_calc; exit 4' exited "
          "with code 4 but no test failed");
  }
  SECTION("setup fails") {
    f.task.agent["setup"] = "exit 7";
    const Grade grade = f.GradeDiff("");
    CHECK(grade.status == GradeStatus::kGraded);
    CHECK(grade.reason == "not resolved: invalid run: setup failed with exit code 7");
  }
  SECTION("a hidden test missing from the suite is evalrun's side: env_error") {
    f.suite.erase("files/test_hidden.py");
    const Grade grade = f.GradeDiff("");
    CHECK(grade.status == GradeStatus::kEnvError);
    CHECK(grade.reason ==
          "invalid run: the hidden test 'files/test_hidden.py' cannot be read from the suite");
  }
}

TEST_CASE("repo_tests: no sandbox is skipped, a malformed episode is an env error",
          "[repo_tests]") {
  Fixture f;
  f.context.sandbox = nullptr;
  Grade grade = f.GradeDiff("");
  CHECK(grade.status == GradeStatus::kSkipped);
  CHECK_FALSE(grade.passed);
  CHECK(grade.reason ==
        "no sandbox to run the repository's tests in (install bubblewrap, or accept the risk with "
        "--unsafe-no-sandbox)");
  f.context.sandbox = &Bubblewrap();
  if (!HaveBubblewrap()) return;
  Output output;
  output.content = "not json";
  grade = GradeOutput(f.task, output, f.context);
  CHECK(grade.status == GradeStatus::kEnvError);
  CHECK(grade.reason == "the episode record is not a JSON object with a 'diff' string");
}

TEST_CASE("repo_tests: is registered, grades episodes, and takes no spec keys", "[repo_tests]") {
  const Grader* grader = GraderRegistry::Builtin().Find("repo_tests");
  REQUIRE(grader != nullptr);
  CHECK(grader->grades_episode());
  CHECK_THROWS_WITH(grader->CheckSpec({{"type", "repo_tests"}, {"tets", 1}}, {"t.yaml", 3, 5}),
                    "t.yaml:3:5: repo_tests grader: key 'tets': unknown key");
}

}  // namespace
}  // namespace evalrun
