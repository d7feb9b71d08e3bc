#pragma once
// evalrun's own task format (docs/task-format.md): suite.yaml and task YAML files, loaded with
// yaml-cpp marks so that every error names file:line:column, and the canonical task hash.
#include <string>
#include <vector>

#include "core/task.h"
#include "tasks/suite_files.h"

namespace evalrun {

// File names in errors and in Task::location are paths as `files` knows them, i.e. relative to
// the root of the SuiteFiles: "<dir>/suite.yaml", "<dir>/math/basic.yaml" (just "suite.yaml" when
// `dir` is ""). Task files hold a top-level mapping {tasks: [...]} (and optional
// schema_version); `include` globs may use wildcards in the file name only, since SuiteFiles::List
// does not list folders. Task `files:` paths are relative to the suite folder `dir`.
//
// Loads the suite at folder `dir` of `files` (suite.yaml, its inline tasks and `include` globs).
// Checks: unknown keys (with "did you mean"), wrong types, missing required fields, duplicate
// ids, unknown difficulty, referenced files missing, and every declared hash against the
// computed one. Throws Error (exit 2) on the first problem, naming file:line:column:
//   "tasks/smoke/suite.yaml:12:5: unknown key 'gader', did you mean 'grader'?"
//   "tasks/smoke/math.yaml:30:11: task 'math-003': declared hash 3f2a9c1e0b7d4a55 but the
//    content hashes to 9d0c7a1b2e3f4a5b (evalrun hash --write updates it)"
// `graders` is the table of grader types a task may name, with the version that goes into each
// task's hash (the runner passes NativeGraderVersions(), graders/grader.h).
Suite LoadEvalrunSuite(const SuiteFiles& files, const std::string& dir,
                       const GraderVersions& graders);

// The full SHA-256 hex of the canonical JSON of the hashed fields: id, dimension, difficulty,
// weight, messages, generation, grader, grader_version, agent, and {path: sha256} of referenced files. Nothing
// else (not hash, tags, comments).
std::string ComputeTaskHash(const Task& task);
// The object that is hashed, for `evalrun hash --explain` and tests.
nlohmann::json HashedFields(const Task& task);

struct HashLine {
  std::string file;
  std::string task_id;
  std::string hash;  // 16 hex characters
  bool changed = false;  // --write changed (inserted or updated) the line
};

// `evalrun hash FILE...`: the hash of every task in each YAML file (suite.yaml or a task file);
// with `write`, inserts or updates each task's `hash:` line in place, leaving every other byte of
// the file (comments, order, layout) untouched: an existing `hash:` value is replaced (quotes and
// trailing comment kept), else `hash: <16 hex>` is inserted after the `id:` line with the same
// indentation. Inserting into a flow-style task ({...}) throws Error. Declared hashes are not
// checked (this is how they are fixed). Paths are on disk; errors and HashLine::file name them as
// given. A task file takes the defaults and dimensions of the nearest suite.yaml in its folder or
// above (none: no defaults), and its `files:` are relative to that suite.yaml's folder (none: the
// file's own folder). Throws Error for unreadable files and for anything LoadEvalrunSuite rejects
// in the tasks themselves.
std::vector<HashLine> HashFiles(const std::vector<std::string>& paths, bool write,
                                const GraderVersions& graders);

}  // namespace evalrun
