#include "tasks/task_yaml.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "tests/support/catch.h"

#include "core/error.h"
#include "core/sha256.h"
#include "graders/grader.h"
#include "tasks/repo_workspace.h"

namespace {

namespace fs = std::filesystem;
using evalrun::HashFiles;
using evalrun::LoadEvalrunSuite;
using evalrun::Suite;
using evalrun::Task;

// Suite files held in memory (the fake of STYLE.md 2): path -> bytes.
class MapFiles : public evalrun::SuiteFiles {
 public:
  std::map<std::string, std::string> files;

  std::optional<std::string> Read(const std::string& path) const override {
    const auto it = files.find(path);
    if (it == files.end()) return std::nullopt;
    return it->second;
  }
  std::vector<std::string> List(const std::string& dir) const override {
    std::vector<std::string> out;
    for (const auto& [path, bytes] : files) {
      const size_t slash = path.rfind('/');
      const std::string parent = slash == std::string::npos ? "" : path.substr(0, slash);
      if (parent == dir) out.push_back(path);
    }
    return out;
  }
  // Every file under `dir`, recursively; names in `executables` are executable.
  std::vector<evalrun::SuiteFileEntry> ListTree(const std::string& dir) const override {
    std::vector<evalrun::SuiteFileEntry> out;
    for (const auto& [path, bytes] : files) {
      if (path.rfind(dir + "/", 0) == 0) out.push_back({path, executables.count(path) > 0});
    }
    return out;
  }
  std::string Describe() const override { return "memory"; }
  std::set<std::string> executables;
};

// The grader table the loader checks types against (graders/ owns the real one).
const evalrun::GraderVersions kGraders = {
    {"answer_line", "1"}, {"exact", "1"},      {"numeric", "1"},     {"regex", "2"},
    {"contains", "1"},    {"excludes", "1"},   {"json_fields", "1"}, {"json_schema", "3"},
    {"code_tests", "1"},  {"command", "1"}};

Suite LoadText(const std::string& suite_yaml) {
  MapFiles files;
  files.files["s/suite.yaml"] = suite_yaml;
  return LoadEvalrunSuite(files, "s", kGraders);
}

std::string ErrorOf(const MapFiles& files) {
  try {
    LoadEvalrunSuite(files, "s", kGraders);
  } catch (const evalrun::Error& e) {
    return e.what();
  }
  return "(no error)";
}

std::string ErrorOf(const std::string& suite_yaml) {
  MapFiles files;
  files.files["s/suite.yaml"] = suite_yaml;
  return ErrorOf(files);
}

std::string Slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

void Spit(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

// A fresh folder under /tmp, removed at the end of the test.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name)
      : path(fs::temp_directory_path() /
             ("evalrun-task-yaml-" + name + "-" + std::to_string(getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

const char* const kHeader = "suite: demo\ndefaults: {max_tokens: 256, temperature: 0}\ntasks:\n";

}  // namespace

TEST_CASE("task yaml: inline tasks and include globs load in order with defaults merged",
          "[tasks]") {
  const evalrun::DiskFiles files(EVALRUN_TEST_FIXTURES);
  const Suite suite = LoadEvalrunSuite(files, "tasks/mini", kGraders);
  CHECK(suite.name == "mini");
  CHECK(suite.description == "Two dimensions, one inline task, two included.");
  CHECK(suite.path == "tasks/mini");
  CHECK(suite.dimension_weights == std::map<std::string, double>{{"code", 2}, {"math", 1}});
  CHECK(suite.defaults == nlohmann::json{{"max_tokens", 512}, {"temperature", 0}, {"thinking", "off"}});
  REQUIRE(suite.tasks.size() == 3);

  const Task& code = suite.tasks[0];
  CHECK(code.id == "code-001");
  CHECK(code.location.ToString() == "tasks/mini/suite.yaml:14:5");
  CHECK(code.messages == nlohmann::json::parse(R"([{"role":"user","content":"Write add(a, b)."}])"));
  CHECK(code.grader == nlohmann::json{{"type", "code_tests"},
                                      {"language", "python"},
                                      {"tests", "files/test_add.py"}});
  CHECK(code.agent.is_null());
  REQUIRE(code.files.size() == 1);
  CHECK(code.files[0].path == "files/test_add.py");
  CHECK(code.files[0].sha256 == evalrun::Sha256Hex(
      "from solution import add\n\ndef test_add():\n    assert add(2, 3) == 5\n"));
  CHECK(code.tags == std::vector<std::string>{"python"});
  CHECK(code.hash.size() == 64);
  CHECK(code.declared_hash.empty());

  const Task& first = suite.tasks[1];
  CHECK(first.id == "math-001");
  CHECK(first.location.ToString() == "tasks/mini/math/basic.yaml:3:5");
  CHECK(first.difficulty == "medium");
  CHECK(first.weight == 1.0);
  CHECK(first.messages[0]["content"] == "What is 6 * 7?\nLast line: ANSWER: <number>\n");
  CHECK(first.generation == suite.defaults);
  CHECK(first.grader["answer"] == 42);

  const Task& second = suite.tasks[2];
  CHECK(second.difficulty == "hard");
  CHECK(second.weight == 2.0);
  CHECK(second.generation == nlohmann::json{{"max_tokens", 64}, {"temperature", 0},
                                            {"thinking", "off"}, {"stop", {"###"}}});
  CHECK(second.messages.size() == 2);
  CHECK(second.messages[0] == nlohmann::json{{"role", "system"}, {"content", "Answer briefly."}});
}

TEST_CASE("task yaml: scalars convert by YAML type: quoted scalars stay strings", "[tasks]") {
  const Suite suite = LoadText(std::string(kHeader) + R"(  - id: t1
    dimension: d
    prompt: p
    grader:
      type: exact
      a: 12
      b: 1.5
      c: true
      d: ~
      e: "12"
      f: off
      g: 0x1f
      h: -3
      i: [1, "x"]
)");
  CHECK(suite.tasks[0].grader == nlohmann::json::parse(
      R"({"type":"exact","a":12,"b":1.5,"c":true,"d":null,"e":"12","f":"off","g":31,"h":-3,
          "i":[1,"x"]})"));
  CHECK(suite.tasks[0].grader["a"].is_number_integer());
}

TEST_CASE("task yaml: prompt and the equivalent messages hash the same", "[tasks]") {
  const Suite a = LoadText(std::string(kHeader) +
                           "  - {id: t, dimension: d, prompt: hi, grader: {type: exact}}\n");
  const Suite b = LoadText(std::string(kHeader) +
                           "  - {id: t, dimension: d, messages: [{role: user, content: hi}], "
                           "grader: {type: exact}}\n");
  CHECK(a.tasks[0].hash == b.tasks[0].hash);
  CHECK(a.tasks[0].hash == evalrun::ComputeTaskHash(a.tasks[0]));
  CHECK(evalrun::HashedFields(a.tasks[0]) == nlohmann::json::parse(R"({
    "id": "t", "dimension": "d", "difficulty": "medium", "weight": 1.0,
    "messages": [{"role": "user", "content": "hi"}],
    "generation": {"max_tokens": 256, "temperature": 0},
    "grader": {"type": "exact"}, "grader_version": "1", "agent": null, "files": {}})"));
}

TEST_CASE("task yaml: a new grader version changes the task hash", "[tasks]") {
  MapFiles files;
  files.files["s/suite.yaml"] =
      std::string(kHeader) + "  - {id: t, dimension: d, prompt: hi, grader: {type: exact}}\n";
  const Suite before = LoadEvalrunSuite(files, "s", kGraders);
  evalrun::GraderVersions bumped = kGraders;
  bumped["exact"] = "2";
  const Suite after = LoadEvalrunSuite(files, "s", bumped);
  CHECK(after.tasks[0].grader_version == "2");
  CHECK(after.tasks[0].hash != before.tasks[0].hash);
  bumped["exact"] = "1";
  bumped["regex"] = "9";  // another grader's version does not matter
  CHECK(LoadEvalrunSuite(files, "s", bumped).tasks[0].hash == before.tasks[0].hash);
}

TEST_CASE("task yaml: the hash ignores key order, comments, layout, tags and hash", "[tasks]") {
  const std::string base = LoadText(std::string(kHeader) + R"(  - id: t1
    dimension: d
    prompt: "hello"
    grader: {type: regex, pattern: "^a", flags: [i]}
)").tasks[0].hash;
  const std::string reordered = LoadText(R"(# a comment
defaults:
  temperature: 0     # trailing comment
  max_tokens:    256
suite: other-name
tasks:
  -   grader:
        flags:
          - i
        pattern: '^a'
        type: regex
      prompt: hello
      tags: [x, y]
      dimension: d
      id: t1
)").tasks[0].hash;
  CHECK(base == reordered);

  SECTION("but any hashed field changes it") {
    const std::string other = LoadText(std::string(kHeader) + R"(  - id: t1
    dimension: d
    prompt: "hello"
    grader: {type: regex, pattern: "^a", flags: [m]}
)").tasks[0].hash;
    CHECK(other != base);
    const std::string temperature = LoadText(std::string(kHeader) + R"(  - id: t1
    dimension: d
    prompt: "hello"
    temperature: 0.5
    grader: {type: regex, pattern: "^a", flags: [i]}
)").tasks[0].hash;
    CHECK(temperature != base);
  }
}

TEST_CASE("task yaml: the hash changes with the content of a referenced file", "[tasks]") {
  MapFiles files;
  files.files["s/suite.yaml"] = std::string(kHeader) +
                                "  - {id: t, dimension: d, prompt: p, grader: {type: code_tests},"
                                " files: [tests/t.py]}\n";
  files.files["s/tests/t.py"] = "assert True\n";
  const std::string before = LoadEvalrunSuite(files, "s", kGraders).tasks[0].hash;
  files.files["s/tests/t.py"] = "assert False\n";
  CHECK(LoadEvalrunSuite(files, "s", kGraders).tasks[0].hash != before);
}

TEST_CASE("task yaml: a declared hash may be any prefix of 16 or more characters", "[tasks]") {
  const std::string task = "  - {id: t, dimension: d, prompt: p, grader: {type: exact}}\n";
  const std::string full = LoadText(std::string(kHeader) + task).tasks[0].hash;
  const std::string with = std::string(kHeader) +
                           "  - {id: t, dimension: d, prompt: p, grader: {type: exact}, hash: ";
  CHECK(LoadText(with + full.substr(0, 16) + "}\n").tasks[0].declared_hash == full.substr(0, 16));
  CHECK(LoadText(with + full + "}\n").tasks[0].hash == full);
  CHECK(LoadText(with + "'" + full.substr(0, 20) + "'}\n").tasks[0].hash_location.line == 4);
}

TEST_CASE("task yaml: errors name file:line:column and suggest the fix", "[tasks]") {
  const std::string h = kHeader;  // the task starts on line 4

  SECTION("unknown key, with and without a suggestion") {
    CHECK(ErrorOf(h + "  - id: t\n    dimension: d\n    prompt: p\n    gader: {type: exact}\n") ==
          "s/suite.yaml:7:5: unknown key 'gader', did you mean 'grader'?");
    CHECK(ErrorOf(h + "  - id: t\n    colour: red\n") ==
          "s/suite.yaml:5:5: unknown key 'colour' (expected one of: id, dimension, difficulty, "
          "weight, prompt, messages, max_tokens, temperature, top_p, seed, stop, thinking, grader, "
          "agent, files, tags, hash)");
    CHECK(ErrorOf("suite: x\ndefaults: {max_token: 5}\ntasks: []\n") ==
          "s/suite.yaml:2:12: unknown key 'max_token', did you mean 'max_tokens'?");
    CHECK(ErrorOf("suit: x\n") == "s/suite.yaml:1:1: unknown key 'suit', did you mean 'suite'?");
  }
  SECTION("wrong types") {
    CHECK(ErrorOf(h + "  - {id: t, dimension: d, prompt: p, weight: heavy, grader: {type: exact}}\n") ==
          "s/suite.yaml:4:46: expected a number, got a string");
    CHECK(ErrorOf(h + "  - {id: t, dimension: d, prompt: p, max_tokens: 1.5, grader: {type: exact}}\n") ==
          "s/suite.yaml:4:50: expected an integer, got a number");
    CHECK(ErrorOf(h + "  - {id: t, dimension: d, prompt: [a], grader: {type: exact}}\n") ==
          "s/suite.yaml:4:35: expected a string, got a list");
    CHECK(ErrorOf(h + "  - {id: t, dimension: d, prompt: p, grader: exact}\n") ==
          "s/suite.yaml:4:46: expected a mapping, got a string");
    CHECK(ErrorOf("suite: x\ntasks: {id: t}\n") == "s/suite.yaml:2:8: expected a list, got a mapping");
    CHECK(ErrorOf(h + "  - {id: t, dimension: d, prompt: p, weight: 0, grader: {type: exact}}\n") ==
          "s/suite.yaml:4:46: weight must be greater than 0");
    CHECK(ErrorOf(h + "  - {id: t, dimension: d, prompt: p, thinking: yes, grader: {type: exact}}\n") ==
          "s/suite.yaml:4:48: unknown thinking mode 'yes' (expected one of: on, off, auto)");
  }
  SECTION("missing required fields, at the task's mapping") {
    CHECK(ErrorOf(h + "  - id: t\n    prompt: p\n    grader: {type: exact}\n") ==
          "s/suite.yaml:4:5: task 't': missing required field 'dimension'");
    CHECK(ErrorOf(h + "  - dimension: d\n    prompt: p\n") ==
          "s/suite.yaml:4:5: task is missing required field 'id'");
    CHECK(ErrorOf(h + "  - id: t\n    dimension: d\n    grader: {type: exact}\n") ==
          "s/suite.yaml:4:5: task 't': missing required field 'prompt' or 'messages'");
    CHECK(ErrorOf(h + "  - id: t\n    dimension: d\n    prompt: p\n") ==
          "s/suite.yaml:4:5: task 't': missing required field 'grader'");
    CHECK(ErrorOf(h + "  - {id: t, dimension: d, prompt: p, grader: {answer: 1}}\n") ==
          "s/suite.yaml:4:46: task 't': grader is missing required field 'type'");
    CHECK(ErrorOf("description: no name\ntasks: []\n") ==
          "s/suite.yaml:1:1: missing required field 'suite' (the suite's name)");
  }
  SECTION("prompt and messages together") {
    CHECK(ErrorOf(h + "  - id: t\n    dimension: d\n    prompt: p\n"
                      "    messages: [{role: user, content: p}]\n    grader: {type: exact}\n") ==
          "s/suite.yaml:7:5: task 't': give either 'prompt' or 'messages', not both");
  }
  SECTION("bad values with suggestions") {
    CHECK(ErrorOf(h + "  - {id: t, dimension: d, prompt: p, difficulty: meduim, grader: {type: exact}}\n") ==
          "s/suite.yaml:4:50: unknown difficulty 'meduim', did you mean 'medium'?");
    CHECK(ErrorOf(h + "  - {id: t, dimension: d, prompt: p, grader: {type: answerline}}\n") ==
          "s/suite.yaml:4:53: unknown grader 'answerline', did you mean 'answer_line'? "
          "(evalrun graders lists them)");
    CHECK(ErrorOf(h + "  - {id: t, dimension: d, prompt: p, grader: {type: llm_judge}}\n") ==
          "s/suite.yaml:4:53: unknown grader 'llm_judge' (evalrun graders lists them)");
    CHECK(ErrorOf(h + "  - {id: t, dimension: d, messages: [{role: usr, content: p}], "
                      "grader: {type: exact}}\n") ==
          "s/suite.yaml:4:45: unknown role 'usr', did you mean 'user'?");
    CHECK(ErrorOf(h + "  - {id: 'a b', dimension: d, prompt: p, grader: {type: exact}}\n") ==
          "s/suite.yaml:4:10: task id 'a b' may only contain A-Z a-z 0-9 . _ -");
    CHECK(ErrorOf(h + "  - {id: t, dimension: d, prompt: p, grader: {type: exact}, hash: abc}\n") ==
          "s/suite.yaml:4:67: hash must be 16 to 64 hex characters");
    CHECK(ErrorOf("suite: x\ndimensions: {math: 1}\ntasks:\n"
                  "  - {id: t, dimension: maths, prompt: p, grader: {type: exact}}\n") ==
          "s/suite.yaml:4:24: unknown dimension 'maths', did you mean 'math'?");
    CHECK(ErrorOf("suite: x\nschema_version: 2\ntasks: []\n") ==
          "s/suite.yaml:2:17: unsupported schema_version 2 (this evalrun reads version 1)");
  }
  SECTION("duplicate ids name both places; duplicate keys too") {
    CHECK(ErrorOf(h + "  - {id: t, dimension: d, prompt: p, grader: {type: exact}}\n"
                      "  - {id: t, dimension: d, prompt: q, grader: {type: exact}}\n") ==
          "s/suite.yaml:5:5: duplicate task id 't' (first declared at s/suite.yaml:4:5)");
    MapFiles files;
    files.files["s/suite.yaml"] = h + "  - {id: t, dimension: d, prompt: p, grader: {type: exact}}\n"
                                      "include: [more/*.yaml]\n";
    files.files["s/more/a.yaml"] = "tasks:\n- {id: t, dimension: d, prompt: p, grader: {type: exact}}\n";
    CHECK(ErrorOf(files) ==
          "s/more/a.yaml:2:3: duplicate task id 't' (first declared at s/suite.yaml:4:5)");
    CHECK(ErrorOf(h + "  - {id: t, dimension: d, prompt: p, prompt: q, grader: {type: exact}}\n") ==
          "s/suite.yaml:4:38: duplicate key 'prompt' (first at s/suite.yaml:4:27)");
  }
  SECTION("a referenced file that is missing") {
    CHECK(ErrorOf(h + "  - id: t\n    dimension: d\n    prompt: p\n    grader: {type: exact}\n"
                      "    files:\n      - tests/gone.py\n") ==
          "s/suite.yaml:9:9: task 't': file 'tests/gone.py' not found");
    CHECK(ErrorOf(h + "  - {id: t, dimension: d, prompt: p, grader: {type: exact}, files: [../x]}\n") ==
          "s/suite.yaml:4:69: file path '../x' must be relative to the suite folder, without '..'");
  }
  SECTION("include patterns") {
    CHECK(ErrorOf("suite: x\ninclude: [math/*.yaml]\n") ==
          "s/suite.yaml:2:11: include pattern 'math/*.yaml' matches no files");
    CHECK(ErrorOf("suite: x\ninclude: ['**/*.yaml']\n") ==
          "s/suite.yaml:2:11: include pattern '**/*.yaml': wildcards are supported in the file "
          "name only, not in folders");
    // A run of stars once backtracked exponentially (the fuzzer's timeout); it now answers at once.
    const std::string stars(60, '*');
    CHECK(ErrorOf("suite: x\ninclude: ['" + stars + "x']\n") ==
          "s/suite.yaml:2:11: include pattern '" + stars + "x' matches no files");
    MapFiles files;
    files.files["s/suite.yaml"] = "suite: x\ninclude: [t.yaml]\n";
    files.files["s/t.yaml"] = "suite: nested\n";
    CHECK(ErrorOf(files) == "s/t.yaml:1:1: unknown key 'suite' (expected one of: schema_version, tasks)");
  }
  SECTION("a declared hash that does not match") {
    CHECK(ErrorOf(h + "  - id: t\n    dimension: d\n    prompt: p\n    grader: {type: exact}\n"
                      "    hash: 0123456789abcdef\n") ==
          "s/suite.yaml:8:11: task 't': declared hash 0123456789abcdef but the content hashes to " +
              LoadText(h + "  - {id: t, dimension: d, prompt: p, grader: {type: exact}}\n")
                  .tasks[0].ShortHash() +
              " (evalrun hash --write updates it)");
  }
  SECTION("YAML syntax errors keep yaml-cpp's message") {
    CHECK(ErrorOf(h + "  - {id: t, dimension: d\n") ==
          "s/suite.yaml:5:1: end of map flow not found");
    CHECK(ErrorOf("suite: x\n  bad: indent\n") == "s/suite.yaml:2:6: illegal map value");
  }
  SECTION("no suite.yaml, no tasks") {
    CHECK(ErrorOf(MapFiles()) == "memory: no s/suite.yaml (not an evalrun suite)");
    CHECK(ErrorOf("suite: x\n") == "s/suite.yaml:1:1: the suite has no tasks");
    CHECK(ErrorOf("- a\n") ==
          "s/suite.yaml:1:1: expected a mapping with a 'suite' key at the top level, got a list");
  }
}

TEST_CASE("hash --write inserts and updates hash lines in place, and round-trips", "[tasks]") {
  TempDir dir("write");
  const std::string original = R"(# Suite comment
suite: w
defaults: {max_tokens: 100}   # defaults comment
tasks:
  - id: a   # inserted after this line
    dimension: d
    prompt: p
    grader: {type: exact}
  # between tasks
  -   dimension: d
      id: "b"
      prompt: q
      grader: {type: exact}
      hash: "0000000000000000"   # stale, quoted
  - id: c
    hash: 1111111111111111
    dimension: d
    prompt: r
    grader: {type: exact}
)";
  const fs::path suite = dir.path / "suite.yaml";
  Spit(suite, original);

  const auto printed = HashFiles({suite.string()}, false, kGraders);
  REQUIRE(printed.size() == 3);
  CHECK(Slurp(suite) == original);
  CHECK_FALSE(printed[0].changed);
  CHECK(printed[0].file == suite.string());
  CHECK(printed[1].task_id == "b");
  CHECK(printed[2].hash.size() == 16);

  const auto written = HashFiles({suite.string()}, true, kGraders);
  REQUIRE(written.size() == 3);
  CHECK((written[0].changed && written[1].changed && written[2].changed));
  const std::string expected = R"(# Suite comment
suite: w
defaults: {max_tokens: 100}   # defaults comment
tasks:
  - id: a   # inserted after this line
    hash: )" + printed[0].hash + R"(
    dimension: d
    prompt: p
    grader: {type: exact}
  # between tasks
  -   dimension: d
      id: "b"
      prompt: q
      grader: {type: exact}
      hash: ")" + printed[1].hash + R"("   # stale, quoted
  - id: c
    hash: )" + printed[2].hash + R"(
    dimension: d
    prompt: r
    grader: {type: exact}
)";
  CHECK(Slurp(suite) == expected);

  // The written hashes verify, and a second run changes nothing.
  const evalrun::DiskFiles files(dir.path.string());
  CHECK(LoadEvalrunSuite(files, "", kGraders).tasks.size() == 3);
  const auto again = HashFiles({suite.string()}, true, kGraders);
  for (const auto& line : again) CHECK_FALSE(line.changed);
  CHECK(Slurp(suite) == expected);
}

TEST_CASE("hash --write: task files use the nearest suite.yaml's defaults and folder", "[tasks]") {
  TempDir dir("taskfile");
  Spit(dir.path / "suite.yaml",
       "suite: w\ndefaults: {temperature: 0.5}\ninclude: [sub/*.yaml]\n");
  Spit(dir.path / "files" / "t.py", "assert 1\n");
  const std::string task = "tasks:\n- id: x\n  dimension: d\n  prompt: p\n"
                           "  grader: {type: code_tests}\n  files: [files/t.py]\n";
  Spit(dir.path / "sub" / "a.yaml", task);
  const auto lines = HashFiles({(dir.path / "sub" / "a.yaml").string()}, true, kGraders);
  REQUIRE(lines.size() == 1);
  CHECK(Slurp(dir.path / "sub" / "a.yaml") ==
        "tasks:\n- id: x\n  hash: " + lines[0].hash +
            "\n  dimension: d\n  prompt: p\n  grader: {type: code_tests}\n  files: [files/t.py]\n");
  const evalrun::DiskFiles files(dir.path.string());
  const Suite suite = LoadEvalrunSuite(files, "", kGraders);
  CHECK(suite.tasks[0].ShortHash() == lines[0].hash);
  CHECK(suite.tasks[0].generation == nlohmann::json{{"temperature", 0.5}});
}

TEST_CASE("hash --write refuses to insert into a flow-style task", "[tasks]") {
  TempDir dir("flow");
  const std::string text = "suite: w\ntasks:\n  - {id: x, dimension: d, prompt: p, grader: {type: exact}}\n";
  Spit(dir.path / "suite.yaml", text);
  try {
    HashFiles({(dir.path / "suite.yaml").string()}, true, kGraders);
    FAIL("no error");
  } catch (const evalrun::Error& e) {
    CHECK(std::string(e.what()) ==
          (dir.path / "suite.yaml").string() +
              ":3:5: task 'x': --write cannot insert a hash into a flow-style mapping ({...}); "
              "write the task as a block mapping");
  }
  CHECK(Slurp(dir.path / "suite.yaml") == text);
}

TEST_CASE("the shipped smoke suite loads with every declared hash verified", "[tasks]") {
  const evalrun::DiskFiles files(std::string(EVALRUN_TEST_FIXTURES) + "/../../tasks/smoke");
  const Suite suite = LoadEvalrunSuite(files, "", evalrun::NativeGraderVersions());
  CHECK(suite.name == "smoke");
  CHECK(suite.tasks.size() >= 24);
  std::set<std::string> dimensions;
  for (const auto& task : suite.tasks) {
    INFO(task.id);
    CHECK_FALSE(task.declared_hash.empty());
    CHECK(task.hash.rfind(task.declared_hash, 0) == 0);
    dimensions.insert(task.dimension);
  }
  CHECK(dimensions.size() >= 5);
}

// ---- Repository agent tasks (agent.kind: repo) ------------------------------------------------

namespace {

// A suite with one repository task; `agent` is the text of the agent mapping's body (indented
// six spaces), placed so that the task starts on line 4 and the agent's first key is on line 9.
MapFiles RepoSuite(const std::string& agent) {
  MapFiles files;
  files.files["s/suite.yaml"] = std::string(kHeader) +
                                "  - id: fix\n"
                                "    dimension: coding\n"
                                "    prompt: fix it\n"
                                "    grader: {type: repo_tests}\n"
                                "    agent:\n" +
                                agent;
  files.files["s/repos/m/calc.py"] = "def add(a, b):\n    return a - b\n";
  files.files["s/repos/m/tests/test_calc.py"] = "import calc\n";
  files.files["s/files/hidden.py"] = "import calc\n";
  files.files["s/files/gold.patch"] = "diff\n";
  return files;
}

std::string RepoError(const MapFiles& files) {
  try {
    LoadEvalrunSuite(files, "s", {{"repo_tests", "1"}});
  } catch (const evalrun::Error& e) {
    return e.what();
  }
  return "(no error)";
}

std::string RepoTree() {
  return evalrun::GitTreeId({{"calc.py", "def add(a, b):\n    return a - b\n", false},
                             {"tests/test_calc.py", "import calc\n", false}});
}

// A valid agent body; `replace` swaps one line (by its start) for another.
std::string RepoAgent(const std::map<std::string, std::string>& replace = {}) {
  std::vector<std::string> lines = {
      "      kind: repo\n",                                                        // line 9
      "      repo: {path: repos/m, base_tree: " + RepoTree() + "}\n",              // 10
      "      test_cmd: python3 -m unittest -v\n",                                  // 11
      "      log_parser: unittest\n",                                              // 12
      "      hidden_tests: [{from: files/hidden.py, to: tests/test_hidden.py}]\n", // 13
      "      protected: [tests]\n",                                                // 14
      "      fail_to_pass: [tests.test_hidden.T.test_add]\n",                      // 15
      "      pass_to_pass: [tests.test_calc.T.test_sub]\n",                        // 16
      "      gold_patch: files/gold.patch\n",                                      // 17
      "      limits: {steps: 5, wall_s: 60}\n",                                    // 18
      "      tools: [bash, submit]\n"};                                            // 19
  std::string out;
  for (auto& line : lines) {
    for (const auto& [start, with] : replace) {
      if (line.rfind("      " + start, 0) == 0) line = with.empty() ? "" : "      " + with + "\n";
    }
    out += line;
  }
  return out;
}

}  // namespace

TEST_CASE("task yaml: a repository task loads with the folder's files hashed and listed",
          "[tasks][repo]") {
  MapFiles files = RepoSuite(RepoAgent());
  const Suite suite = LoadEvalrunSuite(files, "s", {{"repo_tests", "1"}});
  REQUIRE(suite.tasks.size() == 1);
  const Task& task = suite.tasks[0];
  CHECK(task.agent["repo"]["files"] ==
        nlohmann::json::parse(R"([{"path": "calc.py", "executable": false},
                                  {"path": "tests/test_calc.py", "executable": false}])"));
  std::set<std::string> paths;
  for (const auto& f : task.files) paths.insert(f.path);
  CHECK(paths == std::set<std::string>{"repos/m/calc.py", "repos/m/tests/test_calc.py",
                                       "files/hidden.py", "files/gold.patch"});
  const evalrun::RepoTask repo = evalrun::ParseRepoTask(task.agent);
  CHECK(repo.limits.steps == 5);
  CHECK(repo.limits.wall_s == 60);
  CHECK(repo.limits.command_timeout_s == 30);

  SECTION("a change in the repository's content changes the tree, which the task must state") {
    files.files["s/repos/m/calc.py"] = "def add(a, b):\n    return a + b\n";
    const std::string now = evalrun::GitTreeId(
        {{"calc.py", "def add(a, b):\n    return a + b\n", false},
         {"tests/test_calc.py", "import calc\n", false}});
    CHECK(RepoError(files) == "s/suite.yaml:10:40: agent.repo.base_tree: the folder repos/m has tree " +
                                now + ", the task says " + RepoTree());
  }
  SECTION("an executable file is mode 100755 in the tree") {
    files.executables.insert("s/repos/m/calc.py");
    CHECK_THAT(RepoError(files), Catch::Contains("agent.repo.base_tree: the folder repos/m has tree"));
  }
  SECTION("other agent kinds pass through unchanged") {
    MapFiles world = RepoSuite("      kind: world\n      anything: [1, 2]\n");
    const Suite loaded = LoadEvalrunSuite(world, "s", {{"repo_tests", "1"}});
    CHECK(loaded.tasks[0].agent == nlohmann::json::parse(R"({"kind": "world", "anything": [1, 2]})"));
  }
}

TEST_CASE("task yaml: repository task errors name file:line:column of the key", "[tasks][repo]") {
  const auto error = [](const std::map<std::string, std::string>& replace) -> std::string {
    try {
      LoadEvalrunSuite(RepoSuite(RepoAgent(replace)), "s", {{"repo_tests", "1"}});
    } catch (const evalrun::Error& e) {
      return e.what();
    }
    return "(no error)";
  };
  CHECK(error({{"test_cmd", "test_command: x"}}) ==
        "s/suite.yaml:11:7: unknown key 'test_command', did you mean 'test_cmd'?");
  CHECK(error({{"repo:", "repo: {path: repos/m, base_tre: x}"}}) ==
        "s/suite.yaml:10:29: unknown key 'base_tre', did you mean 'base_tree'?");
  CHECK(error({{"repo:", "repo: {path: repos/m, base_tree: abc}"}}) ==
        "s/suite.yaml:10:40: agent.repo.base_tree: expected a git tree id as 40 lowercase hex "
        "digits, got 'abc'");
  CHECK(error({{"repo:", "repo: {url: 'https://x/y.git', base_tree: " + RepoTree() + "}"}}) ==
        "s/suite.yaml:10:13: task 'fix': agent.repo is missing required field 'base_commit' "
        "(with 'url')");
  CHECK(error({{"repo:", "repo: {url: u, base_commit: 12, base_tree: " + RepoTree() + "}"}}) ==
        "s/suite.yaml:10:35: agent.repo.base_commit: expected a git commit id as 40 lowercase hex "
        "digits, got '12'");
  CHECK(error({{"repo:", "repo: {path: repos/m, url: u, base_tree: " + RepoTree() + "}"}}) ==
        "s/suite.yaml:10:29: agent.repo: give either 'path' or 'url', not both");
  CHECK(error({{"repo:", "repo: {path: repos/none, base_tree: " + RepoTree() + "}"}}) ==
        "s/suite.yaml:10:20: agent.repo.path: no folder 'repos/none' with files in the suite");
  CHECK(error({{"log_parser", "log_parser: unitest"}}) ==
        "s/suite.yaml:12:19: unknown log_parser 'unitest', did you mean 'unittest'?");
  CHECK(error({{"hidden_tests", "hidden_tests: [{from: files/gone.py, to: tests/h.py}]"}}) ==
        "s/suite.yaml:13:29: agent.hidden_tests.from: file 'files/gone.py' not found in the suite");
  CHECK(error({{"hidden_tests", "hidden_tests: [{from: repos/m/calc.py, to: tests/h.py}]"}}) ==
        "s/suite.yaml:13:29: agent.hidden_tests.from: 'repos/m/calc.py' is inside the repository "
        "folder, where the agent would see it; keep hidden tests outside it (files/...)");
  CHECK(error({{"hidden_tests", "hidden_tests: [{from: files/hidden.py, to: ../h.py}]"}}) ==
        "s/suite.yaml:13:50: agent.hidden_tests.to: '../h.py' must be a path relative to the "
        "repository root, without '..'");
  CHECK(error({{"hidden_tests", "hidden_tests: [{from: files/hidden.py, to: .git/hooks/x}]"}}) ==
        "s/suite.yaml:13:50: agent.hidden_tests.to: '.git/hooks/x' is inside .git");
  CHECK(error({{"hidden_tests", "hidden_tests: [{from: files/hidden.py, too: x}]"}}) ==
        "s/suite.yaml:13:46: unknown key 'too', did you mean 'to'?");
  CHECK(error({{"protected", "protected: [/etc]"}}) ==
        "s/suite.yaml:14:19: agent.protected: '/etc' must be a path relative to the repository "
        "root, without '..'");
  CHECK(error({{"fail_to_pass", "fail_to_pass: []"}}) ==
        "s/suite.yaml:15:21: agent.fail_to_pass: list at least one test that the fix makes pass");
  CHECK(error({{"fail_to_pass", ""}}) ==
        "s/suite.yaml:9:7: task 'fix': agent is missing required field 'fail_to_pass'");
  CHECK(error({{"gold_patch", "gold_patch: files/nope.patch"}}) ==
        "s/suite.yaml:17:19: agent.gold_patch: file 'files/nope.patch' not found in the suite");
  CHECK(error({{"gold_patch", "gold_patch: files/gold.patch\n      upstream: javascript:alert(1)"}}) ==
        "s/suite.yaml:18:17: agent.upstream: expected an https:// address of the upstream fix, "
        "got 'javascript:alert(1)'");
  CHECK(error({{"limits", "limits: {steps: 0}"}}) ==
        "s/suite.yaml:18:23: agent.limits.steps must be at least 1");
  CHECK(error({{"limits", "limits: {wall: 5}"}}) ==
        "s/suite.yaml:18:16: unknown key 'wall' (expected one of: steps, tokens, wall_s, "
        "command_timeout_s, observation_bytes)");
  CHECK(error({{"tools", "tools: [bash, shell]"}}) ==
        "s/suite.yaml:19:21: unknown tool 'shell' (expected one of: bash, read_file, write_file, "
        "str_replace, submit)");
}
