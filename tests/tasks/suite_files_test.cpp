#include "tasks/suite_files.h"

#include <filesystem>
#include <fstream>

#include "tests/support/catch.h"

using evalrun::DiskFiles;
using evalrun::GlobMatch;

TEST_CASE("glob: * stays inside a folder, ** crosses folders, ? is one character", "[tasks]") {
  CHECK(GlobMatch("math/*.yaml", "math/a.yaml"));
  CHECK_FALSE(GlobMatch("math/*.yaml", "math/deep/a.yaml"));
  CHECK_FALSE(GlobMatch("math/*.yaml", "math/a.yml"));
  CHECK(GlobMatch("**/*.yaml", "a.yaml"));
  CHECK(GlobMatch("**/*.yaml", "x/y/z.yaml"));
  CHECK(GlobMatch("math/**", "math/x/y"));
  CHECK(GlobMatch("t?.yaml", "t1.yaml"));
  CHECK_FALSE(GlobMatch("t?.yaml", "t12.yaml"));
  CHECK_FALSE(GlobMatch("*", "a/b"));
  CHECK(GlobMatch("suite.yaml", "suite.yaml"));
}

TEST_CASE("disk files: read bytes, list a folder's files sorted, absent is nullopt", "[tasks]") {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("evalrun-disk-files-" + std::to_string(getpid()));
  fs::create_directories(root / "math" / "deep");
  std::ofstream(root / "math" / "b.yaml") << "b";
  std::ofstream(root / "math" / "a.yaml") << "a\n\xe4\xb8\xad";
  std::ofstream(root / "suite.yaml") << "suite: x";
  DiskFiles files(root.string());
  CHECK(files.Read("math/a.yaml") == std::string("a\n\xe4\xb8\xad"));
  CHECK_FALSE(files.Read("math/missing.yaml").has_value());
  CHECK_FALSE(files.Read("math").has_value());  // a folder is not a file
  CHECK(files.List("math") == std::vector<std::string>{"math/a.yaml", "math/b.yaml"});
  CHECK(files.List("") == std::vector<std::string>{"suite.yaml"});
  CHECK(files.List("nowhere").empty());
  CHECK(files.Describe() == root.string());
  fs::remove_all(root);
}
