#pragma once
// The record of one `evalrun speed` run: plain data produced by runner/speed_protocol, rendered
// by results/speed_report (json, md, csv, jsonl) and, later, stored and verified by results/.
// Every figure in `metrics` is recomputed from `records` by SummarizeTest, nothing else.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/request_record.h"
#include "core/stats.h"

namespace evalrun {

inline constexpr int kSpeedSchemaVersion = 1;

struct SpeedTest {
  std::string name;          // "pp512", "tg128", "c8-distinct", "uni:code", ...
  std::string kind;          // "prefill" | "decode" | "concurrency" | "uni_single" | "uni_pair"
  std::string prompts;       // "distinct" | "same" | a uni-bench scenario ("code", ...)
  int64_t prompt_tokens = 0;   // requested prompt length (calibrated), 0 for fixed prompts
  int64_t depth_tokens = 0;    // decode at depth: context already filled before decoding
  int64_t max_tokens = 0;
  int concurrency = 1;
  int rounds = 0;
  // All requests, round after round; record.label says "round/slot".
  std::vector<RequestRecord> records;
  std::vector<int> record_round;  // round index of each record (parallel to records)
  std::vector<std::string> notes; // things the user must know (ignored ignore_eos, truncation)
  // More concurrent requests than the server has slots: TTFT holds the wait for a slot, so the
  // tables show no prefill rate for the test (JSON "ttft_includes_queue").
  bool ttft_includes_queue = false;

  // Filled by SummarizeTest.
  std::map<std::string, Summary> metrics;
  int64_t errors = 0;
  std::vector<std::string> error_messages;  // distinct messages, in order of first appearance
  int64_t cache_hits = 0;  // successful requests whose prompt came mostly from the cache
};

struct SpeedResult {
  std::string evalrun_version;
  std::string started_at;    // UTC wall clock, ISO 8601, for display only
  double duration_s = 0;
  std::string endpoint;
  std::string preset;
  nlohmann::json server;       // ServerInfo as JSON
  nlohmann::json settings;     // the protocol as run
  nlohmann::json calibration;  // how prompt lengths were calibrated
  std::map<std::string, std::string> labels;
  nlohmann::json environment;
  std::vector<SpeedTest> tests;

  int64_t errors() const;
};

// Computes test.metrics (ttft_ms, ttfo_ms, e2e_ms, decode_tps, tpot_ms, itl_ms,
// tokens_per_chunk, prefill_tps, cached_tokens, queue_ms, server_prefill_tps, server_decode_tps,
// draft_acceptance, uni_decode_tps, prompt_tokens, completion_tokens; aggregate_tps and uni_aggregate_tps per
// round when concurrency > 1, which uni_pair tests have), errors, error_messages and cache_hits
// from test.records.
// Failed requests count as errors and are left out of every metric.
void SummarizeTest(SpeedTest& test);

// A request record as JSON (timestamps in ns since t_send; `send_offset_ns` relative to
// `round_start`). Text is included only when `with_text`; the text events' times
// ("text_event_ns", one number per event) unless `with_event_times` is false (a streaming
// writer then appends them itself).
nlohmann::json RecordToJson(const RequestRecord& record, TimePoint round_start, bool with_text,
                            bool with_event_times = true);

}  // namespace evalrun
