// Asking an LLM judge (runner/judge.cpp) against evalrun's mock as the judge: the request is
// zx-bench's (two messages, max_tokens, temperature, streamed with usage), a server that refuses
// stream_options is asked again without them, an unusable reply gets the grader's compact retry,
// and a judge nobody answers is a configuration error naming its URL.
#include "runner/judge.h"

#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "graders/grader.h"
#include "plugins/mock_server.h"
#include "tests/support/catch.h"
#include "tests/support/fixtures.h"

namespace evalrun {
namespace {

using nlohmann::json;

Task Ci069() {
  Task task;
  for (const auto& entry : json::parse(testing::ReadFixture("zx-bench/more_entries.json"))) {
    if (entry.value("id", "") == "CI-069") task.raw = entry;
  }
  REQUIRE(task.raw.is_object());
  task.id = "CI-069";
  task.format = "zxbench";
  task.grader = {{"type", "zxbench:hallucination_resistance"}};
  return task;
}

const Grader& Hallucination() {
  const Grader* grader = GraderRegistry::Builtin().Find("zxbench:hallucination_resistance");
  REQUIRE(grader != nullptr);
  return *grader;
}

const char* kVerdict = R"({"verdict":"correct","factuality":1,"confidence":0.9,)"
                       R"("critical_error":false,"rubric_scores":{"boundary":1,"honesty":0.5}})";

TEST_CASE("judge: one request, as zx-bench sends it, recorded with its reply", "[runner]") {
  MockConfig config;
  config.model = "judge-mock";
  config.ttft_ms = 1;
  config.decode_tps = 0;
  // A server that does not know stream_options: zx-bench's judge asks again without them.
  config.refuse_stream_options = true;
  MockAnswer answer;
  answer.match = "## Question: CI-069\n";
  answer.content = kVerdict;
  config.answers.push_back(answer);
  MockServer mock(config);
  mock.Start();

  const JudgeEndpoint judge = ConnectJudge(mock.base_url(), "");
  CHECK(judge.model == "judge-mock");
  Answer reply;
  reply.text = "我找不到可靠的相关论文，不能提供DOI。";
  const json record =
      AskJudge(judge, Hallucination(), Ci069(), reply, CandidateInfo{"stop", 12, 4096});
  CHECK(mock.chat_requests() == 2);  // refused with stream_options, answered without
  CHECK(record["endpoint"] == mock.base_url());
  CHECK(record["model"] == "judge-mock");
  REQUIRE(record["attempts"].size() == 1);
  const json& attempt = record["attempts"][0];
  CHECK(attempt["outcome"] == "ok");
  CHECK(attempt["http_status"] == 200);
  CHECK(attempt["content"] == kVerdict);
  CHECK(attempt["finish_reason"] == "stop");
  CHECK(attempt["request"]["model"] == "judge-mock");
  CHECK(attempt["request"]["max_tokens"] == 16000);
  CHECK(attempt["request"]["temperature"] == 0.1);
  CHECK(attempt["request"]["messages"][0]["role"] == "system");
  CHECK(attempt["request"]["messages"][1]["content"].get<std::string>().find(
            "### Raw Model Output:\n```\n" + reply.text + "\n```") != std::string::npos);

  // The grade from that record: boundary .6 + honesty .4 x .5 = .8.
  GradeContext context;
  context.judge = &record;
  const Grade grade = GradeOutput(Ci069(), Output{reply.text, "", "stop"}, context);
  CHECK(grade.status == GradeStatus::kGraded);
  CHECK(grade.evidence["zx_score"] == 80);
}

TEST_CASE("judge: an unusable reply is asked again with the compact retry, once", "[runner]") {
  MockConfig config;
  config.ttft_ms = 1;
  config.decode_tps = 0;
  MockAnswer answer;
  answer.match = "## Question: CI-069\n";
  answer.content = "The answer looks honest to me.";
  config.answers.push_back(answer);
  MockServer mock(config);
  mock.Start();
  const JudgeEndpoint judge = ConnectJudge(mock.base_url(), "named-model");
  CHECK(judge.model == "named-model");
  Answer reply;
  reply.text = "无法提供。";
  const json record =
      AskJudge(judge, Hallucination(), Ci069(), reply, CandidateInfo{"stop", 3, 4096});
  REQUIRE(record["attempts"].size() == 2);
  CHECK(record["attempts"][1]["request"]["max_tokens"] == 32000);
  CHECK(record["attempts"][1]["request"]["messages"][0]["content"].get<std::string>().find(
            "## Retry mode") != std::string::npos);
  CHECK(mock.chat_requests() == 2);
  GradeContext context;
  context.judge = &record;
  const Grade grade = GradeOutput(Ci069(), Output{reply.text, "", "stop"}, context);
  CHECK(grade.status == GradeStatus::kEnvError);
  CHECK(grade.reason.rfind("GRADING_UNAVAILABLE: semantic rubric requires a successful Judge; "
                           "excluded from aggregates (JUDGE_COMPACT_RETRY_FAILED: initial="
                           "JUDGE_INVALID_JSON",
                           0) == 0);

  // An empty answer needs no judge: nothing is asked.
  Answer empty;
  CHECK(AskJudge(judge, Hallucination(), Ci069(), empty, CandidateInfo{}).is_null());
  CHECK(mock.chat_requests() == 2);
}

TEST_CASE("judge: a judge nobody answers is named", "[runner]") {
  try {
    ConnectJudge("http://127.0.0.1:1", "");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).rfind("--judge-endpoint http://127.0.0.1:1: cannot reach the judge",
                                      0) == 0);
  }
}

}  // namespace
}  // namespace evalrun
