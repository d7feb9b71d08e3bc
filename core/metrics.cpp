#include "core/metrics.h"

#include <algorithm>
#include <limits>

#include "core/limits.h"

namespace evalrun {

RequestMetrics ComputeMetrics(const RequestRecord& r) {
  RequestMetrics m;
  m.completion_tokens = r.completion_tokens();
  m.tokens_estimated = !r.usage_reported || r.usage.completion_tokens < 0;
  m.prompt_tokens = r.usage.prompt_tokens >= 0 ? r.usage.prompt_tokens : r.prompt_tokens_sent;
  if (r.first_ns >= 0) m.ttft_ms = NanosToMs(r.first_ns);
  if (r.first_content_ns >= 0) m.ttfo_ms = NanosToMs(r.first_content_ns);
  if (r.last_ns >= 0) m.e2e_ms = NanosToMs(r.last_ns);
  if (r.first_ns >= 0 && r.last_ns > r.first_ns && m.completion_tokens > 1) {
    m.decode_tps = static_cast<double>(m.completion_tokens - 1) /
                   NanosToSeconds(r.last_ns - r.first_ns);
    m.tpot_ms = 1000.0 / *m.decode_tps;
  }
  if (r.first_ns >= 0 && r.end_ns > r.first_ns && m.completion_tokens > 1) {
    m.uni_decode_tps = static_cast<double>(m.completion_tokens - 1) /
                       NanosToSeconds(r.end_ns - r.first_ns);
  }
  const auto& ev = r.text_event_ns;
  m.itl_ms.reserve(ev.empty() ? 0 : ev.size() - 1);
  for (size_t i = 1; i < ev.size(); ++i) m.itl_ms.push_back(NanosToMs(ev[i] - ev[i - 1]));
  if (!ev.empty() && m.completion_tokens >= 0) {
    m.tokens_per_chunk = static_cast<double>(m.completion_tokens) / static_cast<double>(ev.size());
  }
  if (m.prompt_tokens >= 0) {
    double uncached = static_cast<double>(m.prompt_tokens);
    bool told = false;  // the server gave an account of its cache
    if (r.timings.prompt_n && *r.timings.prompt_n >= 0) {
      uncached = std::min(uncached, *r.timings.prompt_n);
      told = true;
    } else if (r.usage.cached_tokens >= 0) {
      uncached = static_cast<double>(m.prompt_tokens - std::min(m.prompt_tokens,
                                                                r.usage.cached_tokens));
      told = true;
    }
    if (told) m.cached_tokens = static_cast<double>(m.prompt_tokens) - uncached;
    m.cache_hit = m.prompt_tokens > 0 && m.cached_tokens &&
                  *m.cached_tokens > kCacheHitShare * static_cast<double>(m.prompt_tokens);
    if (r.first_ns > 0 && !m.cache_hit) m.prefill_tps = uncached / NanosToSeconds(r.first_ns);
  }
  if (m.ttft_ms && r.timings.prompt_ms && *r.timings.prompt_ms >= 0) {
    m.queue_ms = std::max(0.0, *m.ttft_ms - *r.timings.prompt_ms);
  }
  m.server_prefill_tps = r.timings.prompt_per_second;
  m.server_decode_tps = r.timings.predicted_per_second;
  if (r.timings.draft_n && r.timings.draft_n_accepted && *r.timings.draft_n > 0) {
    m.draft_acceptance = *r.timings.draft_n_accepted / *r.timings.draft_n;
  }
  return m;
}

std::optional<double> AggregateTps(std::span<const RequestRecord> records) {
  int64_t tokens = 0;
  TimePoint first = TimePoint::max();
  TimePoint last = TimePoint::min();
  bool any = false;
  for (const auto& r : records) {
    if (!r.ok() || r.first_ns < 0 || r.last_ns < 0) continue;
    any = true;
    tokens = limits::SaturatingAdd(tokens, std::max<int64_t>(0, r.completion_tokens() - 1));
    first = std::min(first, r.t_send + std::chrono::nanoseconds(r.first_ns));
    last = std::max(last, r.t_send + std::chrono::nanoseconds(r.last_ns));
  }
  if (!any || last <= first) return std::nullopt;
  return static_cast<double>(tokens) / NanosToSeconds(NanosBetween(first, last));
}

std::optional<double> UniAggregateTps(std::span<const RequestRecord> records) {
  int64_t tokens = 0;
  int64_t longest = 0;
  bool any = false;
  for (const auto& r : records) {
    if (!r.ok() || r.first_ns < 0 || r.end_ns < 0) continue;
    any = true;
    tokens = limits::SaturatingAdd(tokens, std::max<int64_t>(0, r.completion_tokens() - 1));
    longest = std::max(longest, r.end_ns - r.first_ns);
  }
  if (!any || longest <= 0) return std::nullopt;
  return static_cast<double>(tokens) / NanosToSeconds(longest);
}

}  // namespace evalrun
