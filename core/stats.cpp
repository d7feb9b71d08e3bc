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

Summary Summarize(std::vector<double> samples) {
  Summary s;
  s.count = static_cast<int64_t>(samples.size());
  if (samples.empty()) return s;
  std::vector<double> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  s.min = sorted.front();
  s.max = sorted.back();
  s.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(s.count);
  s.median = Percentile(sorted, 50);
  s.p90 = Percentile(sorted, 90);
  s.p99 = Percentile(sorted, 99);
  if (s.count > 1) {
    double sq = 0;
    for (double v : sorted) sq += (v - s.mean) * (v - s.mean);
    s.stddev = std::sqrt(sq / static_cast<double>(s.count - 1));
  }
  s.samples = std::move(samples);
  return s;
}

nlohmann::json ToJson(const Summary& s) {
  return {{"count", s.count}, {"mean", s.mean}, {"median", s.median}, {"min", s.min},
          {"max", s.max},     {"p90", s.p90},   {"p99", s.p99},       {"stddev", s.stddev},
          {"samples", s.samples}};
}

}  // namespace evalrun
