#pragma once
// Summaries of samples: every figure evalrun reports carries count, mean, median, min, max,
// p90, p99 and the raw samples (DESIGN.md section 7).
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

namespace evalrun {

struct Summary {
  int64_t count = 0;
  double mean = 0, median = 0, min = 0, max = 0, p90 = 0, p99 = 0;
  double stddev = 0;  // sample standard deviation (n - 1); 0 for fewer than two samples
  std::vector<double> samples;  // in the order they were measured
};

// Percentile q in [0, 100] of sorted samples by linear interpolation between closest ranks
// (numpy's default, "linear"). Empty input gives 0.
double Percentile(const std::vector<double>& sorted, double q);

Summary Summarize(std::vector<double> samples);

// {"count":..,"mean":..,"median":..,"min":..,"max":..,"p90":..,"p99":..,"stddev":..,"samples":[..]}
// Without "samples" when `with_samples` is false (a streaming writer appends them itself).
nlohmann::json ToJson(const Summary& summary, bool with_samples = true);

}  // namespace evalrun
