#include "plugins/env_probe.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string_view>
#include <thread>
#include <utility>

extern char** environ;

namespace evalrun {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// More than any probe prints; beyond it output is dropped rather than held in memory.
constexpr size_t kMaxOutputBytes = 16 << 20;

// Owns one file descriptor.
class UniqueFd {
 public:
  explicit UniqueFd(int fd = -1) : fd_(fd) {}
  ~UniqueFd() { Reset(); }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  int Get() const { return fd_; }
  void Reset() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

// Owns posix_spawn's two setup objects.
struct SpawnSetup {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  SpawnSetup() {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
};

int ExitCodeOf(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

// After SIGKILL the child normally dies at once; one stuck in the kernel (a hung GPU driver can
// do that) is left to a detached thread to reap, so the caller is never blocked by it.
int ReapKilled(pid_t pid) {
  const auto give_up = Clock::now() + std::chrono::seconds(2);
  while (Clock::now() < give_up) {
    int status = 0;
    const pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) return ExitCodeOf(status);
    if (w < 0 && errno != EINTR) return 128 + SIGKILL;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::thread([pid] {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }).detach();
  return 128 + SIGKILL;
}

std::string_view Trim(std::string_view s) {
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      parts.push_back(s.substr(start));
      return parts;
    }
    parts.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> lines = Split(text, '\n');
  for (auto& line : lines) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  }
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  return lines;
}

// nvidia-smi's words for "no value" (bracketed since about driver 450, bare before).
bool IsNotAvailable(std::string_view value) {
  return value.empty() || value == "[N/A]" || value == "N/A" || value == "[Not Supported]" ||
         value == "Not Supported" || value == "[Unknown Error]" ||
         value == "[Insufficient Permissions]";
}

// An integer when the text is one, else a double, else null. Locale-independent.
json ParseNumber(std::string_view text) {
  text = Trim(text);
  if (IsNotAvailable(text)) return nullptr;
  const char* end = text.data() + text.size();
  int64_t i = 0;
  auto [p1, e1] = std::from_chars(text.data(), end, i);
  if (e1 == std::errc() && p1 == end) return i;
  double d = 0;
  auto [p2, e2] = std::from_chars(text.data(), end, d);
  if (e2 == std::errc() && p2 == end) return d;
  return nullptr;
}

// A JSON string of `text` with invalid UTF-8 replaced by U+FFFD, so the record can always be
// written out (nlohmann's dump throws on invalid UTF-8).
json SafeString(std::string_view text) {
  return json::parse(json(std::string(text)).dump(-1, ' ', false, json::error_handler_t::replace));
}

json ParseText(std::string_view text) {
  text = Trim(text);
  if (IsNotAvailable(text)) return nullptr;
  return SafeString(text);
}

std::string FirstNonEmptyLine(std::string_view text) {
  for (std::string_view line : Lines(text)) {
    line = Trim(line);
    if (!line.empty()) return std::string(line);
  }
  return "";
}

// The record of a tool that exists but did not answer usefully.
json FailureRecord(const std::string& tool, const CommandResult& result) {
  json record = {{"present", true}, {"exit_code", result.exit_code}};
  if (result.timed_out) {
    record["error"] = tool + " timed out";
  } else {
    std::string line = FirstNonEmptyLine(result.out);
    record["error"] = SafeString(
        line.empty() ? tool + " exited with code " + std::to_string(result.exit_code) : line);
  }
  return record;
}

std::optional<std::string> ReadFile(const char* path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// "key<spaces>: value" lines (/proc/cpuinfo, /proc/meminfo).
std::pair<std::string_view, std::string_view> KeyValue(std::string_view line) {
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return {Trim(line), {}};
  return {Trim(line.substr(0, colon)), Trim(line.substr(colon + 1))};
}

// The columns env_probe asks nvidia-smi for, in order, with the JSON key and kind of each.
struct NvidiaField {
  const char* query;
  const char* key;
  bool numeric;
};
constexpr NvidiaField kNvidiaFields[] = {
    {"index", "index", true},
    {"name", "name", false},
    {"uuid", "uuid", false},
    {"driver_version", "driver_version", false},
    {"memory.total", "memory_total_mib", true},
    {"memory.used", "memory_used_mib", true},
    {"power.limit", "power_limit_w", true},
    {"clocks.sm", "clocks_sm_mhz", true},
    {"clocks.max.sm", "clocks_max_sm_mhz", true},
    {"clocks.mem", "clocks_mem_mhz", true},
    {"pcie.link.gen.current", "pcie_gen_current", true},
    {"pcie.link.gen.max", "pcie_gen_max", true},
    {"pcie.link.width.current", "pcie_width_current", true},
    {"pcie.link.width.max", "pcie_width_max", true},
};

std::vector<std::string> NvidiaQueryCommand() {
  std::string fields;
  for (const auto& field : kNvidiaFields) {
    if (!fields.empty()) fields += ',';
    fields += field.query;
  }
  return {"nvidia-smi", "--query-gpu=" + fields, "--format=csv,noheader,nounits"};
}

json ParseNvidiaRow(std::string_view line) {
  const std::vector<std::string_view> cells = Split(line, ',');
  json gpu = json::object();
  for (size_t i = 0; i < std::size(kNvidiaFields); ++i) {
    const NvidiaField& field = kNvidiaFields[i];
    if (i >= cells.size()) {
      gpu[field.key] = nullptr;
    } else {
      gpu[field.key] = field.numeric ? ParseNumber(cells[i]) : ParseText(cells[i]);
    }
  }
  return gpu;
}

// "CUDA Version: 12.4" in the banner, "CUDA Version : 12.4" in `nvidia-smi -q`, and
// "CUDA UMD Version: 13.3" in newer banners.
json ParseCudaVersion(const std::string& text) {
  static const std::regex kCuda(R"(CUDA (?:UMD )?Version\s*:\s*([0-9]+(?:\.[0-9]+)*))");
  std::smatch match;
  if (std::regex_search(text, match, kCuda)) return match[1].str();
  return nullptr;
}

// The device-to-device part of the `nvidia-smi topo -m` matrix: the header names the devices
// (GPU0, NIC0, ...) before "CPU Affinity"; each row starting with a device name gives its links.
json ParseTopologyLinks(std::string_view text) {
  const std::vector<std::string_view> lines = Lines(text);
  size_t header_at = lines.size();
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find("GPU0") != std::string_view::npos) {
      header_at = i;
      break;
    }
  }
  if (header_at == lines.size()) return nullptr;
  std::vector<std::string> devices;
  for (std::string_view cell : Split(lines[header_at], '\t')) {
    cell = Trim(cell);
    if (cell.empty()) continue;
    if (cell.find(' ') != std::string_view::npos) break;  // "CPU Affinity" and after
    devices.emplace_back(cell);
  }
  if (devices.empty()) return nullptr;
  json links = json::object();
  for (size_t i = header_at + 1; i < lines.size(); ++i) {
    if (Trim(lines[i]).empty()) break;
    const std::vector<std::string_view> cells = Split(lines[i], '\t');
    const std::string row(Trim(cells[0]));
    if (std::find(devices.begin(), devices.end(), row) == devices.end()) break;
    json row_links = json::object();
    for (size_t c = 0; c < devices.size() && c + 1 < cells.size(); ++c) {
      const std::string_view link = Trim(cells[c + 1]);
      if (devices[c] == row || link.empty() || link == "X") continue;
      row_links[devices[c]] = SafeString(link);
    }
    links[row] = std::move(row_links);
  }
  return links.empty() ? json(nullptr) : links;
}

// rocm-smi's keys changed case over releases ("Card series" became "Card Series").
const json* FindKeyNoCase(const json& object, std::string_view key) {
  if (!object.is_object()) return nullptr;
  for (auto it = object.begin(); it != object.end(); ++it) {
    const std::string& name = it.key();
    if (name.size() == key.size() &&
        std::equal(name.begin(), name.end(), key.begin(), [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) ==
                 std::tolower(static_cast<unsigned char>(b));
        })) {
      return &it.value();
    }
  }
  return nullptr;
}

json RocmText(const json& card, std::initializer_list<std::string_view> keys) {
  for (std::string_view key : keys) {
    const json* value = FindKeyNoCase(card, key);
    if (value != nullptr && value->is_string()) return ParseText(value->get<std::string>());
  }
  return nullptr;
}

json RocmNumber(const json& card, std::string_view key) {
  const json* value = FindKeyNoCase(card, key);
  if (value == nullptr) return nullptr;
  if (value->is_number()) return *value;
  if (value->is_string()) return ParseNumber(value->get<std::string>());
  return nullptr;
}

}  // namespace

std::optional<CommandResult> RunCommand(const std::vector<std::string>& argv, double timeout_s) {
  if (argv.empty() || argv[0].empty()) return std::nullopt;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return std::nullopt;
  UniqueFd read_end(fds[0]);
  UniqueFd write_end(fds[1]);

  pid_t pid = -1;
  {
    SpawnSetup setup;
    posix_spawn_file_actions_addopen(&setup.actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&setup.actions, write_end.Get(), 1);
    posix_spawn_file_actions_addopen(&setup.actions, 2, "/dev/null", O_WRONLY, 0);
    // Own process group, so a timeout can kill what the program started too; default signal
    // handling and an empty mask, whatever this process does with signals.
    sigset_t empty;
    sigemptyset(&empty);
    sigset_t defaults;
    sigemptyset(&defaults);
    for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD}) sigaddset(&defaults, sig);
    posix_spawnattr_setflags(
        &setup.attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    posix_spawnattr_setpgroup(&setup.attr, 0);
    posix_spawnattr_setsigmask(&setup.attr, &empty);
    posix_spawnattr_setsigdefault(&setup.attr, &defaults);

    std::vector<char*> args;
    args.reserve(argv.size() + 1);
    for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    // glibc's posix_spawnp reports a failed exec (ENOENT, EACCES) as its return value.
    if (posix_spawnp(&pid, argv[0].c_str(), &setup.actions, &setup.attr, args.data(), environ) !=
        0) {
      return std::nullopt;
    }
  }
  write_end.Reset();

  CommandResult result;
  const auto deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(std::clamp(timeout_s, 0.0, 1e7)));
  bool eof = false;
  bool reaped = false;
  char buffer[65536];
  while (!(eof && reaped)) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) break;
    // Short slices, so a child that has exited is noticed while a grandchild it left behind
    // still holds the pipe open.
    const int slice_ms = static_cast<int>(std::min<int64_t>(left.count(), 50));
    if (!eof) {
      pollfd p{read_end.Get(), POLLIN, 0};
      const int n = poll(&p, 1, slice_ms);
      if (n > 0) {
        const ssize_t got = read(read_end.Get(), buffer, sizeof buffer);
        if (got > 0) {
          if (result.out.size() < kMaxOutputBytes) result.out.append(buffer, size_t(got));
          continue;
        }
        if (got == 0 || (errno != EINTR && errno != EAGAIN)) eof = true;
      } else if (n == 0 && reaped) {
        break;  // the child is gone and nothing more is coming right now
      }
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(std::min(slice_ms, 5)));
    }
    if (!reaped) {
      int status = 0;
      const pid_t w = waitpid(pid, &status, WNOHANG);
      if (w == pid) {
        reaped = true;
        result.exit_code = ExitCodeOf(status);
      } else if (w < 0 && errno == ECHILD) {  // someone else reaped it (SIGCHLD ignored)
        reaped = true;
        result.exit_code = -1;
      }
    }
  }
  if (!reaped) {
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    result.timed_out = true;
    result.exit_code = ReapKilled(pid);
  }
  return result;
}

json ProbeHost() {
  json host = {{"cpu_model", nullptr}, {"cpu_cores", nullptr}, {"cpu_physical_cores", nullptr},
               {"ram_bytes", nullptr}, {"os", nullptr},        {"kernel", nullptr},
               {"arch", nullptr},      {"hostname", nullptr}};
  if (const unsigned n = std::thread::hardware_concurrency(); n > 0) host["cpu_cores"] = n;

  if (auto cpuinfo = ReadFile("/proc/cpuinfo")) {
    std::set<std::pair<std::string, std::string>> cores;
    std::string physical_id;
    for (std::string_view line : Lines(*cpuinfo)) {
      auto [key, value] = KeyValue(line);
      if (key == "model name" && host["cpu_model"].is_null()) host["cpu_model"] = SafeString(value);
      if (key == "physical id") physical_id = std::string(value);
      if (key == "core id") cores.emplace(physical_id, std::string(value));
    }
    if (!cores.empty()) host["cpu_physical_cores"] = cores.size();
  }
  if (auto meminfo = ReadFile("/proc/meminfo")) {
    for (std::string_view line : Lines(*meminfo)) {
      auto [key, value] = KeyValue(line);
      if (key != "MemTotal") continue;
      const json kib = ParseNumber(Split(value, ' ')[0]);  // "32791616 kB"
      if (kib.is_number_integer()) host["ram_bytes"] = kib.get<int64_t>() * 1024;
      break;
    }
  }
  if (auto os_release = ReadFile("/etc/os-release")) {
    for (std::string_view line : Lines(*os_release)) {
      if (line.rfind("PRETTY_NAME=", 0) != 0) continue;
      std::string_view value = Trim(line.substr(12));
      if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
          value.back() == value.front()) {
        value = value.substr(1, value.size() - 2);
      }
      host["os"] = SafeString(value);
    }
  }
  utsname names{};
  if (uname(&names) == 0) {
    host["kernel"] = names.release;
    host["arch"] = names.machine;
    host["hostname"] = names.nodename;
  }
  return host;
}

json ProbeNvidia(const CommandRunner& run) {
  const std::optional<CommandResult> query = run(NvidiaQueryCommand());
  if (!query) return {{"present", false}};
  if (query->timed_out || query->exit_code != 0) return FailureRecord("nvidia-smi", *query);

  json record = {{"present", true}};
  json gpus = json::array();
  for (std::string_view line : Lines(query->out)) {
    if (Trim(line).empty()) continue;
    gpus.push_back(ParseNvidiaRow(line));
  }

  // The CUDA version the driver supports is only in the banner (and in `-q`), not a query field.
  json cuda = nullptr;
  if (auto banner = run({"nvidia-smi"}); banner && !banner->timed_out && banner->exit_code == 0) {
    cuda = ParseCudaVersion(banner->out);
  }
  for (json& gpu : gpus) gpu["cuda_version"] = cuda;
  record["cuda_version"] = cuda;
  record["count"] = gpus.size();
  record["gpus"] = std::move(gpus);

  record["topology"] = nullptr;
  if (auto topo = run({"nvidia-smi", "topo", "-m"});
      topo && !topo->timed_out && topo->exit_code == 0) {
    record["topology"] = SafeString(topo->out);
    if (json links = ParseTopologyLinks(topo->out); !links.is_null()) {
      record["topology_links"] = std::move(links);
    }
  }
  return record;
}

json ProbeRocm(const CommandRunner& run) {
  const std::optional<CommandResult> result = run(
      {"rocm-smi", "--showproductname", "--showmeminfo", "vram", "--showdriverversion", "--json"});
  if (!result) return {{"present", false}};
  if (result->timed_out || result->exit_code != 0) return FailureRecord("rocm-smi", *result);

  // rocm-smi may print warnings before its JSON; take the outermost braces.
  const size_t open = result->out.find('{');
  const size_t close = result->out.rfind('}');
  json raw = json::value_t::discarded;
  if (open != std::string::npos && close != std::string::npos && close > open) {
    raw = json::parse(result->out.substr(open, close - open + 1), nullptr, false);
  }
  if (raw.is_discarded() || !raw.is_object()) {
    return {{"present", true},
            {"error", SafeString("rocm-smi printed no JSON: " + FirstNonEmptyLine(result->out))},
            {"exit_code", result->exit_code}};
  }

  // Cards in numeric order ("card10" after "card9").
  std::vector<std::pair<int64_t, std::string>> cards;
  for (auto it = raw.begin(); it != raw.end(); ++it) {
    const std::string& key = it.key();
    if (key.rfind("card", 0) != 0 || !it.value().is_object()) continue;
    const json index = ParseNumber(std::string_view(key).substr(4));
    cards.emplace_back(index.is_number_integer() ? index.get<int64_t>() : -1, key);
  }
  std::sort(cards.begin(), cards.end());

  json gpus = json::array();
  for (const auto& [index, key] : cards) {
    const json& card = raw[key];
    json gpu = {{"index", index < 0 ? json(nullptr) : json(index)},
                {"name", RocmText(card, {"Card Series", "Device Name", "Card Model"})},
                {"model", RocmText(card, {"Card Model", "Device ID"})},
                {"vendor", RocmText(card, {"Card Vendor"})},
                {"sku", RocmText(card, {"Card SKU"})},
                {"gfx_version", RocmText(card, {"GFX Version"})},
                {"memory_total_bytes", RocmNumber(card, "VRAM Total Memory (B)")},
                {"memory_used_bytes", RocmNumber(card, "VRAM Total Used Memory (B)")}};
    for (const char* what : {"total", "used"}) {
      const json& bytes = gpu[std::string("memory_") + what + "_bytes"];
      gpu[std::string("memory_") + what + "_mib"] =
          bytes.is_number_integer() ? json(bytes.get<int64_t>() / (int64_t{1024} * 1024))
                                    : json(nullptr);
    }
    gpus.push_back(std::move(gpu));
  }

  json record = {{"present", true}, {"count", gpus.size()}, {"driver_version", nullptr}};
  if (const json* system = FindKeyNoCase(raw, "system")) {
    record["driver_version"] = RocmText(*system, {"Driver version"});
  }
  record["gpus"] = std::move(gpus);
  record["raw"] = std::move(raw);
  return record;
}

json CaptureEnvironment() {
  const CommandRunner run = [](const std::vector<std::string>& argv) { return RunCommand(argv); };
  return {{"scope", "client host"},
          {"host", ProbeHost()},
          {"nvidia", ProbeNvidia(run)},
          {"rocm", ProbeRocm(run)}};
}

}  // namespace evalrun
