#pragma once
// libgit2 plumbing shared by tasks/git_source.cpp and tasks/repo_workspace.cpp, the only files
// that include git2: one RAII owner per handle (STYLE.md 11), a self-disposing git_buf, the
// one-time library initialisation, the last error's text and an object id as hex. Private to
// tasks/.
#include <memory>
#include <string>

#include <git2.h>

namespace evalrun::git {

template <auto Free>
struct Deleter {
  template <typename T>
  void operator()(T* handle) const {
    Free(handle);
  }
};
using RepoPtr = std::unique_ptr<git_repository, Deleter<git_repository_free>>;
using ObjectPtr = std::unique_ptr<git_object, Deleter<git_object_free>>;
using OdbPtr = std::unique_ptr<git_odb, Deleter<git_odb_free>>;
using CommitPtr = std::unique_ptr<git_commit, Deleter<git_commit_free>>;
using TreePtr = std::unique_ptr<git_tree, Deleter<git_tree_free>>;
using TreeEntryPtr = std::unique_ptr<git_tree_entry, Deleter<git_tree_entry_free>>;
using BlobPtr = std::unique_ptr<git_blob, Deleter<git_blob_free>>;
using RemotePtr = std::unique_ptr<git_remote, Deleter<git_remote_free>>;
using SignaturePtr = std::unique_ptr<git_signature, Deleter<git_signature_free>>;
using DiffPtr = std::unique_ptr<git_diff, Deleter<git_diff_free>>;
using PatchPtr = std::unique_ptr<git_patch, Deleter<git_patch_free>>;

// A git_buf that disposes of itself.
struct Buf {
  git_buf buf = GIT_BUF_INIT;
  Buf() = default;
  Buf(const Buf&) = delete;
  Buf& operator=(const Buf&) = delete;
  ~Buf() { git_buf_dispose(&buf); }
  std::string str() const { return buf.ptr ? std::string(buf.ptr, buf.size) : std::string(); }
};

// libgit2 wants git_libgit2_init before any other call; a function-local static runs it once,
// thread-safely. It is never shut down: the process ends first.
inline void EnsureLibgit2() {
  static const int initialised = git_libgit2_init();
  (void)initialised;
}

inline std::string LastGitMessage() {
  const git_error* error = git_error_last();
  return error != nullptr && error->message != nullptr ? error->message : "unknown libgit2 error";
}

inline std::string OidHex(const git_oid& oid) {
  char hex[GIT_OID_HEXSZ + 1] = {};
  git_oid_tostr(hex, sizeof hex, &oid);
  return hex;
}

}  // namespace evalrun::git
