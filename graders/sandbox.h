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
};

struct SandboxRun {
  std::vector<std::string> argv;                 // argv[0] looked up on the sandbox's PATH
  std::map<std::string, std::string> files;      // written into the working copy first
  std::string stdin_text;
  SandboxLimits limits;
  // When set, this host directory is the working copy (bound at /work, writable) instead of a
  // throwaway one, and what the code writes there stays after the run: an agent task's
  // repository workspace. `files` are written into it first. When evalrun runs as root, the
  // directory's files are handed to the sandbox user before the run.
  std::string workspace;
  // Paths inside the working copy (relative, existing) that the code may read but not change:
  // bound read-only over themselves (".git" of a repository workspace).
  std::vector<std::string> read_only;
};

struct SandboxResult {
  int exit_code = -1;       // 128 + signal when killed by one
  bool timed_out = false;   // the wall clock ran out and everything was killed
  bool out_of_memory = false;
  std::string stdout_text;
  std::string stderr_text;
  double wall_seconds = 0;
};

class Sandbox {
 public:
  virtual ~Sandbox() = default;
  // Why this sandbox cannot run anything here ("bubblewrap not installed"), or nullopt.
  virtual std::optional<std::string> Unavailable() const = 0;
  // Runs in a fresh throwaway working copy. Never throws for what the code does.
  virtual SandboxResult Run(const SandboxRun& run) const = 0;
  virtual std::string Describe() const = 0;  // "bubblewrap 0.8.0, uid 65534, no network"
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
