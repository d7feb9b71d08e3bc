#pragma once
// The results store (DESIGN.md section 10): one sqlite file in WAL mode, schema in
// results/schema.sql. One transaction per finished task; a task can be committed once per run
// (the primary key refuses a second grade). Only this file's .cpp includes sqlite.
//
// Thread-safe: every call takes the store's mutex for the duration of its statements (calls are
// short; the scheduler's event loop never calls the store).
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/run_data.h"

namespace evalrun {

inline constexpr int kStoreSchemaVersion = 3;

// A task as planned for a run.
struct PlannedTask {
  std::string task_id;
  std::string task_hash;
};

// Fills `timings` from the stored {"timings": llama.cpp's object, "meta_info": SGLang's} (either
// may be null), reading the figures the way the stream reader does. Never throws.
void ReadServerTimings(const nlohmann::json& stored, ServerTimings& timings);

class ResultStore {
 public:
  // Opens or creates the database at `path` (WAL, foreign keys, synchronous=NORMAL). Throws
  // Error naming the path when it cannot be opened, is not an evalrun database, or has another
  // schema version.
  explicit ResultStore(const std::string& path);
  ~ResultStore();
  ResultStore(const ResultStore&) = delete;
  ResultStore& operator=(const ResultStore&) = delete;

  const std::string& path() const;

  // A new run id: "r" + UTC start time + 4 random hex digits.
  static std::string NewRunId();

  // Inserts the run row, its plan and a "start" event, in one transaction.
  void CreateRun(const RunInfo& info, const std::vector<PlannedTask>& plan);
  // Marks `run_id` as being run by this process until the store is closed (or the process dies,
  // however it dies). Throws Error naming the run when another process holds it: one process
  // runs a run at a time, so a second `--resume` cannot grade the same tasks again.
  void LockRun(const std::string& run_id);
  void SetStatus(const std::string& run_id, const std::string& status);
  void AddEvent(const std::string& run_id, const std::string& kind, const std::string& message);

  // One transaction: the task's row and its requests. Throws Error when the task already has a
  // grade in this run ("task 'x' of run r... is already graded") or is not in the run's plan.
  // A task whose earlier row is env_error (run again by --resume) is the exception: that row is
  // replaced, and the earlier attempt's requests stay, numbered before the new ones.
  void CommitTask(const std::string& run_id, const TaskResult& result);
  void SaveSpeed(const std::string& run_id, const nlohmann::json& speed_result);

  std::vector<RunInfo> ListRuns() const;  // newest first
  std::optional<RunInfo> FindRun(const std::string& run_id) const;
  std::vector<PlannedTask> Plan(const std::string& run_id) const;
  std::set<std::string> FinishedTaskIds(const std::string& run_id) const;
  // The finished tasks whose grade is env_error: what --resume runs again.
  std::set<std::string> EnvErrorTaskIds(const std::string& run_id) const;
  int64_t FinishedCount(const std::string& run_id) const;
  // Everything about the run: info, finished tasks (commit order) with their requests, the last
  // speed result, events. Throws Error for an unknown id.
  RunData LoadRun(const std::string& run_id) const;

  // PRAGMA integrity_check's answer ("ok" when sound).
  std::string IntegrityCheck() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace evalrun
