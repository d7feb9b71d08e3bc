#pragma once
// `evalrun compare A B` (issue 7 item 4): how run B differs from run A, with honest statistics.
// Score differences with paired bootstrap intervals over the tasks both runs share, McNemar's
// exact test on pass/fail, speed ratios with bootstrap intervals, and a plain list of what
// differs in setup. docs/report.md ("Comparing two runs") gives every method.
//
// Everything here is pure and deterministic: the same two runs and the same seed give the same
// figures, bit for bit, on every platform (the random numbers come from SplitMix64, not from
// the standard library's distributions, whose output is implementation-defined).
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/run_data.h"

namespace evalrun {

inline constexpr int kCompareSchemaVersion = 1;
inline constexpr int kCompareResamples = 2000;      // bootstrap resamples of every interval
inline constexpr uint64_t kCompareDefaultSeed = 7;  // `evalrun compare --seed` overrides it

// A two-sided 95% percentile interval (2.5th and 97.5th percentiles of the bootstrap replicates).
struct CompareInterval {
  double low = 0;
  double high = 0;
};

// B − A in score points (0-100) over the shared tasks, for one dimension or the overall.
struct ScoreDifference {
  std::string dimension;        // "" for the overall
  bool has_difference = false;  // both runs have a score here over the shared tasks
  double score_a = 0;           // ScoreRun of A restricted to the shared tasks
  double score_b = 0;
  double difference = 0;  // score_b - score_a
  CompareInterval ci95;   // paired bootstrap, percentile
  int64_t shared_tasks = 0;
  int64_t items = 0;      // resampling units: a task, or one group of migrated instances
  int64_t resamples = 0;  // replicates in which both runs had a score (of kCompareResamples)
};

// McNemar's test on the shared tasks' grade.passed: only the discordant tasks count.
struct McNemarTest {
  int64_t both_passed = 0;
  int64_t a_only = 0;  // b: A passed, B did not
  int64_t b_only = 0;  // c: B passed, A did not
  int64_t neither = 0;
  double p_value = 1;  // exact two-sided binomial (McNemarExactP)
};

// B / A of a speed figure.
struct SpeedRatio {
  std::string source;         // "tasks" (per-task figures) or the speed-protocol test's name
  std::string figure;         // "decode_tps", "ttft_ms", "prefill_tps", "aggregate_tps"
  bool has_ratio = false;     // both medians exist and A's is positive
  bool has_interval = false;  // enough samples to resample (2 or more on each side)
  double median_a = 0;
  double median_b = 0;
  double ratio = 0;  // median_b / median_a
  CompareInterval ci95;
  int64_t count_a = 0;  // samples (tasks: the pairs, equal on both sides)
  int64_t count_b = 0;
};

// One aspect of the setup whose value differs.
struct SetupDifference {
  std::string aspect;  // "model", "server build", "label quant", "setting concurrency", ...
  std::string a;       // as display text; "(none)" when the run does not have it
  std::string b;
};

// A task of either run that is not shared, and why.
struct UnsharedTask {
  std::string task_id;
  std::string
      reason;  // "only in A", "only in B", "task hash differs", "not scored in A (env_error)"...
};

struct Comparison {
  int schema_version = kCompareSchemaVersion;
  uint64_t seed = kCompareDefaultSeed;
  int resamples = kCompareResamples;
  std::string run_a;  // run ids
  std::string run_b;
  std::string label_a;  // "model · suite" for display
  std::string label_b;

  int64_t tasks_a = 0;  // finished tasks of each run
  int64_t tasks_b = 0;
  int64_t shared_tasks = 0;            // same id, same task hash, scored in both (docs/report.md)
  std::vector<UnsharedTask> unshared;  // by task id
  int64_t hash_differs = 0;            // of unshared: same id, different task hash

  ScoreDifference overall;
  std::vector<ScoreDifference> dimensions;  // by name
  McNemarTest mcnemar;
  std::vector<SpeedRatio> speed;       // per-task figures first, then the speed protocol's tests
  std::vector<SetupDifference> setup;  // empty: the setups are the same as far as recorded
};

// Compares B against A. Pure and deterministic for a given seed; never throws. With no shared
// task, `shared_tasks` is 0 and no score difference has a value (the command refuses that case).
Comparison CompareRuns(const RunData& a, const RunData& b, uint64_t seed = kCompareDefaultSeed);

// The exact two-sided p-value of McNemar's test for discordant counts b and c: under the null
// hypothesis b ~ Binomial(b + c, 1/2), p = min(1, 2 · P[X ≤ min(b, c)]); 1 when b + c = 0.
// Exact for every count (summed in log space), never the chi-square approximation.
double McNemarExactP(int64_t b, int64_t c);

// Markdown (plain text that reads well unrendered): setup differences, score differences with
// intervals, McNemar, speed ratios, unshared tasks, and a one-line note on the methods.
std::string RenderComparison(const Comparison& comparison);

// {"schema_version", "kind": "evalrun.compare", "seed", "resamples", "runs": {...},
// "shared_tasks", "overall": {...}, "dimensions": [...], "mcnemar": {...}, "speed": [...],
// "setup": [...], "unshared": [...]}.
nlohmann::json ComparisonToJson(const Comparison& comparison);

}  // namespace evalrun
