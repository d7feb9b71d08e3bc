// answer_line: the last non-empty line is `ANSWER: <value>`; numbers compare as exact decimals,
// text compares trimmed and ASCII case-folded. docs/graders.md states the rules.
#include <string>

#include "graders/native/factories.h"

namespace evalrun {

namespace {

constexpr std::string_view kName = "answer_line";

std::string FoldAscii(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::string TrimCopy(std::string_view s) {
  const size_t begin = s.find_first_not_of(" \t\r\n");
  if (begin == std::string_view::npos) return {};
  return std::string(s.substr(begin, s.find_last_not_of(" \t\r\n") - begin + 1));
}

// Units compare trimmed, ASCII case-folded, with "^2"/"^3" read as "²"/"³".
std::string CanonicalUnit(std::string_view unit) {
  std::string out = FoldAscii(TrimCopy(unit));
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"^2", "\xC2\xB2"},
                                 std::pair<std::string, std::string>{"^3", "\xC2\xB3"}}) {
    for (size_t pos = out.find(from); pos != std::string::npos; pos = out.find(from, pos)) {
      out.replace(pos, from.size(), to);
    }
  }
  return out;
}

// Currency signs a model may put before the number: $ € £ ¥ ￥.
std::string_view SkipCurrency(std::string_view s) {
  for (std::string_view sign : {"$", "\xE2\x82\xAC", "\xC2\xA3", "\xC2\xA5", "\xEF\xBF\xA5"}) {
    if (s.substr(0, sign.size()) == sign) {
      s.remove_prefix(sign.size());
      while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
      return s;
    }
  }
  return s;
}

class AnswerLineGrader final : public Grader {
 public:
  std::string_view name() const override { return kName; }
  std::string_view version() const override { return "1"; }
  std::string_view description() const override {
    return "last line 'ANSWER: <value>'; exact decimal numbers, optional unit and tolerance";
  }

  void CheckSpec(const nlohmann::json& spec, const SourceLocation& where) const override {
    CheckSpecKeys(spec, where, kName, {"answer", "unit", "tolerance"});
    if (!spec.contains("answer")) ThrowSpecError(where, kName, "answer", "missing");
    const auto& answer = spec["answer"];
    if (!answer.is_number() && !answer.is_string()) {
      ThrowSpecError(where, kName, "answer",
                     "expected a number or a string, got " + JsonTypeName(answer));
    }
    if (answer.is_string() && TrimCopy(answer.get<std::string>()).empty()) {
      ThrowSpecError(where, kName, "answer", "must not be empty");
    }
    if (spec.contains("unit")) {
      if (!spec["unit"].is_string()) {
        ThrowSpecError(where, kName, "unit",
                       "expected a string, got " + JsonTypeName(spec["unit"]));
      }
      if (!answer.is_number()) ThrowSpecError(where, kName, "unit", "needs a numeric 'answer'");
    }
    if (spec.contains("tolerance")) {
      const auto& tol = spec["tolerance"];
      if (!tol.is_number() || tol.get<double>() < 0) {
        ThrowSpecError(where, kName, "tolerance", "expected a number >= 0");
      }
      if (!answer.is_number())
        ThrowSpecError(where, kName, "tolerance", "needs a numeric 'answer'");
    }
  }

  Grade Run(const nlohmann::json& spec, const Answer& answer,
            const GradeContext& /*context*/) const override {
    Grade grade;
    const std::optional<std::string> line = FindAnswerLine(answer.text);
    if (!line) {
      grade.status = GradeStatus::kNoAnswer;
      grade.reason = "no ANSWER: line";
      return grade;
    }
    grade.evidence["line"] = EvidenceText(*line);
    if (line->empty()) {
      grade.status = GradeStatus::kNoAnswer;
      grade.reason = "empty ANSWER: line";
      return grade;
    }
    const nlohmann::json& expected = spec["answer"];
    grade.evidence["expected"] = expected;
    if (expected.is_string()) {
      const bool equal = FoldAscii(*line) == FoldAscii(TrimCopy(expected.get<std::string>()));
      grade.evidence["parsed"] = EvidenceText(*line);
      grade.score = equal ? 1 : 0;
      grade.passed = equal;
      grade.reason = equal ? "answer matches"
                           : "answer '" + EvidenceText(*line, 80) + "' is not the expected one";
      return grade;
    }
    const std::string normalized = NormalizeNumerals(*line);
    std::string_view value = SkipCurrency(normalized);
    size_t consumed = 0;
    const std::optional<Decimal> parsed = ParseDecimalPrefix(value, &consumed);
    if (!parsed) {
      grade.evidence["parsed"] = nullptr;
      grade.reason = "the ANSWER line holds no number";
      return grade;
    }
    grade.evidence["parsed"] = parsed->ToString();
    const std::string written_unit = TrimCopy(value.substr(consumed));
    if (CanonicalUnit(written_unit).find_first_of("0123456789") != std::string::npos) {
      grade.reason = "more than one number on the ANSWER line";
      return grade;
    }
    if (!written_unit.empty()) grade.evidence["unit"] = EvidenceText(written_unit);
    if (!written_unit.empty() && spec.contains("unit") &&
        CanonicalUnit(written_unit) != CanonicalUnit(spec["unit"].get<std::string>())) {
      grade.reason = "unit '" + EvidenceText(written_unit, 80) + "' is not '" +
                     spec["unit"].get<std::string>() + "'";
      return grade;
    }
    const Decimal want = *DecimalFromJson(expected);
    const Decimal tolerance =
        spec.contains("tolerance") ? *DecimalFromJson(spec["tolerance"]) : Decimal{};
    const bool equal = WithinTolerance(*parsed, want, tolerance);
    grade.score = equal ? 1 : 0;
    grade.passed = equal;
    grade.reason =
        equal ? "answer matches" : "answer " + parsed->ToString() + " is not " + want.ToString();
    return grade;
  }
};

}  // namespace

std::unique_ptr<Grader> MakeAnswerLineGrader() {
  return std::make_unique<AnswerLineGrader>();
}

}  // namespace evalrun
