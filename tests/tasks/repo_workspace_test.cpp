#include "tasks/repo_workspace.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "tests/support/catch.h"

#include "core/error.h"

// The git command-line tool is the reference: tree ids and commits computed here must be what
// `git write-tree` and `git rev-parse` say. Repositories live in fresh temporary folders; the url
// form clones a local bare repository (no network).

namespace {

namespace fs = std::filesystem;
using evalrun::Error;
using evalrun::RepoFile;
using evalrun::RepoTask;
using evalrun::RepoWorkspace;

struct TempDir {
  TempDir() {
    char pattern[] = "/tmp/evalrun-repo-test-XXXXXX";
    REQUIRE(mkdtemp(pattern) != nullptr);
    path = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  fs::path path;
};

std::string Run(const std::string& command) {
  std::string out;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buffer[4096];
  size_t n = 0;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
  const int status = pclose(pipe);
  INFO(command << "\n" << out);
  REQUIRE(status == 0);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

const char* kGit = "git -c user.name=t -c user.email=t@t -c init.defaultBranch=main "
                   "-c safe.directory='*'";

void WriteFile(const fs::path& path, const std::string& content, bool executable = false) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << content;
  chmod(path.c_str(), executable ? 0755 : 0644);
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// A small repository's files: nested folders, an executable, names that sort differently as
// folders ("a" vs "a.txt", "a-b").
std::vector<RepoFile> SampleFiles() {
  return {{"README.md", "# sample\n", false},
          {"a.txt", "file a.txt\n", false},
          {"a-b", "dash\n", false},
          {"a/x.py", "def x():\n    return 1\n", false},
          {"a/deep/y.py", "Y = 2\n", false},
          {"run.sh", "#!/bin/sh\necho hi\n", true},
          {"tests/test_x.py", "import a.x\n", false}};
}

// The tree id `git write-tree` gives for `files` written into a fresh repository.
std::string GitCliTreeId(const std::vector<RepoFile>& files) {
  TempDir dir;
  for (const RepoFile& f : files) WriteFile(dir.path / f.path, f.content, f.executable);
  const std::string at = " -C " + dir.path.string();
  Run(std::string(kGit) + at + " init -q");
  Run(std::string(kGit) + at + " add -A");
  return Run(std::string(kGit) + at + " write-tree");
}

// A RepoTask of the `path` form over `files`, and a reader serving them under "repos/sample/".
struct PathTask {
  RepoTask task;
  std::map<std::string, std::string> suite;
  evalrun::ReadSuiteFile read = [this](const std::string& path) -> std::optional<std::string> {
    const auto it = suite.find(path);
    if (it == suite.end()) return std::nullopt;
    return it->second;
  };
};

PathTask MakePathTask(const std::vector<RepoFile>& files) {
  PathTask out;
  out.task.path = "repos/sample";
  for (const RepoFile& f : files) {
    out.task.files.push_back({f.path, f.executable});
    out.suite["repos/sample/" + f.path] = f.content;
  }
  out.task.base_tree = evalrun::GitTreeId(files);
  return out;
}

}  // namespace

TEST_CASE("GitTreeId: equals git write-tree for nested folders, executables and git's sort order",
          "[repo_workspace]") {
  const std::vector<RepoFile> files = SampleFiles();
  CHECK(evalrun::GitTreeId(files) == GitCliTreeId(files));
  SECTION("a one-file tree and an empty file") {
    const std::vector<RepoFile> one = {{"empty", "", false}};
    CHECK(evalrun::GitTreeId(one) == GitCliTreeId(one));
  }
  SECTION("the executable bit changes the id") {
    std::vector<RepoFile> changed = files;
    changed[0].executable = true;
    CHECK(evalrun::GitTreeId(changed) != evalrun::GitTreeId(files));
    CHECK(evalrun::GitTreeId(changed) == GitCliTreeId(changed));
  }
  SECTION("unclean paths are refused") {
    CHECK_THROWS_WITH(evalrun::GitTreeId({{"../x", "", false}}),
                      "repository file path '../x' is not a clean relative path");
  }
}

TEST_CASE("RepoWorkspace: a path task materialises as one commit with exactly the base tree",
          "[repo_workspace]") {
  PathTask p = MakePathTask(SampleFiles());
  const auto ws = RepoWorkspace::Create(p.task, p.read);
  const fs::path root = ws->path();
  CHECK(ReadFile(root / "a/deep/y.py") == "Y = 2\n");
  CHECK((fs::status(root / "run.sh").permissions() & fs::perms::owner_exec) != fs::perms::none);
  const std::string at = std::string(kGit) + " -C " + root.string();
  CHECK(Run(at + " rev-parse HEAD^{tree}") == p.task.base_tree);
  CHECK(Run(at + " log --format='%an <%ae> %at %s'") == "evalrun <evalrun@localhost> 946684800 base");
  CHECK(Run(at + " status --porcelain").empty());
}

TEST_CASE("RepoWorkspace: removed on destruction", "[repo_workspace]") {
  PathTask p = MakePathTask(SampleFiles());
  std::string root;
  {
    const auto ws = RepoWorkspace::Create(p.task, p.read);
    root = ws->path();
    CHECK(fs::exists(root));
  }
  CHECK_FALSE(fs::exists(root));
}

TEST_CASE("RepoWorkspace: a tree that is not the task's base_tree is refused", "[repo_workspace]") {
  PathTask p = MakePathTask(SampleFiles());
  const std::string actual = p.task.base_tree;
  p.task.base_tree = std::string(40, '0');
  CHECK_THROWS_WITH(RepoWorkspace::Create(p.task, p.read),
                    "repository repos/sample: its tree is " + actual + ", the task says " +
                        std::string(40, '0'));
  p.task.base_tree = actual;
  p.suite.erase("repos/sample/README.md");
  CHECK_THROWS_WITH(RepoWorkspace::Create(p.task, p.read),
                    "repository repos/sample: file 'README.md' cannot be read from the suite");
}

TEST_CASE("RepoWorkspace: the diff covers edits, new and deleted files, and applies to a fresh copy",
          "[repo_workspace]") {
  PathTask p = MakePathTask(SampleFiles());
  const auto ws = RepoWorkspace::Create(p.task, p.read);
  const fs::path root = ws->path();
  CHECK(ws->Diff().patch.empty());
  WriteFile(root / "a/x.py", "def x():\n    return 2\n");
  WriteFile(root / "new/dir/n.py", "N = 1\n");
  fs::remove(root / "README.md");
  WriteFile(root / "a/__pycache__/x.cpython-311.pyc", std::string("\0\1\2", 3));  // excluded
  const evalrun::RepoDiff diff = ws->Diff();
  CHECK(diff.notes.empty());
  CHECK(diff.patch.find("diff --git a/a/x.py b/a/x.py") != std::string::npos);
  CHECK(diff.patch.find("+    return 2") != std::string::npos);
  CHECK(diff.patch.find("diff --git a/new/dir/n.py b/new/dir/n.py\nnew file mode 100644") !=
        std::string::npos);
  CHECK(diff.patch.find("deleted file mode 100644") != std::string::npos);
  CHECK(diff.patch.find("__pycache__") == std::string::npos);

  // The same text `git diff` would apply.
  const auto fresh = RepoWorkspace::Create(p.task, p.read);
  CHECK(fresh->Apply(diff.patch) == "");
  CHECK(ReadFile(fs::path(fresh->path()) / "a/x.py") == "def x():\n    return 2\n");
  CHECK(ReadFile(fs::path(fresh->path()) / "new/dir/n.py") == "N = 1\n");
  CHECK_FALSE(fs::exists(fs::path(fresh->path()) / "README.md"));
  CHECK(fresh->Diff().patch == diff.patch);

  SECTION("a diff that does not apply leaves the copy as it was") {
    const auto other = RepoWorkspace::Create(p.task, p.read);
    WriteFile(fs::path(other->path()) / "a/x.py", "changed meanwhile\n");
    const std::string why = other->Apply(diff.patch);
    CHECK(why.rfind("the diff does not apply: ", 0) == 0);
    CHECK_FALSE(fs::exists(fs::path(other->path()) / "new/dir/n.py"));
  }
  SECTION("text that is no diff") {
    const auto other = RepoWorkspace::Create(p.task, p.read);
    CHECK(other->Apply("diff --git a/x\ngarbage\n").rfind("the diff cannot be read: ", 0) == 0);
  }
  SECTION("a diff (from someone else's bundle) that reaches outside or into .git is refused") {
    const auto other = RepoWorkspace::Create(p.task, p.read);
    const fs::path outside = fs::path(other->path()).parent_path() / "evalrun-escaped.txt";
    const std::string escape =
        "diff --git a/../evalrun-escaped.txt b/../evalrun-escaped.txt\nnew file mode 100644\n"
        "--- /dev/null\n+++ b/../evalrun-escaped.txt\n@@ -0,0 +1 @@\n+owned\n";
    CHECK(other->Apply(escape) == "the diff does not apply: it touches '../evalrun-escaped.txt', "
                                  "outside the repository's files");
    CHECK_FALSE(fs::exists(outside));
    const std::string hook =
        "diff --git a/.git/hooks/pre-commit b/.git/hooks/pre-commit\nnew file mode 100755\n"
        "--- /dev/null\n+++ b/.git/hooks/pre-commit\n@@ -0,0 +1 @@\n+owned\n";
    CHECK(other->Apply(hook) == "the diff does not apply: it touches '.git/hooks/pre-commit', "
                                "outside the repository's files");
    CHECK_FALSE(fs::exists(fs::path(other->path()) / ".git/hooks/pre-commit"));
  }
}

TEST_CASE("RepoWorkspace: binary files are left out of the diff with a note", "[repo_workspace]") {
  PathTask p = MakePathTask(SampleFiles());
  const auto ws = RepoWorkspace::Create(p.task, p.read);
  WriteFile(fs::path(ws->path()) / "blob.bin", std::string("\x00\x01\x02\xff", 4));
  WriteFile(fs::path(ws->path()) / "ok.txt", "text\n");
  const evalrun::RepoDiff diff = ws->Diff();
  REQUIRE(diff.notes.size() == 1);
  CHECK(diff.notes[0] == "binary file 'blob.bin' left out of the diff");
  CHECK(diff.patch.find("blob.bin") == std::string::npos);
  CHECK(diff.patch.find("ok.txt") != std::string::npos);
}

TEST_CASE("RepoWorkspace: Restore puts back a folder's base content and removes additions",
          "[repo_workspace]") {
  PathTask p = MakePathTask(SampleFiles());
  const auto ws = RepoWorkspace::Create(p.task, p.read);
  const fs::path root = ws->path();
  WriteFile(root / "tests/test_x.py", "assert True\n");
  WriteFile(root / "tests/extra.py", "x\n");
  ws->Restore("tests");
  CHECK(ReadFile(root / "tests/test_x.py") == "import a.x\n");
  CHECK_FALSE(fs::exists(root / "tests/extra.py"));
  SECTION("a path not in the base is removed") {
    WriteFile(root / "tests/hidden.py", "x\n");
    ws->Restore("tests/hidden.py");
    CHECK_FALSE(fs::exists(root / "tests/hidden.py"));
  }
  SECTION("a folder replaced by a symbolic link is restored as a folder") {
    fs::remove_all(root / "tests");
    fs::create_directory_symlink("/etc", root / "tests");
    ws->Restore("tests");
    CHECK(fs::is_directory(fs::symlink_status(root / "tests")));
    CHECK(ReadFile(root / "tests/test_x.py") == "import a.x\n");
  }
}

TEST_CASE("RepoWorkspace: WriteFile refuses .git, escapes and symbolic links on the way",
          "[repo_workspace]") {
  PathTask p = MakePathTask(SampleFiles());
  const auto ws = RepoWorkspace::Create(p.task, p.read);
  const fs::path root = ws->path();
  CHECK_THROWS_WITH(ws->WriteFile(".git/config", "x"), "'.git/config' is inside .git, which is read-only");
  CHECK_THROWS_WITH(ws->WriteFile("../x", "x"),
                    "'../x' is not a clean path relative to the repository root");
  fs::create_directory_symlink("/tmp", root / "out");
  CHECK_THROWS_WITH(ws->WriteFile("out/x.txt", "x"),
                    "'out/x.txt' passes through the symbolic link 'out'");
  ws->WriteFile("fresh/dir/f.txt", "made");
  CHECK(ReadFile(root / "fresh/dir/f.txt") == "made");
}

TEST_CASE("RepoWorkspace: the url form checks out base_commit of a local bare repository",
          "[repo_workspace]") {
  TempDir dir;
  const fs::path work = dir.path / "work";
  fs::create_directories(work);
  const std::string at = std::string(kGit) + " -C " + work.string();
  Run(at + " init -q");
  WriteFile(work / "lib.py", "V = 1\n");
  Run(at + " add -A");
  Run(at + " commit -q -m one");
  const std::string first = Run(at + " rev-parse HEAD");
  const std::string first_tree = Run(at + " rev-parse HEAD^{tree}");
  WriteFile(work / "lib.py", "V = 2\n");
  Run(at + " commit -q -am two");
  const fs::path bare = dir.path / "origin.git";
  Run(std::string(kGit) + " clone -q --bare " + work.string() + " " + bare.string());
  setenv("EVALRUN_CACHE", (dir.path / "cache").c_str(), 1);

  RepoTask task;
  task.url = bare.string();
  task.base_commit = first;
  task.base_tree = first_tree;
  const evalrun::ReadSuiteFile none = [](const std::string&) { return std::nullopt; };
  const auto ws = RepoWorkspace::Create(task, none);
  CHECK(ReadFile(fs::path(ws->path()) / "lib.py") == "V = 1\n");
  CHECK(Run(std::string(kGit) + " -C " + ws->path() + " rev-parse HEAD") == first);
  CHECK(ws->Diff().patch.empty());

  SECTION("a wrong tree id is refused") {
    task.base_tree = std::string(40, 'a');
    CHECK_THROWS_WITH(RepoWorkspace::Create(task, none),
                      "repository " + bare.string() + ": commit " + first + " has tree " +
                          first_tree + ", the task says " + std::string(40, 'a'));
  }
  SECTION("a commit that is not there is refused") {
    task.base_commit = std::string(40, 'b');
    CHECK_THROWS(RepoWorkspace::Create(task, none));
  }
  unsetenv("EVALRUN_CACHE");
}

TEST_CASE("ParseRepoTask: reads a checked agent mapping with defaults", "[repo_workspace]") {
  const nlohmann::json agent = {
      {"kind", "repo"},
      {"repo", {{"path", "repos/m"}, {"base_tree", std::string(40, 'c')},
                {"files", {{{"path", "a.py"}, {"executable", false}}}}}},
      {"test_cmd", "python3 -m unittest"},
      {"log_parser", "unittest"},
      {"hidden_tests", {{{"from", "files/h.py"}, {"to", "tests/h.py"}}}},
      {"fail_to_pass", {"t.a"}},
      {"limits", {{"steps", 5}}},
      {"tools", {"bash", "submit"}}};
  const RepoTask task = evalrun::ParseRepoTask(agent);
  CHECK(task.path == "repos/m");
  REQUIRE(task.files.size() == 1);
  CHECK(task.files[0].path == "a.py");
  CHECK(task.hidden_tests[0].to == "tests/h.py");
  CHECK(task.limits.steps == 5);
  CHECK(task.limits.command_timeout_s == 30);
  CHECK(task.tools == std::vector<std::string>{"bash", "submit"});
  CHECK_THROWS_WITH(evalrun::ParseRepoTask({{"kind", "world"}}), "agent: kind is not 'repo'");
}
