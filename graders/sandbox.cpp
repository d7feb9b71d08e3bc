// The sandbox (graders/sandbox.h, docs/sandbox.md). One fork per run: the child makes itself a
// session and process-group leader, sets the rlimits, drops to uid/gid 65534 when evalrun runs as
// root (RLIMIT_NPROC does not bind for root: the kernel exempts it), and execs bubblewrap (or, for
// the unsafe sandbox, the program itself). The parent reads stdout/stderr with poll() until the
// child exits or the wall clock runs out, then SIGKILLs the whole group. Under bubblewrap the code
// runs in its own pid namespace whose init dies with bwrap (--die-with-parent), so the kernel kills
// every process the code started; the unsafe sandbox can only kill the process group.
#include "graders/sandbox.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <utility>

#include <nlohmann/json.hpp>

namespace evalrun {
namespace {

namespace fs = std::filesystem;

constexpr uid_t kSandboxUid = 65534;  // nobody
constexpr gid_t kSandboxGid = 65534;  // nogroup
constexpr const char* kSandboxPath = "/usr/local/bin:/usr/bin:/bin";

// Closes a file descriptor once (STYLE.md 11).
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      Reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  ~Fd() { Reset(); }
  int get() const { return fd_; }
  void Reset() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

bool RunningAsRoot() {
  return geteuid() == 0;
}

// Makes every directory under `path` writable and removes the tree. Code under test may leave
// read-only directories behind; when evalrun is not root that would stop remove_all.
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

// A throwaway directory: /tmp/evalrun-sandbox-XXXXXX holding `work/` (the working copy, the
// only place the code may write) and `stdin` (what the program reads). Removed on destruction.
class Scratch {
 public:
  Scratch() {
    char pattern[] = "/tmp/evalrun-sandbox-XXXXXX";
    if (mkdtemp(pattern) != nullptr) root_ = pattern;
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() {
    if (!root_.empty()) RemoveTree(root_);
  }
  bool ok() const { return !root_.empty(); }
  fs::path root() const { return root_; }
  fs::path work() const { return root_ / "work"; }

 private:
  fs::path root_;
};

// Relative, no "..", no empty or absolute path: a file name the working copy may hold.
bool SafeRelativePath(const std::string& name) {
  if (name.empty() || name[0] == '/') return false;
  for (const auto& part : fs::path(name)) {
    if (part == ".." || part == ".") return false;
  }
  return true;
}

// Writes the run's files into the working copy `work` (and the program's stdin beside it, in
// `root`); returns an error message or "". `root` is handed to the sandbox user only when it is
// the throwaway scratch directory.
std::string PrepareWorkingCopy(const fs::path& root, const fs::path& work, bool scratch_root,
                               const SandboxRun& run) {
  std::error_code ec;
  fs::create_directory(work, ec);
  if (ec) return "cannot create the working copy: " + ec.message();
  for (const auto& [name, content] : run.files) {
    if (!SafeRelativePath(name)) return "file name outside the working copy: '" + name + "'";
    const fs::path target = work / name;
    fs::create_directories(target.parent_path(), ec);
    std::ofstream out(target, std::ios::binary);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    if (!out) return "cannot write '" + name + "' into the working copy";
  }
  for (const auto& name : run.read_only) {
    if (!SafeRelativePath(name)) return "read-only path outside the working copy: '" + name + "'";
    if (!fs::exists(work / name, ec)) return "read-only path '" + name + "' does not exist";
  }
  std::ofstream(root / "stdin", std::ios::binary) << run.stdin_text;
  if (RunningAsRoot()) {
    // The code runs as nobody: it owns its working copy and nothing else.
    if (scratch_root && chown(root.c_str(), kSandboxUid, kSandboxGid) != 0) {
      return std::string("cannot chown the working copy: ") + std::strerror(errno);
    }
    for (auto it = fs::recursive_directory_iterator(work, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (lchown(it->path().c_str(), kSandboxUid, kSandboxGid) != 0) return "cannot chown files";
    }
    if (lchown(work.c_str(), kSandboxUid, kSandboxGid) != 0) return "cannot chown";
  }
  return "";
}

// The working copy of a run: the caller's workspace, or the scratch directory's `work/`.
fs::path WorkDir(const Scratch& scratch, const SandboxRun& run) {
  return run.workspace.empty() ? scratch.work() : fs::path(run.workspace);
}

std::string PrepareRun(const Scratch& scratch, const SandboxRun& run) {
  if (!run.workspace.empty()) {
    std::error_code ec;
    if (!fs::is_directory(run.workspace, ec)) {
      return "workspace '" + run.workspace + "' is not a directory";
    }
  }
  return PrepareWorkingCopy(scratch.root(), WorkDir(scratch, run), run.workspace.empty(), run);
}

// Processes the given uid owns now, from /proc. RLIMIT_NPROC counts every process of the real
// uid, not only this run's, so the limit is set to that count plus the run's allowance.
long CountProcessesOf(uid_t uid) {
  long count = 0;
  std::error_code ec;
  for (fs::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    struct stat st {};
    if (stat(it->path().c_str(), &st) == 0 && st.st_uid == uid) ++count;
  }
  return count;
}

// argv/envp as C arrays, built before fork(): the child may only call async-signal-safe
// functions, so it must not allocate.
struct CArgs {
  explicit CArgs(const std::vector<std::string>& strings) : storage(strings) {
    for (auto& s : storage) pointers.push_back(s.data());
    pointers.push_back(nullptr);
  }
  std::vector<std::string> storage;
  std::vector<char*> pointers;
  char* const* get() { return pointers.data(); }
};

// What the child does between fork() and exec.
struct Launch {
  std::string executable;  // absolute path
  std::vector<std::string> argv;
  std::vector<std::string> env;
  std::string chdir_to;  // "" to stay
  SandboxLimits limits;
};

[[noreturn]] void ChildFail(const char* what) {
  // async-signal-safe: write(2) and _exit only.
  const char prefix[] = "evalrun sandbox: ";
  (void)!write(2, prefix, sizeof(prefix) - 1);
  (void)!write(2, what, std::strlen(what));
  const char* why = std::strerror(errno);
  (void)!write(2, ": ", 2);
  (void)!write(2, why, std::strlen(why));
  (void)!write(2, "\n", 1);
  _exit(127);
}

void SetLimit(int resource, rlim_t soft, rlim_t hard) {
  struct rlimit limit {
    soft, hard
  };
  if (setrlimit(resource, &limit) != 0) ChildFail("setrlimit");
}

// Runs `launch` with the limits; fills stdout/stderr/exit code/timing. Never throws for what the
// program does.
SandboxResult Execute(const Launch& launch, const fs::path& stdin_path) {
  SandboxResult result;
  const SandboxLimits& limits = launch.limits;
  int out_pipe[2];
  int err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) {
    result.stderr_text = "evalrun sandbox: pipe failed";
    return result;
  }
  Fd out_read(out_pipe[0]), out_write(out_pipe[1]);
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    result.stderr_text = "evalrun sandbox: pipe failed";
    return result;
  }
  Fd err_read(err_pipe[0]), err_write(err_pipe[1]);
  Fd stdin_fd(open(stdin_path.empty() ? "/dev/null" : stdin_path.c_str(), O_RDONLY | O_CLOEXEC));

  const bool drop = RunningAsRoot();
  const uid_t uid = drop ? kSandboxUid : getuid();
  const rlim_t nproc = static_cast<rlim_t>(CountProcessesOf(uid) + limits.max_processes);
  const auto cpu = static_cast<rlim_t>(limits.cpu_seconds < 1 ? 1 : limits.cpu_seconds + 0.999);
  CArgs argv(launch.argv);
  CArgs env(launch.env);
  const auto start = std::chrono::steady_clock::now();

  const pid_t pid = fork();
  if (pid < 0) {
    result.stderr_text = std::string("evalrun sandbox: fork failed: ") + std::strerror(errno);
    return result;
  }
  if (pid == 0) {
    // The child: its own session and process group, so one killpg() reaches everything it
    // starts (unless the code itself calls setsid, which bubblewrap's pid namespace covers).
    setsid();
    if (stdin_fd.get() < 0 || dup2(stdin_fd.get(), 0) < 0) ChildFail("stdin");
    if (dup2(out_write.get(), 1) < 0 || dup2(err_write.get(), 2) < 0) ChildFail("dup2");
    SetLimit(RLIMIT_CORE, 0, 0);
    SetLimit(RLIMIT_CPU, cpu, cpu + 1);  // SIGXCPU at the soft limit, SIGKILL one second later
    SetLimit(RLIMIT_AS, static_cast<rlim_t>(limits.memory_bytes),
             static_cast<rlim_t>(limits.memory_bytes));
    SetLimit(RLIMIT_FSIZE, static_cast<rlim_t>(limits.max_file_bytes),
             static_cast<rlim_t>(limits.max_file_bytes));
    SetLimit(RLIMIT_NPROC, nproc, nproc);
    if (drop) {
      if (setgroups(0, nullptr) != 0) ChildFail("setgroups");
      if (setgid(kSandboxGid) != 0) ChildFail("setgid");
      if (setuid(kSandboxUid) != 0) ChildFail("setuid");
    }
    if (!launch.chdir_to.empty() && chdir(launch.chdir_to.c_str()) != 0) ChildFail("chdir");
    execve(launch.executable.c_str(), argv.get(), env.get());
    ChildFail(launch.executable.c_str());
  }
  setpgid(pid, pid);  // also done by the child's setsid(); whichever runs first wins
  // A pidfd becomes readable when the child exits, so poll() wakes at once; without one (Linux
  // before 5.3) the loop polls every 20 ms.
  Fd pidfd(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
  out_write.Reset();
  err_write.Reset();
  stdin_fd.Reset();

  const auto deadline = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                    std::chrono::duration<double>(limits.wall_seconds));
  bool exited = false;
  int status = 0;
  auto drain_until = std::chrono::steady_clock::time_point::max();
  char buffer[65536];
  for (;;) {
    const auto now = std::chrono::steady_clock::now();
    if (!exited && now >= deadline) {
      result.timed_out = true;
      killpg(pid, SIGKILL);
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      exited = true;
      drain_until = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
    }
    if (!exited && waitpid(pid, &status, WNOHANG) == pid) {
      exited = true;
      // Whatever the program left running in its group goes now; the pipes then close.
      killpg(pid, SIGKILL);
      drain_until = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
    }
    if (out_read.get() < 0 && err_read.get() < 0) {
      if (exited) break;
    }
    if (exited && std::chrono::steady_clock::now() >= drain_until) break;
    pollfd fds[3] = {{out_read.get(), POLLIN, 0},
                     {err_read.get(), POLLIN, 0},
                     {exited ? -1 : pidfd.get(), POLLIN, 0}};
    const auto limit_at = exited ? drain_until : deadline;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        limit_at - std::chrono::steady_clock::now());
    // Without a pidfd, short polls while the child runs: waitpid above notices the exit.
    const long cap = exited || pidfd.get() < 0 ? 20 : 1000;
    const int timeout_ms = static_cast<int>(std::max<long>(0, std::min<long>(left.count(), cap)));
    const int ready = poll(fds, 3, timeout_ms);
    if (ready < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      Fd& fd = i == 0 ? out_read : err_read;
      std::string& text = i == 0 ? result.stdout_text : result.stderr_text;
      const ssize_t n = read(fd.get(), buffer, sizeof(buffer));
      if (n <= 0) {
        if (n == 0 || errno != EINTR) fd.Reset();
        continue;
      }
      // Keep reading past the cap so the program never blocks on a full pipe; keep the head.
      const size_t room =
          limits.max_output_bytes > text.size() ? limits.max_output_bytes - text.size() : 0;
      text.append(buffer, std::min(room, static_cast<size_t>(n)));
    }
  }
  result.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.exit_code = 128 + WTERMSIG(status);
  // RLIMIT_AS makes allocations fail; runtimes say so in their own words.
  for (const char* sign : {"MemoryError", "std::bad_alloc", "JavaScript heap out of memory",
                           "Cannot allocate memory", "Fatal process OOM"}) {
    if (result.stderr_text.find(sign) != std::string::npos) result.out_of_memory = true;
  }
  return result;
}

std::vector<std::string> SandboxEnv(const std::string& home) {
  return {std::string("PATH=") + kSandboxPath, "HOME=" + home, "LANG=C.UTF-8", "TMPDIR=/tmp"};
}

// argv[0] on the sandbox's PATH, as the host sees it (the sandbox binds the same /usr).
std::string FindOnPath(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  std::string path = kSandboxPath;
  size_t begin = 0;
  while (begin <= path.size()) {
    size_t end = path.find(':', begin);
    if (end == std::string::npos) end = path.size();
    std::string candidate = path.substr(begin, end - begin) + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    begin = end + 1;
  }
  return "";
}

SandboxResult SetupFailure(const std::string& message) {
  SandboxResult result;
  result.exit_code = 127;
  result.stderr_text = "evalrun sandbox: " + message;
  return result;
}

class BubblewrapSandbox : public Sandbox {
 public:
  BubblewrapSandbox() {
    for (const char* candidate : {"/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap"}) {
      if (access(candidate, X_OK) == 0) {
        bwrap_ = candidate;
        break;
      }
    }
    if (bwrap_.empty()) {
      unavailable_ = "bubblewrap (bwrap) is not installed: apt-get install bubblewrap";
      return;
    }
    Launch version{bwrap_, {"bwrap", "--version"}, SandboxEnv("/"), "", SandboxLimits{}};
    version.limits.wall_seconds = 5;
    SandboxResult v = Execute(version, "");
    version_ = v.stdout_text.substr(0, v.stdout_text.find('\n'));
    if (version_.empty()) version_ = "bubblewrap";
    SandboxRun probe;
    probe.argv = {"true"};
    probe.limits.wall_seconds = 10;
    SandboxResult r = Run(probe);
    if (r.exit_code != 0) {
      std::string why = r.stderr_text.substr(0, r.stderr_text.find('\n'));
      unavailable_ = "bubblewrap cannot start a sandbox here (user namespaces disabled?): " +
                     (why.empty() ? "exit code " + std::to_string(r.exit_code) : why);
    }
  }

  std::optional<std::string> Unavailable() const override { return unavailable_; }

  SandboxResult Run(const SandboxRun& run) const override {
    if (bwrap_.empty()) return SetupFailure(*unavailable_);
    if (run.argv.empty()) return SetupFailure("nothing to run");
    Scratch scratch;
    if (!scratch.ok()) return SetupFailure("cannot create a temporary directory");
    if (std::string error = PrepareRun(scratch, run); !error.empty()) return SetupFailure(error);
    std::vector<std::string> args = {
        "bwrap",         "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent",
        "--new-session", "--hostname",    "sandbox",        "--clearenv"};
    for (const auto& variable : SandboxEnv("/work")) {
      const size_t eq = variable.find('=');
      args.insert(args.end(), {"--setenv", variable.substr(0, eq), variable.substr(eq + 1)});
    }
    // Only the system's programs and libraries are visible, read-only: no /home, /root, /work
    // (the project and its hidden tests), /tmp or /run of the host. The root itself is made
    // read-only last; /tmp (a size-capped tmpfs), /dev's tmpfs and /work stay writable, and all
    // but /work vanish with the run.
    args.insert(args.end(), {"--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"});
    for (const char* top : {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}) {
      std::error_code ec;
      const fs::path path(top);
      if (fs::is_symlink(path, ec)) {
        args.insert(args.end(), {"--symlink", fs::read_symlink(path, ec).string(), top});
      } else if (fs::exists(path, ec)) {
        args.insert(args.end(), {"--ro-bind", top, top});
      }
    }
    // /tmp holds at most one file's worth: it lives in memory.
    const std::string tmp_size =
        std::to_string(std::max<long>(run.limits.max_file_bytes, 1L << 20));
    args.insert(args.end(), {"--proc", "/proc", "--dev", "/dev", "--size", tmp_size, "--tmpfs",
                             "/tmp", "--bind", WorkDir(scratch, run).string(), "/work"});
    for (const auto& name : run.read_only) {
      const std::string inside = "/work/" + name;
      args.insert(args.end(), {"--ro-bind", (WorkDir(scratch, run) / name).string(), inside});
    }
    args.insert(args.end(), {"--chdir", "/work", "--remount-ro", "/", "--"});
    args.insert(args.end(), run.argv.begin(), run.argv.end());
    Launch launch{bwrap_, std::move(args), SandboxEnv("/"), "", run.limits};
    return Execute(launch, scratch.root() / "stdin");
  }

  std::string Describe() const override {
    return version_ + ", uid " + std::to_string(RunningAsRoot() ? kSandboxUid : getuid()) +
           ", no network";
  }

 private:
  std::string bwrap_;
  std::string version_;
  std::optional<std::string> unavailable_;
};

class UnsafeSandbox : public Sandbox {
 public:
  std::optional<std::string> Unavailable() const override { return std::nullopt; }

  SandboxResult Run(const SandboxRun& run) const override {
    if (run.argv.empty()) return SetupFailure("nothing to run");
    const std::string executable = FindOnPath(run.argv[0]);
    if (executable.empty()) return SetupFailure(run.argv[0] + ": not found");
    Scratch scratch;
    if (!scratch.ok()) return SetupFailure("cannot create a temporary directory");
    if (std::string error = PrepareRun(scratch, run); !error.empty()) return SetupFailure(error);
    const std::string work = WorkDir(scratch, run).string();
    Launch launch{executable, run.argv, SandboxEnv(work), work, run.limits};
    return Execute(launch, scratch.root() / "stdin");
  }

  std::string Describe() const override {
    return "UNSAFE: no sandbox (--unsafe-no-sandbox): rlimits and a wall-clock kill only, uid " +
           std::to_string(RunningAsRoot() ? kSandboxUid : getuid()) +
           ", network and the file system reachable";
  }
};

}  // namespace

std::string OutputTail(const std::string& text, size_t max_bytes) {
  std::string tail = text.size() > max_bytes ? text.substr(text.size() - max_bytes) : text;
  // Through nlohmann's replacing serializer: invalid UTF-8 (and a character cut by the
  // substr above) becomes U+FFFD, so the tail can go into JSON evidence safely.
  const std::string quoted =
      nlohmann::json(tail).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return nlohmann::json::parse(quoted).get<std::string>();
}

std::string FindSandboxProgram(const std::string& name) {
  return FindOnPath(name);
}

std::unique_ptr<Sandbox> MakeBubblewrapSandbox() {
  return std::make_unique<BubblewrapSandbox>();
}

std::unique_ptr<Sandbox> MakeUnsafeSandbox() {
  return std::make_unique<UnsafeSandbox>();
}

}  // namespace evalrun
