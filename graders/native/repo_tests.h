#pragma once
// Running a repository coding task's tests (DESIGN.md section 9; docs/task-format.md
// "Repository coding tasks"), shared by the `repo_tests` grader (graders/native/repo_tests.cpp) and
// `evalrun validate-task` (runner/commands/task_commands.cpp): in a workspace at the base (with the
// agent's diff or the gold patch applied), the protected paths are restored from the base, the
// hidden tests copied in, and `setup` then `test_cmd` run in the sandbox; the log is read with the
// task's log parser.
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "plugins/sandbox.h"
#include "graders/native/test_log.h"
#include "tasks/repo_workspace.h"

namespace evalrun {

struct RepoTestRun {
  // Non-empty: the tests could not be run or their run says nothing (setup failed, a hidden
  // test file is missing, no test in the log, a failing exit with no failed test): an invalid
  // run, not a pass. validate-task reports it as such; the grader counts it as not resolved
  // (score 0) when the agent's change can have caused it, and as env_error only when evalrun's
  // side failed (`infrastructure`).
  std::string invalid;
  // The invalid run is evalrun's or the suite's failure, not the code's: a hidden test missing
  // from the suite, the sandbox failing to start.
  bool infrastructure = false;
  bool timed_out = false;  // setup or test_cmd ran out of wall time
  int exit_code = -1;      // of test_cmd
  std::string log;         // test_cmd's stdout and stderr, interleaved (2>&1)
  TestLogResult tests;
  // Status of every fail_to_pass and pass_to_pass test: "passed", "failed", "error", "skipped",
  // or "missing" (not in the log).
  std::map<std::string, std::string> fail_to_pass;
  std::map<std::string, std::string> pass_to_pass;
  bool AllPass(const std::map<std::string, std::string>& statuses) const;
};

// Restores `task.protected_paths` and every hidden-test destination in `workspace` from the
// base, writes the hidden tests (read through `read_file`), then runs `setup` (when given) and
// `test_cmd` with `bash -c` in `sandbox` (workspace bound at /work, .git read-only; wall clock
// and CPU task.limits.wall_s each, 2 GiB of address space). Never throws for what the code does:
// a protected path or hidden-test destination the agent's change made unrestorable (a folder on
// the way replaced by a file or a link) is an invalid run.
RepoTestRun RunRepoTests(const RepoTask& task, RepoWorkspace& workspace,
                         const ReadSuiteFile& read_file, const Sandbox& sandbox);

// {"fail_to_pass": {name: status}, "pass_to_pass": {...}, "exit_code", "timed_out",
//  "counts": {passed, failed, errors, skipped}, "log_tail": <last 4000 bytes>}
nlohmann::json RepoTestEvidence(const RepoTestRun& run);

}  // namespace evalrun
