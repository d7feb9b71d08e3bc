#include "core/stats.h"

#include <algorithm>
#include <random>

#include "tests/support/catch.h"

using evalrun::Percentile;
using evalrun::Summarize;
using evalrun::Summary;

TEST_CASE("stats: percentiles interpolate linearly between closest ranks", "[stats]") {
  const std::vector<double> sorted = {10, 20, 30, 40, 50};
  CHECK(Percentile(sorted, 0) == 10);
  CHECK(Percentile(sorted, 50) == 30);
  CHECK(Percentile(sorted, 90) == Approx(46));
  CHECK(Percentile(sorted, 99) == Approx(49.6));
  CHECK(Percentile(sorted, 100) == 50);
  CHECK(Percentile({}, 50) == 0);
  CHECK(Percentile({7}, 99) == 7);
}

TEST_CASE("stats: a summary carries every figure and the raw samples in order", "[stats]") {
  const auto s = Summarize({3, 1, 2, 10});
  CHECK(s.count == 4);
  CHECK(s.min == 1);
  CHECK(s.max == 10);
  CHECK(s.mean == 4);
  CHECK(s.median == 2.5);
  CHECK(s.p90 == Approx(7.9));
  CHECK(s.stddev == Approx(4.0824829));
  CHECK(s.samples == std::vector<double>{3, 1, 2, 10});
  const auto j = evalrun::ToJson(s);
  for (const char* key : {"count", "mean", "median", "min", "max", "p90", "p99", "samples"}) {
    CHECK(j.contains(key));
  }
}

TEST_CASE("stats: an empty summary is all zeros", "[stats]") {
  const auto s = Summarize({});
  CHECK(s.count == 0);
  CHECK(s.mean == 0);
  CHECK(s.samples.empty());
}

TEST_CASE("stats: order statistics without a sort equal the sorted percentiles, bit for bit",
          "[stats]") {
  std::mt19937_64 random(7);
  std::uniform_real_distribution<double> value(-1e3, 1e6);
  for (size_t n : {1, 2, 3, 10, 101, 1000, 4097}) {
    std::vector<double> samples(n);
    for (double& v : samples) v = value(random);
    if (n > 3) samples[n / 2] = samples[n / 3];  // ties
    std::vector<double> sorted = samples;
    std::sort(sorted.begin(), sorted.end());
    const Summary s = Summarize(samples);
    CAPTURE(n);
    CHECK(s.median == Percentile(sorted, 50));
    CHECK(s.p90 == Percentile(sorted, 90));
    CHECK(s.p99 == Percentile(sorted, 99));
    CHECK(s.min == sorted.front());
    CHECK(s.max == sorted.back());
    CHECK(s.samples == samples);  // measurement order kept
  }
}
