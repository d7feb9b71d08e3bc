// numeric: a number found in the answer against the expected one, within
// max(abs_tol, rel_tol × |answer|), computed exactly in decimal. docs/graders.md states the rules.
#include <string>

#include "graders/native/factories.h"

namespace evalrun {

namespace {

constexpr std::string_view kName = "numeric";

class NumericGrader final : public Grader {
 public:
  std::string_view name() const override { return kName; }
  std::string_view version() const override { return "1"; }
  std::string_view description() const override {
    return "a number in the answer (last, first or the ANSWER line) within abs_tol / rel_tol";
  }

  void CheckSpec(const nlohmann::json& spec, const SourceLocation& where) const override {
    CheckSpecKeys(spec, where, kName, {"answer", "abs_tol", "rel_tol", "extract"});
    if (!spec.contains("answer")) ThrowSpecError(where, kName, "answer", "missing");
    if (!spec["answer"].is_number()) {
      ThrowSpecError(where, kName, "answer",
                     "expected a number, got " + JsonTypeName(spec["answer"]));
    }
    for (const char* key : {"abs_tol", "rel_tol"}) {
      if (spec.contains(key) && (!spec[key].is_number() || spec[key].get<double>() < 0)) {
        ThrowSpecError(where, kName, key, "expected a number >= 0");
      }
    }
    if (spec.contains("extract")) {
      const auto& e = spec["extract"];
      if (!e.is_string() || (e != "last" && e != "first" && e != "answer_line")) {
        ThrowSpecError(where, kName, "extract", "expected 'last', 'first' or 'answer_line'");
      }
    }
  }

  Grade Run(const nlohmann::json& spec, const Answer& answer,
            const GradeContext& /*context*/) const override {
    Grade grade;
    const std::string extract = spec.value("extract", std::string("last"));
    std::string source = answer.text;
    if (extract == "answer_line") {
      std::optional<std::string> line = FindAnswerLine(answer.text);
      if (!line) {
        grade.status = GradeStatus::kNoAnswer;
        grade.reason = "no ANSWER: line";
        return grade;
      }
      source = std::move(*line);
    }
    std::optional<Decimal> found;
    const std::string normalized = NormalizeNumerals(source);
    if (extract == "first") {
      // ForEachNumber has no early exit; the first number only needs a short prefix scan.
      bool done = false;
      ForEachNumber(normalized, [&](const Decimal& d) {
        if (!done) found = d;
        done = true;
      });
    } else {
      ForEachNumber(normalized, [&](const Decimal& d) { found = d; });
    }
    if (!found) {
      grade.status = GradeStatus::kNoAnswer;
      grade.reason = "no number in the answer";
      return grade;
    }
    const Decimal want = *DecimalFromJson(spec["answer"]);
    Decimal tolerance;
    if (spec.contains("abs_tol")) tolerance = *DecimalFromJson(spec["abs_tol"]);
    if (spec.contains("rel_tol")) {
      const Decimal relative = MultiplyAbs(want, *DecimalFromJson(spec["rel_tol"]));
      if (CompareDecimal(relative, tolerance) > 0) tolerance = relative;
    }
    const bool ok = WithinTolerance(*found, want, tolerance);
    grade.score = ok ? 1 : 0;
    grade.passed = ok;
    grade.reason = ok ? "number within tolerance"
                      : found->ToString() + " is not within " + tolerance.ToString() + " of " +
                            want.ToString();
    grade.evidence = {{"parsed", found->ToString()},
                      {"expected", want.ToString()},
                      {"tolerance", tolerance.ToString()},
                      {"extract", extract}};
    return grade;
  }
};

}  // namespace

std::unique_ptr<Grader> MakeNumericGrader() {
  return std::make_unique<NumericGrader>();
}

}  // namespace evalrun
