#include "tasks/git_source.h"

#include <git2.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/catch.h"

#include "core/error.h"

// Every repository here is built at test time with libgit2 under a fresh temporary folder; the
// only transport used is libgit2's local one (paths and file:// URLs), so nothing needs a network.

namespace {

namespace fs = std::filesystem;
using evalrun::Error;

// ---- Helpers --------------------------------------------------------------------------------

template <auto Free>
struct Deleter {
  template <typename T>
  void operator()(T* handle) const {
    Free(handle);
  }
};
using RepoPtr = std::unique_ptr<git_repository, Deleter<git_repository_free>>;
using IndexPtr = std::unique_ptr<git_index, Deleter<git_index_free>>;
using TreePtr = std::unique_ptr<git_tree, Deleter<git_tree_free>>;
using CommitPtr = std::unique_ptr<git_commit, Deleter<git_commit_free>>;
using ObjectPtr = std::unique_ptr<git_object, Deleter<git_object_free>>;
using SignaturePtr = std::unique_ptr<git_signature, Deleter<git_signature_free>>;
using ReferencePtr = std::unique_ptr<git_reference, Deleter<git_reference_free>>;

void Check(int code, const char* what) {
  if (code < 0) {
    const git_error* e = git_error_last();
    FAIL(what << ": " << (e && e->message ? e->message : "libgit2 error"));
  }
}

std::string Hex(const git_oid& oid) {
  char hex[GIT_OID_HEXSZ + 1] = {};
  git_oid_tostr(hex, sizeof hex, &oid);
  return hex;
}

void WriteFile(const fs::path& path, const std::string& content) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << content;
}

// A fresh folder, removed with everything in it at the end of the test.
struct TempDir {
  fs::path path;
  TempDir() {
    static std::atomic<int> counter{0};
    path = fs::temp_directory_path() /
           ("evalrun-git-test-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(path);
    fs::create_directories(path);
    path = fs::canonical(path);
  }
  ~TempDir() {
    std::error_code error;
    fs::remove_all(path, error);
  }
};

// Sets (or with nullopt unsets) an environment variable, restoring it at the end of the scope.
class ScopedEnv {
 public:
  ScopedEnv(std::string name, const std::optional<std::string>& value) : name_(std::move(name)) {
    if (const char* old = std::getenv(name_.c_str())) old_ = old;
    if (value) {
      setenv(name_.c_str(), value->c_str(), 1);
    } else {
      unsetenv(name_.c_str());
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      unsetenv(name_.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

// HOME, EVALRUN_SUITES and EVALRUN_CACHE pointed at an empty temporary folder, so neither the
// user's registry nor their clone cache takes part.
struct IsolatedEnv {
  TempDir home;
  ScopedEnv home_env{"HOME", home.path.string()};
  ScopedEnv suites_env{"EVALRUN_SUITES", std::nullopt};
  ScopedEnv cache_env{"EVALRUN_CACHE", (home.path / "cache").string()};
};

// A repository with a work tree, built through libgit2's index like `git add -A; git commit`.
class TestRepo {
 public:
  explicit TestRepo(fs::path dir) : dir_(std::move(dir)) {
    static const int initialised = git_libgit2_init();  // never shut down: handles outlive tests
    (void)initialised;
    git_repository* raw = nullptr;
    Check(git_repository_init(&raw, dir_.c_str(), 0), "init");
    repo_.reset(raw);
  }
  git_repository* get() const { return repo_.get(); }
  const fs::path& dir() const { return dir_; }

  // Writes `files` into the work tree, stages the whole tree and commits it on HEAD's branch.
  // Commit times are fixed, so ids are the same on every run. Returns the commit id.
  std::string Commit(const std::map<std::string, std::string>& files, const std::string& message) {
    for (const auto& [path, content] : files) WriteFile(dir_ / path, content);
    git_index* raw_index = nullptr;
    Check(git_repository_index(&raw_index, repo_.get()), "index");
    IndexPtr index(raw_index);
    Check(git_index_add_all(index.get(), nullptr, 0, nullptr, nullptr), "add all");
    Check(git_index_write(index.get()), "write index");
    git_oid tree_id;
    Check(git_index_write_tree(&tree_id, index.get()), "write tree");
    git_tree* raw_tree = nullptr;
    Check(git_tree_lookup(&raw_tree, repo_.get(), &tree_id), "tree lookup");
    TreePtr tree(raw_tree);
    git_signature* raw_sig = nullptr;
    Check(git_signature_new(&raw_sig, "Test", "test@example.org", 1700000000 + 60 * commits_++, 0),
          "signature");
    SignaturePtr sig(raw_sig);
    CommitPtr parent;
    git_oid parent_id;
    if (git_reference_name_to_id(&parent_id, repo_.get(), "HEAD") == 0) {
      git_commit* raw_parent = nullptr;
      Check(git_commit_lookup(&raw_parent, repo_.get(), &parent_id), "parent");
      parent.reset(raw_parent);
    }
    const git_commit* parents[] = {parent.get()};
    git_oid id;
    Check(git_commit_create(&id, repo_.get(), "HEAD", sig.get(), sig.get(), nullptr,
                            message.c_str(), tree.get(), parent ? 1 : 0, parents),
          "commit");
    return Hex(id);
  }

  std::string TreeOf(const std::string& commit) const {
    git_oid id;
    Check(git_oid_fromstr(&id, commit.c_str()), "oid");
    git_commit* raw = nullptr;
    Check(git_commit_lookup(&raw, repo_.get(), &id), "commit lookup");
    CommitPtr owned(raw);
    return Hex(*git_commit_tree_id(owned.get()));
  }

  ObjectPtr Lookup(const std::string& commit) const {
    git_object* raw = nullptr;
    Check(git_revparse_single(&raw, repo_.get(), commit.c_str()), "revparse");
    return ObjectPtr(raw);
  }

  void Branch(const std::string& name, const std::string& commit) {
    ObjectPtr object = Lookup(commit);
    git_reference* raw = nullptr;
    Check(git_branch_create(&raw, repo_.get(), name.c_str(),
                            reinterpret_cast<git_commit*>(object.get()), 1),
          "branch");
    ReferencePtr owned(raw);
  }

  void LightweightTag(const std::string& name, const std::string& commit) {
    ObjectPtr object = Lookup(commit);
    git_oid id;
    Check(git_tag_create_lightweight(&id, repo_.get(), name.c_str(), object.get(), 0), "tag");
  }

  // Returns the tag object's id (not the commit's).
  std::string AnnotatedTag(const std::string& name, const std::string& commit) {
    ObjectPtr object = Lookup(commit);
    git_signature* raw_sig = nullptr;
    Check(git_signature_new(&raw_sig, "Test", "test@example.org", 1700000000, 0), "signature");
    SignaturePtr sig(raw_sig);
    git_oid id;
    Check(git_tag_create(&id, repo_.get(), name.c_str(), object.get(), sig.get(), "release", 0),
          "annotated tag");
    return Hex(id);
  }

 private:
  fs::path dir_;
  RepoPtr repo_;
  int commits_ = 0;
};

std::string Message(const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& e) {
    CHECK(e.code() == evalrun::ExitCode::kUsage);
    return e.what();
  }
  return "(no error)";
}

const std::string kSuiteV1 = "suite: demo\n# version 1\n";
const std::string kSuiteV2 = "suite: demo\n# version 2\n";

// Two commits: the second changes suite/suite.yaml and adds suite/later/x.yaml. Branch `stable`
// and tags `v1` (lightweight) and `v1-annotated` point at the first; `main-line` at the second.
struct TwoCommits {
  TempDir tmp;
  TestRepo repo{tmp.path / "repo"};
  std::string first, second, annotated_tag_id;
  TwoCommits() {
    first = repo.Commit({{"suite/suite.yaml", kSuiteV1},
                         {"suite/tasks/b.yaml", "b"},
                         {"suite/tasks/a.yaml", "a"},
                         {"suite/tasks/deep/c.yaml", "c"},
                         {"README.md", "readme"}},
                        "first");
    second = repo.Commit({{"suite/suite.yaml", kSuiteV2}, {"suite/later/x.yaml", "x"}}, "second");
    repo.Branch("stable", first);
    repo.Branch("main-line", second);
    repo.LightweightTag("v1", first);
    annotated_tag_id = repo.AnnotatedTag("v1-annotated", first);
  }
};

}  // namespace

// ---- OpenRevision and GitTreeFiles ----------------------------------------------------------

TEST_CASE("git source: a revision resolves by full id, short id, branch and tags", "[tasks][git]") {
  TwoCommits fixture;
  const std::string repo = fixture.repo.dir().string();
  const std::string first_tree = fixture.repo.TreeOf(fixture.first);
  REQUIRE(first_tree != fixture.repo.TreeOf(fixture.second));

  for (const std::string& rev :
       {fixture.first, fixture.first.substr(0, 7), std::string("stable"), std::string("v1"),
        std::string("v1-annotated"), std::string("refs/tags/v1-annotated")}) {
    INFO("rev " << rev);
    auto files = evalrun::OpenRevision(repo, rev, "demo");
    CHECK(files->commit() == fixture.first);  // an annotated tag is peeled to its commit
    CHECK(files->tree() == first_tree);
    CHECK(files->Read("suite/suite.yaml") == kSuiteV1);
    CHECK(files->Describe() == "demo@" + fixture.first.substr(0, 8));
  }
  CHECK(fixture.annotated_tag_id != fixture.first);

  auto second = evalrun::OpenRevision(repo, "main-line", "");
  CHECK(second->commit() == fixture.second);
  CHECK(second->tree() == fixture.repo.TreeOf(fixture.second));
  CHECK(second->Read("suite/suite.yaml") == kSuiteV2);
  CHECK(second->Describe() == repo + "@" + fixture.second.substr(0, 8));
  CHECK(evalrun::OpenRevision(repo, "HEAD~1", "d")->commit() == fixture.first);
}

TEST_CASE("git source: files come from the commit's tree, never from the work tree",
          "[tasks][git]") {
  TwoCommits fixture;
  // Dirty the work tree: change a committed file, delete one, and add an untracked one.
  WriteFile(fixture.repo.dir() / "suite/suite.yaml", "suite: dirty\n");
  fs::remove(fixture.repo.dir() / "suite/tasks/b.yaml");
  WriteFile(fixture.repo.dir() / "suite/tasks/untracked.yaml", "u");

  auto files = evalrun::OpenRevision(fixture.repo.dir().string(), fixture.second, "demo");
  CHECK(files->Read("suite/suite.yaml") == kSuiteV2);
  CHECK(files->Read("suite/tasks/b.yaml") == "b");
  CHECK_FALSE(files->Read("suite/tasks/untracked.yaml").has_value());
  CHECK(files->List("suite/tasks") ==
        std::vector<std::string>{"suite/tasks/a.yaml", "suite/tasks/b.yaml"});

  // Through ResolveSuite too, and from a folder inside the work tree.
  IsolatedEnv env;
  auto resolved =
      evalrun::ResolveSuite((fixture.repo.dir() / "suite").string() + "@" + fixture.second, {});
  CHECK(resolved.files->Read("suite/suite.yaml") == kSuiteV2);
  auto inside = evalrun::OpenRevision((fixture.repo.dir() / "suite/tasks").string(), "stable", "");
  CHECK(inside->Read("suite/suite.yaml") == kSuiteV1);
}

TEST_CASE("git source: Read and List follow SuiteFiles' contract", "[tasks][git]") {
  TwoCommits fixture;
  auto files = evalrun::OpenRevision(fixture.repo.dir().string(), fixture.first, "demo");
  SECTION("List gives the files directly inside a folder, sorted, relative to the root") {
    CHECK(files->List("suite/tasks") ==
          std::vector<std::string>{"suite/tasks/a.yaml", "suite/tasks/b.yaml"});
    CHECK(files->List("suite") == std::vector<std::string>{"suite/suite.yaml"});
    CHECK(files->List("") == std::vector<std::string>{"README.md"});
    CHECK(files->List("suite/later").empty());  // only in the second commit
    CHECK(files->List("nowhere").empty());
    CHECK(files->List("README.md").empty());  // a file is not a folder
    CHECK(files->List("./suite/tasks/") == files->List("suite/tasks"));
    CHECK(files->List("..").empty());
  }
  SECTION("Read: a folder or a missing path is nullopt") {
    CHECK(files->Read("suite/tasks/deep/c.yaml") == "c");
    CHECK_FALSE(files->Read("suite/tasks").has_value());
    CHECK_FALSE(files->Read("suite/missing.yaml").has_value());
    CHECK_FALSE(files->Read("").has_value());
    CHECK_FALSE(files->Read("../repo/README.md").has_value());
    CHECK_FALSE(files->Read("/README.md").has_value());
    CHECK(files->Read("./suite//tasks/a.yaml") == "a");
  }
  SECTION("IsFile and IsFolder") {
    CHECK(files->IsFile("README.md"));
    CHECK_FALSE(files->IsFile("suite"));
    CHECK(files->IsFolder("suite"));
    CHECK(files->IsFolder(""));
    CHECK_FALSE(files->IsFolder("README.md"));
    CHECK_FALSE(files->IsFolder("suite/later"));
  }
}

TEST_CASE("git source: symbolic links in the tree are followed inside it", "[tasks][git]") {
  TempDir tmp;
  TestRepo repo(tmp.path / "repo");
  WriteFile(tmp.path / "repo/lib/common.yaml", "common");
  fs::create_directories(tmp.path / "repo/suite");
  fs::create_symlink("../lib/common.yaml", tmp.path / "repo/suite/common.yaml");
  fs::create_symlink("../../outside.yaml", tmp.path / "repo/suite/escape.yaml");
  const std::string commit = repo.Commit({{"suite/suite.yaml", "s"}}, "links");
  auto files = evalrun::OpenRevision(repo.dir().string(), commit, "demo");
  CHECK(files->Read("suite/common.yaml") == "common");
  CHECK_FALSE(files->Read("suite/escape.yaml").has_value());
  CHECK(files->List("suite") == std::vector<std::string>{"suite/common.yaml", "suite/suite.yaml"});
}

TEST_CASE("git source: revision errors name the repository and the revision", "[tasks][git]") {
  TwoCommits fixture;
  const std::string repo = fixture.repo.dir().string();
  CHECK(Message([&] { evalrun::OpenRevision(repo, "no-such-branch", "d"); }) ==
        repo + ": unknown revision 'no-such-branch'");
  CHECK(Message([&] { evalrun::OpenRevision(repo, "0000000000", "d"); }) ==
        repo + ": unknown revision '0000000000'");
  CHECK(Message([&] { evalrun::OpenRevision(repo, "a..b", "d"); }) ==
        repo + ": unknown revision 'a..b'");
  const std::string missing = (fixture.tmp.path / "nothing-here").string();
  CHECK(Message([&] { evalrun::OpenRevision(missing, "HEAD", "d"); }) ==
        missing + ": not a git repository");
  const std::string plain = (fixture.tmp.path / "plain").string();
  fs::create_directories(plain);
  CHECK(Message([&] { evalrun::OpenRevision(plain, "HEAD", "d"); }) ==
        plain + ": not a git repository");

  git_oid blob;
  Check(git_blob_create_from_buffer(&blob, fixture.repo.get(), "x", 1), "blob");
  CHECK(Message([&] { evalrun::OpenRevision(repo, Hex(blob), "d"); }) ==
        repo + ": revision '" + Hex(blob) + "' is a blob, not a commit");
}

TEST_CASE("git source: an ambiguous short id says so", "[tasks][git]") {
  TempDir tmp;
  TestRepo repo(tmp.path / "repo");
  repo.Commit({{"a.txt", "a"}}, "one");
  // Blob ids depend only on content, so the same blob pair collides on every run. With 65536
  // four-character prefixes a collision is expected after a few hundred blobs.
  std::map<std::string, std::string> by_prefix;
  std::string prefix;
  for (int i = 0; i < 20000 && prefix.empty(); ++i) {
    const std::string content = "blob " + std::to_string(i) + "\n";
    git_oid id;
    Check(git_blob_create_from_buffer(&id, repo.get(), content.data(), content.size()), "blob");
    const std::string hex = Hex(id);
    if (!by_prefix.emplace(hex.substr(0, 4), hex).second) prefix = hex.substr(0, 4);
  }
  REQUIRE_FALSE(prefix.empty());
  CHECK(Message([&] { evalrun::OpenRevision(repo.dir().string(), prefix, "d"); }) ==
        repo.dir().string() + ": ambiguous short id '" + prefix +
            "': it matches more than one object; give more characters");
}

// ---- The registry ---------------------------------------------------------------------------

TEST_CASE("registry: zx-bench is built in: smoke is not a registry entry", "[tasks][git]") {
  IsolatedEnv env;
  const auto entries = evalrun::LoadRegistry();
  REQUIRE(entries.size() == 1);
  CHECK(entries[0].name == "zx-bench");
  CHECK(entries[0].url == "https://github.com/suncityldp/zx-bench");
  CHECK(entries[0].format == "zxbench");
  CHECK(entries[0].path == "data/scenarios/benchmark.json");
  CHECK(entries[0].origin == "built-in");
  CHECK(evalrun::RegistryFilePath() == (env.home.path / ".config/evalrun/suites.yaml").string());
}

TEST_CASE("registry: entries from ~/.config/evalrun/suites.yaml or EVALRUN_SUITES",
          "[tasks][git]") {
  IsolatedEnv env;
  SECTION("the file in HOME") {
    const fs::path file = env.home.path / ".config/evalrun/suites.yaml";
    WriteFile(file, "suites:\n  mine:\n    url: /srv/git/mine.git\n");
    const auto entries = evalrun::LoadRegistry();
    REQUIRE(entries.size() == 2);
    CHECK(entries[1].name == "mine");
    CHECK(entries[1].url == "/srv/git/mine.git");
    CHECK(entries[1].format == "evalrun");
    CHECK(entries[1].path == "");
    CHECK(entries[1].origin == file.string());
  }
  SECTION("EVALRUN_SUITES, a relative local url, and a built-in name pointed at a mirror") {
    const fs::path file = env.home.path / "elsewhere/suites.yaml";
    WriteFile(file,
              "# my suites\n"
              "suites:\n"
              "  local: {url: repos/local, format: zxbench, path: bank/}\n"
              "  zx-bench: {url: 'https://mirror.example.org/zx-bench.git', format: zxbench,\n"
              "             path: data/scenarios/benchmark.json}\n");
    ScopedEnv suites("EVALRUN_SUITES", file.string());
    const auto entries = evalrun::LoadRegistry();
    REQUIRE(entries.size() == 2);
    CHECK(entries[0].name == "zx-bench");
    CHECK(entries[0].url == "https://mirror.example.org/zx-bench.git");
    CHECK(entries[0].origin == file.string());
    CHECK(entries[1].name == "local");
    CHECK(entries[1].url == (env.home.path / "elsewhere/repos/local").string());
    CHECK(entries[1].format == "zxbench");
    CHECK(entries[1].path == "bank");
  }
  SECTION("an EVALRUN_SUITES file that does not exist leaves the built-ins") {
    ScopedEnv suites("EVALRUN_SUITES", (env.home.path / "none.yaml").string());
    CHECK(evalrun::LoadRegistry().size() == 1);
  }
}

TEST_CASE("registry: errors name file:line:column", "[tasks][git]") {
  IsolatedEnv env;
  const fs::path file = env.home.path / "suites.yaml";
  const std::string f = file.string();
  ScopedEnv suites("EVALRUN_SUITES", f);
  const auto error_for = [&](const std::string& yaml) {
    WriteFile(file, yaml);
    return Message([] { evalrun::LoadRegistry(); });
  };
  CHECK(error_for("suite:\n  a: {url: x}\n") ==
        f + ":1:1: unknown key 'suite', did you mean 'suites'?");
  CHECK(error_for("repos: {}\n") ==
        f + ":1:1: unknown key 'repos' (the registry has only 'suites')");
  CHECK(error_for("suites:\n  mine:\n    uri: /x\n") ==
        f + ":3:5: suite 'mine': unknown key 'uri', did you mean 'url'?");
  CHECK(error_for("suites:\n  mine:\n    url: /x\n    branch: main\n") ==
        f + ":4:5: suite 'mine': unknown key 'branch' (keys: url, format, path)");
  CHECK(error_for("suites:\n  mine: {url: /x, format: zxbnech}\n") ==
        f + ":2:27: suite 'mine': unknown format 'zxbnech', did you mean 'zxbench'? "
            "(formats: evalrun, zxbench)");
  CHECK(error_for("suites:\n  mine: {url: /x, format: json}\n") ==
        f + ":2:27: suite 'mine': unknown format 'json' (formats: evalrun, zxbench)");
  CHECK(error_for("suites:\n  mine:\n    url: [a, b]\n") ==
        f + ":3:10: suite 'mine': 'url' must be a string");
  CHECK(error_for("suites:\n  - mine\n") == f + ":2:3: 'suites' must be a mapping of suite names");
  CHECK(error_for("suites:\n  mine: /x\n") ==
        f + ":2:9: suite 'mine' must be a mapping with url, format and path");
  CHECK(error_for("suites:\n  mine: {format: evalrun}\n") ==
        f + ":2:3: suite 'mine': missing 'url' (a git URL or a local repository path)");
  CHECK(error_for("suites:\n  a@b: {url: /x}\n") ==
        f + ":2:3: suite name 'a@b' must be non-empty, without '@', '/' or spaces");
  CHECK(error_for("suites:\n  mine: {url: /x}\n  mine: {url: /y}\n") ==
        f + ":3:3: suite 'mine' is listed twice");
  CHECK(error_for("- just\n- a list\n") ==
        f + ":1:1: the suite registry must be a mapping with 'suites'");
  CHECK(error_for("suites: {mine: [}\n") == f + ":1:17: illegal flow end");
}

// ---- Resolution -----------------------------------------------------------------------------

TEST_CASE("suite spec: split at the last '@'", "[tasks][git]") {
  const auto spec = evalrun::ParseSuiteSpec("zx-bench@8e0adf68");
  CHECK(spec.name_or_path == "zx-bench");
  CHECK(spec.rev == "8e0adf68");
  CHECK(evalrun::ParseSuiteSpec("/home/me@work/tasks@main").name_or_path == "/home/me@work/tasks");
  CHECK(evalrun::ParseSuiteSpec("/home/me@work/tasks@main").rev == "main");
  CHECK(evalrun::ParseSuiteSpec("tasks/smoke").rev == "");
  CHECK(evalrun::ParseSuiteSpec("tasks/smoke").name_or_path == "tasks/smoke");
}

TEST_CASE("resolve: PATH@REV reads a folder of a repository at that commit", "[tasks][git]") {
  IsolatedEnv env;
  TwoCommits fixture;
  const std::string root = fixture.repo.dir().string();
  for (const std::string& rev : {fixture.first, fixture.first.substr(0, 7), std::string("stable"),
                                 std::string("v1"), std::string("v1-annotated")}) {
    INFO("rev " << rev);
    auto suite = evalrun::ResolveSuite(root + "/suite@" + rev, {});
    CHECK(suite.commit == fixture.first);
    CHECK(suite.tree == fixture.repo.TreeOf(fixture.first));
    CHECK(suite.repo == root);
    CHECK(suite.path == "suite");
    CHECK(suite.format == "evalrun");
    CHECK(suite.files->Read("suite/suite.yaml") == kSuiteV1);
    CHECK(suite.files->Describe() == root + "@" + fixture.first.substr(0, 8));
  }
  SECTION("the repository root, and a suite.yaml standing for its folder") {
    auto whole = evalrun::ResolveSuite(root + "@main-line", {});
    CHECK(whole.path == "");
    CHECK(whole.commit == fixture.second);
    auto by_file = evalrun::ResolveSuite(root + "/suite/suite.yaml@main-line", {});
    CHECK(by_file.path == "suite");
  }
  SECTION("a folder that exists on disk but not at that commit") {
    CHECK(Message([&] { evalrun::ResolveSuite(root + "/suite/later@" + fixture.first, {}); }) ==
          root + "@" + fixture.first.substr(0, 8) + ": no 'suite/later' at commit " +
              fixture.first.substr(0, 12));
    CHECK(evalrun::ResolveSuite(root + "/suite/later@" + fixture.second, {}).path == "suite/later");
  }
  SECTION("any other file is not a suite") {
    CHECK(Message([&] { evalrun::ResolveSuite(root + "/README.md@stable", {}); }) ==
          root + "@" + fixture.first.substr(0, 8) +
              ": 'README.md' is a file: give the suite's folder (the one with suite.yaml) or a "
              "zx-bench benchmark.json");
  }
  SECTION("an unknown revision names the repository") {
    CHECK(Message([&] { evalrun::ResolveSuite(root + "/suite@nope", {}); }) ==
          root + ": unknown revision 'nope'");
  }
  SECTION("a path outside any repository") {
    const std::string plain = (fixture.tmp.path / "plain").string();
    fs::create_directories(plain);
    CHECK(Message([&] { evalrun::ResolveSuite(plain + "@abc1234", {}); }) ==
          "'" + plain +
              "' is not inside a git repository (without @abc1234 it is read from "
              "disk, unpinned)");
  }
}

TEST_CASE("resolve: a zx-bench bank is recognised by its file or its folder", "[tasks][git]") {
  IsolatedEnv env;
  TempDir tmp;
  TestRepo repo(tmp.path / "zx");
  const std::string commit =
      repo.Commit({{"data/scenarios/benchmark.json", "[]"}, {"README.md", "zx"}}, "bank");
  const std::string root = repo.dir().string();
  auto folder = evalrun::ResolveSuite(root + "@" + commit, {});
  CHECK(folder.format == "zxbench");
  CHECK(folder.path == "data/scenarios/benchmark.json");
  auto file = evalrun::ResolveSuite(root + "/data/scenarios/benchmark.json@" + commit, {});
  CHECK(file.format == "zxbench");
  CHECK(file.path == "data/scenarios/benchmark.json");
  CHECK(file.files->Read(file.path) == "[]");
}

TEST_CASE("resolve: a bare PATH is read from disk, unpinned", "[tasks][git]") {
  IsolatedEnv env;
  TwoCommits fixture;
  WriteFile(fixture.repo.dir() / "suite/suite.yaml", "suite: dirty\n");
  auto suite = evalrun::ResolveSuite((fixture.repo.dir() / "suite").string(), {});
  CHECK(suite.commit.empty());
  CHECK(suite.tree.empty());
  CHECK(suite.repo.empty());
  CHECK(suite.format == "evalrun");
  CHECK(suite.path == "");
  CHECK(suite.files->Describe() == (fixture.repo.dir() / "suite").string());
  CHECK(suite.files->Read("suite.yaml") == "suite: dirty\n");  // the disk, as it is now

  WriteFile(fixture.tmp.path / "bank/data/scenarios/benchmark.json", "[]");
  auto bank = evalrun::ResolveSuite((fixture.tmp.path / "bank").string(), {});
  CHECK(bank.format == "zxbench");
  CHECK(bank.path == "data/scenarios/benchmark.json");
  CHECK(bank.files->Read(bank.path) == "[]");
  auto bank_file =
      evalrun::ResolveSuite((fixture.tmp.path / "bank/data/scenarios/benchmark.json").string(), {});
  CHECK(bank_file.format == "zxbench");
  CHECK(bank_file.path == "benchmark.json");
  CHECK(bank_file.files->Read(bank_file.path) == "[]");

  // A folder whose name contains '@' is still a bare path.
  WriteFile(fixture.tmp.path / "me@work/suite.yaml", "s");
  auto at_sign = evalrun::ResolveSuite((fixture.tmp.path / "me@work").string(), {});
  CHECK(at_sign.commit.empty());
  CHECK(at_sign.files->Read("suite.yaml") == "s");
}

TEST_CASE("resolve: names that are not suites", "[tasks][git]") {
  IsolatedEnv env;
  CHECK(Message([] { evalrun::ResolveSuite("zx-bench", {}); }) ==
        "suite 'zx-bench' is a registered name: give a revision, e.g. zx-bench@<commit>");
  CHECK(Message([] { evalrun::ResolveSuite("zx-bench@", {}); }) ==
        "suite 'zx-bench@': nothing after '@': give a revision, e.g. zx-bench@<commit>");
  CHECK(Message([] { evalrun::ResolveSuite("zx-bnech@8e0adf68", {}); }) ==
        "unknown suite 'zx-bnech', did you mean 'zx-bench'? (evalrun suites lists them)");
  CHECK(Message([] { evalrun::ResolveSuite("zx-bnech", {}); }) ==
        "unknown suite 'zx-bnech', did you mean 'zx-bench'? (evalrun suites lists them)");
  CHECK(Message([] { evalrun::ResolveSuite("x@main", {}); }) ==
        "unknown suite 'x': not a registered name or an existing path (evalrun suites lists them)");
  CHECK(Message([] { evalrun::ResolveSuite("/no/such/folder", {}); }) ==
        "unknown suite '/no/such/folder': not a registered name or an existing path (evalrun "
        "suites lists them)");
  evalrun::ResolveOptions options;
  options.suite_repo = env.home.path.string();
  CHECK(Message([&] { evalrun::ResolveSuite(env.home.path.string() + "@main", options); }) ==
        "--suite-repo applies to a registered suite name (NAME@REV), not to '" +
            env.home.path.string() + "@main'");
}

TEST_CASE("resolve: NAME@REV through a registry entry pointing at a local repository",
          "[tasks][git]") {
  IsolatedEnv env;
  TwoCommits fixture;
  const fs::path file = env.home.path / "suites.yaml";
  WriteFile(file, "suites:\n  mine: {url: " + fixture.repo.dir().string() + ", path: suite}\n");
  ScopedEnv suites("EVALRUN_SUITES", file.string());

  auto suite = evalrun::ResolveSuite("mine@stable", {});
  CHECK(suite.commit == fixture.first);
  CHECK(suite.tree == fixture.repo.TreeOf(fixture.first));
  CHECK(suite.repo == fixture.repo.dir().string());
  CHECK(suite.path == "suite");
  CHECK(suite.format == "evalrun");
  CHECK(suite.files->Describe() == "mine@" + fixture.first.substr(0, 8));
  CHECK(suite.files->Read("suite/suite.yaml") == kSuiteV1);
  // A local repository is used where it is: nothing is cloned.
  CHECK_FALSE(fs::exists(env.home.path / "cache"));

  CHECK(Message([] { evalrun::ResolveSuite("mine@nope", {}); }) ==
        fixture.repo.dir().string() + ": unknown revision 'nope'");
  CHECK(Message([] { evalrun::ResolveSuite("mine", {}); }) ==
        "suite 'mine' is a registered name: give a revision, e.g. mine@<commit>");
  CHECK(Message([] { evalrun::ResolveSuite("mines@stable", {}); }) ==
        "unknown suite 'mines', did you mean 'mine'? (evalrun suites lists them)");
}

TEST_CASE("resolve: --suite-repo points a registered name at a local clone", "[tasks][git]") {
  IsolatedEnv env;
  TempDir tmp;
  TestRepo mirror(tmp.path / "zx-bench");
  const std::string without_bank = mirror.Commit({{"README.md", "zx"}}, "empty");
  const std::string with_bank = mirror.Commit({{"data/scenarios/benchmark.json", "[{}]"}}, "bank");
  evalrun::ResolveOptions options;
  options.suite_repo = mirror.dir().string();

  // zx-bench's URL is on github; with --suite-repo nothing is fetched or cloned.
  auto suite = evalrun::ResolveSuite("zx-bench@" + with_bank.substr(0, 10), options);
  CHECK(suite.commit == with_bank);
  CHECK(suite.tree == mirror.TreeOf(with_bank));
  CHECK(suite.format == "zxbench");
  CHECK(suite.path == "data/scenarios/benchmark.json");
  CHECK(suite.repo == mirror.dir().string());
  CHECK(suite.files->Read(suite.path) == "[{}]");
  CHECK(suite.files->Describe() == "zx-bench@" + with_bank.substr(0, 8));
  CHECK_FALSE(fs::exists(env.home.path / "cache"));

  CHECK(Message([&] { evalrun::ResolveSuite("zx-bench@" + without_bank, options); }) ==
        "zx-bench@" + without_bank.substr(0, 8) +
            ": no 'data/scenarios/benchmark.json' at commit " + without_bank.substr(0, 12));
  options.suite_repo = (tmp.path / "missing").string();
  CHECK(Message([&] { evalrun::ResolveSuite("zx-bench@" + with_bank, options); }) ==
        (tmp.path / "missing").string() + ": not a git repository");
}

TEST_CASE("clone cache: clone once, fetch a revision only the origin has", "[tasks][git]") {
  IsolatedEnv env;
  TempDir tmp;
  TestRepo origin(tmp.path / "origin");
  const std::string first = origin.Commit({{"suite/suite.yaml", kSuiteV1}}, "first");
  origin.Branch("release", first);
  const std::string url = "file://" + origin.dir().string();
  const fs::path cache = env.home.path / "cache";

  const std::string clone = evalrun::EnsureCachedClone(url, first);
  CHECK(clone == (cache / evalrun::CacheFolderName(url)).string());
  CHECK(evalrun::CacheFolderName(url).rfind("tmp_", 0) == 0);
  CHECK(evalrun::OpenRevision(clone, first, "o")->commit() == first);
  CHECK(evalrun::OpenRevision(clone, "release", "o")->commit() == first);
  CHECK(evalrun::OpenRevision(clone, "HEAD", "o")->commit() == first);
  // The clone is bare: PATH@REV works on it as on a work tree.
  auto bare = evalrun::ResolveSuite(clone + "@release", {});
  CHECK(bare.commit == first);
  CHECK(bare.path == "");
  CHECK(bare.repo == clone);
  CHECK(bare.files->Read("suite/suite.yaml") == kSuiteV1);

  // A new commit, branch and tag in the origin: the cache lacks them until it fetches.
  const std::string second = origin.Commit({{"suite/suite.yaml", kSuiteV2}}, "second");
  origin.LightweightTag("v2", second);
  CHECK(Message([&] { evalrun::OpenRevision(clone, second, "o"); }) ==
        clone + ": unknown revision '" + second + "'");
  CHECK(evalrun::EnsureCachedClone(url, second) == clone);
  auto fetched = evalrun::OpenRevision(clone, second, "o");
  CHECK(fetched->commit() == second);
  CHECK(fetched->tree() == origin.TreeOf(second));
  CHECK(fetched->Read("suite/suite.yaml") == kSuiteV2);
  CHECK(evalrun::OpenRevision(clone, "v2", "o")->commit() == second);

  // A branch that moved in the origin is fetched again, since a ref may move.
  origin.Branch("release", second);
  evalrun::EnsureCachedClone(url, "release");
  CHECK(evalrun::OpenRevision(clone, "release", "o")->commit() == second);

  SECTION("through a registry entry with the file:// URL") {
    const fs::path file = env.home.path / "suites.yaml";
    WriteFile(file, "suites:\n  remote: {url: '" + url + "', path: suite}\n");
    ScopedEnv suites("EVALRUN_SUITES", file.string());
    auto suite = evalrun::ResolveSuite("remote@" + second.substr(0, 8), {});
    CHECK(suite.commit == second);
    CHECK(suite.repo == url);
    CHECK(suite.files->Read("suite/suite.yaml") == kSuiteV2);
    CHECK(Message([] { evalrun::ResolveSuite("remote@nope", {}); }) ==
          url + ": unknown revision 'nope'");
  }
  SECTION("offline: a cached ref is used, a missing one names the URL") {
    fs::remove_all(origin.dir());
    CHECK(evalrun::EnsureCachedClone(url, "release") == clone);
    CHECK(evalrun::EnsureCachedClone(url, second) == clone);
    const std::string error = Message([&] { evalrun::EnsureCachedClone(url, "nope"); });
    CHECK(error.rfind("cannot fetch " + url + ": ", 0) == 0);
    CHECK(error.find("(offline? --suite-repo PATH uses a local clone)") != std::string::npos);
  }
}

TEST_CASE("clone cache: an unreachable repository names the URL and leaves nothing behind",
          "[tasks][git]") {
  IsolatedEnv env;
  const std::string url = "file:///nonexistent/repo";
  CHECK(Message([&] { evalrun::EnsureCachedClone(url, "main"); }) ==
        "cannot fetch file:///nonexistent/repo: failed to resolve path "
        "'/nonexistent/repo': No such file or directory (offline? --suite-repo PATH uses a local "
        "clone)");
  CHECK(fs::is_empty(env.home.path / "cache"));

  const fs::path file = env.home.path / "suites.yaml";
  WriteFile(file, "suites:\n  gone: {url: '" + url + "'}\n");
  ScopedEnv suites("EVALRUN_SUITES", file.string());
  CHECK(Message([] { evalrun::ResolveSuite("gone@main", {}); }) ==
        "cannot fetch file:///nonexistent/repo: failed to resolve path "
        "'/nonexistent/repo': No such file or directory (offline? --suite-repo PATH uses a local "
        "clone)");
}

TEST_CASE("clone cache: folder names are readable and distinct", "[tasks][git]") {
  const std::string zx = evalrun::CacheFolderName("https://github.com/suncityldp/zx-bench");
  CHECK(zx.rfind("github.com_suncityldp_zx-bench-", 0) == 0);
  CHECK(zx.size() == std::string("github.com_suncityldp_zx-bench-").size() + 12);
  CHECK(evalrun::CacheFolderName("https://github.com/suncityldp/zx-bench.git") != zx);
  CHECK(evalrun::CacheFolderName("git@github.com:suncityldp/zx-bench.git")
            .rfind("git_github.com_suncityldp_zx-bench-", 0) == 0);
  CHECK(evalrun::CacheFolderName(std::string(200, 'a')).size() == 64 + 1 + 12);
}
