// The results store: schema, one grade per task, round trips, refusals with their messages.
#include "results/store.h"

#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tests/support/catch.h"

#include "core/error.h"

namespace {

namespace fs = std::filesystem;
using evalrun::Error;
using evalrun::GradeStatus;
using evalrun::PlannedTask;
using evalrun::RequestOutcome;
using evalrun::RequestRecord;
using evalrun::ResultStore;
using evalrun::RunInfo;
using evalrun::TaskResult;

struct TempDir {
  fs::path path;
  TempDir() {
    char pattern[] = "/tmp/evalrun-store-XXXXXX";
    path = mkdtemp(pattern);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string File(const std::string& name) const { return (path / name).string(); }
};

RunInfo SampleRun(const std::string& id) {
  RunInfo info;
  info.id = id;
  info.evalrun_version = "0.1.0";
  info.suite_name = "smoke";
  info.suite_spec = "tasks/smoke";
  info.suite_format = "evalrun";
  info.dimension_weights = {{"math", 2.0}, {"code", 1.0}};
  info.endpoint = "http://127.0.0.1:9";
  info.model = "m";
  info.settings = {{"concurrency", 1}};
  info.labels = {{"gpu", "3090"}};
  info.environment = {{"gpus", nlohmann::json::array({"RTX 3090"})}};
  return info;
}

TaskResult SampleResult(const std::string& id) {
  TaskResult r;
  r.task_id = id;
  r.task_hash = std::string(64, 'a');
  r.dimension = "math";
  r.difficulty = "hard";
  r.weight = 2.0;
  r.grade.status = GradeStatus::kGraded;
  r.grade.score = 0.75;
  r.grade.passed = true;
  r.grade.reason = "ok";
  r.grade.evidence = {{"expected", 12}};
  r.grade.grader = "answer_line";
  r.grade.grader_version = "1";
  r.output = "ANSWER: 12 \xE2\x9C\x93";
  r.reasoning = "think";
  r.finish_reason = "stop";
  RequestRecord rec;
  rec.label = id + "#0";
  rec.first_ns = 1000;
  rec.first_content_ns = 2000;
  rec.last_ns = 9000;
  rec.end_ns = 9500;
  rec.text_event_ns = {1000, 2000, 9000};
  rec.events = 4;
  rec.http_status = 200;
  rec.max_tokens = 256;
  rec.usage.prompt_tokens = 40;
  rec.usage.completion_tokens = 3;
  rec.usage.raw = {{"prompt_tokens", 40}, {"completion_tokens", 3}};
  rec.usage_reported = true;
  rec.timings.raw_timings = {{"predicted_per_second", 55.5}, {"draft_n", 10}};
  RequestRecord failed;
  failed.label = id + "#1";
  failed.outcome = RequestOutcome::kConnectFailed;
  failed.error_message = "refused";
  r.requests = {failed, rec};
  r.attempts = 1;
  r.wall_s = 0.25;
  r.finished_at_ns = 1'700'000'000'000'000'000;
  return r;
}

std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("store: a committed task reads back field for field", "[results][store]") {
  TempDir dir;
  ResultStore store(dir.File("r.db"));
  store.CreateRun(SampleRun("r1"), {{"t1", std::string(64, 'a')}, {"t2", std::string(64, 'b')}});
  store.CommitTask("r1", SampleResult("t1"));
  store.AddEvent("r1", "pause", "endpoint away");

  const evalrun::RunData data = store.LoadRun("r1");
  CHECK(data.info.suite_name == "smoke");
  CHECK(data.info.planned_tasks == 2);
  CHECK(data.info.dimension_weights.at("math") == 2.0);
  CHECK(data.info.labels.at("gpu") == "3090");
  CHECK(data.info.status == "running");
  REQUIRE(data.tasks.size() == 1);
  const TaskResult& t = data.tasks[0];
  CHECK(t.grade.status == GradeStatus::kGraded);
  CHECK(t.grade.score == 0.75);
  CHECK(t.grade.passed);
  CHECK(t.grade.evidence == nlohmann::json{{"expected", 12}});
  CHECK(t.output == "ANSWER: 12 \xE2\x9C\x93");
  CHECK(t.reasoning == "think");
  CHECK(t.weight == 2.0);
  CHECK(t.attempts == 1);
  REQUIRE(t.requests.size() == 2);
  CHECK(t.requests[0].outcome == RequestOutcome::kConnectFailed);
  CHECK(t.requests[0].error_message == "refused");
  const RequestRecord& rec = t.requests[1];
  CHECK(rec.text_event_ns == std::vector<int64_t>{1000, 2000, 9000});
  CHECK(rec.last_ns == 9000);
  CHECK(rec.usage.completion_tokens == 3);
  CHECK(rec.usage_reported);
  CHECK(rec.timings.predicted_per_second == 55.5);
  CHECK(rec.timings.draft_n == 10);
  CHECK(rec.content == t.output);  // the final request carries the task's text
  REQUIRE(data.events.size() == 2);
  CHECK(data.events[0].kind == "start");
  CHECK(data.events[0].message == "planned 2 tasks");
  CHECK(data.events[1].kind == "pause");
  CHECK(store.FinishedTaskIds("r1") == std::set<std::string>{"t1"});
  CHECK(store.IntegrityCheck() == "ok");
}

TEST_CASE("store: a task cannot be graded twice, nor outside the plan", "[results][store]") {
  TempDir dir;
  ResultStore store(dir.File("r.db"));
  store.CreateRun(SampleRun("r1"), {{"t1", std::string(64, 'a')}});
  store.CommitTask("r1", SampleResult("t1"));
  CHECK(ErrorOf([&] { store.CommitTask("r1", SampleResult("t1")); }) ==
        "task 't1' of run r1 is already graded");
  CHECK(ErrorOf([&] { store.CommitTask("r1", SampleResult("zz")); }) ==
        "run r1: task 'zz' is not in the run's plan");
  // The failed commit left nothing half-written.
  CHECK(store.LoadRun("r1").tasks.size() == 1);
  CHECK(store.LoadRun("r1").tasks[0].requests.size() == 2);
  CHECK(ErrorOf([&] { store.CreateRun(SampleRun("r1"), {}); }) ==
        dir.File("r.db") + ": a run with id r1 already exists");
}

TEST_CASE("store: runs list newest first, speed results and statuses persist", "[results][store]") {
  TempDir dir;
  const std::string db = dir.File("r.db");
  {
    ResultStore store(db);
    RunInfo a = SampleRun("r-a");
    a.created_at = "2026-11-01T00:00:00Z";
    RunInfo b = SampleRun("r-b");
    b.created_at = "2026-11-02T00:00:00Z";
    store.CreateRun(a, {});
    store.CreateRun(b, {});
    store.SetStatus("r-a", evalrun::kRunFinished);
    store.SaveSpeed("r-a", {{"preset", "quick"}, {"n", 1}});
    store.SaveSpeed("r-a", {{"preset", "quick"}, {"n", 2}});
  }
  ResultStore store(db);  // reopened: nothing lost
  const auto runs = store.ListRuns();
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].id == "r-b");
  CHECK(runs[1].status == "finished");
  CHECK(store.LoadRun("r-a").speed.at("n") == 2);  // the latest speed result
  CHECK(store.LoadRun("r-b").speed.is_null());
  CHECK(ErrorOf([&] { store.LoadRun("nope"); }) ==
        db + ": no run nope (evalrun runs lists them)");
}

TEST_CASE("store: a version-1 database is upgraded in place, its results kept",
          "[results][store]") {
  TempDir dir;
  const std::string db = dir.File("v1.db");
  {
    ResultStore store(db);
    store.CreateRun(SampleRun("r-old"), {PlannedTask{"t1", std::string(64, 'a')}});
    store.CommitTask("r-old", SampleResult("t1"));
  }
  // Make it what evalrun wrote before agent tasks: no transcript column (nor requests.endpoint,
  // which came later), version 1.
  sqlite3* raw = nullptr;
  REQUIRE(sqlite3_open(db.c_str(), &raw) == SQLITE_OK);
  REQUIRE(sqlite3_exec(raw, "ALTER TABLE task_results DROP COLUMN transcript; "
                            "ALTER TABLE requests DROP COLUMN endpoint; "
                            "PRAGMA user_version = 1",
                       nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(raw);

  ResultStore store(db);
  auto data = store.LoadRun("r-old");
  REQUIRE(data.tasks.size() == 1);
  CHECK(data.tasks[0].output == SampleResult("t1").output);
  CHECK(data.tasks[0].transcript.is_null());
  TaskResult agent = SampleResult("t2");
  agent.transcript = {{"schema_version", 1}, {"turns", nlohmann::json::array({{{"turn", 0}}})}};
  store.CreateRun(SampleRun("r-new"), {PlannedTask{"t2", std::string(64, 'a')}});
  store.CommitTask("r-new", agent);
  CHECK(store.LoadRun("r-new").tasks[0].transcript == agent.transcript);
}

TEST_CASE("store: a version-2 database gains requests.endpoint in place, old rows read as the "
          "run's endpoint, new rows keep theirs",
          "[results][store]") {
  TempDir dir;
  const std::string db = dir.File("v2.db");
  {
    ResultStore store(db);
    store.CreateRun(SampleRun("r-old"), {PlannedTask{"t1", std::string(64, 'a')},
                                         PlannedTask{"t2", std::string(64, 'a')}});
    store.CommitTask("r-old", SampleResult("t1"));
  }
  // Make it what evalrun wrote before runs over several endpoints: no endpoint column.
  sqlite3* raw = nullptr;
  REQUIRE(sqlite3_open(db.c_str(), &raw) == SQLITE_OK);
  REQUIRE(sqlite3_exec(raw, "ALTER TABLE requests DROP COLUMN endpoint; PRAGMA user_version = 2",
                       nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(raw);

  ResultStore store(db);
  TaskResult moved = SampleResult("t2");
  moved.requests[0].endpoint = "http://127.0.0.1:10";
  store.CommitTask("r-old", moved);
  const auto data = store.LoadRun("r-old");
  REQUIRE(data.tasks.size() == 2);
  CHECK(data.tasks[0].requests[0].endpoint == "http://127.0.0.1:9");
  CHECK(data.tasks[1].requests[0].endpoint == "http://127.0.0.1:10");
}

TEST_CASE("store: WAL mode and the schema version, and refusals of other databases",
          "[results][store]") {
  TempDir dir;
  const std::string db = dir.File("r.db");
  { ResultStore store(db); }
  sqlite3* raw = nullptr;
  REQUIRE(sqlite3_open(db.c_str(), &raw) == SQLITE_OK);
  auto scalar = [&](const char* sql) {
    sqlite3_stmt* s = nullptr;
    REQUIRE(sqlite3_prepare_v2(raw, sql, -1, &s, nullptr) == SQLITE_OK);
    REQUIRE(sqlite3_step(s) == SQLITE_ROW);
    std::string value = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
    sqlite3_finalize(s);
    return value;
  };
  CHECK(scalar("PRAGMA journal_mode") == "wal");
  CHECK(scalar("PRAGMA user_version") == "3");
  REQUIRE(sqlite3_exec(raw, "PRAGMA user_version = 7", nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(raw);
  CHECK(ErrorOf([&] { ResultStore store(db); }) ==
        db + ": results database schema version 7, this evalrun reads version 3");

  const std::string other = dir.File("other.db");
  REQUIRE(sqlite3_open(other.c_str(), &raw) == SQLITE_OK);
  REQUIRE(sqlite3_exec(raw, "CREATE TABLE x(a)", nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(raw);
  CHECK(ErrorOf([&] { ResultStore store(other); }) ==
        other + ": not an evalrun results database (it has tables but no evalrun schema version)");

  const std::string text = dir.File("notes.txt");
  std::ofstream(text) << "these are not the bytes of a database, but a plain text file\n";
  CHECK(ErrorOf([&] { ResultStore store(text); }).rfind(text + ": not a results database", 0) ==
        0);
  CHECK(ErrorOf([&] { ResultStore store(dir.File("missing/dir/r.db")); })
            .rfind(dir.File("missing/dir/r.db") + ": cannot open the results database", 0) == 0);
}
