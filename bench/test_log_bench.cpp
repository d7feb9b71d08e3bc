// Reading test-run logs (graders/native/test_log.h promises time linear in the log's length): each
// parser on a log of N result lines and of 2N, and on pathological single lines of S and 2S
// bytes built from its own separators. Prints MB/s and the 2x/1x time ratio (about 2 when
// linear; the rows with many tests also pay the result map's O(log n) insert per test); exits 1
// when a ratio exceeds 3.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>

#include "graders/native/test_log.h"

namespace {

using evalrun::LogParser;

// The best of five runs, in seconds (the machine may be shared).
double Time(const std::string& log, LogParser parser, size_t* tests) {
  double best = 1e9;
  for (int i = 0; i < 5; ++i) {
    const auto start = std::chrono::steady_clock::now();
    const evalrun::TestLogResult r = evalrun::ParseTestLog(log, parser, 1);
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
                              .count());
    *tests = r.tests.size();
  }
  return best;
}

std::string Repeat(const std::function<std::string(int)>& line, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += line(i);
  return out;
}

std::string Fill(const std::string& unit, size_t bytes, const std::string& head = "") {
  std::string out = head;
  while (out.size() < bytes) out += unit;
  return out;
}

bool Row(const char* name, LogParser parser, const std::string& one, const std::string& two) {
  size_t tests1 = 0, tests2 = 0;
  const double t1 = Time(one, parser, &tests1);
  const double t2 = Time(two, parser, &tests2);
  const double ratio = t2 / std::max(t1, 1e-9);
  std::printf("%-26s %8.1f MB %8zu tests %8.1f ms %7.1f MB/s | 2x: %8.1f ms  ratio %.2f\n", name,
              static_cast<double>(one.size()) / 1e6, tests1, t1 * 1e3,
              static_cast<double>(one.size()) / 1e6 / t1, t2 * 1e3, ratio);
  return ratio <= 3.0;
}

}  // namespace

int main() {
  constexpr int kTests = 250'000;
  const auto unittest = [](int i) {
    const std::string n = std::to_string(i);
    return "test_" + n + " (pkg.mod.Tests.test_" + n + ") ... " + (i % 7 ? "ok" : "FAIL") + "\n";
  };
  const auto pytest = [](int i) {
    return std::string(i % 7 ? "PASSED" : "FAILED") + " tests/test_m.py::test_p[" +
           std::to_string(i) + " a-b]" + (i % 7 ? "" : " - AssertionError: assert 1 == 2") + "\n";
  };
  const auto ctest = [](int i) {
    const std::string n = std::to_string(i + 1);
    return n + "/500000 Test #" + n + ": case_" + n + " ..................   Passed    0.01 sec\n";
  };
  const auto unity = [](int i) {
    return "test/test_x.c:" + std::to_string(i) + ":test_case_" + std::to_string(i) +
           (i % 7 ? ":PASS\n" : ":FAIL: Expected 1 Was 2\n");
  };
  bool ok = true;
  ok &= Row("unittest", LogParser::kUnittest, Repeat(unittest, kTests), Repeat(unittest, 2 * kTests));
  ok &= Row("pytest", LogParser::kPytest, Repeat(pytest, kTests), Repeat(pytest, 2 * kTests));
  ok &= Row("ctest", LogParser::kCtest, Repeat(ctest, kTests), Repeat(ctest, 2 * kTests));
  ok &= Row("unity", LogParser::kUnity, Repeat(unity, kTests), Repeat(unity, 2 * kTests));

  constexpr size_t kLine = 8u << 20;
  ok &= Row("unity line ':1:1:1...'", LogParser::kUnity, Fill(":1", kLine), Fill(":1", 2 * kLine));
  ok &= Row("ctest line ' ... ...'", LogParser::kCtest, Fill(" ...", kLine, "1/1 Test #1: x"),
            Fill(" ...", 2 * kLine, "1/1 Test #1: x"));
  // A docstring line after "test_a (m.C.test_a)" is searched for " ... <outcome>".
  ok &= Row("unittest line 'd ... x ...'", LogParser::kUnittest,
            Fill(" ... x", kLine, "test_a (m.C.test_a)\nd"),
            Fill(" ... x", 2 * kLine, "test_a (m.C.test_a)\nd"));
  ok &= Row("pytest line '[[[['", LogParser::kPytest, Fill("[", kLine, "PASSED t.py::p"),
            Fill("[", 2 * kLine, "PASSED t.py::p"));
  ok &= Row("any parser, CRLF garbage", LogParser::kUnittest, Fill("\r\n\x1b[", kLine),
            Fill("\r\n\x1b[", 2 * kLine));
  std::printf("linear (every 2x ratio <= 3): %s\n", ok ? "yes" : "NO");
  return ok ? 0 : 1;
}
