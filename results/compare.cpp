#include "results/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/grade.h"
#include "core/metrics.h"
#include "core/stats.h"
#include "results/report_text.h"
#include "results/run_report.h"

// Scores are never computed here: every score, resampled or not, is ScoreRun's
// (results/run_report.h) on a RunData that holds the chosen tasks, so the status rules, weights,
// groups and dimension weights are exactly the report's. Numbers are formatted with fmt, which
// never consults the locale (STYLE.md 8).

namespace evalrun {
namespace {

using report_text::Child;
using report_text::CleanText;
using report_text::GpuCounts;
using report_text::Join;
using report_text::kAbsent;
using report_text::MdText;
using report_text::SuiteText;

using json = nlohmann::json;

constexpr size_t kUnsharedListed = 50;  // the markdown lists this many unshared tasks

// ---- random numbers ------------------------------------------------------------------------

// SplitMix64 (Steele, Lea and Flood 2014): tiny, fast, and the same sequence everywhere.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n) for n > 0, without modulo bias (rejection below 2^64 mod n).
  size_t Below(size_t n) {
    const uint64_t bound = static_cast<uint64_t>(n);
    const uint64_t limit = (0 - bound) % bound;
    for (;;) {
      const uint64_t r = Next();
      if (r >= limit) return static_cast<size_t>(r % bound);
    }
  }

 private:
  uint64_t state_;
};

// Each interval draws from its own stream, so adding a figure never moves another's interval.
SplitMix64 Stream(uint64_t seed, uint64_t stream) {
  SplitMix64 mix(seed ^ (0xD1B54A32D192ED03ULL * (stream + 1)));
  return SplitMix64(mix.Next());
}

CompareInterval PercentileInterval(std::vector<double> replicates) {
  std::sort(replicates.begin(), replicates.end());
  return {Percentile(replicates, 2.5), Percentile(replicates, 97.5)};
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return Percentile(values, 50);
}

// ---- text ----------------------------------------------------------------------------------


// Strings as they are, other values as compact JSON, absent or null as "".
std::string ValueText(const json* value) {
  if (value == nullptr || value->is_null()) return "";
  if (value->is_string()) return value->get<std::string>();
  return value->dump(-1, ' ', false, json::error_handler_t::replace);
}

// object[outer][inner] as ValueText.
std::string Nested(const json& object, std::string_view outer, std::string_view inner) {
  const json* parent = Child(object, outer);
  return parent == nullptr ? std::string() : ValueText(Child(*parent, inner));
}

// settings.shard as "1/3 of plan 3f2a9c01d4e5" or "merged 3 of plan 3f2a9c01d4e5"; "" for none.
std::string ShardText(const json* shard) {
  if (shard == nullptr || !shard->is_object()) return "";
  const std::string plan = " of plan " + ValueText(Child(*shard, "plan_hash")).substr(0, 12);
  if (Child(*shard, "merged") != nullptr) {
    return "merged " + ValueText(Child(*shard, "count")) + plan;
  }
  return ValueText(Child(*shard, "index")) + "/" + ValueText(Child(*shard, "count")) + plan;
}

std::string ModelName(const RunInfo& info) {
  if (!info.model.empty()) return info.model;
  return ValueText(Child(info.server, "model"));
}

// ---- setup ---------------------------------------------------------------------------------

// "2× NVIDIA GeForce RTX 3090" from the environment probe (plugins/env_probe.cpp): nvidia.gpus
// and rocm.gpus, counted by name in order of first appearance; "" when none was seen.
std::string GpuNames(const json& environment) {
  const std::vector<std::pair<std::string, int>> counts = GpuCounts(environment);
  std::vector<std::string> parts;
  for (const auto& [name, count] : counts) parts.push_back(fmt::format("{}× {}", count, name));
  return Join(parts, " + ");
}

// The GPUs' distinct driver versions, in order of first appearance.
std::string GpuDrivers(const json& environment) {
  std::vector<std::string> drivers;
  for (const char* vendor : {"nvidia", "rocm"}) {
    const json* probe = Child(environment, vendor);
    if (probe == nullptr) continue;
    std::vector<std::string> found;
    if (const json* gpus = Child(*probe, "gpus"); gpus != nullptr && gpus->is_array()) {
      for (const json& gpu : *gpus) found.push_back(ValueText(Child(gpu, "driver_version")));
    }
    found.push_back(ValueText(Child(*probe, "driver_version")));
    for (const std::string& driver : found) {
      if (!driver.empty() && std::find(drivers.begin(), drivers.end(), driver) == drivers.end()) {
        drivers.push_back(driver);
      }
    }
  }
  return Join(drivers, ", ");
}

std::string WeightsText(const std::map<std::string, double>& weights) {
  if (weights.empty()) return "equal";
  std::vector<std::string> parts;
  for (const auto& [dimension, weight] : weights) {
    parts.push_back(fmt::format("{} {}", dimension, weight));
  }
  return Join(parts, ", ");
}

std::string OrNone(std::string text) {
  return text.empty() ? std::string("(none)") : text;
}

std::vector<SetupDifference> SetupDifferences(const RunInfo& a, const RunInfo& b) {
  std::vector<SetupDifference> out;
  const auto add = [&out](std::string aspect, const std::string& x, const std::string& y) {
    if (x != y) out.push_back({std::move(aspect), OrNone(x), OrNone(y)});
  };
  add("model", ModelName(a), ModelName(b));
  add("server kind", ValueText(Child(a.server, "kind")), ValueText(Child(b.server, "kind")));
  add("server build", ValueText(Child(a.server, "build")), ValueText(Child(b.server, "build")));
  add("endpoint", a.endpoint, b.endpoint);
  add("suite", !a.suite_name.empty() ? a.suite_name : a.suite_spec,
      !b.suite_name.empty() ? b.suite_name : b.suite_spec);
  add("suite commit", a.suite_commit.empty() ? "unpinned" : a.suite_commit,
      b.suite_commit.empty() ? "unpinned" : b.suite_commit);
  add("suite format", a.suite_format, b.suite_format);
  add("dimension weights", WeightsText(a.dimension_weights), WeightsText(b.dimension_weights));
  add("GPUs", GpuNames(a.environment), GpuNames(b.environment));
  add("GPU driver", GpuDrivers(a.environment), GpuDrivers(b.environment));
  add("CUDA", Nested(a.environment, "nvidia", "cuda_version"),
      Nested(b.environment, "nvidia", "cuda_version"));
  std::set<std::string> keys;
  for (const auto& [key, value] : a.labels) keys.insert(key);
  for (const auto& [key, value] : b.labels) keys.insert(key);
  for (const std::string& key : keys) {
    const auto x = a.labels.find(key);
    const auto y = b.labels.find(key);
    add("label " + key, x == a.labels.end() ? "" : x->second, y == b.labels.end() ? "" : y->second);
  }
  // Settings (runner/suite_run.cpp SettingsJson): each key whose value differs. The model and
  // the suite's commit and tree are reported above.
  keys.clear();
  for (const json* settings : {&a.settings, &b.settings}) {
    if (!settings->is_object()) continue;
    for (const auto& [key, value] : settings->items()) keys.insert(key);
  }
  for (const char* covered : {"model", "suite_commit", "suite_tree"}) keys.erase(covered);
  for (const std::string& key : keys) {
    if (key == "shard") {
      // The shard record holds the whole plan (core/shard.h): compared by shard and plan hash.
      add("shard", ShardText(Child(a.settings, key)), ShardText(Child(b.settings, key)));
      continue;
    }
    add("setting " + key, ValueText(Child(a.settings, key)), ValueText(Child(b.settings, key)));
  }
  add("evalrun version", a.evalrun_version, b.evalrun_version);
  return out;
}

// ---- shared tasks --------------------------------------------------------------------------

// What ScoreRun needs of a task, and nothing heavy (no requests, no text), so that thousands of
// resamples copy little. The output is kept only where dropping it would change the task's
// score (zx-bench leaves empty replies out; see Scorer::Light).
TaskResult ScoringCopy(const TaskResult& t, bool keep_output) {
  TaskResult s;
  s.task_id = t.task_id;
  s.dimension = t.dimension;
  s.weight = t.weight;
  s.group = t.group;
  s.grade.score = t.grade.score;
  s.grade.passed = t.grade.passed;
  s.grade.status = t.grade.status;
  s.finish_reason = t.finish_reason;
  if (keep_output) s.output = t.output;
  return s;
}

// ScoreRun on chosen tasks of one run: the run's info (dimension weights, suite format) with a
// task list that is refilled for every resample.
class Scorer {
 public:
  explicit Scorer(const RunInfo& info) { run_.info = info; }

  std::vector<TaskResult>& tasks() { return run_.tasks; }
  RunScores Score() const { return ScoreRun(run_); }

  // Whether ScoreRun counts `task` in the score, and with what score.
  std::pair<bool, double> Outcome(const TaskResult& task) {
    run_.tasks.assign(1, task);
    const RunScores s = ScoreRun(run_);
    return {s.scored_tasks == 1, s.has_score ? s.overall : 0};
  }

  // A light copy of `task` that ScoreRun treats exactly as the task itself.
  TaskResult Light(const TaskResult& task) {
    TaskResult light = ScoringCopy(task, false);
    if (Outcome(light) != Outcome(task)) light = ScoringCopy(task, true);
    return light;
  }

 private:
  RunData run_;
};

const char* kDifferentHash = "task hash differs";

std::string StatusText(const TaskResult& task) {
  return GradeStatusName(task.grade.status);
}

struct SharedTask {
  TaskResult a;  // light copies (Scorer::Light)
  TaskResult b;
  std::string unit;  // the resampling unit within the dimension: the group, or the task itself
};

// One dimension's resampling units, each a list of indices into the shared tasks.
struct Stratum {
  std::string dimension;
  std::vector<std::vector<size_t>> units;
};

const DimensionScore* FindDimension(const RunScores& s, const std::string& name) {
  for (const DimensionScore& d : s.dimensions) {
    if (d.dimension == name) return &d;
  }
  return nullptr;
}

// The differences of one resample (or of the shared tasks themselves): per stratum, then the
// overall last; empty when either side has no score there.
std::vector<std::optional<double>> Differences(const RunScores& a, const RunScores& b,
                                               const std::vector<Stratum>& strata) {
  std::vector<std::optional<double>> out;
  out.reserve(strata.size() + 1);
  for (const Stratum& stratum : strata) {
    const DimensionScore* x = FindDimension(a, stratum.dimension);
    const DimensionScore* y = FindDimension(b, stratum.dimension);
    if (x != nullptr && y != nullptr && x->has_score && y->has_score) {
      out.emplace_back(y->score - x->score);
    } else {
      out.emplace_back();
    }
  }
  if (a.has_score && b.has_score) {
    out.emplace_back(b.overall - a.overall);
  } else {
    out.emplace_back();
  }
  return out;
}

void ComparePass(const std::vector<SharedTask>& shared, McNemarTest& m) {
  for (const SharedTask& task : shared) {
    const bool x = task.a.grade.passed;
    const bool y = task.b.grade.passed;
    if (x && y) ++m.both_passed;
    if (x && !y) ++m.a_only;
    if (!x && y) ++m.b_only;
    if (!x && !y) ++m.neither;
  }
  m.p_value = McNemarExactP(m.a_only, m.b_only);
}

void CompareScores(const RunData& a, const RunData& b, uint64_t seed, Comparison& out) {
  Scorer score_a(a.info);
  Scorer score_b(b.info);

  std::map<std::string, const TaskResult*> by_id_b;
  for (const TaskResult& task : b.tasks) by_id_b.emplace(task.task_id, &task);
  std::map<std::string, const TaskResult*> by_id_a;
  for (const TaskResult& task : a.tasks) by_id_a.emplace(task.task_id, &task);

  // Shared tasks in (dimension, unit, task id) order: the finish order of a run (which
  // concurrency shuffles) never changes the draws.
  std::vector<SharedTask> shared;
  for (const auto& [id, ta] : by_id_a) {
    const auto it = by_id_b.find(id);
    if (it == by_id_b.end()) {
      out.unshared.push_back({id, "only in A"});
      continue;
    }
    const TaskResult* tb = it->second;
    if (ta->task_hash != tb->task_hash) {
      out.unshared.push_back({id, kDifferentHash});
      ++out.hash_differs;
      continue;
    }
    const bool scored_a = score_a.Outcome(*ta).first;
    const bool scored_b = score_b.Outcome(*tb).first;
    if (!scored_a || !scored_b) {
      std::vector<std::string> why;
      if (!scored_a) why.push_back("not scored in A (" + StatusText(*ta) + ")");
      if (!scored_b) why.push_back("not scored in B (" + StatusText(*tb) + ")");
      out.unshared.push_back({id, Join(why, ", ")});
      continue;
    }
    shared.push_back(
        {score_a.Light(*ta), score_b.Light(*tb), ta->group.empty() ? "\x1e" + id : ta->group});
  }
  for (const auto& [id, tb] : by_id_b) {
    if (by_id_a.count(id) == 0) out.unshared.push_back({id, "only in B"});
  }
  std::sort(out.unshared.begin(), out.unshared.end(),
            [](const UnsharedTask& x, const UnsharedTask& y) { return x.task_id < y.task_id; });
  std::stable_sort(shared.begin(), shared.end(), [](const SharedTask& x, const SharedTask& y) {
    return std::tie(x.a.dimension, x.unit) < std::tie(y.a.dimension, y.unit);
  });
  out.shared_tasks = static_cast<int64_t>(shared.size());
  ComparePass(shared, out.mcnemar);

  std::vector<Stratum> strata;
  std::map<std::string, int64_t> shared_by_dimension;
  for (size_t i = 0; i < shared.size(); ++i) {
    const SharedTask& task = shared[i];
    ++shared_by_dimension[task.a.dimension];
    if (strata.empty() || strata.back().dimension != task.a.dimension) {
      strata.push_back({task.a.dimension, {}});
    }
    auto& units = strata.back().units;
    if (units.empty() || shared[units.back().front()].unit != task.unit) units.emplace_back();
    units.back().push_back(i);
  }

  // The point estimates: both runs scored on the shared tasks alone.
  score_a.tasks().clear();
  score_b.tasks().clear();
  for (const SharedTask& task : shared) {
    score_a.tasks().push_back(task.a);
    score_b.tasks().push_back(task.b);
  }
  const RunScores point_a = score_a.Score();
  const RunScores point_b = score_b.Score();
  const std::vector<std::optional<double>> point = Differences(point_a, point_b, strata);

  // The paired bootstrap, stratified by dimension: each replicate draws, within every dimension,
  // as many units as it has, with replacement, and takes both runs' tasks of each drawn unit.
  // A group drawn k times counts as k items (its copies get distinct group names).
  std::vector<std::vector<double>> replicates(strata.size() + 1);
  SplitMix64 rng = Stream(seed, 0);
  std::vector<int> drawn(shared.size(), 0);
  for (int r = 0; r < out.resamples && !shared.empty(); ++r) {
    score_a.tasks().clear();
    score_b.tasks().clear();
    std::fill(drawn.begin(), drawn.end(), 0);
    for (const Stratum& stratum : strata) {
      for (size_t j = 0; j < stratum.units.size(); ++j) {
        const std::vector<size_t>& unit = stratum.units[rng.Below(stratum.units.size())];
        const int copy = drawn[unit.front()]++;
        for (const size_t index : unit) {
          score_a.tasks().push_back(shared[index].a);
          score_b.tasks().push_back(shared[index].b);
          if (copy > 0 && !shared[index].a.group.empty()) {
            const std::string suffix = fmt::format("\x1f{}", copy);
            score_a.tasks().back().group += suffix;
            score_b.tasks().back().group += suffix;
          }
        }
      }
    }
    const auto differences = Differences(score_a.Score(), score_b.Score(), strata);
    for (size_t k = 0; k < differences.size(); ++k) {
      if (differences[k]) replicates[k].push_back(*differences[k]);
    }
  }

  const auto fill = [&](ScoreDifference& d, const std::string& dimension, size_t k,
                        const DimensionScore* x, const DimensionScore* y) {
    d.dimension = dimension;
    d.has_difference = point[k].has_value();
    if (x != nullptr) d.score_a = x->score;
    if (y != nullptr) d.score_b = y->score;
    d.difference = point[k].value_or(0);
    d.resamples = static_cast<int64_t>(replicates[k].size());
    if (d.has_difference && !replicates[k].empty()) d.ci95 = PercentileInterval(replicates[k]);
  };
  for (size_t k = 0; k < strata.size(); ++k) {
    ScoreDifference d;
    fill(d, strata[k].dimension, k, FindDimension(point_a, strata[k].dimension),
         FindDimension(point_b, strata[k].dimension));
    d.shared_tasks = shared_by_dimension[strata[k].dimension];
    d.items = static_cast<int64_t>(strata[k].units.size());
    out.dimensions.push_back(std::move(d));
  }
  fill(out.overall, "", strata.size(), nullptr, nullptr);
  out.overall.score_a = point_a.overall;
  out.overall.score_b = point_b.overall;
  out.overall.shared_tasks = out.shared_tasks;
  for (const Stratum& stratum : strata) {
    out.overall.items += static_cast<int64_t>(stratum.units.size());
  }
}

// ---- speed ---------------------------------------------------------------------------------

struct TaskFigures {
  std::string task_hash;
  std::map<std::string, double> figures;  // decode_tps, ttft_ms, prefill_tps
};

// Per task, the mean over its successful requests of each figure (core/metrics.h), as the
// report's "speed across tasks" counts a task once.
std::map<std::string, TaskFigures> PerTaskSpeed(const RunData& run) {
  std::map<std::string, TaskFigures> out;
  for (const TaskResult& task : run.tasks) {
    std::map<std::string, std::pair<double, int64_t>> sums;
    for (const RequestRecord& request : task.requests) {
      if (!request.ok()) continue;
      const RequestMetrics m = ComputeMetrics(request);
      const std::pair<const char*, const std::optional<double>*> figures[] = {
          {"decode_tps", &m.decode_tps}, {"ttft_ms", &m.ttft_ms}, {"prefill_tps", &m.prefill_tps}};
      for (const auto& [name, value] : figures) {
        if (*value && std::isfinite(**value)) {
          sums[name].first += **value;
          ++sums[name].second;
        }
      }
    }
    TaskFigures& figures = out[task.task_id];
    figures.task_hash = task.task_hash;
    for (const auto& [name, sum] : sums) {
      figures.figures[name] = sum.first / static_cast<double>(sum.second);
    }
  }
  return out;
}

// Ratio of medians, paired: the tasks of the same id and hash that have the figure in both runs;
// each replicate resamples those pairs.
SpeedRatio PairedRatio(const std::map<std::string, TaskFigures>& a,
                       const std::map<std::string, TaskFigures>& b, const std::string& figure,
                       SplitMix64 rng, int resamples) {
  SpeedRatio r;
  r.source = "tasks";
  r.figure = figure;
  std::vector<double> xs, ys;
  for (const auto& [id, fa] : a) {
    const auto it = b.find(id);
    if (it == b.end() || it->second.task_hash != fa.task_hash) continue;
    const auto x = fa.figures.find(figure);
    const auto y = it->second.figures.find(figure);
    if (x == fa.figures.end() || y == it->second.figures.end()) continue;
    xs.push_back(x->second);
    ys.push_back(y->second);
  }
  r.count_a = r.count_b = static_cast<int64_t>(xs.size());
  if (xs.empty()) return r;
  r.median_a = Median(xs);
  r.median_b = Median(ys);
  r.has_ratio = r.median_a > 0;
  if (!r.has_ratio) return r;
  r.ratio = r.median_b / r.median_a;
  if (xs.size() < 2) return r;
  std::vector<double> replicates, rx(xs.size()), ry(ys.size());
  replicates.reserve(static_cast<size_t>(resamples));
  for (int i = 0; i < resamples; ++i) {
    for (size_t j = 0; j < xs.size(); ++j) {
      const size_t pick = rng.Below(xs.size());
      rx[j] = xs[pick];
      ry[j] = ys[pick];
    }
    const double mx = Median(rx);
    if (mx > 0) replicates.push_back(Median(ry) / mx);
  }
  r.has_interval = !replicates.empty();
  if (r.has_interval) r.ci95 = PercentileInterval(std::move(replicates));
  return r;
}

std::vector<double> Samples(const json& summary) {
  std::vector<double> out;
  const json* samples = Child(summary, "samples");
  if (samples == nullptr || !samples->is_array()) return out;
  for (const json& v : *samples) {
    if (v.is_number() && std::isfinite(v.get<double>())) out.push_back(v.get<double>());
  }
  return out;
}

// Ratio of the speed-protocol medians of one test's figure, with an unpaired bootstrap (each
// side's samples resampled on its own: the protocol's requests are not paired).
std::optional<SpeedRatio> ProtocolRatio(const json& test_a, const json& test_b,
                                        const std::string& figure, SplitMix64 rng, int resamples) {
  const json* metrics_a = Child(test_a, "metrics");
  const json* metrics_b = Child(test_b, "metrics");
  const json* x = metrics_a != nullptr ? Child(*metrics_a, figure) : nullptr;
  const json* y = metrics_b != nullptr ? Child(*metrics_b, figure) : nullptr;
  const json* mx = x != nullptr ? Child(*x, "median") : nullptr;
  const json* my = y != nullptr ? Child(*y, "median") : nullptr;
  if (mx == nullptr || my == nullptr || !mx->is_number() || !my->is_number()) return std::nullopt;
  SpeedRatio r;
  r.source = ValueText(Child(test_a, "name"));
  r.figure = figure;
  r.median_a = mx->get<double>();
  r.median_b = my->get<double>();
  const std::vector<double> xs = Samples(*x);
  const std::vector<double> ys = Samples(*y);
  r.count_a = static_cast<int64_t>(xs.size());
  r.count_b = static_cast<int64_t>(ys.size());
  r.has_ratio = r.median_a > 0 && std::isfinite(r.median_a) && std::isfinite(r.median_b);
  if (!r.has_ratio) return r;
  r.ratio = r.median_b / r.median_a;
  if (xs.size() < 2 || ys.size() < 2) return r;
  std::vector<double> replicates, rx(xs.size()), ry(ys.size());
  for (int i = 0; i < resamples; ++i) {
    for (double& v : rx) v = xs[rng.Below(xs.size())];
    for (double& v : ry) v = ys[rng.Below(ys.size())];
    const double median_x = Median(rx);
    if (median_x > 0) replicates.push_back(Median(ry) / median_x);
  }
  r.has_interval = !replicates.empty();
  if (r.has_interval) r.ci95 = PercentileInterval(std::move(replicates));
  return r;
}

constexpr const char* kTaskFigures[] = {"decode_tps", "ttft_ms", "prefill_tps"};
constexpr const char* kProtocolFigures[] = {"decode_tps", "prefill_tps", "ttft_ms",
                                            "aggregate_tps"};

void CompareSpeed(const RunData& a, const RunData& b, uint64_t seed, Comparison& out) {
  const auto speed_a = PerTaskSpeed(a);
  const auto speed_b = PerTaskSpeed(b);
  uint64_t stream = 1;
  for (const char* figure : kTaskFigures) {
    SpeedRatio r = PairedRatio(speed_a, speed_b, figure, Stream(seed, stream++), out.resamples);
    if (r.count_a > 0) out.speed.push_back(std::move(r));
  }
  const json* tests_a = Child(a.speed, "tests");
  const json* tests_b = Child(b.speed, "tests");
  if (tests_a == nullptr || tests_b == nullptr || !tests_a->is_array() || !tests_b->is_array()) {
    return;
  }
  for (const json& test_a : *tests_a) {
    const std::string name = ValueText(Child(test_a, "name"));
    if (name.empty()) continue;
    const auto it = std::find_if(tests_b->begin(), tests_b->end(), [&name](const json& t) {
      return ValueText(Child(t, "name")) == name;
    });
    if (it == tests_b->end()) continue;
    for (const char* figure : kProtocolFigures) {
      // The stream depends on the test and figure only, never on what else is compared.
      uint64_t key = 1469598103934665603ULL;
      for (const char c : name + "/" + figure)
        key = (key ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
      if (auto r = ProtocolRatio(test_a, *it, figure, Stream(seed, key), out.resamples)) {
        out.speed.push_back(std::move(*r));
      }
    }
  }
}

// ---- rendering -----------------------------------------------------------------------------

// Rounding noise of a difference that is zero (the same scores subtracted in another order)
// shows as 0, not as "-0.0".
double Tidy(double value) {
  return std::abs(value) < 1e-9 ? 0.0 : value;
}

std::string Signed(double value) {
  return fmt::format("{:+.1f}", Tidy(value));
}

std::string IntervalText(const CompareInterval& ci, int decimals, bool sign) {
  if (sign) {
    return fmt::format("{:+.{}f} … {:+.{}f}", Tidy(ci.low), decimals, Tidy(ci.high), decimals);
  }
  return fmt::format("{:.{}f} … {:.{}f}", ci.low, decimals, ci.high, decimals);
}

// What the interval says, in words.
std::string Verdict(const ScoreDifference& d) {
  if (!d.has_difference) return std::string(kAbsent);
  if (d.ci95.low > 0) return "B higher";
  if (d.ci95.high < 0) return "B lower";
  return "no clear difference";
}

std::vector<std::string> DifferenceCells(const std::string& name, const ScoreDifference& d) {
  if (!d.has_difference) {
    return {name,
            std::string(kAbsent),
            std::string(kAbsent),
            std::string(kAbsent),
            std::string(kAbsent),
            std::to_string(d.shared_tasks),
            std::string(kAbsent)};
  }
  return {name,
          fmt::format("{:.1f}", d.score_a),
          fmt::format("{:.1f}", d.score_b),
          Signed(d.difference),
          IntervalText(d.ci95, 1, true),
          std::to_string(d.shared_tasks),
          Verdict(d)};
}

// A markdown table; the columns in `text_columns` are aligned left, the numbers right.
std::string MdTable(const std::vector<std::string>& headers,
                    const std::vector<std::vector<std::string>>& rows,
                    const std::set<size_t>& text_columns) {
  std::string out = "| " + Join(headers, " | ") + " |\n|";
  for (size_t i = 0; i < headers.size(); ++i) {
    out += text_columns.count(i) != 0 ? " --- |" : " ---: |";
  }
  out += "\n";
  for (const auto& row : rows) out += "| " + Join(row, " | ") + " |\n";
  return out;
}

std::string FigureName(const std::string& figure) {
  if (figure == "decode_tps") return "decode tokens/s";
  if (figure == "prefill_tps") return "prefill tokens/s";
  if (figure == "ttft_ms") return "TTFT ms";
  if (figure == "aggregate_tps") return "aggregate tokens/s";
  return figure;
}

json IntervalJson(const CompareInterval& ci) {
  return json::array({ci.low, ci.high});
}

json DifferenceJson(const ScoreDifference& d) {
  json j = {{"shared_tasks", d.shared_tasks}, {"items", d.items}, {"resamples", d.resamples}};
  if (!d.dimension.empty()) j["dimension"] = d.dimension;
  if (d.has_difference) {
    j["score_a"] = d.score_a;
    j["score_b"] = d.score_b;
    j["difference"] = d.difference;
    j["ci95"] = IntervalJson(d.ci95);
  } else {
    j["score_a"] = j["score_b"] = j["difference"] = j["ci95"] = nullptr;
  }
  return j;
}

}  // namespace

double McNemarExactP(int64_t b, int64_t c) {
  if (b < 0 || c < 0) return 1;
  const int64_t n = b + c;
  if (n == 0) return 1;
  const int64_t k = std::min(b, c);
  // P[X <= k] for X ~ Binomial(n, 1/2), each term exp(log C(n, i) - n log 2).
  const double log_total = static_cast<double>(n) * std::log(2.0);
  const double log_n = std::lgamma(static_cast<double>(n) + 1);
  double tail = 0;
  for (int64_t i = 0; i <= k; ++i) {
    const double log_choose = log_n - std::lgamma(static_cast<double>(i) + 1) -
                              std::lgamma(static_cast<double>(n - i) + 1);
    tail += std::exp(log_choose - log_total);
  }
  return std::min(1.0, 2 * tail);
}

Comparison CompareRuns(const RunData& a, const RunData& b, uint64_t seed) {
  Comparison out;
  out.seed = seed;
  out.run_a = a.info.id;
  out.run_b = b.info.id;
  const auto label = [](const RunInfo& info) {
    const std::string model = ModelName(info);
    return (model.empty() ? std::string("unknown model") : model) + " · " + SuiteText(info);
  };
  out.label_a = label(a.info);
  out.label_b = label(b.info);
  out.tasks_a = static_cast<int64_t>(a.tasks.size());
  out.tasks_b = static_cast<int64_t>(b.tasks.size());
  CompareScores(a, b, seed, out);
  CompareSpeed(a, b, seed, out);
  out.setup = SetupDifferences(a.info, b.info);
  return out;
}

std::string RenderComparison(const Comparison& c) {
  std::string out = "# evalrun compare\n\n";
  out += fmt::format("- A: run `{}` — {}\n", MdText(c.run_a), MdText(c.label_a));
  out += fmt::format("- B: run `{}` — {}\n\n", MdText(c.run_b), MdText(c.label_b));

  out += "## What differs in setup\n\n";
  if (c.setup.empty()) {
    out +=
        "Nothing recorded differs: same model, server, endpoint, suite, labels, GPUs and "
        "settings.\n\n";
  } else {
    for (const SetupDifference& d : c.setup) {
      out += fmt::format("- {}: A {} · B {}\n", MdText(d.aspect), MdText(d.a), MdText(d.b));
    }
    out += "\n";
  }

  out += fmt::format("## Scores: B − A over {} shared task{}\n\n", c.shared_tasks,
                     c.shared_tasks == 1 ? "" : "s");
  std::vector<std::vector<std::string>> rows;
  rows.push_back(DifferenceCells("**overall**", c.overall));
  for (const ScoreDifference& d : c.dimensions) {
    rows.push_back(
        DifferenceCells(MdText(d.dimension.empty() ? "(no dimension)" : d.dimension), d));
  }
  out += MdTable({"", "A", "B", "B − A", "95% CI", "tasks", "verdict"}, rows, {0, 6}) + "\n";
  out += fmt::format(
      "Scores are 0–100, each run scored on the shared tasks only (tasks with the same id and "
      "task hash, scored in both runs). Intervals: paired bootstrap over the shared tasks, "
      "stratified by dimension, {} resamples, seed {}, 2.5th–97.5th percentiles.\n\n",
      c.resamples, c.seed);

  const McNemarTest& m = c.mcnemar;
  out += "## Pass/fail: McNemar's test\n\n";
  out += fmt::format(
      "Of {} shared tasks: both passed {}, A only {} (b), B only {} (c), neither {}. Exact "
      "two-sided p = {:.4g} (binomial, b + c = {}).\n\n",
      c.shared_tasks, m.both_passed, m.a_only, m.b_only, m.neither, m.p_value, m.a_only + m.b_only);

  out += "## Speed: B / A\n\n";
  if (c.speed.empty()) {
    out += "No speed figure is available in both runs.\n\n";
  } else {
    rows.clear();
    for (const SpeedRatio& r : c.speed) {
      rows.push_back({r.source == "tasks" ? std::string("per task") : MdText(r.source),
                      FigureName(r.figure), fmt::format("{:.1f}", r.median_a),
                      fmt::format("{:.1f}", r.median_b),
                      r.has_ratio ? fmt::format("{:.3f}", r.ratio) : std::string(kAbsent),
                      r.has_interval ? IntervalText(r.ci95, 3, false) : std::string(kAbsent),
                      r.source == "tasks" ? fmt::format("{} pairs", r.count_a)
                                          : fmt::format("{} / {}", r.count_a, r.count_b)});
    }
    out += MdTable({"source", "figure", "A median", "B median", "B / A", "95% CI", "samples"}, rows,
                   {0, 1}) +
           "\n";
    out +=
        "Per task: each task's mean over its successful requests; the ratio of the medians "
        "over the tasks both runs have (paired bootstrap). Speed protocol: the tests' medians "
        "(bootstrap of each side's samples). For TTFT, below 1 means B is faster.\n\n";
  }

  if (!c.unshared.empty()) {
    out += fmt::format("## Tasks not shared ({}, {} with a different task hash)\n\n",
                       c.unshared.size(), c.hash_differs);
    for (size_t i = 0; i < c.unshared.size() && i < kUnsharedListed; ++i) {
      out += fmt::format("- {}: {}\n", MdText(c.unshared[i].task_id), MdText(c.unshared[i].reason));
    }
    if (c.unshared.size() > kUnsharedListed) {
      out += fmt::format("- … and {} more (-o json lists them all)\n",
                         c.unshared.size() - kUnsharedListed);
    }
    out += "\n";
  }
  return out;
}

json ComparisonToJson(const Comparison& c) {
  json dimensions = json::array();
  for (const ScoreDifference& d : c.dimensions) dimensions.push_back(DifferenceJson(d));
  json speed = json::array();
  for (const SpeedRatio& r : c.speed) {
    speed.push_back({{"source", r.source},
                     {"figure", r.figure},
                     {"median_a", r.median_a},
                     {"median_b", r.median_b},
                     {"ratio", r.has_ratio ? json(r.ratio) : json(nullptr)},
                     {"ci95", r.has_interval ? IntervalJson(r.ci95) : json(nullptr)},
                     {"count_a", r.count_a},
                     {"count_b", r.count_b}});
  }
  json setup = json::array();
  for (const SetupDifference& d : c.setup) {
    setup.push_back({{"aspect", d.aspect}, {"a", d.a}, {"b", d.b}});
  }
  json unshared = json::array();
  for (const UnsharedTask& t : c.unshared) {
    unshared.push_back({{"task_id", t.task_id}, {"reason", t.reason}});
  }
  const McNemarTest& m = c.mcnemar;
  return {{"schema_version", c.schema_version},
          {"kind", "evalrun.compare"},
          {"seed", c.seed},
          {"resamples", c.resamples},
          {"runs",
           {{"a", {{"id", c.run_a}, {"label", c.label_a}, {"tasks", c.tasks_a}}},
            {"b", {{"id", c.run_b}, {"label", c.label_b}, {"tasks", c.tasks_b}}}}},
          {"shared_tasks", c.shared_tasks},
          {"hash_differs", c.hash_differs},
          {"overall", DifferenceJson(c.overall)},
          {"dimensions", std::move(dimensions)},
          {"mcnemar",
           {{"both_passed", m.both_passed},
            {"a_only", m.a_only},
            {"b_only", m.b_only},
            {"neither", m.neither},
            {"p_value", m.p_value}}},
          {"speed", std::move(speed)},
          {"setup", std::move(setup)},
          {"unshared", std::move(unshared)}};
}

}  // namespace evalrun
