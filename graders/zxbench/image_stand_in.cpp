// Stand-ins for zx-bench's Docker images (graders/zxbench/image_stand_in.h).
#include "graders/zxbench/image_stand_in.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>

#include "graders/framework/answer.h"
#include "plugins/sandbox.h"

namespace evalrun::zx {
namespace {

using nlohmann::json;

// The Alpine PATH: BusyBox's applets, the image's runtimes (positional arguments after the
// command) and the coreutils Alpine's BusyBox has that Debian's build lacks, from the host.
// Alpine builds BusyBox's nc with NC_110_COMPAT (`nc -z` probes a port, as scripts wait for a
// server with); Debian's has only the plain applet, so the host's netcat-openbsd stands in.
constexpr const char* kAlpinePrelude =
    R"SH(cmd=$1
shift
d=/tmp/.zxbench-bin
mkdir -p "$d" && busybox --install -s "$d" && ln -sf "$(command -v busybox)" "$d/busybox" || exit 125
for p in "$@" comm install split nohup nice cksum pgrep pkill flock base32 sum tsort; do
  [ -e "$d/$p" ] || { q=$(command -v "$p") && ln -s "$q" "$d/$p"; }
done
[ -e "$d/python3" ] && ln -sf "$d/python3" "$d/python"
q=$(command -v nc.openbsd) && ln -sf "$q" "$d/nc"
PATH=$d
export PATH GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=safe.directory GIT_CONFIG_VALUE_0=/workspace
exec sh -c "$cmd"
)SH";

// gcc:13's PATH: the host's programs, less the ones the image does not have and that scripts
// look for to choose a path (a hidden test runs valgrind "when it is there", else LSan):
// symbolic links to /usr/local/bin and /usr/bin in one directory, those few removed.
constexpr const char* kDebianPrelude =
    R"SH(cmd=$1
d=/tmp/.zxbench-bin
mkdir -p "$d" || exit 125
for p in /usr/local/bin /usr/bin /bin; do [ -d "$p" ] && cp -rsn "$p"/. "$d"/ 2>/dev/null; done
rm -f "$d/valgrind" "$d"/valgrind-* "$d/clang" "$d/clang++" "$d"/clang-[0-9]* "$d"/clang++-[0-9]* \
  "$d/clang-tidy" "$d/clang-format" "$d/cppcheck" "$d/gdb"
[ -x "$d/sh" ] || exit 125
PATH=$2$d:/usr/sbin:/sbin
export PATH
exec sh -c "$cmd"
)SH";

// Where `program` is for the stand-in: its own directories first, then the sandbox's PATH; ""
// when nowhere.
std::string FindProgram(const ImageStandIn& stand_in, const std::string& program) {
  for (const std::string& dir : stand_in.path_dirs) {
    const std::string path = dir + "/" + program;
    if (access(path.c_str(), X_OK) == 0) return path;
  }
  return FindSandboxProgram(program);
}

// The host's PostgreSQL server programs: /usr/lib/postgresql/15/bin when there (the image's
// major version), else the newest installed; "" when none is.
std::string PostgresBin() {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::string best;
  int best_major = -1;
  for (fs::directory_iterator it("/usr/lib/postgresql", ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const int major = std::atoi(name.c_str());
    if (major <= 0 || access((it->path() / "bin/initdb").c_str(), X_OK) != 0) continue;
    const int rank = major == 15 ? 1000 : major;
    if (rank > best_major) {
      best_major = rank;
      best = (it->path() / "bin").string();
    }
  }
  return best;
}

std::string ProgramVersion(const Sandbox& sandbox, const ImageStandIn& stand_in,
                           const std::string& program) {
  static std::mutex mutex;
  static std::map<std::string, std::string> cache;
  const std::string path = FindProgram(stand_in, program);
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (const auto it = cache.find(path); it != cache.end()) return it->second;
  }
  std::string text;
  if (program == "sh") {  // no --version: name what it is
    std::error_code ec;
    text = std::filesystem::canonical(path, ec).string();
  } else {
    SandboxRun run;
    run.argv = program == "busybox" ? std::vector<std::string>{"busybox"}
               : program == "go"    ? std::vector<std::string>{"go", "version"}
                                    : std::vector<std::string>{path, "--version"};
    run.limits.wall_seconds = 10;
    run.limits.memory_bytes = 4L << 30;  // node reserves address space up front
    const SandboxResult r = sandbox.Run(run);
    text = r.stdout_text.empty() ? r.stderr_text : r.stdout_text;
    text = text.substr(0, text.find('\n'));
  }
  if (text.empty()) text = path;
  const std::lock_guard<std::mutex> lock(mutex);
  return cache.emplace(path, EvidenceText(text, 120)).first->second;
}

}  // namespace

ImageStandIn StandInFor(const std::string& image) {
  using Kind = ImageStandIn::Kind;
  const std::pair<std::string, std::string> busybox = {"busybox", "busybox"};
  if (image == "python:3.12-alpine") {
    return {Kind::kAlpine, image, {busybox, {"python3", "python3"}}, {"python3"}, {}, {}, {}};
  }
  // node:22-alpine (zx-bench's shell loop, CLI-CN-031): the host's node too, whatever its
  // version (Debian 12 has 18, Debian 13 20); the entry's setup only writes files with it.
  if (image == "node:20-alpine" || image == "node:22-alpine") {
    return {Kind::kAlpine, image, {busybox, {"node", "nodejs"}}, {"node"}, {}, {}, {}};
  }
  if (image == "bash:5")
    return {Kind::kAlpine, image, {busybox, {"bash", "bash"}}, {"bash"}, {}, {}, {}};
  // The image sets GOTOOLCHAIN=local and GOPATH=/go (world-writable there; /tmp/go here). It
  // has no C compiler, so Go 1.22 builds without cgo, which Debian 12's Go 1.19 must be told.
  // GOPROXY=off: the container has no network either, and this says so at once.
  if (image == "golang:1.22-alpine") {
    return {
        Kind::kAlpine,
        image,
        {busybox, {"go", "golang-go"}},
        {"go"},
        {"GOTOOLCHAIN=local", "CGO_ENABLED=0", "GOPATH=/tmp/go", "GOPROXY=off", "GOTELEMETRY=off"},
        {},
        {}};
  }
  // maven:3.9-eclipse-temurin-17-alpine (project_repair's java): BusyBox, the host's JDK (Debian
  // 12's is 17, as the image's; Debian 13's 21) and bash, which the image has. Not mvn: the
  // image's runs offline with an empty repository, so no build can fetch its plugins there.
  if (image == "maven:3.9-eclipse-temurin-17-alpine") {
    return {Kind::kAlpine,
            image,
            {busybox,
             {"java", "default-jre-headless"},
             {"javac", "default-jdk-headless"},
             {"bash", "bash"}},
            {"java", "javac", "bash"},
            {"JAVA_TOOL_OPTIONS=-XX:MaxRAM=512m -XX:ActiveProcessorCount=1"},
            {},
            {}};
  }
  if (image == "gcc:13") {
    return {Kind::kDebian,
            image,
            {{"sh", "dash"},
             {"bash", "bash"},
             {"python3", "python3"},
             {"git", "git"},
             {"gcc", "gcc"},
             {"g++", "g++"},
             {"make", "make"}},
            {},
            {},
            {},
            {}};
  }
  // rust:1-alpine: BusyBox, the host's cargo and rustc (Debian 12 has 1.63, Debian 13 1.85; the
  // image has the newest) and the C compiler and binutils the image has as rustc's linker. The
  // image's CARGO_HOME holds only its toolchain; the crates' index and downloads go under HOME.
  if (image == "rust:1-alpine") {
    return {Kind::kAlpine,
            image,
            {busybox, {"cargo", "cargo"}, {"rustc", "rustc"}, {"cc", "gcc"}, {"ld", "binutils"}},
            {"cargo", "rustc", "rustdoc", "cc", "gcc", "ld", "as"},
            {"CARGO_HOME=/tmp/.cargo", "CARGO_NET_OFFLINE=true"},
            {},
            {}};
  }
  // postgres:15: zx-bench's SQL tests start the server themselves (initdb, pg_ctl) as the
  // image's user, with its files under /tmp and its socket in /var/run/postgresql.
  if (image == "postgres:15") {
    ImageStandIn s{Kind::kDebian,
                   image,
                   {{"sh", "dash"},
                    {"bash", "bash"},
                    {"psql", "postgresql-client"},
                    {"initdb", "postgresql"},
                    {"pg_ctl", "postgresql"},
                    {"postgres", "postgresql"}},
                   {},
                   {},
                   {},
                   {}};
    if (std::string bin = PostgresBin(); !bin.empty()) s.path_dirs.push_back(std::move(bin));
    s.writable_dirs = {"/tmp", "/var/run/postgresql"};
    return s;
  }
  return {Kind::kNone, image, {}, {}, {}, {}, {}};
}

std::string StandInUnavailable(const ImageStandIn& stand_in) {
  if (stand_in.kind == ImageStandIn::Kind::kNone) {
    return "needs the Docker image " + stand_in.image + ": evalrun has no stand-in for it";
  }
  for (const auto& [program, package] : stand_in.programs) {
    if (FindProgram(stand_in, program).empty()) {
      return program + " is not installed (Debian package " + package + "): it stands in for " +
             stand_in.image;
    }
  }
  return "";
}

std::vector<std::string> StandInShell(const ImageStandIn& stand_in, const std::string& command,
                                      const std::vector<std::string>& env) {
  std::vector<std::string> argv = {"env"};
  argv.insert(argv.end(), stand_in.env.begin(), stand_in.env.end());
  argv.insert(argv.end(), env.begin(), env.end());
  if (stand_in.kind == ImageStandIn::Kind::kAlpine) {
    argv.insert(argv.end(), {"busybox", "sh", "-c", kAlpinePrelude, "sh", command});
    argv.insert(argv.end(), stand_in.runtimes.begin(), stand_in.runtimes.end());
    return argv;
  }
  std::string path_dirs;
  for (const std::string& dir : stand_in.path_dirs) path_dirs += dir + ":";
  argv.insert(argv.end(), {"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=safe.directory",
                           "GIT_CONFIG_VALUE_0=/workspace", "sh", "-c", kDebianPrelude, "sh",
                           command, path_dirs});
  return argv;
}

json StandInEvidence(const Sandbox& sandbox, const ImageStandIn& stand_in) {
  json programs = json::object();
  for (const auto& [program, package] : stand_in.programs) {
    programs[program] = ProgramVersion(sandbox, stand_in, program);
  }
  const bool alpine = stand_in.kind == ImageStandIn::Kind::kAlpine;
  std::string userland = "the host's Debian userland";
  if (alpine) {
    userland = "BusyBox applets and the host's ";
    for (size_t i = 0; i < stand_in.runtimes.size(); ++i) {
      userland += (i == 0 ? "" : ", ") + stand_in.runtimes[i];
    }
    if (!FindSandboxProgram("nc.openbsd").empty()) userland += "; nc is the host's netcat-openbsd";
  }
  return {{"userland", userland}, {"programs", std::move(programs)}};
}

}  // namespace evalrun::zx
