#pragma once
// Loads a suite from a SUITE argument (NAME@REV, PATH@REV or PATH): resolution through tasks/
// (libgit2 or disk), then the loader of its format — evalrun YAML (tasks/) or the zx-bench bank
// (plugins/). The two never know each other; this is where they meet.
#include <memory>
#include <optional>
#include <string>

#include "core/task.h"
#include "tasks/git_source.h"

namespace evalrun {

struct LoadedSuite {
  Suite suite;
  std::unique_ptr<SuiteFiles> files;  // where the suite was read from (a commit or a folder)
  std::string root;                   // the suite's folder inside `files`

  // A file a task references (TaskFile::path, relative to the suite folder), from the same
  // commit or folder the suite came from.
  std::optional<std::string> ReadTaskFile(const std::string& path) const;
};

// Throws Error (exit 2) for anything that stops the suite from loading, naming where.
LoadedSuite LoadSuite(const std::string& spec, const ResolveOptions& options);

}  // namespace evalrun
