#include "core/metrics.h"

#include "tests/support/catch.h"

#include "core/speed_result.h"

using namespace evalrun;

namespace {
constexpr int64_t kMs = 1'000'000;

// 11 tokens in 11 events: first at 200 ms, then every 20 ms; stream end 1 ms after the last.
RequestRecord StreamRecord() {
  RequestRecord r;
  r.t_send = TimePoint(std::chrono::seconds(100));
  for (int i = 0; i <= 10; ++i) r.text_event_ns.push_back(200 * kMs + i * 20 * kMs);
  r.first_ns = r.text_event_ns.front();
  r.first_content_ns = 240 * kMs;
  r.last_ns = r.text_event_ns.back();
  r.end_ns = r.last_ns + kMs;
  r.usage.prompt_tokens = 520;
  r.usage.cached_tokens = 8;
  r.usage.completion_tokens = 11;
  r.usage_reported = true;
  return r;
}
}  // namespace

TEST_CASE("metrics: per-request figures follow DESIGN section 7 exactly", "[metrics]") {
  const RequestMetrics m = ComputeMetrics(StreamRecord());
  CHECK(*m.ttft_ms == 200);
  CHECK(*m.ttfo_ms == 240);
  CHECK(*m.e2e_ms == 400);
  CHECK(*m.decode_tps == Approx(10.0 / 0.2));   // (11 - 1) / (400 ms - 200 ms)
  CHECK(*m.tpot_ms == Approx(20));
  CHECK(*m.uni_decode_tps == Approx(10.0 / 0.201));  // uni_bench: to the end of the stream
  CHECK(*m.tokens_per_chunk == 1);
  CHECK(*m.prefill_tps == Approx((520.0 - 8.0) / 0.2));
  REQUIRE(m.itl_ms.size() == 10);
  CHECK(m.itl_ms.front() == Approx(20));
  CHECK_FALSE(m.tokens_estimated);
  CHECK_FALSE(m.server_decode_tps.has_value());
}

TEST_CASE("metrics: without usage, tokens are counted from text events and flagged", "[metrics]") {
  RequestRecord r = StreamRecord();
  r.usage = Usage{};
  r.usage_reported = false;
  const RequestMetrics m = ComputeMetrics(r);
  CHECK(m.completion_tokens == 11);
  CHECK(m.tokens_estimated);
}

TEST_CASE("metrics: multi-token chunks show in tokens_per_chunk, not in decode_tps", "[metrics]") {
  RequestRecord r = StreamRecord();
  r.usage.completion_tokens = 41;  // 1 + 10 events x 4 tokens
  const RequestMetrics m = ComputeMetrics(r);
  CHECK(*m.tokens_per_chunk == Approx(41.0 / 11.0));
  CHECK(*m.decode_tps == Approx(40.0 / 0.2));
}

TEST_CASE("metrics: one token or no text gives no decode figure", "[metrics]") {
  RequestRecord r;
  r.usage.completion_tokens = 1;
  r.usage_reported = true;
  r.first_ns = r.last_ns = 5 * kMs;
  r.text_event_ns = {5 * kMs};
  const RequestMetrics m = ComputeMetrics(r);
  CHECK(m.ttft_ms.has_value());
  CHECK_FALSE(m.decode_tps.has_value());
  CHECK_FALSE(m.tpot_ms.has_value());
  const RequestMetrics empty = ComputeMetrics(RequestRecord{});
  CHECK_FALSE(empty.ttft_ms.has_value());
  CHECK_FALSE(empty.tokens_per_chunk.has_value());
}

TEST_CASE("metrics: llama.cpp timings give server figures and draft acceptance", "[metrics]") {
  RequestRecord r = StreamRecord();
  r.timings.prompt_per_second = 1788.9;
  r.timings.predicted_per_second = 51.2;
  r.timings.draft_n = 40;
  r.timings.draft_n_accepted = 30;
  const RequestMetrics m = ComputeMetrics(r);
  CHECK(*m.server_prefill_tps == 1788.9);
  CHECK(*m.server_decode_tps == 51.2);
  CHECK(*m.draft_acceptance == 0.75);
}

TEST_CASE("metrics: prefill counts what the server processed, a cache hit has no prefill rate",
          "[metrics]") {
  RequestRecord r = StreamRecord();  // 520 prompt tokens, 8 cached (usage), TTFT 200 ms
  SECTION("usage's cached_tokens, when that is all the server says") {
    const RequestMetrics m = ComputeMetrics(r);
    CHECK(*m.cached_tokens == 8);
    CHECK_FALSE(m.cache_hit);
    CHECK(*m.prefill_tps == Approx(512 / 0.2));
    CHECK_FALSE(m.queue_ms);  // no timings
  }
  SECTION("llama.cpp b4748: no cached_tokens, timings.prompt_n says it processed 1 token") {
    r.usage.cached_tokens = -1;
    r.timings.prompt_n = 1;
    r.timings.prompt_ms = 0.9;
    const RequestMetrics m = ComputeMetrics(r);
    CHECK(*m.cached_tokens == 519);
    CHECK(m.cache_hit);
    CHECK_FALSE(m.prefill_tps);  // was 520 / 0.2 = 2600 t/s before: the cache counted as prefill
    CHECK(*m.queue_ms == Approx(199.1));
  }
  SECTION("prompt_n wins over usage; half cached or less is still a prefill rate") {
    r.timings.prompt_n = 300;
    r.timings.prompt_ms = 150;
    const RequestMetrics m = ComputeMetrics(r);
    CHECK(*m.cached_tokens == 220);
    CHECK_FALSE(m.cache_hit);
    CHECK(*m.prefill_tps == Approx(300 / 0.2));
    CHECK(*m.queue_ms == Approx(50));  // 200 ms TTFT, 150 ms of them on the prompt
  }
  SECTION("nothing said about the cache: every prompt token counts, no cached figure") {
    r.usage.cached_tokens = -1;
    const RequestMetrics m = ComputeMetrics(r);
    CHECK_FALSE(m.cached_tokens);
    CHECK(*m.prefill_tps == Approx(520 / 0.2));
  }
}

TEST_CASE("speed result: cache hits are counted and left out of prefill_tps", "[metrics]") {
  SpeedTest test;
  test.name = "c1-same";
  RequestRecord miss = StreamRecord();
  miss.usage.cached_tokens = 0;
  RequestRecord hit = StreamRecord();
  hit.usage.cached_tokens = 519;
  test.records = {miss, hit, hit};
  SummarizeTest(test);
  CHECK(test.cache_hits == 2);
  CHECK(test.metrics.at("prefill_tps").count == 1);
  CHECK(test.metrics.at("cached_tokens").median == 519);
}

TEST_CASE("metrics: aggregate_tps spans the whole window, uni_aggregate the longest stream",
          "[metrics]") {
  RequestRecord a = StreamRecord();  // first 200 ms, last 400 ms, end 401 ms, 11 tokens
  RequestRecord b = StreamRecord();
  b.t_send += std::chrono::milliseconds(100);  // same shape, 100 ms later
  b.end_ns = b.last_ns + 51 * kMs;             // its stream ends 50 ms later than a's
  const std::vector<RequestRecord> both = {a, b};
  // window: a.first (300 ms abs) .. b.last (500 ms + 100) -> 0.3 s, 20 tokens
  CHECK(*AggregateTps(both) == Approx(20.0 / 0.3));
  // uni: 20 / max(0.201, 0.251)
  CHECK(*UniAggregateTps(both) == Approx(20.0 / 0.251));
  RequestRecord failed = StreamRecord();
  failed.outcome = RequestOutcome::kDropped;
  const std::vector<RequestRecord> one_failed = {a, failed};
  CHECK(*AggregateTps(one_failed) == Approx(10.0 / 0.2));
  CHECK_FALSE(AggregateTps(std::vector<RequestRecord>{failed}).has_value());
}

TEST_CASE("speed result: errors are counted apart and kept out of every metric", "[metrics]") {
  SpeedTest test;
  test.concurrency = 2;
  test.records = {StreamRecord(), StreamRecord(), StreamRecord(), StreamRecord()};
  test.records[3].outcome = RequestOutcome::kIdleTimeout;
  test.records[3].error_message = "no bytes for 1.0 s (idle timeout)";
  test.record_round = {0, 0, 1, 1};
  SummarizeTest(test);
  CHECK(test.errors == 1);
  REQUIRE(test.error_messages.size() == 1);
  CHECK(test.error_messages[0] == "idle_timeout: no bytes for 1.0 s (idle timeout)");
  CHECK(test.metrics.at("decode_tps").count == 3);
  CHECK(test.metrics.at("aggregate_tps").count == 2);      // both rounds, failures left out
  CHECK(test.metrics.at("uni_aggregate_tps").count == 1);  // only the clean round
  CHECK(test.metrics.at("itl_ms").count == 30);
}
