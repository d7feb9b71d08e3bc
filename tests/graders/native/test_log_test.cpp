// graders/native/test_log.cpp: reading test-run logs (pytest -rA, unittest -v, ctest, Unity, the exit
// code) into per-test results. The unittest and ctest fixtures are genuine runs; pytest and
// Unity are written from their documented formats (tests/fixtures/test-logs/README.md). Every
// expected name and status is spelled out; hostile logs (garbage, invalid UTF-8, CRLF, huge
// lines) must never throw.
#define CATCH_CONFIG_ENABLE_PAIR_STRINGMAKER  // failures print the name -> status entries
#include "tests/support/catch.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "graders/native/test_log.h"
#include "tests/support/fixtures.h"

using evalrun::LogParser;
using evalrun::ParseTestLog;
using evalrun::TestLogResult;
using evalrun::TestStatus;

namespace {

// name -> status name, for readable comparisons.
std::map<std::string, std::string> Statuses(const TestLogResult& result) {
  std::map<std::string, std::string> out;
  for (const auto& [name, status] : result.tests) out[name] = evalrun::TestStatusName(status);
  return out;
}

std::map<std::string, std::string> Parse(const std::string& log, LogParser parser) {
  return Statuses(ParseTestLog(log, parser, 1));
}

std::string ToCrlf(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\n') out += '\r';
    out += c;
  }
  return out;
}

// The counts must agree with the map.
void CheckCounts(const TestLogResult& r, int passed, int failed, int errors, int skipped) {
  CHECK(r.passed == passed);
  CHECK(r.failed == failed);
  CHECK(r.errors == errors);
  CHECK(r.skipped == skipped);
  CHECK(r.tests.size() == static_cast<size_t>(passed + failed + errors + skipped));
}

// Deterministic bytes of every value (xorshift), with newlines and separators sprinkled in.
std::string Garbage(size_t size, uint32_t seed) {
  std::string out;
  out.reserve(size);
  uint32_t x = seed;
  for (size_t i = 0; i < size; ++i) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    out.push_back(static_cast<char>(x & 0xFF));
  }
  return out;
}

const std::map<std::string, std::string> kUnittestExpected = {
    {"unittest.loader._FailedTest.tests.test_broken_import", "error"},
    {"tests.test_sample.ArithmeticTests.test_add", "passed"},
    {"tests.test_sample.ArithmeticTests.test_docstring", "passed"},
    {"tests.test_sample.ArithmeticTests.test_error", "error"},
    {"tests.test_sample.ArithmeticTests.test_fail", "failed"},
    {"tests.test_sample.ArithmeticTests.test_noisy", "passed"},
    {"tests.test_sample.ArithmeticTests.test_skip", "skipped"},
    {"tests.test_sample.ArithmeticTests.test_subtests", "failed"},
    {"tests.test_sample.ArithmeticTests.test_xfail", "passed"},
    {"tests.test_sample.ArithmeticTests.test_xpass", "failed"},
    {"tests.test_sample.BrokenSetupTests.setUpClass", "error"},
};

}  // namespace

TEST_CASE("test_log: parser and status names round-trip", "[graders]") {
  for (LogParser parser : {LogParser::kPytest, LogParser::kUnittest, LogParser::kCtest,
                           LogParser::kUnity, LogParser::kExitCode}) {
    CHECK(evalrun::ParseLogParserName(evalrun::LogParserName(parser)) == parser);
  }
  CHECK(std::string(evalrun::LogParserName(LogParser::kExitCode)) == "exit_code");
  CHECK(std::string(evalrun::LogParserName(LogParser::kPytest)) == "pytest");
  CHECK_FALSE(evalrun::ParseLogParserName("junit").has_value());
  CHECK_FALSE(evalrun::ParseLogParserName("").has_value());
  CHECK_FALSE(evalrun::ParseLogParserName("Pytest").has_value());
  CHECK(std::string(evalrun::TestStatusName(TestStatus::kPassed)) == "passed");
  CHECK(std::string(evalrun::TestStatusName(TestStatus::kFailed)) == "failed");
  CHECK(std::string(evalrun::TestStatusName(TestStatus::kError)) == "error");
  CHECK(std::string(evalrun::TestStatusName(TestStatus::kSkipped)) == "skipped");
}

TEST_CASE("test_log: unittest -v from Python 3.11 (genuine run)", "[graders]") {
  const std::string log = evalrun::testing::ReadFixture("test-logs/unittest-py311.log");
  SECTION("LF") {
    const TestLogResult r = ParseTestLog(log, LogParser::kUnittest, 1);
    CHECK(Statuses(r) == kUnittestExpected);
    CheckCounts(r, 4, 3, 3, 1);
  }
  SECTION("CRLF") { CHECK(Parse(ToCrlf(log), LogParser::kUnittest) == kUnittestExpected); }
}

TEST_CASE("test_log: unittest -v from Python 3.10, the older layout (genuine run)", "[graders]") {
  const std::string log = evalrun::testing::ReadFixture("test-logs/unittest-py310.log");
  // Same ids as 3.11 although the parentheses name only the class; the test whose subtest
  // failed shares its line with the next test and is known from the report heading.
  CHECK(Parse(log, LogParser::kUnittest) == kUnittestExpected);
  CHECK(Parse(ToCrlf(log), LogParser::kUnittest) == kUnittestExpected);
}

TEST_CASE("test_log: unittest lines one by one", "[graders]") {
  using Map = std::map<std::string, std::string>;
  SECTION("every outcome word, both layouts") {
    CHECK(Parse("test_a (m.C.test_a) ... ok\n"
                "test_b (m.C) ... FAIL\n"
                "test_c (m.C.test_c) ... ERROR\n"
                "test_d (m.C) ... skipped \"it's off\"\n"
                "test_e (m.C.test_e) ... skipped\n"
                "test_f (m.C.test_f) ... expected failure\n"
                "test_g (m.C.test_g) ... unexpected success\n",
                LogParser::kUnittest) == Map{{"m.C.test_a", "passed"},
                                             {"m.C.test_b", "failed"},
                                             {"m.C.test_c", "error"},
                                             {"m.C.test_d", "skipped"},
                                             {"m.C.test_e", "skipped"},
                                             {"m.C.test_f", "passed"},
                                             {"m.C.test_g", "failed"}});
  }
  SECTION("a docstring line that itself looks like a test line is the description") {
    CHECK(Parse("test_a (m.C.test_a)\n"
                "Check (x) ... ok\n",
                LogParser::kUnittest) == Map{{"m.C.test_a", "passed"}});
  }
  SECTION("a docstring containing ' ... ' keeps the outcome at the end") {
    CHECK(Parse("test_a (m.C.test_a)\n"
                "Wait ... then check ... FAIL\n",
                LogParser::kUnittest) == Map{{"m.C.test_a", "failed"}});
  }
  SECTION("a docstring test that prints before its outcome") {
    CHECK(Parse("test_a (m.C.test_a)\n"
                "Adds numbers. ... debug: x=1\n"
                "ERROR\n",
                LogParser::kUnittest) == Map{{"m.C.test_a", "error"}});
  }
  SECTION("interleaved stderr noise, including words that are outcomes only on their own") {
    CHECK(Parse("test_a (m.C.test_a) ... connecting to ok-server\n"
                "WARNING: ERROR budget low\n"
                "ok\n"
                "ok\n"  // nothing is pending any more: ignored
                "test_b (m.C.test_b) ... \n"
                "Traceback: FAIL\n"
                "FAIL\n",
                LogParser::kUnittest) == Map{{"m.C.test_a", "passed"}, {"m.C.test_b", "failed"}});
  }
  SECTION("a test whose outcome was swallowed by its output is absent, not misattributed") {
    CHECK(Parse("test_a (m.C.test_a) ... hellook\n"
                "test_b (m.C.test_b) ... ok\n"
                "ok\n",
                LogParser::kUnittest) == Map{{"m.C.test_b", "passed"}});
  }
  SECTION("a test named twice keeps its worst status, in either order") {
    CHECK(Parse("test_a (m.C.test_a) ... FAIL\ntest_a (m.C.test_a) ... ok\n",
                LogParser::kUnittest) == Map{{"m.C.test_a", "failed"}});
    CHECK(Parse("test_a (m.C.test_a) ... ok\ntest_a (m.C.test_a) ... ERROR\n"
                "test_a (m.C.test_a) ... FAIL\n",
                LogParser::kUnittest) == Map{{"m.C.test_a", "error"}});
    CHECK(Parse("test_a (m.C.test_a) ... skipped 'x'\ntest_a (m.C) ... ok\n",
                LogParser::kUnittest) == Map{{"m.C.test_a", "passed"}});
  }
  SECTION("report headings count only after a ===== separator") {
    CHECK(Parse("FAIL: test_a (m.C.test_a)\n", LogParser::kUnittest).empty());
    CHECK(Parse("======================================================================\n"
                "FAIL: test_a (m.C.test_a) [msg] (i=2)\n",
                LogParser::kUnittest) == Map{{"m.C.test_a", "failed"}});
  }
  SECTION("the summary line is not a test") {
    CHECK(Parse("Ran 3 tests in 0.001s\n\nFAILED (failures=1)\nOK\n", LogParser::kUnittest)
              .empty());
  }
  SECTION("a subtest line with a message and parameters") {
    CHECK(Parse("test_a (m.C.test_a) ... \n"
                "  test_a (m.C.test_a) [row 3] (i=3) ... ERROR\n"
                "test_b (m.C.test_b) ... ok\n",
                LogParser::kUnittest) == Map{{"m.C.test_a", "error"}, {"m.C.test_b", "passed"}});
  }
}

TEST_CASE("test_log: ctest --output-on-failure (genuine run)", "[graders]") {
  const std::string log = evalrun::testing::ReadFixture("test-logs/ctest.log");
  const std::map<std::string, std::string> expected = {
      {"math_passes", "passed"},
      {"math_fails", "failed"},
      {"parser_segfaults", "error"},
      {"slow_test", "failed"},
      {"missing_binary", "error"},
      {"disabled_test", "skipped"},
      {"skipped_test", "skipped"},
      {"name with spaces", "passed"},
      {"a_really_long_test_name_that_does_not_fit_in_the_dotted_column_at_all", "passed"},
      {"regex_mismatch", "failed"},
      {"will_fail_passes", "passed"},
  };
  const TestLogResult r = ParseTestLog(log, LogParser::kCtest, 8);
  CHECK(Statuses(r) == expected);
  CheckCounts(r, 4, 3, 2, 2);
  CHECK(Parse(ToCrlf(log), LogParser::kCtest) == expected);
}

TEST_CASE("test_log: ctest lines one by one", "[graders]") {
  using Map = std::map<std::string, std::string>;
  // ctest -j and -V prefixes, a name holding " ... " and dots, an unknown *** status.
  CHECK(Parse("      Start  1: a\n"
              "1/4 Test #1: a ...........   Passed    0.01 sec\n"
              "Test  #2: wait ... done.x .....***Failed    0.02 sec\n"
              "3/4 Test #3: c ..........***Exception: Child aborted  0.01 sec\n"
              "4/4 Test #4: d ..........***Unknown  0.01 sec\n"
              "1/4 Test #5: e ..........   Running\n"
              "Test #x: f ....   Passed\n"
              "The following tests FAILED:\n"
              "\t  2 - wait ... done.x (Failed)\n",
              LogParser::kCtest) == Map{{"a", "passed"},
                                        {"wait ... done.x", "failed"},
                                        {"c", "error"},
                                        {"d", "error"}});
}

TEST_CASE("test_log: pytest -rA summary, pytest 8 layout", "[graders]") {
  const std::string log = evalrun::testing::ReadFixture("test-logs/pytest-ra.log");
  const std::map<std::string, std::string> expected = {
      {"tests/test_calc.py::test_add", "passed"},
      {"tests/test_calc.py::test_divide[4-2-2]", "passed"},
      {"tests/test_calc.py::TestParser::test_tokens[a b]", "passed"},
      {"tests/test_calc.py::TestParser::test_tokens[x - y]", "passed"},
      {"tests/test_calc.py::test_brackets[[1, 2]]", "passed"},
      {"tests/test_db.py::test_connect_string", "passed"},
      {"tests/test_calc.py::test_divide[10-0-inf]", "failed"},
      {"tests/test_calc.py:31", "skipped"},
      {"tests/test_calc.py::test_unicode", "passed"},
      {"tests/test_calc.py::test_rounding", "failed"},
      {"tests/test_db.py::test_needs_db", "error"},
      {"tests/test_yaml.py", "error"},
  };
  const TestLogResult r = ParseTestLog(log, LogParser::kPytest, 1);
  CHECK(Statuses(r) == expected);
  CheckCounts(r, 7, 2, 2, 1);
  CHECK(Parse(ToCrlf(log), LogParser::kPytest) == expected);
}

TEST_CASE("test_log: pytest -rA summary, pytest 7 layout", "[graders]") {
  const std::string log = evalrun::testing::ReadFixture("test-logs/pytest7-ra.log");
  CHECK(Parse(log, LogParser::kPytest) ==
        std::map<std::string, std::string>{
            {"tests/test_calc.py::test_add", "passed"},
            {"tests/test_calc.py::TestParser::test_tokens[1 + -2]", "failed"},
            {"tests/test_calc.py", "skipped"},
            {"tests/test_calc.py::test_unicode", "passed"},
            {"tests/test_calc.py::test_rounding", "failed"},
        });
}

TEST_CASE("test_log: pytest lines one by one", "[graders]") {
  using Map = std::map<std::string, std::string>;
  SECTION("a teardown error after a pass: the worst status stays") {
    CHECK(Parse("PASSED t.py::test_a\nERROR t.py::test_a - RuntimeError: teardown\n",
                LogParser::kPytest) == Map{{"t.py::test_a", "error"}});
    CHECK(Parse("ERROR t.py::test_a - x\nPASSED t.py::test_a\n", LogParser::kPytest) ==
          Map{{"t.py::test_a", "error"}});
  }
  SECTION("ids: brackets in the message, an unclosed bracket, unfolded skips, colour") {
    CHECK(Parse("FAILED t.py::test_p[x] - assert [1] == [2]\n"
                "FAILED t.py::test_q[[] - IndexError\n"
                "PASSED t.py::test_r[a ]b]\n"
                "SKIPPED t.py::test_s - needs a GPU\n"
                "\x1b[32mPASSED\x1b[0m t.py::test_c\n"
                "\x1b[1m\x1b[31mFAILED\x1b[0m t.py::test_d\x1b[0m - \x1b[31massert 0\x1b[0m\n",
                LogParser::kPytest) == Map{{"t.py::test_p[x]", "failed"},
                                           {"t.py::test_q[[]", "failed"},
                                           {"t.py::test_r[a ]b]", "passed"},
                                           {"t.py::test_s", "skipped"},
                                           {"t.py::test_c", "passed"},
                                           {"t.py::test_d", "failed"}});
  }
  SECTION("lines that are not pytest's") {
    CHECK(Parse("FAILED (failures=1)\n"
                "PASSED\n"
                " PASSED t.py::test_indented\n"
                "passed t.py::test_lower\n"
                "ERROR: something broke\n"
                "SKIPPED [x] t.py:3: reason\n"
                "SKIPPED [2 t.py:3: reason\n"
                "t.py::test_a PASSED [ 50%]\n",
                LogParser::kPytest)
              .empty());
  }
}

TEST_CASE("test_log: Unity lines", "[graders]") {
  const std::string log = evalrun::testing::ReadFixture("test-logs/unity.log");
  const std::map<std::string, std::string> expected = {
      {"test_push_then_pop_returns_value", "passed"},
      {"test_pop_empty_returns_error", "failed"},
      {"test_wraparound", "skipped"},
      {"test_capacity", "skipped"},
      {"test_full_buffer_rejects_push", "failed"},
      {"test_windows_path", "passed"},
  };
  const TestLogResult r = ParseTestLog(log, LogParser::kUnity, 1);
  CHECK(Statuses(r) == expected);
  CheckCounts(r, 2, 2, 0, 2);
  CHECK(Parse(ToCrlf(log), LogParser::kUnity) == expected);
  // UNITY_OUTPUT_COLOR, a repeated test, words that only start like a status.
  CHECK(Parse("t.c:3:test_a:\x1b[42mPASS\x1b[0m\n"
              "t.c:9:test_b:PASS\n"
              "t.c:9:test_b:FAIL: Expected 1 Was 2\n"
              "t.c:12:test_c:PASSED\n"
              "t.c:13:test_d:FAILURE\n"
              "t.c:x:test_e:PASS\n"
              "t.c:14:test f:PASS\n"
              "t.c:14::PASS\n",
              LogParser::kUnity) ==
        std::map<std::string, std::string>{{"test_a", "passed"}, {"test_b", "failed"}});
}

TEST_CASE("test_log: exit_code", "[graders]") {
  const TestLogResult ok = ParseTestLog("anything at all\nFAILED t.py::x\n", LogParser::kExitCode, 0);
  CHECK(Statuses(ok) == std::map<std::string, std::string>{{"exit_code", "passed"}});
  CheckCounts(ok, 1, 0, 0, 0);
  CHECK(Parse("", LogParser::kExitCode) ==
        std::map<std::string, std::string>{{"exit_code", "failed"}});
  CHECK(Statuses(ParseTestLog("", LogParser::kExitCode, -9)) ==
        std::map<std::string, std::string>{{"exit_code", "failed"}});
}

TEST_CASE("test_log: an empty log names no tests", "[graders]") {
  for (LogParser parser :
       {LogParser::kPytest, LogParser::kUnittest, LogParser::kCtest, LogParser::kUnity}) {
    for (const char* log : {"", "\n", "\r\n\r\n", "   "}) {
      const TestLogResult r = ParseTestLog(log, parser, 0);
      CHECK(r.tests.empty());
      CheckCounts(r, 0, 0, 0, 0);
    }
  }
}

TEST_CASE("test_log: invalid UTF-8 in a name becomes U+FFFD", "[graders]") {
  const std::string fffd = "\xEF\xBF\xBD";
  CHECK(Parse("PASSED t.py::test_p[\xFF\xFE]\n", LogParser::kPytest) ==
        std::map<std::string, std::string>{{"t.py::test_p[" + fffd + fffd + "]", "passed"}});
  CHECK(Parse("t.c:1:test_\xC3:FAIL\n", LogParser::kUnity) ==
        std::map<std::string, std::string>{{"test_" + fffd, "failed"}});
  CHECK(Parse("1/1 Test #1: caf\xC3\xA9 ...   Passed 0.01 sec\n", LogParser::kCtest) ==
        std::map<std::string, std::string>{{"caf\xC3\xA9", "passed"}});
  CHECK(Parse("test_\xE9 (m.C.test_\xE9) ... ok\n", LogParser::kUnittest) ==
        std::map<std::string, std::string>{{"m.C.test_" + fffd, "passed"}});
}

TEST_CASE("test_log: garbage never throws", "[graders]") {
  for (LogParser parser : {LogParser::kPytest, LogParser::kUnittest, LogParser::kCtest,
                           LogParser::kUnity, LogParser::kExitCode}) {
    for (uint32_t seed : {1u, 2u, 3u, 0xDEADBEEFu}) {
      const std::string garbage = Garbage(1 << 16, seed);
      CHECK_NOTHROW(ParseTestLog(garbage, parser, 3));
    }
    // NUL bytes, lone ESC, an unterminated escape sequence, a lone CR.
    static const char kNasty[] = "PASSED t.py::a\0b\nt.c:1:x:PASS\x1b\n\x1b[31\r\r\n";
    const std::string nasty(kNasty, sizeof kNasty - 1);
    CHECK_NOTHROW(ParseTestLog(nasty, parser, 0));
  }
  // A NUL byte is part of a name like any other byte.
  CHECK(Parse(std::string("PASSED t.py::a\0b\n", 17), LogParser::kPytest) ==
        std::map<std::string, std::string>{{std::string("t.py::a\0b", 9), "passed"}});
}

TEST_CASE("test_log: huge logs and pathological lines", "[graders][slow]") {
  // 200,000 tests (about 10 MB); the time is measured by bench/test_log_bench.cpp.
  constexpr int kTests = 200'000;
  std::string unittest_log, pytest_log;
  for (int i = 0; i < kTests; ++i) {
    const std::string n = std::to_string(i);
    unittest_log += "test_" + n + " (pkg.mod.Tests.test_" + n + ") ... " +
                    (i % 10 == 0 ? "FAIL" : "ok") + "\n";
    pytest_log += (i % 10 == 0 ? "FAILED t.py::test_p[" : "PASSED t.py::test_p[") + n + " x]" +
                  (i % 10 == 0 ? " - AssertionError" : "") + "\n";
  }
  const TestLogResult u = ParseTestLog(unittest_log, LogParser::kUnittest, 1);
  CheckCounts(u, kTests / 10 * 9, kTests / 10, 0, 0);
  CHECK(u.tests.at("pkg.mod.Tests.test_199999") == TestStatus::kPassed);
  const TestLogResult p = ParseTestLog(pytest_log, LogParser::kPytest, 1);
  CheckCounts(p, kTests / 10 * 9, kTests / 10, 0, 0);
  CHECK(p.tests.at("t.py::test_p[10 x]") == TestStatus::kFailed);

  // Lines built to defeat backtracking: each parser's separators repeated 2 MB long.
  const size_t big = 2u << 20;
  std::string colons;
  for (size_t i = 0; colons.size() < big; ++i) colons += ":1";
  std::string dots;
  while (dots.size() < big) dots += " ...";
  for (LogParser parser : {LogParser::kPytest, LogParser::kUnittest, LogParser::kCtest,
                           LogParser::kUnity}) {
    for (const std::string& line :
         {colons, "1/1 Test #1: x" + dots + std::string(big, ' '),
          "test_a (m.C.test_a)" + dots + std::string(big, ' '), "PASSED t.py::p[" + colons,
          std::string(big, '='), std::string(big, 'a'), std::string(big, '[')}) {
      CHECK(ParseTestLog(line, parser, 0).tests.size() <= 1);
    }
  }
}
