// The native graders (graders/native/answer_line.cpp, exact.cpp, numeric.cpp, regex.cpp, contains.cpp,
// json_fields.cpp, json_schema.cpp), answer extraction (graders/framework/answer.cpp) and the registry
// with its status rules (graders/grader.cpp). Truth tables, hostile inputs included.
#include "tests/support/catch.h"

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <tuple>

#include "core/error.h"
#include "graders/framework/answer.h"
#include "graders/grader.h"

using evalrun::Answer;
using evalrun::Grade;
using evalrun::GradeStatus;
using evalrun::Output;
using evalrun::Task;
using nlohmann::json;

namespace {

// Grades `content` against a grader spec (type added), through GradeOutput.
Grade GradeWith(const std::string& type, json spec, const std::string& content,
                const std::string& finish_reason = "stop") {
  Task task;
  task.id = "t";
  task.grader = std::move(spec);
  task.grader["type"] = type;
  const evalrun::Grader* grader = evalrun::GraderRegistry::Builtin().Find(type);
  REQUIRE(grader != nullptr);
  grader->CheckSpec(task.grader, task.location);
  return evalrun::GradeOutput(task, Output{content, "", finish_reason}, {});
}

// The message CheckSpec throws for `spec`, or "" when it accepts it.
std::string SpecError(const std::string& type, json spec) {
  spec["type"] = type;
  evalrun::SourceLocation where{"suite.yaml", 4, 5};
  try {
    evalrun::GraderRegistry::Builtin().Find(type)->CheckSpec(spec, where);
  } catch (const evalrun::Error& e) {
    return e.what();
  }
  return "";
}

const char* StatusName(GradeStatus s) {
  return evalrun::GradeStatusName(s);
}

std::string Big(size_t bytes, const std::string& tail) {
  return std::string(bytes, 'x') + tail;
}

}  // namespace

TEST_CASE("ExtractAnswer: think blocks, unclosed think, truncation", "[graders]") {
  auto [content, finish, text, reasoning, unclosed, truncated] =
      GENERATE(table<std::string, std::string, std::string, std::string, bool, bool>({
          {"<think>hmm</think>\n42", "stop", "42", "hmm", false, false},
          {"a<think>x</think>b<think>y</think>c", "stop", "abc", "x\ny", false, false},
          {"answer <think>still thinking", "length", "answer", "still thinking", true, true},
          {"<think>only", "stop", "", "only", true, false},
          {"  plain  \n", "length", "plain", "", false, true},
          {"", "stop", "", "", false, false},
          {"</think> stray close", "stop", "</think> stray close", "", false, false},
      }));
  const Answer a = evalrun::ExtractAnswer(Output{content, "", finish});
  CHECK(a.text == text);
  CHECK(a.reasoning == reasoning);
  CHECK(a.unclosed_think == unclosed);
  CHECK(a.truncated == truncated);
}

TEST_CASE("ExtractAnswer keeps reasoning_content apart and first", "[graders]") {
  const Answer a = evalrun::ExtractAnswer(Output{"<think>b</think>ok", "a", "stop"});
  CHECK(a.text == "ok");
  CHECK(a.reasoning == "a\nb");
}

TEST_CASE("GradeOutput: status rules before the grader runs", "[graders]") {
  const json spec = {{"answer", 42}};
  SECTION("unclosed think is no_answer, even with text before it") {
    const Grade g = GradeWith("answer_line", spec, "ANSWER: 42\n<think>wait");
    CHECK(g.status == GradeStatus::kNoAnswer);
    CHECK(g.reason == "reasoning never closed (<think> without </think>): no answer");
    CHECK_FALSE(g.passed);
  }
  SECTION("cut by max_tokens with no answer is budget_exhausted") {
    const Grade g = GradeWith("answer_line", spec, "<think>long</think>  ", "length");
    CHECK(g.status == GradeStatus::kBudgetExhausted);
    CHECK(g.reason == "cut by max_tokens before any answer");
  }
  SECTION("an empty answer is no_answer") {
    CHECK(GradeWith("answer_line", spec, "  ").status == GradeStatus::kNoAnswer);
  }
  SECTION("a truncated answer that has text is graded") {
    const Grade g = GradeWith("answer_line", spec, "ANSWER: 42", "length");
    CHECK(g.status == GradeStatus::kGraded);
    CHECK(g.passed);
  }
  SECTION("grader name and version are filled") {
    const Grade g = GradeWith("answer_line", spec, "ANSWER: 42");
    CHECK(g.grader == "answer_line");
    CHECK(g.grader_version == "answer_line/1");
  }
  SECTION("skip_reason wins") {
    Task task;
    task.grader = {{"type", "answer_line"}, {"answer", 1}};
    task.skip_reason = "needs python3";
    const Grade g = evalrun::GradeOutput(task, Output{"ANSWER: 1", "", "stop"}, {});
    CHECK(g.status == GradeStatus::kSkipped);
    CHECK(g.reason == "needs python3");
  }
  SECTION("an unknown grader at grade time is skipped") {
    Task task;
    task.grader = {{"type", "nope"}};
    const Grade g = evalrun::GradeOutput(task, Output{"x", "", "stop"}, {});
    CHECK(g.status == GradeStatus::kSkipped);
    CHECK(g.reason == "unknown grader 'nope'");
  }
}

TEST_CASE("registry: the native graders are listed, sorted", "[graders]") {
  const auto names = evalrun::GraderRegistry::Builtin().Names();
  for (const char* name : {"answer_line", "exact", "numeric", "regex", "contains", "excludes",
                           "json_fields", "json_schema"}) {
    CHECK(std::find(names.begin(), names.end(), name) != names.end());
  }
  CHECK(std::is_sorted(names.begin(), names.end()));
}

TEST_CASE("CheckGraderSpecs: unknown grader with did-you-mean", "[graders]") {
  evalrun::Suite suite;
  Task task;
  task.id = "t";
  task.location = {"suite.yaml", 4, 53};
  task.grader = {{"type", "answerline"}, {"answer", 1}};
  suite.tasks.push_back(task);
  try {
    evalrun::CheckGraderSpecs(suite);
    FAIL("no error");
  } catch (const evalrun::Error& e) {
    CHECK(std::string(e.what()) ==
          "suite.yaml:4:53: unknown grader 'answerline', did you mean 'answer_line'? (evalrun "
          "graders lists them)");
  }
  suite.tasks[0].skip_reason = "skipped here";
  CHECK_NOTHROW(evalrun::CheckGraderSpecs(suite));
}

TEST_CASE("CheckGraderSpecs: every smoke-suite grader spec is valid", "[graders]") {
  // Hand-copied from tasks/smoke/*.yaml (the graders test links evalrun::graders only, not the
  // YAML loader); code_tests specs belong to the code_tests grader's tests.
  const std::vector<json> specs = {
      json::parse(R"({"type":"answer_line","answer":42,"unit":"人"})"),
      json::parse(R"({"type":"answer_line","answer":12,"unit":"种"})"),
      json::parse(R"({"type":"answer_line","answer":14,"unit":"元"})"),
      json::parse(R"({"type":"answer_line","answer":6,"unit":"个"})"),
      json::parse(R"({"type":"answer_line","answer":36,"unit":"平方厘米"})"),
      json::parse(R"({"type":"json_fields","fields":{"order_id":4471,"customer":"Maria Chen",
                      "date":"2024-03-14","quantity":3,"unit_price":12.5}})"),
      json::parse(R"({"type":"json_fields","fields":{"name":"Samuel Okafor",
                      "email":"s.okafor@example.org","phone":"+44 20 7946 0958"}})"),
      json::parse(R"({"type":"json_fields","fields":{"model":"X200","weight_kg":1.3,
                      "ram_gb":16,"storage_gb":512}})"),
      json::parse(R"({"type":"json_fields","fields":{"date":"2024-06-07","start_time":"09:30",
                      "room":"B12","duration_minutes":90}})"),
      json::parse(R"({"type":"json_fields","fields":{"item_count":3,"total":210}})"),
      json{{"type", "regex"},
           {"pattern", R"(^\s*[A-Za-z]+\s*\n\s*[A-Za-z]+\s*\n\s*[A-Za-z]+\s*$)"}},
      json::parse(R"({"type":"excludes","values":["e","E"]})"),
      json{{"type", "regex"}, {"pattern", R"(^\s*ACKNOWLEDGED\s*$)"}},
      json::parse(R"({"type":"contains","values":["velvet","midnight"],"case_sensitive":false})"),
      json{{"type", "regex"}, {"pattern", R"(\n-- end\s*$)"}},
      json::parse(R"({"type":"answer_line","answer":18})"),
      json::parse(R"({"type":"answer_line","answer":60,"unit":"km/h"})"),
      json::parse(R"({"type":"answer_line","answer":391})"),
      json::parse(R"({"type":"answer_line","answer":2})"),
      json::parse(R"({"type":"answer_line","answer":1683})"),
      json::parse(R"({"type":"answer_line","answer":72,"unit":"cm²"})"),
  };
  evalrun::Suite suite;
  for (const json& spec : specs) {
    Task task;
    task.id = "t";
    task.grader = spec;
    suite.tasks.push_back(task);
  }
  CHECK_NOTHROW(evalrun::CheckGraderSpecs(suite));
}

TEST_CASE("answer_line: truth table", "[graders][answer_line]") {
  auto [spec, content, status, passed] =
      GENERATE(table<std::string, std::string, GradeStatus, bool>({
          {R"({"answer":42})", "work\nANSWER: 42", GradeStatus::kGraded, true},
          {R"({"answer":42})", "ANSWER: 42\n\n  \n", GradeStatus::kGraded, true},
          {R"({"answer":42})", "ANSWER: 41", GradeStatus::kGraded, false},
          {R"({"answer":42})", "ANSWER: 42\nthanks", GradeStatus::kNoAnswer, false},
          {R"({"answer":42})", "the answer is 42", GradeStatus::kNoAnswer, false},
          {R"({"answer":42})", "answer: 42", GradeStatus::kGraded, true},
          {R"({"answer":42})", "ANSWER：42", GradeStatus::kGraded, true},
          {R"({"answer":42})", "**ANSWER:** 42", GradeStatus::kGraded, true},
          {R"({"answer":42})", "**Answer: 42**", GradeStatus::kGraded, true},
          {R"({"answer":42})", "ANSWER: 42.", GradeStatus::kGraded, true},
          {R"({"answer":42})", "ANSWER: 42.0", GradeStatus::kGraded, true},
          {R"({"answer":42})", "ANSWER: 042", GradeStatus::kGraded, true},
          {R"({"answer":42})", "ANSWER: 42 or 43", GradeStatus::kGraded, false},
          {R"({"answer":42})", "ANSWER: forty-two", GradeStatus::kGraded, false},
          {R"({"answer":42})", "ANSWER:", GradeStatus::kNoAnswer, false},
          {R"({"answer":1234.5})", "ANSWER: 1,234.50", GradeStatus::kGraded, true},
          {R"({"answer":1200})", "ANSWER: 1.2e3", GradeStatus::kGraded, true},
          {R"({"answer":12})", "ANSWER: ١٢", GradeStatus::kGraded, true},
          {R"({"answer":12})", "ANSWER：１２", GradeStatus::kGraded, true},
          {R"({"answer":12})", "ANSWER: १२", GradeStatus::kGraded, true},
          {R"({"answer":-3})", "ANSWER: −3", GradeStatus::kGraded, true},
          {R"({"answer":0.3})", "ANSWER: 0.30000000000000004", GradeStatus::kGraded, false},
          {R"({"answer":18})", "ANSWER: $18", GradeStatus::kGraded, true},
          {R"({"answer":18})", "ANSWER: 18 dollars", GradeStatus::kGraded, true},
          {R"({"answer":12,"unit":"种"})", "ANSWER: 12种", GradeStatus::kGraded, true},
          {R"({"answer":12,"unit":"种"})", "ANSWER: 12 种", GradeStatus::kGraded, true},
          {R"({"answer":12,"unit":"种"})", "ANSWER: 12", GradeStatus::kGraded, true},
          {R"({"answer":12,"unit":"种"})", "ANSWER: 12个", GradeStatus::kGraded, false},
          {R"({"answer":60,"unit":"km/h"})", "ANSWER: 60 KM/H", GradeStatus::kGraded, true},
          {R"({"answer":72,"unit":"cm²"})", "ANSWER: 72 cm^2", GradeStatus::kGraded, true},
          {R"({"answer":3.14,"tolerance":0.01})", "ANSWER: 3.15", GradeStatus::kGraded, true},
          {R"({"answer":3.14,"tolerance":0.01})", "ANSWER: 3.1501", GradeStatus::kGraded, false},
          {R"({"answer":0.3,"tolerance":0.1})", "ANSWER: 0.4", GradeStatus::kGraded, true},
          {R"({"answer":"Paris"})", "ANSWER: paris", GradeStatus::kGraded, true},
          {R"({"answer":"Paris"})", "ANSWER: Paris, France", GradeStatus::kGraded, false},
          {R"({"answer":"B"})", "ANSWER: `B`", GradeStatus::kGraded, true},
          {R"({"answer":42})",
           "ANSWER: 4\xff"
           "2",
           GradeStatus::kGraded, false},
          {R"({"answer":42})", "\xc3\x28\nANSWER: 42", GradeStatus::kGraded, true},
      }));
  CAPTURE(spec, content);
  const Grade g = GradeWith("answer_line", json::parse(spec), content);
  CHECK(StatusName(g.status) == std::string(StatusName(status)));
  CHECK(g.passed == passed);
  CHECK(g.score == (passed ? 1.0 : 0.0));
  CHECK_NOTHROW(evalrun::ToJson(g).dump());
}

TEST_CASE("answer_line: evidence and reasons", "[graders][answer_line]") {
  const Grade g = GradeWith("answer_line", {{"answer", 1234.5}}, "ANSWER: 1,234.50");
  CHECK(g.evidence["line"] == "1,234.50");
  CHECK(g.evidence["parsed"] == "1234.5");
  CHECK(g.evidence["expected"] == 1234.5);
  CHECK(GradeWith("answer_line", {{"answer", 1}}, "nothing").reason == "no ANSWER: line");
  CHECK(GradeWith("answer_line", {{"answer", 12}, {"unit", "种"}}, "ANSWER: 12个").reason ==
        "unit '个' is not '种'");
}

TEST_CASE("answer_line: a 10 MB output is graded quickly", "[graders][answer_line][hostile]") {
  const auto start = std::chrono::steady_clock::now();
  CHECK(GradeWith("answer_line", {{"answer", 7}}, Big(10'000'000, "\nANSWER: 7")).passed);
  CHECK(GradeWith("answer_line", {{"answer", 7}}, std::string(10'000'000, '9')).status ==
        GradeStatus::kNoAnswer);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
}

TEST_CASE("answer_line: spec errors name the location and key", "[graders][answer_line]") {
  auto [spec, message] = GENERATE(table<std::string, std::string>({
      {R"({})", "suite.yaml:4:5: answer_line grader: key 'answer': missing"},
      {R"({"answer":[1]})",
       "suite.yaml:4:5: answer_line grader: key 'answer': expected a number or a string, got a "
       "list"},
      {R"({"answer":1,"anwser":2})",
       "suite.yaml:4:5: answer_line grader: key 'anwser': unknown key, did you mean 'answer'?"},
      {R"({"answer":1,"unit":5})",
       "suite.yaml:4:5: answer_line grader: key 'unit': expected a string, got a number"},
      {R"({"answer":1,"tolerance":-1})",
       "suite.yaml:4:5: answer_line grader: key 'tolerance': expected a number >= 0"},
      {R"({"answer":"x","unit":"m"})",
       "suite.yaml:4:5: answer_line grader: key 'unit': needs a numeric 'answer'"},
      {R"({"answer":1,"unit":"m","tolerance":0.5})", ""},
  }));
  CHECK(SpecError("answer_line", json::parse(spec)) == message);
}

TEST_CASE("exact: truth table", "[graders][exact]") {
  auto [spec, content, passed] = GENERATE(table<std::string, std::string, bool>({
      {R"({"answer":"Yes"})", "Yes", true},
      {R"({"answer":"Yes"})", "  Yes \n", true},
      {R"({"answer":"Yes"})", "yes", false},
      {R"({"answer":"Yes","normalize":{"case":true}})", "yES", true},
      {R"({"answer":["yes","y"],"normalize":{"case":true}})", "Y", true},
      {R"({"answer":"a b c"})", "a  b\n c", false},
      {R"({"answer":"a b c","normalize":{"whitespace":true}})", "a  b\n c", true},
      {R"({"answer":"hello world","normalize":{"punctuation":true}})", "hello, world!", true},
      {R"({"answer":"你好","normalize":{"punctuation":true}})", "你好！", true},
      {R"({"answer":" x","normalize":{"strip":false}})", " x", false},
      {R"({"answer":" x"})", " x", true},
      {R"({"answer":"x"})", "x\xff", false},
      {R"({"answer":"x"})", Big(10'000'000, ""), false},
  }));
  CAPTURE(spec, content.substr(0, 40));
  const Grade g = GradeWith("exact", json::parse(spec), content);
  CHECK(g.status == GradeStatus::kGraded);
  CHECK(g.passed == passed);
  CHECK_NOTHROW(evalrun::ToJson(g).dump());
}

TEST_CASE("exact: spec errors", "[graders][exact]") {
  auto [spec, message] = GENERATE(table<std::string, std::string>({
      {R"({"answer":[]})",
       "suite.yaml:4:5: exact grader: key 'answer': expected a string or a non-empty list of "
       "strings"},
      {R"({"answer":"a","normalize":{"cse":true}})",
       "suite.yaml:4:5: exact grader: key 'normalize': unknown option 'cse', did you mean "
       "'case'?"},
      {R"({"answer":"a","normalize":{"case":"yes"}})",
       "suite.yaml:4:5: exact grader: key 'normalize': option 'case' expects true or false"},
      {R"({"answer":"a","normalize":{"case":true}})", ""},
  }));
  CHECK(SpecError("exact", json::parse(spec)) == message);
}

TEST_CASE("numeric: truth table", "[graders][numeric]") {
  auto [spec, content, status,
        passed] = GENERATE(table<std::string, std::string, GradeStatus, bool>({
      {R"({"answer":42})", "It is 42.", GradeStatus::kGraded, true},
      {R"({"answer":42})", "first 42 then 43", GradeStatus::kGraded, false},
      {R"({"answer":42,"extract":"first"})", "first 42 then 43", GradeStatus::kGraded, true},
      {R"({"answer":42,"extract":"answer_line"})", "7 and\nANSWER: 42", GradeStatus::kGraded, true},
      {R"({"answer":42,"extract":"answer_line"})", "42", GradeStatus::kNoAnswer, false},
      {R"({"answer":42})", "no digits here", GradeStatus::kNoAnswer, false},
      {R"({"answer":3.14159,"abs_tol":0.001})", "pi is about 3.142", GradeStatus::kGraded, true},
      {R"({"answer":3.14159,"abs_tol":0.0001})", "pi is about 3.142", GradeStatus::kGraded, false},
      {R"({"answer":1000,"rel_tol":0.01})", "about 1,010", GradeStatus::kGraded, true},
      {R"({"answer":1000,"rel_tol":0.01})", "about 1,011", GradeStatus::kGraded, false},
      {R"({"answer":1000,"rel_tol":0.01,"abs_tol":20})", "about 1,015", GradeStatus::kGraded, true},
      {R"({"answer":1234.5})", "total: 1,234.50 USD", GradeStatus::kGraded, true},
      {R"({"answer":1200})", "that is 1.2e3", GradeStatus::kGraded, true},
      {R"({"answer":12})", "الجواب ١٢", GradeStatus::kGraded, true},
      {R"({"answer":-5})", "x = -5", GradeStatus::kGraded, true},
      {R"({"answer":5})", "H-5", GradeStatus::kGraded, true},
      {R"({"answer":1e300,"rel_tol":1e-9})", "1e300", GradeStatus::kGraded, true},
      {R"({"answer":1})", "1e-999999", GradeStatus::kGraded, false},
      {R"({"answer":7})", Big(10'000'000, " 7"), GradeStatus::kGraded, true},
      {R"({"answer":7})", "\xff\xfe 7 \xc0", GradeStatus::kGraded, true},
  }));
  CAPTURE(spec, content.substr(0, 40));
  const Grade g = GradeWith("numeric", json::parse(spec), content);
  CHECK(StatusName(g.status) == std::string(StatusName(status)));
  CHECK(g.passed == passed);
  CHECK_NOTHROW(evalrun::ToJson(g).dump());
}

TEST_CASE("numeric: spec errors", "[graders][numeric]") {
  CHECK(SpecError("numeric", {{"answer", "1"}}) ==
        "suite.yaml:4:5: numeric grader: key 'answer': expected a number, got a string");
  CHECK(SpecError("numeric", {{"answer", 1}, {"extract", "middle"}}) ==
        "suite.yaml:4:5: numeric grader: key 'extract': expected 'last', 'first' or "
        "'answer_line'");
  CHECK(SpecError("numeric", {{"answer", 1}, {"rel_tol", -0.1}}) ==
        "suite.yaml:4:5: numeric grader: key 'rel_tol': expected a number >= 0");
}

TEST_CASE("regex: truth table", "[graders][regex]") {
  auto [spec, content, passed] = GENERATE(table<std::string, std::string, bool>({
      {R"({"pattern":"^\\s*ACKNOWLEDGED\\s*$"})", "ACKNOWLEDGED", true},
      {R"({"pattern":"^\\s*ACKNOWLEDGED\\s*$"})", "acknowledged", false},
      {R"({"pattern":"^\\s*ACKNOWLEDGED\\s*$","flags":"i"})", "acknowledged", true},
      {R"({"pattern":"\\n-- end\\s*$"})", "Hello.\n-- end", true},
      {R"({"pattern":"\\n-- end\\s*$"})", "Hello. -- end", false},
      {R"({"pattern":"^b$","flags":"m"})", "a\nb\nc", true},
      {R"({"pattern":"^b$"})", "a\nb\nc", false},
      {R"({"pattern":"a.c","flags":"s"})", "a\nc", true},
      {R"({"pattern":"a.c"})", "a\nc", false},
      {R"({"pattern":"\\u00e9t\\u00e9"})", "été", true},
      {R"({"pattern":"\\u{1F600}","flags":"u"})", "smile \xF0\x9F\x98\x80", true},
      {R"({"pattern":"^.{3}$"})", "日本語", true},
      {R"({"pattern":"b+","match":"full"})", "abb", false},
      {R"({"pattern":"a?b+","match":"full"})", "abb", true},
      {R"({"pattern":"forbidden","expect":false})", "all fine", true},
      {R"({"pattern":"forbidden","expect":false})", "forbidden word", false},
      {R"({"pattern":"ok"})", "\xff\xfe ok \xc3", true},
      {R"({"pattern":"^[A-Za-z]+\\s*\\n\\s*[A-Za-z]+\\s*\\n\\s*[A-Za-z]+\\s*$"})",
       "Red\nYellow\nBlue", true},
      {R"({"pattern":"end$"})", Big(10'000'000, "end"), true},
      // JavaScript's meaning: \s is Unicode white space, '.' refuses \r, \d stays ASCII.
      {R"({"pattern":"^a\\sb$"})", "a\u00a0b", true},
      {R"({"pattern":"^a\\sb$"})", "a\u3000b", true},
      {R"({"pattern":"^a\\Sb$"})", "a\ufeffb", false},
      {R"({"pattern":"^a[\\s]b$"})", "a\u2029b", true},
      {R"({"pattern":"a.b"})", "a\rb", false},
      {R"({"pattern":"^\\d$"})", "\u0663", false},
      {R"({"pattern":"^\\p{Lu}+$","flags":"u"})", "\u00c9T\u00c9", true},
      {R"({"pattern":"^\\p{Lu}$"})", "p{Lu}", true},  // without u: a literal p
  }));
  CAPTURE(spec, content.substr(0, 40));
  const Grade g = GradeWith("regex", json::parse(spec), content);
  CHECK(g.status == GradeStatus::kGraded);
  CHECK(g.passed == passed);
}

TEST_CASE("regex: catastrophic backtracking gives up, never hangs", "[graders][regex][hostile]") {
  const auto [content] = GENERATE(table<std::string>({
      {std::string(40, 'a') + "b"},
      {std::string(5'000, 'a') + "b"},
      {std::string(10'000'000, 'a') + "b"},
  }));
  const auto start = std::chrono::steady_clock::now();
  const Grade g = GradeWith("regex", {{"pattern", "(a+)+$"}}, content);
  CHECK(g.status == GradeStatus::kGraded);
  CHECK_FALSE(g.passed);
  CHECK(g.reason == "regex gave up (match limit)");
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
}

TEST_CASE("regex: polynomial work over many start positions is bounded",
          "[graders][regex][hostile]") {
  const auto start = std::chrono::steady_clock::now();
  const Grade g = GradeWith("regex", {{"pattern", "a{0,1000}c"}}, std::string(2'000'000, 'a'));
  CHECK_FALSE(g.passed);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
}

TEST_CASE("regex: spec errors", "[graders][regex]") {
  auto [spec, message] = GENERATE(table<std::string, std::string>({
      {R"({"pattern":"a(b"})",
       "suite.yaml:4:5: regex grader: key 'pattern': missing closing parenthesis at offset 3"},
      {R"({"pattern":"a","flags":"g"})",
       "suite.yaml:4:5: regex grader: key 'flags': unknown flag 'g' (allowed: i, m, s, u)"},
      {R"({"pattern":"a","match":"whole"})",
       "suite.yaml:4:5: regex grader: key 'match': expected 'search' or 'full'"},
      {R"({"patern":"a"})",
       "suite.yaml:4:5: regex grader: key 'patern': unknown key, did you mean 'pattern'?"},
      {R"({"pattern":"a","flags":"ims"})", ""},
      // JavaScript's grammar: PCRE2-only syntax is refused, the u flag is strict about escapes.
      {R"x({"pattern":"(?>a)"})x",
       "suite.yaml:4:5: regex grader: key 'pattern': invalid group at offset 0"},
      {R"({"pattern":"a++"})",
       "suite.yaml:4:5: regex grader: key 'pattern': nothing to repeat at offset 2"},
      {R"({"pattern":"\\q","flags":"u"})",
       "suite.yaml:4:5: regex grader: key 'pattern': invalid escape at offset 0"},
      {R"({"pattern":"\\q"})", ""},
  }));
  CHECK(SpecError("regex", json::parse(spec)) == message);
}

TEST_CASE("contains and excludes: truth table", "[graders][contains]") {
  auto [type, spec, content, passed,
        score] = GENERATE(table<std::string, std::string, std::string, bool, double>({
      {"contains", R"({"values":["velvet","midnight"]})", "Velvet paws at MIDNIGHT.", true, 1.0},
      {"contains", R"({"values":["velvet","midnight"]})", "velvet paws", false, 0.5},
      {"contains", R"({"values":["velvet","midnight"],"case_sensitive":true})",
       "Velvet at midnight", false, 0.5},
      {"contains", R"({"values":["velvet","midnight"],"mode":"any"})", "velvet", true, 1.0},
      {"contains", R"({"values":["velvet","midnight"],"mode":"any"})", "cat", false, 0.0},
      {"contains", R"({"values":["猫"]})", "一只猫", true, 1.0},
      {"contains", R"({"values":["needle"]})", Big(10'000'000, "needle"), true, 1.0},
      {"contains", R"({"values":["ok"]})", "\xff ok \xfe", true, 1.0},
      {"excludes", R"({"values":["e","E"]})", "A calm sun on a vast sky", true, 1.0},
      {"excludes", R"({"values":["e","E"]})", "The sea", false, 0.0},
      {"excludes", R"({"values":["foo","bar"]})", "foo", false, 0.5},
      {"excludes", R"({"values":["foo","bar"],"mode":"any"})", "foo", true, 1.0},
      {"excludes", R"({"values":["foo","bar"],"mode":"any"})", "foo bar", false, 0.0},
      {"excludes", R"({"values":["x"],"case_sensitive":true})", "X", true, 1.0},
  }));
  CAPTURE(type, spec, content.substr(0, 40));
  const Grade g = GradeWith(type, json::parse(spec), content);
  CHECK(g.status == GradeStatus::kGraded);
  CHECK(g.passed == passed);
  CHECK(g.score == Approx(score));
}

TEST_CASE("contains: spec errors", "[graders][contains]") {
  CHECK(SpecError("contains", {{"values", json::array()}}) ==
        "suite.yaml:4:5: contains grader: key 'values': expected a non-empty list of strings");
  CHECK(SpecError("excludes", {{"values", {"a"}}, {"mode", "some"}}) ==
        "suite.yaml:4:5: excludes grader: key 'mode': expected 'all' or 'any'");
  CHECK(SpecError("contains", {{"values", {"a", ""}}}) ==
        "suite.yaml:4:5: contains grader: key 'values': every value must be a non-empty string");
}

TEST_CASE("json_fields: truth table", "[graders][json_fields]") {
  const std::string order =
      R"({"fields":{"order_id":4471,"customer":"Maria Chen","unit_price":12.5}})";
  auto [spec, content, status,
        score] = GENERATE_REF(table<std::string, std::string, GradeStatus, double>({
      {order, R"({"order_id":4471,"customer":"Maria Chen","unit_price":12.5})",
       GradeStatus::kGraded, 1.0},
      {order,
       "Here:\n```json\n{\"order_id\": 4471.0, \"customer\": \"Maria Chen\", "
       "\"unit_price\": 12.50}\n```\nDone.",
       GradeStatus::kGraded, 1.0},
      {order, "Sure! {\"order_id\":4471,\"customer\":\"maria chen\",\"unit_price\":12.5} ok",
       GradeStatus::kGraded, 2.0 / 3},
      {order, R"({"order_id":"4471","customer":"Maria Chen"})", GradeStatus::kGraded, 1.0 / 3},
      {order, "no json here", GradeStatus::kNoAnswer, 0.0},
      {order, "{\"order_id\": 4471,", GradeStatus::kNoAnswer, 0.0},
      {R"({"fields":{"address.city":"London","tags[1]":"b"}})",
       R"({"address":{"city":"London"},"tags":["a","b"]})", GradeStatus::kGraded, 1.0},
      {R"({"fields":{"a.b":1}})", R"({"a.b":1})", GradeStatus::kGraded, 1.0},
      {R"({"fields":{"[0].x":true}})", R"([{"x":true}])", GradeStatus::kGraded, 1.0},
      {R"({"fields":{"x":true}})", R"({"x":1})", GradeStatus::kGraded, 0.0},
      {R"({"fields":{"obj":{"a":[1,2]}}})", R"({"obj":{"a":[1.0,2]}})", GradeStatus::kGraded, 1.0},
      {R"({"fields":{"x":1}})", std::string(100'000, '['), GradeStatus::kNoAnswer, 0.0},
      {R"({"fields":{"x":1}})", "{\"x\":1}" + std::string(100'000, '['), GradeStatus::kGraded, 1.0},
      {R"({"fields":{"x":1}})", "{\"x\":1, \"pad\":\"" + Big(10'000'000, "\"}"),
       GradeStatus::kGraded, 1.0},
      {R"({"fields":{"x":1}})", "{\"x\":\"\xff\"}", GradeStatus::kNoAnswer, 0.0},
  }));
  CAPTURE(spec, content.substr(0, 60));
  const Grade g = GradeWith("json_fields", json::parse(spec), content);
  CHECK(StatusName(g.status) == std::string(StatusName(status)));
  CHECK(g.score == Approx(score));
  CHECK(g.passed == (status == GradeStatus::kGraded && score == 1.0));
  CHECK_NOTHROW(evalrun::ToJson(g).dump());
}

TEST_CASE("json_fields: evidence lists mismatches", "[graders][json_fields]") {
  const Grade g = GradeWith("json_fields", {{"fields", {{"a", 1}, {"b", "x"}}}}, R"({"a":2})");
  REQUIRE(g.evidence["mismatches"].size() == 2);
  CHECK(g.evidence["mismatches"][0] == json({{"field", "a"}, {"expected", 1}, {"got", "2"}}));
  CHECK(g.evidence["mismatches"][1]["got"] == "(missing)");
  CHECK(g.reason == "2 of 2 fields differ, first 'a'");
  CHECK(GradeWith("json_fields", {{"fields", {{"x", 1}}}}, std::string(100'000, '[')).reason ==
        "JSON nested deeper than 512 levels");
}

TEST_CASE("json_fields: spec errors", "[graders][json_fields]") {
  CHECK(SpecError("json_fields", {{"expected", {{"a", 1}}}}) ==
        "suite.yaml:4:5: json_fields grader: key 'expected': unknown key");
  CHECK(SpecError("json_fields", {{"fields", json::object()}}) ==
        "suite.yaml:4:5: json_fields grader: key 'fields': expected a non-empty mapping of "
        "path: value");
  CHECK(SpecError("json_fields", {{"fields", {{"a..b", 1}}}}) ==
        "suite.yaml:4:5: json_fields grader: key 'fields': malformed path 'a..b' (write a.b, "
        "a[0] or a[0].b)");
}

TEST_CASE("json_schema: truth table", "[graders][json_schema]") {
  const std::string person = R"({"schema":{"type":"object","required":["name","age"],
      "properties":{"name":{"type":"string","minLength":1,"maxLength":5},
                    "age":{"type":"integer","minimum":0,"exclusiveMaximum":150},
                    "tags":{"type":"array","items":{"enum":["a","b"]}},
                    "code":{"type":"string","pattern":"^[A-Z]{2}\\d+$"}},
      "additionalProperties":false}})";
  auto [spec, content, status,
        passed] = GENERATE_REF(table<std::string, std::string, GradeStatus, bool>({
      {person, R"({"name":"Ada","age":36})", GradeStatus::kGraded, true},
      {person, R"({"name":"Ada","age":36.0,"tags":["a","b"],"code":"AB12"})", GradeStatus::kGraded,
       true},
      {person, R"({"name":"Ada"})", GradeStatus::kGraded, false},
      {person, R"({"name":"Ada","age":36.5})", GradeStatus::kGraded, false},
      {person, R"({"name":"Ada","age":150})", GradeStatus::kGraded, false},
      {person, R"({"name":"Ada","age":-1})", GradeStatus::kGraded, false},
      {person, R"({"name":"","age":1})", GradeStatus::kGraded, false},
      {person, R"({"name":"日本語です","age":1})", GradeStatus::kGraded, true},
      {person, R"({"name":"日本語ですよ","age":1})", GradeStatus::kGraded, false},
      {person, R"({"name":"Ada","age":1,"extra":1})", GradeStatus::kGraded, false},
      {person, R"({"name":"Ada","age":1,"tags":["c"]})", GradeStatus::kGraded, false},
      {person, R"({"name":"Ada","age":1,"code":"ab12"})", GradeStatus::kGraded, false},
      {person, R"(["not an object"])", GradeStatus::kGraded, false},
      {person, "none", GradeStatus::kNoAnswer, false},
      {person, std::string(100'000, '['), GradeStatus::kNoAnswer, false},
      {R"({"schema":{"type":["string","null"]}})", "null", GradeStatus::kGraded, true},
      {R"({"schema":{"const":{"a":1}}})", R"({"a":1.0})", GradeStatus::kGraded, true},
      {R"({"schema":{"type":"object","additionalProperties":{"type":"number"}}})",
       R"({"x":1,"y":"2"})", GradeStatus::kGraded, false},
      {R"({"schema":{"type":"string","pattern":"(a+)+$"}})", "\"" + std::string(5'000, 'a') + "b\"",
       GradeStatus::kGraded, false},
      {R"({"schema":{"type":"string"}})", "\"" + Big(10'000'000, "\""), GradeStatus::kGraded, true},
  }));
  CAPTURE(spec, content.substr(0, 60));
  const Grade g = GradeWith("json_schema", json::parse(spec), content);
  CHECK(StatusName(g.status) == std::string(StatusName(status)));
  CHECK(g.passed == passed);
  CHECK_NOTHROW(evalrun::ToJson(g).dump());
}

TEST_CASE("json_schema: violations carry JSON pointer paths", "[graders][json_schema]") {
  const json spec = json::parse(R"({"schema":{"type":"object","properties":{"a/b":{
      "type":"array","items":{"type":"integer"}}}}})");
  const Grade g = GradeWith("json_schema", spec, R"({"a/b":[1,"x",3,"y"]})");
  CHECK(g.evidence["violation_count"] == 2);
  CHECK(g.evidence["violations"][0]["path"] == "/a~1b/1");
  CHECK(g.evidence["violations"][0]["problem"] == "must be integer");
  CHECK(g.evidence["violations"][1]["path"] == "/a~1b/3");
  CHECK(g.reason == "2 violation(s), first at /a~1b/1: must be integer");
}

TEST_CASE("json_schema: every violation is counted, the first five kept, in AJV's words",
          "[graders][json_schema]") {
  const json spec = json::parse(R"({"schema":{"type":"object","required":["id","name"],
      "properties":{"id":{"type":"integer","minimum":1},"name":{"type":"string"},
                    "tags":{"items":{"maxLength":2}}},
      "additionalProperties":false}})");
  const Grade g = GradeWith("json_schema", spec,
                            R"({"id":0,"tags":["abc","de","fgh","ijk","lmn"],"x":1})");
  CHECK_FALSE(g.passed);
  CHECK(g.evidence["violation_count"] == 7);
  REQUIRE(g.evidence["violations"].size() == 5);
  CHECK(g.evidence["violations"][0] ==
        json({{"path", "/"}, {"problem", "must have required property 'name'"}}));
  // AJV's order: required, additionalProperties, then properties.
  CHECK(g.evidence["violations"][1] ==
        json({{"path", "/"}, {"problem", "must NOT have additional properties ('x')"}}));
  CHECK(g.evidence["violations"][2] == json({{"path", "/id"}, {"problem", "must be >= minimum"}}));
  CHECK(g.evidence["violations"][3] ==
        json({{"path", "/tags/0"}, {"problem", "must NOT have more than 2 characters"}}));
  CHECK(g.evidence["violations"][4]["path"] == "/tags/2");
  CHECK(g.reason == "7 violation(s), first at /: must have required property 'name'");
  const Grade extra = GradeWith("json_schema", spec, R"({"id":1,"name":"n","x":1})");
  CHECK(extra.reason ==
        "1 violation(s), first at /: must NOT have additional properties ('x')");
  // A pattern that hits the regex match limit is not valid, and says why.
  const Grade slow = GradeWith("json_schema", json::parse(R"({"schema":{"pattern":"(a+)+$"}})"),
                               "\"" + std::string(5'000, 'a') + "b\"");
  CHECK_FALSE(slow.passed);
  CHECK(slow.evidence["gave_up"] == true);
  CHECK(slow.reason == "validation gave up (a pattern hit the match limit, or the work limit)");
}

TEST_CASE("json_schema: spec errors", "[graders][json_schema]") {
  auto [spec, message] = GENERATE(table<std::string, std::string>({
      {R"({"schema":{"type":"object","propertes":{}}})",
       "suite.yaml:4:5: json_schema grader: key 'schema': #: unsupported keyword "
       "'propertes', did you mean 'properties'? (docs/graders.md lists the supported subset)"},
      {R"({"schema":{"properties":{"a":{"oneOf":[]}}}})",
       "suite.yaml:4:5: json_schema grader: key 'schema': #/properties/a: unsupported "
       "keyword 'oneOf' (docs/graders.md lists the supported subset)"},
      {R"({"schema":{"type":"int"}})",
       "suite.yaml:4:5: json_schema grader: key 'schema': #/type: must be a type name or an "
       "array of distinct type names"},
      {R"({"schema":{"pattern":"(x"}})",
       "suite.yaml:4:5: json_schema grader: key 'schema': #/pattern: invalid regular "
       "expression: missing closing parenthesis at offset 2"},
      {R"({"schema":{"minLength":-1}})",
       "suite.yaml:4:5: json_schema grader: key 'schema': #/minLength: must be a non-negative "
       "integer"},
      {R"({"schema":{"enum":[]}})",
       "suite.yaml:4:5: json_schema grader: key 'schema': #/enum: enum must have non-empty "
       "array"},
      {R"({"schema":"object"})",
       "suite.yaml:4:5: json_schema grader: key 'schema': #: a schema must be an object or a "
       "boolean"},
      {R"({"schema":{"type":"object","title":"x","$schema":"s"}})", ""},
  }));
  CHECK(SpecError("json_schema", json::parse(spec)) == message);
}

TEST_CASE("decimals: parsing and exact comparison", "[graders]") {
  auto [text, plain] = GENERATE(table<std::string, std::string>({
      {"1,234.50", "1234.5"},
      {"1.2e3", "1200"},
      {"-0.000", "0"},
      {"+7", "7"},
      {"0.1", "0.1"},
      {"12,34", "12"},
      {"1e-3", "0.001"},
      {"1.5e400", "1.5e+400"},
      {".5", "0.5"},
      {"1,234,567", "1234567"},
  }));
  size_t consumed = 0;
  const auto d = evalrun::ParseDecimalPrefix(text, &consumed);
  REQUIRE(d);
  CHECK(d->ToString() == plain);
  CHECK(evalrun::NormalizeNumerals("١٢٫٥") == "12.5");
  CHECK(evalrun::NormalizeNumerals("１２３") == "123");
  CHECK(evalrun::NormalizeNumerals("๑๒") == "12");
}

TEST_CASE("graders are thread-safe: concurrent grading gives the same grades", "[graders]") {
  const json regex_spec = {{"type", "regex"}, {"pattern", "x+y"}, {"flags", "i"}};
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) {
        Task task;
        task.grader = regex_spec;
        task.grader["pattern"] = "x+y" + std::to_string(i % 7);  // cache misses and hits
        const std::string content = "XXy" + std::to_string((i + t) % 7);
        const bool want = (i % 7) == ((i + t) % 7);
        if (evalrun::GradeOutput(task, Output{content, "", "stop"}, {}).passed != want) ++wrong;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(wrong == 0);
}
