#include "results/report_json.h"

namespace evalrun {
namespace {

using nlohmann::json;

json ReasonsJson(const std::vector<ReasonCount>& reasons) {
  json out = json::array();
  for (const auto& r : reasons) out.push_back({{"reason", r.reason}, {"count", r.count}});
  return out;
}

}  // namespace

json RunScoresToJson(const RunScores& s) {
  json dimensions = json::array();
  for (const DimensionScore& d : s.dimensions) {
    dimensions.push_back({
        {"dimension", d.dimension},
        {"suite_weight", d.suite_weight},
        {"overall_weight", d.overall_weight},
        {"score", d.has_score ? json(d.score) : json()},
        {"ci95", d.has_score ? json::array({d.ci95.low, d.ci95.high}) : json()},
        {"standard_error", d.has_score ? json(d.standard_error) : json()},
        {"items", d.items},
        {"effective_items", d.effective_items},
        {"scored_tasks", d.scored_tasks},
        {"zero_tasks", d.zero_tasks},
        {"passed", d.passed},
        {"skipped", d.skipped},
        {"env_errors", d.env_errors},
        {"judged", d.judged},
    });
  }
  const Coverage& c = s.coverage;
  json points = json::array();
  for (const PrefillPoint& p : s.speed.prefill_points) {
    points.push_back({p.prompt_tokens, p.prefill_tps});
  }
  return {
      {"overall",
       s.has_score ? json{{"score", s.overall},
                          {"ci95", {s.overall_ci95.low, s.overall_ci95.high}},
                          {"standard_error", s.overall_standard_error}}
                   : json()},
      {"passed", s.passed},
      {"scored_tasks", s.scored_tasks},
      {"dimensions", std::move(dimensions)},
      {"coverage",
       {{"planned", c.planned},
        {"finished", c.finished},
        {"run", c.run},
        {"scored", c.scored},
        {"graded", c.graded},
        {"zero", c.zero},
        {"skipped", c.skipped},
        {"env_errors", c.env_errors},
        {"empty_output", c.empty_output},
        {"not_run", c.not_run},
        {"by_status", c.by_status},
        {"skipped_reasons", ReasonsJson(c.skipped_reasons)},
        {"env_error_reasons", ReasonsJson(c.env_error_reasons)}}},
      {"tokens",
       {{"requests", s.tokens.requests},
        {"prompt", s.tokens.prompt},
        {"reasoning", s.tokens.reasoning},
        {"answer", s.tokens.answer},
        {"estimated_requests", s.tokens.estimated_requests}}},
      {"speed",
       {{"decode_tps", ToJson(s.speed.decode_tps)},
        {"ttft_ms", ToJson(s.speed.ttft_ms)},
        {"prefill_tps", ToJson(s.speed.prefill_tps)},
        {"prefill_points", std::move(points)},
        {"ok_requests", s.speed.ok_requests},
        {"failed_requests", s.speed.failed_requests}}},
  };
}

}  // namespace evalrun
