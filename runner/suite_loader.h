#pragma once
// Loads a suite from a SUITE argument (NAME@REV, PATH@REV or PATH): resolution through tasks/
// (libgit2 or disk), then the loader of its format — evalrun YAML (tasks/) or the zx-bench bank
// (plugins/). The two never know each other; this is where they meet.
#include <string>

#include "core/task.h"
#include "tasks/git_source.h"

namespace evalrun {

// Throws Error (exit 2) for anything that stops the suite from loading, naming where.
Suite LoadSuite(const std::string& spec, const ResolveOptions& options);

}  // namespace evalrun
