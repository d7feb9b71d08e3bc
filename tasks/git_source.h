#pragma once
// Suite resolution with libgit2 (DESIGN.md sections 4-5): NAME@REV through a registry, PATH@REV
// in a local repository, and files read from the commit's tree object, never from a work tree.
// Only this file's .cpp includes git2.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tasks/suite_files.h"

namespace evalrun {

// One registered suite name.
struct RegistryEntry {
  std::string name;
  std::string url;     // git URL, or a local repository path
  std::string format;  // "evalrun" or "zxbench"
  std::string path;    // folder or file inside the repository
  std::string origin;  // "built-in" or the registry file it came from
};

// Built-in names plus ~/.config/evalrun/suites.yaml (EVALRUN_SUITES overrides the path). A
// malformed registry file is an Error naming file:line:column.
//
// Built in: zx-bench -> https://github.com/suncityldp/zx-bench, format zxbench, path
// data/scenarios/benchmark.json. `smoke` is not here: it is a folder shipped with evalrun
// (tasks/shipped_suites.h), which ResolveSuite finds on disk.
//
// The file (absent is fine: built-ins only):
//   suites:
//     mine: {url: https://example.org/x.git, format: evalrun, path: tasks}
// `format` defaults to evalrun, `path` to "" (the repository root). A relative local `url` is
// relative to the file's folder; "~/" is $HOME. An entry with a built-in name replaces it (to
// point zx-bench at a mirror). Errors: unknown keys (with "did you mean"), non-string values, an
// unknown format, a missing url, a name listed twice or containing '@', '/' or spaces.
// Reads the environment; may throw Error.
std::vector<RegistryEntry> LoadRegistry();

// The registry file LoadRegistry reads: $EVALRUN_SUITES if set, else
// $HOME/.config/evalrun/suites.yaml, or "" without HOME. It need not exist.
std::string RegistryFilePath();

// Files of one commit of one repository, read from the commit's tree object (never a work tree).
// Symbolic links inside the tree are followed as a file system would; a folder, a submodule, or a
// link leaving the tree reads as absent. Safe to call from several threads (calls are serialised).
class GitTreeFiles : public SuiteFiles {
 public:
  ~GitTreeFiles() override;
  std::optional<std::string> Read(const std::string& path) const override;
  std::vector<std::string> List(const std::string& dir) const override;
  std::vector<SuiteFileEntry> ListTree(const std::string& dir) const override;
  // "<describe_as>@<first 8 hex of the commit>", e.g. "zx-bench@8e0adf68".
  std::string Describe() const override;
  // Whether `path` is a file (blob) / a folder (tree) at this commit. "" is the root folder.
  bool IsFile(const std::string& path) const;
  bool IsFolder(const std::string& path) const;

  const std::string& commit() const;  // full id
  const std::string& tree() const;    // full id of the commit's tree

  struct Impl;
  explicit GitTreeFiles(std::unique_ptr<Impl> impl);

 private:
  std::unique_ptr<Impl> impl_;
};

// Opens `repo_path` (a work tree, a folder inside one, or a bare repository) and resolves `rev`
// (full or abbreviated commit id, branch, tag, or any revspec libgit2 understands), peeled to a
// commit. `describe_as` names the suite in Describe() ("" = repo_path). Errors (evalrun::Error,
// exit 2):
//   "<repo>: not a git repository"
//   "<repo>: unknown revision '<rev>'"
//   "<repo>: ambiguous short id '<rev>': it matches more than one object; give more characters"
//   "<repo>: revision '<rev>' is a blob, not a commit"
std::unique_ptr<GitTreeFiles> OpenRevision(const std::string& repo_path, const std::string& rev,
                                           const std::string& describe_as);

// A clone of `url` in the cache (EVALRUN_CACHE, default ~/.cache/evalrun/repos), fetched when
// `rev` is not already there. Returns the local repository path. Unreachable: an Error naming the
// URL and libgit2's message:
//   "cannot fetch <url>: <libgit2 message> (offline? --suite-repo PATH uses a local clone)"
// The clone is bare and mirrors origin's branches and tags under their own names (refs/heads/*,
// refs/tags/*), with HEAD at origin's default branch. A rev that is a commit id already present
// never touches the network; a rev naming a ref (it may have moved) is fetched first, and when
// offline the ref as last fetched is used (the run records the commit it resolved to). A new clone
// is made beside the cache folder and renamed into place, so an interrupted one is never used.
std::string EnsureCachedClone(const std::string& url, const std::string& rev);

// Repository mirrors (docs/serving.md "Offline repositories"): EnsureCachedClone(url) returns the
// mirror of `url` instead of touching the cache or the network, when there is one:
//   - SetRepoMirrors' table (--repo-mirror URL=PATH; URLs compared without a trailing "/" or
//     ".git"), PATH being any git repository (bare or not) that holds the commits;
//   - else $EVALRUN_REPO_MIRRORS/<CacheFolderName(url)>, /<last URL part>.git or /<last URL
//     part>, whichever is a git repository (a copy of the cache folder is a mirror folder).
// A table entry that is no git repository is an Error("--repo-mirror URL=PATH: not a git
// repository"). Process-wide, set by the command line before work starts.
void SetRepoMirrors(const std::map<std::string, std::string>& mirrors);
// "URL=PATH" values of --repo-mirror as a table (PATH made absolute), split at the first '='
// after the URL's "://" (URLs rarely hold '=', paths may). Throws
// Error("--repo-mirror 'x': expected URL=PATH, e.g. https://github.com/o/r=/srv/mirrors/r.git").
std::map<std::string, std::string> ParseRepoMirrors(const std::vector<std::string>& values);
std::optional<std::string> FindRepoMirror(const std::string& url);
// With `allowed` false, EnsureCachedClone never fetches: a URL or revision missing from the cache
// (and without a mirror) is an Error ending in "... and this command does not use the network"
// followed by `hint` (e.g. " (--fetch allows it, or --repo-mirror URL=PATH)"). For `verify`.
void SetNetworkAllowed(bool allowed, const std::string& hint = "");

// The cache folder name for `url`: the URL without its scheme and ".git", sanitised to
// [A-Za-z0-9._-] (at most 64 characters, keeping the end), then '-' and 12 hex of its SHA-256.
// "https://github.com/suncityldp/zx-bench" -> "github.com_suncityldp_zx-bench-<12 hex>".
std::string CacheFolderName(const std::string& url);

struct SuiteSpec {
  std::string name_or_path;  // before '@'
  std::string rev;           // after '@' ("" for a bare path)
};
// Splits at the last '@' (a path may contain '@'; a revision rarely does).
SuiteSpec ParseSuiteSpec(const std::string& spec);

struct ResolvedSuite {
  std::unique_ptr<SuiteFiles> files;
  std::string format;  // "evalrun" or "zxbench"
  std::string path;    // evalrun: the suite's folder inside `files`; zxbench: the bank file
  std::string repo;    // repository path or URL ("" for a bare path)
  std::string commit;  // "" for a bare path
  std::string tree;
};

struct ResolveOptions {
  std::string suite_repo;  // --suite-repo: a local clone or mirror to use for a registered name
};

// NAME@REV (registered name), PATH@REV (a folder inside a git repository: the repository is found
// by walking up from PATH), or a bare PATH (read from disk, unpinned). Errors name what is wrong:
// unknown name with "did you mean", a name without @REV, unknown revision, ambiguous short id,
// unreachable repository, path missing at that commit.
//
// NAME@REV: the repository is options.suite_repo, else the entry's url when it is a local folder,
// else EnsureCachedClone(url, REV); `repo` records the URL (or the local path used); path and
// format come from the entry. A registered name wins over a same-named folder (write ./NAME@REV
// for the folder).
// PATH@REV and bare PATH: the format is zxbench when PATH is a *benchmark.json file or a folder
// holding data/scenarios/benchmark.json (at that commit, or on disk), and `path` is then that file;
// a suite.yaml file stands for its folder; any other file is an error. For PATH@REV, `path` is
// relative to the repository root and Describe() names the repository root; for a bare PATH,
// `files` is DiskFiles of the folder (of the file's folder, for a file). A bare PATH that exists
// is read from disk even when it is also a registered name. A bare NAME that is neither an existing
// path nor a registered name is a suite shipped with evalrun (tasks/shipped_suites.h: `smoke`,
// `agent`), read from disk, unpinned, like a bare PATH.
// Messages (exit 2):
//   "suite 'zx-bench' is a registered name: give a revision, e.g. zx-bench@<commit>"
//   "unknown suite 'zx-bnech', did you mean 'zx-bench'? (evalrun suites lists them)"
//   "unknown suite 'x': not a registered name or an existing path (evalrun suites lists them)"
//   "<describe>: no '<path>' at commit <12 hex>"
//   "'<PATH>' is not inside a git repository (without @REV it is read from disk, unpinned)"
//   "--suite-repo applies to a registered suite name (NAME@REV), not to '<spec>'"
// plus OpenRevision's and EnsureCachedClone's, where <repo> is the URL for a cached clone.
ResolvedSuite ResolveSuite(const std::string& spec, const ResolveOptions& options);

}  // namespace evalrun
