#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "tests/support/catch.h"

#include "plugins/sandbox.h"

// `evalrun validate-task` on the shipped repository task (tasks/agent/repo.yaml) and on broken
// copies of it, through the built program. Needs bubblewrap (tests return early, with a warning,
// where it cannot start).

namespace {

namespace fs = std::filesystem;

const std::string kAgentSuite = std::string(EVALRUN_TEST_FIXTURES) + "/../../tasks/agent";

struct Result {
  int code = -1;
  std::string out;
  std::string err;
};

std::string Slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

Result Evalrun(const std::string& args) {
  const std::string err_path = "/tmp/evalrun-validate-task-test-" + std::to_string(getpid()) + ".err";
  FILE* pipe = popen((std::string(EVALRUN_BINARY) + " " + args + " 2>" + err_path).c_str(), "r");
  REQUIRE(pipe);
  Result r;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) r.out.append(buffer, n);
  const int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = Slurp(err_path);
  fs::remove(err_path);
  return r;
}

bool HaveBubblewrap() {
  if (auto why = evalrun::MakeBubblewrapSandbox()->Unavailable()) {
    WARN("bubblewrap unavailable, validate-task not tested: " << *why);
    return false;
  }
  return true;
}

// A copy of the repository task alone (suite.yaml, repo.yaml, repos/, files/) in a fresh folder.
struct SuiteCopy {
  SuiteCopy() {
    char pattern[] = "/tmp/evalrun-validate-task-XXXXXX";
    REQUIRE(mkdtemp(pattern) != nullptr);
    path = pattern;
    for (const char* name : {"suite.yaml", "repo.yaml", "repos", "files"}) {
      fs::copy(fs::path(kAgentSuite) / name, path / name, fs::copy_options::recursive);
    }
    // The copies are edited: without the declared hash, the edit is what fails, not the hash.
    std::string text = Slurp(path / "repo.yaml");
    text = std::regex_replace(text, std::regex("\n +hash: [0-9a-f]+\n"), "\n");
    std::ofstream(path / "repo.yaml", std::ios::binary | std::ios::trunc) << text;
  }
  ~SuiteCopy() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  void Replace(const std::string& file, const std::string& from, const std::string& to) {
    std::string text = Slurp(path / file);
    const size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
    std::ofstream(path / file, std::ios::binary | std::ios::trunc) << text;
  }
  fs::path path;
};

const char* kTask = "minicalc-left-associative";

}  // namespace

TEST_CASE("validate-task: the shipped repository task is valid", "[validate_task][sandbox]") {
  if (!HaveBubblewrap()) return;
  const Result v = Evalrun("validate-task " + kAgentSuite + " --task " + kTask);
  INFO(v.out << v.err);
  CHECK(v.code == 0);
  CHECK_THAT(v.out, Catch::Contains("ok   base: 3 fail_to_pass tests fail\n"));
  CHECK_THAT(v.out, Catch::Contains("ok   gold: 3 fail_to_pass tests pass\n"));
  CHECK_THAT(v.out, Catch::EndsWith("task minicalc-left-associative is valid\n"));
}

TEST_CASE("validate-task: the task read from a commit (PATH@REV) is valid too",
          "[validate_task][sandbox]") {
  if (!HaveBubblewrap()) return;
  // The repository folder then comes from the commit's tree (GitTreeFiles::ListTree), not disk.
  SuiteCopy copy;
  const std::string git = "cd " + copy.path.string() +
                          " && git init -q && git add -A && git -c user.name=t -c "
                          "user.email=t@t commit -qm suite && echo changed >> repos/minicalc/"
                          "README.md";
  REQUIRE(std::system(git.c_str()) == 0);
  // The work tree's edit is not what the commit holds: the pinned suite still validates.
  const Result v = Evalrun("validate-task " + copy.path.string() + "@HEAD --task " + kTask);
  INFO(v.out << v.err);
  CHECK(v.code == 0);
  CHECK_THAT(v.out, Catch::EndsWith("task minicalc-left-associative is valid\n"));
  const Result disk = Evalrun("validate-task " + copy.path.string() + " --task " + kTask);
  CHECK(disk.code == 2);
  CHECK_THAT(disk.err, Catch::Contains("agent.repo.base_tree: the folder repos/minicalc has tree"));
}

TEST_CASE("validate-task: a gold patch that does not fix the bug fails with exit 3",
          "[validate_task][sandbox]") {
  if (!HaveBubblewrap()) return;
  SuiteCopy copy;
  // A patch that applies but changes nothing that matters: README only.
  std::ofstream(copy.path / "files/minicalc/gold.patch", std::ios::trunc)
      << "diff --git a/README.md b/README.md\n--- a/README.md\n+++ b/README.md\n@@ -1 +1,2 @@\n"
      << Slurp(copy.path / "repos/minicalc/README.md").substr(
             0, Slurp(copy.path / "repos/minicalc/README.md").find('\n') + 1)
             .insert(0, " ")
      << "+one more line\n";
  const Result v = Evalrun("validate-task " + copy.path.string() + " --task " + kTask);
  INFO(v.out << v.err);
  CHECK(v.code == 3);
  CHECK_THAT(v.out, Catch::Contains("ok   base: 3 fail_to_pass tests fail\n"));
  CHECK_THAT(v.out, Catch::Contains(
                        "FAIL gold: fail_to_pass tests must pass: "
                        "tests.test_hidden.HiddenTests.test_mixed_addition_and_subtraction (failed), "
                        "tests.test_hidden.HiddenTests.test_subtraction_is_left_associative (failed), "
                        "tests.test_hidden.HiddenTests.test_subtraction_tree (failed)\n"));
  CHECK_THAT(v.out, Catch::EndsWith("task minicalc-left-associative is NOT valid\n"));
}

TEST_CASE("validate-task: a pass_to_pass test listed as fail_to_pass fails with exit 3",
          "[validate_task][sandbox]") {
  if (!HaveBubblewrap()) return;
  SuiteCopy copy;
  // Moved from pass_to_pass (its first mention) to fail_to_pass.
  copy.Replace("repo.yaml", "        - tests.test_parser.ParserTests.test_parentheses\n", "");
  copy.Replace("repo.yaml", "        - tests.test_hidden.HiddenTests.test_subtraction_tree\n",
               "        - tests.test_hidden.HiddenTests.test_subtraction_tree\n"
               "        - tests.test_parser.ParserTests.test_parentheses\n");
  const Result v = Evalrun("validate-task " + copy.path.string() + " --task " + kTask);
  INFO(v.out << v.err);
  CHECK(v.code == 3);
  CHECK_THAT(v.out, Catch::Contains("FAIL base: fail_to_pass tests must fail: "
                                    "tests.test_parser.ParserTests.test_parentheses (passed)\n"));
}

TEST_CASE("validate-task: an unknown task is an error (exit 2) with a suggestion",
          "[validate_task]") {
  SuiteCopy copy;
  Result v = Evalrun("validate-task " + copy.path.string() + " --task minicalc-left-asociative");
  CHECK(v.code == 2);
  CHECK(v.err == "evalrun: error: no task 'minicalc-left-asociative' in " + copy.path.string() +
                     ", did you mean 'minicalc-left-associative'?\n");
}
