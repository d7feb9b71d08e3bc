#pragma once
// The tools of a repository coding task (DESIGN.md section 9; docs/task-format.md "Repository
// coding tasks"): bash in the sandbox (the workspace bound writable at /work, .git read-only, no
// network, a per-command wall clock), and read_file / write_file / str_replace / submit, which
// evalrun runs itself on the workspace. Paths are relative to the repository root; absolute
// paths, '..', symbolic links leading out of the workspace and writes into .git are refused with
// a message the model sees. Only the task's `tools` are offered. Not thread-safe: one object per
// episode.
#include <string>

#include <nlohmann/json.hpp>

#include "plugins/sandbox.h"
#include "runner/agent/agent_tools.h"
#include "tasks/repo_workspace.h"

namespace evalrun {

class RepoTools : public AgentTools {
 public:
  // `workspace` and `sandbox` must outlive this object.
  RepoTools(const RepoTask& task, RepoWorkspace& workspace, const Sandbox& sandbox);

  nlohmann::json Schemas() const override;
  // Observations are cut to task.limits.observation_bytes (head and tail kept, the cut said).
  // bash records {"exit_code", "timed_out", "wall_ms"} and, when the output shows one,
  // "refused": what the sandbox stopped ("write outside /work (read-only file system)",
  // "network (there is none)", "/root (not visible in the sandbox)"). Never throws.
  ToolOutcome Execute(const std::string& name, const nlohmann::json& arguments) override;

  bool submitted() const { return submitted_; }
  // The episode record the repo_tests grader reads: {"diff": <unified patch of the work tree
  // against the base>, "diff_notes": [...], "termination_reason": ..., "submitted": bool}.
  // Throws Error only when libgit2 fails.
  nlohmann::json Episode(const std::string& termination_reason) const;

 private:
  ToolOutcome Bash(const nlohmann::json& arguments);
  ToolOutcome ReadFile(const nlohmann::json& arguments);
  ToolOutcome WriteFile(const nlohmann::json& arguments);
  ToolOutcome StrReplace(const nlohmann::json& arguments);
  std::string Cut(const std::string& text) const;

  RepoTask task_;
  RepoWorkspace& workspace_;
  const Sandbox& sandbox_;
  bool submitted_ = false;
};

}  // namespace evalrun
