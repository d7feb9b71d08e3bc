// `evalrun compare` as a user meets it (issue 7's acceptance): the real binary compares runs of
// the smoke suite made against in-process mock endpoints. Different answer tables give a score
// difference whose interval excludes zero; identical tables give one that includes zero. The
// command's errors are checked by their text and exit code.
#include "runner/commands/compare_commands.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "tests/support/catch.h"
#include <nlohmann/json.hpp>

#include "plugins/mock_server.h"
#include "results/store.h"
#include "tests/support/evalrun_process.h"

namespace {

namespace fs = std::filesystem;
using evalrun::MockAnswer;
using evalrun::MockConfig;
using evalrun::MockServer;
using json = nlohmann::json;

const std::string kSmoke = std::string(EVALRUN_TEST_FIXTURES) + "/../../tasks/smoke";

using evalrun::testing::Slurp;
using evalrun::testing::TempDir;
using Result = evalrun::testing::ProcessResult;

// Runs the evalrun binary with `args` to completion (bounded), capturing stdout and stderr.
Result Evalrun(const std::vector<std::string>& args, const TempDir& dir, double timeout_s = 240) {
  static int calls = 0;
  ++calls;
  evalrun::testing::ProcessOptions options;
  options.timeout_s = timeout_s;
  return evalrun::testing::RunEvalrunBinary(args, dir.File("call" + std::to_string(calls) + ".out"),
                                            dir.File("call" + std::to_string(calls) + ".err"),
                                            options);
}

MockConfig FastMock(std::vector<MockAnswer> answers) {
  MockConfig config;
  config.ttft_ms = 1;
  config.decode_tps = 4000;
  config.answers = std::move(answers);
  return config;
}

// The shipped table (17 of 26 pass) with every reply replaced by the task's correct output from
// tests/fixtures/smoke-outputs/outputs.json: each rule's comment starts with its task's id, and
// its match string picks that task's prompt.
std::vector<MockAnswer> AllCorrectAnswers() {
  const json table = json::parse(Slurp(kSmoke + "/mock-answers.json"));
  const json outputs =
      json::parse(Slurp(std::string(EVALRUN_TEST_FIXTURES) + "/smoke-outputs/outputs.json"));
  std::vector<MockAnswer> answers;
  for (const json& rule : table["answers"]) {
    const std::string comment = rule["comment"].get<std::string>();
    const std::string id = comment.substr(0, comment.find(':'));
    INFO(id);
    REQUIRE(outputs.contains(id));
    MockAnswer answer;
    answer.match = rule["match"].get<std::string>();
    answer.content = outputs[id]["correct"].get<std::string>();
    answers.push_back(answer);
  }
  REQUIRE(answers.size() == 26);
  return answers;
}

std::set<std::string> RunIds(const std::string& db) {
  std::set<std::string> ids;
  if (!fs::exists(db)) return ids;
  const evalrun::ResultStore store(db);
  for (const auto& run : store.ListRuns()) ids.insert(run.id);
  return ids;
}

// Runs the smoke suite against `mock` into `db`; returns the new run's id.
std::string SmokeRun(const MockServer& mock, const std::string& db, const TempDir& dir,
                     const std::string& suite = kSmoke) {
  const std::set<std::string> before = RunIds(db);
  const Result r =
      Evalrun({"suite", suite, "--endpoint", mock.base_url(), "--no-speed", "--no-env", "--quiet",
               "--db", db, "--out", dir.File("report" + std::to_string(before.size()))},
              dir);
  INFO(r.err);
  REQUIRE(r.code == 0);
  std::set<std::string> after = RunIds(db);
  for (const std::string& id : before) after.erase(id);
  REQUIRE(after.size() == 1);
  return *after.begin();
}

json CompareJson(const std::vector<std::string>& extra, const TempDir& dir) {
  const std::string out = dir.File("compare.json");
  std::vector<std::string> args = {"compare"};
  args.insert(args.end(), extra.begin(), extra.end());
  args.insert(args.end(), {"-o", "json", "--out", out});
  const Result r = Evalrun(args, dir);
  INFO(r.err);
  REQUIRE(r.code == 0);
  return json::parse(Slurp(out));
}

// Three smoke runs, made once for every test case: A (the shipped table), B (every task
// correct), A2 (the shipped table again, on its own endpoint).
struct SmokeRuns {
  TempDir dir{"evalrun-compare"};
  std::string db;
  std::string a, b, a2;
  SmokeRuns() {
    db = dir.File("runs.db");
    MockServer shipped(FastMock(evalrun::LoadMockAnswers(kSmoke + "/mock-answers.json")));
    MockServer correct(FastMock(AllCorrectAnswers()));
    MockServer again(FastMock(evalrun::LoadMockAnswers(kSmoke + "/mock-answers.json")));
    shipped.Start();
    correct.Start();
    again.Start();
    a = SmokeRun(shipped, db, dir);
    b = SmokeRun(correct, db, dir);
    a2 = SmokeRun(again, db, dir);
  }
};

SmokeRuns& Runs() {
  static SmokeRuns runs;
  return runs;
}

}  // namespace

TEST_CASE("compare: different answer tables give an interval that excludes zero",
          "[runner][compare]") {
  SmokeRuns& runs = Runs();
  const json c = CompareJson({runs.a, runs.b, "--db", runs.db}, runs.dir);
  CHECK(c["shared_tasks"] == 26);
  CHECK(c["unshared"].empty());
  const json& overall = c["overall"];
  const double difference = overall["difference"].get<double>();
  const double low = overall["ci95"][0].get<double>();
  const double high = overall["ci95"][1].get<double>();
  WARN("A vs B: overall " << overall["score_a"] << " -> " << overall["score_b"] << ", difference "
                          << difference << ", 95% CI [" << low << ", " << high << "]");
  CHECK(overall["score_b"].get<double>() == Approx(100));
  CHECK(difference > 0);
  CHECK(low > 0);  // excludes zero
  CHECK(low <= difference);
  CHECK(high >= difference);
  CHECK(c["dimensions"].size() == 5);
  // McNemar: the 9 tasks A fails, B passes; none the other way.
  CHECK(c["mcnemar"]["a_only"] == 0);
  CHECK(c["mcnemar"]["b_only"] == 9);
  CHECK(c["mcnemar"]["both_passed"] == 17);
  CHECK(c["mcnemar"]["p_value"].get<double>() == Approx(2.0 / 512));  // 2 · 0.5^9
  // The endpoints differ (two mocks), nothing else recorded does.
  std::vector<std::string> aspects;
  for (const json& d : c["setup"]) aspects.push_back(d["aspect"].get<std::string>());
  CHECK(std::find(aspects.begin(), aspects.end(), "endpoint") != aspects.end());
  CHECK(std::find(aspects.begin(), aspects.end(), "model") == aspects.end());

  SECTION("the markdown says the same, on stdout") {
    const Result r = Evalrun({"compare", runs.a, runs.b, "--db", runs.db}, runs.dir);
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("## Scores: B − A over 26 shared tasks"));
    CHECK_THAT(r.out, Catch::Contains("| B higher |"));
    CHECK_THAT(r.out, Catch::Contains("A only 0 (b), B only 9 (c)"));
  }
  SECTION("the same seed gives the same interval, bit for bit") {
    const json again = CompareJson({runs.a, runs.b, "--db", runs.db}, runs.dir);
    CHECK(again.dump() == c.dump());
  }
}

TEST_CASE("compare: identical answer tables give an interval that includes zero",
          "[runner][compare]") {
  SmokeRuns& runs = Runs();
  const json c = CompareJson({runs.a, runs.a2, "--db", runs.db, "--seed", "11"}, runs.dir);
  CHECK(c["shared_tasks"] == 26);
  CHECK(c["seed"] == 11);
  const json& overall = c["overall"];
  const double low = overall["ci95"][0].get<double>();
  const double high = overall["ci95"][1].get<double>();
  WARN("A vs A2: overall " << overall["score_a"] << " -> " << overall["score_b"] << ", difference "
                           << overall["difference"] << ", 95% CI [" << low << ", " << high << "]");
  CHECK(overall["difference"].get<double>() == Approx(0).margin(1e-9));
  CHECK(low <= 0);
  CHECK(high >= 0);
  CHECK(c["mcnemar"]["a_only"] == 0);
  CHECK(c["mcnemar"]["b_only"] == 0);
  CHECK(c["mcnemar"]["p_value"] == 1.0);
  // Per-task speed: both runs have every task's decode figure from the same fast mock.
  bool decode = false;
  for (const json& r : c["speed"]) {
    if (r["source"] == "tasks" && r["figure"] == "decode_tps") {
      decode = true;
      CHECK(r["count_a"] >= 20);  // tasks whose reply has two tokens or more
      CHECK(r["count_b"] == r["count_a"]);
      CHECK(r["ratio"].get<double>() > 0);
    }
  }
  CHECK(decode);
}

TEST_CASE("compare: bundles compare like the runs they were exported from", "[runner][compare]") {
  SmokeRuns& runs = Runs();
  const std::string bundle_a = runs.dir.File("a.evalrun.json");
  const std::string bundle_b = runs.dir.File("b.evalrun.json");
  for (const auto& [run, path] : {std::pair{runs.a, bundle_a}, std::pair{runs.b, bundle_b}}) {
    const Result r = Evalrun({"export", run, "--db", runs.db, "--out", path}, runs.dir);
    INFO(r.err);
    REQUIRE(r.code == 0);
  }
  const json from_ids = CompareJson({runs.a, runs.b, "--db", runs.db}, runs.dir);
  const json from_bundles = CompareJson({bundle_a, bundle_b}, runs.dir);
  CHECK(from_bundles["overall"] == from_ids["overall"]);
  CHECK(from_bundles["dimensions"] == from_ids["dimensions"]);
  CHECK(from_bundles["mcnemar"] == from_ids["mcnemar"]);
  // A bundle against a run id works too.
  const json mixed = CompareJson({bundle_a, runs.b, "--db", runs.db}, runs.dir);
  CHECK(mixed["overall"] == from_ids["overall"]);
}

TEST_CASE("compare: runs in two databases compare without exporting (DB:RUN_ID, --db-b)",
          "[runner][compare]") {
  SmokeRuns& runs = Runs();
  // Another machine's night: its own database, every task correct (as B in runs.db).
  const std::string other_db = runs.dir.File("machine2.db");
  MockServer correct(FastMock(AllCorrectAnswers()));
  correct.Start();
  const std::string other = SmokeRun(correct, other_db, runs.dir);
  const json same_db = CompareJson({runs.a, runs.b, "--db", runs.db}, runs.dir);
  const json prefixed = CompareJson({runs.a, other_db + ":" + other, "--db", runs.db}, runs.dir);
  CHECK(prefixed["shared_tasks"] == 26);
  CHECK(prefixed["overall"]["score_b"] == same_db["overall"]["score_b"]);
  CHECK(prefixed["mcnemar"] == same_db["mcnemar"]);
  const json flag = CompareJson({runs.a, other, "--db", runs.db, "--db-b", other_db}, runs.dir);
  CHECK(flag["overall"] == prefixed["overall"]);
  // Both sides prefixed, the default database never opened.
  const json both = CompareJson({runs.db + ":" + runs.a, other_db + ":" + other, "--db",
                                 runs.dir.File("absent.db")},
                                runs.dir);
  CHECK(both["overall"] == prefixed["overall"]);

  SECTION("a prefixed database that is not there, or a run not in it, is named") {
    const std::string missing = runs.dir.File("nowhere.db");
    const Result r = Evalrun({"compare", runs.a, missing + ":" + other, "--db", runs.db}, runs.dir);
    CHECK(r.code == 2);
    CHECK(r.err == "evalrun: error: '" + missing + ":" + other +
                       "' is neither a bundle file nor a run id in " + missing + " (" + missing +
                       ": no results database here; --db, --db-b or DB:RUN_ID names another)\n");
    const Result wrong = Evalrun({"compare", runs.a, other_db + ":" + runs.b, "--db", runs.db},
                                 runs.dir);
    CHECK(wrong.code == 2);
    CHECK_THAT(wrong.err,
               Catch::StartsWith("evalrun: error: " + other_db + ": no run '" + runs.b + "'"));
  }
}

TEST_CASE("compare: errors name the problem and exit 2", "[runner][compare]") {
  SmokeRuns& runs = Runs();
  SECTION("an unknown run id") {
    const Result r = Evalrun({"compare", runs.a, "r-no-such-run", "--db", runs.db}, runs.dir);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::StartsWith("evalrun: error: " + runs.db + ": no run 'r-no-such-run'"));
    CHECK_THAT(r.err, Catch::Contains("evalrun runs lists them"));
  }
  SECTION("a typo in a run id gets a hint") {
    std::string typo = runs.b;
    typo.back() = typo.back() == 'x' ? 'y' : 'x';
    const Result r = Evalrun({"compare", runs.a, typo, "--db", runs.db}, runs.dir);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains("did you mean '"));
  }
  SECTION("no database for run ids") {
    const std::string missing = runs.dir.File("none.db");
    const Result r = Evalrun({"compare", "r1", "r2", "--db", missing}, runs.dir);
    CHECK(r.code == 2);
    CHECK(r.err == "evalrun: error: 'r1' is neither a bundle file nor a run id in " + missing +
                       " (" + missing +
                       ": no results database here; --db, --db-b or DB:RUN_ID names another)\n");
  }
  SECTION("an unreadable bundle") {
    const std::string missing = runs.dir.File("missing.evalrun.json");
    const Result r = Evalrun({"compare", missing, runs.a, "--db", runs.db}, runs.dir);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::StartsWith("evalrun: error: " + missing + ": cannot read"));
    const std::string garbage = runs.dir.File("garbage.json");
    std::ofstream(garbage) << "{not json";
    const Result g = Evalrun({"compare", garbage, runs.a, "--db", runs.db}, runs.dir);
    CHECK(g.code == 2);
    CHECK_THAT(g.err, Catch::StartsWith("evalrun: error: " + garbage + ": not JSON"));
  }
  SECTION("a bad output format") {
    const Result r = Evalrun({"compare", runs.a, runs.b, "--db", runs.db, "-o", "jsn"}, runs.dir);
    CHECK(r.code == 2);
    CHECK(r.err == "evalrun: error: -o 'jsn': expected md or json (did you mean 'json'?)\n");
  }
  SECTION("runs of different suites with no shared task") {
    const fs::path other = runs.dir.path / "other";
    fs::create_directories(other);
    std::ofstream(other / "suite.yaml")
        << "schema_version: 1\nsuite: other\ndefaults: {max_tokens: 64, temperature: 0}\n"
        << "tasks:\n  - {id: o1, dimension: math, prompt: \"What is 2 plus 2? End with ANSWER: "
           "<n>\", grader: {type: answer_line, answer: 4}}\n";
    MockServer mock(FastMock({}));
    mock.Start();
    const std::string other_run = SmokeRun(mock, runs.db, runs.dir, other.string());
    const Result r = Evalrun({"compare", runs.a, other_run, "--db", runs.db}, runs.dir);
    CHECK(r.code == 2);
    CHECK(r.err == "evalrun: error: runs " + runs.a + " and " + other_run +
                       " share no task: A ran smoke, B ran other (tasks are matched by id and "
                       "task hash)\n");
  }
}
