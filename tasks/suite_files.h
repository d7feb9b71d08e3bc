#pragma once
// Where a suite's files are read from: a commit's tree (pinned; tasks/git_source.h) or a folder
// on disk (a bare PATH, for authoring; unpinned). The loaders read only through this interface,
// so a dirty work tree can never leak into a pinned suite.
#include <optional>
#include <string>
#include <vector>

namespace evalrun {

// One file of a folder listed recursively (SuiteFiles::ListTree).
struct SuiteFileEntry {
  std::string path;         // relative to the root, '/'-separated
  bool executable = false;  // git mode 100755 (on disk: the owner's execute bit)
};

class SuiteFiles {
 public:
  virtual ~SuiteFiles() = default;
  // The bytes of the file at `path` (relative to the root, '/'-separated), nullopt if absent.
  virtual std::optional<std::string> Read(const std::string& path) const = 0;
  // The regular files directly inside folder `dir` ("" = the root), sorted by name, as paths
  // relative to the root.
  virtual std::vector<std::string> List(const std::string& dir) const = 0;
  // Every regular file under folder `dir`, at any depth, sorted by path (byte order), with its
  // executable bit: the content of a repository folder (agent repository tasks). Symbolic links
  // are left out (a repository folder holds files and folders only). Empty when `dir` is no
  // folder.
  virtual std::vector<SuiteFileEntry> ListTree(const std::string& dir) const = 0;
  // How an error should name this place: "zx-bench@8e0adf68" or "/home/me/tasks".
  virtual std::string Describe() const = 0;
};

// A folder on disk. Nothing is read through a symbolic link that resolves outside the folder:
// Read, List and ListTree throw Error naming the link ("<root>/files: symbolic link to /etc,
// outside the suite folder; ..."). Links that stay inside are followed.
class DiskFiles : public SuiteFiles {
 public:
  explicit DiskFiles(std::string root);
  std::optional<std::string> Read(const std::string& path) const override;
  std::vector<std::string> List(const std::string& dir) const override;
  std::vector<SuiteFileEntry> ListTree(const std::string& dir) const override;
  std::string Describe() const override { return root_; }

 private:
  void CheckInside(const std::string& path) const;
  std::string root_;
};

// Glob match of a '/'-separated path: `*` matches within one segment, `**` across segments, `?`
// one character. Used for suite.yaml `include` patterns.
bool GlobMatch(const std::string& pattern, const std::string& path);

}  // namespace evalrun
