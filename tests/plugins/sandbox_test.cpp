// The sandbox (plugins/sandbox.cpp) and the graders that run code in it: code_tests
// (graders/native/code_tests.cpp) and command (graders/native/command.cpp). These run real programs under
// bubblewrap; where bubblewrap cannot run here the isolation tests say so and stop. Each hostile
// program is bounded by a wall limit of a few seconds.
#include <dirent.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>

#include "tests/support/catch.h"

#include "graders/builtin.h"
#include "plugins/sandbox.h"
#include "tests/support/loopback_listener.h"

namespace evalrun {
namespace {

const Sandbox& Bubblewrap() {
  static const std::unique_ptr<Sandbox> sandbox = MakeBubblewrapSandbox();
  return *sandbox;
}

// True when bubblewrap works here; otherwise records why and the caller returns.
bool HaveBubblewrap() {
  if (auto why = Bubblewrap().Unavailable()) {
    WARN("bubblewrap unavailable, isolation not tested: " << *why);
    return false;
  }
  return true;
}

std::string Token() {
  std::random_device device;
  return "evalrun-test-" + std::to_string(device()) + std::to_string(device());
}

// Processes whose command line mentions `token`: what a run left behind.
int Survivors(const std::string& token) {
  int count = 0;
  DIR* proc = opendir("/proc");
  while (dirent* entry = readdir(proc)) {
    const std::string pid = entry->d_name;
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in("/proc/" + pid + "/cmdline", std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    if (text.str().find(token) != std::string::npos) ++count;
  }
  closedir(proc);
  return count;
}

SandboxResult Python(const Sandbox& sandbox, const std::string& code, double wall = 5,
                     const std::string& token = "") {
  SandboxRun run;
  run.argv = {"python3", "-c", code};
  if (!token.empty()) run.argv.push_back(token);
  run.limits.wall_seconds = wall;
  run.limits.cpu_seconds = wall;
  return sandbox.Run(run);
}

std::string ProjectFile(const std::string& path) {
  std::ifstream in(std::string(EVALRUN_TEST_FIXTURES) + "/../../" + path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// --- the sandbox ------------------------------------------------------------------------------

TEST_CASE("sandbox: output, exit codes, files and stdin pass through", "[sandbox]") {
  std::unique_ptr<Sandbox> unsafe = MakeUnsafeSandbox();
  for (const Sandbox* sandbox : {&Bubblewrap(), static_cast<const Sandbox*>(unsafe.get())}) {
    if (sandbox == &Bubblewrap() && !HaveBubblewrap()) continue;
    INFO(sandbox->Describe());
    SandboxRun run;
    run.argv = {"sh", "-c",
                "cat data/in.txt; read line; echo \"got $line\"; "
                "echo oops >&2; echo made > out.txt; cat out.txt; exit 7"};
    run.files["data/in.txt"] = "hello\n";
    run.stdin_text = "world\n";
    const SandboxResult result = sandbox->Run(run);
    CHECK(result.exit_code == 7);
    CHECK_FALSE(result.timed_out);
    CHECK(result.stdout_text == "hello\ngot world\nmade\n");
    CHECK(result.stderr_text == "oops\n");
    CHECK(result.wall_seconds < 5);
  }
}

TEST_CASE("sandbox: describes itself, and the unsafe one says it is unsafe", "[sandbox]") {
  CHECK_THAT(MakeUnsafeSandbox()->Describe(), Catch::Contains("UNSAFE"));
  CHECK_FALSE(MakeUnsafeSandbox()->Unavailable());
  if (!HaveBubblewrap()) return;
  CHECK_THAT(Bubblewrap().Describe(), Catch::StartsWith("bubblewrap"));
  CHECK_THAT(Bubblewrap().Describe(), Catch::Contains("no network"));
}

TEST_CASE("sandbox: network connections fail", "[sandbox]") {
  if (!HaveBubblewrap()) return;
  // Loopback only, and a non-loopback address that a network namespace cannot route: no traffic
  // leaves the machine.
  const SandboxResult result = Python(Bubblewrap(), R"(
import socket
for address in [("127.0.0.1", 8080), ("1.1.1.1", 53)]:
    s = socket.socket()
    s.settimeout(2)
    try:
        s.connect(address)
        print("connected", address)
    except OSError as e:
        print("failed", address[0], e.errno)
)");
  CHECK(result.exit_code == 0);
  CHECK(result.stdout_text.find("connected") == std::string::npos);
  CHECK_THAT(result.stdout_text, Catch::Contains("failed 127.0.0.1"));
  CHECK_THAT(result.stdout_text, Catch::Contains("failed 1.1.1.1 101"));  // ENETUNREACH
  CHECK(result.wall_seconds < 4);
}

TEST_CASE("sandbox: nothing outside the working copy is writable", "[sandbox]") {
  if (!HaveBubblewrap()) return;
  const SandboxResult result = Python(Bubblewrap(), R"(
for path in ["/etc/x", "/usr/x", "/x", "/proc/x", "/bin/x"]:
    try:
        open(path, "w").write("x")
        print("wrote", path)
    except OSError as e:
        print("refused", path)
open("/work/ok", "w").write("fine")
print("work ok")
)");
  CHECK(result.exit_code == 0);
  CHECK(result.stdout_text.find("wrote") == std::string::npos);
  CHECK_THAT(result.stdout_text, Catch::Contains("refused /etc/x"));
  CHECK_THAT(result.stdout_text, Catch::Contains("refused /usr/x"));
  CHECK_THAT(result.stdout_text, Catch::Contains("work ok"));
  CHECK(access("/etc/x", F_OK) != 0);
}

TEST_CASE("sandbox: /root, /home and the project are not visible", "[sandbox]") {
  if (!HaveBubblewrap()) return;
  const std::string project = std::string(EVALRUN_TEST_FIXTURES) + "/../../tasks/smoke/files";
  const SandboxResult result = Python(Bubblewrap(), R"(
import os, sys
for path in ["/root", "/home", sys.argv[1]]:
    try:
        print(path, "lists", os.listdir(path))
    except OSError as e:
        print(path, "refused")
)",
                                      5, project);
  CHECK(result.exit_code == 0);
  CHECK_THAT(result.stdout_text, Catch::Contains("/root refused"));
  CHECK_THAT(result.stdout_text, Catch::Contains("/home refused"));
  CHECK_THAT(result.stdout_text, Catch::Contains(project + " refused"));
}

TEST_CASE("sandbox: runs as an unprivileged user", "[sandbox]") {
  if (!HaveBubblewrap()) return;
  const SandboxResult result = Python(Bubblewrap(), "import os; print(os.getuid(), os.geteuid())");
  CHECK(result.exit_code == 0);
  if (geteuid() == 0) CHECK(result.stdout_text == "65534 65534\n");
  CHECK(result.stdout_text.rfind("0 ", 0) != 0);
}

TEST_CASE("sandbox: an infinite loop is killed at its limit with no survivors", "[sandbox]") {
  std::unique_ptr<Sandbox> unsafe = MakeUnsafeSandbox();
  for (const Sandbox* sandbox : {&Bubblewrap(), static_cast<const Sandbox*>(unsafe.get())}) {
    if (sandbox == &Bubblewrap() && !HaveBubblewrap()) continue;
    INFO(sandbox->Describe());
    const std::string token = Token();
    // A child in the background too: it must die with the run.
    const SandboxResult result = Python(*sandbox, R"(
import os
if os.fork() == 0:
    while True: pass
while True: pass
)",
                                        1.5, token);
    CHECK(result.timed_out);
    CHECK(result.exit_code == 128 + 9);
    CHECK(result.wall_seconds >= 1.4);
    CHECK(result.wall_seconds < 4);
    usleep(100 * 1000);
    CHECK(Survivors(token) == 0);
  }
}

TEST_CASE("sandbox: a fork bomb is contained and killed", "[sandbox][slow]") {
  if (!HaveBubblewrap()) return;
  const std::string token = Token();
  // Children sleep; the parent forks until fork fails, reports how many it got, then hangs.
  const SandboxResult result = Python(Bubblewrap(), R"(
import os, sys, time
count = 0
try:
    while count < 10000:
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
        count += 1
except OSError as e:
    print("fork failed after", count, flush=True)
while True:
    try:
        os.fork()
    except OSError:
        time.sleep(0.01)
)",
                                      3, token);
  CHECK(result.timed_out);
  CHECK_THAT(result.stdout_text, Catch::StartsWith("fork failed after"));
  const int forked = std::stoi(result.stdout_text.substr(std::string("fork failed after").size()));
  CHECK(forked <= SandboxLimits{}.max_processes);
  usleep(200 * 1000);
  CHECK(Survivors(token) == 0);
}

TEST_CASE("sandbox: a memory hog is stopped", "[sandbox]") {
  std::unique_ptr<Sandbox> unsafe = MakeUnsafeSandbox();
  for (const Sandbox* sandbox : {&Bubblewrap(), static_cast<const Sandbox*>(unsafe.get())}) {
    if (sandbox == &Bubblewrap() && !HaveBubblewrap()) continue;
    const SandboxResult result = Python(*sandbox, "x = bytearray(2 * 1024**3)\nprint('got it')");
    CHECK(result.exit_code != 0);
    CHECK(result.out_of_memory);
    CHECK(result.stdout_text.empty());
  }
}

TEST_CASE("sandbox: output beyond the cap is dropped, the program is not blocked", "[sandbox]") {
  if (!HaveBubblewrap()) return;
  SandboxRun run;
  run.argv = {"python3", "-c", "import sys\nsys.stdout.write('x' * (10 << 20))\nprint('end')"};
  run.limits.max_output_bytes = 1000;
  const SandboxResult result = Bubblewrap().Run(run);
  CHECK(result.exit_code == 0);
  CHECK(result.stdout_text == std::string(1000, 'x'));
}

TEST_CASE("sandbox: a file past the size limit is refused", "[sandbox]") {
  if (!HaveBubblewrap()) return;
  SandboxRun run;
  run.argv = {"sh", "-c", "head -c 3000000 /dev/zero > big; echo $?"};
  run.limits.max_file_bytes = 1 << 20;
  const SandboxResult result = Bubblewrap().Run(run);
  CHECK(result.stdout_text != "0\n");
}

TEST_CASE("sandbox: file names outside the working copy are refused", "[sandbox]") {
  for (const char* name : {"../escape", "/etc/escape", "a/../../escape"}) {
    SandboxRun run;
    run.argv = {"true"};
    run.files[name] = "x";
    const SandboxResult result = MakeUnsafeSandbox()->Run(run);
    CHECK(result.exit_code == 127);
    CHECK_THAT(result.stderr_text, Catch::Contains("outside the working copy"));
  }
}

TEST_CASE("sandbox: a workspace keeps what the code writes, read-only paths stay unchanged",
          "[sandbox]") {
  if (!HaveBubblewrap()) return;
  char pattern[] = "/tmp/evalrun-workspace-test-XXXXXX";
  REQUIRE(mkdtemp(pattern) != nullptr);
  const std::string workspace = pattern;
  REQUIRE(system(("mkdir -p " + workspace + "/.git && echo ref > " + workspace + "/.git/HEAD")
                     .c_str()) == 0);
  SandboxRun run;
  run.workspace = workspace;
  run.read_only = {".git"};
  run.files = {{"given.txt", "from evalrun\n"}};
  run.argv = {"sh", "-c",
              "cat given.txt; echo made > made.txt; echo x > .git/HEAD 2>/dev/null || echo "
              "refused; echo y > .git/new 2>/dev/null || echo refused-new; pwd"};
  SandboxResult result = Bubblewrap().Run(run);
  CHECK(result.exit_code == 0);
  CHECK(result.stdout_text == "from evalrun\nrefused\nrefused-new\n/work\n");
  std::ifstream made(workspace + "/made.txt");
  std::string line;
  CHECK(std::getline(made, line));
  CHECK(line == "made");
  std::ifstream head(workspace + "/.git/HEAD");
  CHECK(std::getline(head, line));
  CHECK(line == "ref");

  run.read_only = {"../etc"};
  CHECK(Bubblewrap().Run(run).stderr_text ==
        "evalrun sandbox: read-only path outside the working copy: '../etc'");
  run.read_only = {"missing"};
  CHECK(Bubblewrap().Run(run).stderr_text ==
        "evalrun sandbox: read-only path 'missing' does not exist");
  run.read_only = {};
  run.workspace = workspace + "/nope";
  CHECK(Bubblewrap().Run(run).stderr_text ==
        "evalrun sandbox: workspace '" + workspace + "/nope' is not a directory");
  REQUIRE(system(("rm -rf " + workspace).c_str()) == 0);
}

TEST_CASE("sandbox: a scratch directory holds several steps at a chosen work path",
          "[sandbox]") {
  std::string path;
  {
    const ScratchDirectory dir;
    path = dir.path();
    REQUIRE_FALSE(path.empty());
    CHECK(std::filesystem::is_directory(path));
    if (HaveBubblewrap()) {
      CHECK(Bubblewrap().relocates());
      SandboxRun first;
      first.workspace = path;
      first.work_path = "/workspace";
      first.argv = {"sh", "-c", "pwd; mkdir -p locked/in && echo 1 > locked/in/f && chmod 0 locked"};
      const SandboxResult made = Bubblewrap().Run(first);
      CHECK(made.exit_code == 0);
      CHECK(made.stdout_text == "/workspace\n");
      SandboxRun second = first;
      second.argv = {"sh", "-c", "ls /workspace; test -e /work || echo no-work"};
      CHECK(Bubblewrap().Run(second).stdout_text == "locked\nno-work\n");
      for (const char* taken : {"/usr", "/tmp", "/", "relative", "/a/b", "/.."}) {
        second.work_path = taken;
        CHECK(Bubblewrap().Run(second).stderr_text ==
              "evalrun sandbox: work path '" + std::string(taken) +
                  "' must be a new top-level directory such as /workspace");
      }
    }
    CHECK_FALSE(MakeUnsafeSandbox()->relocates());
  }
  // Removed with what the steps left, an unreadable directory included.
  CHECK_FALSE(std::filesystem::exists(path));
}

// A container's writable layer: /tmp on disk past the tmpfs cap, and a directory a server puts
// its socket in; both empty at each run and gone after it.
TEST_CASE("sandbox: writable directories outside the working copy", "[sandbox]") {
  SandboxRun run;
  run.work_path = "/workspace";
  run.writable_dirs = {"/tmp", "/var/run/postgresql"};
  run.limits.max_file_bytes = 2L << 20;  // the tmpfs /tmp would hold 2 MiB in all
  run.argv = {"sh", "-c",
              "ls -A /tmp /var/run/postgresql; for i in 1 2 3; do head -c 1500000 /dev/zero > "
              "/tmp/f$i || exit 9; done; echo ok > /var/run/postgresql/s && cat "
              "/var/run/postgresql/s; du -sk /tmp | cut -f1; touch /var/run/other 2>/dev/null || "
              "echo refused"};
  CHECK(MakeUnsafeSandbox()->Run(run).stderr_text ==
        "evalrun sandbox: writable directories outside the working copy need the bubblewrap "
        "sandbox");
  if (!HaveBubblewrap()) return;
  for (int round = 0; round < 2; ++round) {  // the second run starts empty again
    const SandboxResult r = Bubblewrap().Run(run);
    INFO(r.stderr_text);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.stdout_text, Catch::StartsWith("/tmp:\n\n/var/run/postgresql:\nok\n"));
    CHECK_THAT(r.stdout_text, Catch::EndsWith("\nrefused\n"));
  }
  // Without /tmp among them, /tmp is the capped tmpfs: the third file does not fit.
  run.writable_dirs = {"/var/run/postgresql"};
  CHECK(Bubblewrap().Run(run).exit_code == 9);
  for (const char* bad : {"relative", "/", "/usr/x", "/etc", "/proc/x", "/dev/shm", "/workspace",
                          "/workspace/x", "/a/../b"}) {
    run.writable_dirs = {bad};
    CHECK(Bubblewrap().Run(run).stderr_text ==
          "evalrun sandbox: writable directory '" + std::string(bad) +
              "' must be an absolute path outside the system's directories and the work path");
  }
}

// SandboxRun::network: the host's network namespace, for tests the user let install packages
// (--sandbox-network). A port listening on the host's 127.0.0.1 is reached only then.
TEST_CASE("sandbox: the host's network only when the run asks for it", "[sandbox]") {
  if (!HaveBubblewrap()) return;
  const testing::LoopbackListener listener;
  REQUIRE(listener.ok());
  SandboxRun run;
  run.argv = {"python3", "-c",
              "import socket, sys\ntry:\n    socket.create_connection(('127.0.0.1', " +
                  listener.port() +
                  "), 2)\n    print('REACHED')\nexcept OSError as e:\n    print(type(e).__name__)"};
  CHECK(Bubblewrap().Run(run).stdout_text == "ConnectionRefusedError\n");
  run.network = true;
  const SandboxResult open = Bubblewrap().Run(run);
  INFO(open.stderr_text);
  CHECK(open.stdout_text == "REACHED\n");
}

TEST_CASE("sandbox: start-up cost of a run", "[sandbox][benchmark]") {
  if (!HaveBubblewrap()) return;
  SandboxRun run;
  run.argv = {"true"};
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 20; ++i) REQUIRE(Bubblewrap().Run(run).exit_code == 0);
  const double each =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / 20;
  WARN("sandbox start-up: " << each * 1000 << " ms per run of `true` (mean of 20)");
  CHECK(each < 1.0);
}

TEST_CASE("sandbox: OutputTail keeps valid UTF-8", "[sandbox]") {
  CHECK(OutputTail("abcdef", 3) == "def");
  CHECK(OutputTail("ok\xff\xfe", 10) == "ok\xEF\xBF\xBD\xEF\xBF\xBD");
  CHECK(OutputTail("\xC3\xA9t\xC3\xA9", 3) == "t\xC3\xA9");
}

// --- code_tests --------------------------------------------------------------------------------

struct GradeCase {
  const char* name;
  std::string answer;
  GradeStatus status;
  double score;
};

GradeContext SmokeContext(const Sandbox* sandbox) {
  GradeContext context;
  context.sandbox = sandbox;
  context.read_file = [](const std::string& path) -> std::optional<std::string> {
    std::string text = ProjectFile("tasks/smoke/" + path);
    if (text.empty()) return std::nullopt;
    return text;
  };
  return context;
}

Answer AnswerOf(std::string text) {
  Answer answer;
  answer.text = std::move(text);
  return answer;
}

const char* kGoodPalindrome =
    "Here it is:\n```python\ndef is_palindrome(s: str) -> bool:\n"
    "    t = [c.lower() for c in s if c.isalnum()]\n    return t == t[::-1]\n```\n";

TEST_CASE("code_tests: grades the smoke suite's python tasks", "[graders][code_tests]") {
  if (!HaveBubblewrap()) return;
  const auto grader = MakeCodeTestsGrader();
  const nlohmann::json spec = {{"type", "code_tests"},
                               {"language", "python"},
                               {"tests", "files/test_is_palindrome.py"},
                               {"timeout_s", 3}};
  const std::vector<GradeCase> cases = {
      {"correct", kGoodPalindrome, GradeStatus::kGraded, 1},
      {"correct, bare code without a fence",
       "def is_palindrome(s):\n    t = [c.lower() for c in s if c.isalnum()]\n"
       "    return t == t[::-1]\n",
       GradeStatus::kGraded, 1},
      {"the last python block counts",
       std::string("```python\ndef is_palindrome(s): return False\n```\nBetter:\n") +
           kGoodPalindrome,
       GradeStatus::kGraded, 1},
      {"half right: one of two test functions passes",
       "```python\ndef is_palindrome(s):\n    return True\n```", GradeStatus::kGraded, 0.5},
      {"wrong", "```python\ndef is_palindrome(s):\n    return len(s) == 2\n```",
       GradeStatus::kGraded, 0},
      {"syntax error", "```python\ndef is_palindrome(s) return True\n```", GradeStatus::kGraded, 0},
      {"wrong name", "```python\ndef palindrome(s):\n    return True\n```", GradeStatus::kGraded,
       0},
      {"infinite loop", "```python\ndef is_palindrome(s):\n    while True: pass\n```",
       GradeStatus::kTimeout, 0},
      {"loops at import", "```python\nwhile True: pass\n```", GradeStatus::kTimeout, 0},
      {"exits early with success", "```python\nimport os\nos._exit(0)\n```", GradeStatus::kGraded,
       0},
      {"forges the runner's report without the nonce",
       "```python\nimport os\nprint('EVALRUN-RESULT x 2 2')\nos.write(1, b'EVALRUN-RESULT  2 2\\n')"
       "\nos._exit(0)\n```",
       GradeStatus::kGraded, 0},
      {"reads the hidden tests from the project",
       "```python\nimport glob\ndef is_palindrome(s):\n"
       "    found = glob.glob('/work/main/tasks/smoke/files/*') + glob.glob('/root/*')\n"
       "    if found: return s != 'hello'\n    raise RuntimeError('nothing found')\n```",
       GradeStatus::kGraded, 0},
      {"huge output",
       "```python\nprint('x' * (20 << 20))\ndef is_palindrome(s):\n"
       "    t = [c.lower() for c in s if c.isalnum()]\n    return t == t[::-1]\n```",
       GradeStatus::kGraded, 1},
      {"invalid UTF-8 on stderr",
       "```python\nimport sys\nsys.stderr.buffer.write(b'\\xff\\xfe bad')\nsys.stderr.flush()\n"
       "raise SystemExit(3)\n```",
       GradeStatus::kGraded, 0},
      {"memory hog", "```python\nx = bytearray(2 * 1024**3)\n```", GradeStatus::kGraded, 0},
      {"empty answer", "", GradeStatus::kNoAnswer, 0},
  };
  const GradeContext context = SmokeContext(&Bubblewrap());
  for (const auto& c : cases) {
    INFO(c.name);
    const Grade grade = grader->Run(spec, AnswerOf(c.answer), context);
    INFO(grade.reason << " " << grade.evidence.dump());
    CHECK(grade.status == c.status);
    CHECK(grade.score == Approx(c.score));
    CHECK(grade.passed == (c.score == 1 && c.status == GradeStatus::kGraded));
    CHECK_NOTHROW(grade.evidence.dump());  // valid UTF-8 throughout
  }
}

TEST_CASE("code_tests: every smoke code task passes a correct answer and fails a wrong one",
          "[graders][code_tests]") {
  if (!HaveBubblewrap()) return;
  const auto grader = MakeCodeTestsGrader();
  const GradeContext context = SmokeContext(&Bubblewrap());
  struct Smoke {
    const char* tests;
    const char* correct;
  };
  const std::vector<Smoke> tasks = {
      {"files/test_fizzbuzz.py",
       "def fizzbuzz(n):\n    return ['FizzBuzz' if i % 15 == 0 else 'Fizz' if i % 3 == 0 else "
       "'Buzz' if i % 5 == 0 else str(i) for i in range(1, n + 1)]\n"},
      {"files/test_merge_intervals.py",
       "def merge_intervals(intervals):\n    out = []\n"
       "    for a, b in sorted(intervals):\n        if out and a <= out[-1][1]:\n"
       "            out[-1][1] = max(out[-1][1], b)\n        else:\n"
       "            out.append([a, b])\n    return out\n"},
      {"files/test_word_count.py",
       "import re\ndef word_count(text):\n    d = {}\n"
       "    for w in re.findall('[a-z]+', text.lower()):\n        d[w] = d.get(w, 0) + 1\n"
       "    return d\n"},
      {"files/test_second_largest.py",
       "def second_largest(nums):\n    s = sorted(set(nums))\n"
       "    return s[-2] if len(s) >= 2 else None\n"},
  };
  for (const auto& task : tasks) {
    INFO(task.tests);
    const nlohmann::json spec = {{"language", "python"}, {"tests", task.tests}};
    const Grade good =
        grader->Run(spec, AnswerOf(std::string("```python\n") + task.correct + "```"), context);
    INFO(good.reason << " " << good.evidence.dump());
    CHECK(good.passed);
    const Grade bad = grader->Run(spec, AnswerOf("```python\nimport sys\n```"), context);
    CHECK_FALSE(bad.passed);
    CHECK(bad.status == GradeStatus::kGraded);
  }
}

TEST_CASE("code_tests: javascript and C++", "[graders][code_tests]") {
  if (!HaveBubblewrap()) return;
  const auto grader = MakeCodeTestsGrader();
  GradeContext context;
  context.sandbox = &Bubblewrap();
  context.read_file = [](const std::string& path) -> std::optional<std::string> {
    if (path == "t/add.test.js") {
      return "const assert = require('assert');\nconst {add} = require('./solution');\n"
             "exports.test_small = () => assert.strictEqual(add(1, 2), 3);\n"
             "exports.test_negative = () => assert.strictEqual(add(-1, -2), -3);\n";
    }
    if (path == "t/add_test.cpp") {
      return "#include <cassert>\n#include \"solution.cpp\"\n"
             "int main() { assert(add(1, 2) == 3); assert(add(-1, -2) == -3); }\n";
    }
    return std::nullopt;
  };
  const nlohmann::json js = {
      {"language", "javascript"}, {"tests", "t/add.test.js"}, {"entry", "add"}, {"timeout_s", 3}};
  const nlohmann::json cpp = {{"language", "cpp"}, {"tests", "t/add_test.cpp"}, {"timeout_s", 3}};
  struct Case {
    const char* name;
    const nlohmann::json* spec;
    std::string answer;
    GradeStatus status;
    double score;
  };
  const std::vector<Case> cases = {
      {"js correct, exported by entry", &js, "```js\nfunction add(a, b) { return a + b; }\n```",
       GradeStatus::kGraded, 1},
      {"js half right", &js, "```javascript\nfunction add(a, b) { return 3; }\n```",
       GradeStatus::kGraded, 0.5},
      {"js syntax error", &js, "```js\nfunction add(a, b) { return a +; }\n```",
       GradeStatus::kGraded, 0},
      {"js infinite loop", &js, "```js\nwhile (true) {}\n```", GradeStatus::kTimeout, 0},
      {"cpp correct", &cpp, "```cpp\nint add(int a, int b) { return a + b; }\n```",
       GradeStatus::kGraded, 1},
      {"cpp wrong", &cpp, "```cpp\nint add(int a, int b) { return a - b; }\n```",
       GradeStatus::kGraded, 0},
      {"cpp does not compile", &cpp, "```cpp\nint add(int a, int b) { return a + ; }\n```",
       GradeStatus::kGraded, 0},
      {"cpp infinite loop", &cpp, "```cpp\nint add(int a, int b) { for (;;) {} }\n```",
       GradeStatus::kTimeout, 0},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    const Grade grade = grader->Run(*c.spec, AnswerOf(c.answer), context);
    INFO(grade.reason << " " << grade.evidence.dump());
    CHECK(grade.status == c.status);
    CHECK(grade.score == Approx(c.score));
  }
}

TEST_CASE("code_tests: skipped without a usable sandbox or runtime, never passed",
          "[graders][code_tests]") {
  const auto grader = MakeCodeTestsGrader();
  const nlohmann::json spec = {{"language", "python"}, {"tests", "files/test_is_palindrome.py"}};
  SECTION("no sandbox and no --unsafe-no-sandbox") {
    const Grade grade = grader->Run(spec, AnswerOf(kGoodPalindrome), SmokeContext(nullptr));
    CHECK(grade.status == GradeStatus::kSkipped);
    CHECK_FALSE(grade.passed);
    CHECK_THAT(grade.reason, Catch::Contains("--unsafe-no-sandbox"));
  }
  SECTION("a sandbox that cannot run here") {
    struct Broken : Sandbox {
      std::optional<std::string> Unavailable() const override {
        return "bubblewrap (bwrap) is not installed: apt-get install bubblewrap";
      }
      SandboxResult Run(const SandboxRun&) const override { return {}; }
      std::string Describe() const override { return "broken"; }
    } broken;
    const Grade grade = grader->Run(spec, AnswerOf(kGoodPalindrome), SmokeContext(&broken));
    CHECK(grade.status == GradeStatus::kSkipped);
    CHECK(grade.reason == "bubblewrap (bwrap) is not installed: apt-get install bubblewrap");
  }
  SECTION("--unsafe-no-sandbox runs without one and says so") {
    GradeContext context = SmokeContext(nullptr);
    context.unsafe_no_sandbox = true;
    const Grade grade = grader->Run(spec, AnswerOf(kGoodPalindrome), context);
    CHECK(grade.passed);
    CHECK_THAT(grade.evidence["sandbox"].get<std::string>(), Catch::Contains("UNSAFE"));
  }
  SECTION("hidden tests missing is the environment's fault") {
    GradeContext context = SmokeContext(&Bubblewrap());
    context.read_file = [](const std::string&) { return std::nullopt; };
    if (!HaveBubblewrap()) return;
    const Grade grade = grader->Run(spec, AnswerOf(kGoodPalindrome), context);
    CHECK(grade.status == GradeStatus::kEnvError);
  }
}

TEST_CASE("code_tests: spec errors name the place", "[graders][code_tests]") {
  const auto grader = MakeCodeTestsGrader();
  const SourceLocation where{"tasks/smoke/code.yaml", 9, 5};
  CHECK_NOTHROW(grader->CheckSpec(
      {{"type", "code_tests"}, {"language", "python"}, {"tests", "files/t.py"}}, where));
  CHECK_THROWS_WITH(grader->CheckSpec({{"language", "cobol"}, {"tests", "t"}}, where),
                    "tasks/smoke/code.yaml:9:5: code_tests: unknown language 'cobol' "
                    "(python, javascript or cpp)");
  CHECK_THROWS_WITH(grader->CheckSpec({{"language", "python"}}, where),
                    Catch::Contains("'tests' is required"));
  CHECK_THROWS_WITH(
      grader->CheckSpec({{"language", "python"}, {"tests", "t"}, {"timeout_s", -1}}, where),
      Catch::Contains("'timeout_s'"));
}

// --- command -----------------------------------------------------------------------------------

TEST_CASE("command: runs the checker with JSON in and JSON out", "[graders][command]") {
  if (!HaveBubblewrap()) return;
  const auto grader = MakeCommandGrader();
  // The checker, a suite file: passes when the output says 42; misbehaves on request.
  const std::string checker = R"(import json, sys
data = json.load(sys.stdin)
out = data["output"]
if out == "loop":
    while True: pass
if out == "garbage":
    print("not json"); sys.exit(0)
if out == "crash":
    raise RuntimeError("checker bug")
if out == "bad score":
    print(json.dumps({"score": 2, "passed": True})); sys.exit(0)
if out == "no passed":
    print(json.dumps({"score": 1})); sys.exit(0)
if out == "network":
    import socket
    try:
        socket.create_connection(("1.1.1.1", 53), timeout=1); ok = True
    except OSError:
        ok = False
    print(json.dumps({"score": 0, "passed": ok, "reason": "net %s" % ok})); sys.exit(0)
if out == "huge":
    sys.stdout.write("x" * (10 << 20)); sys.exit(0)
ok = "42" in out
print(json.dumps({"score": 1 if ok else 0.25, "passed": ok,
                  "reason": "found 42" if ok else "no 42; spec %s" % data["spec"]["type"]}))
)";
  GradeContext context;
  context.sandbox = &Bubblewrap();
  context.read_file = [&](const std::string& path) -> std::optional<std::string> {
    if (path == "files/check.py") return checker;
    return std::nullopt;
  };
  const nlohmann::json spec = {
      {"type", "command"}, {"command", {"python3", "files/check.py"}}, {"timeout_s", 2}};
  struct Case {
    const char* name;
    std::string output;
    GradeStatus status;
    double score;
    bool passed;
    const char* reason;
  };
  const std::vector<Case> cases = {
      {"correct", "the answer is 42", GradeStatus::kGraded, 1, true, "found 42"},
      {"wrong", "the answer is 41", GradeStatus::kGraded, 0.25, false, "no 42; spec command"},
      {"empty output", "", GradeStatus::kGraded, 0.25, false, "no 42; spec command"},
      {"invalid UTF-8 in the output", "42 \xff\xfe", GradeStatus::kGraded, 1, true, "found 42"},
      {"10 MB output", std::string(10 << 20, 'a') + "42", GradeStatus::kGraded, 1, true,
       "found 42"},
      {"checker loops", "loop", GradeStatus::kEnvError, 0, false,
       "the checker ran out of time (2 s)"},
      {"checker prints garbage", "garbage", GradeStatus::kEnvError, 0, false,
       "the checker's output is not a JSON object (expected {\"score\": 0..1, \"passed\": "
       "true|false, \"reason\": \"...\"})"},
      {"checker crashes", "crash", GradeStatus::kEnvError, 0, false,
       "the checker failed with exit code 1: Traceback (most recent call last):"},
      {"score out of range", "bad score", GradeStatus::kEnvError, 0, false,
       "the checker's 'score' must be a number in [0, 1]"},
      {"passed missing", "no passed", GradeStatus::kEnvError, 0, false,
       "the checker's 'passed' must be true or false"},
      {"checker has no network", "network", GradeStatus::kGraded, 0, false, "net False"},
      {"checker floods stdout", "huge", GradeStatus::kEnvError, 0, false,
       "the checker's output is not a JSON object (expected {\"score\": 0..1, \"passed\": "
       "true|false, \"reason\": \"...\"})"},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    const Grade grade = grader->Run(spec, AnswerOf(c.output), context);
    INFO(grade.evidence.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    CHECK(grade.status == c.status);
    CHECK(grade.score == Approx(c.score));
    CHECK(grade.passed == c.passed);
    CHECK(grade.reason == c.reason);
    CHECK_NOTHROW(grade.evidence.dump());
  }
}

TEST_CASE("command: a missing checker program is an env_error", "[graders][command]") {
  if (!HaveBubblewrap()) return;
  GradeContext context;
  context.sandbox = &Bubblewrap();
  const Grade grade =
      MakeCommandGrader()->Run({{"command", {"no-such-checker-program"}}}, AnswerOf("x"), context);
  CHECK(grade.status == GradeStatus::kEnvError);
  CHECK_THAT(grade.reason, Catch::StartsWith("the checker failed with exit code"));
}

TEST_CASE("command: skipped without a sandbox", "[graders][command]") {
  const Grade grade =
      MakeCommandGrader()->Run({{"command", {"true"}}}, AnswerOf("x"), GradeContext{});
  CHECK(grade.status == GradeStatus::kSkipped);
  CHECK_FALSE(grade.passed);
}

TEST_CASE("command: spec errors name the place", "[graders][command]") {
  const auto grader = MakeCommandGrader();
  const SourceLocation where{"suite.yaml", 3, 7};
  CHECK_NOTHROW(grader->CheckSpec({{"command", {"python3", "files/check.py"}}}, where));
  CHECK_THROWS_WITH(grader->CheckSpec({{"type", "command"}}, where),
                    "suite.yaml:3:7: command: 'command' is required: the checker's argv as a "
                    "list, e.g. [python3, files/check.py]");
  CHECK_THROWS_WITH(grader->CheckSpec({{"command", {"a", 1}}}, where),
                    Catch::Contains("list of strings"));
  CHECK_THROWS_WITH(grader->CheckSpec({{"command", {"a"}}, {"timeout_s", "x"}}, where),
                    Catch::Contains("'timeout_s'"));
}

}  // namespace
}  // namespace evalrun
