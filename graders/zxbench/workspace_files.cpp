// The files of a zx-bench container's /workspace (graders/zxbench/workspace_files.h).
#include "graders/zxbench/workspace_files.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string_view>

#include "graders/zxbench/common.h"

namespace evalrun::zx {

bool SafeWorkspacePath(const std::string& path) {
  if (path.empty() || path[0] == '/' || path.find('\\') != std::string::npos ||
      path.find(':') != std::string::npos) {
    return false;
  }
  bool any = false;
  size_t begin = 0;
  while (begin <= path.size()) {
    size_t end = path.find('/', begin);
    if (end == std::string::npos) end = path.size();
    const std::string_view part(path.data() + begin, end - begin);
    if (part == "..") return false;
    if (!part.empty() && part != ".") any = true;
    begin = end + 1;
  }
  return any;
}

std::string SeedWorkspaceFiles(const std::string& root, const nlohmann::json& files) {
  namespace fs = std::filesystem;
  for (const nlohmann::json& f : files) {
    const fs::path target = fs::path(root) / f["path"].get<std::string>();
    std::error_code ec;
    fs::create_directories(target.parent_path(), ec);
    std::ofstream out(target, std::ios::binary | std::ios::trunc);
    const auto& content = f["content"].get_ref<const std::string&>();
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.close();
    if (!out) return "cannot write the fixture file '" + f["path"].get<std::string>() + "'";
    chmod(target.c_str(), Member(f, "executable") == true ? 0755 : 0644);
  }
  return "";
}

}  // namespace evalrun::zx
