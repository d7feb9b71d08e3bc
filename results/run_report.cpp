// The run report (results/run_report.h): its figures computed from the stored run, and their
// renderings (report.md, report.html with inline SVG charts, card.svg).
//
// Why one file (1.3k lines): each section's Markdown and HTML printers sit side by side so the
// formats cannot drift apart; they escape with MarkupText below and report_text's MdText.
#include "results/run_report.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/grade.h"
#include "core/limits.h"
#include "core/metrics.h"
#include "core/sha256.h"
#include "core/terminal_text.h"
#include "results/report_text.h"

// Numbers go through fmt's "{:.Nf}", which never consults the locale (STYLE.md 8). Text from
// outside (model and GPU names, suite names, reasons, event messages: a model's output can reach
// any of them through a grader's reason) goes through exactly one escaping function per format:
// MdText for markdown, MarkupText for HTML and SVG.

namespace evalrun {
namespace {

using report_text::Child;
using report_text::CleanText;
using report_text::Fixed;
using report_text::GpuCounts;
using report_text::Join;
using report_text::JsonText;
using report_text::kAbsent;
using report_text::MdText;
using report_text::PrefillCell;
using report_text::SuiteText;

using json = nlohmann::json;

constexpr double kMaxScore = 100;

// ---- text ----------------------------------------------------------------------------------


// The one escaping function for HTML and SVG (text and attribute values alike).
std::string MarkupText(std::string_view raw) {
  const std::string text = CleanText(raw);
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}


// Code points in valid UTF-8.
size_t CodePoints(std::string_view text) {
  return static_cast<size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

// At most `limit` code points of clean text, with "…" when cut (pictures have fixed widths).
std::string Truncate(const std::string& text, size_t limit) {
  if (CodePoints(text) <= limit) return text;
  size_t seen = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80 && seen++ == limit - 1) {
      return text.substr(0, i) + "…";
    }
  }
  return text;
}

std::optional<double> JsonNumber(const json& object, std::string_view key) {
  const json* value = Child(object, key);
  if (value == nullptr || !value->is_number()) return std::nullopt;
  return value->get<double>();
}

std::string Percent(int64_t part, int64_t whole) {
  if (whole <= 0) return std::string(kAbsent);
  return fmt::format("{:.1f}%", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

std::string IntervalText(const ScoreInterval& ci) {
  return fmt::format("{:.1f}–{:.1f}", ci.low, ci.high);
}

std::string DimensionName(const std::string& dimension) {
  return dimension.empty() ? "(no dimension)" : dimension;
}

// ---- scoring -------------------------------------------------------------------------------

// Statuses that are the model's failure: a score of 0 whatever the grade says (zx-bench counts
// its hard time limit and reasoning-budget exhaustion as 0).
bool CountsAsZero(GradeStatus status) {
  return status == GradeStatus::kNoAnswer || status == GradeStatus::kBudgetExhausted ||
         status == GradeStatus::kTimeout || status == GradeStatus::kModelError;
}

// Statuses that say nothing about the model: left out of the score, shown in coverage.
bool LeftOut(GradeStatus status) {
  return status == GradeStatus::kEnvError || status == GradeStatus::kSkipped;
}

// zx-bench leaves empty output out of its dimension scores (packages/core/src/scoring.ts): in a
// zx-bench run, a reply with no text at all that was not cut by max_tokens (that one is
// reasoning-budget exhaustion, a 0) is left out too, and counted in coverage.
bool ZxEmptyOutput(const RunInfo& info, const TaskResult& task) {
  if (info.suite_format != "zxbench" || task.grade.status != GradeStatus::kNoAnswer) return false;
  if (task.finish_reason == "length") return false;
  return task.output.find_first_not_of(" \t\r\n") == std::string::npos;
}

double TaskScore(const Grade& grade) {
  if (CountsAsZero(grade.status) || !std::isfinite(grade.score)) return 0;
  return kMaxScore * std::clamp(grade.score, 0.0, 1.0);
}

double TaskWeight(const TaskResult& task) {
  return std::isfinite(task.weight) && task.weight > 0 ? task.weight : 0;
}

// One scored item: an ungrouped task, or the tasks of one group (their mean score and mean
// weight, as zx-bench averages migrated instances within their source question).
struct Item {
  double score_sum = 0;
  double weight_sum = 0;
  int64_t members = 0;
};

struct DimensionParts {
  DimensionScore figures;
  std::vector<Item> items;
  std::map<std::string, size_t> group_items;  // group -> index in items
};

// The weighted mean of the items with its standard error (docs/report.md):
//   m = Σwx / Σw;  n_eff = (Σw)² / Σw²  (Kish);
//   s² = Σw(x - m)² / (Σw - Σw²/Σw)  (the unbiased variance for reliability weights);
//   SE = sqrt(s² / n_eff).
// A single item has no spread to estimate: its SE is taken as 50, the largest a score in
// [0, 100] can have, so the interval says "anything".
void ScoreDimension(DimensionParts& parts) {
  DimensionScore& d = parts.figures;
  double v1 = 0, v2 = 0, sum = 0;
  int64_t positive = 0;
  for (const Item& item : parts.items) {
    const double w = item.weight_sum / static_cast<double>(item.members);
    if (w <= 0) continue;
    const double x = item.score_sum / static_cast<double>(item.members);
    v1 += w;
    v2 += w * w;
    sum += w * x;
    ++positive;
  }
  d.items = positive;
  if (positive == 0) return;
  d.has_score = true;
  d.score = sum / v1;
  d.effective_items = v1 * v1 / v2;
  if (positive == 1) {
    d.standard_error = kMaxScore / 2;
  } else {
    double squares = 0;
    for (const Item& item : parts.items) {
      const double w = item.weight_sum / static_cast<double>(item.members);
      if (w <= 0) continue;
      const double x = item.score_sum / static_cast<double>(item.members);
      squares += w * (x - d.score) * (x - d.score);
    }
    const double variance = squares / (v1 - v2 / v1);
    d.standard_error = std::sqrt(variance / d.effective_items);
  }
  d.ci95 = {std::max(0.0, d.score - kConfidenceZ95 * d.standard_error),
            std::min(kMaxScore, d.score + kConfidenceZ95 * d.standard_error)};
}

double SuiteWeight(const RunInfo& info, const std::string& dimension) {
  if (info.dimension_weights.empty()) return 1;
  const auto it = info.dimension_weights.find(dimension);
  if (it == info.dimension_weights.end()) return 0;
  return std::isfinite(it->second) && it->second > 0 ? it->second : 0;
}

std::vector<ReasonCount> SortedReasons(const std::map<std::string, int64_t>& counts) {
  std::vector<ReasonCount> out;
  out.reserve(counts.size());
  for (const auto& [reason, count] : counts) out.push_back({reason, count});
  std::stable_sort(out.begin(), out.end(),
                   [](const ReasonCount& a, const ReasonCount& b) { return a.count > b.count; });
  return out;
}

// Splits one request's completion tokens into reasoning and answer tokens: the server's
// usage.reasoning_tokens when it sent them; otherwise in proportion to the bytes of the request's
// reasoning and answer text (exact when only one of them carried text, estimated when both
// did); a request stored without its text is split by the task's reasoning and output
// (estimated).
void AddTokens(const RequestRecord& r, const RequestMetrics& m, const TaskResult& task,
               TokenTotals& tokens) {
  ++tokens.requests;
  if (m.prompt_tokens > 0) tokens.prompt = limits::SaturatingAdd(tokens.prompt, m.prompt_tokens);
  const int64_t completion = std::max<int64_t>(0, m.completion_tokens);
  bool estimated = m.tokens_estimated;
  const bool has_text = !r.reasoning.empty() || !r.content.empty();
  const size_t reasoning_bytes = has_text ? r.reasoning.size() : task.reasoning.size();
  const size_t answer_bytes = has_text ? r.content.size() : task.output.size();
  int64_t reasoning = 0;
  if (r.usage_reported && r.usage.reasoning_tokens >= 0 && r.usage.completion_tokens >= 0) {
    reasoning = std::min(completion, r.usage.reasoning_tokens);
  } else if (reasoning_bytes > 0) {
    const double share =
        static_cast<double>(reasoning_bytes) / static_cast<double>(reasoning_bytes + answer_bytes);
    reasoning = std::llround(static_cast<double>(completion) * share);
    // Exact when the request itself carried reasoning only; a guess from the task's text or
    // from two channels otherwise.
    if (answer_bytes > 0 || !has_text) estimated = true;
  }
  tokens.reasoning = limits::SaturatingAdd(tokens.reasoning, reasoning);
  tokens.answer = limits::SaturatingAdd(tokens.answer, completion - reasoning);
  if (estimated) ++tokens.estimated_requests;
}

struct MeanOf {
  double sum = 0;
  int64_t count = 0;
  void Add(const std::optional<double>& value) {
    if (value && std::isfinite(*value)) {
      sum += *value;
      ++count;
    }
  }
  void AppendTo(std::vector<double>& samples) const {
    if (count > 0) samples.push_back(sum / static_cast<double>(count));
  }
};

// ---- what the run ran on -------------------------------------------------------------------

std::string ModelName(const RunData& run) {
  // The server's words (or a bundle's): escaped before any terminal or report shows them.
  if (!run.info.model.empty()) return TerminalText(run.info.model);
  if (std::string model = JsonText(run.info.server, "model"); !model.empty()) {
    return TerminalText(model);
  }
  return "unknown model";
}

// "llama.cpp b6000", "" when the server said nothing.
// A run over several endpoints (docs/serving.md): "http://a:8080 (concurrency 2), http://b:8080
// (concurrency 1)" from run.server.endpoints; "" for a run over one endpoint.
std::string EndpointsText(const RunInfo& info) {
  const json* endpoints = info.server.is_object() && info.server.contains("endpoints")
                              ? &info.server["endpoints"]
                              : nullptr;
  if (endpoints == nullptr || !endpoints->is_array() || endpoints->size() < 2) return "";
  std::vector<std::string> parts;
  for (const json& e : *endpoints) {
    std::string text = JsonText(e, "endpoint");
    if (e.is_object() && e.contains("concurrency") && e["concurrency"].is_number_integer()) {
      text += fmt::format(" (concurrency {})", e["concurrency"].get<int64_t>());
    }
    parts.push_back(text);
  }
  return Join(parts, ", ");
}

// How the endpoints of a run under --allow-mixed-endpoints differ ("" when they did not).
std::string MixedText(const RunInfo& info) {
  const json* mixed = info.server.is_object() && info.server.contains("mixed_endpoints")
                          ? &info.server["mixed_endpoints"]
                          : nullptr;
  if (mixed == nullptr || !mixed->is_array() || mixed->empty()) return "";
  std::vector<std::string> parts;
  for (const json& m : *mixed) {
    if (m.is_string()) parts.push_back(m.get<std::string>());
  }
  return "the endpoints do not serve the same model (run with --allow-mixed-endpoints): " +
         Join(parts, "; ") + ". Each task's grade depends on where it went";
}

// The speed protocol's results: the run's, then the other endpoints' (speed.other_endpoints).
std::vector<const json*> SpeedResults(const json& speed) {
  std::vector<const json*> out;
  if (!speed.is_object()) return out;
  out.push_back(&speed);
  if (speed.contains("other_endpoints") && speed["other_endpoints"].is_array()) {
    for (const json& other : speed["other_endpoints"]) {
      if (other.is_object()) out.push_back(&other);
    }
  }
  return out;
}

std::string ServerText(const RunData& run) {
  std::vector<std::string> parts;
  for (const char* key : {"kind", "build"}) {
    if (std::string text = JsonText(run.info.server, key); !text.empty()) parts.push_back(text);
  }
  return Join(parts, " ");
}

// "shard 1/3 of a 12-task plan (plan 3f2a9c01d4e5)" for a shard's run (suite --shard I/N),
// "merged from 3 shards of a 12-task plan (plan 3f2a9c01d4e5)" for a merged bundle
// (evalrun merge), "" otherwise (settings.shard, core/shard.h).
std::string ShardLine(const RunInfo& info) {
  const json* shard = Child(info.settings, "shard");
  if (shard == nullptr || !shard->is_object()) return "";
  const std::string plan = JsonText(*shard, "plan_hash").substr(0, 12);
  const std::optional<double> count = JsonNumber(*shard, "count");
  if (!count) return "";
  if (const json* merged = Child(*shard, "merged"); merged != nullptr && merged->is_boolean()) {
    return fmt::format("merged from {:.0f} shards of a {}-task plan (plan {})", *count,
                       info.planned_tasks, plan);
  }
  const std::optional<double> index = JsonNumber(*shard, "index");
  const json* planned = Child(*shard, "plan");
  return fmt::format("shard {:.0f}/{:.0f} of a {}-task plan (plan {})", index.value_or(0), *count,
                     planned != nullptr && planned->is_array() ? planned->size() : 0, plan);
}

// "2× NVIDIA GeForce RTX 3090 (client host)": the environment probe's GPUs counted by name in
// order of first appearance. They are the client host's, the server's only when it is local.
std::string GpuText(const json& environment) {
  const std::vector<std::pair<std::string, int>> counts = GpuCounts(environment);
  std::vector<std::string> parts;
  for (const auto& [name, count] : counts) parts.push_back(fmt::format("{}× {}", count, name));
  std::string scope = JsonText(environment, "scope");
  if (scope.empty()) scope = "client host";
  return (parts.empty() ? std::string("no GPU seen") : Join(parts, " + ")) + " (" + scope + ")";
}

std::string CoverageText(const Coverage& c) {
  std::vector<std::string> parts;
  parts.push_back(fmt::format("{} scored of {} planned", c.scored, c.planned));
  parts.push_back(fmt::format("{} skipped", c.skipped));
  parts.push_back(fmt::format("{} env error{}", c.env_errors, c.env_errors == 1 ? "" : "s"));
  if (c.empty_output > 0) {
    parts.push_back(fmt::format("{} empty (left out, as zx-bench does)", c.empty_output));
  }
  parts.push_back(fmt::format("{} not run", c.not_run));
  return Join(parts, " · ");
}

std::string ZeroText(const Coverage& c) {
  std::vector<std::string> parts;
  for (const GradeStatus status : {GradeStatus::kNoAnswer, GradeStatus::kBudgetExhausted,
                                   GradeStatus::kTimeout, GradeStatus::kModelError}) {
    const auto it = c.by_status.find(GradeStatusName(status));
    if (it != c.by_status.end() && it->second > 0) {
      parts.push_back(fmt::format("{} {}", GradeStatusName(status), it->second));
    }
  }
  return parts.empty() ? "none" : Join(parts, ", ");
}

std::string TokenNote(const TokenTotals& t) {
  if (t.estimated_requests == 0) return "as reported by the server";
  return fmt::format(
      "estimated for {} of {} requests (the server reported no reasoning_tokens or no usage: "
      "split by the length of the reasoning and answer text)",
      t.estimated_requests, t.requests);
}

// One line per speed-protocol test, from SpeedResultToJson's shape; medians of its summaries.
struct SpeedRow {
  std::string test, prompt, gen, concurrency, ttft_ms, queue_ms, prefill_tps, decode_tps,
      aggregate_tps, errors;
};

std::optional<double> MetricMedian(const json& test, std::string_view metric) {
  const json* metrics = Child(test, "metrics");
  const json* summary = metrics != nullptr ? Child(*metrics, metric) : nullptr;
  if (summary == nullptr) return std::nullopt;
  const std::optional<double> count = JsonNumber(*summary, "count");
  if (!count || *count <= 0) return std::nullopt;
  return JsonNumber(*summary, "median");
}

std::vector<SpeedRow> SpeedRows(const json& speed) {
  std::vector<SpeedRow> rows;
  const json* tests = Child(speed, "tests");
  if (tests == nullptr || !tests->is_array()) return rows;
  for (const json& test : *tests) {
    SpeedRow row;
    row.test = JsonText(test, "name");
    const std::optional<double> prompt_tokens = JsonNumber(test, "prompt_tokens");
    row.prompt =
        prompt_tokens && *prompt_tokens > 0 ? Fixed(prompt_tokens, 0) : JsonText(test, "prompts");
    if (row.prompt.empty()) row.prompt = kAbsent;
    if (const std::optional<double> depth = JsonNumber(test, "depth_tokens"); depth && *depth > 0) {
      row.prompt += " @ d" + Fixed(depth, 0);
    }
    row.gen = Fixed(JsonNumber(test, "max_tokens"), 0);
    row.concurrency = Fixed(JsonNumber(test, "concurrency"), 0);
    row.ttft_ms = Fixed(MetricMedian(test, "ttft_ms"), 0);
    row.queue_ms = Fixed(MetricMedian(test, "queue_ms"), 0);
    const json* queued = Child(test, "ttft_includes_queue");
    row.prefill_tps = queued != nullptr && *queued == true
                          ? std::string("queued")
                          : PrefillCell(MetricMedian(test, "prefill_tps"),
                                        MetricMedian(test, "cached_tokens"),
                                        MetricMedian(test, "prompt_tokens"));
    row.decode_tps = Fixed(MetricMedian(test, "decode_tps"), 1);
    row.aggregate_tps = Fixed(MetricMedian(test, "aggregate_tps"), 1);
    row.errors =
        Fixed(JsonNumber(test, "errors"), 0) + " / " + Fixed(JsonNumber(test, "requests"), 0);
    rows.push_back(std::move(row));
  }
  return rows;
}

const std::vector<std::string> kSpeedHeaders = {
    "test",        "prompt",     "gen",           "conc",  "TTFT ms", "queue ms",
    "prefill t/s", "decode t/s", "aggregate t/s", "errors"};

std::vector<std::string> SpeedCells(const SpeedRow& r) {
  return {r.test,       r.prompt,     r.gen,        r.concurrency,   r.ttft_ms,
          r.queue_ms,   r.prefill_tps, r.decode_tps, r.aggregate_tps, r.errors};
}

// "Speed protocol (preset quick)", and " — ENDPOINT" after it for a run over several endpoints.
std::string SpeedTitle(const json& speed, bool several) {
  const std::string preset = JsonText(speed, "preset");
  std::string title = preset.empty() ? "Speed protocol" : "Speed protocol (preset " + preset + ")";
  if (several && !JsonText(speed, "endpoint").empty()) title += " — " + JsonText(speed, "endpoint");
  return title;
}

constexpr std::string_view kSpeedFootnote =
    "Medians over each test's successful requests. TTFT: first token, as the client saw it; "
    "queue: TTFT less the server's own prompt time (llama.cpp timings), the wait for a slot and "
    "the network; prefill: the prompt tokens the server processed (llama.cpp timings.prompt_n, "
    "else prompt − cached tokens) / TTFT, \"cached N of M\" where the prompt cache served "
    "most of the prompt, \"queued\" where more requests ran at once than the server has slots; "
    "decode: (completion − 1) / (t_last − t_first); aggregate: all streams "
    "of a round together.";

constexpr std::string_view kMethodNote =
    "Scores: per dimension, the weighted mean of task scores (difficulty × task weights; "
    "migrated instances averaged within their source question first); overall, the weighted "
    "mean of the dimensions. no_answer, budget_exhausted, timeout and model_error count as 0; "
    "env_error and skipped are left out and shown in coverage. 95% intervals: normal "
    "approximation with Kish's effective number of items, clipped to [0, 100] "
    "(docs/report.md).";

struct SpeedFigure {
  const char* label;
  const Summary TaskSpeed::*summary;
  int decimals;
};
constexpr std::array<SpeedFigure, 3> kTaskSpeedFigures = {{
    {"decode t/s", &TaskSpeed::decode_tps, 1},
    {"TTFT ms", &TaskSpeed::ttft_ms, 0},
    {"prefill t/s", &TaskSpeed::prefill_tps, 1},
}};

std::vector<std::string> SpeedFigureCells(const SpeedFigure& figure, const TaskSpeed& speed) {
  const Summary& s = speed.*figure.summary;
  if (s.count == 0) return {figure.label, "0", "—", "—", "—", "—", "—"};
  return {figure.label,
          std::to_string(s.count),
          Fixed(s.median, figure.decimals),
          Fixed(s.mean, figure.decimals),
          Fixed(s.p90, figure.decimals),
          Fixed(s.min, figure.decimals),
          Fixed(s.max, figure.decimals)};
}

const std::vector<std::string> kTaskSpeedHeaders = {"figure", "tasks", "median", "mean",
                                                    "p90",    "min",   "max"};

std::vector<std::string> DimensionCells(const DimensionScore& d) {
  return {
      DimensionName(d.dimension) + (d.judged > 0 ? " (judged)" : ""),
      d.overall_weight > 0 ? fmt::format("{:.1f}%", 100 * d.overall_weight) : std::string(kAbsent),
      d.has_score ? Fixed(d.score, 1) : std::string(kAbsent),
      d.has_score ? IntervalText(d.ci95) : std::string(kAbsent),
      std::to_string(d.items),
      fmt::format("{} ({}/{})", Percent(d.passed, d.scored_tasks), d.passed, d.scored_tasks),
      std::to_string(d.zero_tasks),
      std::to_string(d.skipped),
      std::to_string(d.env_errors)};
}

const std::vector<std::string> kDimensionHeaders = {"dimension", "weight",  "score",
                                                    "95% CI",    "items",   "pass rate",
                                                    "counted 0", "skipped", "env errors"};

const std::vector<std::string> kTokenHeaders = {"tokens", "total", "per task run"};

// Reasoning, answer and prompt tokens, in total and per task sent to the model.
std::vector<std::vector<std::string>> TokenRows(const RunScores& s) {
  const TokenTotals& t = s.tokens;
  auto per_task = [&s](int64_t total) {
    if (s.coverage.run <= 0) return std::string(kAbsent);
    return Fixed(static_cast<double>(total) / static_cast<double>(s.coverage.run), 0);
  };
  return {{"reasoning", std::to_string(t.reasoning), per_task(t.reasoning)},
          {"answer", std::to_string(t.answer), per_task(t.answer)},
          {"prompt", std::to_string(t.prompt), per_task(t.prompt)}};
}

// ---- markdown ------------------------------------------------------------------------------

// A GitHub-flavoured table; cells are raw text, escaped here. Columns are right-aligned numbers
// unless `text_columns` names them. Padded to one width in code points so the raw text reads as a
// table too.
std::string MdTable(const std::vector<std::string>& headers,
                    const std::vector<std::vector<std::string>>& rows,
                    const std::vector<size_t>& text_columns = {0}) {
  auto is_text = [&text_columns](size_t c) {
    return std::find(text_columns.begin(), text_columns.end(), c) != text_columns.end();
  };
  std::vector<std::vector<std::string>> cells;
  cells.reserve(rows.size() + 1);
  std::vector<size_t> widths(headers.size(), 3);
  auto add = [&](const std::vector<std::string>& row) {
    std::vector<std::string> escaped(headers.size());
    for (size_t c = 0; c < headers.size() && c < row.size(); ++c) {
      escaped[c] = MdText(row[c]);
      widths[c] = std::max(widths[c], CodePoints(escaped[c]));
    }
    cells.push_back(std::move(escaped));
  };
  add(headers);
  for (const auto& row : rows) add(row);
  auto line = [&](const std::vector<std::string>& row) {
    std::string out = "|";
    for (size_t c = 0; c < row.size(); ++c) {
      const std::string pad(widths[c] - CodePoints(row[c]), ' ');
      out += " " + (is_text(c) ? row[c] + pad : pad + row[c]) + " |";
    }
    return out + "\n";
  };
  std::string out = line(cells[0]);
  out += "|";
  for (size_t c = 0; c < widths.size(); ++c) {
    out += is_text(c) ? " " + std::string(widths[c], '-') + " |"
                      : " " + std::string(widths[c] - 1, '-') + ": |";
  }
  out += "\n";
  for (size_t r = 1; r < cells.size(); ++r) out += line(cells[r]);
  return out;
}

// "judge: MODEL at URL" for a run with an LLM judge (settings.judge), else "".
std::string JudgeText(const RunInfo& info) {
  const json& judge = info.settings.is_object() && info.settings.contains("judge")
                          ? info.settings["judge"]
                          : json();
  if (!judge.is_object()) return {};
  return "judge: " + judge.value("model", std::string(kAbsent)) + " at " +
         judge.value("endpoint", std::string(kAbsent)) +
         " (dimensions marked (judged) are scored from its recorded verdicts)";
}

std::string MdHeader(const RunData& run) {
  const RunInfo& info = run.info;
  std::string out = "# evalrun report — " + MdText(ModelName(run)) + "\n\n";
  std::vector<std::string> parts;
  parts.push_back("suite: " + MdText(SuiteText(info)));
  if (std::string server = ServerText(run); !server.empty()) {
    parts.push_back("server: " + MdText(server));
  }
  parts.push_back("GPUs: " + MdText(GpuText(info.environment)));
  if (std::string endpoints = EndpointsText(info); !endpoints.empty()) {
    parts.push_back("endpoints: " + MdText(endpoints));
  } else if (!info.endpoint.empty()) {
    parts.push_back("endpoint: " + MdText(info.endpoint));
  }
  if (std::string judge = JudgeText(info); !judge.empty()) parts.push_back(MdText(judge));
  out += Join(parts, " · ") + "\n\n";
  parts.clear();
  parts.push_back("run " + MdText(info.id.empty() ? std::string(kAbsent) : info.id) + " (" +
                  MdText(info.status) + ")");
  if (std::string shard = ShardLine(info); !shard.empty()) parts.push_back(MdText(shard));
  if (!info.created_at.empty()) parts.push_back("started " + MdText(info.created_at));
  if (!info.evalrun_version.empty()) parts.push_back("evalrun " + MdText(info.evalrun_version));
  if (!info.labels.empty()) {
    std::vector<std::string> labels;
    for (const auto& [key, value] : info.labels) labels.push_back(MdText(key + "=" + value));
    parts.push_back("labels: " + Join(labels, " "));
  }
  return out + Join(parts, " · ") + "\n\n";
}

std::string MdHeadline(const RunScores& s) {
  std::string out;
  if (s.has_score) {
    out = fmt::format("**Overall: {:.1f} / 100** (95% CI {})", s.overall,
                      IntervalText(s.overall_ci95));
  } else {
    out = "**Overall: no score** (no task was scored)";
  }
  out += " · coverage: " + CoverageText(s.coverage);
  out += fmt::format(" · pass rate {} ({}/{})", Percent(s.passed, s.scored_tasks), s.passed,
                     s.scored_tasks);
  out += "\n\n";
  if (s.comparability.applies) {
    out += "**zx-bench:** " + MdText(ComparabilityText(s.comparability)) + "\n\n";
  }
  return out;
}

std::string MdReasons(const std::string& title, const std::vector<ReasonCount>& reasons) {
  if (reasons.empty()) return "";
  std::string out = "### " + title + "\n\n";
  for (const auto& r : reasons) {
    out += fmt::format("- {} × {}\n", r.count,
                       MdText(r.reason.empty() ? "(no reason given)" : r.reason));
  }
  return out + "\n";
}

// ---- SVG charts ----------------------------------------------------------------------------

std::string Num(double value) {
  return fmt::format("{:.1f}", value);
}

// A step of 1, 2 or 5 × 10^k that cuts `span` into about `target` parts.
double NiceStep(double span, int target) {
  if (!(span > 0) || !std::isfinite(span)) return 1;
  const double raw = span / target;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double norm = raw / magnitude;
  const double nice = norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10;
  return nice * magnitude;
}

// A linear axis over [lo, hi] with ticks every `step`, both ends on ticks.
struct Axis {
  double lo = 0, hi = 1, step = 1;
  double At(double value, double from, double to) const {
    return from + (value - lo) / (hi - lo) * (to - from);
  }
};

Axis NiceAxis(double min, double max, int target, bool from_zero) {
  if (from_zero) min = std::min(0.0, min);
  if (!(max > min)) max = min + 1;
  Axis axis;
  axis.step = NiceStep(max - min, target);
  axis.lo = std::floor(min / axis.step) * axis.step;
  axis.hi = std::ceil(max / axis.step) * axis.step;
  if (axis.hi <= axis.lo) axis.hi = axis.lo + axis.step;
  return axis;
}

std::string TickLabel(double value, double step) {
  return step >= 1 ? fmt::format("{:.0f}", value)
                   : fmt::format("{:.{}f}", value, static_cast<int>(std::ceil(-std::log10(step))));
}

std::string SvgOpen(int width, int height, std::string_view label, bool standalone) {
  return fmt::format(
      R"(<svg {}class="chart" width="{}" height="{}" viewBox="0 0 {} {}" role="img" aria-label="{}" font-family="system-ui, sans-serif" font-size="12">)",
      standalone ? R"(xmlns="http://www.w3.org/2000/svg" )" : "", width, height, width, height,
      MarkupText(label));
}

std::string SvgText(double x, double y, std::string_view text, std::string_view attributes = "") {
  return fmt::format(R"(<text x="{}" y="{}"{}{}>{}</text>)", Num(x), Num(y),
                     attributes.empty() ? "" : " ", attributes, MarkupText(text));
}

std::string SvgLine(double x1, double y1, double x2, double y2, std::string_view attributes) {
  return fmt::format(R"(<line x1="{}" y1="{}" x2="{}" y2="{}" {}/>)", Num(x1), Num(y1), Num(x2),
                     Num(y2), attributes);
}

std::string SvgRect(double x, double y, double w, double h, std::string_view attributes) {
  return fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" {}/>)", Num(x), Num(y),
                     Num(std::max(0.0, w)), Num(std::max(0.0, h)), attributes);
}

constexpr std::string_view kBarFill = R"(fill="#4c78a8")";
constexpr std::string_view kOverallFill = R"(fill="#e45756")";
constexpr std::string_view kGrid = R"(stroke="#ddd" stroke-width="1")";
constexpr std::string_view kInk = R"(stroke="#222" stroke-width="1.5")";
constexpr std::string_view kMuted = R"(fill="#666")";

// Horizontal bars of the dimension scores on a 0-100 scale with their 95% whiskers, and the
// overall score last. Shared by the HTML chart and the card.
struct BarLayout {
  double x = 0, y = 0;  // top left
  double label_width = 190;
  double bar_width = 330;
  double row_height = 26;
  size_t label_chars = 28;
};

double BarsHeight(const RunScores& s, const BarLayout& layout) {
  return layout.row_height * static_cast<double>(s.dimensions.size() + 1) + 20;
}

std::string ScoreBars(const RunScores& s, const BarLayout& layout) {
  std::string out;
  const double x0 = layout.x + layout.label_width;
  const double rows = static_cast<double>(s.dimensions.size() + 1);
  const double bottom = layout.y + layout.row_height * rows;
  for (int tick = 0; tick <= 100; tick += 25) {
    const double x = x0 + layout.bar_width * tick / kMaxScore;
    out += SvgLine(x, layout.y, x, bottom, kGrid);
    out += SvgText(x, bottom + 14, std::to_string(tick), R"(text-anchor="middle" fill="#666")");
  }
  auto row = [&](size_t index, const std::string& label, bool has_score, double score,
                 const ScoreInterval& ci, std::string_view fill) {
    const double top = layout.y + layout.row_height * static_cast<double>(index);
    const double mid = top + layout.row_height / 2;
    out += SvgText(x0 - 8, mid + 4, Truncate(CleanText(label), layout.label_chars),
                   R"(text-anchor="end")");
    if (!has_score) {
      out += SvgText(x0 + 6, mid + 4, "no score", kMuted);
      return;
    }
    const double scale = layout.bar_width / kMaxScore;
    out += SvgRect(x0, top + 5, score * scale, layout.row_height - 10, fill);
    const double low = x0 + ci.low * scale, high = x0 + ci.high * scale;
    out += SvgLine(low, mid, high, mid, kInk);
    out += SvgLine(low, mid - 5, low, mid + 5, kInk);
    out += SvgLine(high, mid - 5, high, mid + 5, kInk);
    out += SvgText(x0 + layout.bar_width + 8, mid + 4,
                   fmt::format("{:.1f}  [{}]", score, IntervalText(ci)));
  };
  for (size_t i = 0; i < s.dimensions.size(); ++i) {
    const DimensionScore& d = s.dimensions[i];
    row(i, DimensionName(d.dimension), d.has_score, d.score, d.ci95, kBarFill);
  }
  row(s.dimensions.size(), "overall", s.has_score, s.overall, s.overall_ci95, kOverallFill);
  return out;
}

std::string ScoreChart(const RunScores& s) {
  const BarLayout layout{.x = 0, .y = 30};
  const int width = 720;
  const int height = static_cast<int>(layout.y + BarsHeight(s, layout));
  std::string out =
      SvgOpen(width, height, "scores by dimension with 95% confidence intervals", false);
  out += SvgText(0, 16, "Score by dimension (0–100), whiskers: 95% confidence interval",
                 R"(font-weight="bold")");
  out += ScoreBars(s, layout);
  return out + "</svg>";
}

constexpr int kPlotWidth = 720;
constexpr double kPlotLeft = 60, kPlotRight = 700, kPlotTop = 34;

// Tick marks and labels of both axes and the plot frame, for plots with bottom edge `bottom`.
std::string Axes(const Axis& x, const Axis& y, double bottom, std::string_view x_label,
                 std::string_view y_label) {
  std::string out;
  // Bounded: with absurd figures, lo + step can round back to lo.
  int ticks = 0;
  for (double v = y.lo; v <= y.hi + y.step / 2 && ++ticks <= 50; v += y.step) {
    const double py = y.At(v, bottom, kPlotTop);
    out += SvgLine(kPlotLeft, py, kPlotRight, py, kGrid);
    out += SvgText(kPlotLeft - 6, py + 4, TickLabel(v, y.step), R"(text-anchor="end" fill="#666")");
  }
  ticks = 0;
  for (double v = x.lo; v <= x.hi + x.step / 2 && ++ticks <= 50; v += x.step) {
    const double px = x.At(v, kPlotLeft, kPlotRight);
    out += SvgLine(px, bottom, px, bottom + 4, R"(stroke="#666")");
    out += SvgText(px, bottom + 17, TickLabel(v, x.step), R"(text-anchor="middle" fill="#666")");
  }
  out += SvgLine(kPlotLeft, bottom, kPlotRight, bottom, R"(stroke="#666")");
  out += SvgText((kPlotLeft + kPlotRight) / 2, bottom + 34, x_label, R"(text-anchor="middle")");
  out += SvgText(14, (kPlotTop + bottom) / 2, y_label,
                 fmt::format(R"svg(text-anchor="middle" transform="rotate(-90 14 {})")svg",
                             Num((kPlotTop + bottom) / 2)));
  return out;
}

// A histogram of one figure across tasks, with its median marked. Bins line up with the axis
// ticks; their number follows Sturges' rule (log2 n + 1).
std::string Histogram(const Summary& s, std::string_view title, std::string_view unit) {
  const int height = 260;
  const double bottom = height - 48;
  std::string out = SvgOpen(kPlotWidth, height, title, false);
  out += SvgText(0, 16, fmt::format("{} (n = {})", title, s.count), R"(font-weight="bold")");
  if (s.count == 0) {
    out += SvgRect(kPlotLeft, kPlotTop, kPlotRight - kPlotLeft, bottom - kPlotTop,
                   R"(fill="none" stroke="#ddd")");
    out += SvgText((kPlotLeft + kPlotRight) / 2, (kPlotTop + bottom) / 2,
                   "no successful request measured this", R"(text-anchor="middle" fill="#666")");
    return out + "</svg>";
  }
  const Axis x = NiceAxis(s.min, s.max, 6, false);
  const double steps = std::round((x.hi - x.lo) / x.step);
  const double wanted = std::ceil(std::log2(static_cast<double>(s.count))) + 1;
  const double per_step = std::max(1.0, std::round(wanted / steps));
  // Figures from a stranger's bundle may be absurd (1e23 t/s): where the axis's range is lost to
  // rounding, the bin count is clamped instead of becoming a vector of 1e18 counts.
  const double wanted_bins = steps * per_step;
  const auto bins = std::isfinite(wanted_bins) && wanted_bins >= 1
                        ? static_cast<size_t>(std::min(wanted_bins, 200.0))
                        : size_t{1};
  const double bin_width = (x.hi - x.lo) / static_cast<double>(bins);
  std::vector<int64_t> counts(bins, 0);
  for (const double v : s.samples) {
    const auto index = static_cast<int64_t>(std::floor((v - x.lo) / bin_width));
    ++counts[static_cast<size_t>(std::clamp<int64_t>(index, 0, static_cast<int64_t>(bins) - 1))];
  }
  const int64_t most = *std::max_element(counts.begin(), counts.end());
  Axis y = NiceAxis(0, static_cast<double>(most), 4, true);
  if (y.step < 1) y = {0, std::max(1.0, static_cast<double>(most)), 1};
  out += Axes(x, y, bottom, unit, "tasks");
  for (size_t i = 0; i < bins; ++i) {
    if (counts[i] == 0) continue;
    const double left = x.At(x.lo + bin_width * static_cast<double>(i), kPlotLeft, kPlotRight);
    const double right = x.At(x.lo + bin_width * static_cast<double>(i + 1), kPlotLeft, kPlotRight);
    const double top = y.At(static_cast<double>(counts[i]), bottom, kPlotTop);
    out += SvgRect(left + 0.5, top, right - left - 1, bottom - top, kBarFill);
  }
  const double median = x.At(s.median, kPlotLeft, kPlotRight);
  out += SvgLine(median, kPlotTop, median, bottom,
                 R"(stroke="#e45756" stroke-width="2" stroke-dasharray="4 3")");
  out += SvgText(median + 4, kPlotTop + 10, fmt::format("median {:.1f}", s.median),
                 R"(fill="#e45756" stroke="#fff" stroke-width="3" paint-order="stroke")");
  return out + "</svg>";
}

std::string PrefillScatter(const std::vector<PrefillPoint>& points) {
  const int height = 300;
  const double bottom = height - 48;
  const std::string title = "Prefill speed against prompt length";
  std::string out = SvgOpen(kPlotWidth, height, title, false);
  out += SvgText(0, 16, fmt::format("{} (n = {} requests)", title, points.size()),
                 R"(font-weight="bold")");
  if (points.empty()) {
    out += SvgRect(kPlotLeft, kPlotTop, kPlotRight - kPlotLeft, bottom - kPlotTop,
                   R"(fill="none" stroke="#ddd")");
    out += SvgText((kPlotLeft + kPlotRight) / 2, (kPlotTop + bottom) / 2,
                   "no successful request measured this", R"(text-anchor="middle" fill="#666")");
    return out + "</svg>";
  }
  double max_x = 0, max_y = 0;
  for (const auto& p : points) {
    max_x = std::max(max_x, static_cast<double>(p.prompt_tokens));
    max_y = std::max(max_y, p.prefill_tps);
  }
  const Axis x = NiceAxis(0, max_x, 6, true);
  const Axis y = NiceAxis(0, max_y, 5, true);
  out += Axes(x, y, bottom, "prompt tokens", "prefill tokens/s");
  out += R"(<g fill="#4c78a8" fill-opacity="0.6">)";
  for (const auto& p : points) {
    out += fmt::format(R"(<circle cx="{}" cy="{}" r="3"/>)",
                       Num(x.At(static_cast<double>(p.prompt_tokens), kPlotLeft, kPlotRight)),
                       Num(y.At(p.prefill_tps, bottom, kPlotTop)));
  }
  return out + "</g></svg>";
}

// ---- HTML ----------------------------------------------------------------------------------

// Cells are raw text, escaped here; columns after the first are right-aligned numbers unless
// `text_columns` names them. `first_column_links[i]`, when given and not "", makes row i's first
// cell a link to that address (escaped too).
std::string HtmlTable(const std::vector<std::string>& headers,
                      const std::vector<std::vector<std::string>>& rows,
                      const std::vector<size_t>& text_columns = {0},
                      const std::vector<std::string>& first_column_links = {}) {
  auto is_text = [&text_columns](size_t c) {
    return std::find(text_columns.begin(), text_columns.end(), c) != text_columns.end();
  };
  std::string out = "<table><thead><tr>";
  for (size_t c = 0; c < headers.size(); ++c) {
    out += (is_text(c) ? "<th>" : "<th class=\"n\">") + MarkupText(headers[c]) + "</th>";
  }
  out += "</tr></thead><tbody>\n";
  for (size_t r = 0; r < rows.size(); ++r) {
    const auto& row = rows[r];
    const std::string link = r < first_column_links.size() ? first_column_links[r] : "";
    out += "<tr>";
    for (size_t c = 0; c < headers.size(); ++c) {
      std::string cell = MarkupText(c < row.size() ? row[c] : std::string());
      if (c == 0 && !link.empty()) cell = "<a href=\"" + MarkupText(link) + "\">" + cell + "</a>";
      out += (is_text(c) ? "<td>" : "<td class=\"n\">") + cell + "</td>";
    }
    out += "</tr>\n";
  }
  return out + "</tbody></table>\n";
}

// Checks, once the page has loaded, that every chart has a non-zero rendered size, and leaves
// the count where a headless browser's DOM dump shows it: <body data-charts="4/4">.
constexpr std::string_view kChartCheckScript =
    "(function () {\n"
    "  function check() {\n"
    "    var charts = document.querySelectorAll('svg.chart');\n"
    "    var rendered = 0;\n"
    "    for (var i = 0; i < charts.length; i++) {\n"
    "      var box = charts[i].getBoundingClientRect();\n"
    "      var content = charts[i].getBBox();\n"
    "      if (box.width > 0 && box.height > 0 && content.width > 0 && content.height > 0) {\n"
    "        rendered++;\n"
    "      }\n"
    "    }\n"
    "    document.body.dataset.charts = rendered + '/' + charts.length;\n"
    "  }\n"
    "  if (document.readyState === 'complete') check();\n"
    "  else window.addEventListener('load', check);\n"
    "})();\n";

std::string Base64FromHex(std::string_view hex) {
  constexpr std::string_view kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::vector<unsigned char> bytes;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    bytes.push_back(
        static_cast<unsigned char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  std::string out;
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const uint32_t chunk = (bytes[i] << 16) | (i + 1 < bytes.size() ? bytes[i + 1] << 8 : 0) |
                           (i + 2 < bytes.size() ? bytes[i + 2] : 0);
    out += kAlphabet[(chunk >> 18) & 63];
    out += kAlphabet[(chunk >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlphabet[(chunk >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? kAlphabet[chunk & 63] : '=';
  }
  return out;
}

// Nothing may be fetched, and only the chart check may run: even text that slipped past
// escaping could neither load nor execute anything.
std::string ContentSecurityPolicy() {
  return "default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-" +
         Base64FromHex(Sha256Hex(kChartCheckScript)) + "'";
}

constexpr std::string_view kStyle =
    "body{font-family:system-ui,sans-serif;max-width:1000px;margin:24px auto;padding:0 16px;"
    "color:#222}"
    "h1{font-size:1.5em;margin-bottom:4px}h2{margin-top:32px;border-bottom:1px solid #ddd}"
    ".meta{color:#555}.headline{font-size:1.2em;background:#f4f6f8;padding:12px;"
    "border-radius:6px}"
    "table{border-collapse:collapse;margin:8px 0}th,td{border:1px solid #ddd;padding:3px 8px;"
    "text-align:left;vertical-align:top}.n{text-align:right;font-variant-numeric:tabular-nums}"
    "svg.chart{display:block;max-width:100%;height:auto;margin:12px 0}"
    ".note{color:#555;font-size:.9em}code{background:#f4f6f8;padding:0 3px}";

std::string HtmlList(const std::vector<ReasonCount>& reasons) {
  std::string out = "<ul>";
  for (const auto& r : reasons) {
    out += fmt::format("<li>{} × {}</li>", r.count,
                       MarkupText(r.reason.empty() ? "(no reason given)" : r.reason));
  }
  return out + "</ul>\n";
}

std::string HtmlTaskTable(const RunData& run) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> links;  // a repository task's upstream fix (agent.upstream)
  rows.reserve(run.tasks.size());
  links.reserve(run.tasks.size());
  for (const auto& t : run.tasks) {
    const auto upstream = t.grade.evidence.is_object() ? t.grade.evidence.find("upstream")
                                                       : t.grade.evidence.end();
    const bool web = upstream != t.grade.evidence.end() && upstream->is_string() &&
                     (upstream->get<std::string>().rfind("https://", 0) == 0 ||
                      upstream->get<std::string>().rfind("http://", 0) == 0);
    links.push_back(web ? upstream->get<std::string>() : "");
    rows.push_back({t.task_id, DimensionName(t.dimension), t.difficulty, Fixed(t.weight, 2),
                    GradeStatusName(t.grade.status),
                    LeftOut(t.grade.status) ? std::string(kAbsent) : Fixed(TaskScore(t.grade), 1),
                    t.grade.passed ? "yes" : "no", std::to_string(t.requests.size()),
                    Fixed(t.wall_s, 1), t.grade.reason});
  }
  return HtmlTable({"task", "dimension", "difficulty", "weight", "status", "score", "passed",
                    "requests", "wall s", "reason"},
                   rows, {0, 1, 2, 4, 6, 9}, links);
}

// ---- card ----------------------------------------------------------------------------------

// The figure and the label of one card line, "—" where nothing was measured.
std::string MedianText(const Summary& s, int decimals, std::string_view unit) {
  if (s.count == 0) return std::string(kAbsent);
  return fmt::format("{:.{}f} {}", s.median, decimals, unit);
}

// "1234.5 ± 12.3" (median ± sample standard deviation) of a speed test's metric, "" when absent.
std::string SpreadText(const json& test, std::string_view metric, int decimals) {
  const json* metrics = Child(test, "metrics");
  const json* summary = metrics != nullptr ? Child(*metrics, metric) : nullptr;
  if (summary == nullptr) return "";
  const std::optional<double> count = JsonNumber(*summary, "count");
  const std::optional<double> median = JsonNumber(*summary, "median");
  if (!count || *count <= 0 || !median || !std::isfinite(*median)) return "";
  const std::optional<double> stddev = JsonNumber(*summary, "stddev");
  if (*count < 2 || !stddev || !std::isfinite(*stddev)) return Fixed(median, decimals);
  return Fixed(median, decimals) + " ± " + Fixed(stddev, decimals);
}

// The card's protocol line: the first prefill test, the first decode test at no depth, and the
// aggregate of the highest concurrency level with distinct prompts, each median ± stddev; "" when
// the run holds no protocol figures.
std::string ProtocolLine(const json& speed) {
  const json* tests = Child(speed, "tests");
  if (tests == nullptr || !tests->is_array()) return "";
  const json* prefill = nullptr;
  const json* decode = nullptr;
  const json* widest = nullptr;
  double widest_level = 1;
  for (const json& test : *tests) {
    const std::string kind = JsonText(test, "kind");
    if (kind == "prefill" && prefill == nullptr) prefill = &test;
    const std::optional<double> depth = JsonNumber(test, "depth_tokens");
    if (kind == "decode" && decode == nullptr && !(depth && *depth > 0)) decode = &test;
    const std::optional<double> level = JsonNumber(test, "concurrency");
    if (kind == "concurrency" && JsonText(test, "prompts") == "distinct" && level &&
        *level > widest_level) {
      widest = &test;
      widest_level = *level;
    }
  }
  std::vector<std::string> parts;
  if (prefill != nullptr) {
    if (std::string v = SpreadText(*prefill, "prefill_tps", 0); !v.empty()) {
      parts.push_back(JsonText(*prefill, "name") + " " + v + " t/s");
    }
  }
  if (decode != nullptr) {
    if (std::string v = SpreadText(*decode, "decode_tps", 1); !v.empty()) {
      parts.push_back(JsonText(*decode, "name") + " " + v + " t/s");
    }
  }
  if (widest != nullptr) {
    if (std::string v = SpreadText(*widest, "aggregate_tps", 0); !v.empty()) {
      parts.push_back(fmt::format("c{:.0f} aggregate {} t/s", widest_level, v));
    }
  }
  return Join(parts, " · ");
}

// Why a finished run has no protocol figures: the speed protocol failed (its event says so), or
// it was not run (--no-speed).
std::string NoProtocolText(const RunData& run) {
  for (const auto& event : run.events) {
    if (event.kind == "speed" && event.message.rfind("speed protocol failed", 0) == 0) {
      return "speed protocol failed (the report has the reason)";
    }
  }
  if (run.info.status != kRunFinished) return "speed protocol not reached (the run is partial)";
  return "speed protocol not run (--no-speed)";
}

// The card's setup line: the labels (quant=, kv=, spec=...), the context, the server's build.
std::string SetupLine(const RunData& run) {
  std::vector<std::string> parts;
  for (const auto& [key, value] : run.info.labels) parts.push_back(key + "=" + value);
  if (const std::optional<double> context = JsonNumber(run.info.server, "context");
      context && *context > 0) {
    parts.push_back(fmt::format("context {:.0f}", *context));
  }
  if (const std::optional<double> slots = JsonNumber(run.info.server, "slots");
      slots && *slots > 0) {
    parts.push_back(fmt::format("{:.0f} slot{}", *slots, *slots == 1 ? "" : "s"));
  }
  if (std::string server = ServerText(run); !server.empty()) parts.push_back(server);
  if (std::string shard = ShardLine(run.info); !shard.empty()) parts.push_back(shard);
  return parts.empty() ? "no labels, context or server build reported" : Join(parts, " · ");
}

// A skip zx-bench's own official runs make too: an entry whose status is not `valid`
// (plugins/zxbench_importer.cpp words it "status '<s>': ..." or "no status: ...").
bool ZxOfficialSkip(const std::string& reason) {
  return reason.rfind("status '", 0) == 0 || reason.rfind("no status:", 0) == 0;
}

Comparability ZxComparability(const RunData& run, const std::map<std::string, int64_t>& tasks,
                              const std::map<std::string, int64_t>& left_out,
                              const std::vector<DimensionScore>& dimensions, int64_t not_run) {
  Comparability c;
  c.applies = run.info.suite_format == "zxbench";
  if (!c.applies) return c;
  const auto count = [](const std::map<std::string, int64_t>& m, const std::string& key) {
    const auto it = m.find(key);
    return it == m.end() ? int64_t{0} : it->second;
  };
  for (const auto& [dimension, weight] : run.info.dimension_weights) {
    if (weight <= 0) continue;
    const std::string& name = dimension;  // a lambda may not capture a structured binding (C++17)
    const auto d = std::find_if(dimensions.begin(), dimensions.end(),
                                [&](const DimensionScore& x) { return x.dimension == name; });
    const int64_t out = count(left_out, name);
    c.left_out += out;
    if (d == dimensions.end()) {
      c.gaps.push_back(name + ": no entries");
    } else if (!d->has_score) {
      c.gaps.push_back(fmt::format("{}: no score ({} left out)", name, out));
    } else if (out > 0) {
      c.gaps.push_back(fmt::format("{}: {} of {} left out", name, out, count(tasks, name)));
    }
  }
  if (not_run > 0) {
    c.gaps.push_back(fmt::format("{} planned tasks not run", not_run));
    c.left_out += not_run;
  }
  c.complete = c.gaps.empty();
  return c;
}

}  // namespace

std::string ComparabilityText(const Comparability& c) {
  if (!c.applies) return "";
  if (c.complete) {
    return "comparable with zx-bench's overall: every dimension scored, no entry left out";
  }
  return fmt::format("partial, not zx-bench's overall: {} entries left out ({})", c.left_out,
                     Join(c.gaps, "; "));
}

RunScores ScoreRun(const RunData& run) {
  RunScores s;
  Coverage& c = s.coverage;
  std::map<std::string, DimensionParts> dimensions;
  std::map<std::string, int64_t> skipped_reasons, env_error_reasons;
  std::map<std::string, int64_t> dimension_tasks, dimension_left_out;  // zx-bench comparability
  std::vector<double> decode, ttft, prefill;
  decode.reserve(run.tasks.size());
  ttft.reserve(run.tasks.size());
  prefill.reserve(run.tasks.size());

  for (const TaskResult& task : run.tasks) {
    const GradeStatus status = task.grade.status;
    DimensionParts& parts = dimensions[task.dimension];
    DimensionScore& d = parts.figures;
    ++c.finished;
    ++c.by_status[GradeStatusName(status)];
    ++dimension_tasks[task.dimension];
    if (status == GradeStatus::kSkipped) {
      ++c.skipped;
      ++d.skipped;
      ++skipped_reasons[task.grade.reason];
      if (!ZxOfficialSkip(task.grade.reason)) ++dimension_left_out[task.dimension];
    } else {
      ++c.run;
    }
    if (status == GradeStatus::kEnvError) {
      ++c.env_errors;
      ++d.env_errors;
      ++env_error_reasons[task.grade.reason];
    }
    const bool empty_left_out = ZxEmptyOutput(run.info, task);
    if (empty_left_out) ++c.empty_output;
    if (!LeftOut(status) && !empty_left_out) {
      ++c.scored;
      ++d.scored_tasks;
      if (status == GradeStatus::kGraded) ++c.graded;
      if (CountsAsZero(status)) {
        ++c.zero;
        ++d.zero_tasks;
      }
      if (task.grade.passed) ++d.passed;
      if (task.transcript.is_object() && task.transcript.contains("judge")) ++d.judged;
      Item* item = nullptr;
      if (task.group.empty()) {
        item = &parts.items.emplace_back();
      } else {
        const auto [it, inserted] = parts.group_items.emplace(task.group, parts.items.size());
        if (inserted) parts.items.emplace_back();
        item = &parts.items[it->second];
      }
      item->score_sum += TaskScore(task.grade);
      item->weight_sum += TaskWeight(task);
      ++item->members;
    }

    MeanOf task_decode, task_ttft, task_prefill;
    for (const RequestRecord& request : task.requests) {
      const RequestMetrics m = ComputeMetrics(request);
      AddTokens(request, m, task, s.tokens);
      if (!request.ok()) {
        ++s.speed.failed_requests;
        continue;
      }
      ++s.speed.ok_requests;
      task_decode.Add(m.decode_tps);
      task_ttft.Add(m.ttft_ms);
      task_prefill.Add(m.prefill_tps);
      if (m.prefill_tps && std::isfinite(*m.prefill_tps) && m.prompt_tokens >= 0) {
        s.speed.prefill_points.push_back({m.prompt_tokens, *m.prefill_tps});
      }
    }
    task_decode.AppendTo(decode);
    task_ttft.AppendTo(ttft);
    task_prefill.AppendTo(prefill);
  }
  c.planned = run.info.planned_tasks;
  c.not_run = std::max<int64_t>(0, c.planned - c.finished);
  c.skipped_reasons = SortedReasons(skipped_reasons);
  c.env_error_reasons = SortedReasons(env_error_reasons);
  s.speed.decode_tps = Summarize(std::move(decode));
  s.speed.ttft_ms = Summarize(std::move(ttft));
  s.speed.prefill_tps = Summarize(std::move(prefill));

  // Overall: the dimensions' scores weighted by the suite's dimension weights, renormalised over
  // the dimensions that have a score; the dimensions are independent samples, so the variance of
  // the overall is Σ a² SE².
  double total_weight = 0;
  for (auto& [name, parts] : dimensions) {
    parts.figures.dimension = name;
    parts.figures.suite_weight = SuiteWeight(run.info, name);
    ScoreDimension(parts);
    if (parts.figures.has_score) total_weight += parts.figures.suite_weight;
    s.scored_tasks += parts.figures.scored_tasks;
    s.passed += parts.figures.passed;
  }
  double variance = 0;
  for (auto& [name, parts] : dimensions) {
    DimensionScore& d = parts.figures;
    if (!d.has_score || total_weight <= 0) continue;
    d.overall_weight = d.suite_weight / total_weight;
    s.overall += d.overall_weight * d.score;
    variance += d.overall_weight * d.overall_weight * d.standard_error * d.standard_error;
  }
  if (total_weight > 0) {
    s.has_score = true;
    s.overall_standard_error = std::sqrt(variance);
    s.overall_ci95 = {std::max(0.0, s.overall - kConfidenceZ95 * s.overall_standard_error),
                      std::min(kMaxScore, s.overall + kConfidenceZ95 * s.overall_standard_error)};
  }

  s.dimensions.reserve(dimensions.size());
  for (auto& [name, parts] : dimensions) s.dimensions.push_back(std::move(parts.figures));
  std::stable_sort(s.dimensions.begin(), s.dimensions.end(),
                   [](const DimensionScore& a, const DimensionScore& b) {
                     return a.suite_weight > b.suite_weight;
                   });
  s.comparability =
      ZxComparability(run, dimension_tasks, dimension_left_out, s.dimensions, c.not_run);
  return s;
}

std::string RenderRunMarkdown(const RunData& run, const std::string& result_hash) {
  const RunScores s = ScoreRun(run);
  std::string out = MdHeader(run) + MdHeadline(s);
  if (std::string mixed = MixedText(run.info); !mixed.empty()) {
    out += "**Mixed endpoints:** " + MdText(mixed) + ".\n\n";
  }

  out += "## Scores by dimension\n\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& d : s.dimensions) rows.push_back(DimensionCells(d));
  out += MdTable(kDimensionHeaders, rows) + "\n";
  out += MdText(kMethodNote) + "\n\n";

  out += "## Speed across tasks\n\n";
  rows.clear();
  for (const auto& figure : kTaskSpeedFigures) rows.push_back(SpeedFigureCells(figure, s.speed));
  out += MdTable(kTaskSpeedHeaders, rows) + "\n";
  out += fmt::format(
      "Each task counts once: the mean over its successful requests ({} ok, {} failed).\n\n",
      s.speed.ok_requests, s.speed.failed_requests);

  // One section per endpoint measured (docs/report.md); capability is scored once above.
  const std::vector<const json*> speeds = SpeedResults(run.speed);
  for (const json* speed : speeds) {
    out += "## " + MdText(SpeedTitle(*speed, speeds.size() > 1)) + "\n\n";
    rows.clear();
    for (const auto& row : SpeedRows(*speed)) rows.push_back(SpeedCells(row));
    out += rows.empty() ? "No tests ran.\n\n" : MdTable(kSpeedHeaders, rows) + "\n";
    out += MdText(kSpeedFootnote) + "\n\n";
  }

  out += "## Tokens\n\n";
  const TokenTotals& t = s.tokens;
  out += MdTable(kTokenHeaders, TokenRows(s)) + "\n";
  out += fmt::format("Over {} requests; reasoning/answer split {}.\n\n", t.requests,
                     MdText(TokenNote(t)));

  const Coverage& c = s.coverage;
  out += "## Coverage\n\n";
  out += fmt::format(
      "- planned {}, finished {}, sent to the model {}, not yet run {}\n"
      "- scored {} (graded {}, counted as 0: {})\n"
      "- skipped {}, environment errors {} (left out of the score)\n\n",
      c.planned, c.finished, c.run, c.not_run, c.scored, c.graded, MdText(ZeroText(c)), c.skipped,
      c.env_errors);
  out += MdReasons("Skipped", c.skipped_reasons);
  out += MdReasons("Environment errors", c.env_error_reasons);

  out += "## Event log\n\n";
  if (run.events.empty()) {
    out += "No events.\n\n";
  } else {
    rows.clear();
    for (const auto& e : run.events) rows.push_back({e.at, e.kind, e.message});
    out += MdTable({"at", "kind", "message"}, rows, {0, 1, 2}) + "\n";
  }
  out += "result hash: " + (result_hash.empty() ? std::string("(not yet exported)")
                                                : "`" + CleanText(result_hash) + "`") +
         "\n";
  return out;
}

std::string RenderRunHtml(const RunData& run, const std::string& result_hash) {
  const RunScores s = ScoreRun(run);
  const RunInfo& info = run.info;
  const std::string model = ModelName(run);
  std::string out;
  out.reserve(16384 + run.tasks.size() * 400);
  out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta http-equiv=\"Content-Security-Policy\" content=\"" +
         MarkupText(ContentSecurityPolicy()) + "\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += "<title>evalrun report — " + MarkupText(model) + "</title>\n";
  out += "<style>" + std::string(kStyle) + "</style>\n</head>\n<body>\n";

  out += "<h1>evalrun report — " + MarkupText(model) + "</h1>\n";
  std::vector<std::string> parts;
  parts.push_back("suite: " + MarkupText(SuiteText(info)));
  if (std::string server = ServerText(run); !server.empty()) {
    parts.push_back("server: " + MarkupText(server));
  }
  parts.push_back("GPUs: " + MarkupText(GpuText(info.environment)));
  if (std::string endpoints = EndpointsText(info); !endpoints.empty()) {
    parts.push_back("endpoints: " + MarkupText(endpoints));
  } else if (!info.endpoint.empty()) {
    parts.push_back("endpoint: <code>" + MarkupText(info.endpoint) + "</code>");
  }
  if (std::string judge = JudgeText(info); !judge.empty()) parts.push_back(MarkupText(judge));
  out += "<p class=\"meta\">" + Join(parts, " · ") + "</p>\n";
  parts.clear();
  parts.push_back("run <code>" + MarkupText(info.id) + "</code> (" + MarkupText(info.status) + ")");
  if (std::string shard = ShardLine(info); !shard.empty()) parts.push_back(MarkupText(shard));
  if (!info.created_at.empty()) parts.push_back("started " + MarkupText(info.created_at));
  if (!info.evalrun_version.empty()) parts.push_back("evalrun " + MarkupText(info.evalrun_version));
  for (const auto& [key, value] : info.labels) {
    parts.push_back("<code>" + MarkupText(key + "=" + value) + "</code>");
  }
  out += "<p class=\"meta\">" + Join(parts, " · ") + "</p>\n";

  out += "<p class=\"headline\">";
  out += s.has_score ? fmt::format("<strong>Overall: {:.1f} / 100</strong> (95% CI {})", s.overall,
                                   IntervalText(s.overall_ci95))
                     : std::string("<strong>Overall: no score</strong> (no task was scored)");
  out += " · coverage: " + MarkupText(CoverageText(s.coverage));
  out += fmt::format(" · pass rate {} ({}/{})</p>\n", Percent(s.passed, s.scored_tasks), s.passed,
                     s.scored_tasks);
  if (s.comparability.applies) {
    out += "<p class=\"headline\"><strong>zx-bench:</strong> " +
           MarkupText(ComparabilityText(s.comparability)) + "</p>\n";
  }
  if (std::string mixed = MixedText(info); !mixed.empty()) {
    out += "<p class=\"headline\"><strong>Mixed endpoints:</strong> " + MarkupText(mixed) +
           ".</p>\n";
  }

  out += "<h2>Scores by dimension</h2>\n" + ScoreChart(s) + "\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& d : s.dimensions) rows.push_back(DimensionCells(d));
  out += HtmlTable(kDimensionHeaders, rows);
  out += "<p class=\"note\">" + MarkupText(kMethodNote) + "</p>\n";

  out += "<h2>Speed across tasks</h2>\n";
  out += Histogram(s.speed.decode_tps, "Decode tokens/s per task", "decode tokens/s") + "\n";
  out += Histogram(s.speed.ttft_ms, "Time to first token per task", "TTFT ms") + "\n";
  rows.clear();
  for (const auto& figure : kTaskSpeedFigures) rows.push_back(SpeedFigureCells(figure, s.speed));
  out += HtmlTable(kTaskSpeedHeaders, rows);
  out += fmt::format(
      "<p class=\"note\">Each task counts once: the mean over its successful requests ({} ok, {} "
      "failed).</p>\n",
      s.speed.ok_requests, s.speed.failed_requests);
  out += "<h2>Prefill speed against prompt length</h2>\n" + PrefillScatter(s.speed.prefill_points) +
         "\n";

  const std::vector<const json*> speeds = SpeedResults(run.speed);
  for (const json* speed : speeds) {
    out += "<h2>" + MarkupText(SpeedTitle(*speed, speeds.size() > 1)) + "</h2>\n";
    rows.clear();
    for (const auto& row : SpeedRows(*speed)) rows.push_back(SpeedCells(row));
    out += rows.empty() ? "<p>No tests ran.</p>\n" : HtmlTable(kSpeedHeaders, rows);
    out += "<p class=\"note\">" + MarkupText(kSpeedFootnote) + "</p>\n";
  }

  const TokenTotals& t = s.tokens;
  out += "<h2>Tokens</h2>\n";
  out += HtmlTable(kTokenHeaders, TokenRows(s));
  out += fmt::format("<p class=\"note\">Over {} requests; reasoning/answer split {}.</p>\n",
                     t.requests, MarkupText(TokenNote(t)));

  const Coverage& c = s.coverage;
  out += "<h2>Coverage</h2>\n<ul>";
  out += fmt::format("<li>planned {}, finished {}, sent to the model {}, not yet run {}</li>",
                     c.planned, c.finished, c.run, c.not_run);
  out += fmt::format("<li>scored {} (graded {}, counted as 0: {})</li>", c.scored, c.graded,
                     MarkupText(ZeroText(c)));
  out += fmt::format("<li>skipped {}, environment errors {} (left out of the score)</li></ul>\n",
                     c.skipped, c.env_errors);
  if (!c.skipped_reasons.empty()) out += "<h3>Skipped</h3>\n" + HtmlList(c.skipped_reasons);
  if (!c.env_error_reasons.empty()) {
    out += "<h3>Environment errors</h3>\n" + HtmlList(c.env_error_reasons);
  }

  out += "<h2>Event log</h2>\n";
  if (run.events.empty()) {
    out += "<p>No events.</p>\n";
  } else {
    rows.clear();
    for (const auto& e : run.events) rows.push_back({e.at, e.kind, e.message});
    out += HtmlTable({"at", "kind", "message"}, rows, {0, 1, 2});
  }

  out += fmt::format("<details><summary>Tasks ({})</summary>\n", run.tasks.size());
  out += HtmlTaskTable(run) + "</details>\n";
  out += "<p class=\"note\">result hash: " +
         (result_hash.empty() ? std::string("(not yet exported)")
                              : "<code>" + MarkupText(result_hash) + "</code>") +
         "</p>\n";
  out += "<script>" + std::string(kChartCheckScript) + "</script>\n</body>\n</html>\n";
  return out;
}

std::string RenderCardSvg(const RunData& run, const std::string& result_hash) {
  const RunScores s = ScoreRun(run);
  const BarLayout bars{
      .x = 24, .y = 118, .label_width = 170, .bar_width = 250, .row_height = 20, .label_chars = 24};
  const int width = 760;  // the protocol line of a fast GPU ("pp512 34589 ± 1636 t/s ...") fits
  const double footer = bars.y + BarsHeight(s, bars) + 8;
  const int height = static_cast<int>(footer + 124 + (s.comparability.applies ? 20 : 0));
  std::string out = SvgOpen(width, height, "evalrun result card", true);
  out += SvgRect(0.5, 0.5, width - 1, height - 1, R"(fill="#fff" stroke="#ccc" rx="8")");
  out += SvgText(24, 34, Truncate(CleanText(ModelName(run)), 44),
                 R"(font-size="20" font-weight="bold")");
  std::string rig = GpuText(run.info.environment);
  if (std::string server = ServerText(run); !server.empty()) rig += " · " + server;
  out += SvgText(24, 56, Truncate(CleanText(rig), 90), kMuted);
  if (s.has_score) {
    // Numbers only: nothing here needs escaping.
    out +=
        fmt::format(R"(<text x="24" y="98"><tspan font-size="34" font-weight="bold">{:.1f}</tspan>)"
                    R"(<tspan font-size="15"> / 100 overall · 95% CI {}</tspan></text>)",
                    s.overall, IntervalText(s.overall_ci95));
  } else {
    out += SvgText(24, 98, "no score: no task was scored", R"(font-size="18")");
  }
  out += ScoreBars(s, bars);
  // The standard protocol leads (the figures forum posts compare); the task medians, from the
  // suite's short prompts, follow under their own name.
  const std::string protocol = ProtocolLine(run.speed);
  out += SvgText(24, footer,
                 protocol.empty() ? NoProtocolText(run)
                                  : Truncate(CleanText("speed protocol: " + protocol), 104),
                 R"(font-weight="bold")");
  out += SvgText(24, footer + 20,
                 fmt::format("task medians (the suite's own prompts): decode {} · prefill {} · "
                             "TTFT {}",
                             MedianText(s.speed.decode_tps, 1, "t/s"),
                             MedianText(s.speed.prefill_tps, 0, "t/s"),
                             MedianText(s.speed.ttft_ms, 0, "ms")),
                 kMuted);
  out += SvgText(24, footer + 40, Truncate(CleanText(SetupLine(run)), 90));
  out += SvgText(24, footer + 60, "coverage: " + CoverageText(s.coverage));
  double next = footer + 80;
  if (s.comparability.applies) {
    out += SvgText(24, next, Truncate(CleanText("zx-bench: " + ComparabilityText(s.comparability)),
                                      104),
                   s.comparability.complete ? "" : R"(font-weight="bold")");
    next += 20;
  }
  out += SvgText(24, next,
                 Truncate(CleanText(SuiteText(run.info) + " · run " + run.info.id +
                                    (run.info.evalrun_version.empty()
                                         ? std::string()
                                         : " · evalrun " + run.info.evalrun_version)),
                          90),
                 kMuted);
  out += SvgText(24, next + 20,
                 "result hash: " + (result_hash.empty() ? std::string("—")
                                                        : Truncate(CleanText(result_hash), 80)),
                 kMuted);
  return out + "</svg>\n";
}

void WriteReportFiles(const RunData& run, const std::string& dir,
                      const std::string& result_hash) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    throw Error(fmt::format("cannot create the report folder {}: {}", dir, error.message()));
  }
  const std::array<std::string, 3> texts = {RenderRunMarkdown(run, result_hash),
                                            RenderRunHtml(run, result_hash),
                                            RenderCardSvg(run, result_hash)};
  for (size_t i = 0; i < texts.size(); ++i) {
    const std::string path = (std::filesystem::path(dir) / kReportFileNames[i]).string();
    if (const auto failure = WriteFileAtomically(path, texts[i])) {
      throw Error(fmt::format("cannot write {}: {}", path, *failure), ExitCode::kSomeFailed);
    }
  }
}

}  // namespace evalrun
