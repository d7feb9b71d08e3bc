// The floors of docs/architecture.md, held against the code: every #include of every source file
// under core/ tasks/ plugins/ results/ graders/ runner/ names a room the table below allows its
// own room to use. A new include that points up a floor (or sideways between rooms that must not
// know each other) fails here, naming the file, the line and the include.
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/catch.h"

namespace {

namespace fs = std::filesystem;

// A file's room: its top folder, or for graders/ and runner/ the subfolder it is in.
std::string RoomOf(const std::string& path) {
  const size_t first = path.find('/');
  if (first == std::string::npos) return path;
  const std::string top = path.substr(0, first);
  const size_t second = path.find('/', first + 1);
  if ((top == "graders" || top == "runner") && second != std::string::npos) {
    return path.substr(0, second);
  }
  return top;
}

// What each room may include besides itself (docs/architecture.md, "Who may use whom").
const std::map<std::string, std::set<std::string>>& Allowed() {
  static const std::map<std::string, std::set<std::string>> allowed = {
      {"core", {}},
      {"tasks", {"core"}},
      {"plugins", {"core"}},
      {"results", {"core"}},
      {"graders/framework", {"core"}},
      {"graders/native", {"core", "tasks", "plugins", "graders/framework"}},
      {"graders/zxbench", {"core", "tasks", "plugins", "graders/framework"}},
      {"graders", {"core", "tasks", "graders/framework", "graders/native", "graders/zxbench"}},
      {"runner/agent",
       {"core", "tasks", "plugins", "results", "graders", "graders/framework", "graders/zxbench"}},
      {"runner",
       {"core", "tasks", "plugins", "results", "graders", "graders/framework", "runner/agent"}},
      {"runner/commands",
       {"core", "tasks", "plugins", "results", "graders", "graders/framework", "graders/native",
        "graders/zxbench", "runner", "runner/agent"}},
  };
  return allowed;
}

struct Include {
  std::string file;
  int line;
  std::string target;
};

std::vector<Include> ProjectIncludes() {
  const fs::path root = EVALRUN_SOURCE_DIR;
  const std::regex include_line(R"(^\s*#\s*include\s+\"([^\"]+)\")");
  std::vector<Include> out;
  for (const char* top : {"core", "tasks", "plugins", "results", "graders", "runner"}) {
    for (const auto& entry : fs::recursive_directory_iterator(root / top)) {
      const std::string ext = entry.path().extension().string();
      if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".h")) continue;
      const std::string file = fs::relative(entry.path(), root).generic_string();
      if (file.rfind("tasks/", 0) == 0 && file.find('/', 6) != std::string::npos) continue;
      std::ifstream in(entry.path());
      std::string text;
      int number = 0;
      while (std::getline(in, text)) {
        ++number;
        std::smatch m;
        if (std::regex_search(text, m, include_line) && m[1].str().find('/') != std::string::npos) {
          out.push_back({file, number, m[1].str()});
        }
      }
    }
  }
  return out;
}

}  // namespace

TEST_CASE("architecture: every include stays on its floor or goes down", "[architecture]") {
  const std::vector<Include> includes = ProjectIncludes();
  REQUIRE(includes.size() > 300);  // the whole tree was read (374 project includes today)
  std::set<std::string> rooms_seen;
  std::vector<std::string> wrong;
  for (const Include& inc : includes) {
    const std::string from = RoomOf(inc.file);
    const std::string to = RoomOf(inc.target);
    rooms_seen.insert(from);
    const auto allowed = Allowed().find(from);
    if (allowed == Allowed().end()) {
      wrong.push_back(inc.file + ": a room docs/architecture.md does not name: '" + from + "'");
    } else if (to != from && !allowed->second.count(to) && Allowed().count(to)) {
      wrong.push_back(inc.file + ":" + std::to_string(inc.line) + ": includes \"" + inc.target +
                      "\": " + from + " may not use " + to);
    }
  }
  std::ostringstream all;
  for (const std::string& w : wrong) all << w << "\n";
  INFO(all.str());
  CHECK(wrong.empty());
  CHECK(rooms_seen.size() == Allowed().size());  // every room of the table exists
}

TEST_CASE("architecture: the check sees a wrong include", "[architecture]") {
  // The rule itself: a grader including the runner, or core including anything, is refused.
  CHECK(RoomOf("graders/native/regex.cpp") == "graders/native");
  CHECK(RoomOf("runner/suite_run.cpp") == "runner");
  CHECK(RoomOf("plugins/sandbox.h") == "plugins");
  CHECK_FALSE(Allowed().at("graders/native").count("runner/agent"));
  CHECK_FALSE(Allowed().at("graders/framework").count("graders/zxbench"));
  CHECK_FALSE(Allowed().at("runner/agent").count("runner"));
  CHECK(Allowed().at("core").empty());
}
