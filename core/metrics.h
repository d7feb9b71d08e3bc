#pragma once
// The metric definitions of DESIGN.md section 7, by name, as pure functions of request records.
// Every figure evalrun reports is computed here, so a bundle's figures can be recomputed from its
// stored samples by anyone (evalrun verify).
#include <optional>
#include <span>
#include <vector>

#include "core/request_record.h"

namespace evalrun {

// Per-request figures. A figure that the record cannot support (no text arrived, one token only)
// is empty rather than zero or infinite.
struct RequestMetrics {
  std::optional<double> ttft_ms;            // t_first - t_send
  std::optional<double> ttfo_ms;            // t_first_content - t_send
  std::optional<double> e2e_ms;             // t_last - t_send
  std::optional<double> decode_tps;         // (completion_tokens - 1) / (t_last - t_first)
  std::optional<double> tpot_ms;            // 1000 / decode_tps
  std::vector<double> itl_ms;               // gaps between successive text events
  std::optional<double> tokens_per_chunk;   // completion_tokens / text events
  // (uncached prompt tokens) / ttft; empty for a cache hit. Uncached tokens are the server's own
  // account where it gives one: llama.cpp timings.prompt_n (what it processed), else
  // prompt_tokens - cached_tokens (usage.prompt_tokens_details or SGLang meta_info), else all.
  std::optional<double> prefill_tps;
  std::optional<double> cached_tokens;      // prompt_tokens - uncached, where the server says
  bool cache_hit = false;                   // more than half the prompt came from the cache
  // ttft - llama.cpp timings.prompt_ms: the part of TTFT the server did not spend on the prompt
  // (waiting for a slot, the network, tokenizing); empty without timings.
  std::optional<double> queue_ms;
  std::optional<double> server_prefill_tps; // llama.cpp timings.prompt_per_second
  std::optional<double> server_decode_tps;  // llama.cpp timings.predicted_per_second
  std::optional<double> draft_acceptance;   // accepted / drafted
  // uni_bench v1's per-request decode: (comp - 1) / (t_end - t_first), t_end = stream end.
  std::optional<double> uni_decode_tps;
  int64_t prompt_tokens = -1;
  int64_t completion_tokens = -1;
  bool tokens_estimated = false;  // the server sent no usage; counts are text events
};

// The version of these definitions, recorded with every result: `evalrun verify` recomputes
// figures only for results made under the same definitions. 2: prefill from the server's own
// prompt accounting, cache hits, queue_ms, means summed in measurement order; 1 (a result
// without metrics_version) counted cached tokens as prefill when usage did not name them.
inline constexpr int kMetricsVersion = 2;
// A request is a cache hit when more than this share of its prompt was served from the cache.
inline constexpr double kCacheHitShare = 0.5;

RequestMetrics ComputeMetrics(const RequestRecord& record);

// For N requests started together: sum(completion_tokens - 1) / (max t_last - min t_first),
// on the shared steady clock. Failed requests are left out; empty if fewer than one succeeded.
std::optional<double> AggregateTps(std::span<const RequestRecord> records);

// The community uni_bench v1 formula: sum(comp - 1) / max(t_end - t_first) over the requests.
std::optional<double> UniAggregateTps(std::span<const RequestRecord> records);

}  // namespace evalrun
