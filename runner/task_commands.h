#pragma once
// `evalrun hash`, `evalrun validate` and `evalrun suites`: the commands that pin and check task
// suites (DESIGN.md section 4).
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
  std::string suite_repo;
};

void AddTaskCommands(CLI::App& app, TaskCommandOptions& options);

// Each returns the exit code; run-fatal problems throw Error.
int RunHashCommand(const TaskCommandOptions& options);
int RunValidateCommand(const TaskCommandOptions& options);
int RunSuitesCommand();

}  // namespace evalrun
