// zx-bench's project_repair grader (the long_task_* entries of "program"), reproduced
// (docs/zx-bench.md, "project_repair"). The entry carries a small project
// (requirements.files), hidden test files and scripts; the model answers with whole files, each
// under a heading that names its path. zx-bench writes the project, the model's files and the
// hidden test files into a fresh container of the language's image per hidden test, runs the
// test's script there, and scores five axes.
//
// Sources read: packages/core/src/evaluators/projectRepair.ts (projectRepairEvaluator 1.2.0, the
// bank's graderVersion), patchParser.ts (parseFileBlocks) and harnessErrors.ts
// (detectEnvironmentError) in suncityldp/zx-bench at 0bc6b5c7, and execution/containerRunner.ts
// (runInContainer) in bboysky/ajubyte-model-lab at 22bb91d1.
//
// Each hidden test runs in its own bubblewrap sandbox over a fresh working copy at /workspace,
// with a stand-in for the image (graders/zxbench/image_stand_in.h): no network, uid 65534, 256
// processes, 120 s, 8 MiB of output. An image without a stand-in, a program the host lacks and
// entries that need the network are skipped, naming why.
//
// Thread-safe; Run never throws.
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/js_value.h"
#include "graders/framework/answer.h"
#include "graders/framework/grader.h"
#include "graders/framework/regex.h"
#include "graders/zxbench/common.h"
#include "graders/zxbench/entry_grader.h"
#include "graders/zxbench/factories.h"
#include "graders/zxbench/image_stand_in.h"
#include "graders/zxbench/offline_packages.h"
#include "plugins/sandbox.h"

namespace evalrun {
namespace {

using js::JsRound;
using js::JsTrim;
using js::ToWellFormedUtf8;
using nlohmann::json;
using zx::AsciiLower;
using zx::IsWordChar;
using zx::JsSplit;
using zx::Member;
using zx::SkipJsSpaces;
using zx::StartsWithNoCase;

constexpr std::string_view kName = "zxbench:project_repair";
constexpr std::string_view kVersion = "1";
constexpr std::string_view kZxEvaluator = "project_repair 1.2.0";
constexpr double kTestSeconds = 120;      // runScript's timeout
constexpr double kSqlTestSeconds = 180;   // ... for SQL, whose tests start a server first
constexpr size_t kOutputBytes = 8 << 20;  // runInContainer's maxOutputBytes
constexpr size_t kEvidenceStream = 2000;  // EVIDENCE_STREAM_LIMIT

// (scenario.language || 'python').toLowerCase()
std::string Language(const json& spec) {
  std::string lang =
      Member(spec, "language").is_string() && !spec["language"].get<std::string>().empty()
          ? spec["language"].get<std::string>()
          : "python";
  for (char& c : lang) c = AsciiLower(c);
  return lang;
}

// runScript's `pg` option: SQL entries' tests find a PostgreSQL server running.
bool WithPostgres(const json& spec) {
  const std::string lang = Language(spec);
  return lang == "sql" || lang == "postgresql";
}

// projectRepair.ts LANG_IMAGE: the image when requirements.image is not set.
std::string ImageFor(const json& spec) {
  const json& image = Member(Member(spec, "requirements"), "image");
  if (image.is_string()) return image.get<std::string>();
  const std::string lang = Language(spec);
  static const std::map<std::string, std::string> kImages = {
      {"python", "python:3.12-alpine"},
      {"javascript", "node:20-alpine"},
      {"typescript", "node:20-alpine"},
      {"go", "golang:1.22-alpine"},
      {"java", "maven:3.9-eclipse-temurin-17-alpine"},
      {"rust", "rust:1-alpine"},
      {"c", "gcc:13"},
      {"cpp", "gcc:13"},
      {"csharp", "mcr.microsoft.com/dotnet/sdk:8.0"},
      {"php", "php:8.2-cli-alpine"},
      {"bash", "bash:5"},
      {"shell", "bash:5"},
      {"sql", "postgres:15"}};
  const auto it = kImages.find(lang);
  return it == kImages.end() ? "python:3.12-alpine" : it->second;
}

// ---- The reply: patchParser.ts ------------------------------------------------------------------

bool HasJsSpace(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    if (js::IsJsSpace(js::NextCodePoint(s, i))) return true;
  }
  return false;
}

// normalizePath: backslashes to slashes, one leading "./" dropped, trimmed.
std::string NormalizePath(std::string_view p) {
  std::string out(p);
  std::replace(out.begin(), out.end(), '\\', '/');
  if (out.rfind("./", 0) == 0) out.erase(0, 2);
  return std::string(JsTrim(out));
}

// /\.\w{1,12}$/
bool HasExtension(std::string_view s) {
  size_t n = 0;
  while (n < s.size() && n <= 12 && IsWordChar(s[s.size() - 1 - n])) ++n;
  for (size_t k = 1; k <= std::min<size_t>(n, 12); ++k) {
    if (s.size() > k && s[s.size() - 1 - k] == '.') return true;
  }
  return false;
}

bool LooksLikeFilePath(std::string_view s, bool had_file_label) {
  if (s.empty()) return false;
  if (HasJsSpace(s) && !had_file_label) return false;
  if (HasExtension(s)) return true;
  if (had_file_label) return true;
  std::string lower(s);
  for (char& c : lower) c = AsciiLower(c);
  for (std::string_view name : {"makefile", "dockerfile", ".gitignore", ".dockerignore", "license",
                                "readme", "rakefile", "gemfile"}) {
    if (lower == name) return true;
  }
  return false;
}

// /^(?:file|File|文件)\s*:\s*/i: the length of the label, or 0.
size_t FileLabel(std::string_view h) {
  for (std::string_view label : {"file", "文件"}) {
    if (!StartsWithNoCase(h, 0, label)) continue;
    const size_t p = SkipJsSpaces(h, label.size());
    if (p < h.size() && h[p] == ':') return SkipJsSpaces(h, p + 1);
  }
  return 0;
}

// extractPathFromHeading.
std::optional<std::string> PathFromHeading(std::string_view heading) {
  std::string_view h = JsTrim(heading);
  const bool had_file_label = FileLabel(h) > 0;
  // /^\(?\d+[\.\)]\s*/
  {
    size_t p = 0;
    if (p < h.size() && h[p] == '(') ++p;
    const size_t digits = p;
    while (p < h.size() && h[p] >= '0' && h[p] <= '9') ++p;
    if (p > digits && p < h.size() && (h[p] == '.' || h[p] == ')'))
      h = h.substr(SkipJsSpaces(h, p + 1));
  }
  if (const size_t label = FileLabel(h); label > 0) h = h.substr(label);
  h = JsTrim(h);
  std::string path;
  // /`([^`]+)`/: the first pair of backticks with something between them.
  size_t open = h.find('`'), close = std::string_view::npos;
  while (open != std::string_view::npos) {
    close = h.find('`', open + 1);
    if (close == std::string_view::npos || close > open + 1) break;
    open = close;
  }
  if (open != std::string_view::npos && close != std::string_view::npos) {
    path = std::string(JsTrim(h.substr(open + 1, close - open - 1)));
  } else {
    // h.split(/\s*(?:——|—+|--|：|:)\s*/)[0]: up to the first separator (white space before it
    // is trimmed below).
    size_t cut = h.size();
    for (std::string_view sep : {"—", "--", "：", ":"}) {
      const size_t at = h.find(sep);
      if (at != std::string_view::npos) cut = std::min(cut, at);
    }
    std::string_view part = JsTrim(h.substr(0, cut));
    // .replace(/^["'*]+|["'*]+$/g, '')
    while (!part.empty() && (part.front() == '"' || part.front() == '\'' || part.front() == '*')) {
      part.remove_prefix(1);
    }
    while (!part.empty() && (part.back() == '"' || part.back() == '\'' || part.back() == '*')) {
      part.remove_suffix(1);
    }
    path = std::string(JsTrim(part));
  }
  if (path.empty() || !LooksLikeFilePath(path, had_file_label)) return std::nullopt;
  return path;
}

// /```[\w+-]*\s*\n([\s\S]*?)```/ from `from`: the body and where the match ends.
std::optional<std::pair<std::string_view, size_t>> FirstBlock(std::string_view s, size_t from) {
  for (size_t i = s.find("```", from); i != std::string_view::npos; i = s.find("```", i + 1)) {
    size_t p = i + 3;
    while (p < s.size() && (IsWordChar(s[p]) || s[p] == '+' || s[p] == '-')) ++p;
    // \s*\n: white space holding a line feed; the body starts after its last one. ([\w+-]* is
    // greedy and \s never matches a word character, so no other split can succeed.)
    size_t newline = std::string_view::npos;
    while (p < s.size()) {
      size_t next = p;
      const char32_t c = js::NextCodePoint(s, next);
      if (!js::IsJsSpace(c)) break;
      if (c == '\n') newline = next;
      p = next;
    }
    if (newline == std::string_view::npos) continue;
    const size_t end = s.find("```", newline);
    if (end == std::string_view::npos) continue;
    return std::make_pair(s.substr(newline, end - newline), end + 3);
  }
  return std::nullopt;
}

std::string DropOneTrailingNewline(std::string_view s) {  // .replace(/\n$/, '')
  if (!s.empty() && s.back() == '\n') s.remove_suffix(1);
  return std::string(s);
}

// parseFileBlocks: path -> whole content, in the order found.
std::vector<std::pair<std::string, std::string>> ParseFileBlocks(std::string_view output) {
  std::vector<std::pair<std::string, std::string>> result;
  const auto has = [&](const std::string& path) {
    return std::any_of(result.begin(), result.end(),
                       [&](const auto& r) { return r.first == path; });
  };
  struct Chunk {
    std::string heading;
    std::string body;
  };
  std::vector<Chunk> chunks;
  std::optional<Chunk> cur;
  bool in_fence = false;
  const auto append = [&](std::string_view line) {
    if (!cur) return;
    if (!cur->body.empty()) cur->body += '\n';
    cur->body.append(line);
  };
  for (std::string_view line : JsSplit(output, '\n')) {
    if (line.substr(SkipJsSpaces(line, 0), 3) == "```") {  // /^\s*```/
      in_fence = !in_fence;
      append(line);
      continue;
    }
    if (!in_fence) {  // /^(#{1,6})\s+(.+)$/
      size_t hashes = 0;
      while (hashes < line.size() && hashes < 7 && line[hashes] == '#') ++hashes;
      if (hashes >= 1 && hashes <= 6) {
        size_t text = SkipJsSpaces(line, hashes);
        // \s+ gives one white space character back when nothing else follows.
        if (text == line.size() && text >= hashes + 2 && line[text - 1] == ' ') --text;
        // (.+)$: at least one character, none a line terminator ('.' refuses \r, U+2028/9).
        const std::string_view rest = line.substr(std::min(text, line.size()));
        if (text > hashes && !rest.empty() && rest.find('\r') == std::string_view::npos &&
            rest.find("\xE2\x80\xA8") == std::string_view::npos &&
            rest.find("\xE2\x80\xA9") == std::string_view::npos) {
          if (cur) chunks.push_back(std::move(*cur));
          cur = Chunk{std::string(rest), ""};
          continue;
        }
      }
    }
    append(line);
  }
  if (cur) chunks.push_back(std::move(*cur));
  for (const Chunk& chunk : chunks) {
    const auto path = PathFromHeading(chunk.heading);
    if (!path || has(*path)) continue;
    if (const auto block = FirstBlock(chunk.body, 0)) {
      result.emplace_back(*path, DropOneTrailingNewline(block->first));
    }
  }
  // Blocks whose first non-empty line is `# <path.ext>` alone.
  for (size_t from = 0;;) {
    const auto block = FirstBlock(output, from);
    if (!block) break;
    from = block->second;
    const std::vector<std::string_view> lines = JsSplit(block->first, '\n');
    const auto first = std::find_if(lines.begin(), lines.end(),
                                    [](std::string_view l) { return !JsTrim(l).empty(); });
    if (first == lines.end()) continue;
    // /^\s*#\s+([\w./\-]+\.\w{1,12})\s*$/
    std::string_view l = *first;
    size_t p = SkipJsSpaces(l, 0);
    if (p >= l.size() || l[p] != '#') continue;
    const size_t name_at = SkipJsSpaces(l, p + 1);
    if (name_at == p + 1) continue;
    size_t q = name_at;
    while (q < l.size() && (IsWordChar(l[q]) || l[q] == '.' || l[q] == '/' || l[q] == '-')) ++q;
    if (SkipJsSpaces(l, q) != l.size()) continue;
    std::string_view name = l.substr(name_at, q - name_at);
    // [\w./\-]+\.\w{1,12}: the extension's dot is not the name's first character.
    const size_t dot = name.rfind('.');
    if (dot == std::string_view::npos || dot == 0 || !HasExtension(name)) continue;
    const std::string fpath(name);
    if (has(fpath) || !LooksLikeFilePath(fpath, false)) continue;
    // arr.slice(idx + 1).join('\n').replace(/^\n+/, '')
    std::string body;
    for (auto it = first + 1; it != lines.end(); ++it) {
      if (it != first + 1) body += '\n';
      body.append(*it);
    }
    body.erase(0, body.find_first_not_of('\n') == std::string::npos ? body.size()
                                                                    : body.find_first_not_of('\n'));
    result.emplace_back(fpath, DropOneTrailingNewline(body));
  }
  return result;
}

// buildWorkspaceFiles: a Map keyed by path in insertion order: the project under its own paths,
// then the model's files and the hidden test files, each replacing the entry whose path has the
// same normal form, else added.
std::vector<std::pair<std::string, std::string>> WorkspaceFiles(
    const json& initial, const std::vector<std::pair<std::string, std::string>>& replacements,
    const json& hidden) {
  std::vector<std::pair<std::string, std::string>> files;
  std::map<std::string, size_t> by_key;          // map key -> position
  std::map<std::string, std::string> by_normal;  // normalizePath -> map key
  const auto set = [&](const std::string& key, const std::string& content) {
    if (const auto it = by_key.find(key); it != by_key.end()) {
      files[it->second].second = content;
    } else {
      by_key.emplace(key, files.size());
      files.emplace_back(key, content);
    }
  };
  for (const json& f : initial) {
    const std::string path = f["path"].get<std::string>();
    set(path, f["content"].get<std::string>());
    by_normal[NormalizePath(path)] = path;
  }
  const auto replace = [&](const std::string& path, const std::string& content) {
    const std::string n = NormalizePath(path);
    if (const auto it = by_normal.find(n); it != by_normal.end()) {
      set(it->second, content);
    } else {
      set(path, content);
      by_normal.emplace(n, path);
    }
  };
  for (const auto& [path, content] : replacements) replace(path, content);
  for (const json& f : hidden)
    replace(f["path"].get<std::string>(), f["content"].get<std::string>());
  return files;
}

// containerFilePath: the relative path a file is written at, or nullopt when zx-bench refuses it
// (empty, NUL, ':', absolute, "..", a Windows device name, a part ending in '.' or ' ', or the
// workspace itself).
std::optional<std::string> ContainerPath(const std::string& path) {
  std::string normal = path;
  std::replace(normal.begin(), normal.end(), '\\', '/');
  if (normal.empty() || normal.find('\0') != std::string::npos ||
      normal.find(':') != std::string::npos || normal[0] == '/') {
    return std::nullopt;
  }
  std::vector<std::string> parts;
  size_t begin = 0;
  while (begin <= normal.size()) {
    size_t end = normal.find('/', begin);
    if (end == std::string::npos) end = normal.size();
    const std::string part = normal.substr(begin, end - begin);
    std::string lower = part;
    for (char& c : lower) c = AsciiLower(c);
    const std::string stem = lower.substr(0, lower.find('.'));
    const bool device =
        stem == "con" || stem == "prn" || stem == "aux" || stem == "nul" ||
        ((stem.size() == 4) && (stem.rfind("com", 0) == 0 || stem.rfind("lpt", 0) == 0) &&
         stem[3] >= '1' && stem[3] <= '9');
    if (part == ".." || device ||
        (part != "." && !part.empty() && (part.back() == '.' || part.back() == ' '))) {
      return std::nullopt;
    }
    if (!part.empty() && part != ".") parts.push_back(part);
    begin = end + 1;
  }
  if (parts.empty()) return std::nullopt;
  std::string out;
  for (const std::string& part : parts) out += (out.empty() ? "" : "/") + part;
  return out;
}

// ---- Running the hidden tests -------------------------------------------------------------------

// harnessErrors.ts ENV_ERROR_PATTERNS: the reason when the output shows a harness failure.
std::optional<std::string> EnvironmentError(const std::string& text) {
  static const std::vector<std::pair<std::string, std::string>> kPatterns = {
      {"cannot create directory\\s*['\"`\\u2018\\u2019]?\\/root['\"`\\u2018\\u2019]?\\s*:\\s*"
       "permission denied",
       "container HOME=/root unwritable for non-root user"},
      {"an issue was encountered verifying workloads",
       "dotnet workload verification failed (network disabled)"},
      {"cannot connect to the docker daemon", "docker daemon unreachable"},
      {"error response from daemon", "docker daemon error"},
      {"oci runtime (?:exec|create|start) failed", "OCI runtime failure"},
      {"no space left on device", "disk full (container/image)"},
      {"eacces:\\s*permission denied", "EACCES permission denied"}};
  for (const auto& [pattern, reason] : kPatterns) {
    if (Regex::CompileJavaScript(pattern, "i")->Match(text, false) == Regex::Result::kMatch) {
      return reason;
    }
  }
  return std::nullopt;
}

struct TestRun {
  std::string description;
  SandboxResult result;
  bool output_limit_exceeded = false;
  bool passed() const {
    return result.exit_code == 0 && !result.timed_out && !output_limit_exceeded;
  }
};

// runScript's prelude for SQL entries, word for word: a new cluster under /tmp owned by the
// image's user, trusted, started on 127.0.0.1:5432 before the test's script.
constexpr std::string_view kPostgresSetup =
    "export PGDATA=/tmp/pgdata && "
    "initdb -D \"$PGDATA\" -U postgres --auth=trust >/dev/null 2>&1 && "
    "pg_ctl -D \"$PGDATA\" -w -o '-p 5432 -c listen_addresses=127.0.0.1' start >/dev/null 2>&1";

// Whether the stand-in carries `name` among the image's runtimes.
bool HasRuntime(const zx::ImageStandIn& stand_in, std::string_view name) {
  return std::find(stand_in.runtimes.begin(), stand_in.runtimes.end(), name) !=
         stand_in.runtimes.end();
}

// runScript: a fresh workspace with every file (0755 when it starts with "#!"), `sh -c script`
// (after kPostgresSetup when `postgres`, after zx::kDebianCratesSetup when `debian_crates`), on
// the host's network when `network`.
TestRun RunTest(const Sandbox& sandbox, const zx::ImageStandIn& stand_in,
                const std::vector<std::pair<std::string, std::string>>& files,
                const std::string& description, const std::string& script, bool postgres,
                bool debian_crates, bool network) {
  namespace fs = std::filesystem;
  TestRun run{description, {}, false};
  ScratchDirectory dir;
  if (dir.path().empty()) {
    run.result.exit_code = 127;
    run.result.stderr_text = "evalrun: cannot create a working copy";
    return run;
  }
  for (const auto& [path, content] : files) {
    const fs::path target = fs::path(dir.path()) / path;
    std::error_code ec;
    fs::create_directories(target.parent_path(), ec);
    std::ofstream(target, std::ios::binary) << content;
    chmod(target.c_str(), content.rfind("#!", 0) == 0 ? 0755 : 0644);
  }
  const auto has = [&](const char* runtime) { return HasRuntime(stand_in, runtime); };
  const bool node = has("node");
  std::vector<std::string> env = {"HOME=/tmp", "MAVEN_CONFIG=/tmp/.m2"};
  // The container's 512 MB: V8 reserves address space up front, so its heap is capped instead.
  if (node) env.push_back("NODE_OPTIONS=--max-old-space-size=512");
  // The stand-ins keep cargo and Go offline (they say so at once); with the network, the
  // images' own defaults.
  if (network) {
    env.insert(env.end(), {"CARGO_NET_OFFLINE=false", "GOPROXY=https://proxy.golang.org,direct"});
  }
  SandboxRun request;
  request.workspace = dir.path();
  request.work_path = "/workspace";
  std::string command = script;
  if (postgres) command = std::string(kPostgresSetup) + " && " + command;
  if (debian_crates) command = std::string(zx::kDebianCratesSetup) + " && " + command;
  request.argv = zx::StandInShell(stand_in, command, env);
  request.writable_dirs = stand_in.writable_dirs;
  request.network = network;
  request.limits.wall_seconds = postgres ? kSqlTestSeconds : kTestSeconds;
  request.limits.cpu_seconds = request.limits.wall_seconds;
  // Address space, not the container's 512 MB of memory (1024 MB with a server): V8, Go and the
  // JVM reserve far more than they use (the go command, the programs it builds and the JVM get
  // 8 GiB), and each PostgreSQL process maps the server's shared memory.
  request.limits.memory_bytes = has("go") || has("java") || has("rustc") ? 8L << 30
                                : node || postgres                       ? 4L << 30
                                                                         : 1L << 30;
  request.limits.max_processes = 256;
  request.limits.max_file_bytes = 256L << 20;
  request.limits.max_output_bytes = kOutputBytes + 1;
  run.result = sandbox.Run(request);
  run.output_limit_exceeded =
      run.result.stdout_text.size() > kOutputBytes || run.result.stderr_text.size() > kOutputBytes;
  return run;
}

// A build that failed on a host Go older than the module asks for: Go then adds "note: module
// requires Go 1.22" to its errors. The image's Go would have built what the host's cannot (range
// over an int, min and max, the slices package...), so the failure is the stand-in's, not the
// model's: the entry is an environment error, as zx-bench isolates its harness failures.
// Go itself cannot tell that gap from the model's own errors (Go 1.19 adds the note to every
// failed build of such a module), so no failed build is scored there. A module asking for more
// than the image's Go fails in zx-bench too: that stays the model's failure.
std::optional<std::string> OlderGo(const TestRun& t, const std::string& text,
                                   const std::string& image, const json& stand_in) {
  static constexpr std::string_view kNote = "note: module requires Go ";
  const size_t at = text.find(kNote);
  if (t.passed() || at == std::string::npos) return std::nullopt;
  const size_t from = at + kNote.size();
  const std::string wanted = text.substr(from, text.find_first_of("\r\n", from) - from);
  // "1.22" and "golang:1.22-alpine" -> 22
  const auto minor = [](const std::string& s, size_t start) {
    const size_t dot = s.find("1.", start);
    return dot == std::string::npos ? 0 : std::atoi(s.c_str() + dot + 2);
  };
  if (minor(wanted, 0) > minor(image, image.find(':'))) return std::nullopt;
  // "go version go1.19.8 linux/amd64" -> "go1.19.8"
  const json& go = Member(Member(stand_in, "programs"), "go");
  std::string host = go.is_string() ? go.get<std::string>() : "";
  if (host.rfind("go version ", 0) == 0) host = host.substr(11, host.find(' ', 11) - 11);
  return "the host's Go" + (host.empty() ? "" : " (" + host + ")") +
         " is older than the module's Go " + wanted +
         " and a build failed on it (\"note: module requires Go " + wanted +
         "\"): the image's Go would have built it, so the entry is not scored; install Go " +
         wanted + " or later as `go` (Debian 13's golang-go)";
}

// A build that failed on what the host's Rust lacks. rust:1-alpine carries the newest stable
// Rust; the host's is Debian's (1.63 in Debian 12, 1.85 in 13). rustc reports a language feature
// or library item stabilized after its own version as unstable (E0658), and cargo names the Rust
// or edition a manifest or lock file needs. The image would have built it, so the failure is the
// stand-in's and the entry an environment error, as with Go. rustc cannot tell such a gap from a
// reply that uses a feature still unstable everywhere: that reply fails in zx-bench and is not
// scored here either.
std::optional<std::string> OlderRust(const TestRun& t, const std::string& text,
                                     const json& stand_in) {
  if (t.passed()) return std::nullopt;
  static constexpr std::string_view kSigns[] = {
      "error[E0658]", "or newer, while the currently active rustc version is", "feature `edition20",
      "does not understand this lock file", "is older than the `20"};
  size_t at = std::string::npos;
  for (std::string_view sign : kSigns) at = std::min(at, text.find(sign));
  if (at == std::string::npos) return std::nullopt;
  const size_t begin = text.rfind('\n', at) == std::string::npos ? 0 : text.rfind('\n', at) + 1;
  std::string line = text.substr(begin, text.find('\n', at) - begin);
  if (line.size() > 160) line = line.substr(0, 157) + "...";
  const json& rustc = Member(Member(stand_in, "programs"), "rustc");
  const std::string host = rustc.is_string() ? rustc.get<std::string>() : "rustc";
  return "the host's Rust (" + host +
         ") is older than rust:1-alpine's newest stable Rust and a build failed on what it lacks "
         "(\"" +
         line +
         "\"): the image's Rust would have built it, so the entry is not scored; install a newer "
         "rustc and cargo as `rustc` and `cargo` (Debian 13's are 1.85)";
}

// A build that failed because Debian's crate sources, standing in for crates.io, lack a crate
// or the version asked for (the reply added a dependency, or asks for a newer one): zx-bench's
// container would have downloaded it, so the failure is the stand-in's.
std::optional<std::string> CrateNotInDebian(const TestRun& t, const std::string& text) {
  if (t.passed()) return std::nullopt;
  static constexpr std::string_view kSigns[] = {"no matching package named `",
                                                "failed to select a version for the requirement `"};
  for (std::string_view sign : kSigns) {
    const size_t at = text.find(sign);
    if (at == std::string::npos) continue;
    const size_t from = at + sign.size();
    std::string crate = text.substr(from, text.find_first_of("` ", from) - from);
    if (crate.size() > 64) crate = crate.substr(0, 64);
    return "the crate " + crate + " (or the version asked for) is not in Debian's crate sources, "
           "which stand in for crates.io here (" + zx::kDebianCrateRegistry +
           "): zx-bench's container would have downloaded it, so the entry is not scored; "
           "install Debian's " + zx::DebianCratePackageName(crate) +
           " or grade with --sandbox-network";
  }
  return std::nullopt;
}

json TestEvidence(const TestRun& t) {
  const auto clip = [](const std::string& s) { return EvidenceText(s, kEvidenceStream); };
  return {{"description", t.description},
          {"passed", t.passed()},
          {"exit_code", t.result.exit_code},
          {"timed_out", t.result.timed_out},
          {"output_limit_exceeded", t.output_limit_exceeded},
          {"wall_seconds", t.result.wall_seconds},
          {"stdout", clip(t.result.stdout_text)},
          {"stderr", clip(t.result.stderr_text)}};
}

// ---- The entry ----------------------------------------------------------------------------------

bool FileList(const json& v) {
  if (v.is_null()) return true;
  if (!v.is_array()) return false;
  return std::all_of(v.begin(), v.end(), [](const json& f) {
    return f.is_object() && Member(f, "path").is_string() && Member(f, "content").is_string();
  });
}

// ---- Packages the tests would download ---------------------------------------------------------

// requirements.executionPolicy.dependencyPreflight.command, or "".
std::string PreflightCommand(const json& req) {
  const json& command =
      Member(Member(Member(req, "executionPolicy"), "dependencyPreflight"), "command");
  return command.is_string() ? command.get<std::string>() : "";
}

// The program a dependency preflight installs with and the package that has it ({"npm",
// "npm"}), skipping leading NAME=value words; {"", ""} for an empty command.
std::pair<std::string, std::string> PreflightTool(const std::string& command) {
  std::vector<std::string_view> words;
  for (std::string_view w : JsSplit(command, ' ')) {
    if (!w.empty()) words.push_back(w);
  }
  size_t i = 0;
  while (i < words.size() && words[i].find('=') != std::string_view::npos) ++i;
  if (i == words.size()) return {"", ""};
  const std::string first(words[i]);
  const bool pip_module = first.rfind("python", 0) == 0 && i + 2 < words.size() &&
                          words[i + 1] == "-m" && words[i + 2] == "pip";
  if (pip_module || first == "pip" || first == "pip3") return {"pip3", "python3-pip"};
  static const std::map<std::string, std::string> kPackages = {
      {"npm", "npm"},
      {"npx", "npm"},
      {"cargo", "cargo"},
      {"go", "golang-go"},
      {"dotnet", "Microsoft's dotnet-sdk-8.0"}};
  const auto it = kPackages.find(first);
  return {first, it == kPackages.end() ? "" : it->second};
}

// For a project whose tests install packages over the network: the host's Debian copies that
// stand in for the download (name -> "python3-requests 2.28.1, the host's"), or why it cannot
// run offline (graders/zxbench/offline_packages.h). zx-bench opens the network for these
// containers; evalrun's sandbox only when the user lets it (--sandbox-network).
// A `pip install` of packages Debian installed for the host's python3 (the image's runtime here)
// is served by those copies: the test's own pip call finds no pip and no network, and the import
// finds the host's package, as it finds the downloaded one in zx-bench.
// A `cargo fetch` of crates Debian has sources for (librust-*-dev) is served by Debian's crate
// registry, made cargo's source in place of crates.io (`debian_crates`: kDebianCratesSetup runs
// before each test).
struct OfflineDependencies {
  json copies = json::object();
  std::string unavailable;
  bool debian_crates = false;
};

// Why an entry whose tests install packages over the network is not run without it.
constexpr std::string_view kNeedsNetwork =
    "needs the network (requirements.executionPolicy.network: required), which evalrun's sandbox "
    "opens only with --sandbox-network";

// The crates every Cargo.toml of the project depends on; nullopt when there is none, or one
// that is not a manifest or takes a crate from git.
std::optional<std::vector<std::string>> ProjectCrates(const json& req) {
  std::vector<std::string> out;
  bool any = false;
  for (const char* key : {"files", "hiddenTestFiles"}) {
    const json& files = Member(req, key);
    if (!FileList(files) || !files.is_array()) continue;
    for (const json& f : files) {
      if (std::filesystem::path(f["path"].get<std::string>()).filename() != "Cargo.toml") continue;
      const auto crates = zx::CargoDependencies(f["content"].get<std::string>());
      if (!crates) return std::nullopt;
      any = true;
      for (const std::string& c : *crates) {
        if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
      }
    }
  }
  if (!any) return std::nullopt;
  return out;
}

OfflineDependencies DependenciesOffline(const json& req, const zx::ImageStandIn& stand_in) {
  OfflineDependencies out;
  const std::string network(kNeedsNetwork);
  const std::string preflight = PreflightCommand(req);
  if (HasRuntime(stand_in, "cargo") && PreflightTool(preflight).first == "cargo") {
    const auto crates = ProjectCrates(req);
    if (!crates) {
      out.unavailable = network;
      return out;
    }
    for (const std::string& name : *crates) {
      const std::string version = zx::DebianCrate(name);
      const std::string debian = zx::DebianCratePackageName(name);
      if (version.empty()) {
        out.unavailable = network + ": its tests build with the crate " + name +
                          "; with Debian's " + debian + " installed, they build offline from " +
                          "Debian's crate sources (" + zx::kDebianCrateRegistry + ")";
        return out;
      }
      out.copies[name] = debian + " " + version + ", Debian's crate sources in " +
                         zx::kDebianCrateRegistry + " (cargo would download the newest)";
    }
    out.debian_crates = true;
    return out;
  }
  const auto packages =
      HasRuntime(stand_in, "python3") ? zx::PipPackages(preflight) : std::nullopt;
  if (!packages) {
    out.unavailable = network;
    return out;
  }
  for (const std::string& name : *packages) {
    const std::string debian = zx::DebianPythonPackageName(name);
    const std::string version = zx::DebianPythonPackage(name);
    if (version.empty()) {
      out.unavailable = network + ": its tests install " + name + "; with Debian's " + debian +
                        " installed, they run offline on the host's copy";
      return out;
    }
    out.copies[name] = debian + " " + version + ", the host's (pip would download the newest)";
  }
  return out;
}

// What an entry whose tests install packages (executionPolicy.network: required) runs offline
// on, or why it cannot; nullopt for an entry that installs nothing.
std::optional<OfflineDependencies> Offline(const json& spec) {
  const json& req = Member(spec, "requirements");
  if (Member(Member(req, "executionPolicy"), "network") != "required") return std::nullopt;
  return DependenciesOffline(req, zx::StandInFor(ImageFor(spec)));
}

// Why the entry's tests need the network: "" when they need none or run offline on the host's
// Debian copies of what they install.
std::string NetworkNeed(const std::optional<OfflineDependencies>& offline) {
  return offline ? offline->unavailable : "";
}

// Why zx-bench or evalrun cannot run the entry here ("" when it can), `network_need` its
// NetworkNeed.
std::string UnrunnableProject(const json& spec, const std::string& network_need) {
  const json& req = Member(spec, "requirements");
  for (const char* key : {"files", "hiddenTestFiles"}) {
    if (!FileList(Member(req, key))) {
      return std::string("zx-bench cannot run this entry: requirements.") + key +
             " is not a list of {path, content} strings";
    }
    for (const json& f : Member(req, key).is_array() ? req[key] : json::array()) {
      if (!ContainerPath(f["path"].get<std::string>())) {
        return "zx-bench cannot run this entry: it refuses the workspace path '" +
               f["path"].get<std::string>() + "'";
      }
    }
  }
  const json& tests = Member(req, "hiddenTests");
  if (!tests.is_null() && !tests.is_array()) {
    return "zx-bench cannot run this entry: requirements.hiddenTests is not a list";
  }
  for (const json& t : tests.is_array() ? tests : json::array()) {
    if (!t.is_object() || (!Member(t, "script").is_null() && !Member(t, "script").is_string())) {
      return "zx-bench cannot run this entry: a hidden test is not {description, script}";
    }
  }
  const json& weights = Member(Member(spec, "scoring"), "weights");
  if (!weights.is_null() &&
      (!weights.is_object() ||
       !std::all_of(weights.begin(), weights.end(), [](const json& w) { return w.is_number(); }))) {
    return "zx-bench cannot score this entry: scoring.weights is not an object of numbers";
  }
  if (std::string why = zx::StandInUnavailable(zx::StandInFor(ImageFor(spec))); !why.empty()) {
    return why;
  }
  // With the network, the tests install with the image's package manager: the host's must be
  // there (NeedsNetwork skips the entry when the run keeps the sandbox offline).
  if (!network_need.empty()) {
    const auto [tool, package] = PreflightTool(PreflightCommand(req));
    if (!tool.empty() && FindSandboxProgram(tool).empty()) {
      return network_need + "; its tests install packages with " + tool + ", which is not installed" +
             (package.empty() ? "" : " (" + package + ")");
    }
  }
  return "";
}

std::string Joined(const json& files) {
  std::string out;
  bool first = true;
  for (const json& f : files) {
    if (!first) out += '\n';
    out += f["content"].get<std::string>();
    first = false;
  }
  return out;
}

class ZxProjectRepairGrader final : public zx::EntryGrader {
 public:
  ZxProjectRepairGrader() : EntryGrader(kName, "files, hiddenTestFiles, hiddenTests") {}
  std::string_view version() const override { return kVersion; }
  std::string_view description() const override {
    return "zx-bench project_repair: writes the model's files over the entry's project, runs "
           "each hidden test in the sandbox with a stand-in for its image, and scores the five "
           "axes as zx-bench does";
  }

 private:
  std::string UnrunnableEntry(const json& entry) const override {
    return UnrunnableProject(entry, NetworkNeed(Offline(entry)));
  }
  std::string NeedsNetwork(const json& spec) const override {
    return spec.is_object() ? NetworkNeed(Offline(spec)) : "";
  }

  Grade Evaluate(const json& spec, const Answer& answer,
                 const GradeContext& context) const override {
    const std::string output = ToWellFormedUtf8(answer.text);
    if (JsTrim(output).empty()) return zx::StatusGrade(GradeStatus::kNoAnswer, "empty output");
    const std::optional<OfflineDependencies> offline = Offline(spec);
    const std::string network_need = NetworkNeed(offline);
    if (std::string why = UnrunnableProject(spec, network_need); !why.empty()) {
      return zx::StatusGrade(GradeStatus::kSkipped, why);
    }
    const bool network = !network_need.empty();
    if (network && !context.network) return zx::StatusGrade(GradeStatus::kSkipped, network_need);
    Grade skip;
    const Sandbox* sandbox = zx::WorkspaceSandbox(context, "project_repair tests", &skip);
    if (sandbox == nullptr) return skip;

    const json& req = spec["requirements"];
    const json initial = Member(req, "files").is_array() ? req["files"] : json::array();
    const json hidden_files =
        Member(req, "hiddenTestFiles").is_array() ? req["hiddenTestFiles"] : json::array();
    const json tests = Member(req, "hiddenTests").is_array() ? req["hiddenTests"] : json::array();
    const std::string image = ImageFor(spec);
    zx::ImageStandIn stand_in = zx::StandInFor(image);
    if (network) {  // the image's package manager, which the tests install with
      const std::string tool = PreflightTool(PreflightCommand(req)).first;
      if (!tool.empty() && !HasRuntime(stand_in, tool)) {
        stand_in.runtimes.push_back(tool);
        if (tool == "npm") stand_in.runtimes.push_back("npx");
        if (tool == "pip3") stand_in.runtimes.push_back("pip");
      }
    }

    std::map<std::string, int> axes;
    const auto replacements = ParseFileBlocks(output);
    axes["output_completeness"] = replacements.empty() ? 0 : 100;
    const bool debian_crates = !network && offline && offline->debian_crates;
    json evidence = {{"image", image},
                     {"stand_in", zx::StandInEvidence(*sandbox, stand_in)},
                     {"sandbox", sandbox->Describe()},
                     {"truncated", answer.truncated}};
    if (network) {
      evidence["network"] =
          "the host's, for the tests' package installs (--sandbox-network), as zx-bench's "
          "container has";
    } else if (offline) {
      evidence["offline_dependencies"] = offline->copies;
    }
    json parsed = json::array();
    for (const auto& [path, content] : replacements) parsed.push_back(path);
    evidence["files_replaced"] = parsed;

    // The workspace as written: each path as the container writes it, refused ones named.
    std::vector<std::pair<std::string, std::string>> files;
    std::optional<std::string> refused;
    std::set<std::string> seen;
    for (const auto& [path, content] : WorkspaceFiles(initial, replacements, hidden_files)) {
      const auto at = ContainerPath(path);
      if (!at) {
        refused = "the workspace path '" + path + "' is refused";
      } else if (!seen.insert(*at).second) {
        refused = "two files are written at '" + *at + "'";
      } else {
        files.emplace_back(*at, content);
      }
    }

    const bool go = HasRuntime(stand_in, "go");
    const bool rust = HasRuntime(stand_in, "rustc");
    json runs = json::array();
    int passed = 0, ran = 0;
    std::optional<std::string> env_error;
    if (refused) {
      // zx-bench's runInContainer throws here before any test runs; nothing runs here either.
      evidence["refused"] = *refused;
    } else {
      for (const json& t : tests) {
        const json& script = Member(t, "script");
        if (!script.is_string() || JsTrim(script.get<std::string>()).empty()) continue;
        const std::string description =
            Member(t, "description").is_string() ? t["description"].get<std::string>() : "";
        const TestRun r = RunTest(*sandbox, stand_in, files, description, script.get<std::string>(),
                                  WithPostgres(spec), debian_crates, network);
        ++ran;
        passed += r.passed() ? 1 : 0;
        runs.push_back(TestEvidence(r));
        const std::string text = r.result.stdout_text + "\n" + r.result.stderr_text;
        if (auto why = EnvironmentError(text)) {
          env_error = "the test environment failed (" + *why +
                      "): zx-bench isolates such entries as not the model's fault";
          break;
        }
        if (go && (env_error = OlderGo(r, text, image, evidence["stand_in"]))) break;
        if (rust && (env_error = OlderRust(r, text, evidence["stand_in"]))) break;
        if (debian_crates && (env_error = CrateNotInDebian(r, text))) break;
      }
    }
    evidence["hidden_tests"] = runs;
    if (env_error) {
      return zx::StatusGrade(GradeStatus::kEnvError, *env_error, std::move(evidence));
    }
    axes["test_pass"] = ran > 0 ? JsRound(100.0 * passed / ran) : 0;

    if (const json& fn = Member(req, "functionName");
        fn.is_string() && !fn.get<std::string>().empty()) {
      const std::string name = fn.get<std::string>();
      const std::string initial_text = Joined(initial);
      std::string replaced;
      for (size_t i = 0; i < replacements.size(); ++i) {
        replaced += (i ? "\n" : "") + replacements[i].second;
      }
      const bool had = initial_text.find(name) != std::string::npos;
      const bool still = (initial_text + "\n" + replaced).find(name) != std::string::npos;
      axes["api_stability"] = had && still ? 100 : still ? 50 : 0;
    }
    if (const json& keywords = Member(req, "explanationKeywords");
        keywords.is_array() && !keywords.empty()) {
      int hit = 0;
      for (const json& k : keywords) {
        hit += k.is_string() && output.find(k.get<std::string>()) != std::string::npos ? 1 : 0;
      }
      axes["static_signals"] = JsRound(100.0 * hit / static_cast<double>(keywords.size()));
    }
    const int changed = static_cast<int>(replacements.size());
    const int initial_count = static_cast<int>(initial.size());
    axes["scope_discipline"] =
        changed <= initial_count ? 100 : std::max(0, 100 - (changed - initial_count) * 20);

    static const std::map<std::string, double> kDefaults = {{"test_pass", .25},
                                                            {"api_stability", .15},
                                                            {"static_signals", .30},
                                                            {"output_completeness", .15},
                                                            {"scope_discipline", .15}};
    const json& weights_value = Member(Member(spec, "scoring"), "weights");
    std::map<std::string, double> weights = kDefaults;
    if (weights_value.is_object() && !weights_value.empty()) {
      weights.clear();
      for (const auto& [axis, w] : weights_value.items()) weights[axis] = w.get<double>();
    }
    double sum = 0, wsum = 0;
    for (const auto& [axis, w] : weights) {
      const auto it = axes.find(axis);
      if (it == axes.end()) continue;
      sum += it->second * w;
      wsum += w;
    }
    const int total = wsum > 0 ? JsRound(sum / wsum) : 0;
    json axis_json = json::object();
    for (const auto& [axis, score] : axes) axis_json[axis] = score;
    evidence["zx_axes"] = axis_json;
    evidence["tests_passed"] = passed;
    evidence["tests_total"] = ran;
    std::string reason = std::to_string(passed) + "/" + std::to_string(ran) +
                         " hidden tests pass, " + std::to_string(replacements.size()) +
                         " file(s) replaced";
    if (refused) reason += ", nothing ran: " + *refused;
    return zx::ZxGrade(total, std::move(evidence), std::move(reason), kZxEvaluator);
  }
};

}  // namespace

std::unique_ptr<Grader> MakeZxProjectRepairGrader() {
  return std::make_unique<ZxProjectRepairGrader>();
}

}  // namespace evalrun
