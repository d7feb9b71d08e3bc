// Reading a test run's log into per-test results: one small line-based parser per convention
// (graders/native/test_log.h states the formats). Every parser walks the log once, line by line, with
// no regular expressions and no backtracking, so a log of any size or content costs time linear
// in its length and cannot throw.
#include "graders/native/test_log.h"

#include <utility>

#include "core/js_value.h"

namespace evalrun {

namespace {

// Worst first: a test named twice keeps the status with the higher rank.
int Rank(TestStatus status) {
  switch (status) {
    case TestStatus::kSkipped:
      return 0;
    case TestStatus::kPassed:
      return 1;
    case TestStatus::kFailed:
      return 2;
    case TestStatus::kError:
      return 3;
  }
  return 3;
}

// Collects results; names are stored as well-formed UTF-8 (ill-formed bytes become U+FFFD) so
// they can go into JSON, which nlohmann refuses to dump otherwise.
class Recorder {
 public:
  void Add(std::string_view name, TestStatus status) {
    if (name.empty()) return;
    auto [it, inserted] = tests_.emplace(js::ToWellFormedUtf8(name), status);
    if (!inserted && Rank(status) > Rank(it->second)) it->second = status;
  }

  TestLogResult Finish() && {
    TestLogResult result;
    result.tests = std::move(tests_);
    for (const auto& [name, status] : result.tests) {
      switch (status) {
        case TestStatus::kPassed:
          ++result.passed;
          break;
        case TestStatus::kFailed:
          ++result.failed;
          break;
        case TestStatus::kError:
          ++result.errors;
          break;
        case TestStatus::kSkipped:
          ++result.skipped;
          break;
      }
    }
    return result;
  }

 private:
  std::map<std::string, TestStatus> tests_;
};

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

std::string_view TrimLeft(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return s;
}

std::string_view TrimRight(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Calls `on_line` with each line of `log`, without its '\n' or a '\r' before it, and with ANSI
// escape sequences (`ESC [ ... final`, as pytest --color=yes and Unity's UNITY_OUTPUT_COLOR
// write) removed. A line with no ESC is passed through without a copy.
template <typename OnLine>
void ForEachLine(std::string_view log, OnLine&& on_line) {
  std::string scratch;
  size_t begin = 0;
  while (begin < log.size()) {
    size_t end = log.find('\n', begin);
    if (end == std::string_view::npos) end = log.size();
    std::string_view line = log.substr(begin, end - begin);
    begin = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find('\x1b') != std::string_view::npos) {
      scratch.clear();
      for (size_t i = 0; i < line.size(); ++i) {
        if (line[i] == '\x1b' && i + 1 < line.size() && line[i + 1] == '[') {
          size_t j = i + 2;
          while (j < line.size() && !(line[j] >= '@' && line[j] <= '~')) ++j;
          i = j;  // the final byte (or the end) is skipped by the loop's ++i
          continue;
        }
        scratch.push_back(line[i]);
      }
      line = scratch;
    }
    on_line(line);
  }
}

// ---------------------------------------------------------------------------------------------
// pytest -rA

// The node id at the start of `s`: up to the first space, except that a parameter part
// ("test_p[a b]") runs to the first ']' followed by a space or the end of the line, so ids with
// spaces, brackets or " - " inside the brackets are kept whole.
std::string_view ReadNodeId(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && s[i] != ' ' && s[i] != '[') ++i;
  if (i == s.size() || s[i] == ' ') return s.substr(0, i);
  for (size_t j = i + 1; j < s.size(); ++j) {
    if (s[j] == ']' && (j + 1 == s.size() || s[j + 1] == ' ')) return s.substr(0, j + 1);
  }
  return s.substr(0, s.find(' ', i));  // an unclosed parameter part: up to the next space
}

void ParsePytestLine(std::string_view line, Recorder& out) {
  static constexpr std::pair<std::string_view, TestStatus> kWords[] = {
      {"PASSED ", TestStatus::kPassed},   {"FAILED ", TestStatus::kFailed},
      {"ERROR ", TestStatus::kError},     {"SKIPPED ", TestStatus::kSkipped},
      {"XFAIL ", TestStatus::kPassed},    // failed as the test declares it should
      {"XPASS ", TestStatus::kFailed},    // the declared failure did not happen
  };
  for (const auto& [word, status] : kWords) {
    if (!StartsWith(line, word)) continue;
    std::string_view rest = line.substr(word.size());
    if (status == TestStatus::kSkipped && StartsWith(rest, "[")) {
      // Folded skips, "SKIPPED [2] tests/test_x.py:40: reason": pytest names no test, only
      // the location of the skip, which is what is recorded.
      const size_t close = rest.find("] ");
      if (close == std::string_view::npos) return;
      for (size_t i = 1; i < close; ++i) {
        if (!IsDigit(rest[i])) return;
      }
      rest = rest.substr(close + 2);
      out.Add(rest.substr(0, rest.find(": ")), status);
      return;
    }
    const std::string_view id = ReadNodeId(rest);
    // A node id names a test ("file.py::name"); an ERROR may name a whole file that failed to
    // collect ("ERROR tests/test_x.py - ImportError"). Anything else ("FAILED (failures=1)")
    // is not pytest's.
    if (id.find("::") != std::string_view::npos ||
        (status == TestStatus::kError && EndsWith(id, ".py"))) {
      out.Add(id, status);
    }
    return;
  }
}

// ---------------------------------------------------------------------------------------------
// python -m unittest -v

bool IsUnittestIdChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || IsDigit(c) || c == '_' || c == '.' ||
         static_cast<unsigned char>(c) >= 0x80;  // identifiers may be non-ASCII
}

// "name (dotted.id)" at the start of a line: the test's dotted id and what follows the ')'.
struct UnittestRef {
  std::string id;
  std::string_view rest;
};

std::optional<UnittestRef> ReadUnittestRef(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && IsUnittestIdChar(s[i])) ++i;
  if (i == 0 || s.substr(i, 2) != " (") return std::nullopt;
  const std::string_view name = s.substr(0, i);
  size_t j = i + 2;
  while (j < s.size() && IsUnittestIdChar(s[j])) ++j;
  if (j == i + 2 || j == s.size() || s[j] != ')') return std::nullopt;
  const std::string_view id = s.substr(i + 2, j - i - 2);
  UnittestRef ref;
  // Python 3.11+ writes the full id in the parentheses ("test_a (m.C.test_a)"); older versions
  // write the class ("test_a (m.C)"), and the name completes it.
  if (id.size() > name.size() && EndsWith(id, name) && id[id.size() - name.size() - 1] == '.') {
    ref.id = std::string(id);
  } else {
    ref.id = std::string(id) + "." + std::string(name);
  }
  ref.rest = s.substr(j + 1);
  return ref;
}

// The outcome word unittest writes after " ... " (trailing spaces ignored).
std::optional<TestStatus> UnittestStatus(std::string_view s) {
  s = TrimRight(s);
  if (s == "ok") return TestStatus::kPassed;
  if (s == "FAIL") return TestStatus::kFailed;
  if (s == "ERROR") return TestStatus::kError;
  if (s == "expected failure") return TestStatus::kPassed;
  if (s == "unexpected success") return TestStatus::kFailed;
  if (s == "skipped" || StartsWith(s, "skipped '") || StartsWith(s, "skipped \"")) {
    return TestStatus::kSkipped;
  }
  return std::nullopt;
}

// The first " ... <outcome>" in `s`: a docstring line ("Adds two numbers. ... ok") or the part
// of a subtest line after its parameters (" (i=1) ... FAIL").
std::optional<TestStatus> FindUnittestOutcome(std::string_view s) {
  s = TrimRight(s);  // once, so each candidate below is checked in constant time
  for (size_t pos = s.find(" ... "); pos != std::string_view::npos;
       pos = s.find(" ... ", pos + 1)) {
    if (auto status = UnittestStatus(s.substr(pos + 5))) return status;
  }
  return std::nullopt;
}

class UnittestParser {
 public:
  explicit UnittestParser(Recorder& out) : out_(out) {}

  void Line(std::string_view line) {
    const std::string_view body = TrimLeft(line);
    const bool after_separator = after_separator_;
    after_separator_ = body.size() >= 20 && body.find_first_not_of('=') == std::string_view::npos;

    if (waiting_ == Waiting::kDescription) {
      // The line after "test_a (m.C.test_a)" is the docstring's first line and the outcome.
      if (auto status = FindUnittestOutcome(body)) {
        Finish(*status);
        return;
      }
      if (!ReadUnittestRef(body) && body.find(" ... ") != std::string_view::npos) {
        waiting_ = Waiting::kOutcome;  // the test printed after the description
        return;
      }
    }
    if (auto ref = ReadUnittestRef(body)) {
      TestLine(std::move(*ref));
      return;
    }
    if (after_separator) {
      // The failure report: "FAIL: test_b (m.C.test_b)", "ERROR: setUpClass (m.C)" (a class or
      // module fixture that failed: its tests never ran), "UNEXPECTED SUCCESS: ...".
      static constexpr std::pair<std::string_view, TestStatus> kHeads[] = {
          {"FAIL: ", TestStatus::kFailed},
          {"ERROR: ", TestStatus::kError},
          {"UNEXPECTED SUCCESS: ", TestStatus::kFailed},
      };
      for (const auto& [head, status] : kHeads) {
        if (!StartsWith(body, head)) continue;
        if (auto ref = ReadUnittestRef(body.substr(head.size()))) out_.Add(ref->id, status);
        return;
      }
    }
    if (waiting_ == Waiting::kOutcome) {
      // The outcome on a line of its own, after what the test printed.
      if (auto status = UnittestStatus(body)) Finish(*status);
    }
  }

 private:
  enum class Waiting { kNothing, kDescription, kOutcome };

  void TestLine(UnittestRef ref) {
    if (!ref.rest.empty() && !StartsWith(ref.rest, " ... ")) {
      // A subtest: "  test_a (m.C.test_a) (i=1) ... FAIL" (3.11+ writes failed subtests
      // indented under their test). Its outcome is the test's; the test's own outcome may still
      // follow, so what is pending stays.
      if (auto status = FindUnittestOutcome(ref.rest)) out_.Add(ref.id, *status);
      return;
    }
    // A new test: whatever was pending ends here unrecorded (its outcome was lost in what it
    // printed, e.g. "hello" without a newline gives "... hellook"); a test the log does not
    // name is one the caller sees as missing.
    Clear();
    for (;;) {
      if (ref.rest.empty()) {  // the docstring line follows
        Wait(std::move(ref.id), Waiting::kDescription);
        return;
      }
      if (TrimRight(ref.rest) == " ...") {  // the test printed nothing yet
        Wait(std::move(ref.id), Waiting::kOutcome);
        return;
      }
      if (!StartsWith(ref.rest, " ... ")) {
        if (auto status = FindUnittestOutcome(ref.rest)) out_.Add(ref.id, *status);
        return;
      }
      const std::string_view after = ref.rest.substr(5);
      if (auto status = UnittestStatus(after)) {
        out_.Add(ref.id, *status);
        return;
      }
      // Before 3.11 a test whose subtests failed wrote nothing after its " ... ", so the next
      // test's line continues it: "test_a (m.C) ... test_b (m.C) ... ok". Its failure is in
      // the report at the end.
      if (auto next = ReadUnittestRef(after)) {
        ref = std::move(*next);
        continue;
      }
      // Anything else is what the test printed; the outcome comes on a later line.
      Wait(std::move(ref.id), Waiting::kOutcome);
      return;
    }
  }

  void Wait(std::string id, Waiting waiting) {
    pending_ = std::move(id);
    waiting_ = waiting;
  }
  void Finish(TestStatus status) {
    out_.Add(pending_, status);
    Clear();
  }
  void Clear() {
    pending_.clear();
    waiting_ = Waiting::kNothing;
  }

  Recorder& out_;
  std::string pending_;  // the test whose outcome has not been written yet
  Waiting waiting_ = Waiting::kNothing;
  bool after_separator_ = false;  // the previous line was "=====..."
};

// ---------------------------------------------------------------------------------------------
// ctest

// What follows the dots: "   Passed    0.01 sec", "***Failed ...", "***Exception: SegFault ...".
std::optional<TestStatus> CtestStatus(std::string_view s) {
  if (StartsWith(s, " ")) {
    return StartsWith(TrimLeft(s), "Passed") ? std::optional(TestStatus::kPassed) : std::nullopt;
  }
  if (!StartsWith(s, "***")) return std::nullopt;
  s.remove_prefix(3);
  if (StartsWith(s, "Failed")) return TestStatus::kFailed;
  if (StartsWith(s, "Timeout")) return TestStatus::kFailed;  // ctest lists it among the FAILED
  if (StartsWith(s, "Skipped")) return TestStatus::kSkipped;
  if (StartsWith(s, "Not Run (Disabled)")) return TestStatus::kSkipped;
  // "***Not Run" (its executable is missing), "***Exception: SegFault" and anything newer.
  if (!s.empty() && s.front() != ' ') return TestStatus::kError;
  return std::nullopt;
}

void ParseCtestLine(std::string_view line, Recorder& out) {
  std::string_view s = TrimLeft(line);
  // Optional "3/11 " progress, then "Test", spaces, "#3: ".
  size_t i = 0;
  while (i < s.size() && IsDigit(s[i])) ++i;
  if (i > 0) {
    if (i == s.size() || s[i] != '/') return;
    ++i;
    const size_t digits = i;
    while (i < s.size() && IsDigit(s[i])) ++i;
    if (i == digits) return;
    s = TrimLeft(s.substr(i));
  }
  if (!StartsWith(s, "Test ")) return;
  s = TrimLeft(s.substr(5));
  if (!StartsWith(s, "#")) return;
  i = 1;
  while (i < s.size() && IsDigit(s[i])) ++i;
  if (i == 1 || s.substr(i, 2) != ": ") return;
  s.remove_prefix(i + 2);
  // "name ......   Passed": the name ends at the first " ..." run followed by a status, so a
  // name with spaces or dots of its own is kept whole.
  for (size_t pos = s.find(" ..."); pos != std::string_view::npos; pos = s.find(" ...", pos + 1)) {
    size_t end = pos + 1;
    while (end < s.size() && s[end] == '.') ++end;
    if (auto status = CtestStatus(s.substr(end))) {
      out.Add(s.substr(0, pos), *status);
      return;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Unity

// "file.c:12:test_name:PASS", "...:FAIL: message", "...:FAIL", "...:IGNORE[: message]". The
// file may hold ':' (C:\src\t.c), so the line is searched for ":<line>:<name>:<STATUS>".
void ParseUnityLine(std::string_view line, Recorder& out) {
  for (size_t colon = line.find(':'); colon != std::string_view::npos;
       colon = line.find(':', colon + 1)) {
    size_t i = colon + 1;
    while (i < line.size() && IsDigit(line[i])) ++i;
    if (i == colon + 1 || i == line.size() || line[i] != ':') continue;
    const size_t name_begin = i + 1;
    const size_t name_end = line.find(':', name_begin);
    if (name_end == std::string_view::npos) return;
    const std::string_view name = line.substr(name_begin, name_end - name_begin);
    if (name.empty() || name.find(' ') != std::string_view::npos) continue;
    const std::string_view rest = line.substr(name_end + 1);
    static constexpr std::pair<std::string_view, TestStatus> kWords[] = {
        {"PASS", TestStatus::kPassed},
        {"FAIL", TestStatus::kFailed},
        {"IGNORE", TestStatus::kSkipped},
    };
    for (const auto& [word, status] : kWords) {
      if (!StartsWith(rest, word)) continue;
      const std::string_view after = rest.substr(word.size());
      if (after.empty() || after.front() == ':' || TrimRight(after).empty()) {
        out.Add(name, status);
        return;
      }
    }
  }
}

}  // namespace

const char* LogParserName(LogParser parser) {
  switch (parser) {
    case LogParser::kPytest:
      return "pytest";
    case LogParser::kUnittest:
      return "unittest";
    case LogParser::kCtest:
      return "ctest";
    case LogParser::kUnity:
      return "unity";
    case LogParser::kExitCode:
      return "exit_code";
  }
  return "?";
}

std::optional<LogParser> ParseLogParserName(std::string_view name) {
  for (LogParser parser : {LogParser::kPytest, LogParser::kUnittest, LogParser::kCtest,
                           LogParser::kUnity, LogParser::kExitCode}) {
    if (name == LogParserName(parser)) return parser;
  }
  return std::nullopt;
}

const char* TestStatusName(TestStatus status) {
  switch (status) {
    case TestStatus::kPassed:
      return "passed";
    case TestStatus::kFailed:
      return "failed";
    case TestStatus::kError:
      return "error";
    case TestStatus::kSkipped:
      return "skipped";
  }
  return "?";
}

TestLogResult ParseTestLog(std::string_view log, LogParser parser, int exit_code) {
  Recorder out;
  switch (parser) {
    case LogParser::kPytest:
      ForEachLine(log, [&](std::string_view line) { ParsePytestLine(line, out); });
      break;
    case LogParser::kUnittest: {
      UnittestParser unittest(out);
      ForEachLine(log, [&](std::string_view line) { unittest.Line(line); });
      break;
    }
    case LogParser::kCtest:
      ForEachLine(log, [&](std::string_view line) { ParseCtestLine(line, out); });
      break;
    case LogParser::kUnity:
      ForEachLine(log, [&](std::string_view line) { ParseUnityLine(line, out); });
      break;
    case LogParser::kExitCode:
      out.Add("exit_code", exit_code == 0 ? TestStatus::kPassed : TestStatus::kFailed);
      break;
  }
  return std::move(out).Finish();
}

}  // namespace evalrun
