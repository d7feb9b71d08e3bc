// Agent tasks end to end (runner/agent/agent_task.h): `evalrun suite` on the shipped agent suite
// (tasks/agent) against the mock endpoint scripted with tool calls (tests/fixtures/agent/*.json),
// the episodes stored with every turn, graded, and re-graded from the stored output as
// `evalrun verify` does. Sandboxed commands run under bubblewrap; where it cannot run here the
// repository and world tasks are skipped with the reason, and the tests say so and stop.
#include "runner/agent/agent_task.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/catch.h"
#include <nlohmann/json.hpp>

#include "graders/grader.h"
#include "plugins/sandbox.h"
#include "plugins/mock_server.h"
#include "results/store.h"
#include "runner/suite_loader.h"
#include "runner/suite_run.h"

namespace {

namespace fs = std::filesystem;
using evalrun::GradeStatus;
using evalrun::MockConfig;
using evalrun::MockServer;
using evalrun::ResultStore;
using evalrun::TaskResult;
using nlohmann::json;

const std::string kFixtures = EVALRUN_TEST_FIXTURES;
const std::string kAgentSuite = kFixtures + "/../../tasks/agent";

struct TempDir {
  fs::path path;
  TempDir() {
    char pattern[] = "/tmp/evalrun-agent-task-XXXXXX";
    path = mkdtemp(pattern);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string File(const std::string& name) const { return (path / name).string(); }
};

bool HaveSandbox() {
  static const auto sandbox = evalrun::MakeBubblewrapSandbox();
  if (auto why = sandbox->Unavailable()) {
    WARN("bubblewrap unavailable, agent tasks are skipped here: " << *why);
    return false;
  }
  return true;
}

// Runs the agent suite's tasks matching `id_glob` against a mock answering with `answers`
// (a file of tests/fixtures/agent); returns the run's one task result.
TaskResult RunAgentTaskWith(const TempDir& dir, const std::string& id_glob,
                            const std::string& answers) {
  MockConfig mock_config;
  mock_config.ttft_ms = 1;
  mock_config.decode_tps = 5000;
  mock_config.answers = evalrun::LoadMockAnswers(kFixtures + "/agent/" + answers);
  MockServer mock(mock_config);
  mock.Start();
  evalrun::SuiteRunConfig config;
  config.suite_spec = kAgentSuite;
  config.endpoint = mock.base_url();
  config.filters = {"id=" + id_glob};
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

// The grade `evalrun verify` recomputes from the stored output.
evalrun::Grade Regrade(const TaskResult& stored) {
  static const auto sandbox = evalrun::MakeBubblewrapSandbox();
  const evalrun::LoadedSuite loaded = evalrun::LoadSuite(kAgentSuite, {});
  const evalrun::Task* task = nullptr;
  for (const auto& t : loaded.suite.tasks) {
    if (t.id == stored.task_id) task = &t;
  }
  REQUIRE(task != nullptr);
  evalrun::GradeContext context;
  context.read_file = [&](const std::string& path) { return loaded.ReadTaskFile(path); };
  context.sandbox = sandbox.get();
  return evalrun::GradeOutput(
      *task, evalrun::Output{stored.output, stored.reasoning, stored.finish_reason}, context);
}

// Every call of the transcript, in order, as "name": its record.
std::vector<std::pair<std::string, json>> Calls(const TaskResult& r) {
  std::vector<std::pair<std::string, json>> calls;
  for (const auto& turn : r.transcript.at("turns")) {
    for (const auto& call : turn.at("calls")) {
      calls.emplace_back(call.at("name").get<std::string>(), call);
    }
  }
  return calls;
}

void CheckTurnsRecorded(const TaskResult& r, size_t turns) {
  CHECK(r.transcript.at("turns").size() == turns);
  REQUIRE(r.requests.size() == turns);
  for (const auto& request : r.requests) {
    CHECK(request.ok());
    CHECK(request.end_ns > 0);
    CHECK(request.usage.completion_tokens > 0);
  }
}

}  // namespace

TEST_CASE("agent tasks: a conversation that fixes the bug resolves the repository task",
          "[runner][agent]") {
  if (!HaveSandbox()) return;
  TempDir dir;
  const TaskResult r = RunAgentTaskWith(dir, "minicalc*", "repo-fix.json");
  INFO(r.grade.reason << "\n" << r.grade.evidence.dump(2));
  CHECK(r.grade.status == GradeStatus::kGraded);
  CHECK(r.grade.passed);
  CHECK(r.grade.score == 1.0);
  CHECK(r.grade.grader == "repo_tests");
  CheckTurnsRecorded(r, 4);
  CHECK(r.transcript.at("termination_reason") == "completed");
  const json episode = json::parse(r.output);
  CHECK(episode.at("submitted") == true);
  CHECK(episode.at("diff").get<std::string>().find("+            left = Binary(token.value, "
                                                    "left, self.term())") != std::string::npos);
  // The check the agent ran after its fix printed Python's answers.
  const auto calls = Calls(r);
  REQUIRE(calls.size() == 4);
  CHECK(calls[2].second.at("observation").get<std::string>().find("3 2") != std::string::npos);
  const evalrun::Grade again = Regrade(r);
  CHECK(again.status == r.grade.status);
  CHECK(again.score == r.grade.score);

  // A bundle of the run verifies: the stored diff applied to a fresh checkout of the bundled
  // repository files, the hidden tests run again, the same grade.
  const std::string db = dir.File("repo-fix.json.db");
  const std::string run_id = ResultStore(db).ListRuns().front().id;
  // The run's overhead line says how much of evalrun's own time the agent's tools took.
  std::string stats;
  for (const auto& e : ResultStore(db).LoadRun(run_id).events) {
    if (e.kind == "stats") stats = e.message;
  }
  CHECK_THAT(stats, Catch::Matches("client overhead: [0-9.]+% of worker time outside the model "
                                   "\\(scheduling, grading, storing, of which agent tools "
                                   "[0-9.]+%\\); .*"));
  const std::string bundle = dir.File("fix.evalrun.json");
  const std::string evalrun = EVALRUN_BINARY;
  REQUIRE(std::system((evalrun + " export " + run_id + " --db " + db + " --out " + bundle +
                       " 2>/dev/null").c_str()) == 0);
  const std::string verify_out = dir.File("verify.out");
  std::system((evalrun + " verify " + bundle + " > " + verify_out + " 2>&1").c_str());
  std::ifstream in(verify_out);
  std::stringstream text;
  text << in.rdbuf();
  INFO(text.str());
  CHECK(text.str().find("grades: ok (1 of 1 grades rechecked, all equal)") != std::string::npos);
  CHECK(text.str().find("hash: ok") != std::string::npos);
}

TEST_CASE("agent tasks: editing the tests instead of the code does not resolve it",
          "[runner][agent]") {
  if (!HaveSandbox()) return;
  TempDir dir;
  const TaskResult r = RunAgentTaskWith(dir, "minicalc*", "repo-edit-tests.json");
  INFO(r.grade.reason << "\n" << r.grade.evidence.dump(2));
  CHECK(r.grade.status == GradeStatus::kGraded);
  CHECK_FALSE(r.grade.passed);
  CHECK(r.grade.score == 0.0);
  CheckTurnsRecorded(r, 4);
  // The agent's own run of the edited tests passed; the grade ran the real ones.
  const auto calls = Calls(r);
  REQUIRE(calls.size() == 4);
  CHECK(calls[2].second.at("observation").get<std::string>().find("OK") != std::string::npos);
  CHECK(json::parse(r.output).at("diff").get<std::string>().find("tests/test_evaluator.py") !=
        std::string::npos);
  CHECK(Regrade(r).passed == false);
}

TEST_CASE("agent tasks: doing nothing does not resolve it", "[runner][agent]") {
  if (!HaveSandbox()) return;
  TempDir dir;
  const TaskResult r = RunAgentTaskWith(dir, "minicalc*", "repo-nothing.json");
  INFO(r.grade.reason << "\n" << r.grade.evidence.dump(2));
  CHECK(r.grade.status == GradeStatus::kGraded);
  CHECK_FALSE(r.grade.passed);
  CheckTurnsRecorded(r, 1);
  CHECK(r.transcript.at("termination_reason") == "no_action");
  const json episode = json::parse(r.output);
  CHECK(episode.at("diff") == "");
  CHECK(episode.at("submitted") == false);
}

TEST_CASE("agent tasks: network, writes outside the workspace and /root are refused and "
          "recorded",
          "[runner][agent]") {
  if (!HaveSandbox()) return;
  TempDir dir;
  const TaskResult r = RunAgentTaskWith(dir, "minicalc*", "repo-hostile.json");
  INFO(r.transcript.dump(2));
  CHECK_FALSE(r.grade.passed);
  const auto calls = Calls(r);
  REQUIRE(calls.size() == 6);
  const auto refused = [&](size_t i) {
    const json& record = calls[i].second.at("record");
    return record.is_object() && record.contains("refused") ? record.at("refused").dump() : "";
  };
  // bash ran each command (ok), the sandbox refused what it tried: the record says what.
  CHECK(refused(0).find("network") != std::string::npos);
  CHECK(refused(1).find("write outside /work") != std::string::npos);
  CHECK(refused(2).find("/root") != std::string::npos);
  CHECK_FALSE(fs::exists("/etc/evalrun-agent-test"));
  CHECK_FALSE(fs::exists("/tmp/evalrun-agent-test"));
  // The file tools refuse paths that leave the repository before touching anything.
  CHECK(calls[3].second.at("ok") == false);
  CHECK(calls[4].second.at("ok") == false);
  CHECK(json::parse(r.output).at("diff") == "");
}

TEST_CASE("agent tasks: the world task through native tool calls scores 100, a forbidden call "
          "0",
          "[runner][agent]") {
  if (!HaveSandbox()) return;
  TempDir dir;
  const TaskResult good = RunAgentTaskWith(dir, "world-*", "world-good.json");
  INFO(good.grade.reason << "\n" << good.grade.evidence.dump(2));
  CHECK(good.grade.grader == "world");
  CHECK(good.grade.status == GradeStatus::kGraded);
  CHECK(good.grade.score == 1.0);
  CHECK(good.grade.passed);
  CheckTurnsRecorded(good, 3);
  CHECK(good.transcript.at("termination_reason") == "completed");
  CHECK(good.transcript.at("tool_call_source") == "native");
  const json episode = json::parse(good.output);
  CHECK(episode.at("final_state").at("purchase_orders").size() == 1);
  CHECK(episode.at("final_message").get<std::string>().find("PO-1041") != std::string::npos);
  CHECK(Regrade(good).score == good.grade.score);

  const TaskResult bad = RunAgentTaskWith(dir, "world-*", "world-forbidden.json");
  INFO(bad.grade.reason);
  CHECK(bad.grade.status == GradeStatus::kGraded);
  CHECK(bad.grade.score == 0.0);
  CHECK_FALSE(bad.grade.passed);
  CHECK(Regrade(bad).score == 0.0);
}

TEST_CASE("agent tasks: calls written as Qwen XML are read by the fallback and recorded as such",
          "[runner][agent]") {
  if (!HaveSandbox()) return;
  TempDir dir;
  const TaskResult r = RunAgentTaskWith(dir, "world-*", "world-qwen-xml.json");
  INFO(r.grade.reason);
  CHECK(r.grade.score == 1.0);
  CHECK(r.transcript.at("tool_call_source") == "qwen_xml");
  CHECK(r.transcript.at("turns").at(0).at("source") == "qwen_xml");
}

TEST_CASE("agent tasks: a zx-bench execution world runs in evalrun suite with zx-bench's text "
          "protocol and scores as zx-bench does",
          "[runner][agent][zxbench]") {
  if (!HaveSandbox()) return;
  TempDir dir;
  // A bank repository holding the fixtures (TC-CN-055-RECOVERY-1 among them), pinned at a commit.
  const std::string repo = dir.File("zx");
  const std::string setup = "mkdir -p " + repo + "/data/scenarios && cp " + kFixtures +
                            "/zx-bench/fixtures.json " + repo +
                            "/data/scenarios/benchmark.json && cd " + repo +
                            " && git init -q && git add -A && git -c user.name=t -c "
                            "user.email=t@t commit -qm bank";
  REQUIRE(std::system(setup.c_str()) == 0);
  // zx-bench folds the transcript into one user message per turn, so the mock answers by what
  // the last user message holds: the first turn's CALL, then (once the transcript shows it) SAY.
  const auto rule = [](const std::string& match, const std::string& content) {
    evalrun::MockAnswer answer;
    answer.match = match;
    answer.content = content;
    return answer;
  };
  const auto run_with = [&](const std::string& name, std::vector<evalrun::MockAnswer> answers) {
    MockConfig mock_config;
    mock_config.ttft_ms = 1;
    mock_config.decode_tps = 5000;
    mock_config.answers = std::move(answers);
    MockServer mock(mock_config);
    mock.Start();
    evalrun::SuiteRunConfig config;
    config.suite_spec = repo + "@HEAD";
    config.endpoint = mock.base_url();
    config.filters = {"id=TC-CN-055-RECOVERY-1"};
    config.db = dir.File(name + ".db");
    config.no_speed = true;
    config.quiet = true;
    config.capture_environment = false;
    config.out_dir = dir.File(name + ".report");
    std::ostringstream log;
    REQUIRE(evalrun::RunSuite(config, nullptr, log) == 0);
    ResultStore store(config.db);
    auto run = store.LoadRun(store.ListRuns().front().id);
    REQUIRE(run.tasks.size() == 1);
    return run.tasks.front();
  };

  const TaskResult good =
      run_with("good", {rule("[助手] CALL query_order", "SAY 订单 67890 当前状态：运输中。"),
                        rule("只查询订单 67890", "CALL query_order {\"id\":\"67890\"}")});
  INFO(good.grade.reason << "\n" << good.grade.evidence.dump(2));
  CHECK(good.grade.grader == "zxbench:tool_call_trace");
  CHECK(good.grade.status == GradeStatus::kGraded);
  CHECK(good.grade.score == 1.0);
  CheckTurnsRecorded(good, 2);
  CHECK(good.transcript.at("termination_reason") == "completed");
  CHECK(json::parse(good.output).at("final_message") == "订单 67890 当前状态：运输中。");

  const TaskResult cancelled = run_with(
      "cancel", {rule("[助手] CALL query_order", "SAY 订单 67890 运输中，已为您取消。"),
                 rule("只查询订单 67890",
                      "CALL query_order {\"id\":\"67890\"}\nCALL cancel_order {\"id\":\"67890\"}")});
  INFO(cancelled.grade.reason);
  CHECK(cancelled.grade.score == 0.0);
  CHECK_FALSE(cancelled.grade.passed);
}
