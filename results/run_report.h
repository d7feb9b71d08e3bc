#pragma once
// The report of one suite run (DESIGN.md section 11, issue 5 item 6): its figures as plain data
// (scores with 95% confidence intervals, coverage, tokens, speed across tasks) and three
// renderings of them: report.md for forum posts, report.html (one self-contained file, charts as
// inline SVG, nothing fetched) and card.svg (one picture to share). docs/report.md gives every
// formula. All functions but WriteReportFiles are pure, never throw on odd data (hostile or
// invalid UTF-8 text from a model or a server included), and take time linear in the run's size.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/stats.h"
#include "results/run_data.h"

namespace evalrun {

// The normal quantile of a two-sided 95% interval.
inline constexpr double kConfidenceZ95 = 1.959963984540054;

// A 95% confidence interval in score points, clipped to [0, 100].
struct ScoreInterval {
  double low = 0;
  double high = 0;
};

// One dimension's figures. "Scored" tasks are the graded ones and those counted as 0 (status
// no_answer, budget_exhausted, timeout, model_error); env_error and skipped tasks are left out of
// the score and counted in coverage.
struct DimensionScore {
  std::string dimension;
  double suite_weight = 0;    // RunInfo::dimension_weights (1 each when that map is empty; 0
                              // for a dimension the non-empty map does not name)
  double overall_weight = 0;  // its share of the overall score: suite_weight renormalised over
                              // the dimensions with a score (they sum to 1); 0 if it has none
  bool has_score = false;     // at least one item with positive weight; else score and ci95
                              // mean nothing
  double score = 0;           // weighted mean over items, 0-100
  double standard_error = 0;  // of score, in points (docs/report.md)
  ScoreInterval ci95;
  int64_t items = 0;           // scored items: a group of migrated instances counts once
  double effective_items = 0;  // Kish's effective number of items, (Σw)² / Σw²
  int64_t scored_tasks = 0;
  int64_t zero_tasks = 0;  // of scored_tasks, counted as 0 because of their status
  int64_t passed = 0;      // of scored_tasks, grade.passed
  int64_t skipped = 0;
  int64_t env_errors = 0;
  int64_t judged = 0;      // of scored_tasks, graded from an LLM judge's recorded verdict
};

struct ReasonCount {
  std::string reason;
  int64_t count = 0;
};

// What part of the plan has a result, and why the rest has none.
struct Coverage {
  int64_t planned = 0;   // RunInfo::planned_tasks
  int64_t finished = 0;  // tasks with a result, whatever its status
  int64_t run = 0;       // finished and not skipped: sent to the model
  int64_t scored = 0;    // counted in the score
  int64_t graded = 0;    // of scored, status graded
  int64_t zero = 0;      // of scored, counted as 0 because of their status
  int64_t skipped = 0;
  int64_t env_errors = 0;
  int64_t empty_output = 0;  // zx-bench runs: empty replies, left out as zx-bench does
  int64_t not_run = 0;                       // planned - finished, never negative
  std::map<std::string, int64_t> by_status;  // GradeStatusName -> finished tasks
  std::vector<ReasonCount> skipped_reasons;  // most frequent first, then by reason
  std::vector<ReasonCount> env_error_reasons;
};

// Tokens over every request of every finished task (failed and retried requests included: the
// server spent them). Completion tokens are split into reasoning and answer tokens.
struct TokenTotals {
  int64_t requests = 0;
  int64_t prompt = 0;  // usage.prompt_tokens, else what evalrun meant to send
  int64_t reasoning = 0;
  int64_t answer = 0;              // completion - reasoning
  int64_t estimated_requests = 0;  // requests whose split or completion count was estimated
                                   // (no usage.reasoning_tokens, or no usage at all)
};

// One successful request's prefill speed against the length of its prompt.
struct PrefillPoint {
  int64_t prompt_tokens = 0;
  double prefill_tps = 0;
};

// Speed across tasks, from the requests with outcome ok (core/metrics.h definitions). Each task
// contributes one sample per figure: the mean over its successful requests that have it.
struct TaskSpeed {
  Summary decode_tps;  // tokens/s
  Summary ttft_ms;
  Summary prefill_tps;                       // tokens/s
  std::vector<PrefillPoint> prefill_points;  // one per successful request, in task order
  int64_t ok_requests = 0;
  int64_t failed_requests = 0;
};

// zx-bench runs: whether the overall can be set beside zx-bench's own. It can when every
// dimension zx-bench weighs has a score and none of its entries was left out (skipped, or never
// run); entries zx-bench itself leaves out of official runs (status other than valid) and replies
// it leaves out (empty, environment errors) do not count.
struct Comparability {
  bool applies = false;   // a zx-bench suite
  bool complete = false;  // comparable with zx-bench's overall
  // "hallucination_resistance: no score (12 left out)", "program: 7 of 16 left out", ...
  std::vector<std::string> gaps;
  int64_t left_out = 0;  // entries left out in all
};

struct RunScores {
  std::vector<DimensionScore> dimensions;  // by suite weight (largest first), then by name
  bool has_score = false;                  // some dimension has a score with positive suite weight
  double overall = 0;                      // 0-100
  double overall_standard_error = 0;
  ScoreInterval overall_ci95;
  int64_t scored_tasks = 0;
  int64_t passed = 0;  // of scored_tasks
  Coverage coverage;
  Comparability comparability;
  TokenTotals tokens;
  TaskSpeed speed;
};

// The one line the report and the card give a zx-bench run's comparability: "comparable with
// zx-bench's overall: every dimension scored, no entry left out" or "partial, not zx-bench's
// overall: 19 entries left out (program: 7 of 16 left out; ...)"; "" for other suites.
std::string ComparabilityText(const Comparability& c);

// Every figure of the report. Deterministic: the same RunData gives the same numbers, bit for
// bit. Never throws.
RunScores ScoreRun(const RunData& run);

// report.md: header, overall score with its interval and coverage, per-dimension table, speed
// across tasks, the speed-protocol table (when run.speed is not null), tokens, skipped reasons,
// the event log.
// `result_hash` (all three renderings and WriteReportFiles): the bundle's result hash, shown
// at the end of the report and on the card; "" (a run not exported) shows "(not yet exported)".
std::string RenderRunMarkdown(const RunData& run, const std::string& result_hash = "");

// report.html: one self-contained file (no external resource; a Content-Security-Policy forbids
// any), inline SVG charts (class "chart"), every text HTML-escaped. Its one script sets
// document.body.dataset.charts to "<rendered>/<total>" charts once the page has loaded.
std::string RenderRunHtml(const RunData& run, const std::string& result_hash = "");

// card.svg: a standalone SVG picture summing up the run.
std::string RenderCardSvg(const RunData& run, const std::string& result_hash = "");

// The names WriteReportFiles writes, in this order.
inline constexpr const char* kReportFileNames[] = {"report.md", "report.html", "card.svg"};

// Writes report.md, report.html and card.svg into `dir`, creating it. Throws evalrun::Error
// naming the path when the folder cannot be created or a file cannot be written.
void WriteReportFiles(const RunData& run, const std::string& dir,
                      const std::string& result_hash = "");

}  // namespace evalrun
