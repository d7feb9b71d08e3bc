// `evalrun suite` as a user meets it: the real binary against the mock endpoint, killed with
// SIGKILL and resumed, interrupted with Ctrl-C, and left without an endpoint for 20 seconds.
// Task selection is tested directly.
#include "runner/suite_run.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <thread>

#include "tests/support/catch.h"
#include "tests/support/stored_run.h"
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/sha256.h"
#include "plugins/mock_server.h"
#include "results/store.h"

namespace {

namespace fs = std::filesystem;
using evalrun::MockConfig;
using evalrun::MockServer;
using evalrun::ResultStore;
using evalrun::testing::OnlyRun;

struct TempDir {
  fs::path path;
  TempDir() {
    char pattern[] = "/tmp/evalrun-suite-run-XXXXXX";
    path = mkdtemp(pattern);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string File(const std::string& name) const { return (path / name).string(); }
};

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const char* kDimensions[] = {"math", "facts", "format", "code"};

// A synthetic suite of `n` tasks in four dimensions, each answering "ANSWER: <i>". Returns the
// mock's answer table: task i gets the right answer unless i % 3 == 2 (a wrong one).
std::vector<evalrun::MockAnswer> WriteSyntheticSuite(const fs::path& dir, int n) {
  fs::create_directories(dir);
  std::ofstream suite(dir / "suite.yaml");
  suite << "schema_version: 1\nsuite: synthetic\ndefaults: {max_tokens: 64, temperature: 0}\n"
        << "dimensions: {math: 2, facts: 1, format: 1, code: 1}\ntasks:\n";
  std::vector<evalrun::MockAnswer> answers;
  for (int i = 0; i < n; ++i) {
    char id[16];
    std::snprintf(id, sizeof id, "t%03d", i);
    suite << "  - {id: " << id << ", dimension: " << kDimensions[i % 4]
          << ", difficulty: " << (i % 5 == 0 ? "hard" : "easy") << ", prompt: \"[" << id
          << "] What is " << i << " plus zero? End with ANSWER: <n>\", grader: {type: "
          << "answer_line, answer: " << i << "}}\n";
    evalrun::MockAnswer answer;
    answer.match = std::string("[") + id + "]";
    answer.content = "It is " + std::to_string(i) + ".\nANSWER: " +
                     std::to_string(i % 3 == 2 ? i + 1 : i);
    answers.push_back(answer);
  }
  return answers;
}

struct Child {
  pid_t pid = -1;
  std::string err_path;
};

// Starts the evalrun binary with `args`, stderr to a file, stdout discarded.
Child Spawn(const std::vector<std::string>& args, const std::string& err_path) {
  Child child;
  child.err_path = err_path;
  child.pid = fork();
  REQUIRE(child.pid >= 0);
  if (child.pid == 0) {
    FILE* err = std::fopen(err_path.c_str(), "w");
    if (err) dup2(fileno(err), STDERR_FILENO);
    FILE* out = std::fopen("/dev/null", "w");
    if (out) dup2(fileno(out), STDOUT_FILENO);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(EVALRUN_BINARY));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(EVALRUN_BINARY, argv.data());
    _exit(127);
  }
  return child;
}

// Waits for the child (bounded); returns its exit code, or 128 + signal.
int Wait(const Child& child, double timeout_s = 240) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  int status = 0;
  while (waitpid(child.pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(child.pid, SIGKILL);
      waitpid(child.pid, &status, 0);
      FAIL("evalrun did not finish within " << timeout_s << " s: " << Slurp(child.err_path));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int64_t FinishedCount(const std::string& db, const std::string& run_id) {
  try {
    ResultStore store(db);
    if (run_id.empty()) {
      const auto runs = store.ListRuns();
      return runs.empty() ? 0 : store.FinishedCount(runs.front().id);
    }
    return store.FinishedCount(run_id);
  } catch (const evalrun::Error&) {
    return 0;  // not created yet
  }
}

// Waits until the run has at least `count` finished tasks, and at least one more than when
// the child started, so that it has resumed and made progress (bounded).
void WaitForFinished(const std::string& db, int64_t count, const Child& child) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  count = std::max(count, FinishedCount(db, "") + 1);
  while (FinishedCount(db, "") < count) {
    int status = 0;
    if (waitpid(child.pid, &status, WNOHANG) == child.pid) {
      FAIL("evalrun exited before " << count << " tasks were done: " << Slurp(child.err_path));
    }
    REQUIRE(std::chrono::steady_clock::now() < deadline);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// task id -> "status score passed"
std::map<std::string, std::string> Grades(const std::string& db, const std::string& run_id) {
  ResultStore store(db);
  std::map<std::string, std::string> grades;
  for (const auto& t : store.LoadRun(run_id).tasks) {
    const std::string line = std::string(evalrun::GradeStatusName(t.grade.status)) + " " +
                             std::to_string(t.grade.score) + " " + (t.grade.passed ? "1" : "0");
    const bool fresh = grades.emplace(t.task_id, line).second;
    CHECK(fresh);
  }
  return grades;
}

std::vector<std::string> SuiteArgs(const std::string& suite, const MockServer& mock,
                                   const std::string& db, int concurrency) {
  return {"suite",         suite,   "--endpoint", mock.base_url(), "--db", db,
          "--concurrency", std::to_string(concurrency), "--no-speed", "--no-env", "--quiet",
          "--out",         db + ".report"};
}

MockConfig FastMock(std::vector<evalrun::MockAnswer> answers) {
  MockConfig config;
  config.ttft_ms = 1;
  config.decode_tps = 4000;
  config.answers = std::move(answers);
  return config;
}

}  // namespace

TEST_CASE("suite run: SIGKILL at five random points, resumed each time, grades equal an "
          "uninterrupted run",
          "[runner][suite]") {
  TempDir dir;
  const fs::path suite = dir.path / "synthetic";
  MockServer mock(FastMock(WriteSyntheticSuite(suite, 200)));
  mock.Start();

  const std::string clean_db = dir.File("clean.db");
  REQUIRE(Wait(Spawn(SuiteArgs(suite.string(), mock, clean_db, 4), dir.File("clean.err"))) == 0);
  const auto expected = Grades(clean_db, OnlyRun(clean_db));
  REQUIRE(expected.size() == 200);
  int passed = 0;
  for (const auto& [id, line] : expected) passed += line.back() == '1';
  CHECK(passed == 134);  // i % 3 == 2 answer wrong: 66 of 200

  const std::string db = dir.File("killed.db");
  std::mt19937 random(std::random_device{}());
  std::vector<int64_t> points;
  for (int i = 0; i < 5; ++i) points.push_back(std::uniform_int_distribution<int64_t>(1, 195)(random));
  std::sort(points.begin(), points.end());
  INFO("kill points (finished tasks): " << points[0] << " " << points[1] << " " << points[2]
                                        << " " << points[3] << " " << points[4]);
  for (size_t i = 0; i < points.size(); ++i) {
    std::vector<std::string> args = SuiteArgs(suite.string(), mock, db, 4);
    if (i > 0) args.push_back("--resume");
    const Child child = Spawn(args, dir.File("killed.err"));
    WaitForFinished(db, points[i], child);
    kill(child.pid, SIGKILL);
    int status = 0;
    waitpid(child.pid, &status, 0);
  }
  std::vector<std::string> args = SuiteArgs(suite.string(), mock, db, 4);
  args.push_back("--resume");
  const Child last = Spawn(args, dir.File("resumed.err"));
  REQUIRE(Wait(last) == 0);

  const std::string run_id = OnlyRun(db);
  CHECK(Grades(db, run_id) == expected);
  ResultStore store(db);
  CHECK(store.IntegrityCheck() == "ok");
  CHECK(store.FindRun(run_id)->status == "finished");
  int resumes = 0;
  for (const auto& e : store.LoadRun(run_id).events) resumes += e.kind == "resume";
  CHECK(resumes == 5);
  CHECK(fs::exists(db + ".report/report.html"));
}

TEST_CASE("suite run: Ctrl-C exits 130 and the printed resume command finishes the run",
          "[runner][suite]") {
  TempDir dir;
  const fs::path suite = dir.path / "synthetic";
  MockConfig config = FastMock(WriteSyntheticSuite(suite, 60));
  config.decode_tps = 100;  // about 0.1 s a task: time to interrupt mid-run
  MockServer mock(config);
  mock.Start();
  const std::string db = dir.File("int.db");
  const Child child = Spawn(SuiteArgs(suite.string(), mock, db, 2), dir.File("int.err"));
  WaitForFinished(db, 10, child);
  kill(child.pid, SIGINT);
  REQUIRE(Wait(child) == 130);
  const std::string err = Slurp(child.err_path);
  const size_t at = err.find("resume with:\n  evalrun suite ");
  REQUIRE(at != std::string::npos);
  std::string command = err.substr(at + std::string("resume with:\n  evalrun ").size());
  command = command.substr(0, command.find('\n'));
  const std::string run_id = OnlyRun(db);
  // Every setting --resume must find equal, and what the run was told about speed and output:
  // the printed command is enough as it is.
  CHECK(command == "suite " + suite.string() + " --endpoint " + mock.base_url() + " --db " + db +
                       " --resume " + run_id + " --concurrency 2 --no-speed --out " + db +
                       ".report");
  ResultStore before(db);
  CHECK(before.FindRun(run_id)->status == "interrupted");
  CHECK(before.FinishedCount(run_id) < 60);

  std::vector<std::string> args;
  std::istringstream words(command);
  for (std::string w; words >> w;) args.push_back(w);
  args.insert(args.end(), {"--no-env", "--quiet"});
  REQUIRE(Wait(Spawn(args, dir.File("resume.err"))) == 0);
  CHECK(Grades(db, run_id).size() == 60);
  CHECK(ResultStore(db).FindRun(run_id)->status == "finished");
}

TEST_CASE("suite run: the printed resume command carries the run's settings, quoted for a shell",
          "[runner][suite]") {
  TempDir dir;
  const fs::path suite = dir.path / "syn thetic";  // a space: the shell would split it
  MockConfig config = FastMock(WriteSyntheticSuite(suite, 60));
  config.decode_tps = 100;
  MockServer mock(config);
  mock.Start();
  const std::string db = dir.File("quoted.db");
  const Child child = Spawn({"suite", suite.string(), "--endpoint", mock.base_url(), "--db", db,
                             "--filter", "id=t0[0-3]*", "--max-tokens", "48", "--no-speed",
                             "--no-env", "--quiet"},
                            dir.File("quoted.err"));
  WaitForFinished(db, 5, child);
  kill(child.pid, SIGINT);
  REQUIRE(Wait(child) == 130);
  const std::string err = Slurp(child.err_path);
  const std::string hint = "resume with:\n  ";
  const size_t at = err.find(hint);
  REQUIRE(at != std::string::npos);
  std::string command = err.substr(at + hint.size());
  command = command.substr(0, command.find('\n'));
  const std::string run_id = OnlyRun(db);
  // --filter and --max-tokens are settings --resume must find equal; the glob and the space are
  // quoted.
  CHECK(command == "evalrun suite '" + suite.string() + "' --endpoint " + mock.base_url() +
                       " --db " + db + " --resume " + run_id +
                       " --max-tokens 48 --filter 'id=t0[0-3]*' --no-speed");
  // Run as a shell runs it, with this build's binary for `evalrun`.
  const std::string line = std::string(EVALRUN_BINARY) +
                           command.substr(std::string("evalrun").size()) + " --no-env --quiet";
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    FILE* out = std::fopen("/dev/null", "w");
    if (out) {
      dup2(fileno(out), STDOUT_FILENO);
      dup2(fileno(out), STDERR_FILENO);
    }
    execl("/bin/sh", "sh", "-c", line.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  REQUIRE(Wait(Child{pid, ""}) == 0);
  CHECK(Grades(db, run_id).size() == 40);  // t000 to t039
  CHECK(ResultStore(db).FindRun(run_id)->status == "finished");
}

TEST_CASE("suite run: the endpoint away for 20 seconds pauses the run, nothing is scored as a "
          "model failure",
          "[runner][suite]") {
  TempDir dir;
  const fs::path suite = dir.path / "synthetic";
  MockConfig config = FastMock(WriteSyntheticSuite(suite, 40));
  config.decode_tps = 60;  // about 0.25 s a task, 10 s for the run without the pause
  auto mock = std::make_unique<MockServer>(config);
  mock->Start();
  const int port = mock->port();
  const std::string db = dir.File("pause.db");
  std::vector<std::string> args = SuiteArgs(suite.string(), *mock, db, 1);
  const Child child = Spawn(args, dir.File("pause.err"));
  WaitForFinished(db, 8, child);
  mock->Stop();  // in-flight stream dropped, connections refused
  mock.reset();
  std::this_thread::sleep_for(std::chrono::seconds(20));
  config.port = port;
  mock = std::make_unique<MockServer>(config);
  mock->Start();
  REQUIRE(Wait(child) == 0);

  const std::string run_id = OnlyRun(db);
  ResultStore store(db);
  const evalrun::RunData run = store.LoadRun(run_id);
  REQUIRE(run.tasks.size() == 40);
  int retried = 0;
  for (const auto& t : run.tasks) {
    INFO(t.task_id << ": " << t.grade.reason);
    CHECK(t.grade.status == evalrun::GradeStatus::kGraded);
    CHECK(t.grade.passed == (std::stoi(t.task_id.substr(1)) % 3 != 2));
    retried += t.attempts > 0;
  }
  CHECK(retried >= 1);  // the task in flight when the endpoint went away
  std::string pause, resume;
  for (const auto& e : run.events) {
    if (e.kind == "pause") pause = e.message;
    if (e.kind == "resume") resume = e.message;
  }
  CHECK(pause == "endpoint " + mock->base_url() +
                     " is unreachable: pausing, waiting up to 30 min for it to come back");
  CHECK(resume.rfind("endpoint is back after ", 0) == 0);
}

TEST_CASE("suite run: resume refuses other settings, naming what differs", "[runner][suite]") {
  TempDir dir;
  const fs::path suite = dir.path / "synthetic";
  MockServer mock(FastMock(WriteSyntheticSuite(suite, 8)));
  mock.Start();
  const std::string db = dir.File("s.db");
  std::vector<std::string> args = SuiteArgs(suite.string(), mock, db, 1);
  args.insert(args.end(), {"--limit", "4"});
  REQUIRE(Wait(Spawn(args, dir.File("a.err"))) == 0);
  const std::string run_id = OnlyRun(db);
  std::vector<std::string> other = SuiteArgs(suite.string(), mock, db, 2);
  other.insert(other.end(), {"--limit", "4", "--resume", run_id});
  const Child child = Spawn(other, dir.File("b.err"));
  CHECK(Wait(child) == 2);
  CHECK(Slurp(child.err_path) == "evalrun: error: --resume " + run_id +
                                     ": settings differ from the run's: concurrency 2 (run: 1)\n");
}

// ---- task selection --------------------------------------------------------------------------

namespace {

evalrun::Suite SelectionSuite() {
  evalrun::Suite suite;
  for (int i = 0; i < 40; ++i) {
    evalrun::Task task;
    task.id = (i % 2 ? "alpha-" : "beta-") + std::to_string(i);
    task.dimension = kDimensions[i % 4];
    task.difficulty = i % 3 ? "easy" : "hard";
    task.hash = evalrun::Sha256Hex(task.id);
    suite.tasks.push_back(task);
  }
  return suite;
}

}  // namespace

TEST_CASE("suite run: --filter selects by dimension, id glob, difficulty, all keys ANDed",
          "[runner][suite]") {
  const evalrun::Suite suite = SelectionSuite();
  evalrun::SuiteRunConfig config;
  config.filters = {"dimension=math,dimension=code", "id=alpha-*"};
  const auto selected = evalrun::SelectTasks(suite, config);
  // dimension math (i % 4 == 0) or code (i % 4 == 3), and odd i (alpha): i % 4 == 3 -> 10 tasks
  REQUIRE(selected.size() == 10);
  for (const auto* t : selected) CHECK(t->dimension == "code");
  config.filters = {"difficulty=hard"};
  CHECK(evalrun::SelectTasks(suite, config).size() == 14);  // i % 3 == 0 for i < 40
  config.limit = 3;
  CHECK(evalrun::SelectTasks(suite, config).size() == 3);
  CHECK(evalrun::SelectTasks(suite, config)[0]->id == "beta-0");
}

TEST_CASE("suite run: --filter errors name the problem", "[runner][suite]") {
  const evalrun::Suite suite = SelectionSuite();
  evalrun::SuiteRunConfig config;
  auto error = [&](const std::string& filter) {
    config.filters = {filter};
    try {
      evalrun::SelectTasks(suite, config);
    } catch (const evalrun::Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  CHECK(error("dimesion=math") == "--filter 'dimesion=math': unknown key 'dimesion', did you "
                                  "mean 'dimension'? (keys: dimension, id, difficulty, tag)");
  CHECK(error("math") == "--filter 'math': 'math' is not KEY=VALUE (keys: dimension, id, "
                         "difficulty, tag)");
  CHECK(error("id=") == "--filter 'id=': 'id=' is not KEY=VALUE (keys: dimension, id, "
                        "difficulty, tag)");
}

TEST_CASE("suite run: --quick takes N per dimension, the same ids for the same seed",
          "[runner][suite]") {
  evalrun::Suite suite = SelectionSuite();
  suite.tasks[0].skip_reason = "needs Docker";  // never sampled
  evalrun::SuiteRunConfig config;
  config.quick = 3;
  const auto a = evalrun::SelectTasks(suite, config);
  const auto b = evalrun::SelectTasks(suite, config);
  REQUIRE(a.size() == 12);
  CHECK(a == b);
  std::map<std::string, int> per_dimension;
  for (const auto* t : a) {
    ++per_dimension[t->dimension];
    CHECK(t->skip_reason.empty());
  }
  for (const char* d : kDimensions) CHECK(per_dimension[d] == 3);
  config.seed = 1;
  CHECK(evalrun::SelectTasks(suite, config) != a);
  // Another task in the suite changes the suite hash, and so the sample.
  config.seed = 0;
  suite.tasks[5].hash = evalrun::Sha256Hex("changed");
  CHECK(evalrun::SelectTasks(suite, config) != a);
}

TEST_CASE("suite run: request deadlines follow max_tokens, never a fixed cloud timeout",
          "[runner][suite]") {
  CHECK(evalrun::RequestDeadline(-1, 256) == 120 + 256);
  CHECK(evalrun::RequestDeadline(5000, 1024) == 120 + 100 + 1024);
  CHECK(evalrun::RequestDeadline(-1, -1) == 120 + 32768);
}

namespace {

// The binary run to completion: its exit code and stderr (stdout is discarded).
struct Output {
  int code = -1;
  std::string err;
};

Output RunEvalrun(const std::vector<std::string>& args, const TempDir& dir) {
  const Child child = Spawn(args, dir.File("cmd.err"));
  Output o;
  o.code = Wait(child, 120);
  o.err = Slurp(child.err_path);
  return o;
}

}  // namespace

TEST_CASE("suite run: evalrun runs lists the run, evalrun report renders it, speed --db stores a "
          "speed run",
          "[runner][suite]") {
  TempDir dir;
  const fs::path suite = dir.path / "synthetic";
  MockServer mock(FastMock(WriteSyntheticSuite(suite, 6)));
  mock.Start();
  const std::string db = dir.File("r.db");
  REQUIRE(Wait(Spawn(SuiteArgs(suite.string(), mock, db, 1), dir.File("a.err"))) == 0);
  const std::string run_id = OnlyRun(db);

  const std::string json_path = dir.File("report.json");
  const std::string card_path = dir.File("card.svg");
  REQUIRE(RunEvalrun({"report", run_id, "--db", db, "-o", "json", "--out", json_path, "--card",
                      card_path},
                     dir)
              .code == 0);
  const nlohmann::json report = nlohmann::json::parse(Slurp(json_path));
  // Tasks 0, 1, 3, 4 answer right, 2 and 5 wrong (i % 3 == 2): 4 of 6 passed.
  CHECK(report.at("passed") == 4);
  CHECK(report.at("scored_tasks") == 6);
  CHECK(report.at("coverage").at("planned") == 6);
  CHECK(Slurp(card_path).rfind("<svg", 0) == 0);

  const Output missing = RunEvalrun({"report", "r-nope", "--db", db}, dir);
  CHECK(missing.code == 2);
  CHECK(missing.err == "evalrun: error: " + db + ": no run r-nope (evalrun runs lists them)\n");
  const Output bad_format = RunEvalrun({"report", run_id, "--db", db, "-o", "htm"}, dir);
  CHECK(bad_format.code == 2);
  CHECK(bad_format.err == "evalrun: error: -o 'htm': expected md, html or json (did you mean "
                          "'html'?)\n");
  const Output no_db = RunEvalrun({"runs", "--db", dir.File("none.db")}, dir);
  CHECK(no_db.code == 2);
  CHECK(no_db.err == "evalrun: error: " + dir.File("none.db") +
                         ": no results database here (--db names another)\n");

  REQUIRE(RunEvalrun({"speed", "--endpoint", mock.base_url(), "-p", "64", "-n", "8", "-r", "1",
                      "-c", "1", "--no-env", "--quiet", "--db", db, "--out", dir.File("s.md")},
                     dir)
              .code == 0);
  ResultStore store(db);
  const auto runs = store.ListRuns();
  REQUIRE(runs.size() == 2);
  int speed_runs = 0;
  for (const auto& run : runs) {
    if (run.kind != "speed") continue;
    ++speed_runs;
    CHECK(run.status == "finished");
    const nlohmann::json speed = store.LoadRun(run.id).speed;
    CHECK(speed.at("kind") == "evalrun.speed");
    CHECK(speed.at("tests").size() >= 2);
  }
  CHECK(speed_runs == 1);
}
