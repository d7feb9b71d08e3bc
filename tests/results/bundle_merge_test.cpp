// Merging shards' bundles without the binary: synthetic shard runs made into bundles, merged,
// and the merged bundle's parts checked; each way a merge must refuse, with its message.
#include "results/bundle_merge.h"

#include <algorithm>

#include "core/error.h"
#include "core/sha256.h"
#include "core/shard.h"
#include "tests/support/catch.h"

namespace {

using evalrun::Bundle;
using evalrun::MergePart;
using nlohmann::json;

// A plan of 6 tasks, a0..a5, in dimensions math and prose.
evalrun::ShardRecord Record(int64_t index, int64_t count) {
  evalrun::ShardRecord record;
  record.shard = {index, count};
  for (int i = 0; i < 6; ++i) {
    const std::string id = "a" + std::to_string(i);
    record.plan.push_back({id, evalrun::Sha256Hex(id), i % 2 ? "prose" : "math"});
  }
  record.plan_hash = evalrun::PlanHash(record.plan);
  return record;
}

// Shard `index` of `count` as an exported bundle: every task graded, passed when its number is
// even.
MergePart Shard(int64_t index, int64_t count, const std::string& model = "m") {
  const evalrun::ShardRecord record = Record(index, count);
  evalrun::RunData run;
  run.info.id = "r" + std::to_string(index);
  run.info.status = evalrun::kRunFinished;
  run.info.created_at = "2026-01-0" + std::to_string(index + 1) + "T00:00:00Z";
  run.info.updated_at = run.info.created_at;
  run.info.evalrun_version = "0.1.0";
  run.info.suite_name = "s";
  run.info.suite_spec = "s@c";
  run.info.suite_commit = std::string(40, 'c');
  run.info.suite_tree = std::string(40, 'd');
  run.info.endpoint = "http://rig" + std::to_string(index);
  run.info.model = model;
  run.info.settings = {{"concurrency", 1}, {"seed", 0},
                       {"shard", evalrun::ShardRecordToJson(record)}};
  std::vector<evalrun::PlannedTask> plan;
  for (const std::string& id : evalrun::ShardTaskIds(record, index)) {
    plan.push_back({id, evalrun::Sha256Hex(id)});
    evalrun::TaskResult t;
    t.task_id = id;
    t.task_hash = evalrun::Sha256Hex(id);
    t.dimension = (id.back() - '0') % 2 ? "prose" : "math";
    t.difficulty = "easy";
    t.grade.status = evalrun::GradeStatus::kGraded;
    t.grade.passed = (id.back() - '0') % 2 == 0;
    t.grade.score = t.grade.passed ? 1 : 0;
    run.tasks.push_back(t);
  }
  run.info.planned_tasks = static_cast<int64_t>(plan.size());
  const json document = evalrun::MakeBundle(run, plan);
  return {"shard" + std::to_string(index) + ".json",
          evalrun::ParseBundle(document.dump(), "shard" + std::to_string(index) + ".json")};
}

std::string MergeError(const std::vector<MergePart>& parts) {
  try {
    evalrun::MergeBundles(parts);
  } catch (const evalrun::Error& e) {
    return e.what();
  }
  return "(merged)";
}

}  // namespace

TEST_CASE("bundle_merge: shards merge into one bundle whose parts recompute", "[bundle]") {
  const json merged = evalrun::MergeBundles({Shard(1, 2), Shard(0, 2)});
  CHECK(evalrun::IsMergedBundle(merged));
  CHECK(merged["result_hash"] == evalrun::ComputeResultHash(merged));
  CHECK(merged["run"]["planned_tasks"] == 6);
  CHECK(merged["run"]["endpoint"] == "http://rig0, http://rig1");
  CHECK(merged["run"]["created_at"] == "2026-01-01T00:00:00Z");
  CHECK(merged["run"]["settings"]["shard"]["merged"] == true);
  REQUIRE(merged["tasks"].size() == 6);
  for (size_t i = 0; i < 6; ++i) CHECK(merged["tasks"][i]["task_id"] == "a" + std::to_string(i));
  CHECK(merged["summary"]["passed"] == 3);
  std::string summary;
  CHECK(evalrun::MergedBundleProblems(merged, &summary).empty());
  CHECK_THAT(summary, Catch::StartsWith("2 shards of plan "));
  for (size_t i = 0; i < 2; ++i) {
    const json part = evalrun::MergedPartDocument(merged, i);
    CHECK(evalrun::ComputeResultHash(part) ==
          merged["parts"][i]["result_hash"].get<std::string>());
    CHECK(part["result_hash"].get<std::string>() ==
          Shard(static_cast<int64_t>(i), 2).bundle.result_hash);
  }

  SECTION("a changed record breaks its part's hash, named") {
    json edited = merged;
    edited["tasks"][2]["output"] = "changed";
    const std::vector<std::string> problems = evalrun::MergedBundleProblems(edited, nullptr);
    REQUIRE_FALSE(problems.empty());
    CHECK_THAT(problems[0], Catch::Contains("/2): its document hashes to "));
  }
  SECTION("a record left out is missing coverage and a part's record") {
    json edited = merged;
    edited["tasks"].erase(5);
    const std::vector<std::string> problems = evalrun::MergedBundleProblems(edited, nullptr);
    REQUIRE_FALSE(problems.empty());
    CHECK_THAT(problems[0], Catch::Contains(".records: task \"a5\" has no record in the merged bundle"));
    CHECK(std::find(problems.begin(), problems.end(),
                    "coverage: 1 planned task(s) have no record: 'a5'") != problems.end());
  }
  SECTION("a shard's own bundle checks its split") {
    const MergePart shard = Shard(0, 2);
    CHECK(evalrun::ShardBundleProblems(shard.bundle.document, &summary).empty());
    CHECK_THAT(summary, Catch::StartsWith("shard 0/2 of plan "));
    CHECK(evalrun::ShardBundleProblems(merged, &summary).empty());
    CHECK(summary.empty());
  }
}

TEST_CASE("bundle_merge: parts that do not make one plan are refused by reason", "[bundle]") {
  CHECK(MergeError({Shard(0, 3), Shard(1, 3)}) ==
        "cannot merge: shard 2/3 is missing: 2 tasks of the plan are in no part (" +
            [] {
              std::string ids;
              for (const std::string& id : evalrun::ShardTaskIds(Record(2, 3), 2)) {
                ids += (ids.empty() ? "'" : ", '") + id + "'";
              }
              return ids;
            }() +
            "); run it with --shard I/N, export it and add its bundle");
  CHECK_THAT(MergeError({Shard(0, 3)}),
             Catch::StartsWith("cannot merge: shards 1/3, 2/3 are missing: 4 tasks of the plan "));
  CHECK_THAT(MergeError({Shard(0, 2), Shard(0, 2), Shard(1, 2)}),
             Catch::StartsWith("cannot merge: shard0.json and shard0.json are both shard 0/2: they "
                               "overlap in 3 tasks ("));
  CHECK(MergeError({Shard(0, 2), Shard(1, 3)}) ==
        "cannot merge: shard1.json is shard 1/3 but shard0.json is shard 0/2: every part must "
        "split the plan into the same number of shards");
  CHECK(MergeError({Shard(0, 2), Shard(1, 2, "other")}) ==
        "cannot merge: shard1.json: model 'other', but shard0.json ran 'm': the shards of one "
        "result run one model");
  CHECK(MergeError({}) ==
        "merge: give the bundles of every shard (evalrun merge A.evalrun.json B.evalrun.json ... "
        "--out all.evalrun.json)");
  MergePart unfinished = Shard(1, 2);
  unfinished.bundle.run.info.status = evalrun::kRunInterrupted;
  CHECK(MergeError({Shard(0, 2), unfinished}) ==
        "cannot merge: shard1.json: shard 1/2 (run r1) is interrupted, not finished: resume it "
        "(evalrun suite ... --shard 1/2 --resume r1) and export it again");
}
