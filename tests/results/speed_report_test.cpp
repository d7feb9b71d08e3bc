#include "results/speed_report.h"

#include "tests/support/catch.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <locale>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

// Results are built by hand from records with chosen timestamps, so every figure is known, and
// SummarizeTest computes the summaries exactly as a real run would.
//
// The markdown goldens live in tests/fixtures/reports/. After an intended change to the layout,
// run this program with EVALRUN_UPDATE_GOLDEN=1 to rewrite them, and review the diff.

namespace evalrun {
namespace {

using json = nlohmann::json;

const TimePoint kT0 = TimePoint{} + std::chrono::hours(1);

int64_t Ms(double ms) {
  return std::llround(ms * 1e6);
}

// A successful streamed request sent at `send`: text starts at first_ms, the last text event
// arrives at last_ms, the stream ends at end_ms, `events` text events evenly spaced between.
RequestRecord Ok(TimePoint send, double first_ms, double last_ms, double end_ms, int64_t completion,
                 int64_t prompt, int64_t events) {
  RequestRecord r;
  r.label = "request";
  r.t_send = send;
  r.first_ns = Ms(first_ms);
  r.first_content_ns = Ms(first_ms);
  r.last_ns = Ms(last_ms);
  r.end_ns = Ms(end_ms);
  for (int64_t i = 0; i < events; ++i) {
    r.text_event_ns.push_back(
        events == 1 ? r.first_ns : r.first_ns + (r.last_ns - r.first_ns) * i / (events - 1));
  }
  r.http_status = 200;
  r.usage_reported = true;
  r.usage.completion_tokens = completion;
  r.usage.prompt_tokens = prompt;
  r.finish_reason = "length";
  return r;
}

RequestRecord Failed(TimePoint send, std::string message,
                     RequestOutcome outcome = RequestOutcome::kHttpError) {
  RequestRecord r;
  r.label = "request";
  r.t_send = send;
  r.http_status = outcome == RequestOutcome::kHttpError ? 500 : 200;
  r.outcome = outcome;
  r.error_message = std::move(message);
  return r;
}

SpeedTest MakeTest(std::string name, std::string kind, std::string prompts, int64_t prompt_tokens,
                   int64_t max_tokens, int concurrency) {
  SpeedTest t;
  t.name = std::move(name);
  t.kind = std::move(kind);
  t.prompts = std::move(prompts);
  t.prompt_tokens = prompt_tokens;
  t.max_tokens = max_tokens;
  t.concurrency = concurrency;
  return t;
}

void Add(SpeedTest& test, int round, RequestRecord record) {
  test.records.push_back(std::move(record));
  test.record_round.push_back(round);
  test.rounds = std::max(test.rounds, round + 1);
}

TimePoint At(double seconds) {
  return kT0 + std::chrono::nanoseconds(std::llround(seconds * 1e9));
}

SpeedResult BaseResult(std::string preset) {
  SpeedResult r;
  r.evalrun_version = "0.1.0";
  r.started_at = "2025-06-01T12:00:00Z";
  r.duration_s = 63.4;
  r.endpoint = "http://127.0.0.1:30000";
  r.preset = std::move(preset);
  r.server = {{"kind", "sglang"}, {"model", "Qwen3.5-27B-AWQ"}, {"build", "0.5.2"}};
  r.settings = {{"thinking", "off"}};
  r.labels = {{"quant", "AWQ-4bit"}, {"kv", "fp8_e5m2"}};
  r.environment = {
      {"scope", "client host"},
      {"nvidia",
       {{"present", true},
        {"gpus", {{{"name", "NVIDIA GeForce RTX 3090"}}, {{"name", "NVIDIA GeForce RTX 3090"}}}}}},
  };
  return r;
}

// pp512: prefill 2560 and 2000 t/s (TTFT 200 and 256 ms); tg128: decode 100 and 125 t/s at two
// tokens per chunk; c2-distinct: two rounds of two requests, the second round losing one.
SpeedResult GenericResult() {
  SpeedResult r = BaseResult("quick");

  SpeedTest pp = MakeTest("pp512", "prefill", "distinct", 512, 1, 1);
  Add(pp, 0, Ok(At(0), 200, 200, 201, 1, 512, 1));
  Add(pp, 1, Ok(At(1), 256, 256, 257, 1, 512, 1));
  SummarizeTest(pp);

  SpeedTest tg = MakeTest("tg128", "decode", "distinct", 16, 128, 1);
  Add(tg, 0, Ok(At(2), 50, 1320, 1321, 128, 16, 64));
  Add(tg, 1, Ok(At(4), 40, 1056, 1057, 128, 16, 64));
  SummarizeTest(tg);

  SpeedTest c2 = MakeTest("c2-distinct", "concurrency", "distinct", 256, 101, 2);
  Add(c2, 0, Ok(At(6), 100, 1100, 1101, 101, 256, 50));
  Add(c2, 0, Ok(At(6), 100, 1350, 1351, 101, 256, 101));
  Add(c2, 1, Ok(At(8), 100, 1100, 1101, 101, 256, 50));
  Add(c2, 1, Failed(At(8.001), "upstream said \"no\" | retry"));
  c2.notes.push_back("reasoning arrived in an unclosed <think> block");
  SummarizeTest(c2);

  r.tests = {pp, tg, c2};
  return r;
}

SpeedResult LlamaBenchResult() {
  SpeedResult r = BaseResult("llama-bench");
  r.server = {
      {"kind", "llama.cpp"}, {"model", "qwen2.5-7b-instruct-q4_k_m.gguf"}, {"build", "b6000"}};
  r.labels.clear();
  r.settings = {{"thinking", "default"}};
  r.environment = {{"scope", "client host"},
                   {"nvidia", {{"present", true}, {"gpus", {{{"name", "NVIDIA H200"}}}}}}};

  SpeedTest pp = MakeTest("pp512", "prefill", "distinct", 512, 1, 1);
  Add(pp, 0, Ok(At(0), 250, 250, 251, 1, 512, 1));  // 2048 t/s
  Add(pp, 1, Ok(At(1), 256, 256, 257, 1, 512, 1));  // 2000 t/s
  Add(pp, 2, Ok(At(2), 320, 320, 321, 1, 512, 1));  // 1600 t/s
  SummarizeTest(pp);

  SpeedTest tg = MakeTest("tg128", "decode", "distinct", 16, 128, 1);
  Add(tg, 0, Ok(At(3), 30, 1300, 1301, 128, 16, 128));  // 100 t/s
  Add(tg, 1, Ok(At(5), 30, 1046, 1047, 128, 16, 128));  // 125 t/s
  Add(tg, 2, Ok(At(7), 30, 1030, 1031, 128, 16, 128));  // 127 t/s
  SummarizeTest(tg);

  r.tests = {pp, tg};
  return r;
}

SpeedTest UniSingle(const std::string& scenario, const std::vector<RequestRecord>& records) {
  SpeedTest t = MakeTest("uni:" + scenario, "uni_single", scenario, 0, 512, 1);
  for (size_t i = 0; i < records.size(); ++i) Add(t, static_cast<int>(i), records[i]);
  SummarizeTest(t);
  return t;
}

SpeedResult UniBenchResult() {
  SpeedResult r = BaseResult("uni-bench");
  r.labels = {{"nvlink", "yes"}};

  // uni decode = (comp - 1) / (end - first).
  SpeedTest code = UniSingle("code", {Ok(At(0), 80, 1990, 2080, 512, 900, 86),         // 255.5
                                      Ok(At(3), 70, 1850, 1970, 512, 900, 86)});       // 268.95
  SpeedTest en = UniSingle("en_tech", {Ok(At(6), 60, 3050, 3160, 512, 700, 256),       // 164.8
                                       Ok(At(10), 60, 3000, 3060, 512, 700, 256)});    // 170.3
  SpeedTest chat = UniSingle("cn_chat", {Ok(At(14), 90, 4000, 4090, 512, 300, 320)});  // 127.75
  SpeedTest essay =
      UniSingle("cn_essay", {Ok(At(20), 100, 6500, 6600, 512, 300, 320),  // 78.6
                             Failed(At(27), "out of memory", RequestOutcome::kStreamError)});

  SpeedTest same = MakeTest("uni:pair-same", "uni_pair", "same", 0, 512, 2);
  Add(same, 0, Ok(At(30), 80, 1900, 2080, 512, 900, 86));
  Add(same, 0, Ok(At(30), 50, 1900, 2050, 512, 900, 86));  // 1022 / 2.0 = 511
  Add(same, 1, Ok(At(33), 80, 1800, 1900, 512, 900, 86));
  Add(same, 1, Ok(At(33), 40, 1800, 1900, 512, 900, 86));  // 1022 / 1.86 = 549.46
  SummarizeTest(same);

  SpeedTest different = MakeTest("uni:pair-different", "uni_pair", "different", 0, 512, 2);
  Add(different, 0, Ok(At(36), 80, 1900, 1980, 512, 900, 86));
  Add(different, 0, Ok(At(36), 90, 1900, 1990, 512, 900, 86));  // 1022 / 1.9 = 537.89
  SummarizeTest(different);

  r.tests = {code, en, chat, essay, same, different};
  return r;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void CheckGolden(const std::string& name, const std::string& actual) {
  const std::string path = std::string(EVALRUN_TEST_FIXTURES) + "/reports/" + name;
  if (std::getenv("EVALRUN_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(path, std::ios::binary) << actual;
  }
  INFO("golden file " << path << " (EVALRUN_UPDATE_GOLDEN=1 rewrites it)");
  CHECK(actual == ReadFile(path));
}

// RFC 4180 reader, just enough to read back what RenderSpeed writes.
std::vector<std::vector<std::string>> ParseCsv(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string cell;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        cell += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cell += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      row.push_back(cell);
      cell.clear();
    } else if (c == '\n') {
      row.push_back(cell);
      rows.push_back(row);
      row.clear();
      cell.clear();
    } else {
      cell += c;
    }
  }
  return rows;
}

std::vector<json> ParseJsonl(const std::string& text) {
  std::vector<json> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(json::parse(line));
  return lines;
}

std::string Trim(const std::string& s) {
  const size_t begin = s.find_first_not_of(' ');
  const size_t end = s.find_last_not_of(' ');
  return begin == std::string::npos ? "" : s.substr(begin, end - begin + 1);
}

// The cells of the markdown table row whose first cell is `first` (no escaped pipes inside).
std::vector<std::string> MdRow(const std::string& md, const std::string& first) {
  std::istringstream in(md);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("| " + first + " ", 0) != 0) continue;
    std::vector<std::string> cells;
    std::istringstream parts(line.substr(1));
    for (std::string cell; std::getline(parts, cell, '|');) cells.push_back(Trim(cell));
    return cells;
  }
  return {};
}

size_t ColumnOf(const std::vector<std::string>& header, const std::string& name) {
  const auto it = std::find(header.begin(), header.end(), name);
  REQUIRE(it != header.end());
  return static_cast<size_t>(it - header.begin());
}

TEST_CASE("speed report: format names", "[results]") {
  const auto [name, expected] = GENERATE(table<std::string, std::optional<SpeedFormat>>({
      {"md", SpeedFormat::kMarkdown},
      {"json", SpeedFormat::kJson},
      {"csv", SpeedFormat::kCsv},
      {"jsonl", SpeedFormat::kJsonl},
      {"markdown", std::nullopt},
      {"MD", std::nullopt},
      {"Json", std::nullopt},
      {"", std::nullopt},
      {"json ", std::nullopt},
      {"tsv", std::nullopt},
      {"jsonlines", std::nullopt},
  }));
  INFO("name '" << name << "'");
  CHECK(ParseSpeedFormat(name) == expected);
}

TEST_CASE("speed report: the format registry lists every name it parses", "[results]") {
  const std::vector<std::string_view> names = SpeedFormatNames();
  CHECK(names == std::vector<std::string_view>{"md", "json", "csv", "jsonl"});
  for (const auto name : names) CHECK(ParseSpeedFormat(name).has_value());
}

TEST_CASE("speed report: markdown goldens", "[results]") {
  SECTION("generic") {
    CheckGolden("generic.md", RenderSpeed(GenericResult(), SpeedFormat::kMarkdown));
  }
  SECTION("llama-bench") {
    CheckGolden("llama_bench.md", RenderSpeed(LlamaBenchResult(), SpeedFormat::kMarkdown));
  }
  SECTION("uni-bench") {
    CheckGolden("uni_bench.md", RenderSpeed(UniBenchResult(), SpeedFormat::kMarkdown));
  }
}

TEST_CASE("speed report: the hand-built results have the figures they were built for",
          "[results]") {
  const SpeedResult generic = GenericResult();
  CHECK(generic.tests[0].metrics.at("prefill_tps").median == Approx(2280));
  CHECK(generic.tests[1].metrics.at("decode_tps").median == Approx(112.5));
  CHECK(generic.tests[1].metrics.at("tokens_per_chunk").median == Approx(2));
  const std::vector<double>& aggregate = generic.tests[2].metrics.at("aggregate_tps").samples;
  REQUIRE(aggregate.size() == 2);
  CHECK(aggregate[0] == Approx(160));
  CHECK(aggregate[1] == Approx(100));
  CHECK(generic.tests[2].errors == 1);

  const SpeedResult llama = LlamaBenchResult();
  CHECK(llama.tests[0].metrics.at("prefill_tps").mean == Approx((2048.0 + 2000 + 1600) / 3));
  CHECK(llama.tests[1].metrics.at("decode_tps").mean == Approx((100.0 + 125 + 127) / 3));

  const SpeedResult uni = UniBenchResult();
  CHECK(uni.tests[0].metrics.at("uni_decode_tps").mean == Approx((511 / 2.0 + 511 / 1.9) / 2));
  CHECK(uni.tests[4].metrics.at("uni_aggregate_tps").mean == Approx((511.0 + 1022 / 1.86) / 2));
}

TEST_CASE("speed report: md, csv, jsonl and json render the same figures", "[results]") {
  const SpeedResult result = GenericResult();
  const json doc = json::parse(RenderSpeed(result, SpeedFormat::kJson));
  const std::string md = RenderSpeed(result, SpeedFormat::kMarkdown);
  const auto csv = ParseCsv(RenderSpeed(result, SpeedFormat::kCsv));
  const auto jsonl = ParseJsonl(RenderSpeed(result, SpeedFormat::kJsonl));
  REQUIRE(csv.size() == result.tests.size() + 1);
  REQUIRE(jsonl.size() == result.tests.size());
  const std::vector<std::string> md_header = MdRow(md, "test");
  REQUIRE(!md_header.empty());

  // metric, markdown column, decimals there
  const std::vector<std::tuple<std::string, std::string, int>> shown = {
      {"ttft_ms", "TTFT ms", 1},
      {"prefill_tps", "prefill t/s", 1},
      {"decode_tps", "decode t/s", 1},
      {"tokens_per_chunk", "tok/chunk", 2},
      {"aggregate_tps", "aggregate t/s", 1},
  };
  for (size_t t = 0; t < result.tests.size(); ++t) {
    const std::string& name = result.tests[t].name;
    const json& metrics = doc["tests"][t]["metrics"];
    const std::vector<std::string> md_row = MdRow(md, name);
    REQUIRE(md_row.size() == md_header.size());
    CHECK(csv[t + 1][ColumnOf(csv[0], "name")] == name);
    CHECK(jsonl[t]["name"] == name);
    for (const auto& [metric, column, decimals] : shown) {
      INFO(name << " " << metric);
      const std::string& md_cell = md_row[ColumnOf(md_header, column)];
      for (const std::string stat : {"count", "mean", "median", "min", "max", "p90", "p99"}) {
        const std::string key = metric + "_" + stat;
        const std::string& csv_cell = csv[t + 1][ColumnOf(csv[0], key)];
        if (!metrics.contains(metric)) {
          CHECK(csv_cell.empty());
          CHECK(jsonl[t][key].is_null());
          continue;
        }
        const double expected = metrics[metric][stat].get<double>();
        CHECK(std::strtod(csv_cell.c_str(), nullptr) == expected);  // exact: round trip
        CHECK(jsonl[t][key].get<double>() == expected);
      }
      if (metrics.contains(metric)) {
        CHECK(md_cell == fmt::format("{:.{}f}", metrics[metric]["median"].get<double>(), decimals));
      } else {
        CHECK(md_cell == "—");
      }
    }
    CHECK(md_row[ColumnOf(md_header, "errors")] ==
          std::to_string(doc["tests"][t]["errors"].get<int>()));
  }
  // And the figures are the ones the records were built for.
  CHECK(doc["tests"][1]["metrics"]["decode_tps"]["median"].get<double>() == Approx(112.5));
  CHECK(MdRow(md, "tg128")[ColumnOf(md_header, "decode t/s")] == "112.5");
  CHECK(MdRow(md, "c2-distinct")[ColumnOf(md_header, "aggregate t/s")] == "130.0");
}

TEST_CASE("speed report: the uni-bench tables show the means json holds", "[results]") {
  const SpeedResult result = UniBenchResult();
  const json doc = SpeedResultToJson(result);
  const std::string md = RenderSpeed(result, SpeedFormat::kMarkdown);
  const std::vector<std::string> header = MdRow(md, "scenario");
  const std::vector<std::string> code = MdRow(md, "code");
  const json& metrics = doc["tests"][0]["metrics"];
  CHECK(code[ColumnOf(header, "label")] == "代码生成");
  CHECK(code[ColumnOf(header, "decode t/s")] ==
        fmt::format("{:.1f}", metrics["uni_decode_tps"]["mean"].get<double>()));
  CHECK(code[ColumnOf(header, "TTFT s")] ==
        fmt::format("{:.3f}", metrics["ttft_ms"]["mean"].get<double>() / 1000));
  CHECK(code[ColumnOf(header, "tok/chunk")] ==
        fmt::format("{:.2f}", metrics["tokens_per_chunk"]["mean"].get<double>()));
  const std::vector<std::string> pair_header = MdRow(md, "prompts");
  const std::vector<std::string> same = MdRow(md, "same");
  CHECK(
      same[ColumnOf(pair_header, "aggregate decode t/s")] ==
      fmt::format("{:.1f}", doc["tests"][4]["metrics"]["uni_aggregate_tps"]["mean"].get<double>()));
  CHECK(same[ColumnOf(pair_header, "n")] == "2");
}

TEST_CASE("speed report: json carries the record, versioned", "[results]") {
  const SpeedResult result = GenericResult();
  const json doc = SpeedResultToJson(result);
  CHECK(doc["schema_version"] == kSpeedSchemaVersion);
  CHECK(doc["kind"] == "evalrun.speed");
  CHECK(doc["errors"] == 1);
  CHECK(doc["labels"] == json({{"quant", "AWQ-4bit"}, {"kv", "fp8_e5m2"}}));
  CHECK(doc["environment"] == result.environment);
  CHECK(doc["server"]["kind"] == "sglang");
  REQUIRE(doc["tests"].size() == 3);
  const json& c2 = doc["tests"][2];
  CHECK(c2["requests"] == 4);
  CHECK(c2["rounds"] == 2);
  CHECK(c2["concurrency"] == 2);
  CHECK(c2["error_messages"] == json({"http_error: upstream said \"no\" | retry"}));
  CHECK(c2["notes"].size() == 1);
  CHECK(c2["metrics"]["aggregate_tps"] == ToJson(result.tests[2].metrics.at("aggregate_tps")));
  // Send offsets count from the first send of their round.
  REQUIRE(c2["records"].size() == 4);
  CHECK(c2["records"][0]["send_offset_ns"] == 0);
  CHECK(c2["records"][1]["send_offset_ns"] == 0);
  CHECK(c2["records"][2]["send_offset_ns"] == 0);
  CHECK(c2["records"][3]["send_offset_ns"] == 1'000'000);
  CHECK(c2["records"][3]["round"] == 1);
  CHECK(c2["records"][3]["outcome"] == "http_error");
  CHECK_FALSE(c2["records"][0].contains("content"));
}

TEST_CASE("speed report: the streamed json is the document, piece by piece", "[results]") {
  for (SpeedResult result : {GenericResult(), LlamaBenchResult(), UniBenchResult()}) {
    // Odd doubles too: integral (must read back as floating point), tiny, huge.
    result.tests[0].metrics["ttft_ms"].samples = {2.0,      1e-7,     1.5e300, 0.1,    -0.5,
                                                  0.000001, 12.345678, 1e8 + 0.25, -3.0,
                                                  123456.789012, 0.3 - 0.1};
    std::string text;
    size_t pieces = 0;
    WriteSpeedJson(result, [&](std::string_view piece) {
      text += piece;
      ++pieces;
    });
    const json streamed = json::parse(text);
    const json document = SpeedResultToJson(result);
    CHECK(streamed == document);
    CHECK(streamed.dump() == document.dump());  // the same types too: 2.0 stays a float
    CHECK(pieces >= 1);
    CHECK(text.back() == '\n');
    // One line per test, metric and record: a person can still read it.
    CHECK(std::count(text.begin(), text.end(), '\n') > static_cast<long>(result.tests.size()));
  }
  // Large arrays go out in pieces of about 64 KB, not as one string.
  SpeedResult big = GenericResult();
  big.tests[1].records[0].text_event_ns.assign(200'000, 123'456'789);
  size_t largest = 0;
  size_t total = 0;
  WriteSpeedJson(big, [&](std::string_view piece) {
    largest = std::max(largest, piece.size());
    total += piece.size();
  });
  CHECK(total > 2'000'000);
  CHECK(largest < 80 * 1024);
  // The other formats come whole, as RenderSpeed gives them.
  std::string md;
  WriteSpeed(big, SpeedFormat::kMarkdown, [&](std::string_view piece) { md += piece; });
  CHECK(md == RenderSpeed(big, SpeedFormat::kMarkdown));
}

TEST_CASE("speed report: absent figures are —, empty and null", "[results]") {
  SpeedResult result = BaseResult("quick");
  SpeedTest dead = MakeTest("c4-same", "concurrency", "same", 128, 64, 4);
  for (int i = 0; i < 4; ++i) Add(dead, 0, Failed(At(0), "connection refused"));
  SummarizeTest(dead);
  result.tests = {dead};
  REQUIRE(dead.metrics.empty());

  const std::string md = RenderSpeed(result, SpeedFormat::kMarkdown);
  CHECK(MdRow(md, "c4-same") ==
        std::vector<std::string>{"c4-same", "128", "64", "4", "—", "—", "—", "—", "—", "—", "4"});
  CHECK(md.find("- c4-same: 4 of 4 requests failed\n") != std::string::npos);
  CHECK(md.find("- c4-same: http_error: connection refused\n") != std::string::npos);

  const auto csv = ParseCsv(RenderSpeed(result, SpeedFormat::kCsv));
  REQUIRE(csv.size() == 2);
  for (size_t c = ColumnOf(csv[0], "ttft_ms_count"); c <= ColumnOf(csv[0], "completion_tokens_p99");
       ++c) {
    INFO(csv[0][c]);
    CHECK(csv[1][c].empty());
  }
  const auto jsonl = ParseJsonl(RenderSpeed(result, SpeedFormat::kJsonl));
  CHECK(jsonl[0]["decode_tps_median"].is_null());
  CHECK(jsonl[0]["ttft_ms_count"].is_null());
  CHECK(jsonl[0]["errors"] == 4);
  CHECK(SpeedResultToJson(result)["tests"][0]["metrics"] == json::object());

  SECTION("and a result that knows nothing about its server or machine still renders") {
    SpeedResult bare;
    bare.tests = {dead};
    const std::string bare_md = RenderSpeed(bare, SpeedFormat::kMarkdown);
    CHECK(bare_md.rfind("## evalrun speed\n\nendpoint: — · preset: — · thinking: — · GPUs: none "
                        "seen (client host)\n\n",
                        0) == 0);
    CHECK(RenderSpeed(SpeedResult{}, SpeedFormat::kMarkdown).find("No tests ran.") !=
          std::string::npos);
    CHECK(RenderSpeed(SpeedResult{}, SpeedFormat::kJsonl).empty());
  }
}

TEST_CASE("speed report: csv has a fixed header and quotes commas and quotes", "[results]") {
  SpeedResult result = GenericResult();
  result.labels = {{"rig", "2x3090, \"NVLink\""}};
  result.tests[2].records[3].error_message = "bad gateway, \"upstream\"";
  SummarizeTest(result.tests[2]);
  const std::string text = RenderSpeed(result, SpeedFormat::kCsv);

  std::string header =
      "name,kind,prompts,prompt_tokens,depth_tokens,max_tokens,concurrency,rounds,"
      "requests,errors";
  for (const char* metric : {"ttft_ms", "ttfo_ms", "e2e_ms", "prefill_tps", "decode_tps", "tpot_ms",
                             "itl_ms", "tokens_per_chunk", "aggregate_tps", "uni_aggregate_tps",
                             "uni_decode_tps", "server_prefill_tps", "server_decode_tps",
                             "draft_acceptance", "prompt_tokens", "completion_tokens"}) {
    for (const char* stat : {"count", "mean", "median", "min", "max", "p90", "p99"}) {
      header += fmt::format(",{}_{}", metric, stat);
    }
  }
  header += ",error_messages,notes,labels,preset,model,server,evalrun_version,started_at\n";
  CHECK(text.rfind(header, 0) == 0);
  CHECK(RenderSpeed(SpeedResult{}, SpeedFormat::kCsv) == header);

  CHECK(text.find(",\"rig=2x3090, \"\"NVLink\"\"\",") != std::string::npos);
  CHECK(text.find(",\"http_error: bad gateway, \"\"upstream\"\"\",") != std::string::npos);
  const auto rows = ParseCsv(text);
  REQUIRE(rows.size() == 4);
  for (const auto& row : rows) CHECK(row.size() == rows[0].size());
  CHECK(rows[3][ColumnOf(rows[0], "labels")] == "rig=2x3090, \"NVLink\"");
  CHECK(rows[3][ColumnOf(rows[0], "error_messages")] == "http_error: bad gateway, \"upstream\"");
  CHECK(rows[3][ColumnOf(rows[0], "notes")] == "reasoning arrived in an unclosed <think> block");
  CHECK(rows[3][ColumnOf(rows[0], "server")] == "sglang 0.5.2");
  CHECK(rows[1][ColumnOf(rows[0], "prompt_tokens_count")] == "2");
}

TEST_CASE("speed report: invalid UTF-8 from a server is replaced, never thrown on", "[results]") {
  SpeedResult result = GenericResult();
  result.server["model"] = std::string("bad\xff model");
  result.labels["note"] = std::string("\xc3\x28");
  result.tests[2].records[3].error_message = std::string("\xfe\xff oops");
  result.tests[2].records[3].content = std::string("\x80");
  result.tests[2].notes.push_back(std::string("cut \xe4\xb8"));
  SummarizeTest(result.tests[2]);
  const std::string replacement = "\xEF\xBF\xBD";

  CHECK(DumpJson(json(std::string("a\xff"))) == "\"a" + replacement + "\"");
  std::string text;
  REQUIRE_NOTHROW(text = DumpJson(SpeedResultToJson(result)));
  CHECK(json::accept(text));  // parses (accept: parse returns a nodiscard value)
  CHECK(text.find(replacement + replacement + " oops") != std::string::npos);
  for (const SpeedFormat format :
       {SpeedFormat::kMarkdown, SpeedFormat::kJson, SpeedFormat::kCsv, SpeedFormat::kJsonl}) {
    REQUIRE_NOTHROW(text = RenderSpeed(result, format));
    CHECK(text.find("bad" + replacement + " model") != std::string::npos);
    CHECK(text.find('\xff') == std::string::npos);
    CHECK(text.find('\xfe') == std::string::npos);
  }
}

// A desktop locale with a decimal comma must not leak into any format (STYLE.md 8).
struct DecimalComma : std::numpunct<char> {
  char do_decimal_point() const override { return ','; }
  char do_thousands_sep() const override { return '.'; }
  std::string do_grouping() const override { return "\3"; }
};

TEST_CASE("speed report: numbers are written in the C locale", "[results]") {
  const SpeedResult result = GenericResult();
  std::vector<std::string> classic;
  for (const SpeedFormat format :
       {SpeedFormat::kMarkdown, SpeedFormat::kJson, SpeedFormat::kCsv, SpeedFormat::kJsonl}) {
    classic.push_back(RenderSpeed(result, format));
  }
  const std::locale previous =
      std::locale::global(std::locale(std::locale::classic(), new DecimalComma));
  std::vector<std::string> comma;
  for (const SpeedFormat format :
       {SpeedFormat::kMarkdown, SpeedFormat::kJson, SpeedFormat::kCsv, SpeedFormat::kJsonl}) {
    comma.push_back(RenderSpeed(result, format));
  }
  std::locale::global(previous);
  CHECK(comma == classic);
  CHECK(classic[0].find("112.5") != std::string::npos);
}

TEST_CASE("speed report: a preset layout is used only when every test fits it", "[results]") {
  SECTION("llama-bench with a concurrency test falls back to the generic table") {
    SpeedResult result = LlamaBenchResult();
    result.tests.push_back(GenericResult().tests[2]);
    const std::string md = RenderSpeed(result, SpeedFormat::kMarkdown);
    CHECK(!MdRow(md, "test").empty());
    CHECK(MdRow(md, "model").empty());
    CHECK(!MdRow(md, "c2-distinct").empty());
    CHECK(!MdRow(md, "pp512").empty());
  }
  SECTION("uni-bench with a prefill test falls back to the generic table") {
    SpeedResult result = UniBenchResult();
    result.tests.push_back(GenericResult().tests[0]);
    const std::string md = RenderSpeed(result, SpeedFormat::kMarkdown);
    CHECK(!MdRow(md, "test").empty());
    CHECK(MdRow(md, "scenario").empty());
    CHECK(!MdRow(md, "uni:code").empty());
  }
  SECTION("the llama-bench layout under another preset is the generic table") {
    SpeedResult result = LlamaBenchResult();
    result.preset = "quick";
    CHECK(MdRow(RenderSpeed(result, SpeedFormat::kMarkdown), "model").empty());
  }
}

}  // namespace
}  // namespace evalrun
