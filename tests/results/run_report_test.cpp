#include "results/run_report.h"

#include "tests/support/catch.h"

#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"
#include "core/speed_result.h"
#include "results/speed_report.h"

// Runs are built by hand from grades and request records with chosen timestamps, so every figure
// of the report is known in advance; the hand computation is written next to each assertion.

namespace evalrun {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

int64_t Ms(double ms) {
  return std::llround(ms * 1e6);
}

// A successful request: the first token at first_ms, the last at last_ms, `completion` tokens
// (as the server's usage reports them) after a prompt of `prompt` tokens.
RequestRecord Ok(double first_ms, double last_ms, int64_t completion, int64_t prompt) {
  RequestRecord r;
  r.first_ns = Ms(first_ms);
  r.first_content_ns = Ms(first_ms);
  r.last_ns = Ms(last_ms);
  r.end_ns = Ms(last_ms);
  r.text_event_ns = {r.first_ns, r.last_ns};
  r.http_status = 200;
  r.usage_reported = true;
  r.usage.completion_tokens = completion;
  r.usage.prompt_tokens = prompt;
  r.finish_reason = "stop";
  r.content = "answer";
  return r;
}

RequestRecord Failed(RequestOutcome outcome) {
  RequestRecord r;
  r.outcome = outcome;
  r.error_message = OutcomeName(outcome);
  return r;
}

TaskResult Task(std::string id, std::string dimension, double weight, GradeStatus status,
                double score, bool passed, std::string reason = "") {
  TaskResult t;
  t.task_id = std::move(id);
  t.dimension = std::move(dimension);
  t.weight = weight;
  t.grade.status = status;
  t.grade.score = score;
  t.grade.passed = passed;
  t.grade.reason = std::move(reason);
  return t;
}

RunInfo Info() {
  RunInfo info;
  info.id = "r20261129-231500-3f2a";
  info.status = kRunInterrupted;
  info.created_at = "2026-11-29T23:15:00Z";
  info.evalrun_version = "0.1.0";
  info.suite_name = "zx-bench";
  info.suite_commit = "8e0adf68a1b2c3d4e5f60718293a4b5c6d7e8f90";
  info.endpoint = "http://127.0.0.1:8080";
  info.model = "Qwen3-30B-A3B-Q4_K_M";
  info.server = {{"kind", "llama.cpp"}, {"build", "b6000"}};
  info.environment = {
      {"scope", "client host"},
      {"nvidia",
       {{"gpus", {{{"name", "NVIDIA GeForce RTX 3090"}}, {{"name", "NVIDIA GeForce RTX 3090"}}}}}}};
  return info;
}

// Eight finished tasks of ten planned, in two dimensions weighted math 2 : code 1.
//
//   task  dim   weight status            score  passed  requests
//   m1    math  1      graded            1.0    yes     ok: TTFT 200 ms, 101 tokens in 2 s
//   m2    math  2      graded            0.5    no      ok: TTFT 100 ms, 41 tokens in 1 s
//   m3    math  1.5    budget_exhausted  (0.3)  no      dropped, then ok: TTFT 400, 201 in 4 s
//   m4    math  1      skipped                          none
//   c1a   code  2      graded (group q7) 1.0    yes     ok: TTFT 100, 31 tokens in 0.5 s
//   c1b   code  2      graded (group q7) 0.0    no      ok, no usage: 11 text events in 1 s
//   c2    code  1      graded            0.8    yes     ok: TTFT 300, 21 tokens in 1 s
//   c3    code  1      env_error         (1.0)          connect failed
RunData SmallRun() {
  RunData run;
  run.info = Info();
  run.info.planned_tasks = 10;
  run.info.dimension_weights = {{"math", 2}, {"code", 1}};

  TaskResult m1 = Task("m1", "math", 1, GradeStatus::kGraded, 1.0, true);
  m1.requests = {Ok(200, 2200, 101, 1000)};
  m1.requests[0].usage.reasoning_tokens = 60;
  m1.requests[0].reasoning = "thinking";

  TaskResult m2 = Task("m2", "math", 2, GradeStatus::kGraded, 0.5, false);
  m2.requests = {Ok(100, 1100, 41, 300)};
  m2.requests[0].reasoning = "abc";    // 3 bytes
  m2.requests[0].content = "abcdefg";  // 7 bytes: no reasoning_tokens, so split 3 : 7

  TaskResult m3 = Task("m3", "math", 1.5, GradeStatus::kBudgetExhausted, 0.3, false,
                       "cut by max_tokens before any answer");
  m3.requests = {Failed(RequestOutcome::kDropped), Ok(400, 4400, 201, 2000)};
  m3.requests[1].reasoning = "long thought";
  m3.requests[1].content = "";

  TaskResult m4 = Task("m4", "math", 1, GradeStatus::kSkipped, 0, false, "needs docker");

  TaskResult c1a = Task("c1a", "code", 2, GradeStatus::kGraded, 1.0, true);
  c1a.group = "q7";
  c1a.requests = {Ok(100, 600, 31, 500)};

  TaskResult c1b = Task("c1b", "code", 2, GradeStatus::kGraded, 0.0, false);
  c1b.group = "q7";
  RequestRecord estimated = Ok(100, 1100, 0, 0);
  estimated.usage_reported = false;
  estimated.usage.completion_tokens = -1;
  estimated.usage.prompt_tokens = -1;
  estimated.prompt_tokens_sent = 200;
  estimated.text_event_ns.clear();
  for (int i = 0; i <= 10; ++i) estimated.text_event_ns.push_back(Ms(100 + 100 * i));
  c1b.requests = {estimated};

  TaskResult c2 = Task("c2", "code", 1, GradeStatus::kGraded, 0.8, true);
  c2.requests = {Ok(300, 1300, 21, 600)};
  c2.requests[0].usage.reasoning_tokens = 5;

  TaskResult c3 = Task("c3", "code", 1, GradeStatus::kEnvError, 1.0, false, "connection refused");
  c3.requests = {Failed(RequestOutcome::kConnectFailed)};

  run.tasks = {m1, m2, m3, m4, c1a, c1b, c2, c3};
  run.events = {{"2026-11-29T23:15:00Z", "start", "run started"},
                {"2026-11-30T01:02:03Z", "pause", "endpoint unreachable: waiting up to 30 min"},
                {"2026-11-30T01:02:23Z", "resume", "endpoint back after 20 s"}};
  return run;
}

const DimensionScore& Find(const RunScores& s, const char* dimension) {  // no temporary string
  for (const auto& d : s.dimensions) {
    if (d.dimension == dimension) return d;
  }
  FAIL("no dimension " << dimension);
  throw std::logic_error("unreachable");
}

// A folder for the test's lifetime.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "evalrun-report-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& Path() const { return path_; }

 private:
  std::string path_;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST_CASE("run report: scores of a small run match the hand computation", "[report]") {
  const RunScores s = ScoreRun(SmallRun());
  REQUIRE(s.dimensions.size() == 2);
  CHECK(s.dimensions[0].dimension == "math");  // heavier first
  CHECK(s.dimensions[1].dimension == "code");

  // math items (score, weight): m1 (100, 1), m2 (50, 2), m3 (0, 1.5): budget_exhausted counts 0
  // whatever its grade says; m4 is skipped and left out.
  //   Σw = 4.5, Σw² = 7.25, Σwx = 100 + 100 + 0 = 200, mean = 200 / 4.5 = 400/9 = 44.444...
  //   n_eff = 4.5² / 7.25 = 2.7931
  //   Σw(x - m)² = 3086.42 + 61.73 + 2962.96 = 55000/9;  s² = (55000/9) / (4.5 - 7.25/4.5)
  //     = (55000/9) / (26/9) = 2115.3846;  SE² = s² / n_eff = 757.35992;  SE = 27.520173
  //   CI = 44.444 ± 1.959964 × 27.520173 = [-9.49 -> 0, 98.382992]
  const DimensionScore& math = Find(s, "math");
  CHECK(math.has_score);
  CHECK(math.score == Approx(400.0 / 9));
  CHECK(math.items == 3);
  CHECK(math.effective_items == Approx(4.5 * 4.5 / 7.25));
  CHECK(math.standard_error == Approx(27.52017303772981).epsilon(1e-12));
  CHECK(math.ci95.low == 0);
  CHECK(math.ci95.high == Approx(98.38299244670512).epsilon(1e-12));
  CHECK(math.scored_tasks == 3);
  CHECK(math.zero_tasks == 1);
  CHECK(math.passed == 1);
  CHECK(math.skipped == 1);
  CHECK(math.env_errors == 0);
  CHECK(math.suite_weight == 2);
  CHECK(math.overall_weight == Approx(2.0 / 3));

  // code items: group q7 = c1a and c1b averaged: (100 + 0) / 2 = 50 at weight (2 + 2) / 2 = 2;
  // c2 (80, 1); c3 is an env error and left out.
  //   mean = (100 + 80) / 3 = 60;  Σw = 3, Σw² = 5, n_eff = 1.8
  //   Σw(x - m)² = 2·100 + 1·400 = 600;  s² = 600 / (3 - 5/3) = 450;  SE² = 450 / 1.8 = 250
  //   CI = 60 ± 1.959964 × 15.811388 = [29.010248, 90.989752]
  const DimensionScore& code = Find(s, "code");
  CHECK(code.score == Approx(60));
  CHECK(code.items == 2);
  CHECK(code.scored_tasks == 3);
  CHECK(code.passed == 2);
  CHECK(code.env_errors == 1);
  CHECK(code.standard_error == Approx(std::sqrt(250.0)).epsilon(1e-12));
  CHECK(code.ci95.low == Approx(29.010248384771923).epsilon(1e-12));
  CHECK(code.ci95.high == Approx(90.98975161522807).epsilon(1e-12));

  // overall = 2/3 × 400/9 + 1/3 × 60 = 1340/27 = 49.62963
  //   SE² = (2/3)² × 757.35992 + (1/3)² × 250 = 364.38219;  SE = 19.088797
  //   CI = 49.62963 ± 37.413 = [12.216274, 87.042985]
  CHECK(s.has_score);
  CHECK(s.overall == Approx(1340.0 / 27));
  CHECK(s.overall_standard_error == Approx(19.088797459668918).epsilon(1e-12));
  CHECK(s.overall_ci95.low == Approx(12.216274100498872).epsilon(1e-12));
  CHECK(s.overall_ci95.high == Approx(87.04298515876039).epsilon(1e-12));
  CHECK(s.scored_tasks == 6);
  CHECK(s.passed == 3);
}

TEST_CASE("run report: coverage counts every planned task once", "[report]") {
  const Coverage c = ScoreRun(SmallRun()).coverage;
  CHECK(c.planned == 10);
  CHECK(c.finished == 8);
  CHECK(c.run == 7);     // all but the skipped m4
  CHECK(c.scored == 6);  // m1 m2 m3 c1a c1b c2
  CHECK(c.graded == 5);  // m3 is counted as 0, not graded
  CHECK(c.zero == 1);
  CHECK(c.skipped == 1);
  CHECK(c.env_errors == 1);
  CHECK(c.not_run == 2);
  CHECK(c.by_status.at("graded") == 5);
  CHECK(c.by_status.at("budget_exhausted") == 1);
  REQUIRE(c.skipped_reasons.size() == 1);
  CHECK(c.skipped_reasons[0].reason == "needs docker");
  CHECK(c.skipped_reasons[0].count == 1);
  REQUIRE(c.env_error_reasons.size() == 1);
  CHECK(c.env_error_reasons[0].reason == "connection refused");

  SECTION("reasons are grouped, the most frequent first") {
    RunData run;
    for (const char* reason :
         {"no sandbox", "needs docker", "no sandbox", "needs docker", "no sandbox", "needs node"}) {
      run.tasks.push_back(Task("t", "d", 1, GradeStatus::kSkipped, 0, false, reason));
    }
    run.info.planned_tasks = 4;  // fewer planned than finished: never a negative "not run"
    const Coverage grouped = ScoreRun(run).coverage;
    REQUIRE(grouped.skipped_reasons.size() == 3);
    CHECK(grouped.skipped_reasons[0].reason == "no sandbox");
    CHECK(grouped.skipped_reasons[0].count == 3);
    CHECK(grouped.skipped_reasons[1].reason == "needs docker");
    CHECK(grouped.skipped_reasons[1].count == 2);
    CHECK(grouped.skipped_reasons[2].reason == "needs node");
    CHECK(grouped.not_run == 0);
    CHECK_FALSE(ScoreRun(run).has_score);
  }
}

TEST_CASE("run report: reasoning and answer tokens are counted apart", "[report]") {
  const TokenTotals t = ScoreRun(SmallRun()).tokens;
  // 8 requests: m1, m2, m3 (2), c1a, c1b, c2, c3.
  CHECK(t.requests == 8);
  // prompt: 1000 + 300 + 2000 + 500 + 200 (c1b: sent, no usage) + 600; failed ones report none.
  CHECK(t.prompt == 4600);
  // reasoning: m1 60 (reported) + m2 round(41 × 3/10) = 12 (estimated) + m3 201 (only reasoning
  // text) + c2 5 (reported) = 278; c1a and c1b have no reasoning text.
  CHECK(t.reasoning == 278);
  // answer: m1 41 + m2 29 + c1a 31 + c1b 11 (text events) + c2 16 = 128.
  CHECK(t.answer == 128);
  // estimated: m2 (split by text), c1b and the two failed requests (no usage from the server).
  CHECK(t.estimated_requests == 4);

  SECTION("a request stored without its text is split by the task's text") {
    RunData run;
    TaskResult task = Task("t", "d", 1, GradeStatus::kGraded, 1, true);
    task.reasoning = "bbbbbbbbbbbb";  // 12 bytes
    task.output = "aaaa";             // 4 bytes: 3/4 of the tokens are reasoning
    task.requests = {Ok(100, 1100, 41, 10)};
    task.requests[0].content.clear();
    run.tasks = {task};
    const TokenTotals split = ScoreRun(run).tokens;
    CHECK(split.reasoning == 31);  // round(41 × 0.75)
    CHECK(split.answer == 10);
    CHECK(split.estimated_requests == 1);
  }
}

TEST_CASE("run report: speed across tasks takes one sample per task from its ok requests",
          "[report]") {
  const TaskSpeed speed = ScoreRun(SmallRun()).speed;
  CHECK(speed.ok_requests == 6);
  CHECK(speed.failed_requests == 2);
  // decode = (completion - 1) / (t_last - t_first): m1 100/2 = 50, m2 40/1 = 40, m3 200/4 = 50,
  // c1a 30/0.5 = 60, c1b 10/1 = 10, c2 20/1 = 20; in task order.
  CHECK(speed.decode_tps.samples == std::vector<double>{50, 40, 50, 60, 10, 20});
  CHECK(speed.decode_tps.median == Approx(45));
  CHECK(speed.ttft_ms.samples == std::vector<double>{200, 100, 400, 100, 100, 300});
  CHECK(speed.ttft_ms.median == Approx(150));
  // prefill = prompt / TTFT: 1000/0.2, 300/0.1, 2000/0.4, 500/0.1, 200/0.1, 600/0.3.
  CHECK(speed.prefill_tps.samples == std::vector<double>{5000, 3000, 5000, 5000, 2000, 2000});
  REQUIRE(speed.prefill_points.size() == 6);
  CHECK(speed.prefill_points[2].prompt_tokens == 2000);
  CHECK(speed.prefill_points[2].prefill_tps == Approx(5000));

  SECTION("a task of several requests contributes their mean") {
    RunData run;
    TaskResult agent = Task("a", "agent", 1, GradeStatus::kGraded, 1, true);
    agent.requests = {Ok(100, 1100, 11, 100), Ok(300, 1300, 31, 100),
                      Failed(RequestOutcome::kHttpError)};
    run.tasks = {agent};
    const TaskSpeed mean = ScoreRun(run).speed;
    CHECK(mean.decode_tps.samples == std::vector<double>{20});  // (10 + 30) / 2
    CHECK(mean.ttft_ms.samples == std::vector<double>{200});
    CHECK(mean.prefill_points.size() == 2);
  }
}

TEST_CASE("run report: intervals contain the estimate and stay within 0 to 100", "[report]") {
  SECTION("all scores equal: the interval is the point") {
    RunData run;
    for (const char* dim : {"a", "b"}) {
      for (double weight : {1.0, 2.0, 2.5}) {
        run.tasks.push_back(Task("t", dim, weight, GradeStatus::kGraded, 0.7, true));
      }
    }
    const RunScores s = ScoreRun(run);
    for (const auto& d : s.dimensions) {
      CHECK(d.score == Approx(70));
      CHECK(d.ci95.low == d.score);
      CHECK(d.ci95.high == d.score);
    }
    CHECK(s.overall == Approx(70));
    CHECK(s.overall_ci95.low == s.overall);
    CHECK(s.overall_ci95.high == s.overall);
  }
  SECTION("a single item says nothing about the spread: SE 50, clipped to the whole scale") {
    RunData run;
    run.tasks = {Task("t", "a", 1, GradeStatus::kGraded, 0.5, false)};
    const RunScores s = ScoreRun(run);
    CHECK(s.dimensions[0].standard_error == 50);
    CHECK(s.dimensions[0].ci95.low == 0);
    CHECK(s.dimensions[0].ci95.high == 100);
  }
  SECTION("varied scores: low <= estimate <= high, all within 0 to 100") {
    RunData run;
    const double scores[] = {0, 1, 0.25, 1, 1, 0.9, 0, 0.6, 1, 1, 1, 0.95};
    for (size_t i = 0; i < std::size(scores); ++i) {
      run.tasks.push_back(Task("t" + std::to_string(i), i % 3 == 0 ? "x" : "y",
                               1 + static_cast<double>(i % 4) * 0.5, GradeStatus::kGraded,
                               scores[i], scores[i] >= 0.6));
    }
    const RunScores s = ScoreRun(run);
    for (const auto& d : s.dimensions) {
      CHECK(d.ci95.low <= d.score);
      CHECK(d.score <= d.ci95.high);
      CHECK(d.ci95.low >= 0);
      CHECK(d.ci95.high <= 100);
      CHECK(d.ci95.high > d.ci95.low);
    }
    CHECK(s.overall_ci95.low <= s.overall);
    CHECK(s.overall <= s.overall_ci95.high);
    CHECK(s.overall_ci95.low >= 0);
    CHECK(s.overall_ci95.high <= 100);
  }
}

TEST_CASE("run report: dimension weights", "[report]") {
  RunData run;
  run.tasks = {Task("a1", "a", 1, GradeStatus::kGraded, 1, true),
               Task("a2", "a", 1, GradeStatus::kGraded, 1, true),
               Task("b1", "b", 1, GradeStatus::kGraded, 0, false),
               Task("b2", "b", 1, GradeStatus::kGraded, 0, false)};
  SECTION("an empty map weighs dimensions equally") {
    const RunScores s = ScoreRun(run);
    CHECK(s.overall == Approx(50));
    CHECK(s.dimensions[0].overall_weight == Approx(0.5));
  }
  SECTION("weights renormalise over the dimensions with a score") {
    run.info.dimension_weights = {{"a", 0.1}, {"b", 0.3}, {"never_run", 0.6}};
    const RunScores s = ScoreRun(run);
    CHECK(s.overall == Approx(25));  // 0.1/0.4 × 100 + 0.3/0.4 × 0
    CHECK(s.dimensions[0].dimension == "b");
  }
  SECTION("a dimension the suite does not weigh is shown but left out of the overall") {
    run.info.dimension_weights = {{"a", 1}};
    const RunScores s = ScoreRun(run);
    CHECK(s.overall == Approx(100));
    CHECK(Find(s, "b").has_score);
    CHECK(Find(s, "b").overall_weight == 0);
    CHECK(RenderRunMarkdown(run).find("| b ") != std::string::npos);
  }
}

TEST_CASE("run report: a zx-bench run says whether its overall is zx-bench's", "[report]") {
  RunData run;
  run.info = Info();
  run.info.suite_format = "zxbench";
  run.info.dimension_weights = {{"program", 0.17}, {"reasoning_math", 0.12},
                                {"hallucination_resistance", 0.12}};
  run.info.planned_tasks = 6;
  run.tasks = {Task("p1", "program", 1, GradeStatus::kGraded, 1, true),
               Task("p2", "program", 1, GradeStatus::kGraded, 0, false),
               Task("r1", "reasoning_math", 1, GradeStatus::kGraded, 1, true),
               Task("h1", "hallucination_resistance", 1, GradeStatus::kGraded, 1, true),
               // zx-bench's official runs leave draft entries out too: no gap
               Task("r2", "reasoning_math", 1, GradeStatus::kSkipped, 0, false,
                    "status 'draft': only valid entries run officially"),
               // an empty reply and an environment error are left out by zx-bench as well
               Task("p3", "program", 1, GradeStatus::kEnvError, 0, false, "sandbox failed")};
  SECTION("every weighted dimension scored, nothing skipped: comparable") {
    const RunScores s = ScoreRun(run);
    CHECK(s.comparability.applies);
    CHECK(s.comparability.complete);
    const std::string expected =
        "comparable with zx-bench's overall: every dimension scored, no entry left out";
    CHECK(ComparabilityText(s.comparability) == expected);
    CHECK(RenderRunMarkdown(run).find("**zx-bench:** " + expected) != std::string::npos);
    CHECK(RenderCardSvg(run).find("zx-bench: comparable with zx-bench&#39;s overall") !=
          std::string::npos);
  }
  SECTION("a dimension with no score and entries skipped: partial, naming them") {
    run.tasks[3] = Task("h1", "hallucination_resistance", 1, GradeStatus::kSkipped, 0, false,
                        "needs a judge model (zx-bench grades 'hallucination_resistance' with "
                        "an LLM judge)");
    run.tasks.push_back(Task("p4", "program", 1, GradeStatus::kSkipped, 0, false,
                             "needs the Docker image python:3.12-alpine"));
    run.info.planned_tasks = 8;  // one planned task never ran
    const RunScores s = ScoreRun(run);
    CHECK_FALSE(s.comparability.complete);
    CHECK(s.comparability.left_out == 3);
    const std::string expected =
        "partial, not zx-bench's overall: 3 entries left out (hallucination_resistance: no score "
        "(1 left out); program: 1 of 4 left out; 1 planned tasks not run)";
    CHECK(ComparabilityText(s.comparability) == expected);
    std::string escaped = expected;  // HTML: the apostrophe is a character reference
    escaped.replace(escaped.find('\''), 1, "&#39;");
    CHECK(RenderRunHtml(run).find("<strong>zx-bench:</strong> " + escaped) != std::string::npos);
    CHECK(RenderCardSvg(run).find("zx-bench: partial, not zx-bench&#39;s overall") !=
          std::string::npos);
  }
  SECTION("a weighted dimension with no entries at all") {
    run.info.dimension_weights["agent_loop"] = 0.03;
    CHECK(ComparabilityText(ScoreRun(run).comparability) ==
          "partial, not zx-bench's overall: 0 entries left out (agent_loop: no entries)");
  }
  SECTION("other suites say nothing") {
    run.info.suite_format = "evalrun";
    CHECK_FALSE(ScoreRun(run).comparability.applies);
    CHECK(RenderRunMarkdown(run).find("zx-bench:**") == std::string::npos);
  }
}

TEST_CASE("run report: markdown shows the score with its interval and coverage beside it",
          "[report]") {
  const std::string md = RenderRunMarkdown(SmallRun());
  CHECK(md.rfind("# evalrun report — Qwen3-30B-A3B-Q4_K_M\n", 0) == 0);
  CHECK_THAT(md, Catch::Contains("suite: zx-bench@8e0adf68a1b2 · server: llama.cpp b6000 · "
                                 "GPUs: 2× NVIDIA GeForce RTX 3090 (client host)"));
  CHECK_THAT(md, Catch::Contains("**Overall: 49.6 / 100** (95% CI 12.2–87.0) · coverage: 6 scored "
                                 "of 10 planned · 1 skipped · 1 env error · 2 not run · pass rate "
                                 "50.0% (3/6)"));
  CHECK_THAT(md,
             Catch::Contains("| math      |  66.7% |  44.4 |  0.0–98.4 |     3 | 33.3% (1/3) |"));
  CHECK_THAT(md, Catch::Contains("| decode t/s  |     6 |   45.0 |"));
  CHECK_THAT(md, Catch::Contains("| reasoning |   278 |"));
  CHECK_THAT(md, Catch::Contains("estimated for 4 of 8 requests"));
  CHECK_THAT(md, Catch::Contains("- 1 × needs docker\n"));
  CHECK_THAT(md, Catch::Contains("counted as 0: budget_exhausted 1"));
  CHECK_THAT(md, Catch::Contains("| pause  | endpoint unreachable: waiting up to 30 min |"));
  CHECK_THAT(md, Catch::Contains("\nresult hash: (not yet exported)\n"));
  CHECK(md.find("Speed protocol") == std::string::npos);  // speed is null

  SECTION("unpinned suites say so") {
    RunData run = SmallRun();
    run.info.suite_commit.clear();
    run.info.suite_name = "smoke";
    CHECK_THAT(RenderRunMarkdown(run), Catch::Contains("suite: smoke (unpinned)"));
  }
}

SpeedResult SampleSpeed() {
  SpeedResult r;
  r.preset = "quick";
  SpeedTest pp;
  pp.name = "pp512";
  pp.kind = "prefill";
  pp.prompt_tokens = 512;
  pp.max_tokens = 1;
  for (int i = 0; i < 3; ++i) {
    pp.records.push_back(Ok(200 + 10 * i, 200 + 10 * i, 1, 512));
    pp.record_round.push_back(i);
  }
  SummarizeTest(pp);
  SpeedTest tg;
  tg.name = "tg128";
  tg.kind = "decode";
  tg.prompt_tokens = 16;
  tg.max_tokens = 128;
  for (int i = 0; i < 3; ++i) {
    tg.records.push_back(Ok(30, 1300 + 100 * i, 128, 16));
    tg.record_round.push_back(i);
  }
  SummarizeTest(tg);
  r.tests = {pp, tg};
  return r;
}

TEST_CASE("run report: the speed protocol table comes from the stored speed JSON", "[report]") {
  RunData run = SmallRun();
  run.speed = SpeedResultToJson(SampleSpeed());
  const std::string md = RenderRunMarkdown(run);
  CHECK_THAT(md, Catch::Contains("## Speed protocol (preset quick)"));
  // pp512: TTFT 200, 210, 220 -> median 210 ms; prefill 512 / 0.21 = 2438.1 t/s.
  CHECK_THAT(md, Catch::Contains("| pp512 |    512 |   1 |    1 |     210 |        — |      2438.1 "
                                 "|          — |             — |  0 / 3 |"));
  // tg128: decode 127 / 1.37 s (the median of 1.27, 1.37, 1.47) = 92.7 t/s.
  CHECK_THAT(md, Catch::Contains("| tg128 |     16 | 128 |    1 |      30 |        — |       533.3 "
                                 "|       92.7 |             — |  0 / 3 |"));
  const std::string html = RenderRunHtml(run);
  CHECK_THAT(html, Catch::Contains("<h2>Speed protocol (preset quick)</h2>"));
  CHECK_THAT(html, Catch::Contains("<td>pp512</td>"));
}

TEST_CASE("run report: the card leads with the protocol, then names the task medians and the "
          "setup", "[report][card]") {
  RunData run = SmallRun();
  run.info.status = kRunFinished;
  run.info.labels = {{"quant", "Q4_K_M"}, {"kv", "q8_0"}, {"spec", "mtp"}};
  run.info.server = {{"kind", "llama.cpp"}, {"build", "b6000"}, {"context", 32768}, {"slots", 1}};
  SpeedResult speed = SampleSpeed();
  // c2 and c4 with distinct prompts: the card shows the highest level's aggregate. Each round:
  // two (or four) requests, first token at 30 ms, 65 tokens ending at 1030 ms: 64 x N tokens in
  // one second.
  for (int level : {2, 4}) {
    SpeedTest c;
    c.name = "c" + std::to_string(level) + "-distinct";
    c.kind = "concurrency";
    c.prompts = "distinct";
    c.concurrency = level;
    c.max_tokens = 65;
    for (int round = 0; round < 2; ++round) {
      for (int i = 0; i < level; ++i) {
        c.records.push_back(Ok(30, 1030, 65, 16));
        c.record_round.push_back(round);
      }
    }
    SummarizeTest(c);
    speed.tests.push_back(c);
  }
  run.speed = SpeedResultToJson(speed);
  const std::string svg = RenderCardSvg(run);
  CHECK_THAT(svg, Catch::Contains(">speed protocol: pp512 2438 ± 116 t/s · tg128 92.7 ± 6.8 t/s · "
                                  "c4 aggregate 256 ± 0 t/s<"));
  CHECK_THAT(svg, Catch::Contains(">task medians (the suite&#39;s own prompts): decode 45.0 t/s"));
  CHECK_THAT(svg, Catch::Contains(
                      ">kv=q8_0 · quant=Q4_K_M · spec=mtp · context 32768 · 1 slot · llama.cpp "
                      "b6000<"));

  SECTION("--no-speed says so instead of showing task medians as the protocol") {
    run.speed = nullptr;
    const std::string card = RenderCardSvg(run);
    CHECK_THAT(card, Catch::Contains(">speed protocol not run (--no-speed)<"));
    CHECK(card.find("speed protocol:") == std::string::npos);
    CHECK_THAT(card, Catch::Contains(">task medians (the suite&#39;s own prompts): "));
  }
  SECTION("a failed protocol says it failed") {
    run.speed = nullptr;
    run.events.push_back({"2026-11-29T23:40:00Z", "speed", "speed protocol failed: refused"});
    CHECK_THAT(RenderCardSvg(run),
               Catch::Contains(">speed protocol failed (the report has the reason)<"));
  }
  SECTION("no labels, context or build") {
    run.info.labels.clear();
    run.info.server = json::object();
    CHECK_THAT(RenderCardSvg(run),
               Catch::Contains(">no labels, context or server build reported<"));
  }
}

TEST_CASE("run report: html is self-contained with its charts inline", "[report]") {
  RunData run = SmallRun();
  run.speed = SpeedResultToJson(SampleSpeed());
  const std::string html = RenderRunHtml(run);
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(Count(html, "<svg class=\"chart\"") == 4);
  CHECK(Count(html, "<script") == 1);
  CHECK_THAT(html,
             Catch::Contains("Content-Security-Policy\" content=\"default-src &#39;none&#39;"));
  // Nothing to fetch: no URL but the run's endpoint, shown as text.
  CHECK(Count(html, "http://") == 1);
  CHECK(Count(html, "https://") == 0);
  CHECK(html.find(" src=") == std::string::npos);
  CHECK(html.find(" href=") == std::string::npos);
  CHECK(html.find("@import") == std::string::npos);
  CHECK_THAT(html, Catch::Contains("<strong>Overall: 49.6 / 100</strong> (95% CI 12.2–87.0)"));
  CHECK_THAT(html, Catch::Contains("result hash: (not yet exported)"));

  const std::string svg = RenderCardSvg(run);
  CHECK(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\" ", 0) == 0);
  CHECK_THAT(svg, Catch::Contains(">Qwen3-30B-A3B-Q4_K_M</text>"));
  CHECK_THAT(svg, Catch::Contains(">2× NVIDIA GeForce RTX 3090 (client host) · llama.cpp b6000<"));
  CHECK_THAT(svg, Catch::Contains(
                      ">49.6</tspan><tspan font-size=\"15\"> / 100 overall · 95% CI 12.2–87.0<"));
  // The protocol leads: pp512 210 ms -> 2438 t/s (2560.0, 2438.1, 2327.3: stddev 116.4);
  // tg128 92.7 t/s median; no concurrency test. The task medians follow, named as such.
  CHECK_THAT(svg, Catch::Contains(">speed protocol: pp512 2438 ± 116 t/s · tg128 92.7 ± 6.8 t/s<"));
  CHECK_THAT(svg, Catch::Contains(
                      ">task medians (the suite&#39;s own prompts): decode 45.0 t/s · prefill "
                      "4000 t/s · TTFT 150 ms<"));
  CHECK_THAT(svg, Catch::Contains(">coverage: 6 scored of 10 planned · 1 skipped · 1 env error"));
  CHECK_THAT(svg, Catch::Contains(">result hash: —<"));
}

// Every byte is valid UTF-8 (nlohmann refuses to dump anything else), and no control character
// or XML non-character is left.
void CheckCleanText(const std::string& text) {
  CHECK_NOTHROW(json(text).dump());
  CHECK(text.find("\xEF\xBF\xBE") == std::string::npos);
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 && c != '\n' && c != '\t') {
      FAIL("control character " << static_cast<int>(byte));
    }
  }
}

TEST_CASE("run report: hostile text never appears unescaped", "[report]") {
  const std::string script = "</script><script>alert(1)</script>";
  const std::string svg_tag = "<svg onload=alert(1)>";
  const std::string attribute = "\"><img src=x onerror=alert(1)>";
  const std::string bad = "bad \xff\xfe utf8 \xc3 \x01 nonchar \xEF\xBF\xBE end";
  const std::string all = script + svg_tag + attribute + bad + " [link](javascript:x) `code` |";

  RunData run = SmallRun();
  run.info.model = all;
  run.info.server = {{"kind", all}, {"build", svg_tag}};
  run.info.environment = {{"scope", all}, {"nvidia", {{"gpus", {{{"name", all}}}}}}};
  run.info.suite_name = all;
  run.info.suite_commit = script;
  run.info.id = all;
  run.info.endpoint = all;
  run.info.labels = {{all, all}};
  run.info.dimension_weights[all] = 1;
  for (auto& task : run.tasks) {
    task.task_id = all;
    task.difficulty = all;
    task.grade.reason = all;
    task.output = all;
    task.reasoning = all;
  }
  run.tasks[0].dimension = all;
  run.events.push_back({all, all, all});
  SpeedResult speed = SampleSpeed();
  speed.preset = all;
  speed.tests[0].name = all;
  speed.tests[0].prompts = all;
  run.speed = SpeedResultToJson(speed);

  const std::string html = RenderRunHtml(run);
  const std::string card = RenderCardSvg(run);
  const std::string md = RenderRunMarkdown(run);

  for (const std::string* text : {&html, &card}) {
    CHECK(text->find("<script>alert") == std::string::npos);
    CHECK(text->find("</script><") == std::string::npos);
    CHECK(text->find("<svg onload") == std::string::npos);
    CHECK(text->find("<img") == std::string::npos);
    CheckCleanText(*text);
  }
  CHECK(Count(html, "<script") == 1);  // the chart check, nothing else
  CHECK(Count(html, "</script>") == 1);
  CHECK(Count(card, "<script") == 0);
  CHECK(Count(html, "<svg") == 4);
  CHECK(Count(card, "<svg") == 1);
  // Shown, escaped.
  CHECK_THAT(html, Catch::Contains("&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;"));
  CHECK_THAT(html, Catch::Contains("&quot;&gt;&lt;img src=x onerror=alert(1)&gt;"));
  CHECK_THAT(card, Catch::Contains("&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;"));
  CHECK_THAT(html, Catch::Contains("bad \xEF\xBF\xBD\xEF\xBF\xBD utf8"));

  for (size_t at = md.find('<'); at != std::string::npos; at = md.find('<', at + 1)) {
    CHECK(md[at - 1] == '\\');
  }
  CHECK(md.find("[link](") == std::string::npos);
  CHECK_THAT(md, Catch::Contains("\\</script\\>\\<script\\>alert(1)\\</script\\>"));
  CheckCleanText(md);
}

TEST_CASE("run report: a run with nothing finished still renders", "[report]") {
  RunData run;
  run.info.planned_tasks = 3;
  const RunScores s = ScoreRun(run);
  CHECK_FALSE(s.has_score);
  CHECK(s.coverage.not_run == 3);
  CHECK_THAT(RenderRunMarkdown(run), Catch::Contains("**Overall: no score** (no task was scored)"));
  const std::string html = RenderRunHtml(run);
  CHECK(Count(html, "<svg class=\"chart\"") == 4);
  CHECK_THAT(html, Catch::Contains("no successful request measured this"));
  CHECK_THAT(RenderCardSvg(run), Catch::Contains("no score: no task was scored"));
}

TEST_CASE("run report: the three files are written and failures name the path", "[report]") {
  const TempDir temp;
  const std::string dir = temp.Path() + "/out/nested";
  WriteReportFiles(SmallRun(), dir);
  for (const char* name : kReportFileNames) {
    CHECK(fs::file_size(dir + "/" + name) > 1000);
  }
  CHECK(ReadFile(dir + "/report.md") == RenderRunMarkdown(SmallRun()));

  SECTION("a file where the folder should be") {
    std::ofstream(temp.Path() + "/file") << "x";
    const std::string bad = temp.Path() + "/file/sub";
    CHECK_THROWS_WITH(WriteReportFiles(SmallRun(), bad),
                      "cannot create the report folder " + bad + ": Not a directory");
  }
  SECTION("a folder where a file should be") {
    fs::create_directories(temp.Path() + "/taken/report.html");
    CHECK_THROWS_AS(WriteReportFiles(SmallRun(), temp.Path() + "/taken"), Error);
    CHECK_THROWS_WITH(WriteReportFiles(SmallRun(), temp.Path() + "/taken"),
                      "cannot write " + temp.Path() + "/taken/report.html: Is a directory");
  }
}

TEST_CASE("run report: a thousand-task run scores and renders in well under a second", "[report]") {
  RunData run;
  run.info = Info();
  run.info.planned_tasks = 1000;
  for (int i = 0; i < 1000; ++i) {
    TaskResult t =
        Task(fmt::format("task-{:04}", i), fmt::format("dim{}", i % 11), 1 + (i % 4) * 0.5,
             i % 17 == 0 ? GradeStatus::kNoAnswer : GradeStatus::kGraded, (i % 10) / 9.0,
             i % 10 >= 6, "reason text for the task");
    if (i % 5 == 0) t.group = fmt::format("g{}", i / 10);
    for (int k = 0; k < 3; ++k) {
      t.requests.push_back(Ok(100 + i % 300, 2000 + i % 700 + k * 10, 300 + i % 50, 400 + i * 7));
    }
    run.tasks.push_back(std::move(t));
  }
  run.speed = SpeedResultToJson(SampleSpeed());
  const auto start = std::chrono::steady_clock::now();
  const RunScores s = ScoreRun(run);
  const size_t bytes =
      RenderRunMarkdown(run).size() + RenderRunHtml(run).size() + RenderCardSvg(run).size();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(s.dimensions.size() == 11);
  CHECK(s.speed.prefill_points.size() == 3000);
  CHECK(bytes > 100000);
  CHECK(seconds < 1.0);
}

// ---- headless Chromium -----------------------------------------------------------------------

constexpr const char* kChromium = "/usr/bin/chromium";

// Runs `command` through the shell; its exit status.
int Shell(const std::string& command) {
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The lines of chromium's log that are console messages or uncaught errors from the page.
// Chromium logs every console message as "INFO:CONSOLE:<line>] "<text>", source: <url>" without
// its level, so any message from the page counts: the report's script logs nothing.
std::vector<std::string> PageConsoleLines(const std::string& log) {
  std::vector<std::string> lines;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    if (line.find(":CONSOLE") != std::string::npos || line.find("Uncaught") != std::string::npos) {
      lines.push_back(line);
    }
  }
  return lines;
}

TEST_CASE("run report: headless Chromium renders every chart with no console errors",
          "[report][chromium][slow]") {
  if (!fs::exists(kChromium)) {
    FAIL("/usr/bin/chromium is missing: run scripts/install-deps.sh (CI installs it)");
  }
  const TempDir temp;
  RunData run = SmallRun();
  run.speed = SpeedResultToJson(SampleSpeed());
  WriteReportFiles(run, temp.Path());
  const std::string page = "file://" + temp.Path() + "/report.html";
  const std::string chromium = fmt::format(
      "timeout 60 {} --headless --disable-gpu --no-sandbox --user-data-dir={}/profile "
      "--enable-logging=stderr --v=0",
      kChromium, temp.Path());

  REQUIRE(Shell(fmt::format("{} --dump-dom {} > {}/dom.html 2> {}/dom.log", chromium, page,
                            temp.Path(), temp.Path())) == 0);
  const std::string dom = ReadFile(temp.Path() + "/dom.html");
  std::smatch match;
  REQUIRE(std::regex_search(dom, match, std::regex("data-charts=\"(\\d+)/(\\d+)\"")));
  const int rendered = std::stoi(match[1]);
  const int total = std::stoi(match[2]);
  CHECK(rendered == total);
  CHECK(total >= 4);
  const std::string dom_log = ReadFile(temp.Path() + "/dom.log");
  CHECK(PageConsoleLines(dom_log) == std::vector<std::string>{});

  const std::string shot = temp.Path() + "/report.png";
  REQUIRE(Shell(fmt::format("{} --screenshot={} --window-size=1280,2400 {} > {}/shot.out "
                            "2> {}/shot.log",
                            chromium, shot, page, temp.Path(), temp.Path())) == 0);
  REQUIRE(fs::exists(shot));
  CHECK(fs::file_size(shot) > 20000);
  CHECK(ReadFile(shot).substr(0, 8) == "\x89PNG\r\n\x1a\n");
  CHECK(PageConsoleLines(ReadFile(temp.Path() + "/shot.log")) == std::vector<std::string>{});
}

}  // namespace
}  // namespace evalrun
