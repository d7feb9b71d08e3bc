// results/compare.h: paired score differences on small runs whose answers can be worked out by
// hand, McNemar's exact p-values against known values, determinism, unshared tasks, speed ratios
// and the setup statement.
#include "results/compare.h"

#include <algorithm>
#include <string>
#include <vector>

#include "tests/support/catch.h"
#include <nlohmann/json.hpp>

#include "results/run_report.h"

namespace {

using Catch::Contains;
using evalrun::CompareRuns;
using evalrun::Comparison;
using evalrun::GradeStatus;
using evalrun::McNemarExactP;
using evalrun::RunData;
using evalrun::TaskResult;

TaskResult Task(const std::string& id, const std::string& dimension, double score,
                double weight = 1, const std::string& group = "") {
  TaskResult t;
  t.task_id = id;
  t.task_hash = "hash-" + id;
  t.dimension = dimension;
  t.weight = weight;
  t.group = group;
  t.grade.score = score;
  t.grade.passed = score >= 1;
  t.grade.status = GradeStatus::kGraded;
  t.output = "ANSWER: something";
  return t;
}

RunData Run(const std::string& id, std::vector<TaskResult> tasks) {
  RunData run;
  run.info.id = id;
  run.info.suite_name = "smoke";
  run.info.model = "model-x";
  run.info.planned_tasks = static_cast<int64_t>(tasks.size());
  run.tasks = std::move(tasks);
  return run;
}

const evalrun::ScoreDifference& Dimension(const Comparison& c, const std::string& name) {
  const auto it = std::find_if(c.dimensions.begin(), c.dimensions.end(),
                               [&name](const auto& d) { return d.dimension == name; });
  REQUIRE(it != c.dimensions.end());
  return *it;
}

// A request of `tokens` completion tokens: first token after `ttft_ms`, then `tps` tokens/s.
evalrun::RequestRecord Request(double ttft_ms, double tps, int64_t tokens = 101) {
  evalrun::RequestRecord r;
  r.first_ns = static_cast<int64_t>(ttft_ms * 1e6);
  r.first_content_ns = r.first_ns;
  r.last_ns = r.first_ns + static_cast<int64_t>(static_cast<double>(tokens - 1) / tps * 1e9);
  r.end_ns = r.last_ns;
  r.usage_reported = true;
  r.usage.completion_tokens = tokens;
  r.usage.prompt_tokens = 500;
  return r;
}

}  // namespace

TEST_CASE("compare: McNemar's exact two-sided p-value", "[compare]") {
  CHECK(McNemarExactP(0, 5) == Approx(0.0625).epsilon(1e-12));
  CHECK(McNemarExactP(5, 0) == Approx(0.0625).epsilon(1e-12));
  CHECK(McNemarExactP(3, 3) == 1.0);
  CHECK(McNemarExactP(0, 0) == 1.0);
  CHECK(McNemarExactP(1, 9) == Approx(0.021484375).epsilon(1e-12));  // 2 · 11 / 1024
  CHECK(McNemarExactP(2, 8) == Approx(0.109375).epsilon(1e-12));     // 2 · 56 / 1024
  CHECK(McNemarExactP(10, 30) == Approx(0.0022214337732293643).epsilon(1e-9));
  CHECK(McNemarExactP(0, 1) == 1.0);
}

TEST_CASE("compare: paired differences on hand-checkable runs", "[compare]") {
  SECTION("every task improves by the same amount: the interval is that amount") {
    const RunData a = Run("ra", {Task("t1", "math", 0), Task("t2", "math", 0),
                                 Task("t3", "math", 0.5), Task("t4", "math", 0.5)});
    const RunData b = Run("rb", {Task("t1", "math", 0.5), Task("t2", "math", 0.5),
                                 Task("t3", "math", 1), Task("t4", "math", 1)});
    const Comparison c = CompareRuns(a, b, 1);
    CHECK(c.shared_tasks == 4);
    CHECK(c.overall.has_difference);
    CHECK(c.overall.score_a == Approx(25));
    CHECK(c.overall.score_b == Approx(75));
    CHECK(c.overall.difference == Approx(50));
    CHECK(c.overall.ci95.low == Approx(50));
    CHECK(c.overall.ci95.high == Approx(50));
    CHECK(c.overall.resamples == evalrun::kCompareResamples);
    CHECK(c.mcnemar.b_only == 2);  // t3, t4 reach a score of 1 (passed) in B only
    CHECK(c.mcnemar.a_only == 0);
    CHECK(c.mcnemar.neither == 2);
  }

  SECTION("one task of four differs: 0 to 75 points, as Binomial(4, 1/4) gives") {
    // Each replicate's difference is 25 · k, k = how often t3 is drawn of 4 draws:
    // P(k = 0) = 0.32 > 0.025, so the low end is 0; P(k <= 2) = 0.949 < 0.975 < P(k <= 3).
    const RunData a =
        Run("ra", {Task("t1", "m", 1), Task("t2", "m", 1), Task("t3", "m", 0), Task("t4", "m", 0)});
    const RunData b =
        Run("rb", {Task("t1", "m", 1), Task("t2", "m", 1), Task("t3", "m", 1), Task("t4", "m", 0)});
    const Comparison c = CompareRuns(a, b, 1);
    CHECK(c.overall.difference == Approx(25));
    CHECK(c.overall.ci95.low == Approx(0).margin(1e-9));
    CHECK(c.overall.ci95.high == Approx(75));
    CHECK(c.mcnemar.b_only == 1);
    CHECK(c.mcnemar.p_value == 1.0);
  }

  SECTION("task weights and dimension weights are ScoreRun's") {
    // math (suite weight 2): A (100 at w 1, 0 at w 3) = 25, B (0 at w 1, 100 at w 3) = 75: +50.
    // code (suite weight 1): A 100, B 50: -50. Overall: 2/3 · 50 + 1/3 · (-50) = 16.67.
    RunData a = Run("ra", {Task("m1", "math", 1, 1), Task("m2", "math", 0, 3),
                           Task("c1", "code", 1), Task("c2", "code", 1)});
    RunData b = Run("rb", {Task("m1", "math", 0, 1), Task("m2", "math", 1, 3),
                           Task("c1", "code", 1), Task("c2", "code", 0)});
    a.info.dimension_weights = {{"math", 2}, {"code", 1}};
    b.info.dimension_weights = a.info.dimension_weights;
    const Comparison c = CompareRuns(a, b, 1);
    CHECK(Dimension(c, "math").difference == Approx(50));
    CHECK(Dimension(c, "math").shared_tasks == 2);
    CHECK(Dimension(c, "code").difference == Approx(-50));
    CHECK(c.overall.difference == Approx(50.0 / 3));
    // With every task shared, the point estimate is the two reports' overall scores apart.
    CHECK(c.overall.difference ==
          Approx(evalrun::ScoreRun(b).overall - evalrun::ScoreRun(a).overall));
    // Every replicate lies between the extremes the strata allow: math in [-100, 100] (both
    // draws m1, or both m2), code in [-100, 0].
    CHECK(c.overall.ci95.low >= -100 - 1e-9);
    CHECK(c.overall.ci95.high <= 200.0 / 3 + 1e-9);
    CHECK(c.overall.ci95.low <= c.overall.difference);
    CHECK(c.overall.ci95.high >= c.overall.difference);
  }

  SECTION("statuses counted as 0 and groups follow the report's rules") {
    TaskResult timeout = Task("t3", "m", 1);
    timeout.grade.status = GradeStatus::kTimeout;  // 0 whatever the grade says
    const RunData a =
        Run("ra", {Task("g1", "m", 1, 1, "q"), Task("g2", "m", 0, 1, "q"), Task("t3", "m", 1)});
    const RunData b = Run("rb", {Task("g1", "m", 1, 1, "q"), Task("g2", "m", 1, 1, "q"), timeout});
    // A: items q (mean 50) and t3 (100) = 75; B: q (100) and t3 (0) = 50.
    const Comparison c = CompareRuns(a, b, 1);
    CHECK(c.overall.score_a == Approx(75));
    CHECK(c.overall.score_b == Approx(50));
    CHECK(c.overall.difference == Approx(-25));
    CHECK(c.overall.items == 2);  // the group is one resampling unit
    CHECK(c.shared_tasks == 3);
  }
}

TEST_CASE("compare: shared tasks are matched by id and task hash and scored in both", "[compare]") {
  TaskResult changed = Task("t2", "m", 1);
  changed.task_hash = "hash-edited";
  TaskResult env_error = Task("t3", "m", 0);
  env_error.grade.status = GradeStatus::kEnvError;
  TaskResult skipped = Task("t5", "m", 0);
  skipped.grade.status = GradeStatus::kSkipped;
  const RunData a = Run("ra", {Task("t1", "m", 0), Task("t2", "m", 0), Task("t3", "m", 0),
                               Task("t4", "m", 0), skipped, Task("t6", "m", 1)});
  const RunData b = Run("rb", {Task("t1", "m", 1), changed, env_error, Task("t7", "m", 1),
                               Task("t5", "m", 1), Task("t6", "m", 1)});
  const Comparison c = CompareRuns(a, b, 1);
  CHECK(c.shared_tasks == 2);  // t1 and t6
  CHECK(c.hash_differs == 1);
  CHECK(c.overall.score_a == Approx(50));
  CHECK(c.overall.score_b == Approx(100));
  REQUIRE(c.unshared.size() == 5);
  CHECK(c.unshared[0].task_id == "t2");
  CHECK(c.unshared[0].reason == "task hash differs");
  CHECK(c.unshared[1].task_id == "t3");
  CHECK(c.unshared[1].reason == "not scored in B (env_error)");
  CHECK(c.unshared[2].task_id == "t4");
  CHECK(c.unshared[2].reason == "only in A");
  CHECK(c.unshared[3].task_id == "t5");
  CHECK(c.unshared[3].reason == "not scored in A (skipped)");
  CHECK(c.unshared[4].task_id == "t7");
  CHECK(c.unshared[4].reason == "only in B");
  const std::string md = evalrun::RenderComparison(c);
  CHECK_THAT(md, Contains("## Tasks not shared (5, 1 with a different task hash)"));
  CHECK_THAT(md, Contains("- t2: task hash differs"));

  SECTION("no shared task: no difference has a value") {
    const Comparison none =
        CompareRuns(Run("ra", {Task("x", "m", 1)}), Run("rb", {Task("y", "m", 1)}), 1);
    CHECK(none.shared_tasks == 0);
    CHECK_FALSE(none.overall.has_difference);
    CHECK(none.dimensions.empty());
  }
}

TEST_CASE("compare: the same seed gives the same figures, another seed other draws", "[compare]") {
  std::vector<TaskResult> ta, tb;
  for (int i = 0; i < 40; ++i) {
    const std::string id = "t" + std::to_string(i);
    const char* dimension = i % 2 == 0 ? "even" : "odd";
    ta.push_back(Task(id, dimension, ((i * 37) % 11) / 10.0, 1 + i % 3));
    tb.push_back(Task(id, dimension, ((i * 53) % 13) / 12.0, 1 + i % 3));
  }
  const RunData a = Run("ra", ta);
  RunData b = Run("rb", tb);
  const nlohmann::json first = evalrun::ComparisonToJson(CompareRuns(a, b, 42));
  const nlohmann::json second = evalrun::ComparisonToJson(CompareRuns(a, b, 42));
  CHECK(first.dump() == second.dump());
  CHECK(first["overall"]["ci95"][0].get<double>() < first["overall"]["difference"].get<double>());
  CHECK(first["overall"]["ci95"][1].get<double>() > first["overall"]["difference"].get<double>());

  // The order in which a run finished its tasks does not change a draw.
  std::reverse(b.tasks.begin(), b.tasks.end());
  CHECK(evalrun::ComparisonToJson(CompareRuns(a, b, 42)).dump() == first.dump());

  const nlohmann::json other = evalrun::ComparisonToJson(CompareRuns(a, b, 43));
  CHECK(other["overall"]["difference"] == first["overall"]["difference"]);
  CHECK(other["overall"]["ci95"] != first["overall"]["ci95"]);
  CHECK(other["seed"] == 43);
}

TEST_CASE("compare: speed ratios from the tasks and the speed protocol", "[compare]") {
  std::vector<TaskResult> ta, tb;
  for (int i = 0; i < 5; ++i) {
    TaskResult x = Task("t" + std::to_string(i), "m", 1);
    TaskResult y = x;
    x.requests.push_back(Request(200, 50 + 10 * i));
    y.requests.push_back(Request(100, 2 * (50 + 10 * i)));
    ta.push_back(x);
    tb.push_back(y);
  }
  RunData a = Run("ra", ta);
  RunData b = Run("rb", tb);
  a.speed = {{"tests",
              {{{"name", "tg128"},
                {"metrics", {{"decode_tps", {{"median", 40.0}, {"samples", {39.0, 40.0, 41.0}}}}}}},
               {{"name", "only-a"}, {"metrics", {{"decode_tps", {{"median", 1.0}}}}}}}}};
  b.speed = {
      {"tests",
       {{{"name", "tg128"},
         {"metrics", {{"decode_tps", {{"median", 60.0}, {"samples", {59.0, 60.0, 61.0}}}}}}}}}};
  const Comparison c = CompareRuns(a, b, 1);
  const auto find = [&c](const std::string& source, const std::string& figure) {
    const auto it = std::find_if(c.speed.begin(), c.speed.end(), [&](const auto& r) {
      return r.source == source && r.figure == figure;
    });
    REQUIRE(it != c.speed.end());
    return *it;
  };
  const evalrun::SpeedRatio decode = find("tasks", "decode_tps");
  CHECK(decode.median_a == Approx(70).epsilon(1e-3));
  CHECK(decode.ratio == Approx(2).epsilon(1e-3));
  CHECK(decode.has_interval);
  CHECK(decode.ci95.low == Approx(2).epsilon(1e-3));  // every pair is exactly twice as fast
  CHECK(decode.ci95.high == Approx(2).epsilon(1e-3));
  CHECK(decode.count_a == 5);
  const evalrun::SpeedRatio ttft = find("tasks", "ttft_ms");
  CHECK(ttft.ratio == Approx(0.5));
  const evalrun::SpeedRatio protocol = find("tg128", "decode_tps");
  CHECK(protocol.ratio == Approx(1.5));
  CHECK(protocol.has_interval);
  CHECK(protocol.ci95.low >= 59.0 / 41.0 - 1e-9);
  CHECK(protocol.ci95.high <= 61.0 / 39.0 + 1e-9);
  CHECK(std::none_of(c.speed.begin(), c.speed.end(),
                     [](const auto& r) { return r.source == "only-a"; }));
  CHECK_THAT(evalrun::RenderComparison(c),
             Contains("| per task | decode tokens/s | 70.0 | 140.0 | 2.000 |"));
}

TEST_CASE("compare: what differs in setup is stated plainly", "[compare]") {
  RunData a = Run("ra", {Task("t1", "m", 1)});
  RunData b = Run("rb", {Task("t1", "m", 1)});
  SECTION("identical setups") {
    const Comparison c = CompareRuns(a, b, 1);
    CHECK(c.setup.empty());
    CHECK_THAT(evalrun::RenderComparison(c), Contains("Nothing recorded differs"));
  }
  SECTION("model, server build, labels, GPUs and settings") {
    b.info.model = "model-y";
    a.info.server = {{"kind", "llama.cpp"}, {"build", "b6000"}};
    b.info.server = {{"kind", "llama.cpp"}, {"build", "b6100"}};
    a.info.labels = {{"quant", "Q4_K_M"}, {"kv", "f16"}};
    b.info.labels = {{"quant", "Q8_0"}, {"kv", "f16"}, {"spec", "on"}};
    a.info.environment = {{"nvidia",
                           {{"gpus",
                             {{{"name", "RTX 3090"}, {"driver_version", "550"}},
                              {{"name", "RTX 3090"}, {"driver_version", "550"}}}}}}};
    b.info.environment = {
        {"nvidia", {{"gpus", {{{"name", "RTX 4090"}, {"driver_version", "550"}}}}}}};
    a.info.settings = {{"concurrency", 1}, {"max_tokens", 4096}, {"thinking", "task"}};
    b.info.settings = {{"concurrency", 4}, {"max_tokens", 4096}, {"thinking", "off"}};
    b.info.suite_commit = "0123456789abcdef";
    const Comparison c = CompareRuns(a, b, 1);
    std::vector<std::string> lines;
    for (const auto& d : c.setup) lines.push_back(d.aspect + ": " + d.a + " | " + d.b);
    CHECK(lines == std::vector<std::string>{
                       "model: model-x | model-y",
                       "server build: b6000 | b6100",
                       "suite commit: unpinned | 0123456789abcdef",
                       "GPUs: 2× RTX 3090 | 1× RTX 4090",
                       "label quant: Q4_K_M | Q8_0",
                       "label spec: (none) | on",
                       "setting concurrency: 1 | 4",
                       "setting thinking: task | off",
                   });
    const std::string md = evalrun::RenderComparison(c);
    CHECK_THAT(md, Contains("- model: A model-x · B model-y\n"));
    CHECK_THAT(md, Contains("- label spec: A (none) · B on\n"));
  }
}

TEST_CASE("compare: markdown and JSON carry the same figures", "[compare]") {
  const RunData a = Run("ra", {Task("t1", "m", 0), Task("t2", "m", 1)});
  const RunData b = Run("rb", {Task("t1", "m", 1), Task("t2", "m", 1)});
  const Comparison c = CompareRuns(a, b, 1);
  const nlohmann::json j = evalrun::ComparisonToJson(c);
  CHECK(j["schema_version"] == evalrun::kCompareSchemaVersion);
  CHECK(j["kind"] == "evalrun.compare");
  CHECK(j["shared_tasks"] == 2);
  CHECK(j["overall"]["difference"].get<double>() == Approx(50));
  CHECK(j["mcnemar"]["b_only"] == 1);
  CHECK(j["mcnemar"]["p_value"].get<double>() == 1.0);
  CHECK(j["runs"]["a"]["id"] == "ra");
  const std::string md = evalrun::RenderComparison(c);
  CHECK_THAT(md, Contains("## Scores: B − A over 2 shared tasks"));
  CHECK_THAT(md, Contains("| **overall** | 50.0 | 100.0 | +50.0 | +0.0 … +100.0 | 2 | "
                          "no clear difference |"));
  CHECK_THAT(md, Contains("A only 0 (b), B only 1 (c)"));
}
