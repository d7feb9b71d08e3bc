// json_fields: JSON found in the answer; each listed field (a dotted path with [i] for array
// items) must equal its expected value. docs/graders.md states the rules.
#include <string>
#include <variant>

#include "graders/native/factories.h"

namespace evalrun {

namespace {

constexpr std::string_view kName = "json_fields";

using Step = std::variant<std::string, size_t>;  // an object key or an array index

// "a.b[0].c" -> [a, b, 0, c]; "[2].x" -> [2, x]. nullopt when malformed ("a..b", "a[x]").
std::optional<std::vector<Step>> ParsePath(const std::string& path) {
  std::vector<Step> steps;
  size_t i = 0;
  bool expect_key = path.empty() || path[0] != '[';
  while (i < path.size()) {
    if (path[i] == '[') {
      const size_t close = path.find(']', i);
      if (close == std::string::npos || close == i + 1) return std::nullopt;
      size_t index = 0;
      for (size_t k = i + 1; k < close; ++k) {
        if (path[k] < '0' || path[k] > '9' || index > 100'000'000) return std::nullopt;
        index = index * 10 + static_cast<size_t>(path[k] - '0');
      }
      steps.emplace_back(index);
      i = close + 1;
      if (i < path.size() && path[i] == '.') {
        ++i;
        expect_key = true;
        if (i == path.size()) return std::nullopt;
      } else {
        expect_key = false;
      }
      continue;
    }
    if (!expect_key) return std::nullopt;
    const size_t end = path.find_first_of(".[", i);
    const std::string key = path.substr(i, end == std::string::npos ? std::string::npos : end - i);
    if (key.empty()) return std::nullopt;
    steps.emplace_back(key);
    i = end == std::string::npos ? path.size() : end;
    if (i < path.size() && path[i] == '.') {
      ++i;
      if (i == path.size()) return std::nullopt;
    } else {
      expect_key = false;
    }
  }
  if (steps.empty()) return std::nullopt;
  return steps;
}

// The value at `path` in `root`: the top-level key spelled exactly so first, else the path.
const nlohmann::json* Lookup(const nlohmann::json& root, const std::string& path) {
  if (root.is_object()) {
    auto it = root.find(path);
    if (it != root.end()) return &*it;
  }
  const auto steps = ParsePath(path);
  if (!steps) return nullptr;
  const nlohmann::json* node = &root;
  for (const Step& step : *steps) {
    if (const auto* key = std::get_if<std::string>(&step)) {
      if (!node->is_object()) return nullptr;
      auto it = node->find(*key);
      if (it == node->end()) return nullptr;
      node = &*it;
    } else {
      const size_t index = std::get<size_t>(step);
      if (!node->is_array() || index >= node->size()) return nullptr;
      node = &(*node)[index];
    }
  }
  return node;
}

std::string Shown(const nlohmann::json& value) {
  return EvidenceText(value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), 200);
}

class JsonFieldsGrader final : public Grader {
 public:
  std::string_view name() const override { return kName; }
  std::string_view version() const override { return "1"; }
  std::string_view description() const override {
    return "JSON in the answer; listed fields (dotted paths) equal their expected values";
  }

  void CheckSpec(const nlohmann::json& spec, const SourceLocation& where) const override {
    CheckSpecKeys(spec, where, kName, {"fields"});
    if (!spec.contains("fields")) ThrowSpecError(where, kName, "fields", "missing");
    const auto& fields = spec["fields"];
    if (!fields.is_object() || fields.empty()) {
      ThrowSpecError(where, kName, "fields", "expected a non-empty mapping of path: value");
    }
    for (const auto& [path, value] : fields.items()) {
      if (!ParsePath(path)) {
        ThrowSpecError(where, kName, "fields",
                       "malformed path '" + path + "' (write a.b, a[0] or a[0].b)");
      }
    }
  }

  Grade Run(const nlohmann::json& spec, const Answer& answer,
            const GradeContext& /*context*/) const override {
    Grade grade;
    FoundJson found = FindJson(answer.text);
    if (!found.value) {
      grade.status = GradeStatus::kNoAnswer;
      grade.reason = found.error;
      return grade;
    }
    const nlohmann::json& fields = spec["fields"];
    nlohmann::json mismatches = nlohmann::json::array();
    size_t equal = 0;
    for (const auto& [path, want] : fields.items()) {
      const nlohmann::json* got = Lookup(*found.value, path);
      // nlohmann's == compares numbers by value across integer and float (1 == 1.0), and
      // objects and arrays element by element with the same rule.
      if (got != nullptr && *got == want) {
        ++equal;
        continue;
      }
      nlohmann::json mismatch = {{"field", path}, {"expected", want}};
      mismatch["got"] = got == nullptr ? nlohmann::json("(missing)") : nlohmann::json(Shown(*got));
      mismatches.push_back(std::move(mismatch));
    }
    grade.score = static_cast<double>(equal) / static_cast<double>(fields.size());
    grade.passed = mismatches.empty();
    grade.evidence = {{"matched", equal}, {"total", fields.size()}, {"mismatches", mismatches}};
    grade.reason = grade.passed ? "all " + std::to_string(equal) + " fields match"
                                : std::to_string(mismatches.size()) + " of " +
                                      std::to_string(fields.size()) + " fields differ, first '" +
                                      mismatches[0]["field"].get<std::string>() + "'";
    return grade;
  }
};

}  // namespace

std::unique_ptr<Grader> MakeJsonFieldsGrader() {
  return std::make_unique<JsonFieldsGrader>();
}

}  // namespace evalrun
