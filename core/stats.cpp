#include "core/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace evalrun {

double Percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double rank = q / 100.0 * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = rank - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

namespace {

// Percentile() of `values` without sorting them: the two order statistics it interpolates
// between, by nth_element (linear time; a 200,000-sample itl_ms costs no n log n sort). Equal to
// Percentile(sorted copy, q), bit for bit. Reorders `values`.
double OrderPercentile(std::vector<double>& values, double q) {
  const double rank = q / 100.0 * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, values.size() - 1);
  const double frac = rank - static_cast<double>(lo);
  const auto at = values.begin() + static_cast<std::ptrdiff_t>(lo);
  std::nth_element(values.begin(), at, values.end());
  const double low = *at;
  const double high = hi == lo ? low : *std::min_element(at + 1, values.end());
  return low + (high - low) * frac;
}

}  // namespace

Summary Summarize(std::vector<double> samples) {
  Summary s;
  s.count = static_cast<int64_t>(samples.size());
  if (samples.empty()) return s;
  const auto [low, high] = std::minmax_element(samples.begin(), samples.end());
  s.min = *low;
  s.max = *high;
  // Sums in measurement order (metric definitions 2; version 1 summed in sorted order).
  s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(s.count);
  std::vector<double> work = samples;
  s.median = OrderPercentile(work, 50);
  s.p90 = OrderPercentile(work, 90);
  s.p99 = OrderPercentile(work, 99);
  if (s.count > 1) {
    double sq = 0;
    for (double v : samples) sq += (v - s.mean) * (v - s.mean);
    s.stddev = std::sqrt(sq / static_cast<double>(s.count - 1));
  }
  s.samples = std::move(samples);
  return s;
}

nlohmann::json ToJson(const Summary& s, bool with_samples) {
  nlohmann::json j = {{"count", s.count}, {"mean", s.mean}, {"median", s.median},
                      {"min", s.min},     {"max", s.max},   {"p90", s.p90},
                      {"p99", s.p99},     {"stddev", s.stddev}};
  if (with_samples) j["samples"] = s.samples;
  return j;
}

}  // namespace evalrun
