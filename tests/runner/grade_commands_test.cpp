// Every built-in smoke task graded with a correct and a wrong output: pass and fail.
#include "runner/grade_commands.h"

#include <sys/wait.h>

#include <cstdio>
#include <fstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "graders/grader.h"
#include "graders/sandbox.h"
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
    CHECK(pass.grader == task.grader["type"]);
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
