#pragma once
// One suite run as plain data: what the store (results/store.h) writes and reads back, and what
// the report (results/run_report.h) and, later, bundles are made from. DESIGN.md sections 10-11.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/grade.h"
#include "core/request_record.h"

namespace evalrun {

inline constexpr const char* kRunRunning = "running";          // being run, or killed mid-run
inline constexpr const char* kRunInterrupted = "interrupted";  // stopped by Ctrl-C, resumable
inline constexpr const char* kRunFinished = "finished";        // every planned task has a grade

// The run row: what was run, against what, how.
struct RunInfo {
  std::string id;              // "r20261129-231500-3f2a" (sortable by start time)
  std::string kind = "suite";  // "suite" | "speed"
  std::string status = kRunRunning;
  std::string created_at;      // UTC, ISO 8601 with seconds ("2026-11-29T23:15:00Z")
  std::string updated_at;
  std::string evalrun_version;

  // The suite (empty for a speed-only run).
  std::string suite_name;
  std::string suite_spec;      // as given on the command line
  std::string suite_format;    // "evalrun" | "zxbench"
  std::string suite_repo;
  std::string suite_path;
  std::string suite_commit;    // "" when unpinned (bare path)
  std::string suite_tree;
  std::map<std::string, double> dimension_weights;  // suite's; empty = equal weights

  std::string endpoint;
  std::string model;
  nlohmann::json server = nlohmann::json::object();       // ServerInfo as JSON
  nlohmann::json settings = nlohmann::json::object();     // everything resume must match
  std::map<std::string, std::string> labels;
  nlohmann::json environment = nlohmann::json::object();  // env probe
  int64_t planned_tasks = 0;   // tasks selected for the run (after --filter/--limit/--quick)
};

// One finished task: its requests, what the model said, and the grade.
struct TaskResult {
  std::string task_id;
  std::string task_hash;       // full SHA-256 hex
  std::string dimension;
  std::string difficulty;
  double weight = 1;           // the task's whole weight in its dimension: difficulty weight x
                               // task weight (DESIGN 5, zx-bench's multipliers included)
  std::string group;           // zx-bench: the source question of a migrated instance; "" =
                               // the task is its own group (scores average within a group first)
  std::string category;        // zx-bench category ("" for native tasks)
  Grade grade;                 // status kSkipped with the reason for tasks that cannot run here
  std::string output;          // the answer channel of the final request
  std::string reasoning;       // reasoning kept apart
  std::string finish_reason;
  // An agent task's every turn (docs/agent.md); null for single-request tasks. For agent tasks
  // `output` is the episode record the grader reads (a world's calls and final state, a
  // repository's diff), and the turns' own texts live here. A judged task (runner/judge.h)
  // keeps {"judge": record} here: the judge's requests and replies, which its grade is read from.
  nlohmann::json transcript;
  std::vector<RequestRecord> requests;  // every request sent for the task (retries and agent
                                        // turns included), in order
  int attempts = 0;            // requests that failed for environment reasons and were retried
  double wall_s = 0;           // from the first request's start to the grade
  int64_t finished_at_ns = 0;  // wall clock (UTC ns since the epoch) the task was committed
};

// One suite run, as stored.
struct RunData {
  RunInfo info;
  std::vector<TaskResult> tasks;  // finished tasks, in the order they finished
  nlohmann::json speed;           // SpeedResultToJson of the speed protocol run after the
                                  // tasks, or null (--no-speed, or not reached)
  struct Event {
    std::string at;               // UTC ISO 8601
    std::string kind;             // "start", "pause", "resume", "interrupt", "retry", "finish"
    std::string message;
  };
  std::vector<Event> events;      // the run's log: pauses for the endpoint, retries, interrupts
};

}  // namespace evalrun
