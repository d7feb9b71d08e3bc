#include "core/shard.h"

#include <algorithm>
#include <charconv>
#include <map>

#include "core/error.h"
#include "core/sha256.h"

namespace evalrun {
namespace {

using nlohmann::json;

const char* const kShardForm =
    "expected I/N (e.g. 0/3), or auto/N under a Slurm job array or a Kubernetes Indexed Job";

// A whole number without sign or spaces; nullopt otherwise.
std::optional<int64_t> WholeNumber(const std::string& text) {
  int64_t value = 0;
  if (text.empty() || text[0] == '-' || text[0] == '+') return std::nullopt;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// The index a scheduler gives this job, or nullopt when none does; `from` names its source.
std::optional<int64_t> SchedulerIndex(const std::string& what, const EnvLookup& env,
                                      std::string& from) {
  if (const auto id = env("SLURM_ARRAY_TASK_ID")) {
    const auto value = WholeNumber(*id);
    if (!value) {
      throw Error(what + ": SLURM_ARRAY_TASK_ID '" + *id + "' is not a whole number");
    }
    // The array task id itself, not its offset from SLURM_ARRAY_TASK_MIN: a failed task
    // resubmitted alone (sbatch --array=2) must still be shard 2.
    from = "SLURM_ARRAY_TASK_ID " + *id;
    return *value;
  }
  if (const auto index = env("JOB_COMPLETION_INDEX")) {
    const auto value = WholeNumber(*index);
    if (!value) {
      throw Error(what + ": JOB_COMPLETION_INDEX '" + *index + "' is not a whole number");
    }
    from = "JOB_COMPLETION_INDEX " + *index;
    return *value;
  }
  return std::nullopt;
}

ShardSpec ParseShard(const std::string& source, const std::string& text, const EnvLookup& env) {
  const std::string what = source + " '" + text + "'";
  const size_t slash = text.find('/');
  const std::string first = text.substr(0, slash);
  const std::string second = slash == std::string::npos ? "" : text.substr(slash + 1);
  if (first != "auto" && slash == std::string::npos) throw Error(what + ": " + kShardForm);
  ShardSpec shard;
  std::optional<int64_t> count;
  if (slash != std::string::npos) {
    count = WholeNumber(second);
    if (!count) throw Error(what + ": " + kShardForm);
    if (*count < 1) throw Error(what + ": the count must be at least 1");
  }
  if (first == "auto") {
    // A bare "auto" takes the count from the Slurm array; auto/N does not look at it, so that a
    // shard resubmitted alone (sbatch --array=2, a count of 1) is still shard 2 of N.
    const auto slurm_count = env("SLURM_ARRAY_TASK_COUNT");
    if (!count && slurm_count && env("SLURM_ARRAY_TASK_ID")) {
      const auto value = WholeNumber(*slurm_count);
      if (!value || *value < 1) {
        throw Error(what + ": SLURM_ARRAY_TASK_COUNT '" + *slurm_count +
                    "' is not a count of tasks");
      }
      count = *value;
    }
    if (!count) {
      throw Error(what + ": no shard count: give auto/N (N shards), or run under a Slurm job "
                         "array, which sets SLURM_ARRAY_TASK_COUNT");
    }
    std::string from;
    const auto index = SchedulerIndex(what, env, from);
    if (!index) {
      throw Error(what + ": no shard index in the environment: set by a Slurm job array "
                         "(SLURM_ARRAY_TASK_ID) or a Kubernetes Indexed Job "
                         "(JOB_COMPLETION_INDEX); elsewhere give --shard I/N");
    }
    if (*index < 0 || *index >= *count) {
      throw Error(what + ": " + from + " gives index " + std::to_string(*index) +
                  ", which must be 0 to " + std::to_string(*count - 1) +
                  " (number a Slurm array from 0: --array=0-" + std::to_string(*count - 1) + ")");
    }
    shard.index = *index;
    shard.count = *count;
    return shard;
  }
  const auto index = WholeNumber(first);
  if (!index) throw Error(what + ": " + kShardForm);
  if (*index >= *count) {
    throw Error(what + ": the index must be below the count (shards are 0 to " +
                std::to_string(*count - 1) + ")");
  }
  shard.index = *index;
  shard.count = *count;
  return shard;
}

std::string ShardKey(uint64_t seed, const ShardTask& task) {
  return Sha256Hex("evalrun-shard/1:" + std::to_string(seed) + ":" + task.hash + ":" + task.id);
}

}  // namespace

std::string ShardText(const ShardSpec& shard) {
  return std::to_string(shard.index) + "/" + std::to_string(shard.count);
}

std::optional<ShardSpec> ResolveShard(const std::optional<std::string>& flag,
                                      const EnvLookup& env) {
  if (flag) return ParseShard("--shard", *flag, env);
  if (const auto value = env("EVALRUN_SHARD"); value && !value->empty()) {
    return ParseShard("EVALRUN_SHARD", *value, env);
  }
  return std::nullopt;
}

std::string PlanHash(const std::vector<ShardTask>& plan) {
  std::string text;
  for (const ShardTask& task : plan) text += task.id + " " + task.hash + "\n";
  return Sha256Hex(text);
}

std::vector<int64_t> AssignShards(const std::vector<ShardTask>& plan, int64_t count,
                                  uint64_t seed) {
  std::vector<int64_t> shards(plan.size(), 0);
  if (count < 1) return shards;
  // dimension -> (key, plan position)
  std::map<std::string, std::vector<std::pair<std::string, size_t>>> by_dimension;
  for (size_t i = 0; i < plan.size(); ++i) {
    by_dimension[plan[i].dimension].emplace_back(ShardKey(seed, plan[i]), i);
  }
  int64_t dealt = 0;
  for (auto& [dimension, tasks] : by_dimension) {
    std::sort(tasks.begin(), tasks.end());
    for (const auto& [key, position] : tasks) shards[position] = dealt++ % count;
  }
  return shards;
}

json ShardRecordToJson(const ShardRecord& record) {
  json plan = json::array();
  for (const ShardTask& task : record.plan) {
    plan.push_back({{"id", task.id}, {"hash", task.hash}, {"dimension", task.dimension}});
  }
  return {{"index", record.shard.index},   {"count", record.shard.count},
          {"rule", record.rule},           {"seed", record.seed},
          {"plan_hash", record.plan_hash}, {"plan", std::move(plan)}};
}

ShardRecord ShardRecordFromJson(const json& value, const std::string& where) {
  if (!value.is_object()) throw Error(where + ": expected an object");
  auto member = [&](const char* key) -> const json& {
    const auto it = value.find(key);
    if (it == value.end()) throw Error(where + "." + key + ": missing");
    return *it;
  };
  auto text = [&](const char* key) {
    const json& v = member(key);
    if (!v.is_string()) throw Error(where + "." + key + ": expected a string");
    return v.get<std::string>();
  };
  auto integer = [&](const char* key) {
    const json& v = member(key);
    if (!v.is_number_integer()) throw Error(where + "." + key + ": expected an integer");
    return v;
  };
  ShardRecord record;
  record.shard.index = integer("index").get<int64_t>();
  record.shard.count = integer("count").get<int64_t>();
  if (record.shard.count < 1 || record.shard.index < 0 ||
      record.shard.index >= record.shard.count) {
    throw Error(where + ": shard " + ShardText(record.shard) + " is not a shard (0 <= I < N)");
  }
  record.rule = text("rule");
  record.seed = integer("seed").get<uint64_t>();
  record.plan_hash = text("plan_hash");
  const json& plan = member("plan");
  if (!plan.is_array()) throw Error(where + ".plan: expected an array");
  for (size_t i = 0; i < plan.size(); ++i) {
    const std::string at = where + ".plan[" + std::to_string(i) + "]";
    const json& t = plan[i];
    for (const char* key : {"id", "hash", "dimension"}) {
      if (!t.is_object() || !t.contains(key) || !t[key].is_string()) {
        throw Error(at + "." + key + ": expected a string");
      }
    }
    record.plan.push_back({t["id"].get<std::string>(), t["hash"].get<std::string>(),
                           t["dimension"].get<std::string>()});
  }
  return record;
}

std::vector<std::string> ShardTaskIds(const ShardRecord& record, int64_t index) {
  const std::vector<int64_t> shards = AssignShards(record.plan, record.shard.count, record.seed);
  std::vector<std::string> ids;
  for (size_t i = 0; i < record.plan.size(); ++i) {
    if (shards[i] == index) ids.push_back(record.plan[i].id);
  }
  return ids;
}

}  // namespace evalrun
