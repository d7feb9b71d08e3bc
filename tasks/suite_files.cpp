#include "tasks/suite_files.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"

namespace evalrun {

namespace fs = std::filesystem;

DiskFiles::DiskFiles(std::string root) : root_(std::move(root)) {}

namespace {

bool IsInside(const fs::path& inner, const fs::path& outer) {
  const auto [o, i] = std::mismatch(outer.begin(), outer.end(), inner.begin(), inner.end());
  return o == outer.end();
}

}  // namespace

// A shared suite folder must not reach outside itself: a `files/` symlinked to /etc would copy the
// host's files into the run and the exported bundle. Each component of `path` is resolved in turn
// so the refusal names the link that leaves, not just the final file.
void DiskFiles::CheckInside(const std::string& path) const {
  if (path.empty()) return;
  std::error_code error;
  const fs::path root = fs::weakly_canonical(fs::absolute(root_, error), error);
  if (error) return;
  fs::path prefix = root_;
  std::string shown;
  for (const auto& part : fs::path(path)) {
    prefix /= part;
    shown += (shown.empty() ? "" : "/") + part.string();
    if (!fs::is_symlink(prefix, error)) continue;
    const fs::path target = fs::weakly_canonical(prefix, error);
    if (error || !IsInside(target, root)) {
      throw Error(fs::path(root_).append(shown).string() + ": symbolic link to " +
                  fs::read_symlink(prefix, error).string() +
                  ", outside the suite folder; a suite may only use files inside its folder "
                  "(refused: " + path + ")");
    }
  }
}

std::optional<std::string> DiskFiles::Read(const std::string& path) const {
  const fs::path full = path.empty() ? fs::path(root_) : fs::path(root_) / path;
  CheckInside(path);
  std::error_code error;
  if (!fs::is_regular_file(full, error)) return std::nullopt;
  std::ifstream in(full, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

std::vector<std::string> DiskFiles::List(const std::string& dir) const {
  std::vector<std::string> out;
  const fs::path folder = dir.empty() ? fs::path(root_) : fs::path(root_) / dir;
  CheckInside(dir);
  std::error_code error;
  for (fs::directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) {
    if (!it->is_regular_file(error)) continue;
    const std::string name = it->path().filename().string();
    out.push_back(dir.empty() ? name : dir + "/" + name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<SuiteFileEntry> DiskFiles::ListTree(const std::string& dir) const {
  std::vector<SuiteFileEntry> out;
  const fs::path folder = dir.empty() ? fs::path(root_) : fs::path(root_) / dir;
  CheckInside(dir);
  std::error_code error;
  if (!fs::is_directory(folder, error)) return out;
  for (fs::recursive_directory_iterator it(folder, error), end; !error && it != end;
       it.increment(error)) {
    if (it->is_symlink(error) || !it->is_regular_file(error)) continue;
    const std::string relative = it->path().lexically_relative(folder).generic_string();
    const bool executable =
        (it->status(error).permissions() & fs::perms::owner_exec) != fs::perms::none;
    out.push_back({dir.empty() ? relative : dir + "/" + relative, executable});
  }
  std::sort(out.begin(), out.end(),
            [](const SuiteFileEntry& a, const SuiteFileEntry& b) { return a.path < b.path; });
  return out;
}

namespace {

// Matches pattern[p..] against path[s..]; `*` and `?` never cross '/', `**` does.
bool Match(const std::string& pattern, size_t p, const std::string& path, size_t s) {
  while (p < pattern.size()) {
    const char c = pattern[p];
    if (c == '*') {
      const bool across = p + 1 < pattern.size() && pattern[p + 1] == '*';
      size_t next = p + (across ? 2 : 1);
      // "**/" also matches zero folders.
      if (across && next < pattern.size() && pattern[next] == '/' && Match(pattern, next + 1, path, s)) {
        return true;
      }
      for (size_t i = s; i <= path.size(); ++i) {
        if (Match(pattern, next, path, i)) return true;
        if (i < path.size() && path[i] == '/' && !across) return false;
      }
      return false;
    }
    if (s >= path.size()) return false;
    if (c == '?') {
      if (path[s] == '/') return false;
    } else if (c != path[s]) {
      return false;
    }
    ++p;
    ++s;
  }
  return s == path.size();
}

}  // namespace

bool GlobMatch(const std::string& pattern, const std::string& path) {
  return Match(pattern, 0, path, 0);
}

}  // namespace evalrun
