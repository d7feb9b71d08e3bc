// code_tests: runs the model's code against a task's hidden tests in the sandbox (DESIGN.md
// section 8, docs/sandbox.md "code_tests").
//
// Spec: {type: code_tests, language: python|javascript|cpp, tests: <task file>,
//        timeout_s?: seconds (default 10), entry?: name or [names] (javascript: exported for
//        the tests when the solution does not export them itself)}.
//
// Protocol with the hidden tests. The grader writes solution.<ext>, the test file under its own
// name and a small runner, and passes the runner a random nonce on stdin. Python and JavaScript
// runners load the test file (which imports `solution`), call every top-level function whose
// name starts with "test" (Python also runs unittest.TestCase methods), and print one line
// "EVALRUN-RESULT <nonce> <passed> <total>" on a stdout that the code under test cannot reach
// (its own stdout goes to stderr). A test file without test functions counts as one test that
// passes when it loads (plain asserts: all or nothing). C++: the test file #includes
// "solution.cpp" and has its own main(); it is compiled with g++ -std=c++20 and passes (1/1)
// when it compiles and exits 0 within timeout_s (compilation gets at least 60 s). C++ has no
// nonce: code that calls exit(0) early passes (docs/sandbox.md says so).
// Score = passed / total; passed = all passed.
#include <algorithm>
#include <cctype>
#include <locale>
#include <random>
#include <sstream>

#include "core/error.h"
#include "graders/native/factories.h"
#include "plugins/sandbox.h"

namespace evalrun {
namespace {

constexpr size_t kEvidenceTail = 2000;  // bytes of stderr kept in the evidence

struct Language {
  const char* name;
  std::vector<std::string> fence_tags;  // info strings of a fenced block in this language
  const char* program;                  // what must be installed
  const char* solution_file;
};

const std::vector<Language>& Languages() {
  static const std::vector<Language> languages = {
      {"python", {"python", "python3", "py"}, "python3", "solution.py"},
      {"javascript", {"javascript", "js", "node", "nodejs"}, "node", "solution.js"},
      {"cpp", {"cpp", "c++", "cc", "cxx"}, "g++", "solution.cpp"},
  };
  return languages;
}

const Language* FindLanguage(const std::string& name) {
  const std::string lower = [&] {
    std::string s = name;
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
  }();
  for (const auto& language : Languages()) {
    if (lower == language.name) return &language;
    for (const auto& tag : language.fence_tags) {
      if (lower == tag) return &language;
    }
  }
  return nullptr;
}

constexpr const char* kPythonRunner = R"PY(import os, sys
nonce = sys.stdin.readline().strip()
report = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)  # the code under test writes to stderr; only this runner writes the report
sys.path.insert(0, os.getcwd())
passed = total = 0
def run(name, fn):
    global passed, total
    total += 1
    try:
        fn()
        passed += 1
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt):
            raise
        print("FAIL %s: %s: %s" % (name, type(e).__name__, e), file=sys.stderr)
try:
    import importlib, unittest
    module = importlib.import_module(sys.argv[1])
    tests = [(n, f) for n, f in vars(module).items() if n.startswith("test") and callable(f)
             and not isinstance(f, type)]
    for n, c in vars(module).items():
        if isinstance(c, type) and issubclass(c, unittest.TestCase):
            for m in unittest.TestLoader().getTestCaseNames(c):
                case = c(m)
                tests.append(("%s.%s" % (n, m),
                              lambda case=case: case.debug()))
    if not tests:
        tests = [("load", lambda: None)]
    for n, f in tests:
        run(n, f)
except BaseException as e:
    if isinstance(e, KeyboardInterrupt):
        raise
    import traceback
    traceback.print_exc()
    passed, total = 0, max(total, 1)
report.write("EVALRUN-RESULT %s %d %d\n" % (nonce, passed, total))
report.flush()
os._exit(0)
)PY";

constexpr const char* kJavascriptRunner = R"JS('use strict';
const fs = require('fs');
const nonce = fs.readFileSync(0, 'utf8').split('\n')[0].trim();
const reportFd = 1;
const writeReport = (line) => fs.writeSync(reportFd, line);
// The code under test writes to stderr; only this runner writes the report.
process.stdout.write = process.stderr.write.bind(process.stderr);
console.log = console.error;
(async () => {
  let passed = 0, total = 0;
  try {
    const tests = require('./' + process.argv[2]);
    const names = Object.keys(tests || {}).filter(
        (n) => n.startsWith('test') && typeof tests[n] === 'function');
    if (names.length === 0) { passed = 1; total = 1; }
    for (const n of names) {
      total += 1;
      try { await tests[n](); passed += 1; }
      catch (e) { console.error('FAIL ' + n + ': ' + (e && e.stack ? e.stack : e)); }
    }
  } catch (e) {
    console.error(e && e.stack ? e.stack : String(e));
    passed = 0; total = Math.max(total, 1);
  }
  writeReport('EVALRUN-RESULT ' + nonce + ' ' + passed + ' ' + total + '\n');
  process.exit(0);
})();
)JS";

// The code of the answer: the last fenced block tagged with the language; else the last fenced
// block without a tag; else the whole answer. A fence left open (a cut-off reply) runs to the
// end.
std::string ExtractCode(const std::string& text, const Language& language) {
  std::string tagged, untagged;
  bool have_tagged = false, have_untagged = false;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t open = text.find("```", pos);
    if (open == std::string::npos) break;
    const size_t line_end = text.find('\n', open);
    if (line_end == std::string::npos) break;
    std::string tag = text.substr(open + 3, line_end - open - 3);
    tag.erase(0, tag.find_first_not_of(" \t"));
    tag.erase(std::min(tag.size(), tag.find_first_of(" \t\r{")));
    size_t close = text.find("\n```", line_end);
    const size_t body_end = close == std::string::npos ? text.size() : close + 1;
    std::string body = text.substr(line_end + 1, body_end - line_end - 1);
    if (tag.empty()) {
      untagged = std::move(body);
      have_untagged = true;
    } else if (const Language* l = FindLanguage(tag); l == &language) {
      tagged = std::move(body);
      have_tagged = true;
    }
    if (close == std::string::npos) break;
    const size_t after = text.find('\n', close + 4);
    pos = after == std::string::npos ? text.size() : after + 1;
  }
  if (have_tagged) return tagged;
  if (have_untagged) return untagged;
  return text;
}

std::string Basename(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string MakeNonce() {
  std::random_device device;
  std::ostringstream out;
  out << std::hex << device() << device();
  return out.str();
}

// Parses "EVALRUN-RESULT <nonce> <passed> <total>"; false when absent.
bool ParseReport(const std::string& stdout_text, const std::string& nonce, long* passed,
                 long* total) {
  const std::string prefix = "EVALRUN-RESULT " + nonce + " ";
  const size_t at = stdout_text.rfind(prefix);
  if (at == std::string::npos) return false;
  std::istringstream in(stdout_text.substr(at + prefix.size()));
  long p = -1, t = -1;
  if (!(in >> p >> t) || p < 0 || t <= 0 || p > t) return false;
  *passed = p;
  *total = t;
  return true;
}

Grade Finish(Grade grade, const SandboxResult& result, const char* phase) {
  grade.evidence["phase"] = phase;
  grade.evidence["exit_code"] = result.exit_code;
  grade.evidence["timed_out"] = result.timed_out;
  grade.evidence["wall_seconds"] = result.wall_seconds;
  grade.evidence["stderr_tail"] = OutputTail(result.stderr_text, kEvidenceTail);
  return grade;
}

Grade Skipped(std::string reason) {
  Grade grade;
  grade.status = GradeStatus::kSkipped;
  grade.reason = std::move(reason);
  return grade;
}

class CodeTestsGrader : public Grader {
 public:
  std::string_view name() const override { return "code_tests"; }
  std::string_view version() const override { return "1"; }
  std::string_view description() const override {
    return "runs the answer's code against the task's hidden tests in the sandbox "
           "(python, javascript, cpp)";
  }

  void CheckSpec(const nlohmann::json& spec, const SourceLocation& where) const override {
    const std::string at = where.ToString() + ": code_tests: ";
    if (!spec.is_object()) throw Error(at + "the grader spec must be a mapping");
    if (!spec.contains("language") || !spec["language"].is_string()) {
      throw Error(at + "'language' is required (python, javascript or cpp)");
    }
    if (FindLanguage(spec["language"].get<std::string>()) == nullptr) {
      throw Error(at + "unknown language '" + spec["language"].get<std::string>() +
                  "' (python, javascript or cpp)");
    }
    if (!spec.contains("tests") || !spec["tests"].is_string() ||
        spec["tests"].get<std::string>().empty()) {
      throw Error(at +
                  "'tests' is required: the path of the hidden test file among the "
                  "task's files");
    }
    if (spec.contains("timeout_s") &&
        (!spec["timeout_s"].is_number() || spec["timeout_s"].get<double>() <= 0 ||
         spec["timeout_s"].get<double>() > 600)) {
      throw Error(at + "'timeout_s' must be a number of seconds in (0, 600]");
    }
    if (spec.contains("entry")) {
      const auto& entry = spec["entry"];
      bool ok = entry.is_string() || entry.is_array();
      if (entry.is_array()) {
        for (const auto& e : entry) ok = ok && e.is_string();
      }
      if (!ok) throw Error(at + "'entry' must be a name or a list of names");
    }
  }

  Grade Run(const nlohmann::json& spec, const Answer& answer,
            const GradeContext& context) const override {
    const Language* language = spec.is_object() && spec.value("language", "").size() > 0
                                   ? FindLanguage(spec.value("language", ""))
                                   : nullptr;
    const std::string tests_path =
        spec.is_object() && spec.contains("tests") && spec["tests"].is_string()
            ? spec["tests"].get<std::string>()
            : "";
    if (language == nullptr || tests_path.empty()) {
      Grade grade;
      grade.status = GradeStatus::kEnvError;
      grade.reason = "code_tests: the spec needs 'language' and 'tests'";
      return grade;
    }
    const Sandbox* sandbox = context.sandbox;
    if (sandbox == nullptr && context.unsafe_no_sandbox) sandbox = UnsafeFallback();
    if (sandbox == nullptr) {
      return Skipped(
          "no sandbox to run code in (install bubblewrap, or accept the risk with "
          "--unsafe-no-sandbox)");
    }
    if (auto why = sandbox->Unavailable()) return Skipped(*why);
    if (FindSandboxProgram(language->program).empty()) {
      return Skipped(std::string(language->program) + " is not installed");
    }
    if (answer.empty()) {
      Grade grade;
      grade.status = GradeStatus::kNoAnswer;
      grade.reason = "no code in the answer";
      return grade;
    }
    std::optional<std::string> tests;
    if (context.read_file) tests = context.read_file(tests_path);
    if (!tests) {
      Grade grade;
      grade.status = GradeStatus::kEnvError;
      grade.reason = "hidden tests '" + tests_path + "' are not available";
      return grade;
    }

    std::string code = ExtractCode(answer.text, *language);
    const std::string test_file = Basename(tests_path);
    const std::string nonce = MakeNonce();
    const double timeout = spec.value("timeout_s", 10.0);
    SandboxRun run;
    run.limits.wall_seconds = timeout;
    run.limits.cpu_seconds = timeout;
    run.stdin_text = nonce + "\n";
    run.files[test_file] = *tests;

    Grade grade;
    grade.evidence["language"] = language->name;
    grade.evidence["sandbox"] = sandbox->Describe();
    grade.evidence["code_bytes"] = code.size();
    const std::string lang = language->name;
    if (lang == "python") {
      run.files[language->solution_file] = code;
      run.files["evalrun_runner.py"] = kPythonRunner;
      std::string module = test_file;
      if (module.size() > 3 && module.ends_with(".py")) module.resize(module.size() - 3);
      run.argv = {"python3", "-B", "evalrun_runner.py", module};
    } else if (lang == "javascript") {
      for (const auto& entry : Entries(spec)) {
        // Exported for the tests when the answer defines it but does not export it.
        code.append("\n;if (typeof ").append(entry).append(" !== 'undefined' && module.exports.");
        code.append(entry).append(" === undefined) module.exports.").append(entry);
        code.append(" = ").append(entry).append(";\n");
      }
      run.files[language->solution_file] = code;
      run.files["evalrun_runner.js"] = kJavascriptRunner;
      // V8 reserves address space up front: the heap is capped by V8's own flag instead.
      run.limits.memory_bytes = 4L << 30;
      run.argv = {"node", "--max-old-space-size=256", "evalrun_runner.js", test_file};
    } else {
      run.files[language->solution_file] = code;
      SandboxRun compile = run;
      compile.limits.memory_bytes = 2L << 30;  // cc1plus needs room
      compile.limits.wall_seconds = std::max(timeout, 60.0);
      compile.limits.cpu_seconds = compile.limits.wall_seconds;
      compile.limits.max_file_bytes = 64L << 20;
      // One run (the working copy does not outlive a run): compile, then the tests under
      // coreutils' timeout with the task's own limit.
      const std::string script =
          "g++ -std=c++20 -O1 -o evalrun_test \"$0\" 1>&2 || "
          "{ echo 'evalrun: does not compile' >&2; exit 1; }; "
          "exec timeout -s KILL \"$1\" ./evalrun_test";
      compile.argv = {"sh", "-c", script, test_file, FormatSeconds(timeout, false)};
      SandboxResult result = sandbox->Run(compile);
      const bool compiled =
          result.stderr_text.find("evalrun: does not compile") == std::string::npos;
      grade.evidence["compiled"] = compiled;
      if (result.timed_out || (compiled && result.exit_code == 128 + 9)) {
        grade.status = GradeStatus::kTimeout;
        grade.reason = "the tests ran out of time (" + FormatSeconds(timeout, true) + ")";
        return Finish(std::move(grade), result, "run");
      }
      grade.evidence["tests_total"] = 1;
      grade.evidence["tests_passed"] = result.exit_code == 0 ? 1 : 0;
      grade.passed = result.exit_code == 0;
      grade.score = grade.passed ? 1 : 0;
      grade.reason = grade.passed ? "tests pass"
                     : !compiled  ? "the code does not compile"
                     : result.out_of_memory
                         ? "ran out of memory"
                         : "tests fail: exit code " + std::to_string(result.exit_code);
      return Finish(std::move(grade), result, "run");
    }

    SandboxResult result = sandbox->Run(run);
    if (result.timed_out) {
      grade.status = GradeStatus::kTimeout;
      grade.reason = "the tests ran out of time (" + FormatSeconds(timeout, true) + ")";
      return Finish(std::move(grade), result, "run");
    }
    long passed = 0, total = 0;
    if (!ParseReport(result.stdout_text, nonce, &passed, &total)) {
      grade.reason = result.out_of_memory ? "ran out of memory"
                                          : "the tests did not finish: exit code " +
                                                std::to_string(result.exit_code);
      return Finish(std::move(grade), result, "run");
    }
    grade.evidence["tests_passed"] = passed;
    grade.evidence["tests_total"] = total;
    grade.score = static_cast<double>(passed) / static_cast<double>(total);
    grade.passed = passed == total;
    grade.reason = std::to_string(passed) + " of " + std::to_string(total) + " tests pass";
    return Finish(std::move(grade), result, "run");
  }

 private:
  static std::vector<std::string> Entries(const nlohmann::json& spec) {
    std::vector<std::string> names;
    if (!spec.contains("entry")) return names;
    const auto& entry = spec["entry"];
    if (entry.is_string()) names.push_back(entry.get<std::string>());
    if (entry.is_array()) {
      for (const auto& e : entry) {
        if (e.is_string()) names.push_back(e.get<std::string>());
      }
    }
    // Only identifiers reach the generated JavaScript.
    std::erase_if(names, [](const std::string& n) {
      return n.empty() || std::isdigit(static_cast<unsigned char>(n[0])) ||
             n.find_first_not_of(
                 "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                 "0123456789_$") != std::string::npos;
    });
    return names;
  }

  static std::string FormatSeconds(double seconds, bool unit) {
    std::ostringstream out;
    out.imbue(std::locale::classic());
    out << seconds << (unit ? " s" : "");
    return out.str();
  }

  // --unsafe-no-sandbox with no sandbox given: the rlimits-only runner.
  static const Sandbox* UnsafeFallback() {
    static const std::unique_ptr<Sandbox> unsafe = MakeUnsafeSandbox();
    return unsafe.get();
  }
};

}  // namespace

std::unique_ptr<Grader> MakeCodeTestsGrader() {
  return std::make_unique<CodeTestsGrader>();
}

}  // namespace evalrun
