#pragma once
// The files of a zx-bench container's /workspace, as sessionRunner.ts's DockerSession writes
// them: the path check every entry file gets, and the seeding of a working copy. Shared by the
// graders that stand in for that container (cli_command) and the shell loop (runner/agent).
#include <string>

#include <nlohmann/json.hpp>

namespace evalrun::zx {

// safeWorkspacePath: relative, no backslash or colon, no ".." segment, not the workspace itself.
bool SafeWorkspacePath(const std::string& path);

// The files ([{path, content, executable?}], paths already checked) written under `root`:
// parents made, contents written, 0755 for `executable` files, 0644 otherwise (the seed copied
// by the container's user under umask 022). "" when done, else what could not be written.
std::string SeedWorkspaceFiles(const std::string& root, const nlohmann::json& files);

}  // namespace evalrun::zx
