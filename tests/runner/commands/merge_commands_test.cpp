// Shards and `evalrun merge` as a user meets them (issue 19): the real binary runs a synthetic
// suite pinned at a git commit against the in-process mock, once whole and as shards 0/3, 1/3 and
// 2/3; the shards' bundles merge into one whose grades and summary scores are the whole run's and
// which verifies; and every way parts fail to belong together is refused naming the reason.
#include "runner/commands/merge_commands.h"

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "tests/support/catch.h"
#include "tests/support/synthetic_run.h"
#include <nlohmann/json.hpp>

#include "core/canonical_json.h"
#include "plugins/mock_server.h"
#include "results/bundle.h"
#include "results/store.h"

namespace {

namespace fs = std::filesystem;
using evalrun::MockConfig;
using evalrun::MockServer;
using nlohmann::json;
using namespace evalrun::testing;


json ReadJson(const std::string& path) { return json::parse(Slurp(path)); }

std::vector<std::string> PlannedIds(const json& doc) {
  std::vector<std::string> ids;
  for (const json& t : doc["suite"]["tasks"]) ids.push_back(t["id"]);
  return ids;
}

std::string Quoted(const std::vector<std::string>& ids) {
  std::string out;
  for (const std::string& id : ids) out += (out.empty() ? "'" : ", '") + id + "'";
  return out;
}

// The summary's scores: everything but the speed across tasks (timings differ between runs).
json Scores(const json& summary) {
  json out = summary;
  out.erase("speed");
  return out;
}

}  // namespace

TEST_CASE("merge: shards 0/3, 1/3, 2/3 merged are the whole run, verify, and bad parts are "
          "refused naming the reason",
          "[runner][merge][slow]") {
  TempDir dir;
  const SuiteRepo repo = MakeRepo(dir);
  MockServer mock(FastMock(kTasks));
  mock.Start();
  const std::string spec = repo.repo + "/suite@" + repo.first;

  const std::string whole_path = RunAndExport(spec, {"--no-speed"}, mock, dir, "whole");
  // Shard 0 runs the speed protocol too: its samples stay with its part of the merged bundle.
  const std::vector<std::string> shard_paths = {
      RunAndExport(spec, {"--shard", "0/3"}, mock, dir, "s0"),
      RunAndExport(spec, {"--shard", "1/3", "--no-speed"}, mock, dir, "s1"),
      RunAndExport(spec, {"--shard", "auto/3", "--no-speed"}, mock, dir, "s2",
                   {{"JOB_COMPLETION_INDEX", "2"}})};
  const json whole = ReadJson(whole_path);
  std::vector<json> shards;
  for (const std::string& path : shard_paths) shards.push_back(ReadJson(path));

  // Each shard is an ordinary run of its part of the plan, recording the shard, the rule and the
  // whole plan's hash. The split of this fixed suite is pinned.
  std::set<std::string> union_ids;
  for (int i = 0; i < 3; ++i) {
    INFO("shard " << i);
    const json& shard = shards[static_cast<size_t>(i)]["run"]["settings"]["shard"];
    CHECK(shard["index"] == i);
    CHECK(shard["count"] == 3);
    CHECK(shard["rule"] == "sha256-round-robin-by-dimension/1");
    CHECK(shard["plan_hash"] == shards[0]["run"]["settings"]["shard"]["plan_hash"]);
    CHECK(shard["plan"].size() == 12);
    CHECK(shards[static_cast<size_t>(i)]["run"]["planned_tasks"] == 4);
    for (const std::string& id : PlannedIds(shards[static_cast<size_t>(i)])) union_ids.insert(id);
    CHECK_THAT(Slurp(dir.File("s" + std::to_string(i) + "-report/report.md")),
               Catch::Contains("shard " + std::to_string(i) + "/3 of a 12-task plan (plan "));
  }
  CHECK(union_ids.size() == 12);
  CHECK(PlannedIds(shards[0]) == std::vector<std::string>{"t000", "t001", "t005", "t007"});
  CHECK(PlannedIds(shards[1]) == std::vector<std::string>{"t002", "t003", "t010", "t011"});
  CHECK(PlannedIds(shards[2]) == std::vector<std::string>{"t004", "t006", "t008", "t009"});

  const Result shard_verify = Evalrun({"verify", shard_paths[1]}, dir);
  INFO(shard_verify.out << shard_verify.err);
  CHECK(shard_verify.code == 0);
  CHECK_THAT(shard_verify.out, Catch::Contains("shard: ok (shard 1/3 of plan "));

  const std::string merged_path = dir.File("all.evalrun.json");
  const Result merged_run =
      Evalrun({"merge", shard_paths[2], shard_paths[0], shard_paths[1], "--out", merged_path}, dir);
  INFO(merged_run.err);
  REQUIRE(merged_run.code == 0);
  CHECK_THAT(merged_run.err, Catch::StartsWith("evalrun: merged 3 shards (12 tasks) into " +
                                               merged_path + " (result hash "));
  const json merged = ReadJson(merged_path);

  {  // the merged bundle has the whole run's grades and summary scores
    CHECK(PlannedIds(merged) == PlannedIds(whole));
    REQUIRE(merged["tasks"].size() == whole["tasks"].size());
    for (size_t i = 0; i < whole["tasks"].size(); ++i) {
      INFO(whole["tasks"][i]["task_id"]);
      CHECK(merged["tasks"][i]["task_id"] == whole["tasks"][i]["task_id"]);
      CHECK(merged["tasks"][i]["grade"] == whole["tasks"][i]["grade"]);
    }
    CHECK(Scores(merged["summary"]) == Scores(whole["summary"]));
    CHECK(merged["run"]["planned_tasks"] == 12);
    CHECK(merged["run"]["settings"]["shard"]["merged"] == true);
    REQUIRE(merged["parts"].size() == 3);
    for (size_t i = 0; i < 3; ++i) {
      CHECK(merged["parts"][i]["shard"]["index"] == i);
      CHECK(merged["parts"][i]["result_hash"] == shards[i]["result_hash"]);
    }
    CHECK(merged["parts"][0]["document"]["speed"]["tests"].size() > 0);
    // The same parts, in any order, merge into the same bundle.
    const Result again =
        Evalrun({"merge", shard_paths[0], shard_paths[1], shard_paths[2], "--out",
                 dir.File("again.evalrun.json")}, dir);
    CHECK(again.code == 0);
    CHECK(ReadJson(dir.File("again.evalrun.json"))["result_hash"] == merged["result_hash"]);
  }

  {  // the merged bundle verifies, and reports say it was merged
    const Result verified = Evalrun({"verify", merged_path}, dir);
    INFO(verified.out << verified.err);
    CHECK(verified.code == 0);
    CHECK_THAT(verified.out, Catch::Contains("tasks: ok (12 planned, 12 records; 12 with task data"));
    CHECK_THAT(verified.out, Catch::Contains("parts: ok (3 shards of plan "));
    CHECK_THAT(verified.out, Catch::Contains("each part's result hash recomputes, each holds the "
                                             "rule's tasks, all 12 planned tasks have a record)"));
    CHECK_THAT(verified.out, Catch::Contains("grades: ok (12 of 12 grades rechecked, all equal)"));
    CHECK_THAT(verified.out, Catch::Contains("figures: ok (the summary, 3 parts' summaries and "));
    CHECK_THAT(verified.out, Catch::EndsWith("verify: ok\n"));
    const Result report = Evalrun({"report", merged_path}, dir);
    CHECK(report.code == 0);
    CHECK_THAT(report.out, Catch::Contains("merged from 3 shards of a 12-task plan (plan "));
    const Result scores = Evalrun({"report", merged_path, "-o", "json"}, dir);
    const Result whole_scores = Evalrun({"report", whole_path, "-o", "json"}, dir);
    CHECK(Scores(json::parse(scores.out)) == Scores(json::parse(whole_scores.out)));
  }

  {  // an edited part of the merged bundle fails verify naming the part
    json edited = merged;
    edited["parts"][1]["document"]["run"]["labels"]["who"] = "me";
    evalrun::SealBundle(edited);  // a consistent outer hash: only the part's own hash is wrong
    Write(dir.File("edited.evalrun.json"), evalrun::CanonicalJson(edited) + "\n");
    const Result verified = Evalrun({"verify", dir.File("edited.evalrun.json")}, dir);
    CHECK(verified.code == 3);
    CHECK_THAT(verified.out, Catch::Contains("parts: FAILED: "));
    CHECK_THAT(verified.out, Catch::Contains("parts[1] (shard 1/3): its document hashes to "));
    CHECK_THAT(verified.out, Catch::Contains("parts[1] (shard 1/3): changed: run.labels"));
  }

  {  // a missing shard is refused naming its tasks
    const Result r = Evalrun({"merge", shard_paths[0], shard_paths[1], "--out",
                              dir.File("bad.evalrun.json")}, dir);
    CHECK(r.code == 2);
    CHECK(r.err == "evalrun: error: cannot merge: shard 2/3 is missing: 4 tasks of the plan are "
                   "in no part (" + Quoted(PlannedIds(shards[2])) +
                   "); run it with --shard I/N, export it and add its bundle\n");
    CHECK_FALSE(fs::exists(dir.File("bad.evalrun.json")));
  }

  {  // an overlap is refused naming the tasks
    fs::copy_file(shard_paths[1], dir.File("copy.evalrun.json"));
    const Result r = Evalrun({"merge", shard_paths[0], shard_paths[1], dir.File("copy.evalrun.json"),
                              shard_paths[2], "--out", dir.File("bad.evalrun.json")}, dir);
    CHECK(r.code == 2);
    CHECK(r.err == "evalrun: error: cannot merge: " + shard_paths[1] + " and " +
                       dir.File("copy.evalrun.json") + " are both shard 1/3: they overlap in 4 "
                       "tasks (" + Quoted(PlannedIds(shards[1])) + "); give each shard once\n");
  }

  {  // a part whose own hash does not verify is refused
    json edited = shards[2];
    edited["run"]["labels"]["who"] = "me";
    Write(dir.File("edited.evalrun.json"), evalrun::CanonicalJson(edited) + "\n");
    const Result r = Evalrun({"merge", shard_paths[0], shard_paths[1], dir.File("edited.evalrun.json"),
                              "--out", dir.File("bad.evalrun.json")}, dir);
    CHECK(r.code == 2);
    CHECK(r.err == "evalrun: error: cannot merge: " + dir.File("edited.evalrun.json") +
                       ": its result hash does not verify (edited after export?); evalrun verify " +
                       dir.File("edited.evalrun.json") + " names what changed\n");
  }

  {  // an unsharded run, another count, commit or model are refused
    Result r = Evalrun({"merge", shard_paths[0], whole_path, "--out", dir.File("bad.evalrun.json")},
                       dir);
    CHECK(r.code == 2);
    CHECK(r.err == "evalrun: error: cannot merge: " + whole_path + ": run " +
                       whole["run"]["id"].get<std::string>() +
                       " is not a shard (it ran without --shard I/N); only the shards of one plan "
                       "merge\n");

    const std::string half = RunAndExport(spec, {"--shard", "1/2", "--no-speed"}, mock, dir, "h1");
    r = Evalrun({"merge", shard_paths[0], half, "--out", dir.File("bad.evalrun.json")}, dir);
    CHECK(r.err == "evalrun: error: cannot merge: " + half + " is shard 1/2 but " +
                       shard_paths[0] +
                       " is shard 0/3: every part must split the plan into the same number of "
                       "shards\n");

    const std::string later = RunAndExport(repo.repo + "/suite@" + repo.second,
                                           {"--shard", "2/3", "--no-speed"}, mock, dir, "later");
    r = Evalrun({"merge", shard_paths[0], shard_paths[1], later, "--out",
                 dir.File("bad.evalrun.json")}, dir);
    CHECK(r.err == "evalrun: error: cannot merge: " + later + ": suite commit " + repo.second +
                       ", but " + shard_paths[0] + "'s is " + repo.first +
                       ": the shards of one plan run one suite commit\n");

    const std::string other = RunAndExport(spec, {"--shard", "2/3", "--no-speed", "--model",
                                                  "other-model"}, mock, dir, "other");
    r = Evalrun({"merge", shard_paths[0], shard_paths[1], other, "--out",
                 dir.File("bad.evalrun.json")}, dir);
    CHECK(r.err == "evalrun: error: cannot merge: " + other +
                       ": model 'other-model', but " + shard_paths[0] +
                       " ran 'evalrun-mock': the shards of one result run one model\n");

    const std::string concurrent = RunAndExport(
        spec, {"--shard", "2/3", "--no-speed", "--concurrency", "2"}, mock, dir, "concurrent");
    r = Evalrun({"merge", shard_paths[0], shard_paths[1], concurrent, "--out",
                 dir.File("bad.evalrun.json")}, dir);
    CHECK(r.err == "evalrun: error: cannot merge: " + concurrent + ": settings differ from " +
                       shard_paths[0] + "'s: concurrency 2 (" + shard_paths[0] + ": 1)\n");
  }
}

TEST_CASE("merge: shard values and resume are checked before anything runs", "[runner][merge]") {
  TempDir dir;
  const SuiteRepo repo = MakeRepo(dir);
  MockServer mock(FastMock(kTasks));
  mock.Start();
  const std::string spec = repo.repo + "/suite@" + repo.first;
  const std::vector<std::string> base = {"suite", spec, "--endpoint", mock.base_url(), "--no-env",
                                         "--quiet", "--no-speed", "--db", dir.File("r.db")};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };

  Result r = Evalrun(with({"--shard", "3/3"}), dir);
  CHECK(r.code == 2);
  CHECK(r.err == "evalrun: error: --shard '3/3': the index must be below the count (shards are 0 "
                 "to 2)\n");
  r = Evalrun(base, dir, {{"EVALRUN_SHARD", "1/x"}});
  CHECK(r.code == 2);
  CHECK(r.err == "evalrun: error: EVALRUN_SHARD '1/x': expected I/N (e.g. 0/3), or auto/N under a "
                 "Slurm job array or a Kubernetes Indexed Job\n");
  r = Evalrun(with({"--shard", "auto/3"}), dir, {{"SLURM_ARRAY_TASK_ID", "3"},
                                                 {"SLURM_ARRAY_TASK_MIN", "1"}});
  CHECK(r.code == 2);
  CHECK(r.err == "evalrun: error: --shard 'auto/3': SLURM_ARRAY_TASK_ID 3 gives index 3, which "
                 "must be 0 to 2 (number a Slurm array from 0: --array=0-2)\n");
  r = Evalrun(with({"--shard", "12/13"}), dir);
  CHECK(r.code == 2);
  CHECK(r.err == "evalrun: error: shard 12/13 has no task: the selected plan has 12 tasks, so use "
                 "at most 12 shards\n");

  // A shard's run resumes as that shard only.
  r = Evalrun(with({"--shard", "0/3"}), dir, {});
  REQUIRE(r.code == 0);
  const std::string run_id = evalrun::ResultStore(dir.File("r.db")).ListRuns().front().id;
  r = Evalrun(with({"--resume", run_id}), dir, {{"EVALRUN_SHARD", "1/3"}});
  CHECK(r.code == 2);
  CHECK(r.err == "evalrun: error: --resume " + run_id + ": the run is shard 0/3, not 1/3 (give "
                 "--shard 0/3, or start a new run for shard 1/3)\n");
  r = Evalrun(with({"--resume", run_id}), dir);
  CHECK(r.err == "evalrun: error: --resume " + run_id + ": the run is shard 0/3; give --shard 0/3 "
                 "to resume it\n");
  r = Evalrun(with({"--resume", run_id, "--shard", "0/3", "--limit", "6"}), dir);
  CHECK_THAT(r.err, Catch::StartsWith("evalrun: error: --resume " + run_id +
                                      ": the selected plan is not the run's: its hash is "));
}
