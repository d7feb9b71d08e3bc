// The sandbox (plugins/sandbox.h, docs/sandbox.md). One fork per run: the child makes itself a
// session and process-group leader, sets the rlimits, drops to uid/gid 65534 when evalrun runs as
// root (RLIMIT_NPROC does not bind for root: the kernel exempts it), and execs bubblewrap (or, for
// the unsafe sandbox, the program itself). The parent reads stdout/stderr with poll() until the
// child exits or the wall clock runs out, then SIGKILLs the whole group. Under bubblewrap the code
// runs in its own pid namespace whose init dies with bwrap (--die-with-parent), so the kernel kills
// every process the code started; the unsafe sandbox can only kill the process group. A session
// (Sandbox::Start) is the same child kept running: its stdin is a socket the parent writes one
// request line to per exchange, and the same poll() loop reads one reply line back under the
// exchange's deadline.
#include "plugins/sandbox.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
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
#include <iterator>
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

// One new top-level directory, never over the system's own.
bool NewTopLevelPath(const std::string& inside) {
  static const char* const kTaken[] = {"usr", "etc", "bin", "sbin", "lib", "lib32", "lib64",
                                       "libx32", "proc", "dev", "tmp"};
  return inside.size() >= 2 && inside[0] == '/' && SafeRelativePath(inside.substr(1)) &&
         inside.find('/', 1) == std::string::npos &&
         std::find(std::begin(kTaken), std::end(kTaken), inside.substr(1)) == std::end(kTaken);
}

// A writable directory's place inside (SandboxRun::writable_dirs): absolute, no "..", not the
// root, not in the system's read-only directories, /proc or /dev, and apart from the working copy.
bool WritableDirPath(const std::string& inside, const std::string& work_path) {
  if (inside.size() < 2 || inside[0] != '/' || !SafeRelativePath(inside.substr(1))) return false;
  const std::string top = inside.substr(1, inside.find('/', 1) - 1);
  static const char* const kSystem[] = {"usr",   "etc",   "bin",    "sbin", "lib",
                                        "lib32", "lib64", "libx32", "proc", "dev"};
  if (std::find(std::begin(kSystem), std::end(kSystem), top) != std::end(kSystem)) return false;
  const auto within = [](const std::string& a, const std::string& b) {
    return a == b || a.rfind(b + "/", 0) == 0;
  };
  return !within(inside, work_path) && !within(work_path, inside);
}

// The host directory behind the run's i-th writable directory.
fs::path LayerDir(const Scratch& scratch, size_t i) {
  return scratch.root() / "layer" / std::to_string(i);
}

std::string PrepareRun(const Scratch& scratch, const SandboxRun& run) {
  // The working copy's place inside.
  const std::string& inside = run.work_path;
  if (!NewTopLevelPath(inside)) {
    return "work path '" + inside + "' must be a new top-level directory such as /workspace";
  }
  if (!run.cache.empty()) {
    if (!NewTopLevelPath(run.cache_path) || run.cache_path == inside) {
      return "cache path '" + run.cache_path +
             "' must be a new top-level directory such as /cache, apart from the work path";
    }
    std::error_code ec;
    if (!fs::is_directory(run.cache, ec)) return "cache '" + run.cache + "' is not a directory";
    if (RunningAsRoot() && lchown(run.cache.c_str(), kSandboxUid, kSandboxGid) != 0) {
      return std::string("cannot chown the cache: ") + std::strerror(errno);
    }
  }
  if (!run.workspace.empty()) {
    std::error_code ec;
    if (!fs::is_directory(run.workspace, ec)) {
      return "workspace '" + run.workspace + "' is not a directory";
    }
  }
  for (size_t i = 0; i < run.writable_dirs.size(); ++i) {
    const std::string& inside_dir = run.writable_dirs[i];
    if (!WritableDirPath(inside_dir, inside)) {
      return "writable directory '" + inside_dir +
             "' must be an absolute path outside the system's directories and the work path";
    }
    std::error_code ec;
    const fs::path host = LayerDir(scratch, i);
    fs::create_directories(host, ec);
    if (ec) return "cannot create a writable directory: " + ec.message();
    // The sandbox user reaches it through the scratch directory, which is its own then too.
    if (RunningAsRoot() && (lchown(scratch.root().c_str(), kSandboxUid, kSandboxGid) != 0 ||
                            lchown(host.parent_path().c_str(), kSandboxUid, kSandboxGid) != 0 ||
                            lchown(host.c_str(), kSandboxUid, kSandboxGid) != 0)) {
      return std::string("cannot chown a writable directory: ") + std::strerror(errno);
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

// A started child: its pid (also its process group) and a pidfd that becomes readable when it
// exits (-1 before Linux 5.3: poll with a short timeout and waitpid instead).
struct Spawned {
  pid_t pid = -1;
  Fd pidfd;
  std::string error;  // fork failed
};

// Forks and execs `launch` with the limits, fds 0/1/2 from `stdin_fd`, `out_fd`, `err_fd` (which
// the caller then closes on its side). Never throws.
Spawned Spawn(const Launch& launch, int stdin_fd, int out_fd, int err_fd) {
  Spawned spawned;
  const SandboxLimits& limits = launch.limits;
  const bool drop = RunningAsRoot();
  const uid_t uid = drop ? kSandboxUid : getuid();
  const rlim_t nproc = static_cast<rlim_t>(CountProcessesOf(uid) + limits.max_processes);
  const auto cpu = static_cast<rlim_t>(limits.cpu_seconds < 1 ? 1 : limits.cpu_seconds + 0.999);
  CArgs argv(launch.argv);
  CArgs env(launch.env);

  const pid_t pid = fork();
  if (pid < 0) {
    spawned.error = std::string("evalrun sandbox: fork failed: ") + std::strerror(errno);
    return spawned;
  }
  if (pid == 0) {
    // The child: its own session and process group, so one killpg() reaches everything it
    // starts (unless the code itself calls setsid, which bubblewrap's pid namespace covers).
    setsid();
    if (stdin_fd < 0 || dup2(stdin_fd, 0) < 0) ChildFail("stdin");
    if (dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0) ChildFail("dup2");
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
  spawned.pid = pid;
  spawned.pidfd = Fd(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
  return spawned;
}

// RLIMIT_AS makes allocations fail; runtimes say so in their own words.
bool SaysOutOfMemory(const std::string& stderr_text) {
  for (const char* sign : {"MemoryError", "std::bad_alloc", "JavaScript heap out of memory",
                           "Cannot allocate memory", "Fatal process OOM"}) {
    if (stderr_text.find(sign) != std::string::npos) return true;
  }
  return false;
}

int ExitCodeOf(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
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

  const auto start = std::chrono::steady_clock::now();
  Spawned spawned = Spawn(launch, stdin_fd.get(), out_write.get(), err_write.get());
  if (spawned.pid < 0) {
    result.stderr_text = spawned.error;
    return result;
  }
  const pid_t pid = spawned.pid;
  Fd pidfd = std::move(spawned.pidfd);
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
  result.exit_code = ExitCodeOf(status);
  result.out_of_memory = SaysOutOfMemory(result.stderr_text);
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

// A session (SandboxSession): one child started with its stdin on a socket (so that writing to
// a process that has gone raises no SIGPIPE: send() with MSG_NOSIGNAL) and stdout/stderr on
// pipes; each exchange polls all three and the pidfd until a reply line, the deadline, or the
// child's end.
class ProcessSession final : public SandboxSession {
 public:
  // A session that could not start: every exchange reports `error`.
  explicit ProcessSession(std::string error) : error_(std::move(error)) { exit_code_ = 127; }

  ProcessSession(std::unique_ptr<Scratch> scratch, const Launch& launch)
      : scratch_(std::move(scratch)), limits_(launch.limits) {
    started_ = std::chrono::steady_clock::now();
    int stdin_pair[2];
    int out_pipe[2];
    int err_pipe[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, stdin_pair) != 0) {
      Fail("socketpair failed");
      return;
    }
    Fd child_in(stdin_pair[1]);
    stdin_ = Fd(stdin_pair[0]);
    if (pipe2(out_pipe, O_CLOEXEC) != 0) {
      Fail("pipe failed");
      return;
    }
    Fd child_out(out_pipe[1]);
    stdout_ = Fd(out_pipe[0]);
    if (pipe2(err_pipe, O_CLOEXEC) != 0) {
      Fail("pipe failed");
      return;
    }
    Fd child_err(err_pipe[1]);
    stderr_ = Fd(err_pipe[0]);
    Spawned spawned = Spawn(launch, child_in.get(), child_out.get(), child_err.get());
    if (spawned.pid < 0) {
      error_ = spawned.error;
      exit_code_ = 127;
      return;
    }
    pid_ = spawned.pid;
    pidfd_ = std::move(spawned.pidfd);
  }

  ProcessSession(const ProcessSession&) = delete;
  ProcessSession& operator=(const ProcessSession&) = delete;
  ~ProcessSession() override { Kill(); }

  bool alive() const override {
    if (pid_ <= 0 || reaped_) return false;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {  // it ended between exchanges
      reaped_ = true;
      exit_code_ = ExitCodeOf(status);
      return false;
    }
    return true;
  }

  SandboxExchange Exchange(const std::string& line) override {
    SandboxExchange out;
    const auto start = std::chrono::steady_clock::now();
    if (!alive()) {
      out.exit_code = exit_code_;
      out.stderr_text = error_.empty() ? "evalrun sandbox: the session has ended" : error_;
      return out;
    }
    const auto life_end = started_ + Seconds(limits_.session_seconds);
    const auto exchange_end = start + Seconds(limits_.wall_seconds);
    auto deadline = std::min(life_end, exchange_end);
    const std::string request = line + "\n";
    size_t sent = 0;
    std::string reply;
    bool stdout_closed = false;
    char buffer[65536];
    for (;;) {
      const auto now = std::chrono::steady_clock::now();
      if (now >= deadline) {
        // A child that closed its stdout was given a moment to exit; it did not.
        if (!stdout_closed) {
          out.timed_out = true;
          out.session_expired = life_end <= exchange_end;
        }
        Kill();
        break;
      }
      pollfd fds[4] = {{sent < request.size() ? stdin_.get() : -1, POLLOUT, 0},
                       {stdout_.get(), POLLIN, 0},
                       {stderr_.get(), POLLIN, 0},
                       {pidfd_.get(), POLLIN, 0}};
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
      const long cap = pidfd_.get() < 0 ? 20 : 1000;
      const int timeout_ms =
          static_cast<int>(std::max<long>(0, std::min<long>(left.count() + 1, cap)));
      if (poll(fds, 4, timeout_ms) < 0 && errno != EINTR) {
        Kill();
        break;
      }
      if (fds[0].fd >= 0 && (fds[0].revents & (POLLOUT | POLLERR | POLLHUP)) != 0) {
        const ssize_t n = send(stdin_.get(), request.data() + sent, request.size() - sent,
                               MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
          sent += static_cast<size_t>(n);
        } else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
          sent = request.size();  // the child no longer reads: wait for its end or a reply
        }
      }
      ReadStderr(fds[2].revents, out.stderr_text);
      if ((fds[1].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
        const ssize_t n = read(stdout_.get(), buffer, sizeof(buffer));
        if (n > 0) {
          const size_t before = reply.size();
          reply.append(buffer, static_cast<size_t>(n));
          const size_t nl = reply.find('\n', before);
          if (nl != std::string::npos) {
            out.ok = true;
            out.reply = reply.substr(0, nl);
            break;
          }
          if (reply.size() > limits_.max_output_bytes) {
            out.reply_too_long = true;
            Kill();
            break;
          }
        } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
          // The child closed its stdout: it is ending. Give it a moment for its exit code.
          stdout_.Reset();
          stdout_closed = true;
          deadline = std::min(deadline, std::chrono::steady_clock::now() +
                                            std::chrono::milliseconds(200));
        }
      }
      if (ReapIfExited()) {
        // Whatever it left running goes now; collect what it wrote last.
        DrainAfterExit(reply, out);
        Kill();
        break;
      }
    }
    if (alive()) {
      pollfd err = {stderr_.get(), POLLIN, 0};
      while (poll(&err, 1, 0) > 0 && err.revents != 0 && stderr_.get() >= 0) {
        ReadStderr(err.revents, out.stderr_text);
        err = {stderr_.get(), POLLIN, 0};
      }
    } else {
      out.exit_code = exit_code_;
    }
    out.out_of_memory = SaysOutOfMemory(out.stderr_text);
    out.wall_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return out;
  }

  SandboxResult Close() override {
    if (closed_) return closed_result_;
    closed_ = true;
    SandboxResult& result = closed_result_;
    if (alive()) {
      stdin_.Reset();  // EOF on its stdin: a well-behaved server exits now
      const auto deadline = std::chrono::steady_clock::now() + Seconds(limits_.wall_seconds);
      char buffer[65536];
      while (alive()) {
        const auto now = std::chrono::steady_clock::now();
        if (now >= deadline) {
          result.timed_out = true;
          Kill();
          break;
        }
        pollfd fds[3] = {{stdout_.get(), POLLIN, 0},
                         {stderr_.get(), POLLIN, 0},
                         {pidfd_.get(), POLLIN, 0}};
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
        const long cap = pidfd_.get() < 0 ? 20 : 1000;
        poll(fds, 3, static_cast<int>(std::max<long>(0, std::min<long>(left.count() + 1, cap))));
        if ((fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
          const ssize_t n = read(stdout_.get(), buffer, sizeof(buffer));
          if (n > 0) {
            const size_t room = limits_.max_output_bytes > result.stdout_text.size()
                                    ? limits_.max_output_bytes - result.stdout_text.size()
                                    : 0;
            result.stdout_text.append(buffer, std::min(room, static_cast<size_t>(n)));
          } else if (n == 0 || errno != EINTR) {
            stdout_.Reset();
          }
        }
        ReadStderr(fds[1].revents, result.stderr_text);
        if (ReapIfExited()) Kill();
      }
    }
    Kill();
    if (!error_.empty()) result.stderr_text = error_;
    result.exit_code = exit_code_;
    result.out_of_memory = SaysOutOfMemory(result.stderr_text);
    result.wall_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    return result;
  }

 private:
  static std::chrono::steady_clock::duration Seconds(double s) {
    return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(std::max(0.0, std::min(s, 1e9))));
  }

  void Fail(const char* what) {
    error_ = std::string("evalrun sandbox: ") + what + ": " + std::strerror(errno);
    exit_code_ = 127;
  }

  // Reads what stderr has (keeping the first max_output_bytes of this exchange, reading on past
  // the cap so the child never blocks on a full pipe).
  void ReadStderr(short revents, std::string& text) {
    if (stderr_.get() < 0 || (revents & (POLLIN | POLLHUP | POLLERR)) == 0) return;
    char buffer[65536];
    const ssize_t n = read(stderr_.get(), buffer, sizeof(buffer));
    if (n > 0) {
      const size_t room =
          limits_.max_output_bytes > text.size() ? limits_.max_output_bytes - text.size() : 0;
      text.append(buffer, std::min(room, static_cast<size_t>(n)));
    } else if (n == 0 || errno != EINTR) {
      stderr_.Reset();
    }
  }

  // True (and the exit code kept) when the child has exited.
  bool ReapIfExited() {
    if (pid_ <= 0 || reaped_) return reaped_;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      reaped_ = true;
      exit_code_ = ExitCodeOf(status);
    }
    return reaped_;
  }

  // After the child's exit: its last words on stdout (a reply line completes the exchange) and
  // stderr, for at most 200 ms (a grandchild may hold the pipes open until the kill).
  void DrainAfterExit(std::string& reply, SandboxExchange& out) {
    killpg(pid_, SIGKILL);
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
    char buffer[65536];
    while ((stdout_.get() >= 0 || stderr_.get() >= 0) &&
           std::chrono::steady_clock::now() < until) {
      pollfd fds[2] = {{stdout_.get(), POLLIN, 0}, {stderr_.get(), POLLIN, 0}};
      if (poll(fds, 2, 20) <= 0) continue;
      if ((fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
        const ssize_t n = read(stdout_.get(), buffer, sizeof(buffer));
        if (n > 0) {
          if (!out.ok && reply.size() <= limits_.max_output_bytes) {
            const size_t before = reply.size();
            reply.append(buffer, static_cast<size_t>(n));
            const size_t nl = reply.find('\n', before);
            if (nl != std::string::npos) {
              out.ok = true;
              out.reply = reply.substr(0, nl);
            }
          }
        } else if (n == 0 || errno != EINTR) {
          stdout_.Reset();
        }
      }
      ReadStderr(fds[1].revents, out.stderr_text);
    }
  }

  // SIGKILLs the process group (under bubblewrap, bwrap's death takes its pid namespace with
  // it), reaps the child and closes every pipe. Idempotent.
  void Kill() {
    if (pid_ > 0) {
      killpg(pid_, SIGKILL);
      if (!reaped_) {
        kill(pid_, SIGKILL);
        int status = 0;
        if (waitpid(pid_, &status, 0) == pid_) exit_code_ = ExitCodeOf(status);
        reaped_ = true;
      }
      pid_ = -1;
    }
    stdin_.Reset();
    stdout_.Reset();
    stderr_.Reset();
    pidfd_.Reset();
  }

  std::unique_ptr<Scratch> scratch_;  // the working copy; removed after the kill
  SandboxLimits limits_;
  std::chrono::steady_clock::time_point started_;
  pid_t pid_ = -1;
  mutable bool reaped_ = false;  // alive() reaps a child that ended between exchanges
  mutable int exit_code_ = -1;
  std::string error_;  // why it could not start
  Fd stdin_, stdout_, stderr_, pidfd_;
  bool closed_ = false;
  SandboxResult closed_result_;
};

std::unique_ptr<SandboxSession> FailedSession(const std::string& message) {
  return std::make_unique<ProcessSession>("evalrun sandbox: " + message);
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
    return Execute(BuildLaunch(scratch, run), scratch.root() / "stdin");
  }

  std::unique_ptr<SandboxSession> Start(const SandboxRun& run) const override {
    if (bwrap_.empty()) return FailedSession(*unavailable_);
    if (run.argv.empty()) return FailedSession("nothing to run");
    auto scratch = std::make_unique<Scratch>();
    if (!scratch->ok()) return FailedSession("cannot create a temporary directory");
    if (std::string error = PrepareRun(*scratch, run); !error.empty()) {
      return FailedSession(error);
    }
    const Launch launch = BuildLaunch(*scratch, run);
    return std::make_unique<ProcessSession>(std::move(scratch), launch);
  }

  std::string Describe() const override {
    return version_ + ", uid " + std::to_string(RunningAsRoot() ? kSandboxUid : getuid()) +
           ", no network";
  }

  bool relocates() const override { return true; }

 private:
  // bwrap's command line for `run` in `scratch` (prepared).
  Launch BuildLaunch(const Scratch& scratch, const SandboxRun& run) const {
    std::vector<std::string> args = {
        "bwrap",         "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent",
        "--new-session", "--hostname",    "sandbox",        "--clearenv"};
    if (run.network) args.push_back("--share-net");  // the host's network, the user's choice
    // HOME outside a workspace that outlives the run: nothing the code's tools write to HOME
    // (caches, user site-packages) becomes part of an agent's change.
    const std::string& inside_work = run.work_path;
    for (const auto& variable : SandboxEnv(run.workspace.empty() ? inside_work : "/tmp")) {
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
    // /tmp holds at most one file's worth when it lives in memory; a run that asks for it on
    // disk (writable_dirs) gets it there instead, each file still capped.
    args.insert(args.end(), {"--proc", "/proc", "--dev", "/dev"});
    const auto& writable = run.writable_dirs;
    if (std::find(writable.begin(), writable.end(), "/tmp") == writable.end()) {
      const std::string tmp_size =
          std::to_string(std::max<long>(run.limits.max_file_bytes, 1L << 20));
      args.insert(args.end(), {"--size", tmp_size, "--tmpfs", "/tmp"});
    }
    for (size_t i = 0; i < writable.size(); ++i) {
      args.insert(args.end(), {"--bind", LayerDir(scratch, i).string(), writable[i]});
    }
    args.insert(args.end(), {"--bind", WorkDir(scratch, run).string(), inside_work});
    for (const auto& name : run.read_only) {
      const std::string inside = inside_work + "/" + name;
      args.insert(args.end(), {"--ro-bind", (WorkDir(scratch, run) / name).string(), inside});
    }
    if (!run.cache.empty()) args.insert(args.end(), {"--bind", run.cache, run.cache_path});
    args.insert(args.end(), {"--chdir", inside_work, "--remount-ro", "/", "--"});
    args.insert(args.end(), run.argv.begin(), run.argv.end());
    return Launch{bwrap_, std::move(args), SandboxEnv("/"), "", run.limits};
  }

  std::string bwrap_;
  std::string version_;
  std::optional<std::string> unavailable_;
};

class UnsafeSandbox : public Sandbox {
  static constexpr const char* kNoWritableDirs =
      "writable directories outside the working copy need the bubblewrap sandbox";

 public:
  std::optional<std::string> Unavailable() const override { return std::nullopt; }

  SandboxResult Run(const SandboxRun& run) const override {
    if (run.argv.empty()) return SetupFailure("nothing to run");
    if (!run.writable_dirs.empty()) return SetupFailure(kNoWritableDirs);
    const std::string executable = FindOnPath(run.argv[0]);
    if (executable.empty()) return SetupFailure(run.argv[0] + ": not found");
    Scratch scratch;
    if (!scratch.ok()) return SetupFailure("cannot create a temporary directory");
    if (std::string error = PrepareRun(scratch, run); !error.empty()) return SetupFailure(error);
    const std::string work = WorkDir(scratch, run).string();
    Launch launch{executable, run.argv, SandboxEnv(work), work, run.limits};
    return Execute(launch, scratch.root() / "stdin");
  }

  std::unique_ptr<SandboxSession> Start(const SandboxRun& run) const override {
    if (run.argv.empty()) return FailedSession("nothing to run");
    if (!run.writable_dirs.empty()) return FailedSession(kNoWritableDirs);
    const std::string executable = FindOnPath(run.argv[0]);
    if (executable.empty()) return FailedSession(run.argv[0] + ": not found");
    auto scratch = std::make_unique<Scratch>();
    if (!scratch->ok()) return FailedSession("cannot create a temporary directory");
    if (std::string error = PrepareRun(*scratch, run); !error.empty()) {
      return FailedSession(error);
    }
    const std::string work = WorkDir(*scratch, run).string();
    const Launch launch{executable, run.argv, SandboxEnv(work), work, run.limits};
    return std::make_unique<ProcessSession>(std::move(scratch), launch);
  }

  std::string Describe() const override {
    return "UNSAFE: no sandbox (--unsafe-no-sandbox): rlimits and a wall-clock kill only, uid " +
           std::to_string(RunningAsRoot() ? kSandboxUid : getuid()) +
           ", network and the file system reachable";
  }
};

}  // namespace

ScratchDirectory::ScratchDirectory() {
  char pattern[] = "/tmp/evalrun-work-XXXXXX";
  if (mkdtemp(pattern) != nullptr) path_ = pattern;
}

ScratchDirectory::~ScratchDirectory() {
  if (!path_.empty()) RemoveTree(path_);
}

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
