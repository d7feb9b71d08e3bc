#pragma once
// `evalrun hash`, `evalrun validate`, `evalrun validate-task`, `evalrun fetch` and `evalrun
// suites`: the commands that pin, check and prepare task suites (DESIGN.md section 4).
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace evalrun {

struct TaskCommandOptions {
  std::vector<std::string> hash_files;
  bool hash_write = false;
  std::string validate_suite;
  std::string validate_judge_endpoint;  // validate --judge-endpoint: judged tasks are runnable
  bool validate_sandbox_network = false;  // validate --sandbox-network: so are network ones
  std::string suite_repo;
  std::vector<std::string> repo_mirrors;  // validate-task --repo-mirror URL=PATH
  std::string validate_task_suite;  // validate-task SUITE
  std::string validate_task_id;     // validate-task --task ID
  std::string fetch_suite;          // fetch SUITE
};

void AddTaskCommands(CLI::App& app, TaskCommandOptions& options);

// Each returns the exit code; run-fatal problems throw Error.
int RunHashCommand(const TaskCommandOptions& options);
int RunValidateCommand(const TaskCommandOptions& options);
int RunSuitesCommand();
// `evalrun validate-task SUITE --task ID`: checks a repository task the way SWE-bench validates
// its instances, in the sandbox: at the base with the hidden tests, every fail_to_pass test fails
// and every pass_to_pass test passes; with the gold patch applied, all of them pass. Prints one
// line per check ("ok   ..." / "FAIL ...", naming the tests that break it) and a verdict line.
// Returns 0 when valid, 3 when a check fails (or the task has no gold_patch); throws Error (exit
// 2) for an unknown task, a task that is not a repository task, or no sandbox here.
int RunValidateTaskCommand(const TaskCommandOptions& options);
// `evalrun fetch SUITE`: prepares the repository cache (EVALRUN_CACHE) for an offline run. Clones
// (or updates) every repository the suite's `repo.url` tasks need, through EnsureCachedClone, so
// a commit already cached never touches the network; then checks that each task's base_commit is
// in the clone and has the task's base_tree. Prints one line per task ("ok   ID: commit C has
// tree T" / "FAIL ID: ..."), each repository's cache folder and size, and a total. Returns 0 when
// every commit is there with its tree, 3 when one is not (or a repository cannot be cloned: each
// of its tasks fails with the reason, the clone tried once, the other repositories still fetched);
// throws Error (exit 2) when the suite does not load.
int RunFetchCommand(const TaskCommandOptions& options);

}  // namespace evalrun
