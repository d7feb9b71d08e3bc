#include "tasks/task_yaml.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include <yaml-cpp/depthguard.h>  // DeepRecursion (yaml-cpp 0.7 and 0.8)
#include <yaml-cpp/yaml.h>

#include "core/canonical_json.h"
#include "core/error.h"
#include "core/limits.h"
#include "core/sha256.h"
#include "tasks/repo_workspace.h"

namespace evalrun {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kSchemaVersion = 1;

const std::vector<std::string> kDifficulties = {"easy", "medium", "hard", "adversarial"};
const std::vector<std::string> kRoles = {"system", "user", "assistant"};
const std::vector<std::string> kThinking = {"on", "off", "auto"};
const std::vector<std::string> kGenerationKeys = {"max_tokens", "temperature", "top_p",
                                                  "seed",       "stop",        "thinking"};
const std::vector<std::string> kSuiteKeys = {"schema_version", "suite",   "description", "defaults",
                                             "dimensions",     "include", "tasks"};
const std::vector<std::string> kTaskFileKeys = {"schema_version", "tasks"};
const std::vector<std::string> kTaskKeys = {
    "id",          "dimension", "difficulty", "weight",   "prompt", "messages",
    "max_tokens",  "temperature", "top_p",    "seed",     "stop",   "thinking",
    "grader",      "agent",     "files",      "tags",     "hash"};
const std::vector<std::string> kMessageKeys = {"role", "content"};

SourceLocation Where(const std::string& file, const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  if (mark.line < 0) return {file, 0, 0};
  return {file, mark.line + 1, mark.column + 1};
}

[[noreturn]] void Fail(const SourceLocation& at, const std::string& message) {
  throw Error(at.ToString() + ": " + message);
}

[[noreturn]] void Fail(const std::string& file, const YAML::Node& node, const std::string& message) {
  Fail(Where(file, node), message);
}

std::string JoinList(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

// " did you mean 'x'?" style hint, or the list of valid names when nothing is close.
std::string Suggest(const std::string& word, const std::vector<std::string>& candidates) {
  const std::string best = ClosestMatch(word, candidates);
  if (!best.empty()) return ", did you mean '" + best + "'?";
  return " (expected one of: " + JoinList(candidates) + ")";
}

// --- Scalars: YAML 1.2 core schema resolution -------------------------------------------------

enum class Kind { kString, kInt, kFloat, kBool, kNull, kList, kMapping };

Kind ResolveScalar(const YAML::Node& node) {
  // yaml-cpp tags quoted and block scalars "!" and plain ones "?"; an explicit !!str is a string.
  const std::string& tag = node.Tag();
  if (tag == "!" || tag == "tag:yaml.org,2002:str") return Kind::kString;
  const std::string& text = node.Scalar();
  static const std::regex kNull("~|null|Null|NULL");
  static const std::regex kBool("true|True|TRUE|false|False|FALSE");
  static const std::regex kInt("[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+");
  static const std::regex kFloat(
      "[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?|[-+]?\\.(inf|Inf|INF)|\\.(nan|NaN|NAN)");
  if (text.empty() || std::regex_match(text, kNull)) return Kind::kNull;
  if (std::regex_match(text, kBool)) return Kind::kBool;
  if (std::regex_match(text, kInt)) return Kind::kInt;
  if (std::regex_match(text, kFloat)) return Kind::kFloat;
  return Kind::kString;
}

Kind KindOf(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Sequence: return Kind::kList;
    case YAML::NodeType::Map: return Kind::kMapping;
    case YAML::NodeType::Scalar: return ResolveScalar(node);
    default: return Kind::kNull;
  }
}

const char* KindName(Kind kind) {
  switch (kind) {
    case Kind::kString: return "a string";
    case Kind::kInt:
    case Kind::kFloat: return "a number";
    case Kind::kBool: return "a boolean";
    case Kind::kNull: return "null";
    case Kind::kList: return "a list";
    case Kind::kMapping: return "a mapping";
  }
  return "?";
}

[[noreturn]] void WrongType(const std::string& file, const YAML::Node& node, const char* expected) {
  Fail(file, node, std::string("expected ") + expected + ", got " + KindName(KindOf(node)));
}

void CheckScalarSize(const std::string& file, const YAML::Node& node) {
  if (node.Scalar().size() > limits::kYamlScalarBytes) {
    Fail(file, node, "a value of " + std::to_string(node.Scalar().size()) +
                         " bytes, more than the " + std::to_string(limits::kYamlScalarBytes >> 20) +
                         " MiB one YAML value may hold (docs/limits.md)");
  }
}

json ScalarToJson(const std::string& file, const YAML::Node& node) {
  CheckScalarSize(file, node);
  const std::string& text = node.Scalar();
  switch (ResolveScalar(node)) {
    case Kind::kString: return text;
    case Kind::kNull: return nullptr;
    case Kind::kBool: return text[0] == 't' || text[0] == 'T';
    case Kind::kInt: {
      std::string digits = text;
      int base = 10;
      bool negative = false;
      if (digits.rfind("0x", 0) == 0 || digits.rfind("0o", 0) == 0) {
        base = digits[1] == 'x' ? 16 : 8;
        digits = digits.substr(2);
      } else if (digits[0] == '+' || digits[0] == '-') {
        negative = digits[0] == '-';
        digits = digits.substr(1);
      }
      uint64_t value = 0;
      const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value,
                                                base);
      if (error != std::errc() || end != digits.data() + digits.size() ||
          value > (negative ? uint64_t{1} << 63 : uint64_t{INT64_MAX})) {
        Fail(file, node, "integer '" + text + "' is out of range");
      }
      if (negative) return static_cast<int64_t>(0 - value);
      return static_cast<int64_t>(value);
    }
    case Kind::kFloat: {
      std::string digits = text[0] == '+' ? text.substr(1) : text;
      if (digits.find_first_of("iInN") != std::string::npos) {
        Fail(file, node, "'" + text + "' cannot be represented in JSON");
      }
      if (digits.rfind("-.", 0) == 0) digits = "-0" + digits.substr(1);
      if (digits[0] == '.') digits = "0" + digits;
      double value = 0;
      const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
      if (error != std::errc() || end != digits.data() + digits.size()) {
        Fail(file, node, "number '" + text + "' is out of range");
      }
      return value;
    }
    default: break;
  }
  return text;
}

// Any YAML value as JSON: mappings become objects (duplicate keys rejected), lists arrays,
// scalars by core-schema resolution (quoted scalars are always strings). yaml-cpp keeps an alias
// as a second reference to its anchor's node, so this is where aliases are expanded: `budget`
// counts the nodes visited (expansions included) and an alias bomb is refused when it runs out,
// at the node that exhausted it, before memory grows.
struct ExpandBudget {
  int64_t nodes = limits::kYamlExpandedNodes;
  int64_t bytes = limits::kYamlExpandedBytes;  // scalar text, so aliases of a long string count
};

json ToJson(const std::string& file, const YAML::Node& node, ExpandBudget& budget, int depth = 0) {
  if (node.IsScalar()) budget.bytes -= static_cast<int64_t>(node.Scalar().size());
  if (--budget.nodes < 0 || budget.bytes < 0) {
    Fail(file, node, "this value expands (aliases included) to more than " +
                         std::to_string(limits::kYamlExpandedNodes) + " nodes or " +
                         std::to_string(limits::kYamlExpandedBytes >> 20) +
                         " MiB of text; write it out or split it (docs/limits.md)");
  }
  if (depth > limits::kYamlDepth) {
    Fail(file, node, "nested more than " + std::to_string(limits::kYamlDepth) +
                         " levels deep (docs/limits.md)");
  }
  switch (node.Type()) {
    case YAML::NodeType::Sequence: {
      json out = json::array();
      for (const auto& item : node) out.push_back(ToJson(file, item, budget, depth + 1));
      return out;
    }
    case YAML::NodeType::Map: {
      json out = json::object();
      std::map<std::string, SourceLocation> seen;
      for (const auto& entry : node) {
        if (!entry.first.IsScalar()) Fail(file, entry.first, "mapping keys must be strings");
        const std::string& key = entry.first.Scalar();
        const auto [it, fresh] = seen.emplace(key, Where(file, entry.first));
        if (!fresh) {
          Fail(file, entry.first,
               "duplicate key '" + key + "' (first at " + it->second.ToString() + ")");
        }
        out[key] = ToJson(file, entry.second, budget, depth + 1);
      }
      return out;
    }
    case YAML::NodeType::Scalar: return ScalarToJson(file, node);
    default: return nullptr;
  }
}

json ToJson(const std::string& file, const YAML::Node& node) {
  ExpandBudget budget;
  return ToJson(file, node, budget);
}

// --- Mappings with a fixed set of keys --------------------------------------------------------

struct Entry {
  YAML::Node key;
  YAML::Node value;
};

// The entries of a mapping whose keys must come from `known`: unknown keys ("did you mean") and
// duplicate keys are errors at the key.
class Fields {
 public:
  Fields(const std::string& file, const YAML::Node& map, const std::vector<std::string>& known) {
    if (!map.IsMap()) WrongType(file, map, "a mapping");
    for (const auto& entry : map) {
      if (!entry.first.IsScalar()) Fail(file, entry.first, "mapping keys must be strings");
      const std::string& key = entry.first.Scalar();
      if (std::find(known.begin(), known.end(), key) == known.end()) {
        Fail(file, entry.first, "unknown key '" + key + "'" + Suggest(key, known));
      }
      if (const Entry* first = Find(key)) {
        Fail(file, entry.first,
             "duplicate key '" + key + "' (first at " + Where(file, first->key).ToString() + ")");
      }
      entries_.emplace_back(key, Entry{entry.first, entry.second});
    }
  }

  const Entry* Find(const std::string& key) const {
    for (const auto& [name, entry] : entries_) {
      if (name == key) return &entry;
    }
    return nullptr;
  }

  const std::vector<std::pair<std::string, Entry>>& entries() const { return entries_; }

 private:
  std::vector<std::pair<std::string, Entry>> entries_;
};

std::string RequireString(const std::string& file, const YAML::Node& node) {
  if (!node.IsScalar() || ResolveScalar(node) != Kind::kString) WrongType(file, node, "a string");
  CheckScalarSize(file, node);
  return node.Scalar();
}

json RequireNumber(const std::string& file, const YAML::Node& node) {
  const Kind kind = KindOf(node);
  if (kind != Kind::kInt && kind != Kind::kFloat) WrongType(file, node, "a number");
  return ScalarToJson(file, node);
}

json RequireInteger(const std::string& file, const YAML::Node& node) {
  if (KindOf(node) != Kind::kInt) WrongType(file, node, "an integer");
  return ScalarToJson(file, node);
}

std::string RequireOneOf(const std::string& file, const YAML::Node& node, const std::string& what,
                         const std::vector<std::string>& allowed) {
  const std::string value = RequireString(file, node);
  if (std::find(allowed.begin(), allowed.end(), value) == allowed.end()) {
    Fail(file, node, "unknown " + what + " '" + value + "'" + Suggest(value, allowed));
  }
  return value;
}

std::vector<std::string> RequireStringList(const std::string& file, const YAML::Node& node) {
  if (!node.IsSequence()) WrongType(file, node, "a list");
  std::vector<std::string> out;
  for (const auto& item : node) out.push_back(RequireString(file, item));
  return out;
}

// One generation setting (suite defaults or a task override), checked and normalised: `stop`
// is always a list of strings.
json GenerationValue(const std::string& file, const std::string& key, const YAML::Node& node) {
  if (key == "max_tokens") {
    json value = RequireInteger(file, node);
    const int64_t n = value.get<int64_t>();
    if (n < 1 || n > limits::kMaxTokens) {
      Fail(file, node, "max_tokens " + std::to_string(n) + " is out of range (1.." +
                           std::to_string(limits::kMaxTokens) + ")");
    }
    return value;
  }
  if (key == "temperature") {
    json value = RequireNumber(file, node);
    if (value.get<double>() < 0) Fail(file, node, "temperature must be at least 0");
    return value;
  }
  if (key == "top_p") {
    json value = RequireNumber(file, node);
    const double p = value.get<double>();
    if (!(p > 0 && p <= 1)) Fail(file, node, "top_p must be greater than 0 and at most 1");
    return value;
  }
  if (key == "seed") return RequireInteger(file, node);
  if (key == "stop") {
    if (node.IsScalar() && ResolveScalar(node) == Kind::kString) return json::array({node.Scalar()});
    if (!node.IsSequence()) WrongType(file, node, "a string or a list of strings");
    return RequireStringList(file, node);
  }
  return RequireOneOf(file, node, "thinking mode", kThinking);  // thinking
}

double RequirePositive(const std::string& file, const YAML::Node& node, const std::string& what) {
  const double value = RequireNumber(file, node).get<double>();
  if (!(value > 0)) Fail(file, node, what + " must be greater than 0");
  if (value > limits::kMaxWeight) {
    Fail(file, node, what + " " + node.Scalar() + " is out of range (greater than 0, at most 1e6)");
  }
  return value;
}

void CheckSchemaVersion(const std::string& file, const Fields& fields) {
  if (const Entry* e = fields.Find("schema_version")) {
    const json version = RequireInteger(file, e->value);
    if (version.get<int64_t>() != kSchemaVersion) {
      Fail(file, e->value, "unsupported schema_version " + version.dump() +
                               " (this evalrun reads version " + std::to_string(kSchemaVersion) +
                               ")");
    }
  }
}

// A '/'-separated path inside the suite: relative, no "..", no empty segments.
bool IsCleanRelative(const std::string& path) {
  if (path.empty() || path[0] == '/') return false;
  std::stringstream parts(path);
  std::string part;
  while (std::getline(parts, part, '/')) {
    if (part.empty() || part == "..") return false;
  }
  return path.back() != '/';
}

std::string Join(const std::string& dir, const std::string& path) {
  if (dir.empty()) return path;
  return path.empty() ? dir : dir + "/" + path;
}

// --- Tasks ------------------------------------------------------------------------------------

// What a task needs from its suite.
struct TaskContext {
  const SuiteFiles* files = nullptr;  // referenced files are read through this
  std::string suite_dir;              // folder in `files` that task `files:` are relative to
  json defaults = json::object();     // suite generation defaults
  std::vector<std::string> dimensions;  // declared dimensions; empty = any
  const GraderVersions* graders = nullptr;  // known grader types and their versions
};

// A parsed task with the nodes --write needs.
struct ParsedTask {
  Task task;
  YAML::Node node;
  YAML::Node id_key;
  YAML::Node id_value;
  YAML::Node hash_value;  // null node when absent
  bool has_hash = false;
};

// --- Repository agent tasks (agent.kind: repo; docs/task-format.md "Repository coding tasks") ---

const std::vector<std::string> kRepoAgentKeys = {
    "kind",         "repo",         "setup",      "test_cmd", "log_parser", "hidden_tests",
    "protected",    "fail_to_pass", "pass_to_pass", "gold_patch", "limits", "tools",
    "upstream"};
const std::vector<std::string> kRepoKeys = {"path", "url", "base_commit", "base_tree"};
const std::vector<std::string> kHiddenTestKeys = {"from", "to"};
const std::vector<std::string> kRepoLimitKeys = {"steps", "tokens", "wall_s", "command_timeout_s",
                                                 "observation_bytes"};
const std::vector<std::string> kLogParsers = {"pytest", "unittest", "ctest", "unity", "exit_code"};
const std::vector<std::string> kRepoTools = {"bash", "read_file", "write_file", "str_replace",
                                             "submit"};

// A string that is a 40-hex git object id (lowercase).
std::string RequireObjectId(const std::string& file, const YAML::Node& node, const std::string& key,
                            const std::string& what) {
  const std::string value = node.IsScalar() ? node.Scalar() : "";
  static const std::regex kObjectId("[0-9a-f]{40}");
  if (!node.IsScalar() || !std::regex_match(value, kObjectId)) {
    Fail(file, node, key + ": expected " + what + " as 40 lowercase hex digits, got " +
                         (node.IsScalar() ? "'" + value + "'" : std::string(KindName(KindOf(node)))));
  }
  return value;
}

// A destination or protected path inside the repository: relative, clean, not in .git.
std::string RequireRepoPath(const std::string& file, const YAML::Node& node, const std::string& key) {
  const std::string path = RequireString(file, node);
  if (!IsCleanRepoPath(path)) {
    Fail(file, node, key + ": '" + path +
                         "' must be a path relative to the repository root, without '..'");
  }
  if (path == ".git" || path.rfind(".git/", 0) == 0) {
    Fail(file, node, key + ": '" + path + "' is inside .git");
  }
  return path;
}

// A file of the suite the task names (hidden test, gold patch): must exist; hashed into `files`.
std::string RequireSuiteFile(const std::string& file, const YAML::Node& node, const std::string& key,
                             const TaskContext& context, std::vector<TaskFile>* files) {
  const std::string path = RequireString(file, node);
  if (!IsCleanRelative(path)) {
    Fail(file, node, key + ": '" + path + "' must be relative to the suite folder, without '..'");
  }
  const std::optional<std::string> bytes = context.files->Read(Join(context.suite_dir, path));
  if (!bytes) Fail(file, node, key + ": file '" + path + "' not found in the suite");
  files->push_back({path, Sha256Hex(*bytes)});
  return path;
}

// Checks an `agent` mapping of kind `repo` strictly and returns it as JSON with the repository
// folder's file list recorded in repo.files; adds every file the task uses to `task->files`.
json ParseRepoAgent(const std::string& file, const YAML::Node& node, const TaskContext& context,
                    Task* task) {
  const Fields fields(file, node, kRepoAgentKeys);
  const std::string who = "task '" + task->id + "': ";
  const auto require = [&](const char* key) -> const Entry& {
    const Entry* e = fields.Find(key);
    if (!e) Fail(file, node, who + "agent is missing required field '" + std::string(key) + "'");
    return *e;
  };
  json out = ToJson(file, node);

  // repo: {path | url + base_commit, base_tree}
  const Entry& repo = require("repo");
  const Fields repo_fields(file, repo.value, kRepoKeys);
  const Entry* path = repo_fields.Find("path");
  const Entry* url = repo_fields.Find("url");
  const Entry* base_commit = repo_fields.Find("base_commit");
  const Entry* base_tree = repo_fields.Find("base_tree");
  if (path && url) Fail(file, url->key, "agent.repo: give either 'path' or 'url', not both");
  if (!path && !url) {
    Fail(file, repo.value, who + "agent.repo needs 'path' (a folder of the suite) or 'url'");
  }
  if (!base_tree) Fail(file, repo.value, who + "agent.repo is missing required field 'base_tree'");
  const std::string tree = RequireObjectId(file, base_tree->value, "agent.repo.base_tree",
                                           "a git tree id");
  if (url) {
    const std::string text = RequireString(file, url->value);
    if (text.empty()) Fail(file, url->value, "agent.repo.url: must not be empty");
    if (!base_commit) {
      Fail(file, repo.value, who + "agent.repo is missing required field 'base_commit' (with 'url')");
    }
    RequireObjectId(file, base_commit->value, "agent.repo.base_commit", "a git commit id");
  } else {
    if (base_commit) {
      Fail(file, base_commit->key,
           "agent.repo.base_commit: only with 'url' (a 'path' folder is its own single commit)");
    }
    const std::string folder = RequireString(file, path->value);
    if (!IsCleanRelative(folder)) {
      Fail(file, path->value,
           "agent.repo.path: '" + folder + "' must be relative to the suite folder, without '..'");
    }
    const std::string in_suite = Join(context.suite_dir, folder);
    const std::vector<SuiteFileEntry> entries = context.files->ListTree(in_suite);
    if (entries.empty()) {
      Fail(file, path->value, "agent.repo.path: no folder '" + folder + "' with files in the suite");
    }
    std::vector<RepoFile> repo_files;
    json listed = json::array();
    for (const SuiteFileEntry& entry : entries) {
      const std::string relative = entry.path.substr(in_suite.empty() ? 0 : in_suite.size() + 1);
      std::optional<std::string> bytes = context.files->Read(entry.path);
      if (!bytes) Fail(file, path->value, "agent.repo.path: cannot read '" + entry.path + "'");
      task->files.push_back({Join(folder, relative), Sha256Hex(*bytes)});
      listed.push_back({{"path", relative}, {"executable", entry.executable}});
      repo_files.push_back({relative, std::move(*bytes), entry.executable});
    }
    const std::string actual = GitTreeId(repo_files);
    if (actual != tree) {
      Fail(file, base_tree->value, "agent.repo.base_tree: the folder " + folder + " has tree " +
                                       actual + ", the task says " + tree);
    }
    out["repo"]["files"] = listed;
  }

  if (const Entry* e = fields.Find("setup")) RequireString(file, e->value);
  const Entry& test_cmd = require("test_cmd");
  if (RequireString(file, test_cmd.value).empty()) {
    Fail(file, test_cmd.value, "agent.test_cmd: must not be empty");
  }
  RequireOneOf(file, require("log_parser").value, "log_parser", kLogParsers);

  if (const Entry* e = fields.Find("hidden_tests")) {
    if (!e->value.IsSequence()) WrongType(file, e->value, "a list");
    for (const auto& item : e->value) {
      const Fields hidden(file, item, kHiddenTestKeys);
      const Entry* from = hidden.Find("from");
      const Entry* to = hidden.Find("to");
      if (!from) Fail(file, item, "agent.hidden_tests: missing required field 'from'");
      if (!to) Fail(file, item, "agent.hidden_tests: missing required field 'to'");
      RequireSuiteFile(file, from->value, "agent.hidden_tests.from", context, &task->files);
      RequireRepoPath(file, to->value, "agent.hidden_tests.to");
      // A hidden test inside the repository folder would be in the agent's workspace.
      if (path != nullptr && !url) {
        const std::string folder = path->value.Scalar() + "/";
        if (from->value.Scalar().rfind(folder, 0) == 0) {
          Fail(file, from->value, "agent.hidden_tests.from: '" + from->value.Scalar() +
                                      "' is inside the repository folder, where the agent would "
                                      "see it; keep hidden tests outside it (files/...)");
        }
      }
    }
  }
  if (const Entry* e = fields.Find("protected")) {
    if (!e->value.IsSequence()) WrongType(file, e->value, "a list");
    for (const auto& item : e->value) RequireRepoPath(file, item, "agent.protected");
  }
  const Entry& f2p = require("fail_to_pass");
  if (RequireStringList(file, f2p.value).empty()) {
    Fail(file, f2p.value, "agent.fail_to_pass: list at least one test that the fix makes pass");
  }
  if (const Entry* e = fields.Find("pass_to_pass")) RequireStringList(file, e->value);
  if (const Entry* e = fields.Find("gold_patch")) {
    RequireSuiteFile(file, e->value, "agent.gold_patch", context, &task->files);
  }
  if (const Entry* e = fields.Find("upstream")) {
    // Shown as a link in the report: only web addresses, never javascript: or a file path.
    const std::string address = RequireString(file, e->value);
    if (address.rfind("https://", 0) != 0 && address.rfind("http://", 0) != 0) {
      Fail(file, e->value, "agent.upstream: expected an https:// address of the upstream fix, "
                           "got '" + address + "'");
    }
  }
  if (const Entry* e = fields.Find("limits")) {
    const Fields limits(file, e->value, kRepoLimitKeys);
    for (const auto& [key, entry] : limits.entries()) {
      if (key == "wall_s" || key == "command_timeout_s") {
        RequirePositive(file, entry.value, "agent.limits." + key);
      } else if (RequireInteger(file, entry.value).get<int64_t>() < 1) {
        Fail(file, entry.value, "agent.limits." + key + " must be at least 1");
      }
    }
  }
  if (const Entry* e = fields.Find("tools")) {
    if (!e->value.IsSequence()) WrongType(file, e->value, "a list");
    if (e->value.size() == 0) Fail(file, e->value, "agent.tools: list at least one tool");
    for (const auto& item : e->value) RequireOneOf(file, item, "tool", kRepoTools);
  }
  return out;
}

ParsedTask ParseTask(const std::string& file, const YAML::Node& node, const TaskContext& context) {
  ParsedTask parsed;
  parsed.node = node;
  Task& task = parsed.task;
  task.location = Where(file, node);
  const Fields fields(file, node, kTaskKeys);

  const Entry* id = fields.Find("id");
  if (!id) Fail(task.location, "task is missing required field 'id'");
  task.id = RequireString(file, id->value);
  static const std::regex kId("[A-Za-z0-9._-]+");
  if (!std::regex_match(task.id, kId)) {
    Fail(file, id->value, "task id '" + task.id + "' may only contain A-Z a-z 0-9 . _ -");
  }
  parsed.id_key = id->key;
  parsed.id_value = id->value;
  const std::string who = "task '" + task.id + "': ";

  const Entry* dimension = fields.Find("dimension");
  if (!dimension) Fail(task.location, who + "missing required field 'dimension'");
  task.dimension = RequireString(file, dimension->value);
  if (!context.dimensions.empty() &&
      std::find(context.dimensions.begin(), context.dimensions.end(), task.dimension) ==
          context.dimensions.end()) {
    Fail(file, dimension->value,
         "unknown dimension '" + task.dimension + "'" + Suggest(task.dimension, context.dimensions));
  }

  if (const Entry* e = fields.Find("difficulty")) {
    task.difficulty = RequireOneOf(file, e->value, "difficulty", kDifficulties);
  }
  if (const Entry* e = fields.Find("weight")) task.weight = RequirePositive(file, e->value, "weight");

  const Entry* prompt = fields.Find("prompt");
  const Entry* messages = fields.Find("messages");
  if (prompt && messages) {
    Fail(file, messages->key, who + "give either 'prompt' or 'messages', not both");
  }
  if (!prompt && !messages) Fail(task.location, who + "missing required field 'prompt' or 'messages'");
  if (prompt) {
    task.messages = json::array({{{"role", "user"}, {"content", RequireString(file, prompt->value)}}});
  } else {
    if (!messages->value.IsSequence()) WrongType(file, messages->value, "a list");
    if (messages->value.size() == 0) Fail(file, messages->value, who + "'messages' is empty");
    for (const auto& message : messages->value) {
      const Fields parts(file, message, kMessageKeys);
      const Entry* role = parts.Find("role");
      const Entry* content = parts.Find("content");
      if (!role) Fail(file, message, who + "message is missing required field 'role'");
      if (!content) Fail(file, message, who + "message is missing required field 'content'");
      task.messages.push_back({{"role", RequireOneOf(file, role->value, "role", kRoles)},
                               {"content", RequireString(file, content->value)}});
    }
  }

  task.generation = context.defaults;
  for (const auto& key : kGenerationKeys) {
    if (const Entry* e = fields.Find(key)) task.generation[key] = GenerationValue(file, key, e->value);
  }

  const Entry* grader = fields.Find("grader");
  if (!grader) Fail(task.location, who + "missing required field 'grader'");
  if (!grader->value.IsMap()) WrongType(file, grader->value, "a mapping");
  const YAML::Node type = grader->value["type"];
  if (!type) Fail(file, grader->value, who + "grader is missing required field 'type'");
  const std::string type_name = RequireString(file, type);
  const auto known = context.graders->find(type_name);
  if (known == context.graders->end()) {
    std::vector<std::string> types;
    for (const auto& [name, version] : *context.graders) types.push_back(name);
    const std::string best = ClosestMatch(type_name, types);
    Fail(file, type, "unknown grader '" + type_name + "'" +
                         (best.empty() ? "" : ", did you mean '" + best + "'?") +
                         " (evalrun graders lists them)");
  }
  task.grader = ToJson(file, grader->value);
  task.grader_version = known->second;

  if (const Entry* e = fields.Find("agent")) {
    if (!e->value.IsMap()) WrongType(file, e->value, "a mapping");
    const YAML::Node kind = e->value["kind"];
    if (kind && kind.IsScalar() && kind.Scalar() == "repo") {
      task.agent = ParseRepoAgent(file, e->value, context, &task);
    } else {
      task.agent = ToJson(file, e->value);
    }
  }

  if (const Entry* e = fields.Find("files")) {
    if (!e->value.IsSequence()) WrongType(file, e->value, "a list");
    for (const auto& item : e->value) {
      const std::string path = RequireString(file, item);
      if (!IsCleanRelative(path)) {
        Fail(file, item, "file path '" + path + "' must be relative to the suite folder, without '..'");
      }
      const std::optional<std::string> bytes = context.files->Read(Join(context.suite_dir, path));
      if (!bytes) Fail(file, item, who + "file '" + path + "' not found");
      task.files.push_back({path, Sha256Hex(*bytes)});
    }
  }

  if (const Entry* e = fields.Find("tags")) task.tags = RequireStringList(file, e->value);

  if (const Entry* e = fields.Find("hash")) {
    // Taken as written (a plain all-digit hash would otherwise resolve to an integer).
    static const std::regex kHash("[0-9a-fA-F]{16,64}");
    if (!e->value.IsScalar() || !std::regex_match(e->value.Scalar(), kHash)) {
      Fail(file, e->value, "hash must be 16 to 64 hex characters");
    }
    task.declared_hash = e->value.Scalar();
    std::transform(task.declared_hash.begin(), task.declared_hash.end(),
                   task.declared_hash.begin(), [](unsigned char c) { return std::tolower(c); });
    task.hash_location = Where(file, e->value);
    parsed.hash_value = e->value;
    parsed.has_hash = true;
  }

  task.hash = ComputeTaskHash(task);
  return parsed;
}

bool DeclaredHashMatches(const Task& task) {
  return task.hash.compare(0, task.declared_hash.size(), task.declared_hash) == 0;
}

// --- Files ------------------------------------------------------------------------------------

// Checks yaml-cpp does not make, before it sees the text: size, NUL bytes (yaml-cpp calls one
// "unknown escape character" or stops there), UTF-8 (it would take the bytes silently), each named at file:line:column (columns
// count bytes, as yaml-cpp's do). Nesting is left to yaml-cpp's own depth guard and ToJson: a
// bracket count here would also count brackets inside strings.
void PrescanYaml(const std::string& file, const std::string& text) {
  if (text.size() > limits::kYamlFileBytes) {
    Fail(SourceLocation{file, 1, 1}, "the file is " + std::to_string(text.size()) +
                                         " bytes, more than the " +
                                         std::to_string(limits::kYamlFileBytes >> 20) +
                                         " MiB a YAML file may hold (docs/limits.md)");
  }
  int line = 1;
  size_t line_start = 0;
  const auto at = [&](size_t i) {
    return SourceLocation{file, line, static_cast<int>(i - line_start) + 1};
  };
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      ++line;
      line_start = ++i;
      continue;
    }
    if (c == 0) Fail(at(i), "NUL byte in the file (a YAML file is text)");
    if (c < 0x80) {
      ++i;
      continue;
    }
    // A UTF-8 sequence: lead byte, then 1-3 continuation bytes; overlong forms, surrogates and
    // code points above U+10FFFF are invalid (RFC 3629).
    int length = 0;
    uint32_t min = 0;
    if (c >= 0xC2 && c <= 0xDF) length = 2, min = 0x80;
    else if (c >= 0xE0 && c <= 0xEF) length = 3, min = 0x800;
    else if (c >= 0xF0 && c <= 0xF4) length = 4, min = 0x10000;
    bool valid = length > 0 && i + length <= text.size();
    uint32_t cp = length == 2 ? c & 0x1F : length == 3 ? c & 0x0F : c & 0x07;
    for (int k = 1; valid && k < length; ++k) {
      const auto b = static_cast<unsigned char>(text[i + k]);
      if ((b & 0xC0) != 0x80) valid = false;
      cp = (cp << 6) | (b & 0x3F);
    }
    if (valid && (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))) valid = false;
    if (!valid) Fail(at(i), "invalid UTF-8 (save the file as UTF-8)");
    i += length;
  }
}

YAML::Node ParseYaml(const std::string& file, const std::string& text) {
  PrescanYaml(file, text);
  try {
    return YAML::Load(text);
  } catch (const YAML::DeepRecursion& e) {
    Fail(SourceLocation{file, e.mark.line + 1, e.mark.column + 1},
         "nested too deeply (yaml-cpp stops at " + std::to_string(e.depth()) +
             " levels; evalrun reads at most " + std::to_string(limits::kYamlDepth) +
             ", docs/limits.md)");
  } catch (const YAML::ParserException& e) {
    Fail(SourceLocation{file, e.mark.line + 1, e.mark.column + 1}, e.msg);
  } catch (const YAML::Exception& e) {
    Fail(SourceLocation{file, e.mark.line + 1, e.mark.column + 1}, e.msg);
  }
}

// The top-level mapping of suite.yaml, checked; `tasks` and `include` are left to the caller.
struct SuiteHeader {
  std::string name;
  std::string description;
  json defaults = json::object();
  std::map<std::string, double> dimension_weights;
  std::vector<std::string> dimensions;  // in declaration order
  std::optional<YAML::Node> include;
  std::optional<YAML::Node> tasks;
};

SuiteHeader ParseSuiteHeader(const std::string& file, const YAML::Node& root) {
  if (!root.IsMap()) {
    Fail(SourceLocation{file, 1, 1},
         std::string("expected a mapping with a 'suite' key at the top level, got ") +
             KindName(KindOf(root)));
  }
  const Fields fields(file, root, kSuiteKeys);
  CheckSchemaVersion(file, fields);
  SuiteHeader header;
  const Entry* name = fields.Find("suite");
  if (!name) Fail(SourceLocation{file, 1, 1}, "missing required field 'suite' (the suite's name)");
  header.name = RequireString(file, name->value);
  if (const Entry* e = fields.Find("description")) header.description = RequireString(file, e->value);
  if (const Entry* e = fields.Find("defaults")) {
    const Fields defaults(file, e->value, kGenerationKeys);
    for (const auto& [key, entry] : defaults.entries()) {
      header.defaults[key] = GenerationValue(file, key, entry.value);
    }
  }
  if (const Entry* e = fields.Find("dimensions")) {
    if (!e->value.IsMap()) WrongType(file, e->value, "a mapping");
    std::set<std::string> seen;
    for (const auto& entry : e->value) {
      const std::string dimension = RequireString(file, entry.first);
      if (!seen.insert(dimension).second) {
        Fail(file, entry.first, "duplicate key '" + dimension + "'");
      }
      header.dimension_weights[dimension] =
          RequirePositive(file, entry.second, "dimension weight");
      header.dimensions.push_back(dimension);
    }
  }
  if (const Entry* e = fields.Find("include")) header.include = e->value;
  if (const Entry* e = fields.Find("tasks")) header.tasks = e->value;
  return header;
}

// The task list of a task file: a mapping with `tasks:` (and optionally schema_version).
YAML::Node TaskFileTasks(const std::string& file, const YAML::Node& root) {
  if (!root.IsMap()) {
    Fail(SourceLocation{file, 1, 1},
         std::string("expected a mapping with a 'tasks' list at the top level, got ") +
             KindName(KindOf(root)));
  }
  const Fields fields(file, root, kTaskFileKeys);
  CheckSchemaVersion(file, fields);
  const Entry* tasks = fields.Find("tasks");
  if (!tasks) Fail(SourceLocation{file, 1, 1}, "missing required field 'tasks'");
  return tasks->value;
}

std::vector<ParsedTask> ParseTaskList(const std::string& file, const YAML::Node& list,
                                      const TaskContext& context) {
  if (!list.IsSequence()) WrongType(file, list, "a list");
  std::vector<ParsedTask> out;
  for (const auto& node : list) out.push_back(ParseTask(file, node, context));
  return out;
}

bool HasWildcard(const std::string& text) { return text.find_first_of("*?[") != std::string::npos; }

// The files (relative to `dir`) that include pattern `node` names, sorted.
std::vector<std::string> ExpandInclude(const SuiteFiles& files, const std::string& dir,
                                       const std::string& file, const YAML::Node& node) {
  const std::string pattern = RequireString(file, node);
  if (!IsCleanRelative(pattern)) {
    Fail(file, node, "include pattern '" + pattern +
                         "' must be relative to the suite folder, without '..'");
  }
  const size_t slash = pattern.rfind('/');
  const std::string folder = slash == std::string::npos ? "" : pattern.substr(0, slash);
  if (HasWildcard(folder)) {
    Fail(file, node, "include pattern '" + pattern +
                         "': wildcards are supported in the file name only, not in folders");
  }
  std::vector<std::string> out;
  for (const auto& path : files.List(Join(dir, folder))) {
    const std::string relative = dir.empty() ? path : path.substr(dir.size() + 1);
    if (relative != "suite.yaml" && GlobMatch(pattern, relative)) out.push_back(relative);
  }
  if (out.empty()) Fail(file, node, "include pattern '" + pattern + "' matches no files");
  return out;
}

// --- In-place hash lines ----------------------------------------------------------------------

struct Edit {
  size_t offset;
  size_t length;  // bytes replaced
  std::string text;
};

class LineOffsets {
 public:
  explicit LineOffsets(const std::string& text) {
    // yaml-cpp skips a UTF-8 byte order mark without counting it in line 0's columns.
    starts_.push_back(text.rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0);
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '\n') starts_.push_back(i + 1);
    }
  }
  // yaml-cpp columns count bytes.
  size_t Offset(const YAML::Mark& mark) const { return starts_.at(mark.line) + mark.column; }

 private:
  std::vector<size_t> starts_;
};

// The edit that makes `parsed` declare `hash16`: the value of an existing `hash:` replaced (quotes
// and trailing comment kept), or a `hash:` line inserted after the `id:` line, indented like `id`.
Edit HashEdit(const std::string& text, const LineOffsets& lines,
              const ParsedTask& parsed, const std::string& hash16) {
  if (parsed.has_hash) {
    const size_t start = lines.Offset(parsed.hash_value.Mark());
    const char first = text.at(start);
    if (first == '"' || first == '\'') {
      const size_t close = text.find(first, start + 1);
      return {start + 1, close - start - 1, hash16};
    }
    size_t end = start;
    while (end < text.size() && std::isxdigit(static_cast<unsigned char>(text[end]))) ++end;
    return {start, end - start, hash16};
  }
  if (parsed.node.Style() == YAML::EmitterStyle::Flow) {
    Fail(parsed.task.location, "task '" + parsed.task.id +
                                   "': --write cannot insert a hash into a flow-style mapping "
                                   "({...}); write the task as a block mapping");
  }
  const size_t value = lines.Offset(parsed.id_value.Mark());
  const size_t newline = text.find('\n', value);
  const std::string indent(static_cast<size_t>(parsed.id_key.Mark().column), ' ');
  if (newline == std::string::npos) return {text.size(), 0, "\n" + indent + "hash: " + hash16};
  const std::string eol = newline > 0 && text[newline - 1] == '\r' ? "\r\n" : "\n";
  return {newline + 1, 0, indent + "hash: " + hash16 + eol};
}

std::string ReadDiskFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot read the file");
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// The folder of the nearest suite.yaml at or above `start`, if any.
std::optional<fs::path> FindSuiteFolder(const fs::path& start) {
  std::error_code error;
  fs::path folder = fs::absolute(start, error);
  if (error) return std::nullopt;
  while (true) {
    if (fs::is_regular_file(folder / "suite.yaml", error)) return folder;
    if (!folder.has_parent_path() || folder.parent_path() == folder) return std::nullopt;
    folder = folder.parent_path();
  }
}

}  // namespace

Suite LoadEvalrunSuite(const SuiteFiles& files, const std::string& dir,
                       const GraderVersions& graders) {
  const std::string suite_file = Join(dir, "suite.yaml");
  const std::optional<std::string> text = files.Read(suite_file);
  if (!text) throw Error(files.Describe() + ": no " + suite_file + " (not an evalrun suite)");
  const YAML::Node root = ParseYaml(suite_file, *text);
  const SuiteHeader header = ParseSuiteHeader(suite_file, root);

  Suite suite;
  suite.name = header.name;
  suite.description = header.description;
  suite.defaults = header.defaults;
  suite.dimension_weights = header.dimension_weights;
  suite.path = dir;

  TaskContext context;
  context.graders = &graders;
  context.files = &files;
  context.suite_dir = dir;
  context.defaults = header.defaults;
  context.dimensions = header.dimensions;

  std::map<std::string, SourceLocation> ids;
  auto add = [&](std::vector<ParsedTask> parsed) {
    for (auto& p : parsed) {
      Task& task = p.task;
      const auto [it, fresh] = ids.emplace(task.id, task.location);
      if (!fresh) {
        Fail(task.location,
             "duplicate task id '" + task.id + "' (first declared at " + it->second.ToString() + ")");
      }
      if (!task.declared_hash.empty() && !DeclaredHashMatches(task)) {
        Fail(task.hash_location, "task '" + task.id + "': declared hash " +
                                     task.declared_hash.substr(0, 16) +
                                     " but the content hashes to " + task.ShortHash() +
                                     " (evalrun hash --write updates it)");
      }
      suite.tasks.push_back(std::move(task));
    }
  };

  if (header.tasks) add(ParseTaskList(suite_file, *header.tasks, context));
  if (header.include) {
    if (!header.include->IsSequence()) WrongType(suite_file, *header.include, "a list");
    std::set<std::string> done;
    for (const auto& pattern : *header.include) {
      for (const auto& relative : ExpandInclude(files, dir, suite_file, pattern)) {
        if (!done.insert(relative).second) continue;
        const std::string path = Join(dir, relative);
        const std::optional<std::string> bytes = files.Read(path);
        if (!bytes) Fail(suite_file, pattern, "included file '" + relative + "' cannot be read");
        add(ParseTaskList(path, TaskFileTasks(path, ParseYaml(path, *bytes)), context));
      }
    }
  }
  if (suite.tasks.empty()) Fail(SourceLocation{suite_file, 1, 1}, "the suite has no tasks");
  return suite;
}

nlohmann::json HashedFields(const Task& task) {
  json files = json::object();
  for (const auto& file : task.files) files[file.path] = file.sha256;
  return {{"id", task.id},
          {"dimension", task.dimension},
          {"difficulty", task.difficulty},
          {"weight", task.weight},
          {"messages", task.messages},
          {"generation", task.generation},
          {"grader", task.grader},
          {"grader_version", task.grader_version},
          {"agent", task.agent},
          {"files", files}};
}

std::string ComputeTaskHash(const Task& task) { return Sha256Hex(CanonicalJson(HashedFields(task))); }

std::vector<HashLine> HashFiles(const std::vector<std::string>& paths, bool write,
                                const GraderVersions& graders) {
  std::vector<HashLine> out;
  for (const auto& path : paths) {
    const std::string text = ReadDiskFile(path);
    const YAML::Node root = ParseYaml(path, text);
    const fs::path here = fs::path(path).parent_path();

    TaskContext context;
    context.graders = &graders;
    std::optional<YAML::Node> tasks;
    fs::path suite_folder = here;
    if (root.IsMap() && root["suite"]) {
      const SuiteHeader header = ParseSuiteHeader(path, root);
      context.defaults = header.defaults;
      context.dimensions = header.dimensions;
      tasks = header.tasks;
    } else {
      tasks = TaskFileTasks(path, root);
      if (const auto found = FindSuiteFolder(here.empty() ? fs::path(".") : here)) {
        suite_folder = *found;
        const std::string suite_path = (*found / "suite.yaml").string();
        const SuiteHeader header = ParseSuiteHeader(suite_path, ParseYaml(suite_path,
                                                                          ReadDiskFile(suite_path)));
        context.defaults = header.defaults;
        context.dimensions = header.dimensions;
      }
    }
    const DiskFiles files(suite_folder.empty() ? "." : suite_folder.string());
    context.files = &files;
    if (!tasks) continue;  // a suite.yaml with only `include`

    const std::vector<ParsedTask> parsed = ParseTaskList(path, *tasks, context);
    const LineOffsets lines(text);
    std::vector<Edit> edits;
    for (const auto& p : parsed) {
      HashLine line{path, p.task.id, p.task.ShortHash(), false};
      if (write && (p.task.declared_hash.empty() || !DeclaredHashMatches(p.task))) {
        edits.push_back(HashEdit(text, lines, p, line.hash));
        line.changed = true;
      }
      out.push_back(line);
    }
    if (edits.empty()) continue;
    std::sort(edits.begin(), edits.end(),
              [](const Edit& a, const Edit& b) { return a.offset > b.offset; });
    std::string updated = text;
    for (const auto& edit : edits) updated.replace(edit.offset, edit.length, edit.text);
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file << updated;
    if (!file) throw Error(path + ": cannot write the file");
  }
  return out;
}

}  // namespace evalrun
