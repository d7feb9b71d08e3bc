#pragma once
// Shards (docs/sharding.md, issue 19): a deterministic part of a suite run's plan, so that the
// schedulers people already have (Slurm job arrays, Kubernetes Indexed Jobs, GNU parallel, a
// loop over ssh) can spread one run over several machines, and `evalrun merge` joins the parts'
// bundles into one that verifies like any other. This file is the shard's spelling ("I/N", and
// where `--shard auto/N` finds I), the split rule, the plan hash, and the record a shard run
// keeps in its settings. Pure functions: the environment comes in as a lookup.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace evalrun {

// The split rule's name and version, recorded with every shard. A rule that assigns differently
// gets a new name: shards split by different rules never merge.
inline constexpr const char* kShardRule = "sha256-round-robin-by-dimension/1";

// Shard `index` (0-based) of `count`.
struct ShardSpec {
  int64_t index = 0;
  int64_t count = 1;
  bool operator==(const ShardSpec&) const = default;
};

// "1/3".
std::string ShardText(const ShardSpec& shard);

// Reads an environment variable: nullopt when it is not set.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;

// The shard of a run: `--shard` when given (`flag`), else EVALRUN_SHARD, else none. The value is
// "I/N" (0 <= I < N), "auto/N", or "auto". "auto" takes the index from the scheduler:
// SLURM_ARRAY_TASK_ID under a Slurm job array (numbered from 0), else JOB_COMPLETION_INDEX under a
// Kubernetes Indexed Job; the count is N, or for a bare "auto" SLURM_ARRAY_TASK_COUNT. Throws
// Error naming the source and the value: "--shard '3/3': the index must be below the count
// (shards are 0 to 2)".
std::optional<ShardSpec> ResolveShard(const std::optional<std::string>& flag, const EnvLookup& env);

// One planned task as the split sees it.
struct ShardTask {
  std::string id;
  std::string hash;       // the task's full SHA-256 hex
  std::string dimension;
};

// The plan hash: lowercase hex SHA-256 of "<id> <hash>\n" for every task of the whole selected
// plan (before sharding), in plan order.
std::string PlanHash(const std::vector<ShardTask>& plan);

// The split rule (kShardRule): for each task of `plan`, in plan order, the shard it belongs to.
// Dimensions are taken in byte order of their names; within a dimension the tasks are ordered by
// their key, lowercase hex SHA-256 of "evalrun-shard/1:<seed>:<task hash>:<task id>" (ties, which
// need equal keys, by plan position); then one counter, running on across dimensions, deals
// them: the k-th task dealt goes to shard k mod count. Every dimension is split as evenly as it
// can be (sizes differ by at most one) and so are the shards' totals. `count` >= 1.
std::vector<int64_t> AssignShards(const std::vector<ShardTask>& plan, int64_t count,
                                  uint64_t seed);

// What a shard run records in its settings (settings.shard) and its bundle: the shard, the rule,
// the seed the rule used, the plan hash and the whole plan (so that a merge can name the tasks of
// a missing shard and recompute the split without the suite).
struct ShardRecord {
  ShardSpec shard;
  std::string rule = kShardRule;
  uint64_t seed = 0;
  std::string plan_hash;
  std::vector<ShardTask> plan;  // the whole selected plan, in plan order
};

// {"index", "count", "rule", "seed", "plan_hash", "plan": [{"id", "hash", "dimension"}]}.
nlohmann::json ShardRecordToJson(const ShardRecord& record);
// Reads settings.shard back; throws Error "<where>.<member>: ..." for a malformed record.
ShardRecord ShardRecordFromJson(const nlohmann::json& value, const std::string& where);

// The ids of the tasks that the rule gives shard `index` of `record.plan`, in plan order.
std::vector<std::string> ShardTaskIds(const ShardRecord& record, int64_t index);

}  // namespace evalrun
