#include "runner/agent/repo_tools.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "tests/support/catch.h"

#include "core/error.h"

// The tools against a real workspace and the bubblewrap sandbox (tests that run commands return
// early, with a warning, where bubblewrap cannot start; the file tools need no sandbox).

namespace evalrun {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const Sandbox& Bubblewrap() {
  static const std::unique_ptr<Sandbox> sandbox = MakeBubblewrapSandbox();
  return *sandbox;
}

bool HaveBubblewrap() {
  if (auto why = Bubblewrap().Unavailable()) {
    WARN("bubblewrap unavailable, bash tool not tested: " << *why);
    return false;
  }
  return true;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// A workspace over a two-file repository, and its tools.
struct Fixture {
  Fixture() {
    const std::vector<RepoFile> files = {{"app.py", "def add(a, b):\n    return a - b\n", false},
                                         {"tests/test_app.py", "import app\n", false}};
    task.path = "repo";
    for (const auto& f : files) {
      task.files.push_back({f.path, f.executable});
      suite["repo/" + f.path] = f.content;
    }
    task.base_tree = GitTreeId(files);
    task.limits.command_timeout_s = 5;
    task.limits.observation_bytes = 400;
    workspace = RepoWorkspace::Create(task, [this](const std::string& p) -> std::optional<std::string> {
      const auto it = suite.find(p);
      if (it == suite.end()) return std::nullopt;
      return it->second;
    });
    tools = std::make_unique<RepoTools>(task, *workspace, Bubblewrap());
  }
  fs::path root() const { return workspace->path(); }
  ToolOutcome Call(const std::string& name, const json& arguments) {
    return tools->Execute(name, arguments);
  }

  RepoTask task;
  std::map<std::string, std::string> suite;
  std::unique_ptr<RepoWorkspace> workspace;
  std::unique_ptr<RepoTools> tools;
};

TEST_CASE("repo tools: only the task's tools are offered and accepted", "[repo_tools]") {
  Fixture f;
  CHECK(f.tools->Schemas().size() == 5);
  f.task.tools = {"read_file", "submit"};
  RepoTools limited(f.task, *f.workspace, Bubblewrap());
  const json schemas = limited.Schemas();
  REQUIRE(schemas.size() == 2);
  CHECK(schemas[0]["function"]["name"] == "read_file");
  CHECK(schemas[1]["function"]["name"] == "submit");
  const ToolOutcome outcome = limited.Execute("bash", {{"command", "ls"}});
  CHECK_FALSE(outcome.ok);
  CHECK(outcome.observation == "unknown tool 'bash'; the tools are: read_file, submit");
}

TEST_CASE("repo tools: read_file, write_file, str_replace and submit", "[repo_tools]") {
  Fixture f;
  ToolOutcome read = f.Call("read_file", {{"path", "app.py"}});
  CHECK(read.ok);
  CHECK(read.observation == "def add(a, b):\n    return a - b\n");
  CHECK(f.Call("read_file", {{"path", "./app.py"}}).ok);

  const ToolOutcome written = f.Call("write_file", {{"path", "pkg/new.py"}, {"content", "X = 1\n"}});
  CHECK(written.ok);
  CHECK(written.observation == "wrote 6 bytes to pkg/new.py");
  CHECK(ReadFile(f.root() / "pkg/new.py") == "X = 1\n");

  const ToolOutcome replaced =
      f.Call("str_replace", {{"path", "app.py"}, {"old_str", "a - b"}, {"new_str", "a + b"}});
  CHECK(replaced.ok);
  CHECK(replaced.observation == "replaced 1 occurrence in app.py at line 2");
  CHECK(ReadFile(f.root() / "app.py") == "def add(a, b):\n    return a + b\n");

  SECTION("str_replace needs exactly one occurrence") {
    ToolOutcome none = f.Call("str_replace", {{"path", "app.py"}, {"old_str", "zzz"}, {"new_str", ""}});
    CHECK_FALSE(none.ok);
    CHECK(none.observation == "str_replace: old_str does not occur in app.py");
    ToolOutcome two = f.Call("str_replace", {{"path", "app.py"}, {"old_str", "a"}, {"new_str", "c"}});
    CHECK_FALSE(two.ok);
    CHECK(two.observation ==
          "str_replace: old_str occurs 3 times in app.py; include more surrounding text so that "
          "it occurs once");
    CHECK(f.Call("str_replace", {{"path", "app.py"}, {"old_str", ""}, {"new_str", "x"}}).observation ==
          "str_replace: 'old_str' must not be empty");
  }
  SECTION("missing files and arguments") {
    CHECK(f.Call("read_file", {{"path", "nope.py"}}).observation == "no file 'nope.py'");
    CHECK(f.Call("read_file", json::object()).observation == "read_file needs 'path' (a string)");
    CHECK(f.Call("write_file", {{"path", "x"}}).observation ==
          "write_file needs 'path' and 'content' (strings)");
    const ToolOutcome folder = f.Call("read_file", {{"path", "tests"}});
    CHECK_FALSE(folder.ok);
    CHECK(folder.observation == "'tests' is a folder; it holds:\ntest_app.py\n");
  }
  SECTION("submit ends the episode and the diff is the episode record") {
    const ToolOutcome submitted = f.Call("submit", json::object());
    CHECK(submitted.submitted);
    CHECK(f.tools->submitted());
    const json episode = f.tools->Episode("completed");
    CHECK(episode["submitted"] == true);
    CHECK(episode["termination_reason"] == "completed");
    const std::string diff = episode["diff"];
    CHECK(diff.find("+    return a + b") != std::string::npos);
    CHECK(diff.find("new file mode 100644") != std::string::npos);
  }
}

TEST_CASE("repo tools: paths that leave the workspace or enter .git are refused", "[repo_tools]") {
  Fixture f;
  const auto refused = [&](const std::string& tool, const json& args) {
    const ToolOutcome outcome = f.Call(tool, args);
    CHECK_FALSE(outcome.ok);
    return outcome.observation;
  };
  CHECK(refused("read_file", {{"path", "/etc/passwd"}}) ==
        "path '/etc/passwd' is absolute: give a path relative to the repository root (which is "
        "/work in bash)");
  CHECK(refused("read_file", {{"path", "../../etc/passwd"}}) ==
        "path '../../etc/passwd' leaves the repository ('..')");
  CHECK(refused("write_file", {{"path", "tests/../../x"}, {"content", ""}}) ==
        "path 'tests/../../x' leaves the repository ('..')");
  CHECK(refused("write_file", {{"path", ".git/config"}, {"content", ""}}) ==
        "path '.git/config' is inside .git, which is read-only");
  CHECK(refused("str_replace", {{"path", ".git/HEAD"}, {"old_str", "a"}, {"new_str", "b"}}) ==
        "path '.git/HEAD' is inside .git, which is read-only");
  fs::create_symlink("/etc/passwd", f.root() / "passwd");
  fs::create_directory_symlink("/tmp", f.root() / "tmp");
  fs::create_directory_symlink(".git", f.root() / "g");
  CHECK(refused("read_file", {{"path", "passwd"}}) ==
        "path 'passwd' leads outside the repository through a symbolic link");
  CHECK(refused("write_file", {{"path", "tmp/evil"}, {"content", "x"}}) ==
        "path 'tmp/evil' leads outside the repository through a symbolic link");
  CHECK(refused("write_file", {{"path", "g/config"}, {"content", "x"}}) ==
        "path 'g/config' leads into .git, which is read-only");
  CHECK_FALSE(fs::exists("/tmp/evil"));
  // .git may be read.
  CHECK(f.Call("read_file", {{"path", ".git/HEAD"}}).observation == "ref: refs/heads/main\n");
}

TEST_CASE("repo tools: bash runs in the workspace and records exit code and time",
          "[repo_tools][sandbox]") {
  if (!HaveBubblewrap()) return;
  Fixture f;
  const ToolOutcome outcome = f.Call("bash", {{"command", "pwd; cat app.py | wc -l; echo oops >&2; exit 3"}});
  CHECK(outcome.ok);
  CHECK(outcome.observation == "/work\n2\n[stderr]\noops\n[exit code 3]");
  CHECK(outcome.record["exit_code"] == 3);
  CHECK(outcome.record["timed_out"] == false);
  CHECK(outcome.record["wall_ms"].get<double>() > 0);
  CHECK_FALSE(outcome.record.contains("refused"));

  SECTION("what bash writes in the workspace stays, and is in the diff") {
    CHECK(f.Call("bash", {{"command", "sed -i 's/a - b/a + b/' app.py && echo made > notes.txt"}}).ok);
    CHECK(ReadFile(f.root() / "notes.txt") == "made\n");
    const std::string diff = f.tools->Episode("completed")["diff"];
    CHECK(diff.find("+    return a + b") != std::string::npos);
    CHECK(diff.find("notes.txt") != std::string::npos);
  }
  SECTION(".git is read-only") {
    const ToolOutcome git = f.Call("bash", {{"command", "echo x > .git/HEAD"}});
    CHECK(git.record["exit_code"] == 1);
    CHECK(git.observation.find("Read-only file system") != std::string::npos);
    CHECK(ReadFile(f.root() / ".git/HEAD") == "ref: refs/heads/main\n");
  }
  SECTION("writing outside /work fails and the record says so") {
    const ToolOutcome out = f.Call("bash", {{"command", "echo x > /etc/evalrun-test-file"}});
    CHECK(out.record["exit_code"] == 1);
    CHECK(out.record["refused"] == json::array({"write outside /work (read-only file system)"}));
    CHECK_FALSE(fs::exists("/etc/evalrun-test-file"));
  }
  SECTION("/root cannot be read") {
    const ToolOutcome out = f.Call("bash", {{"command", "ls /root"}});
    CHECK(out.record["exit_code"] != 0);
    CHECK(out.record["refused"] == json::array({"/root (not visible in the sandbox)"}));
  }
  SECTION("there is no network") {
    const ToolOutcome out = f.Call(
        "bash", {{"command", "python3 -c \"import socket; socket.create_connection(('1.1.1.1', 80), 3)\""}});
    CHECK(out.record["exit_code"] != 0);
    CHECK(out.record["refused"] == json::array({"network (there is none)"}));
  }
  SECTION("a command past its timeout is killed") {
    const ToolOutcome out = f.Call("bash", {{"command", "sleep 30"}});
    CHECK(out.record["timed_out"] == true);
    CHECK(out.observation == "[timed out after 5 s: the command was killed]");
  }
  SECTION("long output is cut to observation_bytes, head and tail kept") {
    const ToolOutcome out = f.Call("bash", {{"command", "echo START; seq 1 2000; echo END"}});
    CHECK(out.observation.rfind("START\n", 0) == 0);
    CHECK(out.observation.find("END\n[exit code 0]") != std::string::npos);
    CHECK(out.observation.find(" bytes cut ...]") != std::string::npos);
    CHECK(out.observation.size() < 460);
  }
}

}  // namespace
}  // namespace evalrun
