// Bundles (results/bundle.h, docs/bundle-format.md): written canonically, read back exactly
// (numbers, invalid UTF-8, big integers), shape errors naming the member, part hashes naming
// what was changed.
#include "results/bundle.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include "tests/support/catch.h"

#include "core/base64.h"

#include "core/canonical_json.h"
#include "core/error.h"
#include "core/sha256.h"

namespace {

namespace fs = std::filesystem;
using evalrun::Bundle;
using evalrun::RunData;
using nlohmann::json;

struct TempDir {
  fs::path path;
  TempDir() {
    char pattern[] = "/tmp/evalrun-bundle-XXXXXX";
    path = mkdtemp(pattern);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string File(const std::string& name) const { return (path / name).string(); }
};

void Write(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

evalrun::RequestRecord Request(int64_t t_send_ns, int64_t completion) {
  evalrun::RequestRecord r;
  r.label = "t#0";
  r.t_send = evalrun::TimePoint(std::chrono::nanoseconds(t_send_ns));
  r.first_ns = 20'000'000;
  r.first_content_ns = 21'000'000;
  r.last_ns = 120'000'000;
  r.end_ns = 121'000'000;
  r.text_event_ns = {20'000'000, 70'000'000, 120'000'000};
  r.events = 5;
  r.http_status = 200;
  r.finish_reason = "stop";
  r.model = "mock";
  r.usage.prompt_tokens = 31;
  r.usage.completion_tokens = completion;
  r.usage.reasoning_tokens = 0;
  r.usage.raw = {{"prompt_tokens", 31}, {"completion_tokens", completion}};
  r.usage_reported = true;
  r.timings.raw_timings = {{"prompt_per_second", 1234.5}, {"predicted_per_second", 0.1}};
  return r;
}

RunData SampleRun() {
  RunData run;
  run.info.id = "r20260101-000000-abcd";
  run.info.status = evalrun::kRunFinished;
  run.info.created_at = "2026-01-01T00:00:00Z";
  run.info.updated_at = "2026-01-01T00:01:00Z";
  run.info.evalrun_version = "0.1.0";
  run.info.suite_name = "synthetic";
  run.info.suite_spec = "/tmp/s@main";
  run.info.suite_format = "evalrun";
  run.info.suite_commit = std::string(40, 'a');
  run.info.suite_tree = std::string(40, 'b');
  run.info.dimension_weights = {{"math", 2}, {"facts", 1}};
  run.info.endpoint = "http://127.0.0.1:1";
  run.info.model = "mock";
  run.info.labels = {{"quant", "AWQ-4bit"}, {"gpu", "3090"}};
  run.info.planned_tasks = 2;
  for (int i = 0; i < 2; ++i) {
    evalrun::TaskResult t;
    t.task_id = "t" + std::to_string(i);
    t.task_hash = std::string(64, static_cast<char>('0' + i));
    t.dimension = i == 0 ? "math" : "facts";
    t.difficulty = "easy";
    t.weight = 0.1 + 0.2;  // not exactly 0.3: the shortest round-trip digits must survive
    t.grade.score = 1.0 / 3.0;
    t.grade.passed = i == 0;
    t.grade.reason = "expected 7";
    t.grade.evidence = {{"got", "7"}, {"ratio", 2.0 / 3.0}};
    t.grade.grader = "answer_line";
    t.grade.grader_version = "answer_line/1";
    t.output = i == 0 ? "ANSWER: 7" : std::string("bad \xff\xfe bytes \xe2\x82 end");
    t.reasoning = "thinking";
    t.finish_reason = "stop";
    t.wall_s = 0.123456789;
    t.finished_at_ns = 1767225600123456789;  // beyond 2^53
    t.requests.push_back(Request(9'007'199'254'740'993 + i, 17 + i));
    t.requests.back().content = t.output;
    t.requests.back().reasoning = t.reasoning;
    run.tasks.push_back(t);
  }
  run.events.push_back({"2026-01-01T00:00:00Z", "start", "planned 2 tasks"});
  return run;
}

std::vector<evalrun::PlannedTask> SamplePlan(const RunData& run) {
  std::vector<evalrun::PlannedTask> plan;
  for (const auto& t : run.tasks) plan.push_back({t.task_id, t.task_hash});
  return plan;
}

Bundle WriteAndRead(const json& document, const TempDir& dir) {
  const std::string path = dir.File("b.evalrun.json");
  Write(path, evalrun::CanonicalJson(document) + "\n");
  return evalrun::ReadBundle(path);
}

}  // namespace

TEST_CASE("bundle: the result hash is the SHA-256 of the canonical rendering without it",
          "[results][bundle]") {
  const RunData run = SampleRun();
  const json doc = evalrun::MakeBundle(run, SamplePlan(run));
  json without = doc;
  without.erase("result_hash");
  CHECK(doc["result_hash"] == evalrun::Sha256Hex(evalrun::CanonicalJson(without)));
  CHECK(evalrun::ComputeResultHash(doc) == doc["result_hash"].get<std::string>());
  CHECK(doc["result_hash"].get<std::string>().size() == 64);
  CHECK(evalrun::ChangedBundleParts(doc).empty());
  // Deterministic: the same run gives the same bytes.
  CHECK(evalrun::CanonicalJson(evalrun::MakeBundle(run, SamplePlan(run))) ==
        evalrun::CanonicalJson(doc));
}

TEST_CASE("bundle: a run survives the round trip exactly", "[results][bundle]") {
  TempDir dir;
  const RunData run = SampleRun();
  const json doc = evalrun::MakeBundle(run, SamplePlan(run));
  const Bundle b = WriteAndRead(doc, dir);
  CHECK(b.result_hash == doc["result_hash"].get<std::string>());
  CHECK(evalrun::ComputeResultHash(b.document) == b.result_hash);
  REQUIRE(b.plan.size() == 2);
  CHECK(b.plan[1].task_id == "t1");
  CHECK(b.run.info.labels == run.info.labels);
  CHECK(b.run.info.suite_commit == run.info.suite_commit);
  CHECK(b.run.info.dimension_weights == run.info.dimension_weights);
  REQUIRE(b.run.tasks.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    const auto& a = run.tasks[i];
    const auto& r = b.run.tasks[i];
    CHECK(r.output == a.output);  // invalid UTF-8 included, byte for byte
    CHECK(r.weight == a.weight);  // bit-exact doubles
    CHECK(r.wall_s == a.wall_s);
    CHECK(r.grade.score == a.grade.score);
    CHECK(r.grade.evidence == a.grade.evidence);
    CHECK(r.finished_at_ns == a.finished_at_ns);  // beyond 2^53, exact
    REQUIRE(r.requests.size() == 1);
    CHECK(r.requests[0].t_send == a.requests[0].t_send);
    CHECK(r.requests[0].text_event_ns == a.requests[0].text_event_ns);
    CHECK(r.requests[0].usage.completion_tokens == a.requests[0].usage.completion_tokens);
    CHECK(r.requests[0].timings.prompt_per_second == 1234.5);
    CHECK(r.requests[0].content == a.output);
  }
  // What the figures are made from is the same, so the figures are the same.
  CHECK(evalrun::CanonicalJson(evalrun::MakeBundle(b.run, b.plan)) == evalrun::CanonicalJson(doc));
}

TEST_CASE("bundle: invalid UTF-8 is stored as replaced text plus exact base64",
          "[results][bundle]") {
  const RunData run = SampleRun();
  const json doc = evalrun::MakeBundle(run, SamplePlan(run));
  const json& bad = doc["tasks"][1];
  CHECK(bad["output"] == "bad \xEF\xBF\xBD\xEF\xBF\xBD bytes \xEF\xBF\xBD\xEF\xBF\xBD end");
  CHECK(bad["output_base64"] == evalrun::Base64Encode(run.tasks[1].output));
  CHECK_FALSE(doc["tasks"][0].contains("output_base64"));  // valid text has no companion

  SECTION("text that disagrees with its bytes is refused, naming the member") {
    json edited = bad;
    edited["output"] = "bad";
    CHECK_THROWS_WITH(evalrun::BundleText(edited, "output", "tasks[1]"),
                      Catch::StartsWith("tasks[1].output: does not match output_base64"));
  }
  SECTION("base64 round trip") {
    for (const std::string s : {"", "a", "ab", "abc", "abcd", "\xff\x00\x01"}) {
      CHECK(evalrun::Base64Decode(evalrun::Base64Encode(s)) == s);
    }
    CHECK_FALSE(evalrun::Base64Decode("abc").has_value());
    CHECK_FALSE(evalrun::Base64Decode("ab=c").has_value());
  }
}

TEST_CASE("bundle: numbers survive canonical JSON and parsing", "[results][bundle]") {
  const double values[] = {0.1 + 0.2, 1.0 / 3.0, 1e-7, 1e21, 123456.789e10, 5e-324,
                           std::numeric_limits<double>::max(), 2.5, 100.0};
  for (const double v : values) {
    const json back = json::parse(evalrun::CanonicalJson(json(v)));
    CHECK(back.get<double>() == v);
  }
  const int64_t ints[] = {0, -1, 9007199254740992, -9007199254740992};
  for (const int64_t v : ints) {
    const json back = json::parse(evalrun::CanonicalJson(json(v)));
    CHECK(back.is_number_integer());
    CHECK(back.get<int64_t>() == v);
  }
}

TEST_CASE("bundle: shape errors name the file and the member", "[results][bundle]") {
  TempDir dir;
  const RunData run = SampleRun();
  json doc = evalrun::MakeBundle(run, SamplePlan(run));
  const std::string path = dir.File("x.evalrun.json");
  SECTION("a score that is not a number") {
    doc["tasks"][1]["grade"]["score"] = "high";
    Write(path, doc.dump());
    CHECK_THROWS_WITH(evalrun::ReadBundle(path),
                      path + ": tasks[1].grade.score: expected a number");
  }
  SECTION("a missing member") {
    doc["tasks"][0]["requests"][0]["usage"].erase("completion_tokens");
    Write(path, doc.dump());
    CHECK_THROWS_WITH(evalrun::ReadBundle(path),
                      path + ": tasks[0].requests[0].usage.completion_tokens: missing");
  }
  SECTION("another format version") {
    doc["format_version"] = 99;
    Write(path, doc.dump());
    CHECK_THROWS_WITH(evalrun::ReadBundle(path),
                      path + ": format_version: version 99, this evalrun reads 1");
  }
  SECTION("not JSON") {
    Write(path, "{\"format\":");
    CHECK_THROWS_WITH(evalrun::ReadBundle(path), Catch::StartsWith(path + ": not JSON"));
  }
  SECTION("a number no double holds (found by bundle_fuzz: it aborted, uncaught)") {
    Write(path, "{\"format\":\"evalrun-bundle\",\"x\":1e999}");
    CHECK_THROWS_WITH(evalrun::ReadBundle(path),
                      path + ": not JSON ([json.exception.out_of_range.406] number overflow "
                             "parsing '1e999')");
  }
}

TEST_CASE("bundle: part hashes name what was changed", "[results][bundle]") {
  const RunData run = SampleRun();
  json doc = evalrun::MakeBundle(run, SamplePlan(run));
  SECTION("a label") {
    doc["run"]["labels"]["quant"] = "FP16";
    CHECK(evalrun::ChangedBundleParts(doc) == std::vector<std::string>{"run.labels"});
  }
  SECTION("an output character") {
    doc["tasks"][0]["output"] = "ANSWER: 8";
    CHECK(evalrun::ChangedBundleParts(doc) == std::vector<std::string>{"tasks[0] (task 't0')"});
  }
  SECTION("a task hash in the plan") {
    doc["suite"]["tasks"][1]["hash"] = std::string(64, 'f');
    CHECK(evalrun::ChangedBundleParts(doc) ==
          std::vector<std::string>{"suite.tasks[1] (task 't1')"});
  }
  CHECK(evalrun::ComputeResultHash(doc) != doc["result_hash"].get<std::string>());
}

TEST_CASE("bundle: an unfinished run is marked partial", "[results][bundle]") {
  RunData run = SampleRun();
  run.info.status = evalrun::kRunInterrupted;
  run.info.planned_tasks = 5;
  const json doc = evalrun::MakeBundle(run, SamplePlan(run));
  CHECK(doc["run"]["partial"] == true);
  CHECK(doc["run"]["status"] == "interrupted");
  CHECK(doc["summary"]["coverage"]["not_run"] == 3);
}
