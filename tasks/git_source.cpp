#include "tasks/git_source.h"

#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <set>
#include <system_error>

#include "core/error.h"
#include "core/sha256.h"
#include "tasks/git_handles.h"
#include "tasks/shipped_suites.h"

namespace evalrun {
namespace {

namespace fs = std::filesystem;

// Where zx-bench keeps its bank inside its repository (plugins/zxbench_importer.h says the same;
// tasks/ may not include plugins/).
constexpr const char* kZxBankPath = "data/scenarios/benchmark.json";

using namespace git;  // tasks/git_handles.h

std::string EnvOr(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value && *value ? std::string(value) : fallback;
}

std::string JoinPath(const std::string& dir, const std::string& name) {
  if (dir.empty()) return name;
  if (name.empty()) return dir;
  return dir + "/" + name;
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A URL (scheme://... or scp-like user@host:path) rather than a path on this machine.
bool LooksLikeUrl(const std::string& url) {
  if (url.find("://") != std::string::npos) return true;
  const size_t at = url.find('@');
  const size_t colon = url.find(':');
  const size_t slash = url.find('/');
  return at != std::string::npos && colon != std::string::npos && at < colon &&
         (slash == std::string::npos || colon < slash);
}

// `path` as a tree path: "./a//b/" -> "a/b", "." -> "" (the root); nullopt when it is absolute or
// climbs out of the root.
std::optional<std::string> TreePath(const std::string& path) {
  if (path.empty()) return std::string();
  if (path.front() == '/') return std::nullopt;
  std::string normal = fs::path(path).lexically_normal().generic_string();
  while (!normal.empty() && normal.back() == '/') normal.pop_back();
  if (normal == ".") normal.clear();
  if (normal == ".." || normal.rfind("../", 0) == 0) return std::nullopt;
  return normal;
}

bool IsLocalDirectory(const std::string& url) {
  std::error_code error;
  return !url.empty() && !LooksLikeUrl(url) && fs::is_directory(url, error);
}

}  // namespace

// ---- GitTreeFiles ---------------------------------------------------------------------------

struct GitTreeFiles::Impl {
  RepoPtr repo;
  CommitPtr commit;
  TreePtr tree;
  std::string commit_hex;
  std::string tree_hex;
  std::string describe;
  // A git_repository may not be used from several threads at once; loaders are free to.
  mutable std::mutex mutex;

  // The entry at `path` ("" has none: it is the root), following symbolic links inside the
  // tree the way the file system would, so DiskFiles and GitTreeFiles read the same folder alike.
  // A link that leaves the tree or loops resolves to nothing.
  TreeEntryPtr Entry(const std::string& given, int links_left = 8) const {
    const std::optional<std::string> path = TreePath(given);
    if (!path || path->empty()) return nullptr;
    git_tree_entry* raw = nullptr;
    if (git_tree_entry_bypath(&raw, tree.get(), path->c_str()) != 0) return nullptr;
    TreeEntryPtr entry(raw);
    if (git_tree_entry_filemode(entry.get()) != GIT_FILEMODE_LINK) return entry;
    if (links_left == 0) return nullptr;
    auto target = ReadBlob(git_tree_entry_id(entry.get()));
    if (!target || target->empty() || target->front() == '/') return nullptr;
    const std::string folder = fs::path(*path).parent_path().generic_string();
    return Entry(JoinPath(folder, *target), links_left - 1);
  }

  std::optional<std::string> ReadBlob(const git_oid* id) const {
    git_blob* raw = nullptr;
    if (git_blob_lookup(&raw, repo.get(), id) != 0) return std::nullopt;
    BlobPtr blob(raw);
    const auto* bytes = static_cast<const char*>(git_blob_rawcontent(blob.get()));
    return std::string(bytes, static_cast<size_t>(git_blob_rawsize(blob.get())));
  }

  // The tree of folder `dir` ("" = the root), or null when there is no such folder.
  TreePtr Folder(const std::string& dir) const {
    git_tree* raw = nullptr;
    const std::optional<std::string> path = TreePath(dir);
    if (!path) return nullptr;
    if (path->empty()) {
      if (git_tree_dup(&raw, tree.get()) != 0) return nullptr;
      return TreePtr(raw);
    }
    TreeEntryPtr entry = Entry(dir);
    if (!entry || git_tree_entry_type(entry.get()) != GIT_OBJECT_TREE) return nullptr;
    if (git_tree_lookup(&raw, repo.get(), git_tree_entry_id(entry.get())) != 0) return nullptr;
    return TreePtr(raw);
  }
};

GitTreeFiles::GitTreeFiles(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GitTreeFiles::~GitTreeFiles() = default;

std::optional<std::string> GitTreeFiles::Read(const std::string& path) const {
  std::lock_guard lock(impl_->mutex);
  TreeEntryPtr entry = impl_->Entry(path);
  if (!entry || git_tree_entry_type(entry.get()) != GIT_OBJECT_BLOB) return std::nullopt;
  return impl_->ReadBlob(git_tree_entry_id(entry.get()));
}

std::vector<std::string> GitTreeFiles::List(const std::string& dir) const {
  std::lock_guard lock(impl_->mutex);
  std::vector<std::string> out;
  TreePtr folder = impl_->Folder(dir);
  if (!folder) return out;
  const std::string prefix = TreePath(dir).value_or("");
  for (size_t i = 0, n = git_tree_entrycount(folder.get()); i < n; ++i) {
    const git_tree_entry* entry = git_tree_entry_byindex(folder.get(), i);
    const std::string path = JoinPath(prefix, git_tree_entry_name(entry));
    const git_filemode_t mode = git_tree_entry_filemode(entry);
    if (mode == GIT_FILEMODE_BLOB || mode == GIT_FILEMODE_BLOB_EXECUTABLE) {
      out.push_back(path);
    } else if (mode == GIT_FILEMODE_LINK) {
      TreeEntryPtr target = impl_->Entry(path);
      if (target && git_tree_entry_type(target.get()) == GIT_OBJECT_BLOB) out.push_back(path);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<SuiteFileEntry> GitTreeFiles::ListTree(const std::string& dir) const {
  std::lock_guard lock(impl_->mutex);
  std::vector<SuiteFileEntry> out;
  TreePtr folder = impl_->Folder(dir);
  if (!folder) return out;
  struct Walk {
    std::string prefix;
    std::vector<SuiteFileEntry>* out;
  } walk{TreePath(dir).value_or(""), &out};
  // Pre-order walk; `root` is the entry's folder relative to `folder` ("" or "a/b/").
  git_tree_walk(
      folder.get(), GIT_TREEWALK_PRE,
      [](const char* root, const git_tree_entry* entry, void* payload) -> int {
        auto* w = static_cast<Walk*>(payload);
        const git_filemode_t mode = git_tree_entry_filemode(entry);
        if (mode == GIT_FILEMODE_BLOB || mode == GIT_FILEMODE_BLOB_EXECUTABLE) {
          w->out->push_back({JoinPath(w->prefix, std::string(root) + git_tree_entry_name(entry)),
                             mode == GIT_FILEMODE_BLOB_EXECUTABLE});
        }
        return 0;
      },
      &walk);
  std::sort(out.begin(), out.end(),
            [](const SuiteFileEntry& a, const SuiteFileEntry& b) { return a.path < b.path; });
  return out;
}

bool GitTreeFiles::IsFile(const std::string& path) const {
  std::lock_guard lock(impl_->mutex);
  TreeEntryPtr entry = impl_->Entry(path);
  return entry && git_tree_entry_type(entry.get()) == GIT_OBJECT_BLOB;
}

bool GitTreeFiles::IsFolder(const std::string& path) const {
  std::lock_guard lock(impl_->mutex);
  return impl_->Folder(path) != nullptr;
}

std::string GitTreeFiles::Describe() const {
  return impl_->describe;
}
const std::string& GitTreeFiles::commit() const {
  return impl_->commit_hex;
}
const std::string& GitTreeFiles::tree() const {
  return impl_->tree_hex;
}

// ---- Opening a revision ---------------------------------------------------------------------

namespace {

// Resolves `rev` in an open repository. `label` names the repository in errors (its path, or
// the URL a cached clone came from).
std::unique_ptr<GitTreeFiles> OpenAt(RepoPtr repo, const std::string& rev,
                                     const std::string& describe_as, const std::string& label) {
  git_object* raw = nullptr;
  const int found =
      rev.empty() ? GIT_ENOTFOUND : git_revparse_single(&raw, repo.get(), rev.c_str());
  ObjectPtr object(raw);
  if (found == GIT_EAMBIGUOUS) {
    throw Error(label + ": ambiguous short id '" + rev +
                "': it matches more than one object; give more characters");
  }
  if (found == GIT_ENOTFOUND || found == GIT_EINVALIDSPEC) {
    throw Error(label + ": unknown revision '" + rev + "'");
  }
  if (found != 0) throw Error(label + ": cannot resolve '" + rev + "': " + LastGitMessage());

  git_object* peeled = nullptr;
  if (git_object_peel(&peeled, object.get(), GIT_OBJECT_COMMIT) != 0) {
    throw Error(label + ": revision '" + rev + "' is a " +
                git_object_type2string(git_object_type(object.get())) + ", not a commit");
  }
  auto impl = std::make_unique<GitTreeFiles::Impl>();
  impl->commit.reset(reinterpret_cast<git_commit*>(peeled));
  git_tree* tree = nullptr;
  if (git_commit_tree(&tree, impl->commit.get()) != 0) {
    throw Error(label + ": cannot read the tree of commit " +
                OidHex(*git_commit_id(impl->commit.get())) + ": " + LastGitMessage());
  }
  impl->tree.reset(tree);
  impl->repo = std::move(repo);
  impl->commit_hex = OidHex(*git_commit_id(impl->commit.get()));
  impl->tree_hex = OidHex(*git_tree_id(impl->tree.get()));
  impl->describe =
      (describe_as.empty() ? label : describe_as) + "@" + impl->commit_hex.substr(0, 8);
  return std::make_unique<GitTreeFiles>(std::move(impl));
}

// Opens the repository at or above `path` (a work tree, a folder inside one, or a bare
// repository). Null with libgit2's code in `code` when it fails.
RepoPtr OpenRepository(const std::string& path, int* code) {
  git_repository* raw = nullptr;
  *code = git_repository_open_ext(&raw, path.c_str(), 0, nullptr);
  return RepoPtr(raw);
}

RepoPtr OpenRepositoryOrThrow(const std::string& repo_path) {
  int code = 0;
  RepoPtr repo = OpenRepository(repo_path, &code);
  if (code == GIT_ENOTFOUND) throw Error(repo_path + ": not a git repository");
  if (code != 0) throw Error(repo_path + ": " + LastGitMessage());
  return repo;
}

}  // namespace

std::unique_ptr<GitTreeFiles> OpenRevision(const std::string& repo_path, const std::string& rev,
                                           const std::string& describe_as) {
  EnsureLibgit2();
  return OpenAt(OpenRepositoryOrThrow(repo_path), rev, describe_as, repo_path);
}

// ---- The clone cache ------------------------------------------------------------------------

namespace {

fs::path CacheRoot() {
  const std::string explicit_root = EnvOr("EVALRUN_CACHE", "");
  if (!explicit_root.empty()) return explicit_root;
  const std::string home = EnvOr("HOME", "");
  if (home.empty()) throw Error("no place for the repository cache: set EVALRUN_CACHE or HOME");
  return fs::path(home) / ".cache" / "evalrun" / "repos";
}

}  // namespace

std::string CacheFolderName(const std::string& url) {
  std::string name = url;
  if (const size_t scheme = name.find("://"); scheme != std::string::npos) {
    name = name.substr(scheme + 3);
  }
  while (!name.empty() && name.back() == '/') name.pop_back();
  if (EndsWith(name, ".git")) name.resize(name.size() - 4);
  for (char& c : name) {
    const bool keep = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-';
    if (!keep) c = '_';
  }
  name.erase(0, name.find_first_not_of("._-"));
  if (name.size() > 64) name = name.substr(name.size() - 64);  // the end names the repository
  if (name.empty()) name = "repo";
  return name + "-" + Sha256Hex(url).substr(0, 12);
}

namespace {

Error CannotFetch(const std::string& url, const std::string& why) {
  return Error("cannot fetch " + url + ": " + why +
               " (offline? --suite-repo PATH uses a local clone)");
}

// Fetches every branch and tag of origin into the same names here (a mirror of heads and tags:
// `zx-bench@main` then means origin's main as of the last fetch), and points HEAD at origin's
// default branch so `NAME@HEAD` works too.
void FetchOrigin(git_repository* repo, const std::string& url) {
  git_remote* raw = nullptr;
  if (git_remote_lookup(&raw, repo, "origin") != 0) throw CannotFetch(url, LastGitMessage());
  RemotePtr remote(raw);
  git_fetch_options options;
  git_fetch_options_init(&options, GIT_FETCH_OPTIONS_VERSION);
  options.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_ALL;
  if (git_remote_connect(remote.get(), GIT_DIRECTION_FETCH, &options.callbacks, &options.proxy_opts,
                         nullptr) != 0 ||
      git_remote_download(remote.get(), nullptr, &options) != 0 ||
      git_remote_update_tips(remote.get(), &options.callbacks, 0, GIT_REMOTE_DOWNLOAD_TAGS_ALL,
                             "evalrun fetch") != 0) {
    throw CannotFetch(url, LastGitMessage());
  }
  Buf head;
  if (git_remote_default_branch(&head.buf, remote.get()) == 0) {
    git_repository_set_head(repo, head.str().c_str());  // best effort: HEAD is a convenience
  }
  git_remote_disconnect(remote.get());
}

// Whether `rev` should be fetched before use: it does not resolve to a commit here, or it names a
// ref (which may have moved) rather than a commit id.
bool WantsFetch(git_repository* repo, const std::string& rev) {
  git_object* raw = nullptr;
  const int found = git_revparse_single(&raw, repo, rev.c_str());
  ObjectPtr object(raw);
  if (found == GIT_EAMBIGUOUS) return false;  // more objects will not make it less ambiguous
  if (found != 0) return true;
  git_object* peeled = nullptr;
  if (git_object_peel(&peeled, object.get(), GIT_OBJECT_COMMIT) != 0) return true;
  ObjectPtr commit(peeled);
  std::string lower = rev;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return OidHex(*git_object_id(commit.get())).rfind(lower, 0) != 0;
}

void CloneInto(const fs::path& dir, const std::string& url) {
  git_repository* raw = nullptr;
  if (git_repository_init(&raw, dir.c_str(), /*is_bare=*/1) != 0) {
    throw Error("cannot create " + dir.string() + ": " + LastGitMessage() +
                " (EVALRUN_CACHE sets another place for the repository cache)");
  }
  RepoPtr repo(raw);
  git_remote* remote = nullptr;
  if (git_remote_create_with_fetchspec(&remote, repo.get(), "origin", url.c_str(),
                                       "+refs/heads/*:refs/heads/*") != 0) {
    throw CannotFetch(url, LastGitMessage());
  }
  RemotePtr owned(remote);
  if (git_remote_add_fetch(repo.get(), "origin", "+refs/tags/*:refs/tags/*") != 0) {
    throw CannotFetch(url, LastGitMessage());
  }
  FetchOrigin(repo.get(), url);
}

}  // namespace

namespace {

// The process's mirror table and network permission (SetRepoMirrors, SetNetworkAllowed): set
// once by the command line before any work starts, read by every clone.
struct RepoAccess {
  std::mutex mutex;
  std::map<std::string, std::string> mirrors;
  bool network = true;
  std::string offline_hint;
};

RepoAccess& Access() {
  static RepoAccess access;
  return access;
}

std::string TrimUrl(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  if (EndsWith(url, ".git")) url.resize(url.size() - 4);
  return url;
}

bool IsRepository(const fs::path& path) {
  git_repository* raw = nullptr;
  if (git_repository_open_ext(&raw, path.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr) != 0) {
    return false;
  }
  git_repository_free(raw);
  return true;
}

}  // namespace

void SetRepoMirrors(const std::map<std::string, std::string>& mirrors) {
  std::lock_guard lock(Access().mutex);
  Access().mirrors.clear();
  for (const auto& [url, path] : mirrors) Access().mirrors[TrimUrl(url)] = path;
}

std::map<std::string, std::string> ParseRepoMirrors(const std::vector<std::string>& values) {
  std::map<std::string, std::string> out;
  for (const std::string& value : values) {
    const size_t scheme = value.find("://");
    const size_t eq = value.find('=', scheme == std::string::npos ? 0 : scheme + 3);
    if (eq == std::string::npos || eq == 0 || eq + 1 == value.size()) {
      throw Error("--repo-mirror '" + value +
                  "': expected URL=PATH, e.g. https://github.com/o/r=/srv/mirrors/r.git");
    }
    std::error_code error;
    const fs::path path = fs::absolute(value.substr(eq + 1), error);
    out[value.substr(0, eq)] = path.lexically_normal().string();
  }
  return out;
}

void SetNetworkAllowed(bool allowed, const std::string& hint) {
  std::lock_guard lock(Access().mutex);
  Access().network = allowed;
  Access().offline_hint = hint;
}

std::optional<std::string> FindRepoMirror(const std::string& url) {
  std::map<std::string, std::string> mirrors;
  {
    std::lock_guard lock(Access().mutex);
    mirrors = Access().mirrors;
  }
  const std::string key = TrimUrl(url);
  if (const auto it = mirrors.find(key); it != mirrors.end()) {
    if (!IsRepository(it->second)) {
      throw Error("--repo-mirror " + url + "=" + it->second + ": not a git repository");
    }
    return it->second;
  }
  const std::string folder = EnvOr("EVALRUN_REPO_MIRRORS", "");
  if (folder.empty()) return std::nullopt;
  // The cache's own name first (a copied cache folder is a mirror folder), then the URL's last
  // part, with and without ".git".
  const std::string base = fs::path(key).filename().string();
  for (const std::string& name : {CacheFolderName(url), base + ".git", base}) {
    const fs::path candidate = fs::path(folder) / name;
    std::error_code error;
    if (!name.empty() && fs::is_directory(candidate, error) && IsRepository(candidate)) {
      return candidate.string();
    }
  }
  return std::nullopt;
}

std::string EnsureCachedClone(const std::string& url, const std::string& rev) {
  EnsureLibgit2();
  if (const std::optional<std::string> mirror = FindRepoMirror(url)) return *mirror;
  bool network = true;
  std::string hint;
  {
    std::lock_guard lock(Access().mutex);
    network = Access().network;
    hint = Access().offline_hint;
  }
  const fs::path root = CacheRoot();
  std::error_code error;
  fs::create_directories(root, error);
  if (error) {
    throw Error("cannot create the repository cache " + root.string() + ": " + error.message() +
                " (EVALRUN_CACHE sets another place)");
  }
  const std::string name = CacheFolderName(url);
  const fs::path dir = root / name;

  if (!fs::exists(dir, error)) {
    if (!network) {
      throw Error("cannot fetch " + url + ": not in the repository cache (" + dir.string() +
                  ") and this command does not use the network" + hint);
    }
    // Clone beside it and rename into place, so an interrupted clone never looks like a clone
    // and two processes cloning at once both end with one good copy.
    const fs::path partial = root / (name + ".partial-" + std::to_string(getpid()));
    fs::remove_all(partial, error);
    try {
      CloneInto(partial, url);
    } catch (...) {
      fs::remove_all(partial, error);
      throw;
    }
    fs::rename(partial, dir, error);
    if (error) fs::remove_all(partial, error);  // another process won the race: use its copy
    return dir.string();
  }

  git_repository* raw = nullptr;
  if (git_repository_open_bare(&raw, dir.c_str()) != 0) {
    throw Error(dir.string() + ": the cached clone of " + url + " cannot be opened (" +
                LastGitMessage() + "); delete the folder to clone it again");
  }
  RepoPtr repo(raw);
  if (!WantsFetch(repo.get(), rev)) return dir.string();
  if (!network) {
    git_object* object = nullptr;
    const int found = git_revparse_single(&object, repo.get(), rev.c_str());
    ObjectPtr owned(object);
    if (found == 0) return dir.string();  // a ref as last fetched: the commit is recorded
    throw Error("cannot fetch " + url + ": '" + rev + "' is not in the repository cache (" +
                dir.string() + ") and this command does not use the network" + hint);
  }
  try {
    FetchOrigin(repo.get(), url);
  } catch (const Error&) {
    // Offline with a ref that is already here: use it. The run records the commit it resolved
    // to, so the result stays pinned and honest.
    git_object* object = nullptr;
    const int found = git_revparse_single(&object, repo.get(), rev.c_str());
    ObjectPtr owned(object);
    if (found != 0) throw;
  }
  return dir.string();
}

// ---- The registry ---------------------------------------------------------------------------

namespace {

std::string At(const std::string& file, const YAML::Mark& mark) {
  if (mark.is_null()) return file + ": ";
  return file + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1) + ": ";
}

std::string Hint(const std::string& word, const std::vector<std::string>& candidates) {
  const std::string best = ClosestMatch(word, candidates);
  return best.empty() ? "" : ", did you mean '" + best + "'?";
}

// A scalar's text, or an Error when the node is a sequence or mapping.
std::string ScalarText(const YAML::Node& node, const std::string& file, const std::string& what) {
  if (!node.IsScalar()) throw Error(At(file, node.Mark()) + what + " must be a string");
  return node.Scalar();
}

// A url that is a relative local path is relative to the registry file; "~/" is $HOME.
std::string ResolveLocalUrl(const std::string& url, const std::string& file) {
  if (url.empty() || LooksLikeUrl(url)) return url;
  if (url.rfind("~/", 0) == 0) return EnvOr("HOME", "~") + url.substr(1);
  if (fs::path(url).is_absolute()) return url;
  return (fs::path(file).parent_path() / url).lexically_normal().string();
}

std::vector<RegistryEntry> ParseRegistryFile(const std::string& file) {
  YAML::Node document;
  try {
    document = YAML::LoadFile(file);
  } catch (const YAML::BadFile&) {
    throw Error(file + ": cannot read the suite registry");
  } catch (const YAML::ParserException& e) {
    throw Error(At(file, e.mark) + e.msg);
  }
  std::vector<RegistryEntry> entries;
  if (!document || document.IsNull()) return entries;
  if (!document.IsMap()) {
    throw Error(At(file, document.Mark()) + "the suite registry must be a mapping with 'suites'");
  }
  for (auto top = document.begin(); top != document.end(); ++top) {
    const std::string key = top->first.Scalar();
    if (key != "suites") {
      const std::string hint = Hint(key, {"suites"});
      throw Error(At(file, top->first.Mark()) + "unknown key '" + key + "'" +
                  (hint.empty() ? " (the registry has only 'suites')" : hint));
    }
    const YAML::Node suites = top->second;  // a copy: `it->` is a temporary proxy
    if (suites.IsNull()) continue;
    if (!suites.IsMap()) {
      throw Error(At(file, suites.Mark()) + "'suites' must be a mapping of suite names");
    }
    std::set<std::string> seen;
    for (auto it = suites.begin(); it != suites.end(); ++it) {
      RegistryEntry entry;
      entry.name = ScalarText(it->first, file, "a suite name");
      entry.format = "evalrun";
      entry.origin = file;
      const std::string where = At(file, it->first.Mark());
      if (entry.name.empty() || entry.name.find_first_of("@/ \t") != std::string::npos) {
        throw Error(where + "suite name '" + entry.name +
                    "' must be non-empty, without '@', '/' or spaces");
      }
      if (!seen.insert(entry.name).second) {
        throw Error(where + "suite '" + entry.name + "' is listed twice");
      }
      const YAML::Node body = it->second;
      if (!body.IsMap()) {
        throw Error(At(file, body.Mark()) + "suite '" + entry.name +
                    "' must be a mapping with url, format and path");
      }
      bool has_url = false;
      for (auto field = body.begin(); field != body.end(); ++field) {
        const std::string name = ScalarText(field->first, file, "a key");
        const std::string what = "suite '" + entry.name + "': '" + name + "'";
        const YAML::Node value = field->second;
        if (name == "url") {
          entry.url = ResolveLocalUrl(ScalarText(value, file, what), file);
          has_url = !entry.url.empty();
        } else if (name == "path") {
          entry.path = value.IsNull() ? "" : ScalarText(value, file, what);
          while (!entry.path.empty() && entry.path.back() == '/') entry.path.pop_back();
        } else if (name == "format") {
          entry.format = ScalarText(value, file, what);
          if (entry.format != "evalrun" && entry.format != "zxbench") {
            throw Error(At(file, value.Mark()) + "suite '" + entry.name + "': unknown format '" +
                        entry.format + "'" + Hint(entry.format, {"evalrun", "zxbench"}) +
                        " (formats: evalrun, zxbench)");
          }
        } else {
          const std::string hint = Hint(name, {"url", "format", "path"});
          throw Error(At(file, field->first.Mark()) + "suite '" + entry.name + "': unknown key '" +
                      name + "'" + (hint.empty() ? " (keys: url, format, path)" : hint));
        }
      }
      if (!has_url) {
        throw Error(where + "suite '" + entry.name +
                    "': missing 'url' (a git URL or a local repository path)");
      }
      entries.push_back(std::move(entry));
    }
  }
  return entries;
}

}  // namespace

std::string RegistryFilePath() {
  const std::string explicit_path = EnvOr("EVALRUN_SUITES", "");
  if (!explicit_path.empty()) return explicit_path;
  const std::string home = EnvOr("HOME", "");
  if (home.empty()) return "";
  return (fs::path(home) / ".config" / "evalrun" / "suites.yaml").string();
}

std::vector<RegistryEntry> LoadRegistry() {
  std::vector<RegistryEntry> entries = {
      {"zx-bench", "https://github.com/suncityldp/zx-bench", "zxbench", kZxBankPath, "built-in"},
  };
  const std::string file = RegistryFilePath();
  std::error_code error;
  if (file.empty() || !fs::exists(file, error)) return entries;
  for (RegistryEntry& entry : ParseRegistryFile(file)) {
    auto same = std::find_if(entries.begin(), entries.end(),
                             [&](const RegistryEntry& e) { return e.name == entry.name; });
    if (same != entries.end()) {
      *same = std::move(entry);  // the user's file may point a built-in name elsewhere
    } else {
      entries.push_back(std::move(entry));
    }
  }
  return entries;
}

// ---- Resolution -----------------------------------------------------------------------------

SuiteSpec ParseSuiteSpec(const std::string& spec) {
  const size_t at = spec.rfind('@');
  if (at == std::string::npos) return {spec, ""};
  return {spec.substr(0, at), spec.substr(at + 1)};
}

namespace {

struct Located {
  std::string format;
  std::string path;
};

// Decides the format and the path to load from what is at `path`: a zx-bench bank file, a folder
// holding one at data/scenarios/benchmark.json, a suite.yaml (its folder is the suite), or a
// folder of evalrun YAML. `is_file` and `is_bank_folder` look at the place being resolved.
template <typename IsFile>
Located Locate(const std::string& path, const std::string& describe, IsFile is_file) {
  if (!path.empty() && is_file(path)) {
    if (EndsWith(path, "benchmark.json")) return {"zxbench", path};
    if (fs::path(path).filename() == "suite.yaml") {
      return {"evalrun", fs::path(path).parent_path().generic_string()};
    }
    throw Error(describe + ": '" + path +
                "' is a file: give the suite's folder (the one with suite.yaml) or a zx-bench "
                "benchmark.json");
  }
  const std::string bank = JoinPath(path, kZxBankPath);
  if (is_file(bank)) return {"zxbench", bank};
  return {"evalrun", path};
}

ResolvedSuite FromRevision(std::unique_ptr<GitTreeFiles> files, const std::string& path,
                           const std::string& format, const std::string& repo) {
  if (!path.empty() && !files->IsFile(path) && !files->IsFolder(path)) {
    throw Error(files->Describe() + ": no '" + path + "' at commit " +
                files->commit().substr(0, 12));
  }
  ResolvedSuite out;
  out.commit = files->commit();
  out.tree = files->tree();
  out.repo = repo;
  out.path = path;
  out.format = format;
  out.files = std::move(files);
  return out;
}

ResolvedSuite ResolveRegistered(const RegistryEntry& entry, const std::string& rev,
                                const ResolveOptions& options) {
  std::string local;  // the repository opened here
  std::string label;  // how errors and the record name it
  if (!options.suite_repo.empty()) {
    local = label = options.suite_repo;
  } else if (IsLocalDirectory(entry.url)) {
    local = label = entry.url;
  } else if (entry.url.empty()) {
    throw Error("suite '" + entry.name + "' has no repository URL: give --suite-repo PATH");
  } else {
    local = EnsureCachedClone(entry.url, rev);
    label = entry.url;
  }
  int code = 0;
  RepoPtr repo = OpenRepository(local, &code);
  if (code == GIT_ENOTFOUND) throw Error(label + ": not a git repository");
  if (code != 0) throw Error(label + ": " + LastGitMessage());
  return FromRevision(OpenAt(std::move(repo), rev, entry.name, label), entry.path, entry.format,
                      label);
}

ResolvedSuite ResolvePathAtRevision(const std::string& given, const std::string& rev) {
  std::error_code error;
  const fs::path place = fs::weakly_canonical(fs::absolute(given), error);
  const fs::path start = fs::is_directory(place, error) ? place : place.parent_path();
  int code = 0;
  RepoPtr repo = OpenRepository(start.string(), &code);
  if (code == GIT_ENOTFOUND) {
    throw Error("'" + given + "' is not inside a git repository (without @" + rev +
                " it is read from disk, unpinned)");
  }
  if (code != 0) throw Error(given + ": " + LastGitMessage());
  const char* workdir = git_repository_workdir(repo.get());
  fs::path root = workdir ? workdir : git_repository_path(repo.get());
  root = fs::weakly_canonical(root, error);
  std::string relative = place.lexically_relative(root).generic_string();
  if (relative == ".") relative.clear();
  const std::string label = root.string();
  auto files = OpenAt(std::move(repo), rev, label, label);
  const GitTreeFiles& view = *files;
  const Located located =
      Locate(relative, files->Describe(), [&](const std::string& p) { return view.IsFile(p); });
  return FromRevision(std::move(files), located.path, located.format, label);
}

ResolvedSuite ResolveDiskPath(const std::string& given) {
  std::error_code error;
  fs::path root = given;
  std::string path;
  if (!fs::is_directory(given, error)) {
    root = fs::path(given).parent_path();
    if (root.empty()) root = ".";
    path = fs::path(given).filename().string();
  }
  const fs::path base = root;
  const Located located = Locate(path, given, [&](const std::string& p) {
    std::error_code e;
    return fs::is_regular_file(base / p, e);
  });
  ResolvedSuite out;
  out.files = std::make_unique<DiskFiles>(root.string());
  out.format = located.format;
  out.path = located.path;
  return out;
}

Error UnknownSuite(const std::string& name, const std::vector<RegistryEntry>& registry) {
  std::vector<std::string> names = ShippedSuiteNames();
  for (const RegistryEntry& entry : registry) names.push_back(entry.name);
  const std::string best = ClosestMatch(name, names);
  if (!best.empty()) {
    return Error("unknown suite '" + name + "', did you mean '" + best +
                 "'? (evalrun suites lists them)");
  }
  return Error("unknown suite '" + name +
               "': not a registered name or an existing path (evalrun suites lists them)");
}

}  // namespace

ResolvedSuite ResolveSuite(const std::string& spec, const ResolveOptions& options) {
  EnsureLibgit2();
  const SuiteSpec parsed = ParseSuiteSpec(spec);
  const std::vector<RegistryEntry> registry = LoadRegistry();
  const auto registered = [&](const std::string& name) -> const RegistryEntry* {
    for (const RegistryEntry& entry : registry) {
      if (entry.name == name) return &entry;
    }
    return nullptr;
  };
  std::error_code error;
  const bool whole_exists = !spec.empty() && fs::exists(spec, error);

  if (parsed.rev.empty() && !whole_exists) {
    if (spec.find('@') != std::string::npos) {
      throw Error("suite '" + spec + "': nothing after '@': give a revision, e.g. " +
                  parsed.name_or_path + "@<commit>");
    }
    if (registered(spec)) {
      throw Error("suite '" + spec + "' is a registered name: give a revision, e.g. " + spec +
                  "@<commit>");
    }
    const std::string shipped = ShippedSuitePath(spec);
    if (!shipped.empty()) return ResolveDiskPath(shipped);
    throw UnknownSuite(spec, registry);
  }
  const RegistryEntry* entry = parsed.rev.empty() ? nullptr : registered(parsed.name_or_path);
  if (!entry && !options.suite_repo.empty()) {
    throw Error("--suite-repo applies to a registered suite name (NAME@REV), not to '" + spec +
                "'");
  }
  if (entry) return ResolveRegistered(*entry, parsed.rev, options);
  if (!parsed.rev.empty() && !parsed.name_or_path.empty() &&
      fs::exists(parsed.name_or_path, error)) {
    return ResolvePathAtRevision(parsed.name_or_path, parsed.rev);
  }
  if (whole_exists) return ResolveDiskPath(spec);  // a bare path that happens to contain '@'
  throw UnknownSuite(parsed.name_or_path, registry);
}

}  // namespace evalrun
