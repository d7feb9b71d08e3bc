#include "tasks/shipped_suites.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

namespace evalrun {
namespace fs = std::filesystem;

namespace {

bool IsSuiteFolder(const fs::path& folder) {
  std::error_code error;
  return fs::is_regular_file(folder / "suite.yaml", error);
}

}  // namespace

std::string ShippedSuitesDir() {
  std::error_code error;
  // EVALRUN_INSTALLED_SUITES: the suites folder relative to the installed executable's folder
  // (bin/ -> ../share/evalrun/suites), from CMake's install directories.
  const fs::path exe = fs::read_symlink("/proc/self/exe", error);
  if (!error) {
    const fs::path installed = exe.parent_path() / EVALRUN_INSTALLED_SUITES;
    if (fs::is_directory(installed, error)) return fs::weakly_canonical(installed, error).string();
  }
  // EVALRUN_SOURCE_SUITES: the source tree's tasks/ folder, for an evalrun run from its build tree.
  const fs::path source = EVALRUN_SOURCE_SUITES;
  if (fs::is_directory(source, error)) return source.string();
  return "";
}

std::vector<std::string> ShippedSuiteNames() {
  std::vector<std::string> names;
  const std::string dir = ShippedSuitesDir();
  if (dir.empty()) return names;
  std::error_code error;
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
    if (IsSuiteFolder(it->path())) names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string ShippedSuitePath(const std::string& name) {
  if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..") return "";
  const std::string dir = ShippedSuitesDir();
  if (dir.empty()) return "";
  const fs::path folder = fs::path(dir) / name;
  return IsSuiteFolder(folder) ? folder.string() : "";
}

}  // namespace evalrun
