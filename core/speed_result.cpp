#include "core/speed_result.h"

#include <algorithm>

#include "core/metrics.h"

namespace evalrun {

int64_t SpeedResult::errors() const {
  int64_t n = 0;
  for (const auto& t : tests) n += t.errors;
  return n;
}

void SummarizeTest(SpeedTest& test) {
  std::map<std::string, std::vector<double>> samples;
  auto add = [&samples](const char* name, const std::optional<double>& v) {
    if (v) samples[name].push_back(*v);
  };
  test.errors = 0;
  test.cache_hits = 0;
  test.error_messages.clear();
  for (const auto& r : test.records) {
    if (!r.ok()) {
      ++test.errors;
      std::string message = OutcomeName(r.outcome);
      if (!r.error_message.empty()) message += ": " + r.error_message;
      if (std::find(test.error_messages.begin(), test.error_messages.end(), message) ==
          test.error_messages.end()) {
        test.error_messages.push_back(message);
      }
      continue;
    }
    const RequestMetrics m = ComputeMetrics(r);
    add("ttft_ms", m.ttft_ms);
    add("ttfo_ms", m.ttfo_ms);
    add("e2e_ms", m.e2e_ms);
    add("decode_tps", m.decode_tps);
    add("tpot_ms", m.tpot_ms);
    add("tokens_per_chunk", m.tokens_per_chunk);
    add("prefill_tps", m.prefill_tps);
    add("cached_tokens", m.cached_tokens);
    add("queue_ms", m.queue_ms);
    if (m.cache_hit) ++test.cache_hits;
    add("server_prefill_tps", m.server_prefill_tps);
    add("server_decode_tps", m.server_decode_tps);
    add("draft_acceptance", m.draft_acceptance);
    add("uni_decode_tps", m.uni_decode_tps);
    if (m.prompt_tokens >= 0) samples["prompt_tokens"].push_back(static_cast<double>(m.prompt_tokens));
    samples["completion_tokens"].push_back(static_cast<double>(m.completion_tokens));
    auto& itl = samples["itl_ms"];
    itl.insert(itl.end(), m.itl_ms.begin(), m.itl_ms.end());
  }
  if (test.concurrency > 1 && test.record_round.size() == test.records.size()) {
    const int last_round = test.record_round.empty()
                               ? -1
                               : *std::max_element(test.record_round.begin(), test.record_round.end());
    for (int round = 0; round <= last_round; ++round) {
      std::vector<RequestRecord> in_round;
      for (size_t i = 0; i < test.records.size(); ++i) {
        if (test.record_round[i] == round) in_round.push_back(test.records[i]);
      }
      // uni_bench keeps a round only when every request in it succeeded.
      const bool all_ok = std::all_of(in_round.begin(), in_round.end(),
                                      [](const RequestRecord& r) { return r.ok(); });
      add("aggregate_tps", AggregateTps(in_round));
      if (all_ok) add("uni_aggregate_tps", UniAggregateTps(in_round));
    }
  }
  test.metrics.clear();
  for (auto& [name, values] : samples) {
    if (!values.empty()) test.metrics[name] = Summarize(std::move(values));
  }
}

nlohmann::json RecordToJson(const RequestRecord& r, TimePoint round_start, bool with_text,
                            bool with_event_times) {
  nlohmann::json j = {
      {"label", r.label},
      {"outcome", OutcomeName(r.outcome)},
      {"http_status", r.http_status},
      {"prompt_tokens_sent", r.prompt_tokens_sent},
      {"max_tokens", r.max_tokens},
      {"prompt_tokens", r.usage.prompt_tokens},
      {"cached_tokens", r.usage.cached_tokens},
      {"completion_tokens", r.completion_tokens()},
      {"tokens_estimated", !r.usage_reported},
      {"finish_reason", r.finish_reason},
      {"send_offset_ns", NanosBetween(round_start, r.t_send)},
      {"queue_ns", r.queue_ns},
      {"first_ns", r.first_ns},
      {"first_content_ns", r.first_content_ns},
      {"last_ns", r.last_ns},
      {"end_ns", r.end_ns},
  };
  if (with_event_times) j["text_event_ns"] = r.text_event_ns;
  if (!r.ok()) j["error"] = r.error_message;
  if (!r.usage.raw.is_null()) j["usage"] = r.usage.raw;
  if (!r.timings.raw_timings.is_null()) j["timings"] = r.timings.raw_timings;
  if (!r.timings.raw_meta_info.is_null()) j["meta_info"] = r.timings.raw_meta_info;
  if (!r.model.empty()) j["model"] = r.model;
  if (!r.system_fingerprint.empty()) j["system_fingerprint"] = r.system_fingerprint;
  if (with_text) {
    j["content"] = r.content;
    j["reasoning"] = r.reasoning;
  }
  return j;
}

}  // namespace evalrun
