// contains / excludes: substrings that must (or must not) appear in the answer, all or any.
// docs/graders.md states the rules.
#include <string>

#include "core/error.h"
#include "graders/native/factories.h"

namespace evalrun {

namespace {

std::string FoldAscii(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

class SubstringGrader final : public Grader {
 public:
  explicit SubstringGrader(bool excludes) : excludes_(excludes) {}
  std::string_view name() const override { return excludes_ ? "excludes" : "contains"; }
  std::string_view version() const override { return "1"; }
  std::string_view description() const override {
    return excludes_ ? "none (mode all) or not every (mode any) listed string appears"
                     : "every (mode all) or some (mode any) listed string appears";
  }

  void CheckSpec(const nlohmann::json& spec, const SourceLocation& where) const override {
    CheckSpecKeys(spec, where, name(), {"values", "mode", "case_sensitive"});
    if (!spec.contains("values")) ThrowSpecError(where, name(), "values", "missing");
    const auto& values = spec["values"];
    if (!values.is_array() || values.empty()) {
      ThrowSpecError(where, name(), "values", "expected a non-empty list of strings");
    }
    for (const auto& v : values) {
      if (!v.is_string() || v.get<std::string>().empty()) {
        ThrowSpecError(where, name(), "values", "every value must be a non-empty string");
      }
    }
    if (spec.contains("mode") && spec["mode"] != "all" && spec["mode"] != "any") {
      ThrowSpecError(where, name(), "mode", "expected 'all' or 'any'");
    }
    if (spec.contains("case_sensitive") && !spec["case_sensitive"].is_boolean()) {
      ThrowSpecError(where, name(), "case_sensitive", "expected true or false");
    }
  }

  Grade Run(const nlohmann::json& spec, const Answer& answer,
            const GradeContext& /*context*/) const override {
    Grade grade;
    const bool case_sensitive = spec.value("case_sensitive", false);
    const bool all = spec.value("mode", std::string("all")) == "all";
    const std::string text = case_sensitive ? answer.text : FoldAscii(answer.text);
    nlohmann::json found = nlohmann::json::array();
    nlohmann::json absent = nlohmann::json::array();
    for (const auto& v : spec["values"]) {
      const std::string value = v.get<std::string>();
      const std::string needle = case_sensitive ? value : FoldAscii(value);
      (text.find(needle) != std::string::npos ? found : absent).push_back(value);
    }
    const double total = static_cast<double>(spec["values"].size());
    // Wanted: what counts toward the score (found for contains, absent for excludes).
    const nlohmann::json& wanted = excludes_ ? absent : found;
    const nlohmann::json& unwanted = excludes_ ? found : absent;
    if (all) {
      grade.score = static_cast<double>(wanted.size()) / total;
      grade.passed = unwanted.empty();
    } else {
      grade.passed = !wanted.empty();
      grade.score = grade.passed ? 1 : 0;
    }
    grade.evidence = {{"found", found}, {"absent", absent}, {"mode", all ? "all" : "any"}};
    if (grade.passed) {
      grade.reason = excludes_ ? "no forbidden string appears" : "the required strings appear";
      if (excludes_ && !all) grade.reason = "not every listed string appears";
    } else if (excludes_) {
      grade.reason = all ? "forbidden string appears: '" + found[0].get<std::string>() + "'"
                         : "every listed string appears";
    } else {
      grade.reason =
          all ? "missing: '" + absent[0].get<std::string>() + "'" : "none of the strings appears";
    }
    return grade;
  }

 private:
  bool excludes_;
};

}  // namespace

std::unique_ptr<Grader> MakeContainsGrader() {
  return std::make_unique<SubstringGrader>(false);
}
std::unique_ptr<Grader> MakeExcludesGrader() {
  return std::make_unique<SubstringGrader>(true);
}

}  // namespace evalrun
