#pragma once
// A task and a suite as plain data (DESIGN.md sections 2 and 5): produced by tasks/ (evalrun's
// YAML) and by plugins/ (the zx-bench importer), consumed by runner/, graders/ and results/.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace evalrun {

// Where something was declared, for error messages: "tasks/smoke/math.yaml:12:5".
struct SourceLocation {
  std::string file;  // as the user knows it (path inside the suite, or on disk)
  int line = 0;      // 1-based; 0 when unknown
  int column = 0;    // 1-based; 0 when unknown
  std::string ToString() const;  // "file:line:column", "file:line" or "file"
};

// A file a task references (hidden tests, fixtures): hashed by content into the task hash.
struct TaskFile {
  std::string path;    // relative to the suite root
  std::string sha256;  // lowercase hex of the content
};

// The native graders a task may name, each with its version (graders/ owns the table; the
// runner passes GraderRegistry's in, so tasks/ does not depend on graders/).
using GraderVersions = std::map<std::string, std::string, std::less<>>;

struct Task {
  std::string id;
  std::string dimension;
  std::string difficulty = "medium";  // easy | medium | hard | adversarial
  double weight = 1.0;                // extra weight; the difficulty weight is applied apart
  nlohmann::json messages = nlohmann::json::array();  // [{role, content}, ...]
  nlohmann::json generation = nlohmann::json::object();  // max_tokens, temperature, top_p,
                                                          // seed, stop, thinking
  nlohmann::json grader = nlohmann::json::object();  // {"type": ..., ...}: data for graders/
  std::string grader_version;  // hashed (DESIGN section 8): the grader's version at load time
  nlohmann::json agent;                              // null unless an agent task
  std::vector<TaskFile> files;
  std::vector<std::string> tags;      // not hashed

  std::string hash;           // computed: full SHA-256 hex of the canonical hashed fields
  std::string declared_hash;  // as written in the source ("" when none)
  SourceLocation location;    // where the task is declared
  SourceLocation hash_location;  // where its `hash:` line is (line 0 when absent)

  std::string format = "evalrun";  // "evalrun" or "zxbench"
  nlohmann::json raw;              // zx-bench: the bank entry, intact
  // zx-bench entries with an execution world: the entry again, in the bank's key order, because
  // zx-bench shows the model JSON in insertion order (the tool list, requiredArgs). Null else.
  nlohmann::ordered_json raw_ordered;
  std::string skip_reason;         // non-empty: cannot run on this machine, and why

  std::string ShortHash() const { return hash.substr(0, 16); }
};

struct Suite {
  std::string name;
  std::string description;
  std::string format = "evalrun";
  nlohmann::json defaults = nlohmann::json::object();
  std::map<std::string, double> dimension_weights;
  std::vector<Task> tasks;

  // Where it came from (DESIGN.md section 5).
  std::string spec;      // as given: "zx-bench@8e0adf6", "tasks/smoke", "repo/suite@v1"
  std::string repo;      // repository path or URL ("" for a bare path)
  std::string path;      // folder or file inside the repository (or on disk)
  std::string commit;    // full commit id ("" when unpinned)
  std::string tree;      // full tree id of that commit ("" when unpinned)
  bool pinned() const { return !commit.empty(); }
};

// The difficulty weights of DESIGN.md section 5: easy 1, medium 1.5, hard 2, adversarial 2.5.
// Unknown names give 0.
double DifficultyWeight(const std::string& difficulty);

}  // namespace evalrun
