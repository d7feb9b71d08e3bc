#include "runner/speed_protocol.h"

#include <algorithm>
#include <cmath>

#include "tests/support/catch.h"

#include "plugins/mock_server.h"

using namespace evalrun;

namespace {

SpeedConfig Config(const MockServer& mock) {
  SpeedConfig c;
  c.endpoint = mock.base_url();
  c.capture_environment = false;
  c.warmup = false;
  return c;
}

const SpeedTest& Find(const SpeedResult& r, const char* name) {  // no temporary string
  for (const auto& t : r.tests) {
    if (t.name == name) return t;
  }
  FAIL("no test named " << name);
  throw std::logic_error("unreachable");
}

void Quiet(const std::string&) {}

}  // namespace

TEST_CASE("speed: presets fill what the flags left unset, and only that", "[speed]") {
  SpeedConfig c;
  c.preset = "llama-bench";
  ApplyPreset(c);
  CHECK(c.prompt_lengths == std::vector<int64_t>{512});
  CHECK(c.gen_tokens == 128);
  CHECK(c.repetitions == 5);
  CHECK(c.concurrency.empty());

  SpeedConfig q;
  q.gen_tokens = 32;
  ApplyPreset(q);  // quick
  CHECK(q.gen_tokens == 32);
  CHECK(q.repetitions == 3);
  CHECK(q.concurrency == std::vector<int>{1, 2, 4});

  SpeedConfig bad;
  bad.preset = "quik";
  CHECK_THROWS_WITH(ApplyPreset(bad),
                    "unknown preset 'quik', did you mean 'quick'? (presets: quick, llama-bench, "
                    "uni-bench, full)");
  SpeedConfig one;
  one.gen_tokens = 1;
  CHECK_THROWS_WITH(ApplyPreset(one), "-n: 1 must be at least 2 (decode speed needs two tokens)");
}

TEST_CASE("speed: measured figures match the mock's pacing at concurrency 1, 8 and 64",
          "[speed][slow]") {
  MockConfig m;
  m.ttft_ms = 200;
  m.decode_tps = 50;
  int tokens_per_event = GENERATE(1, 4);
  m.tokens_per_event = tokens_per_event;
  MockServer mock(m);
  mock.Start();
  SpeedConfig c = Config(mock);
  c.prompt_lengths = {256};
  c.gen_tokens = tokens_per_event == 1 ? 64 : 129;  // 129 = 1 + 32 events of 4
  c.repetitions = 2;
  c.concurrency = {1, 8, 64};
  c.prompts = PromptsMode::kDistinct;
  const SpeedResult r = RunSpeed(c, Quiet);
  CHECK(r.errors() == 0);
  CHECK(r.calibration["method"] == "tokenize");
  for (const char* name : {"tg" , "c1-distinct", "c8-distinct", "c64-distinct"}) {
    const std::string test_name =
        std::string(name) == "tg" ? "tg" + std::to_string(c.gen_tokens) : name;
    const SpeedTest& t = Find(r, test_name.c_str());
    INFO(test_name << " with " << tokens_per_event << " tokens per event");
    const Summary& decode = t.metrics.at("decode_tps");
    const Summary& ttft = t.metrics.at("ttft_ms");
    // Bounds that catch a wrong definition (connection set-up in TTFT, the first chunk counted
    // in decode) yet hold on a loaded 2-core CI machine. How exact the figures are — within
    // 0.5 ms and 0.1% on a quiet machine — is shown by bench/stream_bench, not by a timed test
    // (docs/performance.md).
    CHECK(std::abs(decode.median - 50.0) / 50.0 < 0.02);
    CHECK(std::abs(ttft.median - 200.0) < 10.0);
    const Summary& chunk = t.metrics.at("tokens_per_chunk");
    if (tokens_per_event == 4) {
      CHECK(chunk.median == Approx(129.0 / 33.0));  // the first event carries one token
    } else {
      CHECK(chunk.median == 1.0);
    }
    CHECK(t.metrics.at("completion_tokens").median == c.gen_tokens);
  }
  // Prefill: the calibrated prompt lands on the requested length as the server counts it.
  const SpeedTest& pp = Find(r, "pp256");
  CHECK(pp.metrics.at("prompt_tokens").median == 256);
  CHECK(Find(r, "c8-distinct").metrics.at("aggregate_tps").count == 2);
}

TEST_CASE("speed: every mock fault ends its request with a clear error: the rest goes on",
          "[speed][slow]") {
  struct Case {
    MockFault fault;
    const char* outcome;
    const char* message_start;
  };
  const Case fault_case = GENERATE(
      Case{MockFault::kHttp500, "http_error", "http_error: HTTP 500: mock fault: injected HTTP 500"},
      Case{MockFault::kDrop, "dropped", "dropped: connection dropped after 3 events"},
      Case{MockFault::kStall, "idle_timeout", "idle_timeout: no bytes for 0.5 s (idle timeout) after 3 events"},
      Case{MockFault::kMalformed, "malformed", "malformed: event 3: malformed JSON"});
  MockConfig m;
  m.ttft_ms = 5;
  m.decode_tps = 1000;
  m.fault = fault_case.fault;
  // Chat requests in order: 1 the calibration probe, 2-3 pp64, 4-5 tg16: the fault hits tg16's
  // first request.
  m.fault_on = {4};
  m.fault_after_events = 3;
  m.stall_s = 2;
  MockServer mock(m);
  mock.Start();
  SpeedConfig c = Config(mock);
  c.prompt_lengths = {64};
  c.gen_tokens = 16;
  c.repetitions = 2;
  c.concurrency = {2};
  c.prompts = PromptsMode::kDistinct;
  c.idle_timeout_s = 0.5;
  c.server_kind = ServerKind::kMock;
  const SpeedResult r = RunSpeed(c, Quiet);
  CHECK(r.errors() == 1);
  int64_t failed = 0;
  for (const auto& t : r.tests) {
    for (const auto& rec : t.records) {
      if (!rec.ok()) {
        ++failed;
        CHECK(std::string(OutcomeName(rec.outcome)) == fault_case.outcome);
      }
    }
    if (t.errors > 0) {
      REQUIRE(t.error_messages.size() == 1);
      CHECK_THAT(t.error_messages[0], Catch::StartsWith(fault_case.message_start));
    }
  }
  CHECK(failed == 1);
  // The protocol went on: every test is there with measurements.
  CHECK(Find(r, "pp64").metrics.count("ttft_ms") == 1);
  CHECK(Find(r, "c2-distinct").metrics.at("decode_tps").count == 4);
}

TEST_CASE("speed: a server that ignores ignore_eos is named in the notes", "[speed]") {
  MockConfig m;
  m.ttft_ms = 1;
  m.decode_tps = 0;
  m.answer_tokens = 10;
  m.honor_ignore_eos = false;
  MockServer mock(m);
  mock.Start();
  SpeedConfig c = Config(mock);
  c.prompt_lengths = {32};
  c.gen_tokens = 40;
  c.repetitions = 2;
  const SpeedResult r = RunSpeed(c, Quiet);
  const SpeedTest& tg = Find(r, "tg40");
  REQUIRE(tg.notes.size() == 1);
  CHECK(tg.notes[0] ==
        "2 of 2 requests stopped early (fewest: 10 of 40 tokens): the server did not honour "
        "ignore_eos; decode figures cover the tokens it sent");
}

TEST_CASE("speed: a prompt-cache hit is shown as a cache hit, not as a prefill rate", "[speed]") {
  MockConfig m;
  m.ttft_ms = 5;
  m.prefill_tps = 2000;  // 64 prompt tokens: 32 ms of prefill when not cached
  m.decode_tps = 0;
  m.prompt_cache = true;
  MockServer mock(m);
  mock.Start();
  SpeedConfig c = Config(mock);
  c.prompt_lengths = {16};
  c.gen_tokens = 4;
  c.repetitions = 3;
  c.concurrency = {1};
  c.short_prompt_tokens = 64;
  const SpeedResult r = RunSpeed(c, Quiet);
  // c1-same sends one prompt three times: the first fills the cache, the next two hit it.
  const SpeedTest& same = Find(r, "c1-same");
  CHECK(same.cache_hits == 2);
  CHECK(same.metrics.at("prefill_tps").count == 1);
  CHECK(same.records[1].timings.prompt_n == 1);
  REQUIRE_FALSE(same.notes.empty());
  CHECK(same.notes[0] ==
        "2 of 3 requests were prompt-cache hits (cached 62 of 63 prompt tokens, median): the "
        "server did not process their prompts, so they have no prefill rate");
  const SpeedTest& distinct = Find(r, "c1-distinct");
  CHECK(distinct.cache_hits == 0);
  CHECK(distinct.metrics.at("prefill_tps").count == 3);
}

TEST_CASE("speed: more concurrent requests than the server's slots are marked as queueing",
          "[speed]") {
  MockConfig m;
  m.ttft_ms = 20;
  m.decode_tps = 200;  // 8 tokens: 20 + 35 ms a request, one at a time
  m.slots = 1;
  MockServer mock(m);
  mock.Start();
  SpeedConfig c = Config(mock);
  c.prompt_lengths = {16};
  c.gen_tokens = 8;
  c.repetitions = 1;
  c.concurrency = {1, 4};
  c.prompts = PromptsMode::kDistinct;
  const SpeedResult r = RunSpeed(c, Quiet);
  CHECK(r.server.value("slots", 0) == 1);  // read from /props
  const SpeedTest& c4 = Find(r, "c4-distinct");
  CHECK(c4.ttft_includes_queue);
  REQUIRE(c4.notes.size() == 1);
  CHECK(c4.notes[0] ==
        "TTFT includes waiting for a slot: 4 concurrent requests on a server with 1 slot; queue "
        "ms (TTFT less the server's own prompt time) shows the wait; no prefill rate is shown for "
        "it");
  // The four wait 0, 55, 110 and 165 ms for the slot: the median is about 82 ms.
  CHECK(c4.metrics.at("queue_ms").median > 50);
  CHECK(c4.metrics.at("queue_ms").min < 20);
  const SpeedTest& c1 = Find(r, "c1-distinct");
  CHECK_FALSE(c1.ttft_includes_queue);
  CHECK(c1.notes.empty());
  CHECK(c1.metrics.at("queue_ms").median < 15);
}

TEST_CASE("speed: a prompt cut by the server is flagged", "[speed]") {
  MockConfig m;
  m.ttft_ms = 1;
  m.decode_tps = 0;
  m.max_context = 1000;
  m.hide_context = true;  // a server that cuts silently and does not say its context
  MockServer mock(m);
  mock.Start();
  SpeedConfig c = Config(mock);
  c.prompt_lengths = {3000};
  c.gen_tokens = 8;
  c.repetitions = 1;
  c.concurrency = {};
  const SpeedResult r = RunSpeed(c, Quiet);
  const SpeedTest& pp = Find(r, "pp3000");
  REQUIRE(pp.notes.size() == 1);
  CHECK(pp.notes[0] ==
        "1 prompts came back with far fewer prompt tokens than sent (1000 of 3000): the server "
        "cut the prompt; prefill figures use the server's count");
}

TEST_CASE("speed: a length longer than the server's stated context is skipped, in words",
          "[speed]") {
  MockConfig m;
  m.ttft_ms = 1;
  m.decode_tps = 0;
  m.max_context = 1000;  // stated as max_model_len, as vLLM does
  MockServer mock(m);
  mock.Start();
  SpeedConfig c = Config(mock);
  c.prompt_lengths = {3000, 256};
  c.gen_tokens = 8;
  c.repetitions = 1;
  c.concurrency = {};
  std::vector<std::string> lines;
  const SpeedResult r = RunSpeed(c, [&lines](const std::string& line) { lines.push_back(line); });
  std::vector<std::string> names;
  for (const auto& t : r.tests) names.push_back(t.name);
  CHECK(std::find(names.begin(), names.end(), "pp3000") == names.end());
  CHECK(std::find(names.begin(), names.end(), "pp256") != names.end());
  CHECK(std::find(lines.begin(), lines.end(),
                  "pp3000: skipped, longer than the server's context (1000)") != lines.end());
}

TEST_CASE("speed: the uni-bench preset runs the community protocol", "[speed]") {
  MockConfig m;
  m.ttft_ms = 2;
  m.decode_tps = 0;
  MockServer mock(m);
  mock.Start();
  SpeedConfig c = Config(mock);
  c.preset = "uni-bench";
  c.gen_tokens = 32;
  c.repetitions = 2;
  const SpeedResult r = RunSpeed(c, Quiet);
  std::vector<std::string> names;
  for (const auto& t : r.tests) names.push_back(t.name);
  CHECK(names == std::vector<std::string>{"uni:code", "uni:en_tech", "uni:cn_chat", "uni:cn_essay",
                                          "uni:2way-same", "uni:2way-different"});
  CHECK(Find(r, "uni:2way-same").metrics.at("uni_aggregate_tps").count == 2);
  CHECK(Find(r, "uni:code").metrics.at("uni_decode_tps").count == 2);
}

TEST_CASE("speed: an endpoint that answers nothing is a configuration error", "[speed]") {
  SpeedConfig c;
  c.endpoint = "http://127.0.0.1:1";
  c.capture_environment = false;
  c.connect_timeout_s = 2;
  CHECK_THROWS_WITH(RunSpeed(c, Quiet), Catch::StartsWith("cannot reach the endpoint http://127.0.0.1:1: "));
}

// Against a real llama-server -c 512 (llama.cpp 0.7) whose tokenizer makes ~1,400 tokens of the
// 200-word calibration sample, the probe was refused (HTTP 400 "exceeds the available context
// size"), the calibration fell back to "none" although /tokenize worked, and pp128 was sent as
// 686 tokens (refused too). The sample now shrinks to fit.
TEST_CASE("speed: calibration fits its sample into a small context that refuses longer prompts",
          "[speed]") {
  MockConfig m;
  m.ttft_ms = 1;
  m.decode_tps = 5000;
  m.max_context = 150;
  m.strict_context = true;
  MockServer mock(m);
  mock.Start();
  SpeedConfig c = Config(mock);
  c.prompt_lengths = {64};
  c.gen_tokens = 8;
  c.repetitions = 1;
  c.concurrency = {};
  c.preset = "llama-bench";  // sets nothing given here; no concurrency sweep
  const SpeedResult r = RunSpeed(c, Quiet);
  CHECK(r.calibration["method"] == "tokenize");
  CHECK(r.calibration["chat_overhead_tokens"] == evalrun::kMockTokensPerChat +
                                                     evalrun::kMockTokensPerMessage);
  const SpeedTest& pp = Find(r, "pp64");
  CHECK(pp.records.size() == 1);
  CHECK(r.errors() == 0);
  for (const auto& record : pp.records) CHECK(record.usage.prompt_tokens == 64);
}
