#include "core/shard.h"

#include <cstdio>
#include <map>
#include <set>

#include "core/error.h"
#include "core/sha256.h"
#include "tests/support/catch.h"

namespace {

using evalrun::AssignShards;
using evalrun::EnvLookup;
using evalrun::ResolveShard;
using evalrun::ShardSpec;
using evalrun::ShardTask;

// A fixed plan: t000..t011, dimensions math, facts, format in turn, hash SHA-256("task <id>").
std::vector<ShardTask> FixedPlan() {
  const char* dimensions[] = {"math", "facts", "format"};
  std::vector<ShardTask> plan;
  for (int i = 0; i < 12; ++i) {
    char id[8];
    std::snprintf(id, sizeof id, "t%03d", i);
    plan.push_back({id, evalrun::Sha256Hex(std::string("task ") + id), dimensions[i % 3]});
  }
  return plan;
}

std::vector<std::vector<std::string>> Split(const std::vector<ShardTask>& plan, int64_t count,
                                            uint64_t seed) {
  const std::vector<int64_t> shards = AssignShards(plan, count, seed);
  std::vector<std::vector<std::string>> out(static_cast<size_t>(count));
  for (size_t i = 0; i < plan.size(); ++i) out[static_cast<size_t>(shards[i])].push_back(plan[i].id);
  return out;
}

EnvLookup Env(std::map<std::string, std::string> values) {
  return [values](const std::string& name) -> std::optional<std::string> {
    const auto it = values.find(name);
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

std::string ErrorOf(const std::optional<std::string>& flag, const EnvLookup& env) {
  try {
    ResolveShard(flag, env);
  } catch (const evalrun::Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

// The rule of docs/sharding.md, pinned: these lists were computed from the documented rule by an
// independent script (Python's hashlib), not by this code. A change here changes which machine
// runs which task, so it needs a new rule name (kShardRule).
TEST_CASE("shard: the split of a fixed plan is pinned", "[shard]") {
  const std::vector<ShardTask> plan = FixedPlan();
  CHECK(evalrun::PlanHash(plan) ==
        "ff3e001949c7c015b841cfa0dd4e4a9e4ab6893bc8517e4958b7efd9e4271e18");
  CHECK(std::string(evalrun::kShardRule) == "sha256-round-robin-by-dimension/1");
  using Lists = std::vector<std::vector<std::string>>;
  CHECK(Split(plan, 3, 0) == Lists{{"t001", "t004", "t009", "t011"},
                                   {"t002", "t005", "t006", "t007"},
                                   {"t000", "t003", "t008", "t010"}});
  CHECK(Split(plan, 3, 7) == Lists{{"t003", "t004", "t010", "t011"},
                                   {"t000", "t002", "t007", "t008"},
                                   {"t001", "t005", "t006", "t009"}});
  CHECK(Split(plan, 2, 0) == Lists{{"t003", "t004", "t005", "t006", "t010", "t011"},
                                   {"t000", "t001", "t002", "t007", "t008", "t009"}});
  CHECK(Split(plan, 5, 0) == Lists{{"t004", "t006", "t008"},
                                   {"t000", "t007", "t011"},
                                   {"t002", "t010"},
                                   {"t001", "t003"},
                                   {"t005", "t009"}});
  CHECK(Split(plan, 1, 0) == Lists{{"t000", "t001", "t002", "t003", "t004", "t005", "t006",
                                    "t007", "t008", "t009", "t010", "t011"}});
}

TEST_CASE("shard: the split depends only on the plan, and is balanced by dimension", "[shard]") {
  std::vector<ShardTask> plan = FixedPlan();
  for (int i = 12; i < 100; ++i) {
    plan.push_back({"x" + std::to_string(i), evalrun::Sha256Hex(std::to_string(i)),
                    i % 7 == 0 ? "rare" : (i % 2 ? "odd" : "even")});
  }
  for (const int64_t count : {1, 2, 3, 4, 7, 10}) {
    INFO("count " << count);
    const std::vector<int64_t> a = AssignShards(plan, count, 3);
    CHECK(a == AssignShards(plan, count, 3));  // deterministic
    std::map<std::string, std::map<int64_t, int>> per_dimension;
    std::map<int64_t, int> totals;
    for (size_t i = 0; i < plan.size(); ++i) {
      REQUIRE(a[i] >= 0);
      REQUIRE(a[i] < count);
      ++per_dimension[plan[i].dimension][a[i]];
      ++totals[a[i]];
    }
    for (auto& [dimension, shards] : per_dimension) {
      int low = 1 << 30, high = 0;
      for (int64_t s = 0; s < count; ++s) {
        low = std::min(low, shards[s]);
        high = std::max(high, shards[s]);
      }
      CHECK(high - low <= 1);
    }
    int low = 1 << 30, high = 0;
    for (int64_t s = 0; s < count; ++s) {
      low = std::min(low, totals[s]);
      high = std::max(high, totals[s]);
    }
    CHECK(high - low <= 1);
  }
  // A task's shard depends on the plan's tasks, not on their order in the plan.
  std::vector<ShardTask> reversed(plan.rbegin(), plan.rend());
  const std::vector<int64_t> forward = AssignShards(plan, 4, 0);
  const std::vector<int64_t> backward = AssignShards(reversed, 4, 0);
  for (size_t i = 0; i < plan.size(); ++i) CHECK(forward[i] == backward[plan.size() - 1 - i]);
}

TEST_CASE("shard: --shard, EVALRUN_SHARD, Slurm and Kubernetes give the shard", "[shard]") {
  const EnvLookup none = Env({});
  CHECK_FALSE(ResolveShard(std::nullopt, none).has_value());
  CHECK(ResolveShard(std::string("1/3"), none) == ShardSpec{1, 3});
  CHECK(ResolveShard(std::string("0/1"), none) == ShardSpec{0, 1});
  CHECK(ResolveShard(std::nullopt, Env({{"EVALRUN_SHARD", "2/4"}})) == ShardSpec{2, 4});
  CHECK_FALSE(ResolveShard(std::nullopt, Env({{"EVALRUN_SHARD", ""}})).has_value());
  // The flag wins over the variable.
  CHECK(ResolveShard(std::string("0/2"), Env({{"EVALRUN_SHARD", "2/4"}})) == ShardSpec{0, 2});
  // Slurm job arrays: the index is the array task id; with auto/N the array's own count does
  // not matter, so a shard resubmitted alone (sbatch --array=2) is still shard 2.
  CHECK(ResolveShard(std::string("auto/3"), Env({{"SLURM_ARRAY_TASK_ID", "2"}})) ==
        ShardSpec{2, 3});
  CHECK(ResolveShard(std::string("auto/3"), Env({{"SLURM_ARRAY_TASK_ID", "2"},
                                                 {"SLURM_ARRAY_TASK_COUNT", "1"},
                                                 {"SLURM_ARRAY_TASK_MIN", "2"}})) ==
        ShardSpec{2, 3});
  CHECK(ResolveShard(std::string("auto"), Env({{"SLURM_ARRAY_TASK_ID", "1"},
                                               {"SLURM_ARRAY_TASK_COUNT", "4"}})) ==
        ShardSpec{1, 4});
  CHECK(ResolveShard(std::nullopt, Env({{"EVALRUN_SHARD", "auto/4"},
                                        {"SLURM_ARRAY_TASK_ID", "3"},
                                        {"SLURM_ARRAY_TASK_COUNT", "4"}})) == ShardSpec{3, 4});
  // Kubernetes Indexed Jobs.
  CHECK(ResolveShard(std::string("auto/5"), Env({{"JOB_COMPLETION_INDEX", "4"}})) ==
        ShardSpec{4, 5});
}

TEST_CASE("shard: bad values are refused naming the source and the fix", "[shard]") {
  struct Case {
    std::optional<std::string> flag;
    std::map<std::string, std::string> env;
    const char* message;
  };
  const Case c = GENERATE(
      Case{"3/3", {}, "--shard '3/3': the index must be below the count (shards are 0 to 2)"},
      Case{"1/0", {}, "--shard '1/0': the count must be at least 1"},
      Case{"1", {}, "--shard '1': expected I/N (e.g. 0/3), or auto/N under a Slurm job array or "
                    "a Kubernetes Indexed Job"},
      Case{"-1/3", {}, "--shard '-1/3': expected I/N (e.g. 0/3), or auto/N under a Slurm job "
                       "array or a Kubernetes Indexed Job"},
      Case{"a/b", {}, "--shard 'a/b': expected I/N (e.g. 0/3), or auto/N under a Slurm job array "
                      "or a Kubernetes Indexed Job"},
      Case{std::nullopt, {{"EVALRUN_SHARD", "5/2"}},
           "EVALRUN_SHARD '5/2': the index must be below the count (shards are 0 to 1)"},
      Case{"auto/3", {},
           "--shard 'auto/3': no shard index in the environment: set by a Slurm job array "
           "(SLURM_ARRAY_TASK_ID) or a Kubernetes Indexed Job (JOB_COMPLETION_INDEX); elsewhere "
           "give --shard I/N"},
      Case{"auto", {{"JOB_COMPLETION_INDEX", "1"}},
           "--shard 'auto': no shard count: give auto/N (N shards), or run under a Slurm job "
           "array, which sets SLURM_ARRAY_TASK_COUNT"},
      Case{"auto/3", {{"SLURM_ARRAY_TASK_ID", "3"}},
           "--shard 'auto/3': SLURM_ARRAY_TASK_ID 3 gives index 3, which must be 0 to 2 (number "
           "a Slurm array from 0: --array=0-2)"},
      Case{"auto", {{"SLURM_ARRAY_TASK_ID", "1"}, {"SLURM_ARRAY_TASK_COUNT", "x"}},
           "--shard 'auto': SLURM_ARRAY_TASK_COUNT 'x' is not a count of tasks"},
      Case{"auto/3", {{"JOB_COMPLETION_INDEX", "x"}},
           "--shard 'auto/3': JOB_COMPLETION_INDEX 'x' is not a whole number"});
  INFO(c.message);
  CHECK(ErrorOf(c.flag, Env(c.env)) == c.message);
}

TEST_CASE("shard: the record round-trips and names a malformed member", "[shard]") {
  evalrun::ShardRecord record;
  record.shard = {1, 3};
  record.seed = 9;
  record.plan = FixedPlan();
  record.plan_hash = evalrun::PlanHash(record.plan);
  const evalrun::ShardRecord back =
      evalrun::ShardRecordFromJson(evalrun::ShardRecordToJson(record), "settings.shard");
  CHECK(back.shard == record.shard);
  CHECK(back.rule == evalrun::kShardRule);
  CHECK(back.seed == 9);
  CHECK(back.plan_hash == record.plan_hash);
  REQUIRE(back.plan.size() == 12);
  CHECK(back.plan[4].dimension == "facts");
  CHECK(evalrun::ShardTaskIds(back, 1) == Split(record.plan, 3, 9)[1]);
  nlohmann::json bad = evalrun::ShardRecordToJson(record);
  bad["plan"][2].erase("hash");
  CHECK_THROWS_WITH(evalrun::ShardRecordFromJson(bad, "settings.shard"),
                    "settings.shard.plan[2].hash: expected a string");
  bad = evalrun::ShardRecordToJson(record);
  bad["index"] = 3;
  CHECK_THROWS_WITH(evalrun::ShardRecordFromJson(bad, "settings.shard"),
                    "settings.shard: shard 3/3 is not a shard (0 <= I < N)");
}
