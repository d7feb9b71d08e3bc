// Repository workspaces with libgit2 (tasks/repo_workspace.h).
#include "tasks/repo_workspace.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>


#include "core/error.h"
#include "tasks/git_handles.h"
#include "tasks/git_source.h"

namespace evalrun {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using namespace git;  // tasks/git_handles.h

// --- Tree ids ---------------------------------------------------------------------------------

// A file reduced to what a tree entry needs.
struct Leaf {
  std::string path;  // relative to the folder being built
  git_oid blob;
  bool executable;
};

// Stores (or only hashes) one object and returns its id.
using PutObject = std::function<git_oid(git_object_t type, const std::string& bytes)>;

// The tree object of `leaves` (paths relative to this folder), built bottom-up through `put`.
git_oid BuildTree(const std::vector<Leaf>& leaves, const PutObject& put) {
  struct Item {
    std::string name;
    bool folder;
    git_oid id;
    bool executable;
  };
  std::map<std::string, std::vector<Leaf>> folders;
  std::vector<Item> items;
  for (const Leaf& leaf : leaves) {
    const size_t slash = leaf.path.find('/');
    if (slash == std::string::npos) {
      items.push_back({leaf.path, false, leaf.blob, leaf.executable});
    } else {
      folders[leaf.path.substr(0, slash)].push_back(
          {leaf.path.substr(slash + 1), leaf.blob, leaf.executable});
    }
  }
  for (const auto& [name, inside] : folders) items.push_back({name, true, BuildTree(inside, put), false});
  // git compares names as if a folder's ended in '/'.
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
    return (a.folder ? a.name + "/" : a.name) < (b.folder ? b.name + "/" : b.name);
  });
  std::string bytes;
  for (const Item& item : items) {
    bytes += item.folder ? "40000 " : item.executable ? "100755 " : "100644 ";
    bytes += item.name;
    bytes += '\0';
    bytes.append(reinterpret_cast<const char*>(item.id.id), GIT_OID_RAWSZ);
  }
  return put(GIT_OBJECT_TREE, bytes);
}

git_oid HashObject(git_object_t type, const std::string& bytes) {
  git_oid oid;
  if (git_odb_hash(&oid, bytes.data(), bytes.size(), type) != 0) {
    throw Error("cannot hash a git object: " + LastGitMessage());
  }
  return oid;
}

void CheckFiles(const std::vector<RepoFile>& files) {
  for (const RepoFile& file : files) {
    if (!IsCleanRepoPath(file.path)) {
      throw Error("repository file path '" + file.path + "' is not a clean relative path");
    }
  }
}

// --- Files on disk ----------------------------------------------------------------------------

// Removes a tree evalrun made, whatever the code in it did to permissions.
void RemoveTree(const fs::path& path) {
  std::error_code ec;
  if (fs::is_directory(fs::symlink_status(path, ec))) {
    chmod(path.c_str(), 0700);
    for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
      RemoveTree(it->path());
    }
  }
  fs::remove_all(path, ec);
}

// Refuses a workspace path evalrun must not write through: unclean, .git, or a symbolic link on
// the way (the agent's links must not steer a write made as evalrun's user). Creates the
// folders on the way.
fs::path SafeTarget(const fs::path& root, const std::string& relative, bool create_folders) {
  if (!IsCleanRepoPath(relative)) {
    throw Error("'" + relative + "' is not a clean path relative to the repository root");
  }
  if (relative == ".git" || relative.rfind(".git/", 0) == 0) {
    throw Error("'" + relative + "' is inside .git, which is read-only");
  }
  fs::path at = root;
  std::stringstream parts(relative);
  std::string part;
  std::vector<std::string> segments;
  while (std::getline(parts, part, '/')) segments.push_back(part);
  for (size_t i = 0; i + 1 < segments.size(); ++i) {
    at /= segments[i];
    std::error_code ec;
    const fs::file_status status = fs::symlink_status(at, ec);
    if (fs::is_symlink(status)) {
      throw Error("'" + relative + "' passes through the symbolic link '" +
                  fs::path(at).lexically_relative(root).generic_string() + "'");
    }
    if (!fs::exists(status)) {
      if (!create_folders) break;
      fs::create_directory(at, ec);
      if (ec) throw Error("cannot create the folder '" + at.string() + "': " + ec.message());
    } else if (!fs::is_directory(status)) {
      throw Error("'" + relative + "': '" + at.lexically_relative(root).generic_string() +
                  "' is a file, not a folder");
    }
  }
  return root / relative;
}

void WriteBytes(const fs::path& target, const std::string& content, bool executable) {
  std::error_code ec;
  if (fs::is_symlink(fs::symlink_status(target, ec))) fs::remove(target, ec);
  std::ofstream out(target, std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  out.close();
  if (!out) throw Error("cannot write '" + target.string() + "'");
  chmod(target.c_str(), executable ? 0755 : 0644);
}

const json& Field(const json& object, const char* key) {
  static const json kNull;
  if (!object.is_object()) return kNull;
  const auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

std::string StringField(const json& object, const char* key) {
  const json& value = Field(object, key);
  if (value.is_null()) return "";
  if (!value.is_string()) throw Error(std::string("agent: '") + key + "' must be a string");
  return value.get<std::string>();
}

std::vector<std::string> StringList(const json& object, const char* key) {
  const json& value = Field(object, key);
  std::vector<std::string> out;
  if (value.is_null()) return out;
  if (!value.is_array()) throw Error(std::string("agent: '") + key + "' must be a list");
  for (const auto& item : value) {
    if (!item.is_string()) throw Error(std::string("agent: '") + key + "' must hold strings");
    out.push_back(item.get<std::string>());
  }
  return out;
}

}  // namespace

bool IsCleanRepoPath(const std::string& relative) {
  if (relative.empty() || relative[0] == '/' || relative.back() == '/') return false;
  std::stringstream parts(relative);
  std::string part;
  while (std::getline(parts, part, '/')) {
    if (part.empty() || part == "." || part == "..") return false;
  }
  return true;
}

std::string GitTreeId(const std::vector<RepoFile>& files) {
  EnsureLibgit2();
  CheckFiles(files);
  std::vector<Leaf> leaves;
  for (const RepoFile& file : files) {
    leaves.push_back({file.path, HashObject(GIT_OBJECT_BLOB, file.content), file.executable});
  }
  return OidHex(BuildTree(leaves, HashObject));
}

RepoTask ParseRepoTask(const json& agent) {
  if (StringField(agent, "kind") != "repo") throw Error("agent: kind is not 'repo'");
  RepoTask task;
  const json& repo = Field(agent, "repo");
  task.path = StringField(repo, "path");
  task.url = StringField(repo, "url");
  task.base_commit = StringField(repo, "base_commit");
  task.base_tree = StringField(repo, "base_tree");
  for (const auto& file : Field(repo, "files")) {
    task.files.push_back({file.at("path").get<std::string>(), file.value("executable", false)});
  }
  task.setup = StringField(agent, "setup");
  task.test_cmd = StringField(agent, "test_cmd");
  if (Field(agent, "log_parser").is_string()) task.log_parser = StringField(agent, "log_parser");
  for (const auto& hidden : Field(agent, "hidden_tests")) {
    task.hidden_tests.push_back({hidden.at("from").get<std::string>(),
                                 hidden.at("to").get<std::string>()});
  }
  task.protected_paths = StringList(agent, "protected");
  task.fail_to_pass = StringList(agent, "fail_to_pass");
  task.pass_to_pass = StringList(agent, "pass_to_pass");
  task.gold_patch = StringField(agent, "gold_patch");
  const json& limits = Field(agent, "limits");
  if (limits.is_object()) {
    task.limits.steps = limits.value("steps", task.limits.steps);
    task.limits.tokens = limits.value("tokens", task.limits.tokens);
    task.limits.wall_s = limits.value("wall_s", task.limits.wall_s);
    task.limits.command_timeout_s = limits.value("command_timeout_s", task.limits.command_timeout_s);
    task.limits.observation_bytes = limits.value("observation_bytes", task.limits.observation_bytes);
  }
  if (Field(agent, "tools").is_array()) task.tools = StringList(agent, "tools");
  return task;
}

struct RepoWorkspace::Impl {
  std::string root;
  RepoPtr repo;
  TreePtr base;

  ~Impl() {
    base.reset();  // the tree belongs to the repository
    repo.reset();
    if (!root.empty()) RemoveTree(root);
  }
};

RepoWorkspace::RepoWorkspace(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RepoWorkspace::~RepoWorkspace() = default;

const std::string& RepoWorkspace::path() const { return impl_->root; }

std::unique_ptr<RepoWorkspace> RepoWorkspace::Create(const RepoTask& task,
                                                     const ReadSuiteFile& read_file) {
  EnsureLibgit2();
  auto impl = std::make_unique<Impl>();
  char pattern[] = "/tmp/evalrun-repo-XXXXXX";
  if (mkdtemp(pattern) == nullptr) throw Error("cannot create a temporary directory for the repository");
  impl->root = pattern;
  const std::string name = task.url.empty() ? task.path : task.url;
  const std::string where = "repository " + name + ": ";

  git_oid base_tree_id;
  if (task.url.empty()) {
    git_repository* raw = nullptr;
    git_repository_init_options init = GIT_REPOSITORY_INIT_OPTIONS_INIT;
    init.initial_head = "main";
    init.flags = GIT_REPOSITORY_INIT_MKPATH;
    if (git_repository_init_ext(&raw, impl->root.c_str(), &init) != 0) {
      throw Error(where + "cannot create a git repository: " + LastGitMessage());
    }
    impl->repo.reset(raw);
    git_odb* raw_odb = nullptr;
    if (git_repository_odb(&raw_odb, impl->repo.get()) != 0) throw Error(where + LastGitMessage());
    OdbPtr odb(raw_odb);
    const PutObject put = [&](git_object_t type, const std::string& bytes) {
      git_oid oid;
      if (git_odb_write(&oid, odb.get(), bytes.data(), bytes.size(), type) != 0) {
        throw Error(where + "cannot write a git object: " + LastGitMessage());
      }
      return oid;
    };
    std::vector<Leaf> leaves;
    for (const SuiteFileEntry& file : task.files) {
      const std::optional<std::string> bytes =
          read_file(task.path.empty() ? file.path : task.path + "/" + file.path);
      if (!bytes) throw Error(where + "file '" + file.path + "' cannot be read from the suite");
      leaves.push_back({file.path, put(GIT_OBJECT_BLOB, *bytes), file.executable});
    }
    base_tree_id = BuildTree(leaves, put);
    if (OidHex(base_tree_id) != task.base_tree) {
      throw Error(where + "its tree is " + OidHex(base_tree_id) + ", the task says " + task.base_tree);
    }
    git_tree* tree = nullptr;
    if (git_tree_lookup(&tree, impl->repo.get(), &base_tree_id) != 0) throw Error(where + LastGitMessage());
    impl->base.reset(tree);
    git_signature* sig = nullptr;
    if (git_signature_new(&sig, "evalrun", "evalrun@localhost", 946684800, 0) != 0) {
      throw Error(where + LastGitMessage());
    }
    SignaturePtr signature(sig);
    git_oid commit;
    if (git_commit_create(&commit, impl->repo.get(), "HEAD", signature.get(), signature.get(),
                          nullptr, "base\n", impl->base.get(), 0, nullptr) != 0) {
      throw Error(where + "cannot commit the base: " + LastGitMessage());
    }
  } else {
    const std::string cache = EnsureCachedClone(task.url, task.base_commit);
    git_repository* raw = nullptr;
    git_clone_options clone = GIT_CLONE_OPTIONS_INIT;
    clone.checkout_opts.checkout_strategy = GIT_CHECKOUT_NONE;
    if (git_clone(&raw, cache.c_str(), impl->root.c_str(), &clone) != 0) {
      throw Error(where + "cannot copy the cached clone " + cache + ": " + LastGitMessage());
    }
    impl->repo.reset(raw);
    git_oid commit_id;
    git_commit* commit_raw = nullptr;
    if (git_oid_fromstr(&commit_id, task.base_commit.c_str()) != 0 ||
        git_commit_lookup(&commit_raw, impl->repo.get(), &commit_id) != 0) {
      throw Error(where + "commit " + task.base_commit + " is not there");
    }
    CommitPtr commit(commit_raw);
    if (OidHex(*git_commit_id(commit.get())) != task.base_commit) {
      throw Error(where + "commit " + task.base_commit + " is not there");
    }
    base_tree_id = *git_commit_tree_id(commit.get());
    if (OidHex(base_tree_id) != task.base_tree) {
      throw Error(where + "commit " + task.base_commit + " has tree " + OidHex(base_tree_id) +
                  ", the task says " + task.base_tree);
    }
    git_tree* tree = nullptr;
    if (git_commit_tree(&tree, commit.get()) != 0) throw Error(where + LastGitMessage());
    impl->base.reset(tree);
    if (git_repository_set_head_detached(impl->repo.get(), &commit_id) != 0) {
      throw Error(where + "cannot move HEAD to the base: " + LastGitMessage());
    }
  }
  git_checkout_options checkout = GIT_CHECKOUT_OPTIONS_INIT;
  checkout.checkout_strategy = GIT_CHECKOUT_FORCE;
  if (git_checkout_head(impl->repo.get(), &checkout) != 0) {
    throw Error(where + "cannot check out the base: " + LastGitMessage());
  }
  std::ofstream exclude(fs::path(impl->root) / ".git" / "info" / "exclude", std::ios::app);
  exclude << "# evalrun: test runs' byproducts are not part of the agent's diff\n"
             "__pycache__/\n*.pyc\n.pytest_cache/\n";
  if (!exclude) throw Error(where + "cannot write .git/info/exclude");
  return std::make_unique<RepoWorkspace>(std::move(impl));
}

RepoDiff RepoWorkspace::Diff() const {
  // The agent may have left files or folders it made unreadable (chmod 000): give their owner
  // read (and folders search) back, links untouched, so the diff sees everything.
  std::error_code ec;
  fs::permissions(impl_->root, fs::perms::owner_read | fs::perms::owner_exec,
                  fs::perm_options::add, ec);
  for (auto it = fs::recursive_directory_iterator(impl_->root, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->path().filename() == ".git") {
      it.disable_recursion_pending();
      continue;
    }
    const fs::file_status status = it->symlink_status(ec);
    if (ec || fs::is_symlink(status)) continue;
    const fs::perms wanted = fs::is_directory(status)
                                 ? fs::perms::owner_read | fs::perms::owner_exec
                                 : fs::perms::owner_read;
    if ((status.permissions() & wanted) != wanted) {
      fs::permissions(it->path(), wanted, fs::perm_options::add | fs::perm_options::nofollow, ec);
    }
  }
  git_diff_options options = GIT_DIFF_OPTIONS_INIT;
  options.flags = GIT_DIFF_INCLUDE_UNTRACKED | GIT_DIFF_RECURSE_UNTRACKED_DIRS |
                  GIT_DIFF_SHOW_UNTRACKED_CONTENT | GIT_DIFF_INCLUDE_TYPECHANGE;
  git_diff* raw = nullptr;
  if (git_diff_tree_to_workdir(&raw, impl_->repo.get(), impl_->base.get(), &options) != 0) {
    throw Error("cannot compute the diff of " + impl_->root + ": " + LastGitMessage());
  }
  DiffPtr diff(raw);
  RepoDiff out;
  for (size_t i = 0, n = git_diff_num_deltas(diff.get()); i < n; ++i) {
    git_patch* patch_raw = nullptr;
    if (git_patch_from_diff(&patch_raw, diff.get(), i) != 0) {
      throw Error("cannot compute the diff of " + impl_->root + ": " + LastGitMessage());
    }
    PatchPtr patch(patch_raw);
    const git_diff_delta* delta = git_patch_get_delta(patch.get());
    const char* path = delta->new_file.path != nullptr ? delta->new_file.path : delta->old_file.path;
    if ((delta->flags & GIT_DIFF_FLAG_BINARY) != 0) {
      out.notes.push_back(std::string("binary file '") + path + "' left out of the diff");
      continue;
    }
    Buf text;
    if (git_patch_to_buf(&text.buf, patch.get()) != 0) {
      throw Error("cannot format the diff of " + impl_->root + ": " + LastGitMessage());
    }
    out.patch.append(text.buf.ptr, text.buf.size);
  }
  return out;
}

std::string RepoWorkspace::Apply(const std::string& patch) {
  if (patch.empty()) return "";
  git_diff* raw = nullptr;
  if (git_diff_from_buffer(&raw, patch.data(), patch.size()) != 0) {
    return "the diff cannot be read: " + LastGitMessage();
  }
  DiffPtr diff(raw);
  // A stored diff may come from someone else's bundle: every path it touches must stay inside the
  // repository and out of .git before libgit2 writes anything.
  for (size_t i = 0, n = git_diff_num_deltas(diff.get()); i < n; ++i) {
    const git_diff_delta* delta = git_diff_get_delta(diff.get(), i);
    for (const char* path : {delta->old_file.path, delta->new_file.path}) {
      if (path == nullptr) continue;
      const std::string text = path;
      if (!IsCleanRepoPath(text) || text == ".git" || text.rfind(".git/", 0) == 0) {
        return "the diff does not apply: it touches '" + text +
               "', outside the repository's files";
      }
    }
  }
  if (git_apply(impl_->repo.get(), diff.get(), GIT_APPLY_LOCATION_WORKDIR, nullptr) != 0) {
    return "the diff does not apply: " + LastGitMessage();
  }
  return "";
}

void RepoWorkspace::Restore(const std::string& relative) {
  const fs::path root(impl_->root);
  const fs::path target = SafeTarget(root, relative, false);
  std::error_code ec;
  if (fs::exists(fs::symlink_status(target, ec))) RemoveTree(target);
  git_tree_entry* raw = nullptr;
  if (git_tree_entry_bypath(&raw, impl_->base.get(), relative.c_str()) != 0) return;  // not in base
  TreeEntryPtr entry(raw);
  auto write_blob = [this](const std::string& path, const git_oid* id, git_filemode_t mode) {
    git_blob* blob_raw = nullptr;
    if (git_blob_lookup(&blob_raw, impl_->repo.get(), id) != 0) {
      throw Error("cannot read '" + path + "' from the base: " + LastGitMessage());
    }
    BlobPtr blob(blob_raw);
    const fs::path file = SafeTarget(fs::path(impl_->root), path, true);
    WriteBytes(file,
               std::string(static_cast<const char*>(git_blob_rawcontent(blob.get())),
                           static_cast<size_t>(git_blob_rawsize(blob.get()))),
               mode == GIT_FILEMODE_BLOB_EXECUTABLE);
  };
  const git_filemode_t mode = git_tree_entry_filemode(entry.get());
  if (mode == GIT_FILEMODE_BLOB || mode == GIT_FILEMODE_BLOB_EXECUTABLE) {
    write_blob(relative, git_tree_entry_id(entry.get()), mode);
    return;
  }
  if (mode != GIT_FILEMODE_TREE) return;
  git_tree* tree_raw = nullptr;
  if (git_tree_lookup(&tree_raw, impl_->repo.get(), git_tree_entry_id(entry.get())) != 0) {
    throw Error("cannot read '" + relative + "' from the base: " + LastGitMessage());
  }
  TreePtr tree(tree_raw);
  std::vector<std::tuple<std::string, git_oid, git_filemode_t>> blobs;
  git_tree_walk(
      tree.get(), GIT_TREEWALK_PRE,
      [](const char* folder, const git_tree_entry* e, void* payload) -> int {
        const git_filemode_t m = git_tree_entry_filemode(e);
        if (m == GIT_FILEMODE_BLOB || m == GIT_FILEMODE_BLOB_EXECUTABLE) {
          static_cast<std::vector<std::tuple<std::string, git_oid, git_filemode_t>>*>(payload)
              ->emplace_back(std::string(folder) + git_tree_entry_name(e), *git_tree_entry_id(e), m);
        }
        return 0;
      },
      &blobs);
  for (const auto& [path, id, m] : blobs) write_blob(relative + "/" + path, &id, m);
}

void RepoWorkspace::WriteFile(const std::string& relative, const std::string& content) {
  const fs::path target = SafeTarget(fs::path(impl_->root), relative, true);
  std::error_code ec;
  const fs::file_status status = fs::symlink_status(target, ec);
  if (fs::is_directory(status)) throw Error("'" + relative + "' is a folder");
  // An existing file keeps its mode.
  const bool executable = fs::is_regular_file(status) &&
                          (status.permissions() & fs::perms::owner_exec) != fs::perms::none;
  WriteBytes(target, content, executable);
}

}  // namespace evalrun
