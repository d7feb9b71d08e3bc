// Real serving stacks (issue 13, docs/serving.md): how a suite run treats an endpoint that is
// away (503 "Loading model", refused connections), one that refuses the request for good, one
// that refuses streamed tool calls or ignores tools, and prompts longer than the server's
// context. The real binary against evalrun's mock, which imitates each behaviour by a flag.

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "tests/support/catch.h"
#include "tests/support/stored_run.h"
#include "tests/support/evalrun_process.h"
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "plugins/mock_server.h"
#include "results/store.h"
#include "runner/agent/agent_loop.h"
#include "runner/commands/cli.h"
#include "runner/request_failure.h"
#include "tests/support/fixtures.h"

namespace {

namespace fs = std::filesystem;
using evalrun::FailureKind;
using evalrun::MockConfig;
using evalrun::MockServer;
using evalrun::RequestOutcome;
using evalrun::ResultStore;
using evalrun::testing::OnlyRun;
using evalrun::testing::Events;
using evalrun::testing::Slurp;
using evalrun::testing::TempDir;

// A suite of `n` tasks answering "ANSWER: <i>", and the mock's table answering each right.
std::vector<evalrun::MockAnswer> WriteSuite(const fs::path& dir, int n) {
  fs::create_directories(dir);
  std::ofstream suite(dir / "suite.yaml");
  suite << "schema_version: 1\nsuite: serving\ndefaults: {max_tokens: 32, temperature: 0}\n"
        << "dimensions: {math: 1}\ntasks:\n";
  std::vector<evalrun::MockAnswer> answers;
  for (int i = 0; i < n; ++i) {
    char id[16];
    std::snprintf(id, sizeof id, "t%03d", i);
    suite << "  - {id: " << id << ", dimension: math, difficulty: easy, prompt: \"[" << id
          << "] What is " << i << " plus zero? End with ANSWER: <n>\", grader: {type: "
          << "answer_line, answer: " << i << "}}\n";
    evalrun::MockAnswer answer;
    answer.match = std::string("[") + id + "]";
    answer.content = "ANSWER: " + std::to_string(i);
    answers.push_back(answer);
  }
  return answers;
}

using Output = evalrun::testing::ProcessResult;

// Runs the evalrun binary in `cwd` (bounded), stdout and stderr captured.
Output Run(const std::vector<std::string>& args, const TempDir& dir, const fs::path& cwd = {},
           double timeout_s = 120) {
  evalrun::testing::ProcessOptions options;
  options.cwd = cwd.string();
  options.timeout_s = timeout_s;
  return evalrun::testing::RunEvalrunBinary(args, dir.File("cmd.out"), dir.File("cmd.err"),
                                            options);
}

std::vector<std::string> SuiteArgs(const std::string& suite, const std::string& endpoint,
                                   const std::string& db) {
  return {"suite", suite, "--endpoint", endpoint, "--db", db, "--no-speed", "--no-env",
          "--quiet", "--probe-interval", "0.5", "--out", db + ".report"};
}

MockConfig FastMock(std::vector<evalrun::MockAnswer> answers) {
  MockConfig config;
  config.ttft_ms = 1;
  config.decode_tps = 2000;
  config.answers = std::move(answers);
  return config;
}

evalrun::RequestRecord Failed(RequestOutcome outcome, int status, const std::string& message) {
  evalrun::RequestRecord r;
  r.outcome = outcome;
  r.http_status = status;
  r.error_message = message;
  return r;
}

}  // namespace

TEST_CASE("serving: every failure has its kind", "[runner][serving]") {
  using evalrun::ClassifyFailure;
  CHECK(ClassifyFailure(Failed(RequestOutcome::kOk, 200, "")) == FailureKind::kNone);
  CHECK(ClassifyFailure(Failed(RequestOutcome::kConnectFailed, 0, "Connection refused")) ==
        FailureKind::kUnavailable);
  for (int status : {429, 502, 503, 504}) {
    INFO(status);
    CHECK(ClassifyFailure(Failed(RequestOutcome::kHttpError, status, "HTTP x: busy")) ==
          FailureKind::kUnavailable);
  }
  CHECK(ClassifyFailure(Failed(RequestOutcome::kHttpError, 500, "HTTP 500: Loading model")) ==
        FailureKind::kUnavailable);
  CHECK(ClassifyFailure(Failed(RequestOutcome::kHttpError, 500, "HTTP 500: oops")) ==
        FailureKind::kTransient);
  CHECK(ClassifyFailure(Failed(RequestOutcome::kHttpError, 408, "HTTP 408: slow")) ==
        FailureKind::kTransient);
  CHECK(ClassifyFailure(Failed(RequestOutcome::kDropped, 200, "closed")) ==
        FailureKind::kTransient);
  CHECK(ClassifyFailure(Failed(RequestOutcome::kIdleTimeout, 200, "")) == FailureKind::kTransient);
  CHECK(ClassifyFailure(Failed(RequestOutcome::kIdleTimeout, 200, ""), 1) ==
        FailureKind::kTimeout);
  CHECK(ClassifyFailure(Failed(RequestOutcome::kTotalTimeout, 200, "")) == FailureKind::kTimeout);
  CHECK(ClassifyFailure(Failed(RequestOutcome::kHttpError, 500,
                               "HTTP 500: Cannot use tools with stream")) ==
        FailureKind::kPermanent);
  CHECK(ClassifyFailure(Failed(RequestOutcome::kHttpError, 500,
                               "HTTP 500: tools param requires --jinja flag")) ==
        FailureKind::kPermanent);
  CHECK(ClassifyFailure(Failed(RequestOutcome::kHttpError, 400,
                               "HTTP 400: the request exceeds the available context size")) ==
        FailureKind::kPermanent);
  CHECK(ClassifyFailure(Failed(RequestOutcome::kHttpError, 404, "HTTP 404: no route")) ==
        FailureKind::kPermanent);
  CHECK(ClassifyFailure(Failed(RequestOutcome::kCancelled, 0, "")) == FailureKind::kCancelled);
  CHECK(evalrun::PermanentErrorFix("tools param requires --jinja flag", 500) ==
        "start llama-server with --jinja (the default in newer builds: drop --no-jinja), or run "
        "with --tool-format hermes (or qwen_xml) so that evalrun sends no `tools` field");
}

// The bodies a real llama-server 0.7 (build b11669) sends, from tests/fixtures/llama-0.7.
TEST_CASE("serving: real llama.cpp 0.7 error bodies get their kinds", "[runner][serving]") {
  auto from = [](const std::string& capture) {
    const evalrun::testing::HttpCapture http = evalrun::testing::ReadHttpCapture(capture);
    const auto body = nlohmann::json::parse(http.body);
    return Failed(RequestOutcome::kHttpError, http.status,
                  "HTTP " + std::to_string(http.status) + ": " +
                      body.at("error").at("message").get<std::string>());
  };
  CHECK(ClassifyFailure(from("llama-0.7/loading-503-v1_chat_completions.http")) ==
        FailureKind::kUnavailable);
  CHECK(ClassifyFailure(from("llama-0.7/ctx-exceeded-nonstream.http")) ==
        FailureKind::kPermanent);
  const evalrun::RequestRecord jinja = from("llama-0.7/nojinja-tools-nonstream.http");
  CHECK(jinja.http_status == 500);
  CHECK(ClassifyFailure(jinja) == FailureKind::kPermanent);
  CHECK_THAT(evalrun::PermanentErrorFix(jinja.error_message, 500),
             Catch::StartsWith("start llama-server with --jinja"));
}

TEST_CASE("serving: --wait-endpoint takes minutes or a unit", "[runner][serving]") {
  CHECK(evalrun::ParseWaitEndpoint("30") == 1800);
  CHECK(evalrun::ParseWaitEndpoint("0.5") == 30);
  CHECK(evalrun::ParseWaitEndpoint("90s") == 90);
  CHECK(evalrun::ParseWaitEndpoint("45m") == 2700);
  CHECK(evalrun::ParseWaitEndpoint("2h") == 7200);
  CHECK_THROWS_WITH(evalrun::ParseWaitEndpoint("5x"),
                    "--wait-endpoint '5x': expected minutes (30, 0.5) or a time with a unit "
                    "(90s, 45m, 2h)");
  CHECK_THROWS_WITH(evalrun::ParseWaitEndpoint("-1"), "--wait-endpoint must not be negative");
}

TEST_CASE("serving: --tool-format hermes|qwen_xml renders the tools into the system prompt",
          "[runner][serving]") {
  const nlohmann::json tools = nlohmann::json::parse(R"([{"type": "function", "function": {
      "name": "get_stock", "description": "Stock of a SKU",
      "parameters": {"type": "object", "properties": {"sku": {"type": "string",
      "description": "the SKU"}}, "required": ["sku"]}}}])");
  const std::string hermes = evalrun::ToolsSystemPrompt(tools, evalrun::ToolCallFormat::kHermes);
  CHECK_THAT(hermes, Catch::Contains("<tools>\n" + tools[0].dump() + "\n</tools>"));
  CHECK_THAT(hermes, Catch::Contains("<tool_call>\n{\"name\": \"NAME\""));
  const std::string qwen = evalrun::ToolsSystemPrompt(tools, evalrun::ToolCallFormat::kQwenXml);
  CHECK_THAT(qwen, Catch::Contains("<function>\n<name>get_stock</name>\n<description>Stock of a "
                                   "SKU</description>\n<parameters>\n<parameter>\n<name>sku</name>"
                                   "\n<type>string</type>\n<description>the SKU</description>\n"
                                   "</parameter>\n<required>[\"sku\"]</required>\n</parameters>"));
  CHECK_THAT(qwen, Catch::Contains("<tool_call>\n<function=NAME>"));
}

TEST_CASE("serving: 503 \"Loading model\" for 20 s mid-run pauses the run, every task graded once",
          "[runner][serving][slow]") {
  TempDir dir;
  const fs::path suite = dir.path / "s";
  MockConfig config = FastMock(WriteSuite(suite, 40));
  config.outage_after = 10;
  config.outage_s = 20;
  MockServer mock(config);
  mock.Start();
  const std::string db = dir.File("a.db");
  const auto t0 = std::chrono::steady_clock::now();
  const Output o = Run(SuiteArgs(suite.string(), mock.base_url(), db), dir);
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  INFO(o.err);
  REQUIRE(o.code == 0);
  CHECK(took >= 19);
  const evalrun::RunData run = ResultStore(db).LoadRun(OnlyRun(db));
  REQUIRE(run.tasks.size() == 40);
  for (const auto& t : run.tasks) {
    INFO(t.task_id << ": " << t.grade.reason);
    CHECK(t.grade.status == evalrun::GradeStatus::kGraded);
    CHECK(t.grade.passed);
  }
  const auto pauses = Events(run, "pause");
  REQUIRE(pauses.size() == 1);
  CHECK(pauses[0] == "endpoint " + mock.base_url() +
                         " is unavailable (http_error: HTTP 503: Loading model): pausing, "
                         "waiting up to 30 min for it to come back");
  CHECK(Events(run, "retry").empty());  // an unavailable endpoint uses up no retries
  REQUIRE(Events(run, "resume").size() == 1);
  CHECK(Events(run, "resume")[0].rfind("endpoint is back after ", 0) == 0);
  CHECK_THAT(Slurp(db + ".report/report.md"), Catch::Contains("is unavailable (http_error: HTTP "
                                                               "503: Loading model): pausing"));
}

TEST_CASE("serving: refused connections for a while pause the run, exit 0", "[runner][serving]") {
  TempDir dir;
  const fs::path suite = dir.path / "s";
  MockConfig config = FastMock(WriteSuite(suite, 20));
  config.outage_after = 5;
  config.outage_s = 4;
  config.outage_refuse = true;
  MockServer mock(config);
  mock.Start();
  const std::string db = dir.File("a.db");
  const Output o = Run(SuiteArgs(suite.string(), mock.base_url(), db), dir);
  INFO(o.err);
  REQUIRE(o.code == 0);
  const evalrun::RunData run = ResultStore(db).LoadRun(OnlyRun(db));
  REQUIRE(run.tasks.size() == 20);
  for (const auto& t : run.tasks) CHECK(t.grade.status == evalrun::GradeStatus::kGraded);
  const auto pauses = Events(run, "pause");
  REQUIRE(!pauses.empty());
  CHECK(pauses[0] == "endpoint " + mock.base_url() +
                         " is unreachable: pausing, waiting up to 30 min for it to come back");
}

TEST_CASE("serving: away longer than --wait-endpoint stops cleanly, --resume under another "
          "spelling of the suite finishes it, every task counted once",
          "[runner][serving]") {
  TempDir dir;
  const fs::path repo = dir.path / "r";
  MockConfig config = FastMock(WriteSuite(repo / "suite", 12));
  const std::string git = "cd " + repo.string() +
                          " && git init -q && git add -A && git -c user.name=t -c "
                          "user.email=t@t commit -qm s";
  REQUIRE(std::system(git.c_str()) == 0);
  config.outage_after = 4;
  config.outage_s = 6;
  MockServer mock(config);
  mock.Start();
  const std::string db = dir.File("a.db");
  std::vector<std::string> args = SuiteArgs("r/suite@HEAD", mock.base_url(), db);
  args.insert(args.end(), {"--wait-endpoint", "2s"});
  const Output first = Run(args, dir, dir.path);
  INFO(first.err);
  CHECK(first.code == 1);
  const std::string run_id = OnlyRun(db);
  {
    ResultStore store(db);
    CHECK(store.FindRun(run_id)->status == "interrupted");
    CHECK(store.FinishedCount(run_id) == 4);
    const auto pauses = Events(store.LoadRun(run_id), "pause");
    REQUIRE(pauses.size() == 2);
    CHECK(pauses[1] == "endpoint did not come back within 2 s: stopping the run");
  }
  std::this_thread::sleep_for(std::chrono::seconds(5));  // the outage ends
  std::vector<std::string> again =
      SuiteArgs((repo / "suite").string() + "@HEAD", mock.base_url(), db);
  again.insert(again.end(), {"--resume", run_id});
  const Output second = Run(again, dir);
  INFO(second.err);
  REQUIRE(second.code == 0);
  const evalrun::RunData run = ResultStore(db).LoadRun(run_id);
  REQUIRE(run.tasks.size() == 12);
  std::map<std::string, int> seen;
  for (const auto& t : run.tasks) {
    CHECK(t.grade.status == evalrun::GradeStatus::kGraded);
    ++seen[t.task_id];
  }
  CHECK(seen.size() == 12);
  CHECK_THAT(Slurp(db + ".report/report.md"), Catch::Contains("12 tasks"));
}

TEST_CASE("serving: --resume runs env_error tasks again and keeps their earlier requests",
          "[runner][serving]") {
  TempDir dir;
  const fs::path suite = dir.path / "s";
  MockConfig config = FastMock(WriteSuite(suite, 6));
  config.fault = evalrun::MockFault::kHttp500;
  config.fault_on = {2};
  auto mock = std::make_unique<MockServer>(config);
  mock->Start();
  const std::string db = dir.File("a.db");
  std::vector<std::string> args = SuiteArgs(suite.string(), mock->base_url(), db);
  args.insert(args.end(), {"--max-retries", "0"});
  const Output first = Run(args, dir);
  INFO(first.err);
  CHECK(first.code == 1);
  const std::string run_id = OnlyRun(db);
  CHECK(ResultStore(db).EnvErrorTaskIds(run_id) == std::set<std::string>{"t001"});

  args.erase(std::find(args.begin(), args.end(), "--quiet"));
  args.insert(args.end(), {"--resume", run_id});
  const Output second = Run(args, dir);  // the mock's fault was request 2 only
  INFO(second.err);
  REQUIRE(second.code == 0);
  CHECK_THAT(second.err, Catch::Contains("evalrun: resume: 1 task that ended env_error is run "
                                         "again (the earlier attempts' requests stay in the "
                                         "record)"));
  const evalrun::RunData run = ResultStore(db).LoadRun(run_id);
  REQUIRE(run.tasks.size() == 6);
  for (const auto& t : run.tasks) {
    CHECK(t.grade.status == evalrun::GradeStatus::kGraded);
    if (t.task_id != "t001") continue;
    REQUIRE(t.requests.size() == 2);
    CHECK(t.requests[0].outcome == RequestOutcome::kHttpError);
    CHECK(t.requests[0].error_message == "HTTP 500: mock fault: injected HTTP 500");
    CHECK(t.requests[1].ok());
  }
}

TEST_CASE("serving: the first tasks failing with one permanent error stop the run with its fix",
          "[runner][serving]") {
  TempDir dir;
  const fs::path suite = dir.path / "s";
  MockConfig config = FastMock(WriteSuite(suite, 30));
  config.fault = evalrun::MockFault::kHttp400;
  MockServer mock(config);
  mock.Start();
  const std::string db = dir.File("a.db");
  std::vector<std::string> args = SuiteArgs(suite.string(), mock.base_url(), db);
  args.erase(std::find(args.begin(), args.end(), "--quiet"));
  const Output o = Run(args, dir);
  CHECK(o.code == 1);
  CHECK_THAT(o.err, Catch::Contains(
                        "evalrun: stopping the run: its first 3 tasks all failed with the same "
                        "server error, which will not change with time: http_error: HTTP 400: "
                        "mock fault: injected HTTP 400. Check the server's settings and the "
                        "request evalrun sends; then start a new run, or --resume this one (its "
                        "failed tasks are run again)\n"));
  const std::string run_id = OnlyRun(db);
  ResultStore store(db);
  CHECK(store.FinishedCount(run_id) == 3);
  CHECK(mock.chat_requests() == 3);  // permanent: no retries
  CHECK(store.FindRun(run_id)->status == "interrupted");
}

// The shipped agent suite has 2 tasks: against llama-server --no-jinja both failed with "tools
// param requires --jinja flag" and the run only counted 2 env errors, without the fix.
TEST_CASE("serving: a run of fewer tasks than the early stop needs still names the cause and "
          "fix when all of them fail with one permanent error",
          "[runner][serving]") {
  TempDir dir;
  const fs::path suite = dir.path / "s";
  MockConfig config = FastMock(WriteSuite(suite, 2));
  config.fault = evalrun::MockFault::kHttp400;
  MockServer mock(config);
  mock.Start();
  const std::string db = dir.File("a.db");
  std::vector<std::string> args = SuiteArgs(suite.string(), mock.base_url(), db);
  args.erase(std::find(args.begin(), args.end(), "--quiet"));
  const Output o = Run(args, dir);
  CHECK(o.code == 1);
  CHECK_THAT(o.err, Catch::Contains(
                        "evalrun: stopping the run: all 2 of its tasks failed with the same "
                        "server error, which will not change with time: http_error: HTTP 400: "
                        "mock fault: injected HTTP 400. Check the server's settings"));
  const std::string run_id = OnlyRun(db);
  ResultStore store(db);
  CHECK(store.FinishedCount(run_id) == 2);
  CHECK(mock.chat_requests() == 2);
  CHECK(store.FindRun(run_id)->status == "interrupted");
}

TEST_CASE("serving: the agent world task is graded on a server refusing streamed tools and on "
          "one ignoring tools, per tool format",
          "[runner][serving]") {
  const fs::path agent = fs::path(EVALRUN_TEST_FIXTURES).parent_path().parent_path() / "tasks" /
                         "agent";
  const auto answers = evalrun::LoadMockAnswers((agent / "mock-answers.json").string());
  struct Case {
    const char* name;
    bool refuse_streamed;
    const char* as_text;
    const char* tool_format;
    const char* tools_in;
  };
  for (const Case& c : {Case{"refuses streamed tools", true, "", "auto", "request"},
                        Case{"refuses streamed tools, native", true, "", "native", "request"},
                        Case{"ignores tools, hermes", false, "hermes", "hermes", "system_prompt"},
                        Case{"ignores tools, qwen_xml", false, "qwen_xml", "qwen_xml",
                             "system_prompt"}}) {
    DYNAMIC_SECTION(c.name) {
      TempDir dir;
      MockConfig config = FastMock(answers);
      config.refuse_streamed_tools = c.refuse_streamed;
      config.tool_calls_as_text = c.as_text;
      config.tools_require_jinja = std::string(c.tools_in) == "system_prompt";  // none are sent
      MockServer mock(config);
      mock.Start();
      const std::string db = dir.File("a.db");
      std::vector<std::string> args = SuiteArgs(agent.string(), mock.base_url(), db);
      args.insert(args.end(), {"--filter", "dimension=agentic_tools", "--tool-format",
                               c.tool_format});
      const Output o = Run(args, dir);
      INFO(o.err);
      REQUIRE(o.code == 0);
      const evalrun::RunData run = ResultStore(db).LoadRun(OnlyRun(db));
      REQUIRE(run.tasks.size() == 1);
      const auto& t = run.tasks[0];
      INFO(t.grade.reason);
      CHECK(t.grade.status == evalrun::GradeStatus::kGraded);
      CHECK(t.grade.passed);
      CHECK(t.transcript["tools_in"] == c.tools_in);
      if (c.refuse_streamed) {
        REQUIRE(Events(run, "server").size() == 1);
        CHECK(Events(run, "server")[0] ==
              "the server refuses streamed tool calls (http_error: HTTP 500: Cannot use tools "
              "with stream): requests with tools are sent non-streamed from now on (their TTFT "
              "is not measured)");
        const auto& last = t.requests.back();
        CHECK(last.ok());
        CHECK(last.first_ns == -1);  // TTFT absent, not invented
        CHECK(last.end_ns > 0);
        CHECK(last.label.find("+nostream") != std::string::npos);
      }
    }
  }
}

TEST_CASE("serving: a task longer than the server's context is skipped with the numbers, or "
          "env_error when the cut is seen only after",
          "[runner][serving]") {
  TempDir dir;
  fs::create_directories(dir.path / "long");
  {
    std::ofstream suite(dir.path / "long" / "suite.yaml");
    std::string words;
    for (int i = 0; i < 400; ++i) words += " w" + std::to_string(i);
    suite << "schema_version: 1\nsuite: long\ndimensions: {facts: 1}\ntasks:\n"
          << "  - {id: long-001, dimension: facts, difficulty: easy, max_tokens: 64, prompt: "
             "\"Repeat the last word." << words << " End with ANSWER: <word>\", grader: {type: "
             "answer_line, answer: w399}}\n";
  }
  for (bool hidden : {false, true}) {
    DYNAMIC_SECTION((hidden ? "context not reported" : "context reported")) {
      MockConfig config = FastMock({});
      config.max_context = 200;
      config.hide_context = hidden;
      MockServer mock(config);
      mock.Start();
      const std::string db = dir.File(hidden ? "h.db" : "r.db");
      const Output o = Run(SuiteArgs((dir.path / "long").string(), mock.base_url(), db), dir);
      INFO(o.err);
      const evalrun::RunData run = ResultStore(db).LoadRun(OnlyRun(db));
      REQUIRE(run.tasks.size() == 1);
      const auto& t = run.tasks[0];
      if (hidden) {
        CHECK(o.code == 1);
        CHECK(t.grade.status == evalrun::GradeStatus::kEnvError);
        CHECK(t.grade.reason == "the server cut the prompt: 200 of 412 tokens");
      } else {
        CHECK(o.code == 0);
        CHECK(mock.chat_requests() == 0);
        CHECK(t.grade.status == evalrun::GradeStatus::kSkipped);
        CHECK(t.grade.reason ==
              "does not fit the server's context: the prompt is at least 412 tokens plus "
              "max_tokens 64, the context is 200 tokens");
      }
    }
  }
}

// llama.cpp 0.7 (b11669, checked against a real llama-server -c 512) accepts a prompt that
// fits and ends the answer when prompt plus answer fill the slot's context (finish_reason
// "length"); the check before counts the bare text, without the chat template's tokens, so
// max_tokens lowered "to the room left" still ran out and the task was graded no_answer.
TEST_CASE("serving: an answer the server ended at a full context is env_error with the numbers, "
          "never graded",
          "[runner][serving]") {
  TempDir dir;
  fs::create_directories(dir.path / "ctx");
  {
    std::ofstream suite(dir.path / "ctx" / "suite.yaml");
    std::string words;
    for (int i = 0; i < 100; ++i) words += " w" + std::to_string(i);
    suite << "schema_version: 1\nsuite: ctx\ndimensions: {facts: 1}\ntasks:\n"
          << "  - {id: ctx-001, dimension: facts, difficulty: easy, max_tokens: 150, prompt: "
             "\"Repeat the last word." << words << " End with ANSWER: <word>\", grader: {type: "
             "answer_line, answer: w99}}\n";
  }
  MockConfig config = FastMock({});
  config.max_context = 200;
  config.strict_context = true;
  config.answer_tokens = 1000;  // the answer would go on: the context ends it
  MockServer mock(config);
  mock.Start();
  const std::string db = dir.File("c.db");
  const Output o = Run(SuiteArgs((dir.path / "ctx").string(), mock.base_url(), db), dir);
  INFO(o.err);
  CHECK(o.code == 1);
  CHECK(mock.chat_requests() == 1);
  const evalrun::RunData run = ResultStore(db).LoadRun(OnlyRun(db));
  REQUIRE(run.tasks.size() == 1);
  const auto& t = run.tasks[0];
  // bare text 112 tokens: max_tokens lowered to 88; the mock's template adds 6, so 82 fit
  CHECK(Events(run, "context").size() == 1);
  CHECK_THAT(Events(run, "context").at(0), Catch::Contains("max_tokens lowered from 150 to 88"));
  CHECK(t.grade.status == evalrun::GradeStatus::kEnvError);
  CHECK(t.grade.reason ==
        "the server's context ran out: the prompt took 118 tokens and the answer 82 of "
        "max_tokens 88, the context is 200 tokens");
}

TEST_CASE("serving: verify of a repository-task bundle is 'not checked' (exit 4) without the "
          "repository, checked with --repo-mirror (exit 0)",
          "[runner][serving]") {
  TempDir dir;
  const fs::path agent = fs::path(EVALRUN_TEST_FIXTURES).parent_path().parent_path() / "tasks" /
                         "agent";
  const fs::path mirror = dir.path / "mc";
  fs::copy(agent / "repos" / "minicalc", mirror, fs::copy_options::recursive);
  REQUIRE(std::system(("cd " + mirror.string() + " && git init -q && git add -A && git -c "
                       "user.name=t -c user.email=t@t commit -qm base").c_str()) == 0);
  const fs::path suite = dir.path / "r" / "s";
  fs::create_directories(suite / "files");
  fs::copy(agent / "files" / "minicalc", suite / "files" / "minicalc", fs::copy_options::recursive);
  {
    std::ofstream(suite / "suite.yaml") << "schema_version: 1\nsuite: repo-url\n"
                                           "dimensions: {agentic_coding: 1}\n"
                                           "include: [\"repo.yaml\"]\n";
  }
  const std::string url = "https://example.invalid/minicalc.git";
  const std::string script =
      "cd " + dir.path.string() + " && C=$(git -C mc rev-parse HEAD) && sed -e "
      "\"s|        path: repos/minicalc|        url: " + url + "\\n        base_commit: $C|\" " +
      (agent / "repo.yaml").string() + " > r/s/repo.yaml && " + EVALRUN_BINARY +
      " hash --write r/s/repo.yaml >/dev/null 2>&1 && cd r && git init -q && git add -A && git -c "
      "user.name=t -c user.email=t@t commit -qm s";
  REQUIRE(std::system(script.c_str()) == 0);
  setenv("EVALRUN_CACHE", (dir.path / "cache").c_str(), 1);

  MockServer mock(FastMock(evalrun::LoadMockAnswers((agent / "mock-answers.json").string())));
  mock.Start();
  const std::string db = dir.File("a.db");
  std::vector<std::string> args = SuiteArgs(suite.string() + "@HEAD", mock.base_url(), db);
  args.insert(args.end(), {"--repo-mirror", url + "=" + mirror.string()});
  const Output run = Run(args, dir);
  INFO(run.err);
  REQUIRE(run.code == 0);
  const std::string bundle = dir.File("b.evalrun.json");
  REQUIRE(Run({"export", OnlyRun(db), "--db", db, "--out", bundle}, dir).code == 0);

  const Output offline = Run({"verify", bundle}, dir);
  INFO(offline.err);
  CHECK(offline.code == 4);
  CHECK_THAT(offline.out, Catch::Contains(
                              "grades: ok (0 of 1 grades rechecked, all equal; 1 not checked (the "
                              "grader could not run on this machine))\n  - not checked: task "
                              "'minicalc-left-associative': cannot set up the repository: cannot "
                              "fetch " + url + ": not in the repository cache"));
  CHECK_THAT(offline.out, Catch::Contains("verify: no mismatch, but 1 grade was not checked (exit "
                                          "4; --repo-mirror URL=PATH or verify --fetch brings "
                                          "missing repositories)\n"));
  const Output online =
      Run({"verify", bundle, "--repo-mirror", url + "=" + mirror.string()}, dir);
  INFO(online.out);
  CHECK(online.code == 0);
  CHECK_THAT(online.out, Catch::Contains("grades: ok (1 of 1 grades rechecked, all equal)"));
  unsetenv("EVALRUN_CACHE");
}
