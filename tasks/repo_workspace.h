#pragma once
// The working copy of a repository coding task (DESIGN.md section 9; docs/task-format.md
// "Repository coding tasks"): the task's repository at its pinned base, materialised with libgit2
// into a fresh temporary directory that is a git repository whose HEAD is the base; the agent's
// diff against the base; a patch applied to a fresh copy; paths restored from the base. Only
// this file's .cpp (and tasks/git_source.cpp) include git2.
//
// Also the typed form of a task's `agent` mapping when `kind` is `repo` (RepoTask), read by the
// tools (runner/agent/repo_tools.h), the grader (graders/native/repo_tests.cpp) and validate-task.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tasks/suite_files.h"

namespace evalrun {

// One file of a repository folder: its path relative to the folder, bytes and mode.
struct RepoFile {
  std::string path;
  std::string content;
  bool executable = false;
};

// The git tree id (40 lowercase hex) of a folder holding exactly `files`: blobs
// "blob <len>\0<content>", entries "100644 name\0<20 raw bytes>" ("100755" executable, "40000"
// folders), sorted the git way (a folder sorts as if its name ended in '/'), all SHA-1, as
// `git write-tree` computes it. Empty folders do not exist in git. Throws Error for a path that
// is not clean ('/'-separated, relative, no "." or ".." or empty segments).
std::string GitTreeId(const std::vector<RepoFile>& files);

struct RepoHiddenTest {
  std::string from;  // a file of the suite (relative to the suite folder)
  std::string to;    // its destination in the workspace (relative to the repository root)
};

struct RepoTaskLimits {
  int steps = 30;                   // model turns
  int64_t tokens = 60000;           // completion tokens over the episode
  double wall_s = 900;              // the whole episode; also bounds setup + test_cmd
  double command_timeout_s = 30;    // one bash call
  size_t observation_bytes = 16384; // one tool result, at most
};

// A task's checked `agent` mapping with kind `repo` (tasks/task_yaml.cpp checks it at load time
// and records the folder's file list in agent.repo.files).
struct RepoTask {
  std::string path;                    // the repository folder in the suite ("" for a url)
  std::vector<SuiteFileEntry> files;   // `path` form: its files, relative to `path`
  std::string url;                     // `url` form
  std::string base_commit;             // `url` form: 40 hex
  std::string base_tree;               // 40 hex, both forms
  std::string setup;                   // shell command, "" for none
  std::string test_cmd;
  std::string log_parser = "unittest";
  std::vector<RepoHiddenTest> hidden_tests;
  std::vector<std::string> protected_paths;  // hidden test destinations are protected too
  std::vector<std::string> fail_to_pass;
  std::vector<std::string> pass_to_pass;
  std::string gold_patch;              // a suite file, "" for none
  RepoTaskLimits limits;
  std::vector<std::string> tools = {"bash", "read_file", "write_file", "str_replace", "submit"};
};

// Reads an `agent` mapping the loader has checked. Throws Error when it is not one (not kind
// repo, a field of the wrong type): a programmer or storage error, not a user's.
RepoTask ParseRepoTask(const nlohmann::json& agent);

// Bytes of a suite file by its path relative to the suite folder (GradeContext::read_file,
// LoadedSuite::ReadTaskFile).
using ReadSuiteFile = std::function<std::optional<std::string>(const std::string& path)>;

// The agent's change, as a unified patch (git's format, `diff --git a/x b/x`, new files
// included). Binary files are left out of the patch, each with a note.
struct RepoDiff {
  std::string patch;
  std::vector<std::string> notes;  // "binary file 'x' left out of the diff"
};

// A repository materialised at its base in /tmp/evalrun-repo-XXXXXX, removed on destruction.
// Not thread-safe: one object per episode or grading. libgit2 validates repository ownership when
// a repository is opened, and the sandbox hands the files to its own user, so the repository
// handle is opened once, at creation, and kept.
class RepoWorkspace {
 public:
  // `path` form: writes the suite folder's files (read through `read_file`: "<path>/<file>") as
  // the single commit (author and committer "evalrun <evalrun@localhost>", time 2000-01-01
  // 00:00:00 UTC, message "base") of a new repository, HEAD on branch main. `url` form: a clone
  // of the cached repository (EnsureCachedClone) with HEAD detached at base_commit. Either way
  // the base tree must be task.base_tree and the commit task.base_commit (url form). Also writes
  // .git/info/exclude (`__pycache__/`, `*.pyc`, `.pytest_cache/`): test runs' byproducts are not
  // part of the agent's diff. Throws Error naming the problem:
  //   "repository repos/minicalc: file 'calc.py' cannot be read from the suite"
  //   "repository repos/minicalc: its tree is <X>, the task says <Y>"
  //   "repository <url>: commit <id> is not there" / "...: commit <c> has tree <X>, the task
  //    says <Y>"
  static std::unique_ptr<RepoWorkspace> Create(const RepoTask& task,
                                               const ReadSuiteFile& read_file);
  ~RepoWorkspace();
  RepoWorkspace(const RepoWorkspace&) = delete;
  RepoWorkspace& operator=(const RepoWorkspace&) = delete;

  const std::string& path() const;  // absolute, the repository root (holds .git)

  // The work tree (untracked files included, .git/info/exclude honoured) against the base tree.
  // Throws Error only when libgit2 fails.
  RepoDiff Diff() const;
  // Applies a unified patch to the work tree (git_apply, all or nothing). Returns "" when it
  // applied, else why not ("the diff does not apply: ..."). An empty patch applies.
  std::string Apply(const std::string& patch);
  // Makes `relative` (a file or folder path, relative to the root) what it is at the base: what is
  // there now is removed, and the base's file or folder (if any) written back. Throws Error for
  // an unsafe path.
  void Restore(const std::string& relative);
  // Writes `content` at `relative`, creating folders. Refuses (Error) a path that is absolute,
  // leaves the root, enters .git, or passes through a symbolic link: written as evalrun's user,
  // so the agent's links must not steer it.
  void WriteFile(const std::string& relative, const std::string& content);

  struct Impl;
  explicit RepoWorkspace(std::unique_ptr<Impl> impl);

 private:
  std::unique_ptr<Impl> impl_;
};

// Whether `relative` is a clean relative path: '/'-separated, not absolute, no "", "." or ".."
// segment, no trailing '/'.
bool IsCleanRepoPath(const std::string& relative);

}  // namespace evalrun
