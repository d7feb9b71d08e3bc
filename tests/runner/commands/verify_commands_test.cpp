// `evalrun export` and `evalrun verify` as a user meets them: the real binary runs a synthetic
// suite pinned at a git commit against the in-process mock, exports the run, and verifies the
// bundle; then each kind of edit (an output character, a grade, a timing sample, a token count,
// a task hash, a label) is made to the file and verify must fail, exit 3, and name the part.
#include "runner/commands/verify_commands.h"

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/support/catch.h"
#include "tests/support/synthetic_run.h"
#include <nlohmann/json.hpp>

#include "core/canonical_json.h"
#include "plugins/mock_server.h"
#include "results/bundle.h"

namespace {

namespace fs = std::filesystem;
using evalrun::MockConfig;
using evalrun::MockServer;
using nlohmann::json;
using namespace evalrun::testing;

json ReadJson(const std::string& path) { return json::parse(Slurp(path)); }

// The index of the first task record that passed (or failed).
size_t RecordWith(const json& doc, bool passed) {
  const json& tasks = doc["tasks"];
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (tasks[i]["grade"]["passed"] == passed) return i;
  }
  FAIL("no task record with passed " << passed);
  return 0;
}

}  // namespace

TEST_CASE("verify: a fresh export of a pinned run verifies, and each edit fails naming its part",
          "[runner][verify]") {
  TempDir dir;
  const SuiteRepo repo = MakeRepo(dir);
  MockServer mock(FastMock(kTasks));
  mock.Start();
  const std::string bundle =
      RunAndExport(repo.repo + "/suite@" + repo.first, {"--no-speed"}, mock, dir, "pinned");
  const json original = ReadJson(bundle);

  const Result fresh = Evalrun({"verify", bundle}, dir);
  INFO(fresh.out << fresh.err);
  CHECK(fresh.code == 0);
  CHECK_THAT(fresh.out, Catch::Contains("hash: ok (" + original["result_hash"].get<std::string>()));
  CHECK_THAT(fresh.out, Catch::Contains("tasks: ok (12 planned, 12 records; 12 with task data"));
  CHECK_THAT(fresh.out, Catch::Contains("grades: ok (12 of 12 grades rechecked, all equal)"));
  CHECK_THAT(fresh.out, Catch::Contains("figures: ok ("));
  CHECK(original["metrics_version"] == 2);
  CHECK_THAT(fresh.out, Catch::Contains("suite: ok (all 12 planned task hashes match commit " +
                                        repo.first.substr(0, 12)));
  CHECK_THAT(fresh.out, Catch::Contains("pinned: ok (suite "));
  CHECK_THAT(fresh.out, Catch::EndsWith("verify: ok\n"));

  SECTION("--expect-hash: the published hash passes, another fails") {
    CHECK(Evalrun({"verify", bundle, "--expect-hash", original["result_hash"].get<std::string>()}, dir)
              .code == 0);
    const Result other = Evalrun({"verify", bundle, "--expect-hash", std::string(64, '0')}, dir);
    CHECK(other.code == 3);
    CHECK_THAT(other.out, Catch::Contains("hash: FAILED: --expect-hash differs"));
  }

  SECTION("the report of a bundle shows its hash") {
    const Result report = Evalrun({"report", bundle}, dir);
    CHECK(report.code == 0);
    CHECK_THAT(report.out,
               Catch::Contains("result hash: `" + original["result_hash"].get<std::string>()));
  }

  // Each edit: what to change, then the lines verify must print.
  struct Edit {
    std::string what;
    std::function<void(json&)> apply;
    std::vector<std::string> expected;
  };
  const size_t pass = RecordWith(original, true);
  const size_t fail = RecordWith(original, false);
  const std::string pass_id = original["tasks"][pass]["task_id"];
  const std::string fail_id = original["tasks"][fail]["task_id"];
  const std::string pass_part = "tasks[" + std::to_string(pass) + "] (task '" + pass_id + "')";
  const std::vector<Edit> edits = {
      {"an output character",
       [&](json& d) {
         std::string& out = d["tasks"][pass]["output"].get_ref<std::string&>();
         out.back() = out.back() == '9' ? '8' : '9';
       },
       {"hash: FAILED", "changed: " + pass_part, "grades: FAILED: 1 of 12 grades differ",
        "task '" + pass_id + "': the bundle's grade differs from answer_line/1 today",
        "figures: ok", "tasks: ok"}},
      {"a grade",
       [&](json& d) {
         d["tasks"][fail]["grade"]["passed"] = true;
         d["tasks"][fail]["grade"]["score"] = 1;
       },
       {"hash: FAILED", "grades: FAILED", "task '" + fail_id + "': the bundle's grade differs",
        "passed true vs false", "figures: FAILED", "summary.passed: the bundle has"}},
      // A failure hidden as an environment error (left out of the score) is caught, and the
      // line quotes the run's reason so that a reader can judge it.
      {"a grade turned into an environment error",
       [&](json& d) {
         json& g = d["tasks"][fail]["grade"];
         g["status"] = "env_error";
         g["reason"] = "the host's Go (go1.19.8) is older than the module's Go 1.22";
       },
       {"hash: FAILED", "grades: FAILED",
        "task '" + fail_id + "': the bundle's grade differs",
        "status env_error vs graded (the run's reason: \"the host's Go (go1.19.8) is older "
        "than the module's Go 1.22\")"}},
      {"a timing sample",
       [&](json& d) { d["tasks"][pass]["requests"][0]["last_ns"] = 987654321; },
       {"hash: FAILED", "changed: " + pass_part, "grades: ok", "figures: FAILED",
        "summary.speed.decode_tps"}},
      {"a token count",
       [&](json& d) {
         json& usage = d["tasks"][pass]["requests"][0]["usage"];
         usage["completion_tokens"] = usage["completion_tokens"].get<int64_t>() + 7;
       },
       {"hash: FAILED", "changed: " + pass_part, "figures: FAILED", "summary.tokens.answer"}},
      {"a task hash",
       [&](json& d) { d["tasks"][pass]["task_hash"] = std::string(64, 'e'); },
       {"hash: FAILED", "tasks: FAILED",
        "task '" + pass_id + "': task_hash eeeeeeeeeeeeeeee but the plan records"}},
      {"a planned task hash",
       [&](json& d) {
         for (json& t : d["suite"]["tasks"]) {
           if (t["id"] == pass_id) t["hash"] = std::string(64, 'e');
         }
       },
       {"hash: FAILED", "tasks: FAILED",
        "task '" + pass_id + "': its stored task data hashes to", "suite: FAILED",
        "task '" + pass_id + "': the bundle records eeeeeeeeeeeeeeee, commit"}},
      {"the metric definitions' version (a result of an evalrun before issue 18's prefill rules)",
       [&](json& d) { d.erase("metrics_version"); },
       {"hash: FAILED", "grades: ok",
        "figures: not checked (computed with metric definitions 1; this evalrun has 2 "
        "(docs/metrics.md))"}},
      {"a label",
       [&](json& d) { d["run"]["labels"]["quant"] = "FP16"; },
       {"hash: FAILED", "changed: run.labels", "tasks: ok", "grades: ok", "figures: ok",
        "suite: ok", "verify: FAILED (hash)"}},
  };
  for (const Edit& edit : edits) {
    DYNAMIC_SECTION("editing " << edit.what) {
      json doc = original;
      edit.apply(doc);
      const std::string edited = dir.File("edited.evalrun.json");
      Write(edited, evalrun::CanonicalJson(doc));
      const Result r = Evalrun({"verify", edited}, dir);
      INFO(r.out << r.err);
      CHECK(r.code == 3);
      for (const std::string& line : edit.expected) CHECK_THAT(r.out, Catch::Contains(line));
    }
  }
}

TEST_CASE("verify: a bundle whose task hashes are not those of the suite at its commit fails",
          "[runner][verify]") {
  TempDir dir;
  const SuiteRepo repo = MakeRepo(dir);
  MockServer mock(FastMock(kTasks));
  mock.Start();
  // Run against the commit with the edited gold answer, then claim the first commit: a
  // self-consistent forgery (hashes recomputed through the API), caught by the suite check.
  const std::string bundle =
      RunAndExport(repo.repo + "/suite@" + repo.second, {"--no-speed"}, mock, dir, "forged");
  evalrun::Bundle b = evalrun::ReadBundle(bundle);
  std::map<std::string, json> task_data;
  for (const json& t : b.document["suite"]["tasks"]) task_data[t["id"].get<std::string>()] = t["task"];
  b.run.info.suite_commit = repo.first;
  b.run.info.suite_tree = Shell("git -C " + repo.repo + " rev-parse " + repo.first + "^{tree}");
  b.run.info.suite_spec = repo.repo + "/suite@" + repo.first;
  const std::string forged = dir.File("forged2.evalrun.json");
  Write(forged, evalrun::CanonicalJson(evalrun::MakeBundle(b.run, b.plan, task_data)));

  for (const bool with_repo : {false, true}) {
    std::vector<std::string> args = {"verify", forged};
    if (with_repo) args.insert(args.end(), {"--suite-repo", repo.repo});
    const Result r = Evalrun(args, dir);
    INFO(r.out << r.err);
    CHECK(r.code == 3);
    CHECK_THAT(r.out, Catch::Contains("hash: ok"));
    CHECK_THAT(r.out, Catch::Contains("suite: FAILED: 1 planned task(s) differ from commit " +
                                      repo.first.substr(0, 12)));
    CHECK_THAT(r.out, Catch::Contains("task 't001': the bundle records "));
    CHECK_THAT(r.out, Catch::Contains("verify: FAILED (suite)"));
    CHECK_THAT(r.out, Catch::Contains("pinned: not checked (suite "));
  }
  // The honest bundle of the second commit verifies.
  CHECK(Evalrun({"verify", bundle}, dir).code == 0);
}

TEST_CASE("verify: a pinned suite that is not here to check is not claimed as pinned",
          "[runner][verify]") {
  TempDir dir;
  const SuiteRepo repo = MakeRepo(dir);
  MockServer mock(FastMock(kTasks));
  mock.Start();
  const std::string bundle =
      RunAndExport(repo.repo + "/suite@" + repo.first, {"--no-speed"}, mock, dir, "gone");
  fs::rename(repo.repo, dir.File("moved-away"));
  const Result r = Evalrun({"verify", bundle}, dir);
  INFO(r.out << r.err);
  CHECK(r.code == 0);  // hash, grades (from the bundle's task data) and figures all check
  CHECK_THAT(r.out, Catch::Contains("suite: not checked (the suite could not be loaded: "));
  CHECK_THAT(r.out, Catch::Contains("pinned: not checked (the bundle records suite " + repo.repo +
                                    "/suite@" + repo.first + " at commit " + repo.first +
                                    ", which could not be checked here (see suite))"));
  CHECK_THAT(r.out, !Catch::Contains("pinned: ok"));
  CHECK_THAT(r.out, Catch::EndsWith("verify: ok (not checked here: suite, pinned)\n"));
  // The forged-commit case (suite FAILED) is in the test above: pinned is not claimed there
  // either, and only the suite is counted as failed.
}

TEST_CASE("verify: a bare-path suite verifies only as unpinned", "[runner][verify]") {
  TempDir dir;
  fs::create_directories(dir.File("bare"));
  Write(dir.File("bare/suite.yaml"), SuiteYaml(kTasks, 1));
  MockServer mock(FastMock(kTasks));
  mock.Start();
  const std::string bundle = RunAndExport(dir.File("bare"), {"--no-speed"}, mock, dir, "bare");
  const Result r = Evalrun({"verify", bundle}, dir);
  INFO(r.out << r.err);
  CHECK(r.code == 3);
  CHECK_THAT(r.out, Catch::Contains("hash: ok"));
  CHECK_THAT(r.out, Catch::Contains("grades: ok"));
  CHECK_THAT(r.out, Catch::Contains("pinned: FAILED: unpinned: the suite '" + dir.File("bare") +
                                    "' was read from disk"));
  CHECK_THAT(r.out, Catch::Contains("verify: FAILED (pinned)"));
}

TEST_CASE("verify: an unreadable bundle is a usage error naming the member",
          "[runner][verify]") {
  TempDir dir;
  Write(dir.File("bad.evalrun.json"), "{\"format\":\"evalrun.bundle\",\"format_version\":1}");
  const Result r = Evalrun({"verify", dir.File("bad.evalrun.json")}, dir);
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("bad.evalrun.json: evalrun_version: missing"));
}

TEST_CASE("verify --spot reruns tasks against your own server and reports agreement",
          "[runner][verify]") {
  TempDir dir;
  const SuiteRepo repo = MakeRepo(dir);
  MockServer mock(FastMock(kTasks));
  mock.Start();
  const std::string bundle =
      RunAndExport(repo.repo + "/suite@" + repo.first, {"--no-speed"}, mock, dir, "spot");

  // The same (deterministic) server: every rerun task gets the same grade and the same output.
  const Result same = Evalrun({"verify", bundle, "--spot", "4", "--endpoint", mock.base_url(),
                               "--seed", "3"},
                              dir);
  INFO(same.out << same.err);
  CHECK(same.code == 0);
  CHECK_THAT(same.out, Catch::Contains("spot: ok (4 tasks rerun against " + mock.base_url() +
                                       " (seed 3): 4 same grade, 4 identical output)"));
  // The same seed picks the same tasks.
  const Result again = Evalrun({"verify", bundle, "--spot", "4", "--endpoint", mock.base_url(),
                                "--seed", "3"},
                               dir);
  CHECK(again.out == same.out);

  // A server that answers every task right: the tasks the run failed now pass, so the result
  // does not match what this server gives.
  MockConfig right = FastMock(kTasks);
  for (int i = 0; i < kTasks; ++i) right.answers[i].content = "ANSWER: " + std::to_string(i);
  MockServer other(right);
  other.Start();
  const Result differs = Evalrun({"verify", bundle, "--spot", std::to_string(kTasks),
                                  "--endpoint", other.base_url(), "--seed", "1"},
                                 dir);
  INFO(differs.out);
  CHECK(differs.code == 3);
  CHECK_THAT(differs.out, Catch::Contains("spot: FAILED: 12 tasks rerun against " +
                                          other.base_url() + " (seed 1): 8 same grade, 0 "
                                          "identical output"));
  CHECK_THAT(differs.out, Catch::Contains("task 't002': grade differs: the bundle has "));
  CHECK_THAT(differs.out, Catch::Contains("verify: FAILED (spot)"));

  const Result no_endpoint = Evalrun({"verify", bundle, "--spot", "2"}, dir);
  CHECK(no_endpoint.code == 2);
  CHECK(no_endpoint.err == "evalrun: error: --spot needs --endpoint URL (your own server)\n");
}
