#pragma once
// Reading a test run's log into per-test results, for repository coding tasks (DESIGN.md
// section 9): the repository's `test_cmd` runs in the sandbox and its output says which tests
// passed. One parser per convention, chosen by the task's `log_parser`:
//
//   pytest     `pytest -rA` short test summary lines: "PASSED tests/test_x.py::test_a",
//              "FAILED tests/test_x.py::test_b - AssertionError...", ERROR, SKIPPED, XFAIL,
//              XPASS. Test name: the node id ("tests/test_x.py::test_a", parametrized ids kept
//              whole, spaces and brackets inside "[...]" included); a file that failed to
//              collect ("ERROR tests/test_x.py - ImportError") is an error named by its path;
//              folded skips ("SKIPPED [2] tests/test_x.py:40: reason") name only the location
//              "tests/test_x.py:40". XFAIL counts as passed, XPASS as failed.
//   unittest   `python3 -m unittest -v` lines "test_a (tests.test_x.XTests.test_a) ... ok"
//              (Python 3.11+) and "test_a (tests.test_x.XTests) ... FAIL" (older), with ok,
//              FAIL, ERROR, skipped '...', expected failure (passed), unexpected success
//              (failed); a description docstring line between name and result, output the
//              test printed before its result, failed subtests, and the failure report's
//              "FAIL:"/"ERROR:" headings (a failed setUpClass is an error named
//              "tests.test_x.XTests.setUpClass") are handled. Test name: the dotted id
//              "tests.test_x.XTests.test_a" in both layouts.
//   ctest      `ctest --output-on-failure` lines "1/3 Test #1: name ......   Passed 0.01 sec",
//              "***Failed" and "***Timeout" (failed), "***Exception: ..." and "***Not Run"
//              (error: it crashed or could not start), "***Skipped" and "***Not Run
//              (Disabled)" (skipped). Test name: ctest's name, spaces included.
//   unity      Unity (ThrowTheSwitch) lines "file.c:12:test_name:PASS",
//              "file.c:20:test_name:FAIL: message", ":IGNORE" (skipped). Test name: test_name.
//   exit_code  no per-test lines: one test named "exit_code", passed when the command exited 0.
//
// Lines may end in CRLF and carry ANSI colour codes. A test whose result line is missing or
// garbled is simply absent: callers treat a test they expected and do not find as not passed.
// Pure functions; never throw on any log; time linear in its length (plus a map insert per
// test named; bench/test_log_bench.cpp measures it).
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace evalrun {

enum class LogParser { kPytest, kUnittest, kCtest, kUnity, kExitCode };
const char* LogParserName(LogParser parser);  // "pytest", "unittest", "ctest", "unity", "exit_code"
std::optional<LogParser> ParseLogParserName(std::string_view name);  // inverse

enum class TestStatus { kPassed, kFailed, kError, kSkipped };
const char* TestStatusName(TestStatus status);  // "passed", "failed", "error", "skipped"

struct TestLogResult {
  // Every test the log names, by name. A test named twice keeps its worst status
  // (error > failed > passed > skipped): a rerun does not hide a failure. Names are well-formed
  // UTF-8 (ill-formed bytes in the log become U+FFFD), so they can go into JSON.
  std::map<std::string, TestStatus> tests;
  // How many entries of `tests` have each status.
  int passed = 0, failed = 0, errors = 0, skipped = 0;
};

// Reads `log` (stdout and stderr of the test command, in order) with `parser`; `exit_code` is
// the command's exit status (used by kExitCode only).
TestLogResult ParseTestLog(std::string_view log, LogParser parser, int exit_code);

}  // namespace evalrun
