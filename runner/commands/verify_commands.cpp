// `evalrun export` and `evalrun verify`. The checks are independent: each reads the bundle and
// reports its own disagreements, so one edit shows up in every check it affects (an edited
// output breaks the hash and the grade; an edited timing sample, the hash and the figures).
#include "runner/commands/verify_commands.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>

#include <CLI/CLI.hpp>

#include "core/atomic_file.h"
#include "core/canonical_json.h"
#include "core/error.h"
#include "core/metrics.h"
#include "core/speed_result.h"
#include "core/task.h"
#include "core/version.h"
#include "graders/grader.h"
#include "plugins/sandbox.h"
#include "plugins/http_client.h"
#include "plugins/server_probe.h"
#include "plugins/zxbench_importer.h"
#include "results/bundle_merge.h"
#include "results/report_json.h"
#include "results/run_report.h"
#include "runner/commands/cli.h"
#include "runner/suite_loader.h"
#include "runner/suite_run.h"
#include "tasks/task_yaml.h"

namespace evalrun {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr size_t kMaxDetails = 20;  // disagreements listed per check; the rest are counted

// Graders whose evidence (and reason) hold what a program did on this machine: wall time, the
// sandbox's description. Their grades are compared on status, score and passed only.
bool RunsPrograms(const std::string& grader) {
  return grader == "code_tests" || grader == "command" || grader == "zxbench:code_repair" ||
         grader == "zxbench:cli_command" || grader == "zxbench:project_repair" ||
         grader == "repo_tests" || grader == "world" || grader == "zxbench:tool_call_trace" ||
         grader == "zxbench:agent_trace" || grader == "zxbench:canary_authority";
}

std::string Short(const std::string& hash) { return hash.substr(0, 16); }

std::string Quote(const json& value) {
  std::string text = ValidUtf8Json(value).dump();
  if (text.size() > 80) text = text.substr(0, 77) + "...";
  return text;
}

// ---- task data: what re-grading needs --------------------------------------------------------

json TaskData(const Task& task, const LoadedSuite& loaded) {
  if (task.format == "zxbench") return {{"format", "zxbench"}, {"entry", task.raw}};
  json files = json::object();
  for (const TaskFile& file : task.files) {
    json content = json::object();
    const std::optional<std::string> bytes = loaded.ReadTaskFile(file.path);
    if (!bytes) continue;  // verify then cannot re-run graders that need it: said there
    PutBundleText(content, "text", *bytes);
    files[file.path] = std::move(content);
  }
  return {{"format", "evalrun"}, {"fields", HashedFields(task)}, {"file_contents", files}};
}

// A task rebuilt from the bundle's data, with the file contents it carries.
struct StoredTask {
  Task task;
  std::map<std::string, std::string> files;
};

// Throws Error naming what is wrong with the data.
StoredTask TaskFromData(const json& data, const std::string& where) {
  StoredTask out;
  const std::string format = data.value("format", "");
  if (format == "zxbench") {
    if (!data.contains("entry") || !data["entry"].is_object()) {
      throw Error(where + ".entry: expected the zx-bench bank entry");
    }
    Suite suite = ImportZxBench(json::array({data["entry"]}).dump(), where + ".entry");
    out.task = std::move(suite.tasks.at(0));
    const std::string type = out.task.grader.value("type", "");
    if (out.task.skip_reason.empty() && GraderRegistry::Builtin().Find(type) == nullptr) {
      out.task.skip_reason = "evalrun has no grader for " + type + " yet";
    }
    return out;
  }
  if (format != "evalrun") throw Error(where + ".format: expected \"evalrun\" or \"zxbench\"");
  if (!data.contains("fields") || !data["fields"].is_object()) {
    throw Error(where + ".fields: expected an object");
  }
  const json& f = data["fields"];
  auto text = [&](const char* key) {
    if (!f.contains(key) || !f[key].is_string()) {
      throw Error(where + ".fields." + key + ": expected a string");
    }
    return f[key].get<std::string>();
  };
  Task& t = out.task;
  t.id = text("id");
  t.dimension = text("dimension");
  t.difficulty = text("difficulty");
  t.grader_version = text("grader_version");
  if (!f.contains("weight") || !f["weight"].is_number()) {
    throw Error(where + ".fields.weight: expected a number");
  }
  t.weight = f["weight"].get<double>();
  t.messages = f.value("messages", json::array());
  t.generation = f.value("generation", json::object());
  t.grader = f.value("grader", json::object());
  t.agent = f.value("agent", json());
  if (f.contains("files") && f["files"].is_object()) {
    for (const auto& [path, sha] : f["files"].items()) {
      t.files.push_back({path, sha.is_string() ? sha.get<std::string>() : std::string()});
    }
  }
  t.hash = ComputeTaskHash(t);
  if (data.contains("file_contents") && data["file_contents"].is_object()) {
    for (const auto& [path, content] : data["file_contents"].items()) {
      out.files[path] = BundleText(content, "text", where + ".file_contents." + path);
    }
  }
  return out;
}

// ---- the suite, as verify finds it -------------------------------------------------------------

struct SuiteLookup {
  std::optional<LoadedSuite> loaded;
  std::string where;   // "commit 1a2b3c4d" or "the folder on disk"
  std::string error;   // why it could not be loaded
  bool tried = false;
};

bool IsRegisteredName(const std::string& name) {
  try {
    for (const RegistryEntry& e : LoadRegistry()) {
      if (e.name == name) return true;
    }
  } catch (const Error&) {
  }
  return false;
}

SuiteLookup FindSuite(const RunInfo& info, const VerifyConfig& config) {
  SuiteLookup out;
  if (info.suite_spec.empty()) return out;
  const SuiteSpec spec = ParseSuiteSpec(info.suite_spec);
  std::string load;
  ResolveOptions resolve;
  if (info.suite_commit.empty()) {
    load = spec.name_or_path;  // unpinned: the folder on disk, as it is now
    // The run recorded the folder made absolute, so export and verify find it from any folder.
    const std::string recorded =
        info.settings.is_object() ? info.settings.value("suite_dir", "") : "";
    std::error_code error;
    if (!recorded.empty() && fs::exists(recorded, error)) load = recorded;
    out.where = "the folder on disk '" + load + "' (unpinned: not a commit)";
  } else if (!config.suite_repo.empty() && !IsRegisteredName(spec.name_or_path)) {
    // A path suite checked against another clone: the same path inside it, at the commit.
    load = (fs::path(config.suite_repo) / info.suite_path).string() + "@" + info.suite_commit;
    out.where = "commit " + info.suite_commit.substr(0, 12);
  } else {
    load = spec.name_or_path + "@" + info.suite_commit;
    resolve.suite_repo = config.suite_repo;
    out.where = "commit " + info.suite_commit.substr(0, 12);
  }
  out.tried = true;
  try {
    out.loaded = LoadSuite(load, resolve);
  } catch (const Error& e) {
    out.error = e.what();
  }
  return out;
}

// ---- checks ----------------------------------------------------------------------------------

using State = VerifyCheck::State;

VerifyCheck NewCheck(const char* name) {
  VerifyCheck check;
  check.name = name;
  return check;
}

void Detail(VerifyCheck& check, std::string line) { check.details.push_back(std::move(line)); }

VerifyCheck CheckHash(const Bundle& bundle, const VerifyConfig& config) {
  VerifyCheck c = NewCheck("hash");
  std::string computed;
  try {
    computed = ComputeResultHash(bundle.document);
  } catch (const Error& e) {
    c.state = State::kFailed;
    c.summary = std::string("the document cannot be hashed: ") + e.what();
    return c;
  }
  const std::vector<std::string> changed = ChangedBundleParts(bundle.document);
  if (computed != bundle.result_hash) {
    c.state = State::kFailed;
    c.summary = "result_hash " + Short(bundle.result_hash) + "... but the document hashes to " +
                Short(computed) + "...";
  } else if (!changed.empty()) {
    c.state = State::kFailed;
    c.summary = "result_hash matches, but part_hashes disagree with the parts";
  }
  for (const std::string& part : changed) Detail(c, "changed: " + part);
  std::string expect = config.expect_hash;
  std::transform(expect.begin(), expect.end(), expect.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  if (!expect.empty() && expect != computed) {
    if (c.state == State::kOk) c.summary = "--expect-hash differs";
    c.state = State::kFailed;
    Detail(c, "--expect-hash " + expect + " but the bundle hashes to " + computed);
  }
  if (c.state == State::kOk) {
    c.summary = computed + (expect.empty() ? "" : ", as expected");
  }
  return c;
}

// Task records against the plan, and each planned task's stored data against its hash.
VerifyCheck CheckTasks(const Bundle& bundle, const std::map<std::string, StoredTask>& stored,
                       const std::map<std::string, std::string>& data_errors) {
  VerifyCheck c = NewCheck("tasks");
  std::map<std::string, std::string> plan;
  for (const PlannedTask& p : bundle.plan) {
    if (!plan.emplace(p.task_id, p.task_hash).second) {
      Detail(c, "task '" + p.task_id + "': planned twice");
    }
  }
  if (bundle.run.info.planned_tasks != static_cast<int64_t>(bundle.plan.size())) {
    Detail(c, "run.planned_tasks is " + std::to_string(bundle.run.info.planned_tasks) +
                  " but suite.tasks lists " + std::to_string(bundle.plan.size()));
  }
  std::set<std::string> seen;
  for (const TaskResult& t : bundle.run.tasks) {
    if (!seen.insert(t.task_id).second) Detail(c, "task '" + t.task_id + "': two records");
    const auto p = plan.find(t.task_id);
    if (p == plan.end()) {
      Detail(c, "task '" + t.task_id + "': has a record but is not in the plan (suite.tasks)");
      continue;
    }
    if (t.task_hash != p->second) {
      Detail(c, "task '" + t.task_id + "': task_hash " + Short(t.task_hash) +
                    " but the plan records " + Short(p->second));
    }
    const auto s = stored.find(t.task_id);
    if (s == stored.end()) continue;
    const Task& task = s->second.task;
    const double weight = DifficultyWeight(task.difficulty) * task.weight;
    if (t.dimension != task.dimension || t.difficulty != task.difficulty || t.weight != weight) {
      Detail(c, "task '" + t.task_id + "': dimension/difficulty/weight " + t.dimension + "/" +
                    t.difficulty + "/" + EcmaNumber(t.weight) + " but its task data gives " +
                    task.dimension + "/" + task.difficulty + "/" + EcmaNumber(weight));
    }
  }
  for (const auto& [id, error] : data_errors) Detail(c, "task '" + id + "': " + error);
  size_t with_data = 0;
  for (const PlannedTask& p : bundle.plan) {
    const auto s = stored.find(p.task_id);
    if (s == stored.end()) continue;
    ++with_data;
    if (s->second.task.hash != p.task_hash) {
      Detail(c, "task '" + p.task_id + "': its stored task data hashes to " +
                    Short(s->second.task.hash) + " but the plan records " + Short(p.task_hash));
    }
  }
  if (!c.details.empty()) {
    c.state = State::kFailed;
    c.summary = std::to_string(c.details.size()) + " disagreement(s) between the task records, "
                "the plan and the stored task data";
  } else {
    c.summary = std::to_string(bundle.plan.size()) + " planned, " +
                std::to_string(bundle.run.tasks.size()) + " records; " +
                std::to_string(with_data) + " with task data that hashes to its recorded hash";
    if (bundle.run.info.status != kRunFinished) {
      c.summary += "; a partial run (status " + bundle.run.info.status + ")";
    }
  }
  return c;
}

std::string GradeText(const Grade& g) {
  return std::string(GradeStatusName(g.status)) + ", score " + EcmaNumber(g.score) + ", " +
         (g.passed ? "passed" : "failed");
}

// Which outcome class a failed final request leads to (runner/suite_run.cpp RunTask).
GradeStatus FailedRequestStatus(const RequestRecord& r) {
  return r.outcome == RequestOutcome::kIdleTimeout || r.outcome == RequestOutcome::kTotalTimeout
             ? GradeStatus::kTimeout
             : GradeStatus::kEnvError;
}

VerifyCheck CheckGrades(const Bundle& bundle, const std::map<std::string, const Task*>& tasks,
                        const std::map<std::string, const StoredTask*>& stored,
                        const SuiteLookup& suite, const VerifyConfig& config) {
  VerifyCheck c = NewCheck("grades");
  std::vector<std::string> not_rechecked;
  std::vector<std::string> not_checked;
  size_t regraded = 0, failed = 0;
  const bool same_evalrun = bundle.run.info.evalrun_version == kVersion;
  const bool judged_run = bundle.run.info.settings.contains("judge");
  const bool network_run = bundle.run.info.settings.value("sandbox_network", false);
  size_t judged = 0;  // grades recomputed from a recorded judge verdict
  for (const TaskResult& t : bundle.run.tasks) {
    const std::string name = "task '" + t.task_id + "'";
    const Grade& g = t.grade;
    auto differs = [&](const std::string& what) {
      ++failed;
      Detail(c, name + ": " + what);
    };
    if (t.requests.empty()) {
      // Never sent: only a skip is possible, and it counts for nothing.
      if (g.status != GradeStatus::kSkipped || g.passed || g.score != 0) {
        differs("no request was sent, so the grade must be skipped (score 0, failed); the "
                "bundle has " + GradeText(g));
        continue;
      }
      const auto it = tasks.find(t.task_id);
      // A judged task in a run without a judge is skipped with the judge's reason, a task that
      // needs the network in a run without --sandbox-network with that need.
      std::string reason;
      if (it != tasks.end()) {
        reason = it->second->skip_reason;
        if (reason.empty() && !judged_run) reason = JudgeSkipReason(*it->second);
        if (reason.empty() && !network_run) reason = NetworkSkipReason(*it->second);
      }
      if (it == tasks.end()) {
        not_rechecked.push_back(name + " (skipped; no task data to check the reason)");
      } else if (!reason.empty()) {
        ++regraded;
        if (g.reason != reason) {
          differs("skipped with reason '" + g.reason + "' but this evalrun gives '" + reason +
                  "'");
        }
      } else if (g.reason.rfind("does not fit the server's context", 0) == 0) {
        // Decided by the run's server (its context), not by the task: nothing to recompute.
        not_rechecked.push_back(name + " (skipped by the run's server context: '" + g.reason +
                                "')");
      } else if (same_evalrun) {
        differs("skipped ('" + g.reason + "') but this evalrun (the same version) runs it");
      } else {
        not_rechecked.push_back(name + " (skipped by evalrun " + bundle.run.info.evalrun_version +
                                ": '" + g.reason + "'; this evalrun " + kVersion + " runs it)");
      }
      continue;
    }
    const RequestRecord& last = t.requests.back();
    if (!last.ok()) {
      ++regraded;
      const GradeStatus expected = FailedRequestStatus(last);
      if (g.status != expected || g.passed || g.score != 0) {
        differs(std::string("the final request ended ") + OutcomeName(last.outcome) +
                ", so the grade must be " + GradeStatusName(expected) +
                " (score 0, failed); the bundle has " + GradeText(g));
      }
      continue;
    }
    if (last.prompt_tokens_sent > 0 && last.usage.prompt_tokens >= 0 &&
        last.usage.prompt_tokens < last.prompt_tokens_sent) {
      // The server reported fewer prompt tokens than were sent: the prompt was cut, and the
      // answer is not graded (runner/suite_run.cpp, docs/serving.md).
      ++regraded;
      if (g.status != GradeStatus::kEnvError || g.passed || g.score != 0) {
        differs("the server cut the prompt (" + std::to_string(last.usage.prompt_tokens) + " of " +
                std::to_string(last.prompt_tokens_sent) + " tokens), so the grade must be " +
                "env_error (score 0, failed); the bundle has " + GradeText(g));
      }
      continue;
    }
    const auto it = tasks.find(t.task_id);
    if (it == tasks.end()) {
      not_rechecked.push_back(name + " (no task data in the bundle and no suite here)");
      continue;
    }
    const Task& task = *it->second;
    const std::string type = task.grader.value("type", "");
    const Grader* grader = GraderRegistry::Builtin().Find(type);
    const std::string today =
        grader ? std::string(grader->name()) + "/" + std::string(grader->version()) : "";
    if (g.grader != type) {
      differs("graded by '" + g.grader + "' but the task names grader '" + type + "'");
      continue;
    }
    if (g.grader_version != today) {
      not_rechecked.push_back(name + " (graded by " + g.grader_version + "; this evalrun has " +
                              (today.empty() ? "no such grader" : today) + ")");
      continue;
    }
    GradeContext context;
    const auto s = stored.find(t.task_id);
    const StoredTask* data = s == stored.end() ? nullptr : s->second;
    const LoadedSuite* loaded = suite.loaded ? &*suite.loaded : nullptr;
    context.read_file = [data, loaded](const std::string& path) -> std::optional<std::string> {
      if (data != nullptr) {
        const auto f = data->files.find(path);
        if (f != data->files.end()) return f->second;
      }
      if (loaded != nullptr) return loaded->ReadTaskFile(path);
      return std::nullopt;
    };
    context.sandbox = config.sandbox;
    context.network = config.sandbox_network;
    const json* judge = t.transcript.is_object() && t.transcript.contains("judge")
                            ? &t.transcript["judge"]
                            : nullptr;
    context.judge = judge;
    const Grade now =
        GradeOutput(task, Output{t.output, t.reasoning, t.finish_reason}, context);
    if (judge != nullptr) ++judged;
    if ((now.status == GradeStatus::kSkipped || now.status == GradeStatus::kEnvError) &&
        now.status != g.status) {
      // The grader could not run here (a repository this machine cannot reach, no sandbox, no
      // python3/node): nothing is proven either way.
      not_checked.push_back(name + ": " + now.reason);
      continue;
    }
    if (g.status == GradeStatus::kSkipped && now.status != GradeStatus::kSkipped &&
        RunsPrograms(type) && !g.passed && g.score == 0) {
      // The run's machine could not run the code (no sandbox there); this one can.
      not_rechecked.push_back(name + " (skipped in the run: '" + g.reason + "')");
      continue;
    }
    ++regraded;
    std::vector<std::string> diffs;
    if (now.status != g.status) {
      std::string diff = std::string("status ") + GradeStatusName(g.status) + " vs " +
                         GradeStatusName(now.status);
      // A grade the run's machine could not give (an older Go there, say) says why: a reader can
      // tell an honest environment from a hidden failure.
      if (g.status == GradeStatus::kEnvError) diff += " (the run's reason: " + Quote(g.reason) + ")";
      diffs.push_back(diff);
    }
    if (now.score != g.score) {
      diffs.push_back("score " + EcmaNumber(g.score) + " vs " + EcmaNumber(now.score));
    }
    if (now.passed != g.passed) {
      diffs.push_back(std::string("passed ") + (g.passed ? "true" : "false") + " vs " +
                      (now.passed ? "true" : "false"));
    }
    if (!RunsPrograms(type)) {
      if (now.reason != g.reason) {
        diffs.push_back("reason " + Quote(g.reason) + " vs " + Quote(now.reason));
      }
      if (ValidUtf8Json(now.evidence) != g.evidence) {
        diffs.push_back("evidence " + Quote(g.evidence) + " vs " + Quote(now.evidence));
      }
    }
    if (!diffs.empty()) {
      std::string line = "the bundle's grade differs from " + today + " today for the stored " +
                         "output: ";
      for (size_t i = 0; i < diffs.size(); ++i) line += (i ? "; " : "") + diffs[i];
      differs(line);
    }
  }
  if (failed > 0) {
    c.state = State::kFailed;
    c.summary = std::to_string(failed) + " of " + std::to_string(bundle.run.tasks.size()) +
                " grades differ from what the grader gives for the stored output";
  } else {
    c.summary = std::to_string(regraded) + " of " + std::to_string(bundle.run.tasks.size()) +
                " grades rechecked, all equal";
    if (!not_rechecked.empty()) {
      c.summary += "; " + std::to_string(not_rechecked.size()) + " not rechecked";
    }
  }
  if (!not_checked.empty()) {
    c.summary += "; " + std::to_string(not_checked.size()) +
                 " not checked (the grader could not run on this machine)";
  }
  if (judged > 0) {
    c.details.insert(c.details.begin(), std::to_string(judged) + " judged grade" + (judged == 1 ? "" : "s") +
                  " recomputed from the judge's verdict as recorded (the judge was not asked "
                  "again; --rejudge --judge-endpoint URL asks it)");
  }
  c.not_checked = not_checked.size();
  for (auto& line : not_checked) Detail(c, "not checked: " + line);
  for (auto& line : not_rechecked) Detail(c, "not rechecked: " + line);
  return c;
}

// Leaves of `a` and `b` that differ, as member paths.
void JsonDiff(const json& a, const json& b, const std::string& path,
              std::vector<std::string>& out) {
  if (a.is_object() && b.is_object()) {
    std::set<std::string> keys;
    for (const auto& [k, v] : a.items()) keys.insert(k);
    for (const auto& [k, v] : b.items()) keys.insert(k);
    for (const auto& k : keys) {
      const std::string p = path + "." + k;
      if (!a.contains(k)) out.push_back(p + ": missing in the bundle");
      else if (!b.contains(k)) out.push_back(p + ": not a figure this evalrun computes");
      else JsonDiff(a[k], b[k], p, out);
    }
    return;
  }
  if (a.is_array() && b.is_array() && a.size() == b.size()) {
    for (size_t i = 0; i < a.size(); ++i) {
      JsonDiff(a[i], b[i], path + "[" + std::to_string(i) + "]", out);
    }
    return;
  }
  if (a != b) out.push_back(path + ": the bundle has " + Quote(a) + ", recomputed " + Quote(b));
}

// A speed-protocol request record (core/speed_result.h RecordToJson) read back for SummarizeTest.
RequestRecord SpeedRecord(const json& j) {
  RequestRecord r;
  auto i64 = [&j](const char* key, int64_t fallback) {
    return j.contains(key) && j[key].is_number_integer() ? j[key].get<int64_t>() : fallback;
  };
  r.outcome = ParseOutcome(j.value("outcome", "")).value_or(RequestOutcome::kMalformed);
  r.http_status = static_cast<int>(i64("http_status", 0));
  r.prompt_tokens_sent = i64("prompt_tokens_sent", -1);
  r.max_tokens = i64("max_tokens", -1);
  r.usage.prompt_tokens = i64("prompt_tokens", -1);
  r.usage.cached_tokens = i64("cached_tokens", -1);
  r.usage.completion_tokens = i64("completion_tokens", -1);
  r.usage_reported = !j.value("tokens_estimated", false);
  r.t_send = TimePoint(std::chrono::nanoseconds(i64("send_offset_ns", 0)));
  r.queue_ns = i64("queue_ns", 0);
  r.first_ns = i64("first_ns", -1);
  r.first_content_ns = i64("first_content_ns", -1);
  r.last_ns = i64("last_ns", -1);
  r.end_ns = i64("end_ns", -1);
  if (j.contains("text_event_ns") && j["text_event_ns"].is_array()) {
    for (const auto& v : j["text_event_ns"]) {
      if (v.is_number_integer()) r.text_event_ns.push_back(v.get<int64_t>());
    }
  }
  if (j.contains("error") && j["error"].is_string()) r.error_message = j["error"].get<std::string>();
  ReadServerTimings({{"timings", j.value("timings", json())},
                     {"meta_info", j.value("meta_info", json())}},
                    r.timings);
  return r;
}

void CheckSpeedFigures(const json& speed, const std::string& prefix,
                       std::vector<std::string>& diffs, size_t& speed_tests);

VerifyCheck CheckFigures(const Bundle& bundle) {
  VerifyCheck c = NewCheck("figures");
  // Figures follow from the samples under one set of definitions (docs/metrics.md); a result
  // made under other ones cannot be recomputed here. No member: version 1.
  const json& version = bundle.document.value("metrics_version", json(1));
  if (version != json(kMetricsVersion)) {
    c.state = State::kNotChecked;
    c.summary = "computed with metric definitions " + version.dump() + "; this evalrun has " +
                std::to_string(kMetricsVersion) + " (docs/metrics.md)";
    return c;
  }
  std::vector<std::string> diffs;
  size_t figures = 0;
  const json summary = ValidUtf8Json(RunScoresToJson(ScoreRun(bundle.run)));
  JsonDiff(bundle.document.value("summary", json::object()), summary, "summary", diffs);
  ++figures;
  size_t speed_tests = 0;
  CheckSpeedFigures(bundle.document.value("speed", json()), "speed", diffs, speed_tests);
  // A merged bundle: each part's speed protocol (its machine's) and summary, recomputed too.
  size_t part_summaries = 0;
  if (IsMergedBundle(bundle.document) && bundle.document["parts"].is_array()) {
    for (size_t i = 0; i < bundle.document["parts"].size(); ++i) {
      const std::string path = "parts[" + std::to_string(i) + "].document";
      try {
        const json part = MergedPartDocument(bundle.document, i);
        CheckSpeedFigures(part.value("speed", json()), path + ".speed", diffs, speed_tests);
        const Bundle read = ParseBundle(CanonicalJson(part), path);
        JsonDiff(part.value("summary", json::object()),
                 ValidUtf8Json(RunScoresToJson(ScoreRun(read.run))), path + ".summary", diffs);
        ++part_summaries;
      } catch (const Error&) {
        // A part that cannot be rebuilt is the parts check's finding; nothing to recompute here.
      }
    }
  }
  figures += speed_tests;
  if (!diffs.empty()) {
    c.state = State::kFailed;
    c.summary = std::to_string(diffs.size()) +
                " figure(s) do not follow from the stored samples and grades";
    for (auto& d : diffs) Detail(c, std::move(d));
  } else {
    c.summary = "the summary" +
                (part_summaries ? ", " + std::to_string(part_summaries) + " parts' summaries"
                                : std::string()) +
                (speed_tests ? " and " + std::to_string(speed_tests) + " speed tests" : "") +
                " recomputed from the stored samples and grades";
  }
  return c;
}

// Each speed test's metrics, errors and error messages under `speed` (a speed protocol result),
// recomputed from its records; differences are named under `prefix`. A run over several
// endpoints keeps the other endpoints' results in speed.other_endpoints: each is checked too.
void CheckSpeedFigures(const json& speed, const std::string& prefix,
                       std::vector<std::string>& diffs, size_t& speed_tests) {
  if (speed.is_object() && speed.contains("other_endpoints") &&
      speed["other_endpoints"].is_array()) {
    const json& others = speed["other_endpoints"];
    for (size_t i = 0; i < others.size(); ++i) {
      CheckSpeedFigures(others[i], prefix + ".other_endpoints[" + std::to_string(i) + "]", diffs,
                        speed_tests);
    }
  }
  if (speed.is_object() && speed.contains("tests") && speed["tests"].is_array()) {
    int64_t errors = 0;
    const json& tests = speed["tests"];
    for (size_t i = 0; i < tests.size(); ++i) {
      const json& test = tests[i];
      const std::string path = prefix + ".tests[" + std::to_string(i) + "]";
      SpeedTest t;
      t.name = test.value("name", "");
      t.concurrency = test.value("concurrency", 1);
      const json records = test.value("records", json::array());
      bool rounds = true;
      for (const json& r : records) {
        t.records.push_back(SpeedRecord(r));
        if (r.contains("round") && r["round"].is_number_integer()) {
          t.record_round.push_back(r["round"].get<int>());
        } else {
          rounds = false;
        }
      }
      if (!rounds) t.record_round.clear();
      SummarizeTest(t);
      errors += t.errors;
      json metrics = json::object();
      for (const auto& [name, s] : t.metrics) metrics[name] = ToJson(s);
      const json recomputed = ValidUtf8Json({{"metrics", metrics},
                                             {"errors", t.errors},
                                             {"error_messages", t.error_messages},
                                             {"cache_hits", t.cache_hits}});
      const json stored = {{"metrics", test.value("metrics", json())},
                           {"errors", test.value("errors", json())},
                           {"error_messages", test.value("error_messages", json())},
                           {"cache_hits", test.value("cache_hits", json())}};
      JsonDiff(stored, recomputed, path + " (" + t.name + ")", diffs);
      ++speed_tests;
    }
    JsonDiff(speed.value("errors", json()), json(errors), prefix + ".errors", diffs);
  }
}

// A merged bundle's parts (results/bundle_merge.h): each part's own hash, the split, coverage.
VerifyCheck CheckParts(const Bundle& bundle) {
  VerifyCheck c = NewCheck("parts");
  std::string summary;
  for (std::string& problem : MergedBundleProblems(bundle.document, &summary)) {
    Detail(c, std::move(problem));
  }
  if (!c.details.empty()) {
    c.state = State::kFailed;
    c.summary = std::to_string(c.details.size()) + " problem(s) with the merged shards";
  } else {
    c.summary = summary;
  }
  return c;
}

// A shard's own bundle: its tasks are the rule's share of its recorded plan. nullopt for a bundle
// that is not a shard's.
std::optional<VerifyCheck> CheckShard(const Bundle& bundle) {
  VerifyCheck c = NewCheck("shard");
  std::string summary;
  for (std::string& problem : ShardBundleProblems(bundle.document, &summary)) {
    Detail(c, std::move(problem));
  }
  if (!c.details.empty()) {
    c.state = State::kFailed;
    c.summary = "the shard's tasks are not its share of its recorded plan";
  } else if (summary.empty()) {
    return std::nullopt;
  } else {
    c.summary = summary;
  }
  return c;
}

VerifyCheck CheckSuite(const Bundle& bundle, const SuiteLookup& suite,
                       const VerifyConfig& config) {
  VerifyCheck c = NewCheck("suite");
  const RunInfo& info = bundle.run.info;
  if (info.suite_spec.empty()) {
    c.state = State::kNotChecked;
    c.summary = "a " + info.kind + " run has no suite";
    return c;
  }
  if (!suite.loaded) {
    const bool asked = !config.suite_repo.empty();
    c.state = asked ? State::kFailed : State::kNotChecked;
    c.summary = "the suite could not be loaded: " + suite.error +
                (asked ? "" : " (--suite-repo PATH checks against a local clone)");
    return c;
  }
  const Suite& s = suite.loaded->suite;
  if (!info.suite_commit.empty()) {
    if (s.commit != info.suite_commit) {
      Detail(c, "the suite resolved to commit " + s.commit + ", not " + info.suite_commit);
    }
    if (s.tree != info.suite_tree) {
      Detail(c, "commit " + Short(info.suite_commit) + " has tree " + s.tree +
                    " but the bundle records tree " + info.suite_tree);
    }
  }
  std::map<std::string, const Task*> by_id;
  for (const Task& t : s.tasks) by_id[t.id] = &t;
  for (const PlannedTask& p : bundle.plan) {
    const auto it = by_id.find(p.task_id);
    if (it == by_id.end()) {
      Detail(c, "task '" + p.task_id + "': not in the suite at " + suite.where);
    } else if (it->second->hash != p.task_hash) {
      Detail(c, "task '" + p.task_id + "': the bundle records " + Short(p.task_hash) + ", " +
                    suite.where + " has " + it->second->ShortHash());
    }
  }
  if (!c.details.empty()) {
    c.state = State::kFailed;
    c.summary = std::to_string(c.details.size()) + " planned task(s) differ from " + suite.where;
  } else {
    c.summary = "all " + std::to_string(bundle.plan.size()) + " planned task hashes match " +
                suite.where;
  }
  return c;
}

// Pinned is ok only when the suite check found the recorded commit here and its tasks match: a
// commit that could not be loaded is "not checked"; one whose tasks differ has failed the suite
// check, so pinned is not claimed (not checked) and the failure is not counted twice.
VerifyCheck CheckPinned(const Bundle& bundle, const VerifyCheck& suite_check) {
  VerifyCheck c = NewCheck("pinned");
  const RunInfo& info = bundle.run.info;
  if (info.suite_spec.empty()) {
    c.state = State::kNotChecked;
    c.summary = "a " + info.kind + " run has no suite";
  } else if (info.suite_commit.empty()) {
    c.state = State::kFailed;
    c.summary = "unpinned: the suite '" + info.suite_spec +
                "' was read from disk, so no commit fixes its tasks (run PATH@REV or NAME@REV "
                "for a result that verifies as pinned)";
  } else if (suite_check.state == State::kNotChecked) {
    c.state = State::kNotChecked;
    c.summary = "the bundle records suite " + info.suite_spec + " at commit " +
                info.suite_commit + ", which could not be checked here (see suite)";
  } else if (suite_check.state == State::kFailed) {
    c.state = State::kNotChecked;  // the suite check has failed already: not counted twice
    c.summary = "suite " + info.suite_spec + " at commit " + info.suite_commit +
                " does not hold the bundle's tasks (see suite)";
  } else {
    c.summary = "suite " + info.suite_spec + " at commit " + info.suite_commit;
  }
  return c;
}

}  // namespace

json ExportBundle(const ResultStore& store, const std::string& run_id,
                  const ResolveOptions& resolve, std::string* note) {
  const RunData run = store.LoadRun(run_id);
  const std::vector<PlannedTask> plan = store.Plan(run_id);
  std::map<std::string, json> task_data;
  if (!run.info.suite_spec.empty()) {
    VerifyConfig config;
    config.suite_repo = resolve.suite_repo;
    const SuiteLookup suite = FindSuite(run.info, config);
    if (!suite.loaded) {
      if (note) *note = "the suite could not be loaded (" + suite.error +
                        "): the bundle holds no task data, so verify re-grades only with the "
                        "suite at hand";
    } else {
      std::map<std::string, const Task*> by_id;
      for (const Task& t : suite.loaded->suite.tasks) by_id[t.id] = &t;
      size_t missing = 0;
      for (const PlannedTask& p : plan) {
        const auto it = by_id.find(p.task_id);
        if (it == by_id.end() || it->second->hash != p.task_hash) {
          ++missing;
          continue;
        }
        task_data[p.task_id] = TaskData(*it->second, *suite.loaded);
      }
      if (missing > 0 && note) {
        *note = std::to_string(missing) + " planned task(s) are not in " + suite.where +
                " with their recorded hash: their task data is left out";
      }
    }
  }
  return MakeBundle(run, plan, task_data);
}

// --spot N: N tasks picked at random (seeded) among the single-request tasks whose final
// request succeeded and whose task this evalrun has, rerun against the user's own endpoint with the run's settings,
// and graded. A result that was not invented agrees on most grades; outputs may differ where the
// server is not deterministic, so they are reported, not failed.
VerifyCheck CheckSpot(const Bundle& bundle, const std::map<std::string, const Task*>& tasks,
                      const std::map<std::string, const StoredTask*>& stored,
                      const SuiteLookup& suite, const VerifyConfig& config) {
  VerifyCheck c = NewCheck("spot");
  std::vector<const TaskResult*> candidates;
  for (const TaskResult& t : bundle.run.tasks) {
    if (t.requests.empty() || !t.requests.back().ok() || !tasks.count(t.task_id)) continue;
    if (t.grade.status == GradeStatus::kSkipped) continue;
    // Agent tasks (a transcript) take a whole episode, not one request: not spot-checked; their
    // grades are recomputed from the stored episodes by the `grades` check.
    if (!t.transcript.is_null()) continue;
    candidates.push_back(&t);
  }
  std::mt19937_64 random(config.seed);
  std::shuffle(candidates.begin(), candidates.end(), random);
  if (static_cast<int>(candidates.size()) > config.spot) candidates.resize(config.spot);
  if (candidates.empty()) {
    c.state = State::kNotChecked;
    c.summary = "no task of the bundle can be rerun here";
    return c;
  }
  HttpRequest ping;
  ping.method = "GET";
  ping.url = config.endpoint + "/v1/models";
  ping.connect_timeout_s = 5;
  ping.total_timeout_s = 10;
  if (Fetch(ping).status == 0) {
    c.state = State::kNotChecked;
    c.summary = "cannot reach the endpoint " + config.endpoint;
    return c;
  }
  const ServerInfo server = DetectServer(config.endpoint, Fetch);
  const json& settings = bundle.run.info.settings;
  SuiteRunConfig run;
  run.endpoint = config.endpoint;
  run.max_tokens = settings.value("max_tokens", static_cast<int64_t>(-1));
  const std::string thinking = settings.value("thinking", "task");
  if (thinking != "task") run.thinking = ParseThinking(thinking);
  const std::string model = settings.value("model", server.model);

  size_t same_grade = 0, same_output = 0, not_rerun = 0;
  for (const TaskResult* t : candidates) {
    GradeContext context;
    const auto s = stored.find(t->task_id);
    const StoredTask* data = s == stored.end() ? nullptr : s->second;
    const LoadedSuite* loaded = suite.loaded ? &*suite.loaded : nullptr;
    context.read_file = [data, loaded](const std::string& path) -> std::optional<std::string> {
      if (data != nullptr) {
        const auto f = data->files.find(path);
        if (f != data->files.end()) return f->second;
      }
      if (loaded != nullptr) return loaded->ReadTaskFile(path);
      return std::nullopt;
    };
    context.sandbox = config.sandbox;
    const TaskResult now = RunSingleTask(*tasks.at(t->task_id), run, server, model, context);
    const GradeStatus was = t->grade.status;
    if ((now.grade.status == GradeStatus::kEnvError || now.grade.status == GradeStatus::kTimeout ||
         now.grade.status == GradeStatus::kSkipped) &&
        now.grade.status != was) {
      // The rerun failed on the verifier's side (its endpoint, its sandbox): not a disagreement.
      ++not_rerun;
      Detail(c, "task '" + t->task_id + "': not rechecked: " + now.grade.reason);
      continue;
    }
    const bool grade_same = now.grade.status == t->grade.status &&
                            now.grade.score == t->grade.score &&
                            now.grade.passed == t->grade.passed;
    const bool output_same = now.output == t->output;
    same_grade += grade_same;
    same_output += output_same;
    Detail(c, "task '" + t->task_id + "': " +
                  (grade_same ? "same grade (" + GradeText(t->grade) + ")"
                              : "grade differs: the bundle has " + GradeText(t->grade) +
                                    ", the rerun " + GradeText(now.grade)) +
                  (output_same ? ", output identical" : ", output differs"));
  }
  c.summary = std::to_string(candidates.size()) + " tasks rerun against " + config.endpoint +
              " (seed " + std::to_string(config.seed) + "): " + std::to_string(same_grade) +
              " same grade, " + std::to_string(same_output) + " identical output" +
              (not_rerun > 0 ? ", " + std::to_string(not_rerun) +
                                   " not rechecked (the rerun failed on this side)"
                             : std::string());
  if (same_grade + not_rerun != candidates.size()) c.state = State::kFailed;
  return c;
}

// --rejudge: every judged task's recorded judge requests sent again, in order, to the
// verifier's judge (a further question, when the new replies need one, built by the grader),
// and the grade from the new exchange compared with the recorded one. A judge model is not
// deterministic, so this shows whether the recorded verdicts hold up, not the bundle's integrity
// (the grades check proves that); a differing grade fails the check, as --spot does.
VerifyCheck CheckRejudge(const Bundle& bundle, const std::map<std::string, const Task*>& tasks,
                         const JudgeEndpoint& judge) {
  VerifyCheck c = NewCheck("rejudge");
  size_t asked = 0, same = 0, not_asked = 0;
  for (const TaskResult& t : bundle.run.tasks) {
    if (!t.transcript.is_object() || !t.transcript.contains("judge")) continue;
    const std::string name = "task '" + t.task_id + "'";
    const auto it = tasks.find(t.task_id);
    const Grader* grader =
        it == tasks.end() ? nullptr : GraderRegistry::Builtin().Find(it->second->grader.value("type", ""));
    if (grader == nullptr || t.requests.empty()) {
      ++not_asked;
      Detail(c, name + ": not asked again (no task data for it here)");
      continue;
    }
    const Task& task = *it->second;
    const Output output{t.output, t.reasoning, t.finish_reason};
    const Answer answer = ExtractAnswer(output);
    const RequestRecord& last = t.requests.back();
    const CandidateInfo candidate{last.finish_reason, last.usage.completion_tokens,
                                  last.max_tokens};
    const json record = AskJudge(judge, *grader, task, answer, candidate,
                                 &t.transcript["judge"]["attempts"]);
    GradeContext context;
    context.judge = &record;
    const Grade now = GradeOutput(task, output, context);
    if (now.status == GradeStatus::kEnvError && t.grade.status != GradeStatus::kEnvError) {
      ++not_asked;
      Detail(c, name + ": the judge gave no usable verdict here: " + now.reason);
      continue;
    }
    ++asked;
    const bool equal = now.status == t.grade.status && now.score == t.grade.score &&
                       now.passed == t.grade.passed;
    same += equal;
    Detail(c, name + ": " + (equal ? "same grade (" + GradeText(t.grade) + ")"
                                   : "grade differs: the bundle has " + GradeText(t.grade) +
                                         ", the judge now gives " + GradeText(now)));
  }
  if (asked + not_asked == 0) {
    c.state = State::kNotChecked;
    c.summary = "no task of the bundle was judged";
    return c;
  }
  c.summary = std::to_string(asked) + " judged task" + (asked == 1 ? "" : "s") +
              " asked again at " + judge.endpoint + " (model " + judge.model + "): " +
              std::to_string(same) + " same grade" +
              (not_asked > 0 ? ", " + std::to_string(not_asked) + " not rejudged" : std::string());
  if (same != asked) c.state = State::kFailed;
  return c;
}

std::vector<VerifyCheck> VerifyBundle(const Bundle& bundle, const VerifyConfig& config) {
  std::vector<VerifyCheck> checks;
  checks.push_back(CheckHash(bundle, config));

  // Task data: the bundle's own (checked against the recorded hash in "tasks"), and the suite's
  // where it holds the planned task with the planned hash.
  std::map<std::string, StoredTask> stored;
  std::map<std::string, std::string> data_errors;
  const json& planned = bundle.document["suite"]["tasks"];
  for (size_t i = 0; i < planned.size(); ++i) {
    const json& data = planned[i]["task"];
    if (data.is_null()) continue;
    const std::string id = bundle.plan[i].task_id;
    try {
      stored.emplace(id, TaskFromData(data, "suite.tasks[" + std::to_string(i) + "].task"));
    } catch (const std::exception& e) {
      data_errors[id] = e.what();
    }
  }
  const SuiteLookup suite = FindSuite(bundle.run.info, config);
  std::map<std::string, std::string> plan_hash;
  for (const PlannedTask& p : bundle.plan) plan_hash[p.task_id] = p.task_hash;
  std::map<std::string, const Task*> tasks;  // what re-grading uses
  std::map<std::string, const StoredTask*> stored_ptr;
  for (const auto& [id, s] : stored) {
    stored_ptr[id] = &s;
    if (s.task.hash == plan_hash[id]) tasks[id] = &s.task;
  }
  if (suite.loaded) {
    for (const Task& t : suite.loaded->suite.tasks) {
      const auto p = plan_hash.find(t.id);
      if (p != plan_hash.end() && p->second == t.hash) tasks[t.id] = &t;
    }
  }
  checks.push_back(CheckTasks(bundle, stored, data_errors));
  if (IsMergedBundle(bundle.document)) {
    checks.push_back(CheckParts(bundle));
  } else if (std::optional<VerifyCheck> shard = CheckShard(bundle)) {
    checks.push_back(std::move(*shard));
  }
  checks.push_back(CheckGrades(bundle, tasks, stored_ptr, suite, config));
  checks.push_back(CheckFigures(bundle));
  checks.push_back(CheckSuite(bundle, suite, config));
  checks.push_back(CheckPinned(bundle, checks.back()));
  if (config.spot > 0) checks.push_back(CheckSpot(bundle, tasks, stored_ptr, suite, config));
  if (config.rejudge) checks.push_back(CheckRejudge(bundle, tasks, *config.rejudge));
  return checks;
}

std::string RenderVerifyReport(const std::vector<VerifyCheck>& checks) {
  std::string out;
  std::string failed;
  for (const VerifyCheck& c : checks) {
    switch (c.state) {
      case State::kOk:
        out += c.name + ": ok (" + c.summary + ")\n";
        break;
      case State::kFailed:
        out += c.name + ": FAILED: " + c.summary + "\n";
        failed += (failed.empty() ? "" : ", ") + c.name;
        break;
      case State::kNotChecked:
        out += c.name + ": not checked (" + c.summary + ")\n";
        break;
    }
    for (size_t i = 0; i < c.details.size() && i < kMaxDetails; ++i) {
      out += "  - " + c.details[i] + "\n";
    }
    if (c.details.size() > kMaxDetails) {
      out += "  - ... and " + std::to_string(c.details.size() - kMaxDetails) + " more\n";
    }
  }
  size_t not_checked = 0;
  for (const VerifyCheck& c : checks) not_checked += c.not_checked;
  if (!failed.empty()) {
    out += "verify: FAILED (" + failed + ")\n";
  } else if (not_checked > 0) {
    bool network = false;  // a grade whose tests need the network: say which flag reruns it
    for (const VerifyCheck& c : checks) {
      for (const std::string& d : c.details) {
        network = network || d.find("only with --sandbox-network") != std::string::npos;
      }
    }
    out += "verify: no mismatch, but " + std::to_string(not_checked) + " grade" +
           (not_checked == 1 ? " was" : "s were") +
           " not checked (exit 4; --repo-mirror URL=PATH or verify --fetch brings missing "
           "repositories" +
           (network ? ", verify --sandbox-network reruns tests that need the network" : "") +
           ")\n";
  } else {
    std::string unchecked;  // checks that could not run here (no suite, no endpoint): named
    for (const VerifyCheck& c : checks) {
      if (c.state == State::kNotChecked) unchecked += (unchecked.empty() ? "" : ", ") + c.name;
    }
    out += unchecked.empty() ? "verify: ok\n" : "verify: ok (not checked here: " + unchecked + ")\n";
  }
  return ValidUtf8(out);
}

void AddVerifyCommands(CLI::App& app, VerifyOptions& o) {
  CLI::App* e = app.add_subcommand(
      "export", "write a stored run as one bundle file others can verify (FILE.evalrun.json)");
  e->allow_extras();
  e->add_option("RUN_ID", o.export_run, "a run id (evalrun runs lists them)")->required();
  e->add_option("--db", o.db, "results database (default ./evalrun.db)");
  e->add_option("--out", o.export_out, "the bundle file to write, e.g. result.evalrun.json")
      ->required();
  e->add_option("--suite-repo", o.suite_repo,
                "a local clone for a registered suite name (to include the task data)");
  e->add_option("--repo-mirror", o.repo_mirrors,
                "URL=PATH: a local clone to use for a repository's URL (repeatable)");
  CLI::App* v = app.add_subcommand(
      "verify", "check a bundle offline: hash, grades, figures, task hashes, pinning");
  v->allow_extras();
  v->add_option("BUNDLE", o.bundle, "a bundle file written by evalrun export")->required();
  v->add_option("--suite-repo", o.suite_repo,
                "a local clone holding the suite's commit (a registered name's repository, or "
                "the repository of a PATH@REV suite)");
  v->add_option("--expect-hash", o.expect_hash, "the result hash the bundle must have");
  v->add_option("--repo-mirror", o.repo_mirrors,
                "URL=PATH: a local clone to use for a repository's URL (repeatable)");
  v->add_flag("--fetch", o.fetch,
              "let verify clone or fetch repositories it lacks (it is offline otherwise)");
  v->add_option("--spot", o.spot,
                "also rerun N random tasks against --endpoint with the run's settings and "
                "report agreement");
  v->add_option("--endpoint", o.endpoint, "your own server's base URL, for --spot");
  v->add_option("--seed", o.seed, "which tasks --spot picks (default: a random seed, printed)");
  v->add_flag("--rejudge", o.rejudge,
              "send every judged task's recorded judge requests again to --judge-endpoint and "
              "compare the grades (otherwise the recorded verdicts are taken as recorded)");
  v->add_option("--judge-endpoint", o.judge_endpoint, "the judge's base URL, for --rejudge");
  v->add_flag("--sandbox-network", o.sandbox_network,
              "rerun tests that install packages (zx-bench projects whose tests need the network) "
              "on this machine's network; otherwise they are not checked");
  v->add_option("--judge-model", o.judge_model,
                "the judge's model name, for --rejudge (default: its first model)");
}

int RunExportCommand(const VerifyOptions& o) {
  SetRepoMirrors(ParseRepoMirrors(o.repo_mirrors));
  if (!std::ifstream(o.db)) throw Error(o.db + ": no results database here (--db names another)");
  const ResultStore store(o.db);
  std::string note;
  ResolveOptions resolve;
  resolve.suite_repo = o.suite_repo;
  const json document = ExportBundle(store, o.export_run, resolve, &note);
  const std::string text = CanonicalJson(document) + "\n";
  if (const auto error = WriteFileAtomically(o.export_out, text)) {
    throw Error("--out " + o.export_out + ": cannot write there: " + *error);
  }
  if (document["run"]["partial"].get<bool>()) {
    std::cerr << "evalrun: note: run " << o.export_run << " is "
              << document["run"]["status"].get<std::string>()
              << ", so the bundle is partial (it holds the finished tasks only)" << std::endl;
  }
  if (!note.empty()) std::cerr << "evalrun: note: " << note << std::endl;
  std::cerr << "evalrun: wrote " << o.export_out << " (result hash "
            << document["result_hash"].get<std::string>() << ")" << std::endl;
  return 0;
}

int RunVerifyCommand(const VerifyOptions& o) {
  SetRepoMirrors(ParseRepoMirrors(o.repo_mirrors));
  // Verify is offline unless a flag says otherwise: no clone or fetch of a repository.
  SetNetworkAllowed(o.fetch, " (verify --fetch allows it, or --repo-mirror URL=PATH names a "
                             "local clone)");
  const Bundle bundle = ReadBundle(o.bundle);
  const std::unique_ptr<Sandbox> sandbox = MakeBubblewrapSandbox();
  VerifyConfig config;
  config.suite_repo = o.suite_repo;
  config.expect_hash = o.expect_hash;
  config.sandbox = sandbox.get();
  config.sandbox_network = o.sandbox_network;
  if (o.spot < 0) throw Error("--spot must be a positive number of tasks");
  if (o.spot > 0) {
    if (o.endpoint.empty()) throw Error("--spot needs --endpoint URL (your own server)");
    config.spot = o.spot;
    config.endpoint = NormalizeEndpoint(o.endpoint);
    config.seed = o.seed >= 0 ? static_cast<uint64_t>(o.seed) : std::random_device{}();
  } else if (!o.endpoint.empty()) {
    throw Error("--endpoint is only used with --spot N");
  }
  if (o.rejudge) {
    if (o.judge_endpoint.empty()) throw Error("--rejudge needs --judge-endpoint URL");
    config.rejudge = ConnectJudge(NormalizeEndpoint(o.judge_endpoint), o.judge_model);
  } else if (!o.judge_endpoint.empty() || !o.judge_model.empty()) {
    throw Error("--judge-endpoint and --judge-model are only used with --rejudge");
  }
  const std::vector<VerifyCheck> checks = VerifyBundle(bundle, config);
  std::cout << "bundle: " << o.bundle << " (run " << bundle.run.info.id << ", "
            << bundle.run.tasks.size() << " task records)\n"
            << RenderVerifyReport(checks) << std::flush;
  size_t not_checked = 0;
  for (const VerifyCheck& c : checks) {
    if (c.state == VerifyCheck::State::kFailed) return static_cast<int>(ExitCode::kVerifyFailed);
    not_checked += c.not_checked;
  }
  return not_checked > 0 ? kVerifyNotCheckedExit : 0;
}

}  // namespace evalrun
