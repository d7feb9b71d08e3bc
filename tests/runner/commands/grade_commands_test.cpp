// Every built-in smoke task graded with a correct and a wrong output: pass and fail.
#include "runner/commands/grade_commands.h"

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>

#include "tests/support/catch.h"
#include <nlohmann/json.hpp>

#include "graders/grader.h"
#include "plugins/sandbox.h"
#include "plugins/mock_server.h"
#include "runner/suite_loader.h"
#include "tests/support/fixtures.h"

using namespace evalrun;

namespace {
const std::string kSmoke = std::string(EVALRUN_TEST_FIXTURES) + "/../../tasks/smoke";
}

TEST_CASE("grade: every smoke task passes its correct output and fails a wrong one",
          "[grade][tasks]") {
  const LoadedSuite loaded = LoadSuite(kSmoke, ResolveOptions{});
  const auto outputs = nlohmann::json::parse(testing::ReadFixture("smoke-outputs/outputs.json"));
  const std::unique_ptr<Sandbox> sandbox = MakeBubblewrapSandbox();
  REQUIRE_FALSE(sandbox->Unavailable().has_value());
  GradeContext context;
  context.read_file = [&loaded](const std::string& path) { return loaded.ReadTaskFile(path); };
  context.sandbox = sandbox.get();
  REQUIRE(loaded.suite.tasks.size() == outputs.size());
  for (const Task& task : loaded.suite.tasks) {
    INFO(task.id);
    REQUIRE(outputs.contains(task.id));
    Output correct;
    correct.content = outputs[task.id]["correct"];
    correct.finish_reason = "stop";
    const Grade pass = GradeOutput(task, correct, context);
    CHECK(pass.status == GradeStatus::kGraded);
    CHECK(pass.passed);
    CHECK(pass.score == 1.0);
    CHECK(pass.grader == task.grader["type"].get<std::string>());
    Output wrong = correct;
    wrong.content = outputs[task.id]["wrong"];
    const Grade fail = GradeOutput(task, wrong, context);
    INFO(fail.reason);
    CHECK(fail.status == GradeStatus::kGraded);
    CHECK_FALSE(fail.passed);
  }
}

TEST_CASE("grade: the command grades one saved output", "[grade][cli]") {
  const std::string path = "/tmp/evalrun-grade-" + std::to_string(getpid()) + ".txt";
  std::ofstream(path) << "17 x 23 = 391\nANSWER: 391\n";
  const std::string command =
      std::string(EVALRUN_BINARY) + " grade " + kSmoke + " --task math-003 --output " + path;
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe);
  char line[512] = {};
  REQUIRE(fgets(line, sizeof line, pipe) != nullptr);
  const int status = pclose(pipe);
  CHECK(WEXITSTATUS(status) == 0);
  CHECK_THAT(std::string(line), Catch::StartsWith("math-003  pass  score 1.000  answer_line/"));
  std::remove(path.c_str());
}

// tasks/smoke/mock-answers.json, the mock's answer table for the smoke suite: each task's prompt
// picks exactly one rule, and the rule's reply grades as recorded here (17 pass, 9 do not, with
// both in every dimension). The mock sends a rule's text byte for byte (plugins' mock tests).
TEST_CASE("grade: the smoke answer table gives every task its recorded grade", "[grade][tasks]") {
  const std::map<std::string, std::string> expected = {
      {"math-001", "pass"},    {"math-002", "pass"},    {"math-003", "pass"},
      {"math-004", "fail"},    {"math-005", "no_answer"}, {"math-006", "pass"},
      {"extract-001", "pass"}, {"extract-002", "pass"}, {"extract-003", "pass"},
      {"extract-004", "fail"}, {"extract-005", "fail"},
      {"follow-001", "pass"},  {"follow-002", "fail"},  {"follow-003", "pass"},
      {"follow-004", "pass"},  {"follow-005", "pass"},
      {"code-001", "pass"},    {"code-002", "pass"},    {"code-003", "fail"},
      {"code-004", "pass"},    {"code-005", "fail"},
      {"zh-001", "pass"},      {"zh-002", "fail"},      {"zh-003", "pass"},
      {"zh-004", "fail"},      {"zh-005", "pass"},
  };
  const LoadedSuite loaded = LoadSuite(kSmoke, ResolveOptions{});
  const std::vector<MockAnswer> answers = LoadMockAnswers(kSmoke + "/mock-answers.json");
  const std::unique_ptr<Sandbox> sandbox = MakeBubblewrapSandbox();
  REQUIRE_FALSE(sandbox->Unavailable().has_value());
  GradeContext context;
  context.read_file = [&loaded](const std::string& path) { return loaded.ReadTaskFile(path); };
  context.sandbox = sandbox.get();
  REQUIRE(loaded.suite.tasks.size() == expected.size());
  REQUIRE(answers.size() == expected.size());
  std::set<int64_t> used;
  std::map<std::string, std::pair<int, int>> by_dimension;  // passed, not passed
  for (const Task& task : loaded.suite.tasks) {
    INFO(task.id);
    REQUIRE(expected.count(task.id) == 1);
    std::string prompt;  // the last user message, what the mock matches against
    for (const auto& message : task.messages) {
      if (message["role"] == "user") prompt = message["content"].get<std::string>();
    }
    int matching = 0;
    for (const MockAnswer& rule : answers) matching += prompt.find(rule.match) != std::string::npos;
    CHECK(matching == 1);
    const int64_t index = FindMockAnswer(answers, prompt);
    REQUIRE(index >= 0);
    used.insert(index);
    const MockAnswer& rule = answers[static_cast<size_t>(index)];
    Output output;
    output.content = rule.content;
    output.reasoning = rule.reasoning;
    output.finish_reason = rule.finish_reason.empty() ? "stop" : rule.finish_reason;
    const Grade grade = GradeOutput(task, output, context);
    INFO(grade.reason);
    const std::string& want = expected.at(task.id);
    const std::string status = want == "no_answer" ? "no_answer" : "graded";
    CHECK(GradeStatusName(grade.status) == status);
    CHECK(grade.passed == (want == "pass"));
    auto& counts = by_dimension[task.dimension];
    (grade.passed ? counts.first : counts.second) += 1;
  }
  CHECK(used.size() == answers.size());  // no rule is left unused
  CHECK(by_dimension.size() == 5);
  int passed = 0;
  for (const auto& [dimension, counts] : by_dimension) {
    INFO(dimension);
    CHECK(counts.first >= 1);
    CHECK(counts.second >= 1);
    passed += counts.first;
  }
  CHECK(passed == 17);
  // The table shows off a reply with reasoning and one cut by max_tokens.
  CHECK(std::any_of(answers.begin(), answers.end(),
                    [](const MockAnswer& a) { return !a.reasoning.empty(); }));
  CHECK(std::any_of(answers.begin(), answers.end(),
                    [](const MockAnswer& a) { return a.finish_reason == "length"; }));
}
