// Several endpoints in one run (issue 19 part 1, docs/serving.md "Several endpoints"): the real
// binary against three mock endpoints: the same grades as one endpoint, every request recording
// where it went, a speed section per endpoint, mixed models refused or stated, and an endpoint
// that goes away mid-run while the others finish its tasks.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "tests/support/catch.h"
#include "tests/support/stored_run.h"
#include "tests/support/evalrun_process.h"
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "plugins/mock_server.h"
#include "results/store.h"
#include "runner/commands/cli.h"

namespace {

namespace fs = std::filesystem;
using evalrun::GradeStatus;
using evalrun::MockConfig;
using evalrun::MockServer;
using evalrun::ResultStore;
using evalrun::testing::OnlyRun;
using evalrun::testing::Events;
using evalrun::testing::Slurp;
using evalrun::testing::TempDir;
using json = nlohmann::json;

// A suite of `n` tasks answering "ANSWER: <i>", committed in a git repository (so that its
// bundle verifies offline), and the mock's table: task i right unless i % 3 == 2.
std::vector<evalrun::MockAnswer> WriteSuite(const fs::path& repo, int n) {
  fs::create_directories(repo / "suite");
  std::ofstream suite(repo / "suite" / "suite.yaml");
  suite << "schema_version: 1\nsuite: endpoints\ndefaults: {max_tokens: 32, temperature: 0}\n"
        << "dimensions: {math: 1, facts: 1}\ntasks:\n";
  std::vector<evalrun::MockAnswer> answers;
  for (int i = 0; i < n; ++i) {
    char id[16];
    std::snprintf(id, sizeof id, "t%03d", i);
    suite << "  - {id: " << id << ", dimension: " << (i % 2 == 0 ? "math" : "facts")
          << ", difficulty: easy, prompt: \"[" << id << "] What is " << i
          << " plus zero? End with ANSWER: <n>\", grader: {type: answer_line, answer: " << i
          << "}}\n";
    evalrun::MockAnswer answer;
    answer.match = std::string("[") + id + "]";
    answer.content = "ANSWER: " + std::to_string(i % 3 == 2 ? i + 1 : i);
    answers.push_back(answer);
  }
  suite.close();
  const std::string git = "cd " + repo.string() +
                          " && git init -q && git add -A && git -c user.name=t -c "
                          "user.email=t@t commit -qm s";
  REQUIRE(std::system(git.c_str()) == 0);
  return answers;
}

using Output = evalrun::testing::ProcessResult;

// Runs the evalrun binary (bounded), stderr and stdout captured.
Output Run(const std::vector<std::string>& args, const TempDir& dir, double timeout_s = 200) {
  evalrun::testing::ProcessOptions options;
  options.timeout_s = timeout_s;
  return evalrun::testing::RunEvalrunBinary(args, dir.File("cmd.out"), dir.File("cmd.err"),
                                            options);
}

MockConfig FastMock(std::vector<evalrun::MockAnswer> answers) {
  MockConfig config;
  config.ttft_ms = 1;
  config.decode_tps = 2000;
  config.answers = std::move(answers);
  return config;
}

// `evalrun suite SPEC --endpoint A [--endpoint B ...] --db DB ...`, quiet, no environment probe.
std::vector<std::string> SuiteArgs(const std::string& spec,
                                   const std::vector<std::string>& endpoints,
                                   const std::string& db) {
  std::vector<std::string> args = {"suite", spec};
  for (const std::string& e : endpoints) args.insert(args.end(), {"--endpoint", e});
  args.insert(args.end(), {"--db", db, "--no-env", "--quiet", "--probe-interval", "0.5", "--out",
                           db + ".report"});
  return args;
}

// task id -> (status, passed, score)
std::map<std::string, std::tuple<GradeStatus, bool, double>> Grades(const evalrun::RunData& run) {
  std::map<std::string, std::tuple<GradeStatus, bool, double>> grades;
  for (const auto& t : run.tasks) grades[t.task_id] = {t.grade.status, t.grade.passed, t.grade.score};
  return grades;
}

std::string Head(const std::string& repo) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(
      popen(("git -C " + repo + " rev-parse HEAD").c_str(), "r"), pclose);
  REQUIRE(pipe);
  char line[64] = {};
  REQUIRE(std::fgets(line, sizeof line, pipe.get()) != nullptr);
  return std::string(line, 40);
}

}  // namespace

TEST_CASE("endpoints: --concurrency takes one value for all or one per endpoint",
          "[runner][endpoints]") {
  CHECK(evalrun::ParseSuiteConcurrency("", 3) == std::vector<int>{1, 1, 1});
  CHECK(evalrun::ParseSuiteConcurrency("4", 3) == std::vector<int>{4, 4, 4});
  CHECK(evalrun::ParseSuiteConcurrency("2,1,1", 3) == std::vector<int>{2, 1, 1});
  CHECK(evalrun::ParseSuiteConcurrency("2", 1) == std::vector<int>{2});
  const auto error = [](const std::string& text, size_t n) {
    try {
      evalrun::ParseSuiteConcurrency(text, n);
    } catch (const evalrun::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error("2,1", 3) == "--concurrency '2,1': 2 values for 3 endpoints (give one value for "
                           "every endpoint, or one per --endpoint in order)");
  CHECK(error("2,1", 1) == "--concurrency '2,1': 2 values for 1 endpoint (give one value for "
                           "every endpoint, or one per --endpoint in order)");
  CHECK(error("2,0", 2) == "--concurrency 0: out of range (expected 1..4096)");
  CHECK(error("2,,1", 3) == "--concurrency '': expected a whole number");
}

TEST_CASE("endpoints: three endpoints in one run give the grades of one, each request records "
          "its endpoint, the report has speed per endpoint, the bundle verifies",
          "[runner][endpoints][slow]") {
  TempDir dir;
  const fs::path repo = dir.path / "r";
  const MockConfig config = FastMock(WriteSuite(repo, 24));
  MockServer a(config), b(config), c(config);
  a.Start();
  b.Start();
  c.Start();
  const std::string spec = (repo / "suite").string() + "@" + Head(repo.string());

  const std::string one_db = dir.File("one.db");
  std::vector<std::string> one = SuiteArgs(spec, {a.base_url()}, one_db);
  one.push_back("--no-speed");
  const Output single = Run(one, dir);
  INFO(single.err);
  REQUIRE(single.code == 0);
  const evalrun::RunData single_run = ResultStore(one_db).LoadRun(OnlyRun(one_db));

  const std::string db = dir.File("three.db");
  std::vector<std::string> three = SuiteArgs(spec, {a.base_url(), b.base_url(), c.base_url()}, db);
  three.insert(three.end(), {"--concurrency", "2,1,1"});
  const Output o = Run(three, dir);
  INFO(o.err);
  REQUIRE(o.code == 0);
  const std::string run_id = OnlyRun(db);
  const evalrun::RunData run = ResultStore(db).LoadRun(run_id);
  REQUIRE(run.tasks.size() == 24);
  CHECK(Grades(run) == Grades(single_run));

  std::map<std::string, int> requests_at;
  for (const auto& t : run.tasks) {
    REQUIRE(t.requests.size() == 1);
    ++requests_at[t.requests[0].endpoint];
  }
  CHECK(requests_at.size() == 3);  // each endpoint took tasks
  for (const MockServer* m : {&a, &b, &c}) {
    CHECK(requests_at[m->base_url()] > 0);
  }
  CHECK(run.info.endpoint == a.base_url());
  CHECK(run.info.settings.at("concurrency") == json::array({2, 1, 1}));
  REQUIRE(run.info.server.at("endpoints").size() == 3);
  CHECK(run.info.server.at("endpoints")[1].at("endpoint") == b.base_url());
  CHECK(run.info.server.at("endpoints")[1].at("concurrency") == 1);
  CHECK_FALSE(run.info.server.contains("mixed_endpoints"));

  // The speed protocol ran on each endpoint; the report has a section per endpoint.
  REQUIRE(run.speed.is_object());
  CHECK(run.speed.at("endpoint") == a.base_url());
  REQUIRE(run.speed.at("other_endpoints").size() == 2);
  CHECK(run.speed.at("other_endpoints")[0].at("endpoint") == b.base_url());
  CHECK(run.speed.at("other_endpoints")[1].at("endpoint") == c.base_url());
  const std::string report = Slurp(db + ".report/report.md");
  CHECK_THAT(report, Catch::Contains("endpoints: " + a.base_url() + " (concurrency 2), " +
                                     b.base_url() + " (concurrency 1), " + c.base_url() +
                                     " (concurrency 1)"));
  for (const MockServer* m : {&a, &b, &c}) {
    CHECK_THAT(report, Catch::Contains("## Speed protocol (preset quick) — " + m->base_url()));
  }
  CHECK_THAT(report, Catch::Contains("## Scores by dimension"));

  // The bundle keeps each request's endpoint where it is not the run's, and verifies.
  const std::string bundle = dir.File("three.evalrun.json");
  const Output exported = Run({"export", run_id, "--db", db, "--out", bundle}, dir);
  INFO(exported.err);
  REQUIRE(exported.code == 0);
  const json doc = json::parse(Slurp(bundle));
  std::set<std::string> in_bundle;
  for (const json& t : doc.at("tasks")) {
    const json& r = t.at("requests")[0];
    in_bundle.insert(r.contains("endpoint") ? r.at("endpoint").get<std::string>() : "(run's)");
  }
  CHECK(in_bundle == std::set<std::string>{"(run's)", b.base_url(), c.base_url()});
  const Output verified = Run({"verify", bundle}, dir);
  INFO(verified.out << verified.err);
  CHECK(verified.code == 0);
  CHECK_THAT(verified.out, Catch::Contains("figures: ok ("));
}

TEST_CASE("endpoints: another model is refused naming the difference, or run with "
          "--allow-mixed-endpoints and stated in the report",
          "[runner][endpoints]") {
  TempDir dir;
  const fs::path repo = dir.path / "r";
  MockConfig config = FastMock(WriteSuite(repo, 4));
  MockServer a(config);
  config.model = "other-model";
  MockServer b(config);
  a.Start();
  b.Start();
  const std::string db = dir.File("a.db");
  std::vector<std::string> args = SuiteArgs((repo / "suite").string(), {a.base_url(), b.base_url()}, db);
  args.push_back("--no-speed");
  const Output refused = Run(args, dir);
  CHECK(refused.code == 2);
  CHECK(refused.err == "evalrun: error: --endpoint " + b.base_url() + " does not serve what " +
                           a.base_url() + " serves: model 'other-model' (" + a.base_url() +
                           ": 'evalrun-mock'); give --allow-mixed-endpoints to run them together "
                           "anyway (the report then says so)\n");

  args.push_back("--allow-mixed-endpoints");
  const Output mixed = Run(args, dir);
  INFO(mixed.err);
  REQUIRE(mixed.code == 0);
  const evalrun::RunData run = ResultStore(db).LoadRun(OnlyRun(db));
  REQUIRE(run.tasks.size() == 4);
  const std::string difference =
      b.base_url() + ": model 'other-model' (" + a.base_url() + ": 'evalrun-mock')";
  CHECK(run.info.server.at("mixed_endpoints") == json::array({difference}));
  // Each endpoint was sent its own model name.
  for (const auto& t : run.tasks) {
    for (const auto& r : t.requests) {
      CHECK(r.model == (r.endpoint == b.base_url() ? "other-model" : "evalrun-mock"));
    }
  }
  CHECK_THAT(Slurp(db + ".report/report.md"),
             Catch::Contains("**Mixed endpoints:** the endpoints do not serve the same model (run "
                             "with --allow-mixed-endpoints): " + difference));
}

TEST_CASE("endpoints: one endpoint gone mid-run, the others finish its tasks, every task graded "
          "once with the failed attempt kept",
          "[runner][endpoints][slow]") {
  TempDir dir;
  const fs::path repo = dir.path / "r";
  MockConfig config = FastMock(WriteSuite(repo, 30));
  config.ttft_ms = 20;
  MockServer a(config), c(config);
  config.outage_after = 3;  // its 4th request on: connections refused for a minute
  config.outage_s = 60;
  config.outage_refuse = true;
  MockServer b(config);
  a.Start();
  b.Start();
  c.Start();
  const std::string db = dir.File("a.db");
  std::vector<std::string> args =
      SuiteArgs((repo / "suite").string(), {a.base_url(), b.base_url(), c.base_url()}, db);
  args.insert(args.end(), {"--no-speed", "--wait-endpoint", "3s"});
  const Output o = Run(args, dir);
  INFO(o.err);
  REQUIRE(o.code == 0);
  const evalrun::RunData run = ResultStore(db).LoadRun(OnlyRun(db));
  REQUIRE(run.tasks.size() == 30);
  std::set<std::string> ids;
  int moved = 0;
  int graded_at_b = 0;
  for (const auto& t : run.tasks) {
    INFO(t.task_id << ": " << t.grade.reason);
    ids.insert(t.task_id);
    CHECK(t.grade.status == GradeStatus::kGraded);
    REQUIRE(!t.requests.empty());
    graded_at_b += t.requests.back().endpoint == b.base_url();
    if (t.requests.size() > 1) {
      // The attempts at the endpoint that went away are kept, before the one that answered.
      // B closes the connection that carried its 4th request and then refuses new ones. On a
      // reused keep-alive connection curl retries on a new one and is refused (connect_failed);
      // on a fresh one the request is dropped with nothing received (a CI run saw that), retried
      // as a transient failure, and then refused.
      ++moved;
      const auto& first = t.requests.front();
      CHECK(first.endpoint == b.base_url());
      CHECK((first.outcome == evalrun::RequestOutcome::kConnectFailed ||
             first.outcome == evalrun::RequestOutcome::kDropped));
      CHECK(t.requests[t.requests.size() - 2].endpoint == b.base_url());
      CHECK(t.requests[t.requests.size() - 2].outcome ==
            evalrun::RequestOutcome::kConnectFailed);
      CHECK(t.requests.size() <= 3);
      CHECK(t.attempts == static_cast<int>(t.requests.size()) - 1);
    }
  }
  CHECK(ids.size() == 30);
  CHECK(graded_at_b == 3);  // before it went away
  CHECK(moved == 1);  // B's one worker held one task when B went away
  const auto pauses = Events(run, "pause");
  REQUIRE(pauses.size() == 2);
  CHECK(pauses[0] == "endpoint " + b.base_url() +
                         " is unreachable: pausing its work, waiting up to 3 s for it to come "
                         "back; the other endpoints take its tasks");
  CHECK(pauses[1] == "endpoint " + b.base_url() +
                         " did not come back within 3 s: the other endpoints take its tasks");
}

TEST_CASE("endpoints: an endpoint away for a while resumes its work, nothing lost",
          "[runner][endpoints][slow]") {
  TempDir dir;
  const fs::path repo = dir.path / "r";
  MockConfig config = FastMock(WriteSuite(repo, 40));
  config.ttft_ms = 200;
  MockServer a(config);
  config.outage_after = 2;
  config.outage_s = 1.5;
  MockServer b(config);
  a.Start();
  b.Start();
  const std::string db = dir.File("a.db");
  std::vector<std::string> args =
      SuiteArgs((repo / "suite").string(), {a.base_url(), b.base_url()}, db);
  args.push_back("--no-speed");
  const Output o = Run(args, dir);
  INFO(o.err);
  REQUIRE(o.code == 0);
  const evalrun::RunData run = ResultStore(db).LoadRun(OnlyRun(db));
  REQUIRE(run.tasks.size() == 40);
  int after_outage_at_b = 0;
  for (const auto& t : run.tasks) {
    CHECK(t.grade.status == GradeStatus::kGraded);
    after_outage_at_b += t.requests.back().endpoint == b.base_url() && t.requests.size() == 1;
  }
  CHECK(after_outage_at_b > 2);  // B took tasks again once it was back
  REQUIRE(Events(run, "pause").size() == 1);
  CHECK(Events(run, "pause")[0] ==
        "endpoint " + b.base_url() +
            " is unavailable (http_error: HTTP 503: Loading model): pausing its work, waiting up "
            "to 30 min for it to come back; the other endpoints take its tasks");
  REQUIRE(Events(run, "resume").size() == 1);
  CHECK(Events(run, "resume")[0].rfind("endpoint " + b.base_url() + " is back after ", 0) == 0);
}
