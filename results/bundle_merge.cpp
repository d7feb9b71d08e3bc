// Merging shards' bundles, and the checks verify makes of merged and shard bundles. The merged
// document copies every task record and planned task verbatim from its part (never through
// RunData and back), so that each part's document, rebuilt from the merged one, hashes to the
// part's own result hash.
#include "results/bundle_merge.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "core/canonical_json.h"
#include "core/error.h"
#include "core/sha256.h"
#include "core/shard.h"
#include "core/version.h"
#include "results/report_json.h"
#include "results/run_report.h"

namespace evalrun {
namespace {

using nlohmann::json;

constexpr size_t kListed = 20;  // task ids named in one message; the rest are counted

std::string Short(const std::string& hash) { return hash.substr(0, 16); }

// "'t001', 't004' and 3 more"
std::string TaskList(const std::vector<std::string>& ids) {
  std::string out;
  for (size_t i = 0; i < ids.size() && i < kListed; ++i) {
    out += (i == 0 ? "'" : ", '") + ids[i] + "'";
  }
  if (ids.size() > kListed) out += " and " + std::to_string(ids.size() - kListed) + " more";
  return out;
}

const json& Member(const json& object, const char* key) {
  static const json null;
  if (!object.is_object()) return null;
  const auto it = object.find(key);
  return it == object.end() ? null : *it;
}

std::string TextOf(const json& object, const char* key) {
  const json& value = Member(object, key);
  return value.is_string() ? value.get<std::string>() : std::string();
}

const json& Settings(const json& document) { return Member(Member(document, "run"), "settings"); }

// The shard record of a bundle's run, or nullopt when its run was not a shard (or the bundle is
// merged). Throws Error naming `where` for a malformed record.
std::optional<ShardRecord> ShardOf(const json& document, const std::string& where) {
  const json& shard = Member(Settings(document), "shard");
  if (shard.is_null() || Member(shard, "merged").is_boolean()) return std::nullopt;
  return ShardRecordFromJson(shard, where);
}

std::vector<std::string> Ids(const json& array, const char* key) {
  std::vector<std::string> ids;
  if (!array.is_array()) return ids;
  for (const json& entry : array) ids.push_back(TextOf(entry, key));
  return ids;
}

std::vector<std::string> PlannedIds(const json& document) {
  return Ids(Member(Member(document, "suite"), "tasks"), "id");
}

std::vector<std::string> RecordIds(const json& document) {
  return Ids(Member(document, "tasks"), "task_id");
}

std::string ShortValue(const json& value) {
  std::string text = ValidUtf8Json(value).dump();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

// The settings that must be equal between the shards: all but the shard itself, where the
// suite was read from on each machine, and where each machine reached its judge (the judge's
// model must be the same).
json SharedSettings(const json& settings) {
  json out = settings.is_object() ? settings : json::object();
  for (const char* key : {"shard", "suite", "suite_dir"}) out.erase(key);
  if (out.contains("judge") && out["judge"].is_object()) out["judge"].erase("endpoint");
  return out;
}

// "concurrency 2 (A: 1), thinking \"on\" (A: \"off\")"
std::string SettingsDifference(const json& now, const json& first, const std::string& name) {
  std::set<std::string> keys;
  for (const auto& [k, v] : now.items()) keys.insert(k);
  for (const auto& [k, v] : first.items()) keys.insert(k);
  std::string out;
  for (const std::string& key : keys) {
    const json a = now.contains(key) ? now[key] : json();
    const json b = first.contains(key) ? first[key] : json();
    if (a == b) continue;
    out += (out.empty() ? "" : ", ") + key + " " + ShortValue(a) + " (" + name + ": " +
           ShortValue(b) + ")";
  }
  return out;
}

// The value all parts share, or `otherwise` when they differ.
json Common(const std::vector<const json*>& values, const json& otherwise) {
  for (const json* v : values) {
    if (*v != *values.front()) return otherwise;
  }
  return *values.front();
}

struct Part {
  const MergePart* in = nullptr;
  ShardRecord shard;
};

void CheckSameRun(const Part& first, const Part& part) {
  const std::string& a = first.in->name;
  const std::string& b = part.in->name;
  const json& da = first.in->bundle.document;
  const json& db = part.in->bundle.document;
  const RunInfo& ia = first.in->bundle.run.info;
  const RunInfo& ib = part.in->bundle.run.info;
  if (part.shard.shard.count != first.shard.shard.count) {
    throw Error("cannot merge: " + b + " is shard " + ShardText(part.shard.shard) + " but " + a +
                " is shard " + ShardText(first.shard.shard) +
                ": every part must split the plan into the same number of shards");
  }
  if (part.shard.rule != first.shard.rule) {
    throw Error("cannot merge: " + b + ": split rule '" + part.shard.rule + "', but " + a +
                "'s is '" + first.shard.rule + "'");
  }
  if (ib.suite_commit != ia.suite_commit || ib.suite_tree != ia.suite_tree) {
    throw Error("cannot merge: " + b + ": suite commit " +
                (ib.suite_commit.empty() ? "none (unpinned)" : ib.suite_commit) + ", but " + a +
                "'s is " + (ia.suite_commit.empty() ? "none (unpinned)" : ia.suite_commit) +
                ": the shards of one plan run one suite commit");
  }
  if (part.shard.plan_hash != first.shard.plan_hash) {
    throw Error("cannot merge: " + b + ": plan hash " + Short(part.shard.plan_hash) + ", but " +
                a + "'s is " + Short(first.shard.plan_hash) +
                ": not the same plan (the suite, --filter, --limit, --quick or --seed differ)");
  }
  if (ib.model != ia.model) {
    throw Error("cannot merge: " + b + ": model '" + ib.model + "', but " + a + " ran '" +
                ia.model + "': the shards of one result run one model");
  }
  if (ib.evalrun_version != ia.evalrun_version ||
      Member(db, "metrics_version") != Member(da, "metrics_version")) {
    throw Error("cannot merge: " + b + ": run by evalrun " + ib.evalrun_version + ", " + a +
                " by evalrun " + ia.evalrun_version +
                ": the shards must be run by one evalrun version (its graders and figures)");
  }
  const std::string difference = SettingsDifference(SharedSettings(ib.settings),
                                                    SharedSettings(ia.settings), a);
  if (!difference.empty()) {
    throw Error("cannot merge: " + b + ": settings differ from " + a + "'s: " + difference);
  }
  const json& sa = Member(da, "suite");
  const json& sb = Member(db, "suite");
  for (const char* key : {"name", "format", "path", "dimension_weights"}) {
    if (Member(sa, key) != Member(sb, key)) {
      throw Error("cannot merge: " + b + ": suite." + key + " " + ShortValue(Member(sb, key)) +
                  ", but " + a + "'s is " + ShortValue(Member(sa, key)));
    }
  }
}

}  // namespace

bool IsMergedBundle(const json& document) {
  return document.is_object() && document.contains("parts");
}

json MergeBundles(const std::vector<MergePart>& inputs) {
  if (inputs.empty()) {
    throw Error("merge: give the bundles of every shard (evalrun merge A.evalrun.json "
                "B.evalrun.json ... --out all.evalrun.json)");
  }
  std::vector<Part> parts;
  for (const MergePart& input : inputs) {
    const json& doc = input.bundle.document;
    const RunInfo& info = input.bundle.run.info;
    if (ComputeResultHash(doc) != input.bundle.result_hash ||
        !ChangedBundleParts(doc).empty()) {
      throw Error("cannot merge: " + input.name +
                  ": its result hash does not verify (edited after export?); evalrun verify " +
                  input.name + " names what changed");
    }
    if (IsMergedBundle(doc)) {
      throw Error("cannot merge: " + input.name +
                  ": already a merged bundle; merge the shards' own bundles");
    }
    Part part;
    part.in = &input;
    const std::optional<ShardRecord> shard = ShardOf(doc, input.name + ": run.settings.shard");
    if (!shard) {
      throw Error("cannot merge: " + input.name + ": run " + info.id +
                  " is not a shard (it ran without --shard I/N); only the shards of one plan "
                  "merge");
    }
    part.shard = *shard;
    if (info.status != kRunFinished) {
      throw Error("cannot merge: " + input.name + ": shard " + ShardText(shard->shard) +
                  " (run " + info.id + ") is " + info.status +
                  ", not finished: resume it (evalrun suite ... --shard " +
                  ShardText(shard->shard) + " --resume " + info.id + ") and export it again");
    }
    if (shard->rule != kShardRule) {
      throw Error("cannot merge: " + input.name + ": split rule '" + shard->rule +
                  "' is not one this evalrun knows (it splits by " + kShardRule + ")");
    }
    if (PlanHash(shard->plan) != shard->plan_hash) {
      throw Error("cannot merge: " + input.name + ": its recorded plan does not hash to its plan "
                  "hash " + Short(shard->plan_hash));
    }
    parts.push_back(std::move(part));
  }
  for (size_t i = 1; i < parts.size(); ++i) CheckSameRun(parts[0], parts[i]);

  // Overlaps: a shard given twice.
  const int64_t count = parts[0].shard.shard.count;
  std::map<int64_t, const Part*> by_index;
  for (const Part& part : parts) {
    const auto [it, inserted] = by_index.emplace(part.shard.shard.index, &part);
    if (!inserted) {
      const std::vector<std::string> a = PlannedIds(it->second->in->bundle.document);
      const std::vector<std::string> b = PlannedIds(part.in->bundle.document);
      const std::set<std::string> b_set(b.begin(), b.end());
      std::vector<std::string> shared;
      for (const std::string& id : a) {
        if (b_set.count(id)) shared.push_back(id);
      }
      throw Error("cannot merge: " + it->second->in->name + " and " + part.in->name +
                  " are both shard " + ShardText(part.shard.shard) + ": they overlap in " +
                  std::to_string(shared.size()) + " task" + (shared.size() == 1 ? "" : "s") +
                  " (" + TaskList(shared) + "); give each shard once");
    }
  }
  // Each part holds exactly the rule's tasks for its shard, every one with a record.
  for (const Part& part : parts) {
    const std::vector<std::string> expected = ShardTaskIds(part.shard, part.shard.shard.index);
    const std::vector<std::string> planned = PlannedIds(part.in->bundle.document);
    if (planned != expected) {
      std::vector<std::string> extra;
      const std::set<std::string> want(expected.begin(), expected.end());
      for (const std::string& id : planned) {
        if (!want.count(id)) extra.push_back(id);
      }
      throw Error("cannot merge: " + part.in->name + ": shard " + ShardText(part.shard.shard) +
                  " plans other tasks than the split rule (" + part.shard.rule + ") gives it" +
                  (extra.empty() ? std::string() : ": " + TaskList(extra) + " are not its"));
    }
    const std::vector<std::string> records = RecordIds(part.in->bundle.document);
    const std::set<std::string> recorded(records.begin(), records.end());
    std::vector<std::string> unrecorded;
    for (const std::string& id : planned) {
      if (!recorded.count(id)) unrecorded.push_back(id);
    }
    if (!unrecorded.empty() || records.size() != recorded.size()) {
      throw Error("cannot merge: " + part.in->name + ": shard " + ShardText(part.shard.shard) +
                  " has no single record for task" + (unrecorded.size() == 1 ? " " : "s ") +
                  TaskList(unrecorded));
    }
  }
  // Missing shards, named with their tasks.
  std::vector<std::string> missing_shards, missing_tasks;
  for (int64_t index = 0; index < count; ++index) {
    if (by_index.count(index)) continue;
    missing_shards.push_back(ShardText({index, count}));
    for (std::string& id : ShardTaskIds(parts[0].shard, index)) missing_tasks.push_back(id);
  }
  if (!missing_shards.empty()) {
    std::string shards;
    for (size_t i = 0; i < missing_shards.size(); ++i) {
      shards += (i == 0 ? "" : ", ") + missing_shards[i];
    }
    const bool one = missing_shards.size() == 1;
    throw Error("cannot merge: " + std::string(one ? "shard " : "shards ") + shards +
                (one ? " is" : " are") + " missing: " + std::to_string(missing_tasks.size()) +
                " task" + (missing_tasks.size() == 1 ? "" : "s") + " of the plan " +
                (missing_tasks.size() == 1 ? "is" : "are") + " in no part (" +
                TaskList(missing_tasks) + "); run " + (one ? "it" : "each") +
                " with --shard I/N, export it and add its bundle");
  }

  // The merged document. Parts in shard order; planned tasks and records in plan order.
  std::sort(parts.begin(), parts.end(), [](const Part& a, const Part& b) {
    return a.shard.shard.index < b.shard.shard.index;
  });
  const ShardRecord& plan = parts[0].shard;
  std::map<std::string, const json*> planned_by_id, record_by_id;
  std::map<std::string, const TaskResult*> result_by_id;
  for (const Part& part : parts) {
    const json& doc = part.in->bundle.document;
    for (const json& entry : doc["suite"]["tasks"]) planned_by_id[TextOf(entry, "id")] = &entry;
    for (const json& entry : doc["tasks"]) record_by_id[TextOf(entry, "task_id")] = &entry;
    for (const TaskResult& t : part.in->bundle.run.tasks) result_by_id[t.task_id] = &t;
  }
  const json& first = parts[0].in->bundle.document;
  json doc = json::object();
  doc["format"] = first["format"];
  doc["format_version"] = first["format_version"];
  doc["evalrun_version"] = kVersion;
  doc["metrics_version"] = Member(first, "metrics_version");

  std::vector<const json*> endpoints, servers, environments, labels;
  std::string created_at, updated_at, part_hashes_text, parts_text;
  for (const Part& part : parts) {
    const json& run = part.in->bundle.document["run"];
    endpoints.push_back(&run["endpoint"]);
    servers.push_back(&run["server"]);
    environments.push_back(&run["environment"]);
    labels.push_back(&run["labels"]);
    const RunInfo& info = part.in->bundle.run.info;
    if (created_at.empty() || info.created_at < created_at) created_at = info.created_at;
    if (info.updated_at > updated_at) updated_at = info.updated_at;
    part_hashes_text += part.in->bundle.result_hash + "\n";
    parts_text += std::string(parts_text.empty() ? "" : ", ") + ShardText(part.shard.shard) +
                  " (run " + info.id + ")";
  }
  json run = first["run"];
  run["id"] = "merge-" + Sha256Hex(part_hashes_text).substr(0, 12);
  run["status"] = kRunFinished;
  run["partial"] = false;
  run["created_at"] = created_at;
  run["updated_at"] = updated_at;
  std::string endpoint_text;
  std::set<std::string> seen_endpoints;
  for (const json* e : endpoints) {
    if (e->is_string() && seen_endpoints.insert(e->get<std::string>()).second) {
      endpoint_text += (endpoint_text.empty() ? "" : ", ") + e->get<std::string>();
    }
  }
  run["endpoint"] = endpoint_text;
  run.erase("endpoint_base64");
  std::vector<const json*> kinds;
  for (const json* server : servers) kinds.push_back(&Member(*server, "kind"));
  run["server"] = Common(servers, {{"kind", Common(kinds, json())},
                                   {"note", "the shards' servers differ: see "
                                            "parts[i].document.run.server"}});
  run["environment"] = Common(environments, json::object());
  json common_labels = json::object();
  if (labels.front()->is_object()) {
    for (const auto& [key, value] : labels.front()->items()) {
      bool everywhere = true;
      for (const json* l : labels) everywhere = everywhere && Member(*l, key.c_str()) == value;
      if (everywhere) common_labels[key] = value;
    }
  }
  run["labels"] = std::move(common_labels);
  run["settings"]["shard"] = {{"merged", true},
                              {"count", count},
                              {"rule", plan.rule},
                              {"seed", plan.seed},
                              {"plan_hash", plan.plan_hash}};
  run["planned_tasks"] = static_cast<int64_t>(plan.plan.size());
  doc["run"] = std::move(run);

  json suite = first["suite"];
  json planned = json::array();
  json records = json::array();
  for (const ShardTask& task : plan.plan) {
    planned.push_back(*planned_by_id.at(task.id));
    records.push_back(*record_by_id.at(task.id));
  }
  suite["tasks"] = std::move(planned);
  doc["suite"] = std::move(suite);
  doc["tasks"] = std::move(records);
  doc["speed"] = json();  // each machine's speed protocol stays in its part
  doc["events"] = json::array({{{"at", updated_at},
                                {"kind", "merge"},
                                {"message", "merged " + std::to_string(count) + " shards of plan " +
                                                Short(plan.plan_hash) + " (rule " + plan.rule +
                                                "): " + parts_text}}});
  json part_list = json::array();
  for (const Part& part : parts) {
    json inner = part.in->bundle.document;
    inner.erase("result_hash");
    inner.erase("tasks");
    inner["suite"].erase("tasks");
    part_list.push_back({{"shard", {{"index", part.shard.shard.index}, {"count", count}}},
                         {"result_hash", part.in->bundle.result_hash},
                         {"plan", PlannedIds(part.in->bundle.document)},
                         {"records", RecordIds(part.in->bundle.document)},
                         {"document", std::move(inner)}});
  }
  doc["parts"] = std::move(part_list);

  // The summary, from the document as a reader gets it back (so verify recomputes the same).
  doc["summary"] = json::object();
  doc["part_hashes"] = json::object();
  doc["result_hash"] = "";
  const Bundle read = ParseBundle(CanonicalJson(doc), "(merged bundle)");
  doc["summary"] = ValidUtf8Json(RunScoresToJson(ScoreRun(read.run)));
  SealBundle(doc);
  return doc;
}

json MergedPartDocument(const json& document, size_t i) {
  const std::string where = "parts[" + std::to_string(i) + "]";
  const json& parts = Member(document, "parts");
  if (!parts.is_array() || i >= parts.size()) throw Error(where + ": missing");
  const json& part = parts[i];
  const json& inner = Member(part, "document");
  if (!inner.is_object() || !Member(inner, "suite").is_object()) {
    throw Error(where + ".document: expected a bundle document without its tasks");
  }
  std::map<std::string, const json*> planned_by_id, record_by_id;
  const json& planned = Member(Member(document, "suite"), "tasks");
  if (planned.is_array()) {
    for (const json& entry : planned) planned_by_id[TextOf(entry, "id")] = &entry;
  }
  const json& records = Member(document, "tasks");
  if (records.is_array()) {
    for (const json& entry : records) record_by_id[TextOf(entry, "task_id")] = &entry;
  }
  json out = inner;
  json plan = json::array();
  for (const json& id : Member(part, "plan")) {
    const auto it = planned_by_id.find(id.is_string() ? id.get<std::string>() : "");
    if (it == planned_by_id.end()) {
      throw Error(where + ".plan: task " + id.dump() + " is not in the merged plan (suite.tasks)");
    }
    plan.push_back(*it->second);
  }
  json tasks = json::array();
  for (const json& id : Member(part, "records")) {
    const auto it = record_by_id.find(id.is_string() ? id.get<std::string>() : "");
    if (it == record_by_id.end()) {
      throw Error(where + ".records: task " + id.dump() + " has no record in the merged bundle");
    }
    tasks.push_back(*it->second);
  }
  out["suite"]["tasks"] = std::move(plan);
  out["tasks"] = std::move(tasks);
  out["result_hash"] = Member(part, "result_hash");
  return out;
}

std::vector<std::string> MergedBundleProblems(const json& document, std::string* summary) {
  std::vector<std::string> problems;
  const json& parts = Member(document, "parts");
  if (!parts.is_array() || parts.empty()) {
    if (summary) *summary = "no parts";
    return {"parts: expected a non-empty array"};
  }
  const json& merged_shard = Member(Settings(document), "shard");
  const std::string plan_hash = TextOf(merged_shard, "plan_hash");
  const std::string rule = TextOf(merged_shard, "rule");
  const int64_t count = static_cast<int64_t>(parts.size());
  if (Member(merged_shard, "count") != json(count)) {
    problems.push_back("run.settings.shard.count is " + Member(merged_shard, "count").dump() +
                       " but the bundle has " + std::to_string(count) + " parts");
  }
  std::map<int64_t, size_t> index_part;
  std::map<std::string, size_t> owner;  // task id -> the part whose record it is
  std::optional<ShardRecord> reference;
  for (size_t i = 0; i < parts.size(); ++i) {
    std::string name = "parts[" + std::to_string(i) + "]";
    json part_doc;
    try {
      part_doc = MergedPartDocument(document, i);
    } catch (const Error& e) {
      problems.push_back(e.what());
      continue;
    }
    std::optional<ShardRecord> record;
    try {
      record = ShardOf(part_doc, name + ".document.run.settings.shard");
    } catch (const Error& e) {
      problems.push_back(e.what());
      continue;
    }
    if (!record) {
      problems.push_back(name + ": not a shard (its run.settings has no shard)");
      continue;
    }
    name += " (shard " + ShardText(record->shard) + ")";
    const std::string recorded = TextOf(parts[i], "result_hash");
    std::string computed;
    try {
      computed = ComputeResultHash(part_doc);
    } catch (const Error& e) {
      computed = std::string("unhashable: ") + e.what();
    }
    if (computed != recorded) {
      problems.push_back(name + ": its document hashes to " + Short(computed) +
                         ", but its recorded result hash is " + Short(recorded));
    }
    for (const std::string& changed : ChangedBundleParts(part_doc)) {
      problems.push_back(name + ": changed: " + changed);
    }
    if (Member(Member(parts[i], "shard"), "index") != json(record->shard.index)) {
      problems.push_back(name + ": parts[].shard.index disagrees with its run's shard");
    }
    if (record->shard.count != count) {
      problems.push_back(name + ": a shard of " + std::to_string(record->shard.count) +
                         ", but the bundle has " + std::to_string(count) + " parts");
    }
    if (record->rule != rule || record->plan_hash != plan_hash ||
        PlanHash(record->plan) != plan_hash) {
      problems.push_back(name + ": its plan (hash " + Short(record->plan_hash) + ", rule " +
                         record->rule + ") is not the merged plan (hash " + Short(plan_hash) +
                         ", rule " + rule + ")");
    }
    if (const auto [it, inserted] = index_part.emplace(record->shard.index, i); !inserted) {
      problems.push_back(name + ": shard " + ShardText(record->shard) + " again (parts[" +
                         std::to_string(it->second) + "] is the same shard)");
    }
    if (PlannedIds(part_doc) != ShardTaskIds(*record, record->shard.index)) {
      problems.push_back(name + ": plans other tasks than the split rule gives shard " +
                         ShardText(record->shard));
    }
    const std::vector<std::string> planned = PlannedIds(part_doc);
    const std::set<std::string> planned_set(planned.begin(), planned.end());
    for (const std::string& id : RecordIds(part_doc)) {
      if (!planned_set.count(id)) {
        problems.push_back(name + ": task '" + id + "' has a record but is not in its plan");
      }
      if (const auto [it, inserted] = owner.emplace(id, i); !inserted) {
        problems.push_back("task '" + id + "': a record in parts[" + std::to_string(it->second) +
                           "] and in parts[" + std::to_string(i) + "]");
      }
    }
    if (!reference) reference = record;
  }
  for (int64_t index = 0; index < count; ++index) {
    if (!index_part.count(index) && reference) {
      problems.push_back("shard " + ShardText({index, count}) + " is missing: tasks " +
                         TaskList(ShardTaskIds(*reference, index)) + " have no part");
    }
  }
  // The merged plan is the shards' plan, and every planned task has the one record of its part.
  const std::vector<std::string> merged_plan = PlannedIds(document);
  if (reference) {
    const json& planned = Member(Member(document, "suite"), "tasks");
    bool same = merged_plan.size() == reference->plan.size();
    for (size_t i = 0; same && i < merged_plan.size(); ++i) {
      same = merged_plan[i] == reference->plan[i].id &&
             TextOf(planned[i], "hash") == reference->plan[i].hash;
    }
    if (!same) problems.push_back("suite.tasks is not the plan the shards recorded");
  }
  const std::vector<std::string> records = RecordIds(document);
  const std::set<std::string> recorded(records.begin(), records.end());
  std::vector<std::string> uncovered;
  for (const std::string& id : merged_plan) {
    if (!recorded.count(id)) uncovered.push_back(id);
  }
  if (!uncovered.empty()) {
    problems.push_back("coverage: " + std::to_string(uncovered.size()) +
                       " planned task(s) have no record: " + TaskList(uncovered));
  }
  for (const std::string& id : records) {
    if (!owner.count(id)) problems.push_back("task '" + id + "': its record is in no part");
  }
  if (summary) {
    *summary = std::to_string(count) + " shards of plan " + Short(plan_hash) + " (rule " + rule +
               "): each part's result hash recomputes, each holds the rule's tasks, all " +
               std::to_string(merged_plan.size()) + " planned tasks have a record";
  }
  return problems;
}

std::vector<std::string> ShardBundleProblems(const json& document, std::string* summary) {
  if (summary) summary->clear();
  if (IsMergedBundle(document)) return {};
  std::optional<ShardRecord> record;
  try {
    record = ShardOf(document, "run.settings.shard");
  } catch (const Error& e) {
    return {e.what()};
  }
  if (!record) return {};
  std::vector<std::string> problems;
  if (PlanHash(record->plan) != record->plan_hash) {
    problems.push_back("run.settings.shard.plan does not hash to its plan_hash " +
                       Short(record->plan_hash));
  }
  if (PlannedIds(document) != ShardTaskIds(*record, record->shard.index)) {
    problems.push_back("suite.tasks is not what the split rule (" + record->rule +
                       ") gives shard " + ShardText(record->shard) + " of the recorded plan");
  }
  if (summary) {
    *summary = "shard " + ShardText(record->shard) + " of plan " + Short(record->plan_hash) +
               " (rule " + record->rule + "): its " + std::to_string(PlannedIds(document).size()) +
               " tasks are the rule's share of the " + std::to_string(record->plan.size()) +
               "-task plan; evalrun merge joins it with the other shards";
  }
  return problems;
}

}  // namespace evalrun
