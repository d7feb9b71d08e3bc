// regex: a JavaScript regular expression, with JavaScript's grammar and meaning
// (Regex::CompileJavaScript, graders/framework/regex.h), matched with bounds. docs/graders.md
// states the rules.
#include <memory>
#include <string>

#include "core/error.h"
#include "graders/native/factories.h"
#include "graders/framework/regex.h"

namespace evalrun {

namespace {

constexpr std::string_view kName = "regex";

class RegexGrader final : public Grader {
 public:
  std::string_view name() const override { return kName; }
  std::string_view version() const override { return "2"; }
  std::string_view description() const override {
    return "a JavaScript regular expression (on PCRE2, bounded) matches or does not match";
  }

  void CheckSpec(const nlohmann::json& spec, const SourceLocation& where) const override {
    CheckSpecKeys(spec, where, kName, {"pattern", "flags", "match", "expect"});
    if (!spec.contains("pattern")) ThrowSpecError(where, kName, "pattern", "missing");
    if (!spec["pattern"].is_string()) {
      ThrowSpecError(where, kName, "pattern",
                     "expected a string, got " + JsonTypeName(spec["pattern"]));
    }
    if (spec.contains("flags") && !spec["flags"].is_string()) {
      ThrowSpecError(where, kName, "flags", "expected a string of i, m, s, u");
    }
    if (spec.contains("match") && spec["match"] != "search" && spec["match"] != "full") {
      ThrowSpecError(where, kName, "match", "expected 'search' or 'full'");
    }
    if (spec.contains("expect") && !spec["expect"].is_boolean()) {
      ThrowSpecError(where, kName, "expect", "expected true or false");
    }
    const std::string flags = spec.value("flags", std::string());
    if (const std::string error = Regex::FlagsError(flags); !error.empty()) {
      ThrowSpecError(where, kName, "flags", error);
    }
    try {
      Regex::CompileJavaScript(spec["pattern"].get<std::string>(), flags);
    } catch (const Error& e) {
      ThrowSpecError(where, kName, "pattern", e.what());
    }
  }

  Grade Run(const nlohmann::json& spec, const Answer& answer,
            const GradeContext& /*context*/) const override {
    Grade grade;
    const bool full = spec.value("match", std::string("search")) == "full";
    const bool expect = spec.value("expect", true);
    grade.evidence = {{"pattern", spec.value("pattern", std::string())},
                      {"match", full ? "full" : "search"},
                      {"expect", expect}};
    std::shared_ptr<const Regex> regex;
    try {
      regex = Regex::CompileJavaScript(spec.value("pattern", std::string()),
                                       spec.value("flags", std::string()));
    } catch (const Error& e) {
      grade.status = GradeStatus::kSkipped;
      grade.reason = std::string("bad pattern: ") + e.what();
      return grade;
    }
    const Regex::Result result = regex->Match(answer.text, full);
    if (result == Regex::Result::kGaveUp) {
      grade.reason = "regex gave up (match limit)";
      grade.evidence["matched"] = nullptr;
      return grade;
    }
    const bool matched = result == Regex::Result::kMatch;
    grade.evidence["matched"] = matched;
    grade.passed = matched == expect;
    grade.score = grade.passed ? 1 : 0;
    if (grade.passed) {
      grade.reason = matched ? "pattern matches" : "pattern does not match, as expected";
    } else {
      grade.reason = matched ? "pattern matches but must not" : "pattern does not match";
    }
    return grade;
  }
};

}  // namespace

std::unique_ptr<Grader> MakeRegexGrader() {
  return std::make_unique<RegexGrader>();
}

}  // namespace evalrun
