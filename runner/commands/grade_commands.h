#pragma once
// `evalrun grade` (grade one saved output, for task authors and verification) and
// `evalrun graders` (list the graders).
#include <string>

namespace CLI {
class App;
}

namespace evalrun {

struct GradeCommandOptions {
  std::string suite;
  std::string task_id;
  std::string output_file;
  std::string format = "text";  // text | json
  std::string suite_repo;
  bool unsafe_no_sandbox = false;
  bool sandbox_network = false;  // --sandbox-network: tests that install packages may
};

void AddGradeCommands(CLI::App& app, GradeCommandOptions& options);

// 0 when the output was graded (pass or fail); 1 when it could not be (skipped, env_error).
int RunGradeCommand(const GradeCommandOptions& options);
int RunGradersCommand();

}  // namespace evalrun
