#pragma once
// Running untrusted code (DESIGN.md section 9): bubblewrap with no network, a throwaway working
// copy as the only writable place, the rest of the system read-only, a dedicated unprivileged
// user so process limits hold, rlimits (memory, processes, file size, CPU), and a wall-clock kill
// that leaves no process behind. The seam tests fake.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace evalrun {

struct SandboxLimits {
  double wall_seconds = 10;
  double cpu_seconds = 10;
  long memory_bytes = 512L << 20;   // address space
  long max_processes = 64;
  long max_file_bytes = 16L << 20;
  size_t max_output_bytes = 1 << 20;  // stdout/stderr kept, each
  // Sandbox::Start only: the session's whole life in seconds; an exchange that would run past it
  // is cut there and the session killed (SandboxExchange::session_expired).
  double session_seconds = 3600;
};

struct SandboxRun {
  std::vector<std::string> argv;                 // argv[0] looked up on the sandbox's PATH
  std::map<std::string, std::string> files;      // written into the working copy first
  std::string stdin_text;  // Run only; a session's stdin is its exchanges
  SandboxLimits limits;
  // When set, this host directory is the working copy (bound at /work, writable) instead of a
  // throwaway one, and what the code writes there stays after the run: an agent task's
  // repository workspace. `files` are written into it first. When evalrun runs as root, the
  // directory's files are handed to the sandbox user before the run.
  std::string workspace;
  // Paths inside the working copy (relative, existing) that the code may read but not change:
  // bound read-only over themselves (".git" of a repository workspace).
  std::vector<std::string> read_only;
  // Where the code sees its working copy (and starts): an absolute path such as /workspace, for
  // code written against a container's layout. Only a sandbox that relocates() honours it; the
  // unsafe one runs in the working copy's host path.
  std::string work_path = "/work";
  // When set, this host directory is bound writable at `cache_path` (an absolute top-level path
  // such as /cache; a sandbox that does not relocate shows it at its host path): a cache that a
  // trusted tool keeps across runs, Go's build cache. Every run that names it shares it, so never
  // give it to a run that executes the model's program: what one run writes there, the next one
  // trusts. When evalrun runs as root, the directory is handed to the sandbox user.
  std::string cache;
  std::string cache_path = "/cache";
  // Absolute paths outside the working copy, each an empty writable directory on disk that
  // vanishes with the run, as a container's own writable layer: "/tmp" on disk instead of the
  // size-capped tmpfs (a database's files), "/var/run/postgresql" (where a server puts its
  // socket). Only a sandbox that relocates() honours it; the unsafe one refuses the run.
  std::vector<std::string> writable_dirs;
  // The host's network instead of an empty namespace of its own: only for code the user let
  // reach it (suite --sandbox-network: project tests that install packages, as zx-bench's
  // containers do). Every other isolation stays.
  bool network = false;
};

struct SandboxResult {
  int exit_code = -1;       // 128 + signal when killed by one
  bool timed_out = false;   // the wall clock ran out and everything was killed
  bool out_of_memory = false;
  std::string stdout_text;
  std::string stderr_text;
  double wall_seconds = 0;
};

// One exchange with a session (SandboxSession::Exchange).
struct SandboxExchange {
  bool ok = false;     // a whole reply line came back
  std::string reply;   // that line, without its '\n'
  // The exchange's wall clock (limits.wall_seconds) ran out and every process of the session
  // was killed; with session_expired, it was the session's life (limits.session_seconds).
  bool timed_out = false;
  bool session_expired = false;
  bool reply_too_long = false;  // max_output_bytes came without a '\n': the session was killed
  bool out_of_memory = false;   // the runtime said so on stderr
  // Set when the session ended during the exchange (it exited, or evalrun killed it): the exit
  // code, 128 + signal when killed by one. -1 while it lives.
  int exit_code = -1;
  // What the session wrote on stderr during the exchange (the first max_output_bytes), or, for
  // a session that could not start or has ended, why ("evalrun sandbox: ...").
  std::string stderr_text;
  double wall_seconds = 0;  // steady clock, the exchange
};

// A long-lived sandboxed process spoken to one line at a time: a request line on its stdin, one
// reply line on its stdout. Same isolation and rlimits as Sandbox::Run, with these differences:
// limits.wall_seconds bounds each exchange (not the session), limits.session_seconds its whole
// life, and RLIMIT_CPU (limits.cpu_seconds) counts each process's CPU over the session's whole
// life. Between exchanges nothing reads the process's output or watches its clock: what holds it
// then is RLIMIT_CPU, session_seconds at the next exchange, and the destructor. Not thread-safe;
// bubblewrap's --die-with-parent fires when the thread that called Start exits, so that thread
// must outlive the session.
class SandboxSession {
 public:
  // Kills every process of the session (the whole process group; under bubblewrap the whole pid
  // namespace) and removes its working copy.
  virtual ~SandboxSession() = default;
  // Writes `line` and '\n' to the process's stdin, then reads its stdout up to the next '\n',
  // draining stderr meanwhile; bytes after that newline are dropped. `line` must not contain
  // '\n'. On a timeout, an over-long reply, or a process that exits or closes its stdout, the
  // session is killed (alive() turns false) and the exchange says why. Never throws.
  virtual SandboxExchange Exchange(const std::string& line) = 0;
  // Whether the process is still there to answer (false after it exited, was killed, or Close).
  virtual bool alive() const = 0;
  // Closes the process's stdin, waits up to limits.wall_seconds for it to exit, then kills what
  // is left. stdout/stderr_text: what it wrote since the last exchange; wall_seconds: the
  // session's whole life. Later calls return the same.
  virtual SandboxResult Close() = 0;
};

class Sandbox {
 public:
  virtual ~Sandbox() = default;
  // Why this sandbox cannot run anything here ("bubblewrap not installed"), or nullopt.
  virtual std::optional<std::string> Unavailable() const = 0;
  // Runs in a fresh throwaway working copy. Never throws for what the code does.
  virtual SandboxResult Run(const SandboxRun& run) const = 0;
  // Starts run.argv as a session (SandboxSession) in a fresh working copy (or run.workspace).
  // Returns at once: the program's own start-up happens during the first exchange. A setup
  // failure gives a session that is not alive and whose exchanges report it (exit code 127,
  // stderr_text "evalrun sandbox: ..."). nullptr: this sandbox holds no sessions (test fakes);
  // callers then use Run. Never throws.
  virtual std::unique_ptr<SandboxSession> Start(const SandboxRun& /*run*/) const { return nullptr; }
  virtual std::string Describe() const = 0;  // "bubblewrap 0.8.0, uid 65534, no network"
  // Whether the code sees its own file system view, so SandboxRun::work_path holds.
  virtual bool relocates() const { return false; }
};

// A throwaway host directory kept across several runs (SandboxRun::workspace): code a grader
// runs step by step in one working copy, as a container session keeps its files between
// commands. Created under /tmp; removed with everything in it, read-only directories included.
class ScratchDirectory {
 public:
  ScratchDirectory();  // path() is "" when the directory could not be made
  ~ScratchDirectory();
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The bubblewrap sandbox; Unavailable() says why when bwrap or user namespaces are missing.
std::unique_ptr<Sandbox> MakeBubblewrapSandbox();
// --unsafe-no-sandbox: rlimits and the wall-clock kill only, no isolation. Recorded as such.
std::unique_ptr<Sandbox> MakeUnsafeSandbox();

// The last `max_bytes` of `text` as valid UTF-8 (invalid bytes become U+FFFD): for evidence.
std::string OutputTail(const std::string& text, size_t max_bytes);
// Where `name` is on the sandbox's PATH (/usr/local/bin:/usr/bin:/bin, the host's own files, as
// the sandbox binds them read-only), or "" when it is not installed.
std::string FindSandboxProgram(const std::string& name);

}  // namespace evalrun
