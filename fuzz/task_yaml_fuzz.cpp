// libFuzzer target: the YAML task loader (tasks/task_yaml.h) on a suite.yaml given by the input,
// read from memory. Every rejection must be an evalrun::Error naming file:line:column; any other
// exception escaping (std::bad_alloc from an alias bomb, yaml-cpp's own) is a finding.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "core/error.h"
#include "tasks/task_yaml.h"

namespace {

class MemoryFiles : public evalrun::SuiteFiles {
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
      if (path.rfind(dir + "/", 0) == 0 && path.find('/', dir.size() + 1) == std::string::npos) {
        out.push_back(path);
      }
    }
    return out;
  }
  std::vector<evalrun::SuiteFileEntry> ListTree(const std::string&) const override { return {}; }
  std::string Describe() const override { return "fuzz"; }
};

const evalrun::GraderVersions kGraders = {
    {"answer_line", "1"}, {"exact", "1"},       {"numeric", "1"},     {"regex", "1"},
    {"contains", "1"},    {"excludes", "1"},    {"json_fields", "1"}, {"json_schema", "1"},
    {"code_tests", "1"},  {"command", "1"}};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  MemoryFiles files;
  const std::string text(reinterpret_cast<const char*>(data), size);
  files.files["s/suite.yaml"] = text;
  files.files["s/more.yaml"] = text;  // so that `include: [more.yaml]` reads something
  files.files["s/files/a.txt"] = "a\n";
  try {
    evalrun::LoadEvalrunSuite(files, "s", kGraders);
  } catch (const evalrun::Error&) {
  }
  return 0;
}
