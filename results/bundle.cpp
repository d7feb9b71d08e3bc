// Bundles: the document of docs/bundle-format.md, written and read back. Writing builds a
// nlohmann::json whose canonical rendering (core/canonical_json.h) is the file; reading checks
// the shape member by member so that every error names the member.
#include "results/bundle.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <cmath>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "core/base64.h"
#include "core/canonical_json.h"
#include "core/error.h"
#include "core/json_depth.h"
#include "core/limits.h"
#include "core/metrics.h"
#include "core/sha256.h"
#include "core/version.h"
#include "results/report_json.h"
#include "results/run_report.h"

namespace evalrun {
namespace {

using nlohmann::json;

constexpr const char* kFormatName = "evalrun.bundle";

// A double as JSON; a non-finite one has no JSON rendering, so it is refused by name.
json Number(double value, const std::string& where) {
  if (!std::isfinite(value)) throw Error("cannot export: " + where + " is not a finite number");
  return value;
}

json TextObject() { return json::object(); }

// `run_endpoint`: the run's endpoint. A request sent elsewhere (a run over several endpoints)
// carries its own in `endpoint`; absent means the run's (docs/bundle-format.md), so a
// one-endpoint run's bundle is what it was before.
json RequestJson(const RequestRecord& r, const std::string& run_endpoint) {
  json j = TextObject();
  PutBundleText(j, "label", r.label);
  if (!r.endpoint.empty() && r.endpoint != run_endpoint) PutBundleText(j, "endpoint", r.endpoint);
  // The steady clock's origin is arbitrary and may lie beyond 2^53 ns: a decimal string keeps it
  // exact (docs/bundle-format.md, "Numbers").
  j["t_send_ns"] = std::to_string(r.t_send.time_since_epoch().count());
  j["queue_ns"] = r.queue_ns;
  j["first_ns"] = r.first_ns;
  j["first_content_ns"] = r.first_content_ns;
  j["last_ns"] = r.last_ns;
  j["end_ns"] = r.end_ns;
  j["text_event_ns"] = r.text_event_ns;
  j["events"] = r.events;
  j["http_status"] = r.http_status;
  j["outcome"] = OutcomeName(r.outcome);
  PutBundleText(j, "error_message", r.error_message);
  j["prompt_tokens_sent"] = r.prompt_tokens_sent;
  j["max_tokens"] = r.max_tokens;
  PutBundleText(j, "finish_reason", r.finish_reason);
  PutBundleText(j, "model", r.model);
  PutBundleText(j, "system_fingerprint", r.system_fingerprint);
  j["usage"] = {{"prompt_tokens", r.usage.prompt_tokens},
                {"completion_tokens", r.usage.completion_tokens},
                {"cached_tokens", r.usage.cached_tokens},
                {"reasoning_tokens", r.usage.reasoning_tokens},
                {"reported", r.usage_reported},
                {"raw", ValidUtf8Json(r.usage.raw)}};
  j["timings"] = {{"timings", ValidUtf8Json(r.timings.raw_timings)},
                  {"meta_info", ValidUtf8Json(r.timings.raw_meta_info)}};
  return j;
}

json TaskJson(const TaskResult& t, size_t index, const std::string& run_endpoint) {
  const std::string where = "tasks[" + std::to_string(index) + "]";
  json j = TextObject();
  PutBundleText(j, "task_id", t.task_id);
  PutBundleText(j, "task_hash", t.task_hash);
  PutBundleText(j, "dimension", t.dimension);
  PutBundleText(j, "difficulty", t.difficulty);
  j["weight"] = Number(t.weight, where + ".weight");
  PutBundleText(j, "group", t.group);
  PutBundleText(j, "category", t.category);
  PutBundleText(j, "output", t.output);
  PutBundleText(j, "reasoning", t.reasoning);
  PutBundleText(j, "finish_reason", t.finish_reason);
  j["transcript"] = ValidUtf8Json(t.transcript);
  j["attempts"] = t.attempts;
  j["wall_s"] = Number(t.wall_s, where + ".wall_s");
  j["finished_at_ns"] = std::to_string(t.finished_at_ns);  // beyond 2^53: a decimal string
  json grade = TextObject();
  PutBundleText(grade, "grader", t.grade.grader);
  PutBundleText(grade, "grader_version", t.grade.grader_version);
  grade["status"] = GradeStatusName(t.grade.status);
  grade["score"] = Number(t.grade.score, where + ".grade.score");
  grade["passed"] = t.grade.passed;
  PutBundleText(grade, "reason", t.grade.reason);
  grade["evidence"] = ValidUtf8Json(t.grade.evidence);
  j["grade"] = std::move(grade);
  json requests = json::array();
  for (const RequestRecord& r : t.requests) requests.push_back(RequestJson(r, run_endpoint));
  j["requests"] = std::move(requests);
  return j;
}

std::string PartLabel(const std::string& path, const json& value) {
  if (path.rfind("tasks[", 0) != 0 && path.rfind("suite.tasks[", 0) != 0) return path;
  if (value.is_object() && value.contains("task_id") && value["task_id"].is_string()) {
    return path + " (task '" + value["task_id"].get<std::string>() + "')";
  }
  if (value.is_object() && value.contains("id") && value["id"].is_string()) {
    return path + " (task '" + value["id"].get<std::string>() + "')";
  }
  return path;
}

// Every part of the document that gets its own hash, with its path: the members of "run" and
// of "suite" (each planned task apart), each task record, and the other top-level members.
void ForEachPart(const json& document,
                 const std::function<void(const std::string&, const json&)>& visit) {
  for (const auto& [key, value] : document.items()) {
    if (key == "result_hash" || key == "part_hashes") continue;
    if ((key == "run" || key == "suite") && value.is_object()) {
      for (const auto& [member, inner] : value.items()) {
        if (key == "suite" && member == "tasks" && inner.is_array()) {
          for (size_t i = 0; i < inner.size(); ++i) {
            visit("suite.tasks[" + std::to_string(i) + "]", inner[i]);
          }
        } else {
          visit(key + "." + member, inner);
        }
      }
    } else if (key == "tasks" && value.is_array()) {
      for (size_t i = 0; i < value.size(); ++i) visit("tasks[" + std::to_string(i) + "]", value[i]);
    } else if (key == "parts" && value.is_array()) {
      // A merged bundle's parts (results/bundle_merge.h), each its own part.
      for (size_t i = 0; i < value.size(); ++i) visit("parts[" + std::to_string(i) + "]", value[i]);
    } else {
      visit(key, value);
    }
  }
}

json PartHashes(const json& document) {
  json hashes = json::object();
  ForEachPart(document, [&hashes](const std::string& path, const json& value) {
    hashes[path] = Sha256Hex(CanonicalJson(value));
  });
  return hashes;
}

// ---- reading -------------------------------------------------------------------------------

// Shape checks that name the member: "<file>: tasks[3].grade.score: expected a number".
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void Fail(const std::string& where, const std::string& problem) const {
    throw Error(file_ + ": " + where + ": " + problem);
  }
  const json& Member(const json& object, const std::string& where, const char* key) const {
    if (!object.is_object()) Fail(where, "expected an object");
    const auto it = object.find(key);
    if (it == object.end()) Fail(Join(where, key), "missing");
    return *it;
  }
  const json& Object(const json& object, const std::string& where, const char* key) const {
    const json& v = Member(object, where, key);
    if (!v.is_object()) Fail(Join(where, key), "expected an object");
    return v;
  }
  const json& Array(const json& object, const std::string& where, const char* key) const {
    const json& v = Member(object, where, key);
    if (!v.is_array()) Fail(Join(where, key), "expected an array");
    return v;
  }
  std::string Text(const json& object, const std::string& where, const char* key) const {
    Member(object, where, key);
    try {
      return BundleText(object, key, where);
    } catch (const Error& e) {
      throw Error(file_ + ": " + e.what());
    }
  }
  double Double(const json& object, const std::string& where, const char* key) const {
    const json& v = Member(object, where, key);
    if (!v.is_number()) Fail(Join(where, key), "expected a number");
    return v.get<double>();
  }
  int64_t Int(const json& object, const std::string& where, const char* key) const {
    const json& v = Member(object, where, key);
    if (!v.is_number_integer()) Fail(Join(where, key), "expected an integer");
    return v.get<int64_t>();
  }
  bool Bool(const json& object, const std::string& where, const char* key) const {
    const json& v = Member(object, where, key);
    if (!v.is_boolean()) Fail(Join(where, key), "expected true or false");
    return v.get<bool>();
  }
  // An int64 written as a decimal string (values beyond 2^53).
  int64_t DecimalString(const json& object, const std::string& where, const char* key) const {
    const json& v = Member(object, where, key);
    if (!v.is_string()) Fail(Join(where, key), "expected a decimal string");
    const std::string& s = v.get_ref<const std::string&>();
    try {
      size_t used = 0;
      const long long value = std::stoll(s, &used);
      if (used != s.size()) throw std::invalid_argument(s);
      return value;
    } catch (const std::exception&) {
      Fail(Join(where, key), "expected a decimal string, got '" + s + "'");
    }
  }
  static std::string Join(const std::string& where, const char* key) {
    return where.empty() ? key : where + "." + key;
  }

 private:
  std::string file_;
};

RequestRecord ReadRequest(const Reader& r, const json& j, const std::string& where,
                          const std::string& run_endpoint) {
  RequestRecord rec;
  rec.label = r.Text(j, where, "label");
  rec.endpoint = j.contains("endpoint") ? r.Text(j, where, "endpoint") : run_endpoint;
  rec.t_send = TimePoint(std::chrono::nanoseconds(r.DecimalString(j, where, "t_send_ns")));
  rec.queue_ns = r.Int(j, where, "queue_ns");
  rec.first_ns = r.Int(j, where, "first_ns");
  rec.first_content_ns = r.Int(j, where, "first_content_ns");
  rec.last_ns = r.Int(j, where, "last_ns");
  rec.end_ns = r.Int(j, where, "end_ns");
  const json& events = r.Array(j, where, "text_event_ns");
  rec.text_event_ns.reserve(events.size());
  for (size_t i = 0; i < events.size(); ++i) {
    if (!events[i].is_number_integer()) {
      r.Fail(where + ".text_event_ns[" + std::to_string(i) + "]", "expected an integer");
    }
    rec.text_event_ns.push_back(events[i].get<int64_t>());
  }
  rec.events = r.Int(j, where, "events");
  rec.http_status = static_cast<int>(r.Int(j, where, "http_status"));
  const std::string outcome = r.Text(j, where, "outcome");
  const auto parsed = ParseOutcome(outcome);
  if (!parsed) r.Fail(where + ".outcome", "unknown outcome '" + outcome + "'");
  rec.outcome = *parsed;
  rec.error_message = r.Text(j, where, "error_message");
  rec.prompt_tokens_sent = r.Int(j, where, "prompt_tokens_sent");
  rec.max_tokens = r.Int(j, where, "max_tokens");
  rec.finish_reason = r.Text(j, where, "finish_reason");
  rec.model = r.Text(j, where, "model");
  rec.system_fingerprint = r.Text(j, where, "system_fingerprint");
  const std::string uw = where + ".usage";
  const json& usage = r.Object(j, where, "usage");
  rec.usage.prompt_tokens = r.Int(usage, uw, "prompt_tokens");
  rec.usage.completion_tokens = r.Int(usage, uw, "completion_tokens");
  rec.usage.cached_tokens = r.Int(usage, uw, "cached_tokens");
  rec.usage.reasoning_tokens = r.Int(usage, uw, "reasoning_tokens");
  rec.usage_reported = r.Bool(usage, uw, "reported");
  rec.usage.raw = r.Member(usage, uw, "raw");
  const json& timings = r.Object(j, where, "timings");
  ReadServerTimings(timings, rec.timings);
  return rec;
}

TaskResult ReadTask(const Reader& r, const json& j, const std::string& where,
                    const std::string& run_endpoint) {
  TaskResult t;
  t.task_id = r.Text(j, where, "task_id");
  t.task_hash = r.Text(j, where, "task_hash");
  t.dimension = r.Text(j, where, "dimension");
  t.difficulty = r.Text(j, where, "difficulty");
  t.weight = r.Double(j, where, "weight");
  t.group = r.Text(j, where, "group");
  t.category = r.Text(j, where, "category");
  t.output = r.Text(j, where, "output");
  t.reasoning = r.Text(j, where, "reasoning");
  t.finish_reason = r.Text(j, where, "finish_reason");
  // Absent in bundles written before agent tasks existed: the same as null.
  if (j.contains("transcript")) t.transcript = j["transcript"];
  t.attempts = static_cast<int>(r.Int(j, where, "attempts"));
  t.wall_s = r.Double(j, where, "wall_s");
  t.finished_at_ns = r.DecimalString(j, where, "finished_at_ns");
  const std::string gw = where + ".grade";
  const json& grade = r.Object(j, where, "grade");
  t.grade.grader = r.Text(grade, gw, "grader");
  t.grade.grader_version = r.Text(grade, gw, "grader_version");
  const std::string status = r.Text(grade, gw, "status");
  const auto parsed = ParseGradeStatus(status);
  if (!parsed) r.Fail(gw + ".status", "unknown grade status '" + status + "'");
  t.grade.status = *parsed;
  t.grade.score = r.Double(grade, gw, "score");
  t.grade.passed = r.Bool(grade, gw, "passed");
  t.grade.reason = r.Text(grade, gw, "reason");
  t.grade.evidence = r.Member(grade, gw, "evidence");
  const json& requests = r.Array(j, where, "requests");
  for (size_t i = 0; i < requests.size(); ++i) {
    t.requests.push_back(
        ReadRequest(r, requests[i], where + ".requests[" + std::to_string(i) + "]",
                    run_endpoint));
  }
  // As the store does: the final request's text is the task's output.
  if (!t.requests.empty()) {
    t.requests.back().content = t.output;
    t.requests.back().reasoning = t.reasoning;
  }
  return t;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot read the bundle");
  in.seekg(0, std::ios::end);
  const auto size = static_cast<long long>(in.tellg());
  if (size > static_cast<long long>(limits::kBundleBytes)) {
    throw Error(path + ": the bundle is " + std::to_string(size) + " bytes, more than the " +
                std::to_string(limits::kBundleBytes >> 20) + " MiB evalrun reads (docs/limits.md)");
  }
  in.seekg(0, std::ios::beg);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

// ---- text, base64 --------------------------------------------------------------------------

std::string ValidUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const auto lead = static_cast<unsigned char>(text[i]);
    size_t length = 0;
    char32_t cp = 0, min = 0;
    if (lead < 0x80) {
      out.push_back(text[i++]);
      continue;
    } else if ((lead & 0xE0) == 0xC0) {
      length = 2, cp = lead & 0x1F, min = 0x80;
    } else if ((lead & 0xF0) == 0xE0) {
      length = 3, cp = lead & 0x0F, min = 0x800;
    } else if ((lead & 0xF8) == 0xF0) {
      length = 4, cp = lead & 0x07, min = 0x10000;
    }
    bool ok = length > 0 && i + length <= text.size();
    for (size_t k = 1; ok && k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xC0) != 0x80) ok = false;
      cp = (cp << 6) | (next & 0x3F);
    }
    if (ok && (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))) ok = false;
    if (ok) {
      out.append(text.substr(i, length));
      i += length;
    } else {
      out += "\xEF\xBF\xBD";  // U+FFFD for the one byte that cannot start a valid sequence here
      ++i;
    }
  }
  return out;
}

json ValidUtf8Json(const json& value) {
  switch (value.type()) {
    case json::value_t::string: {
      const auto& s = value.get_ref<const std::string&>();
      const std::string valid = ValidUtf8(s);
      return valid.size() == s.size() && valid == s ? value : json(valid);
    }
    case json::value_t::array: {
      json out = json::array();
      for (const auto& v : value) out.push_back(ValidUtf8Json(v));
      return out;
    }
    case json::value_t::object: {
      json out = json::object();
      for (const auto& [k, v] : value.items()) out[ValidUtf8(k)] = ValidUtf8Json(v);
      return out;
    }
    case json::value_t::number_float: {
      // JSON has no NaN or infinity; nlohmann writes them as null, and so does the bundle.
      return std::isfinite(value.get<double>()) ? value : json();
    }
    case json::value_t::binary:
    case json::value_t::discarded:
      return json();
    default:
      return value;
  }
}

void PutBundleText(json& object, const std::string& key, std::string_view bytes) {
  std::string valid = ValidUtf8(bytes);
  if (valid.size() == bytes.size() && valid == bytes) {
    object[key] = std::move(valid);
    return;
  }
  object[key] = std::move(valid);
  object[key + "_base64"] = Base64Encode(bytes);
}

std::string BundleText(const json& object, const std::string& key, const std::string& where) {
  const std::string path = where.empty() ? key : where + "." + key;
  const auto it = object.find(key);
  if (it == object.end()) throw Error(path + ": missing");
  if (!it->is_string()) throw Error(path + ": expected a string");
  const auto b64 = object.find(key + "_base64");
  if (b64 == object.end()) return it->get<std::string>();
  if (!b64->is_string()) throw Error(path + "_base64: expected a string");
  std::optional<std::string> bytes = Base64Decode(b64->get_ref<const std::string&>());
  if (!bytes) throw Error(path + "_base64: not base64");
  if (ValidUtf8(*bytes) != it->get_ref<const std::string&>()) {
    throw Error(path + ": does not match " + key + "_base64 (the text must be its bytes with "
                       "invalid UTF-8 replaced by U+FFFD)");
  }
  return std::move(*bytes);
}

// ---- the document --------------------------------------------------------------------------

json MakeBundle(const RunData& run, const std::vector<PlannedTask>& plan) {
  return MakeBundle(run, plan, {});
}

json MakeBundle(const RunData& run, const std::vector<PlannedTask>& plan,
                const std::map<std::string, json>& task_data) {
  const RunInfo& info = run.info;
  json doc = json::object();
  doc["format"] = kFormatName;
  doc["format_version"] = kBundleFormatVersion;
  doc["evalrun_version"] = kVersion;  // of the evalrun that exported it
  doc["metrics_version"] = kMetricsVersion;  // the figures' definitions (core/metrics.h)

  json r = TextObject();
  PutBundleText(r, "id", info.id);
  PutBundleText(r, "kind", info.kind);
  PutBundleText(r, "status", info.status);
  r["partial"] = info.status != kRunFinished;
  PutBundleText(r, "created_at", info.created_at);
  PutBundleText(r, "updated_at", info.updated_at);
  PutBundleText(r, "evalrun_version", info.evalrun_version);
  PutBundleText(r, "endpoint", info.endpoint);
  PutBundleText(r, "model", info.model);
  r["server"] = ValidUtf8Json(info.server);
  r["settings"] = ValidUtf8Json(info.settings);
  json labels = json::object();
  for (const auto& [k, v] : info.labels) labels[ValidUtf8(k)] = ValidUtf8(v);
  r["labels"] = std::move(labels);
  r["environment"] = ValidUtf8Json(info.environment);
  r["planned_tasks"] = info.planned_tasks;
  doc["run"] = std::move(r);

  json s = TextObject();
  PutBundleText(s, "name", info.suite_name);
  PutBundleText(s, "spec", info.suite_spec);
  PutBundleText(s, "format", info.suite_format);
  PutBundleText(s, "repo", info.suite_repo);
  PutBundleText(s, "path", info.suite_path);
  PutBundleText(s, "commit", info.suite_commit);
  PutBundleText(s, "tree", info.suite_tree);
  s["pinned"] = !info.suite_commit.empty();
  json weights = json::object();
  for (const auto& [k, v] : info.dimension_weights) {
    weights[ValidUtf8(k)] = Number(v, "suite.dimension_weights." + k);
  }
  s["dimension_weights"] = std::move(weights);
  json tasks = json::array();
  for (const PlannedTask& p : plan) {
    json t = TextObject();
    PutBundleText(t, "id", p.task_id);
    PutBundleText(t, "hash", p.task_hash);
    const auto it = task_data.find(p.task_id);
    t["task"] = it == task_data.end() ? json() : ValidUtf8Json(it->second);
    tasks.push_back(std::move(t));
  }
  s["tasks"] = std::move(tasks);
  doc["suite"] = std::move(s);

  json records = json::array();
  for (size_t i = 0; i < run.tasks.size(); ++i) records.push_back(TaskJson(run.tasks[i], i, info.endpoint));
  doc["tasks"] = std::move(records);
  doc["speed"] = ValidUtf8Json(run.speed);
  doc["summary"] = ValidUtf8Json(RunScoresToJson(ScoreRun(run)));
  json events = json::array();
  for (const RunData::Event& e : run.events) {
    json j = TextObject();
    PutBundleText(j, "at", e.at);
    PutBundleText(j, "kind", e.kind);
    PutBundleText(j, "message", e.message);
    events.push_back(std::move(j));
  }
  doc["events"] = std::move(events);
  SealBundle(doc);
  return doc;
}

void SealBundle(json& document) {
  document.erase("part_hashes");
  document.erase("result_hash");
  document["part_hashes"] = PartHashes(document);
  document["result_hash"] = ComputeResultHash(document);
}

std::string ComputeResultHash(const json& document) {
  if (!document.is_object() || !document.contains("result_hash")) {
    return Sha256Hex(CanonicalJson(document));
  }
  // Render every member but result_hash, in canonical key order, without copying the document.
  std::vector<std::pair<std::string, const json*>> members;
  for (const auto& [key, value] : document.items()) {
    if (key != "result_hash") members.emplace_back(key, &value);
  }
  std::sort(members.begin(), members.end(), [](const auto& a, const auto& b) {
    // UTF-16 order equals byte order for the ASCII keys of a bundle; other keys are re-sorted by
    // CanonicalJson below.
    return a.first < b.first;
  });
  for (const auto& [key, value] : members) {
    for (const char c : key) {
      if (static_cast<unsigned char>(c) >= 0x80) {  // a non-ASCII key: take the slow way
        json copy = document;
        copy.erase("result_hash");
        return Sha256Hex(CanonicalJson(copy));
      }
    }
  }
  return Sha256Hex(CanonicalObjectInOrder(members));
}

std::vector<std::string> ChangedBundleParts(const json& document) {
  const auto it = document.find("part_hashes");
  if (it == document.end() || !it->is_object()) return {"part_hashes"};
  const json& stored = *it;
  std::vector<std::string> changed;
  std::set<std::string> seen;
  ForEachPart(document, [&](const std::string& path, const json& value) {
    seen.insert(path);
    const auto s = stored.find(path);
    std::string hash;
    try {
      hash = Sha256Hex(CanonicalJson(value));
    } catch (const Error&) {
      hash = "";
    }
    if (s == stored.end() || !s->is_string() || s->get<std::string>() != hash) {
      changed.push_back(PartLabel(path, value));
    }
  });
  for (const auto& [path, value] : stored.items()) {
    if (!seen.count(path)) changed.push_back(path + " (removed)");
  }
  return changed;
}

Bundle ReadBundle(const std::string& path) { return ParseBundle(ReadFile(path), path); }

Bundle ParseBundle(std::string_view text, const std::string& path) {
  Bundle bundle;
  if (const auto at = JsonDepthExceeded(text, limits::kJsonDepth)) {
    throw Error(path + ": at byte " + std::to_string(*at) + ": JSON nested more than " +
                std::to_string(limits::kJsonDepth) + " levels deep (docs/limits.md); " +
                "not a bundle evalrun wrote");
  }
  try {
    bundle.document = json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {  // parse_error, and out_of_range for 1e999
    throw Error(path + ": not JSON (" + e.what() + ")");
  }
  const json& doc = bundle.document;
  const Reader r(path);
  if (!doc.is_object()) r.Fail("(document)", "expected an object");
  if (r.Text(doc, "", "format") != kFormatName) {
    r.Fail("format", std::string("expected \"") + kFormatName + "\"");
  }
  const int64_t version = r.Int(doc, "", "format_version");
  if (version != kBundleFormatVersion) {
    r.Fail("format_version", "version " + std::to_string(version) + ", this evalrun reads " +
                                 std::to_string(kBundleFormatVersion));
  }
  r.Text(doc, "", "evalrun_version");
  bundle.result_hash = r.Text(doc, "", "result_hash");
  r.Object(doc, "", "part_hashes");

  RunInfo& info = bundle.run.info;
  const json& run = r.Object(doc, "", "run");
  info.id = r.Text(run, "run", "id");
  info.kind = r.Text(run, "run", "kind");
  info.status = r.Text(run, "run", "status");
  r.Bool(run, "run", "partial");
  info.created_at = r.Text(run, "run", "created_at");
  info.updated_at = r.Text(run, "run", "updated_at");
  info.evalrun_version = r.Text(run, "run", "evalrun_version");
  info.endpoint = r.Text(run, "run", "endpoint");
  info.model = r.Text(run, "run", "model");
  info.server = r.Member(run, "run", "server");
  info.settings = r.Member(run, "run", "settings");
  const json& labels = r.Object(run, "run", "labels");
  for (const auto& [k, v] : labels.items()) {
    if (!v.is_string()) r.Fail("run.labels." + k, "expected a string");
    info.labels[k] = v.get<std::string>();
  }
  info.environment = r.Member(run, "run", "environment");
  info.planned_tasks = r.Int(run, "run", "planned_tasks");

  const json& suite = r.Object(doc, "", "suite");
  info.suite_name = r.Text(suite, "suite", "name");
  info.suite_spec = r.Text(suite, "suite", "spec");
  info.suite_format = r.Text(suite, "suite", "format");
  info.suite_repo = r.Text(suite, "suite", "repo");
  info.suite_path = r.Text(suite, "suite", "path");
  info.suite_commit = r.Text(suite, "suite", "commit");
  info.suite_tree = r.Text(suite, "suite", "tree");
  r.Bool(suite, "suite", "pinned");
  const json& weights = r.Object(suite, "suite", "dimension_weights");
  for (const auto& [k, v] : weights.items()) {
    if (!v.is_number()) r.Fail("suite.dimension_weights." + k, "expected a number");
    info.dimension_weights[k] = v.get<double>();
  }
  const json& planned = r.Array(suite, "suite", "tasks");
  for (size_t i = 0; i < planned.size(); ++i) {
    const std::string where = "suite.tasks[" + std::to_string(i) + "]";
    PlannedTask p{r.Text(planned[i], where, "id"), r.Text(planned[i], where, "hash")};
    const json& data = r.Member(planned[i], where, "task");
    if (!data.is_null() && !data.is_object()) r.Fail(where + ".task", "expected an object or null");
    bundle.plan.push_back(std::move(p));
  }

  const json& tasks = r.Array(doc, "", "tasks");
  bundle.run.tasks.reserve(tasks.size());
  for (size_t i = 0; i < tasks.size(); ++i) {
    bundle.run.tasks.push_back(ReadTask(r, tasks[i], "tasks[" + std::to_string(i) + "]", info.endpoint));
  }
  bundle.run.speed = r.Member(doc, "", "speed");
  if (!bundle.run.speed.is_null() && !bundle.run.speed.is_object()) {
    r.Fail("speed", "expected an object or null");
  }
  r.Object(doc, "", "summary");
  const json& events = r.Array(doc, "", "events");
  for (size_t i = 0; i < events.size(); ++i) {
    const std::string where = "events[" + std::to_string(i) + "]";
    bundle.run.events.push_back({r.Text(events[i], where, "at"), r.Text(events[i], where, "kind"),
                                 r.Text(events[i], where, "message")});
  }
  return bundle;
}


}  // namespace evalrun
