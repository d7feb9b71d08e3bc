#include "tasks/suite_files.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

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

// Whether pattern[p..] matches path[s..], filled from the pattern's end backwards, one row per
// pattern position: O(pattern x path) time and O(path) memory whatever the pattern, where
// backtracking over `*a*a*a...` is exponential. `*` and `?` never cross '/', `**` does, and
// `**/` also matches zero folders. Row p needs rows p+1 (a literal, `?`, `*`), p+2 (`**`) and
// p+3 (`**/`), so four rows are kept.
class GlobTable {
 public:
  explicit GlobTable(size_t columns) : rows_(4, std::vector<char>(columns, 0)) {}
  std::vector<char>& Row(size_t p) { return rows_[p % 4]; }

 private:
  std::vector<std::vector<char>> rows_;
};

bool Match(const std::string& pattern, const std::string& path) {
  const size_t n = path.size();
  GlobTable table(n + 1);
  std::vector<char>& last = table.Row(pattern.size());
  std::fill(last.begin(), last.end(), 0);
  last[n] = 1;
  for (size_t p = pattern.size(); p-- > 0;) {
    std::vector<char>& row = table.Row(p);
    const char c = pattern[p];
    const bool across = c == '*' && p + 1 < pattern.size() && pattern[p + 1] == '*';
    if (across) {
      const size_t next = p + 2;
      const bool zero_folders = next < pattern.size() && pattern[next] == '/';
      const std::vector<char>& after = table.Row(next);
      const std::vector<char>* after_slash = zero_folders ? &table.Row(next + 1) : nullptr;
      // `any` is "`**` takes path[s..k) for some k, then row `next` matches"; the zero-folder
      // reading of `**/` only applies where `**` takes nothing.
      bool any = after[n] != 0;
      row[n] = any || (after_slash != nullptr && (*after_slash)[n]);
      for (size_t s = n; s-- > 0;) {
        any = any || after[s];
        row[s] = any || (after_slash != nullptr && (*after_slash)[s]);
      }
    } else if (c == '*') {
      const std::vector<char>& after = table.Row(p + 1);
      row[n] = after[n];
      for (size_t s = n; s-- > 0;) row[s] = after[s] || (path[s] != '/' && row[s + 1]);
    } else {
      const std::vector<char>& after = table.Row(p + 1);
      row[n] = 0;
      for (size_t s = 0; s < n; ++s) {
        row[s] = after[s + 1] && (c == '?' ? path[s] != '/' : path[s] == c);
      }
    }
  }
  return table.Row(0)[0] != 0;
}

}  // namespace

bool GlobMatch(const std::string& pattern, const std::string& path) {
  return Match(pattern, path);
}

}  // namespace evalrun
