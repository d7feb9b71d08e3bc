// The repository task's tools (runner/agent/repo_tools.h).
#include "runner/agent/repo_tools.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"

namespace evalrun {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json Function(const char* name, const char* description, json properties,
              std::vector<std::string> required) {
  return {{"type", "function"},
          {"function",
           {{"name", name},
            {"description", description},
            {"parameters",
             {{"type", "object"}, {"properties", std::move(properties)}, {"required", required}}}}}};
}

json AllSchemas() {
  const json path = {{"type", "string"},
                     {"description", "path relative to the repository root, e.g. src/app.py"}};
  return json::array({
      Function("bash",
               "Run a shell command with bash -c in the repository root (/work). No network. "
               "Returns stdout, stderr and the exit code.",
               {{"command", {{"type", "string"}, {"description", "the command line"}}}},
               {"command"}),
      Function("read_file", "Read a file of the repository.", {{"path", path}}, {"path"}),
      Function("write_file", "Create or overwrite a file of the repository with the given content.",
               {{"path", path}, {"content", {{"type", "string"}}}}, {"path", "content"}),
      Function("str_replace",
               "Replace the one exact occurrence of old_str in a file with new_str. old_str must "
               "occur exactly once.",
               {{"path", path}, {"old_str", {{"type", "string"}}}, {"new_str", {{"type", "string"}}}},
               {"path", "old_str", "new_str"}),
      Function("submit", "Submit your change to the repository when you are done.", json::object(),
               {}),
  });
}

// Valid UTF-8 for the transcript (invalid bytes become U+FFFD).
std::string Utf8(const std::string& text) {
  return json::parse(json(text).dump(-1, ' ', false, json::error_handler_t::replace))
      .get<std::string>();
}

ToolOutcome Failed(std::string observation) {
  ToolOutcome outcome;
  outcome.ok = false;
  outcome.observation = std::move(observation);
  return outcome;
}

std::optional<std::string> StringArgument(const json& arguments, const char* key) {
  if (!arguments.is_object()) return std::nullopt;
  const auto it = arguments.find(key);
  if (it == arguments.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

std::string ReadBytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

}  // namespace

RepoTools::RepoTools(const RepoTask& task, RepoWorkspace& workspace, const Sandbox& sandbox)
    : task_(task), workspace_(workspace), sandbox_(sandbox) {}

json RepoTools::Schemas() const {
  json out = json::array();
  for (const auto& schema : AllSchemas()) {
    const std::string name = schema["function"]["name"];
    if (std::find(task_.tools.begin(), task_.tools.end(), name) != task_.tools.end()) {
      out.push_back(schema);
    }
  }
  return out;
}

std::string RepoTools::Cut(const std::string& text) const {
  const size_t limit = task_.limits.observation_bytes;
  if (text.size() <= limit) return Utf8(text);
  const size_t head = limit / 2;
  const size_t tail = limit - head;
  return Utf8(text.substr(0, head)) + "\n[... " + std::to_string(text.size() - head - tail) +
         " bytes cut ...]\n" + Utf8(text.substr(text.size() - tail));
}

namespace {

// The workspace file `given` names, or why it may not be used. `write`: .git is refused too.
struct Resolved {
  fs::path path;
  std::string relative;
  std::string error;
};

Resolved Resolve(const std::string& root, const std::string& given, bool write) {
  Resolved out;
  std::string relative = given;
  while (relative.rfind("./", 0) == 0) relative = relative.substr(2);
  out.relative = relative;
  if (given.empty()) {
    out.error = "'path' must not be empty";
  } else if (given[0] == '/') {
    out.error = "path '" + given +
                "' is absolute: give a path relative to the repository root (which is /work in "
                "bash)";
  } else if (relative == ".." || relative.rfind("../", 0) == 0 ||
             relative.find("/../") != std::string::npos ||
             (relative.size() >= 3 && relative.compare(relative.size() - 3, 3, "/..") == 0)) {
    out.error = "path '" + given + "' leaves the repository ('..')";
  } else if (!IsCleanRepoPath(relative)) {
    out.error = "path '" + given + "' is not a clean relative path";
  } else if (write && (relative == ".git" || relative.rfind(".git/", 0) == 0)) {
    out.error = "path '" + given + "' is inside .git, which is read-only";
  }
  if (!out.error.empty()) return out;
  std::error_code ec;
  const fs::path base = fs::canonical(root, ec);
  out.path = fs::path(root) / relative;
  const fs::path real = fs::weakly_canonical(out.path, ec);
  const std::string inside = base.string() + "/";
  if (ec || real.string().rfind(inside, 0) != 0) {
    out.error = "path '" + given + "' leads outside the repository through a symbolic link";
  } else if (write) {
    const std::string real_relative = real.lexically_relative(base).generic_string();
    if (real_relative == ".git" || real_relative.rfind(".git/", 0) == 0) {
      out.error = "path '" + given + "' leads into .git, which is read-only";
    }
  }
  return out;
}

}  // namespace

ToolOutcome RepoTools::Execute(const std::string& name, const json& arguments) {
  const auto started = std::chrono::steady_clock::now();
  ToolOutcome outcome;
  if (std::find(task_.tools.begin(), task_.tools.end(), name) == task_.tools.end()) {
    std::string list;
    for (const auto& tool : task_.tools) list += (list.empty() ? "" : ", ") + tool;
    outcome = Failed("unknown tool '" + name + "'; the tools are: " + list);
  } else if (name == "bash") {
    outcome = Bash(arguments);
  } else if (name == "read_file") {
    outcome = ReadFile(arguments);
  } else if (name == "write_file") {
    outcome = WriteFile(arguments);
  } else if (name == "str_replace") {
    outcome = StrReplace(arguments);
  } else {  // submit
    submitted_ = true;
    outcome.submitted = true;
    outcome.observation = "submitted";
  }
  outcome.elapsed_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  return outcome;
}

ToolOutcome RepoTools::Bash(const json& arguments) {
  const std::optional<std::string> command = StringArgument(arguments, "command");
  if (!command) return Failed("bash needs 'command' (a string)");
  SandboxRun run;
  run.argv = {"bash", "-c", *command};
  run.workspace = workspace_.path();
  run.read_only = {".git"};
  run.limits.wall_seconds = task_.limits.command_timeout_s;
  run.limits.cpu_seconds = task_.limits.command_timeout_s;
  run.limits.memory_bytes = 2L << 30;
  run.limits.max_file_bytes = 64L << 20;
  const SandboxResult result = sandbox_.Run(run);

  ToolOutcome outcome;
  std::string text = result.stdout_text;
  if (!result.stderr_text.empty()) {
    if (!text.empty() && text.back() != '\n') text += '\n';
    text += "[stderr]\n" + result.stderr_text;
  }
  if (!text.empty() && text.back() != '\n') text += '\n';
  if (result.timed_out) {
    text += "[timed out after " + std::to_string(static_cast<int>(task_.limits.command_timeout_s)) +
            " s: the command was killed]";
  } else {
    text += "[exit code " + std::to_string(result.exit_code) + "]";
  }
  outcome.observation = Cut(text);
  outcome.record = {{"exit_code", result.exit_code},
                    {"timed_out", result.timed_out},
                    {"wall_ms", result.wall_seconds * 1000}};
  // What the sandbox stopped, as the output shows it.
  json refused = json::array();
  const std::string& err = result.stderr_text;
  if (err.find("Read-only file system") != std::string::npos) {
    refused.push_back("write outside /work (read-only file system)");
  }
  if (err.find("Network is unreachable") != std::string::npos ||
      err.find("Temporary failure in name resolution") != std::string::npos ||
      err.find("Could not resolve host") != std::string::npos ||
      err.find("Connection refused") != std::string::npos) {
    refused.push_back("network (there is none)");
  }
  if (err.find("/root") != std::string::npos &&
      (err.find("No such file or directory") != std::string::npos ||
       err.find("Permission denied") != std::string::npos)) {
    refused.push_back("/root (not visible in the sandbox)");
  }
  if (!refused.empty()) outcome.record["refused"] = refused;
  if (result.exit_code < 0 && !result.timed_out) {
    outcome.ok = false;  // the sandbox could not start the command
  }
  return outcome;
}

ToolOutcome RepoTools::ReadFile(const json& arguments) {
  const std::optional<std::string> path = StringArgument(arguments, "path");
  if (!path) return Failed("read_file needs 'path' (a string)");
  const Resolved target = Resolve(workspace_.path(), *path, false);
  if (!target.error.empty()) return Failed(target.error);
  std::error_code ec;
  const fs::file_status status = fs::status(target.path, ec);
  if (fs::is_directory(status)) {
    std::vector<std::string> names;
    for (fs::directory_iterator it(target.path, ec), end; !ec && it != end; it.increment(ec)) {
      names.push_back(it->path().filename().string() + (it->is_directory(ec) ? "/" : ""));
    }
    std::sort(names.begin(), names.end());
    std::string list;
    for (const auto& n : names) list += n + "\n";
    return Failed("'" + *path + "' is a folder; it holds:\n" + Cut(list));
  }
  if (!fs::is_regular_file(status)) return Failed("no file '" + *path + "'");
  ToolOutcome outcome;
  outcome.observation = Cut(ReadBytes(target.path));
  return outcome;
}

ToolOutcome RepoTools::WriteFile(const json& arguments) {
  const std::optional<std::string> path = StringArgument(arguments, "path");
  const std::optional<std::string> content = StringArgument(arguments, "content");
  if (!path || !content) return Failed("write_file needs 'path' and 'content' (strings)");
  const Resolved target = Resolve(workspace_.path(), *path, true);
  if (!target.error.empty()) return Failed(target.error);
  try {
    workspace_.WriteFile(target.relative, *content);
  } catch (const Error& e) {
    return Failed(std::string("cannot write '") + *path + "': " + e.what());
  }
  ToolOutcome outcome;
  outcome.observation = "wrote " + std::to_string(content->size()) + " bytes to " + *path;
  outcome.record = {{"path", target.relative}, {"bytes", content->size()}};
  return outcome;
}

ToolOutcome RepoTools::StrReplace(const json& arguments) {
  const std::optional<std::string> path = StringArgument(arguments, "path");
  const std::optional<std::string> old_str = StringArgument(arguments, "old_str");
  const std::optional<std::string> new_str = StringArgument(arguments, "new_str");
  if (!path || !old_str || !new_str) {
    return Failed("str_replace needs 'path', 'old_str' and 'new_str' (strings)");
  }
  if (old_str->empty()) return Failed("str_replace: 'old_str' must not be empty");
  const Resolved target = Resolve(workspace_.path(), *path, true);
  if (!target.error.empty()) return Failed(target.error);
  std::error_code ec;
  if (!fs::is_regular_file(target.path, ec)) return Failed("no file '" + *path + "'");
  std::string text = ReadBytes(target.path);
  size_t count = 0;
  size_t at = std::string::npos;
  for (size_t pos = text.find(*old_str); pos != std::string::npos;
       pos = text.find(*old_str, pos + 1)) {
    if (count++ == 0) at = pos;
  }
  if (count == 0) return Failed("str_replace: old_str does not occur in " + *path);
  if (count > 1) {
    return Failed("str_replace: old_str occurs " + std::to_string(count) + " times in " + *path +
                  "; include more surrounding text so that it occurs once");
  }
  text.replace(at, old_str->size(), *new_str);
  try {
    workspace_.WriteFile(target.relative, text);
  } catch (const Error& e) {
    return Failed(std::string("cannot write '") + *path + "': " + e.what());
  }
  ToolOutcome outcome;
  const size_t line = static_cast<size_t>(std::count(text.begin(), text.begin() + at, '\n')) + 1;
  outcome.observation = "replaced 1 occurrence in " + *path + " at line " + std::to_string(line);
  outcome.record = {{"path", target.relative}};
  return outcome;
}

json RepoTools::Episode(const std::string& termination_reason) const {
  const RepoDiff diff = workspace_.Diff();
  return {{"diff", diff.patch},
          {"diff_notes", diff.notes},
          {"termination_reason", termination_reason},
          {"submitted", submitted_}};
}

}  // namespace evalrun
