// exact: the whole answer equals one of the expected strings, after the normalisations the spec
// asks for. docs/graders.md states the rules.
#include <algorithm>
#include <string>

#include "core/error.h"

#include "graders/native/factories.h"

namespace evalrun {

namespace {

constexpr std::string_view kName = "exact";

struct Normalize {
  bool fold_case = false;    // ASCII letters only
  bool whitespace = false;   // runs of whitespace become one space
  bool punctuation = false;  // ASCII punctuation and common CJK / general punctuation removed
  bool strip = true;         // leading and trailing whitespace removed
};

Normalize ReadNormalize(const nlohmann::json& spec) {
  Normalize n;
  if (!spec.contains("normalize")) return n;
  const auto& o = spec["normalize"];
  n.fold_case = o.value("case", false);
  n.whitespace = o.value("whitespace", false);
  n.punctuation = o.value("punctuation", false);
  n.strip = o.value("strip", true);
  return n;
}

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// UTF-8 punctuation we remove besides ASCII: general punctuation (U+2010-U+205E), CJK symbols
// and punctuation (U+3000-U+303F) and full-width ASCII punctuation. Returns the sequence length
// at s[i], or 0 when it is not punctuation.
size_t PunctuationLength(const std::string& s, size_t i) {
  const auto b = static_cast<unsigned char>(s[i]);
  if (b < 0x80) {
    return (b >= 0x21 && b <= 0x2F) || (b >= 0x3A && b <= 0x40) || (b >= 0x5B && b <= 0x60) ||
                   (b >= 0x7B && b <= 0x7E)
               ? 1
               : 0;
  }
  if (b != 0xE2 && b != 0xE3 && b != 0xEF) return 0;
  if (i + 2 >= s.size()) return 0;
  const int cp = ((b & 0x0F) << 12) | ((static_cast<unsigned char>(s[i + 1]) & 0x3F) << 6) |
                 (static_cast<unsigned char>(s[i + 2]) & 0x3F);
  const bool punct = (cp >= 0x2010 && cp <= 0x205E) || (cp >= 0x3001 && cp <= 0x303F) ||
                     (cp >= 0xFF01 && cp <= 0xFF0F) || (cp >= 0xFF1A && cp <= 0xFF20) ||
                     (cp >= 0xFF3B && cp <= 0xFF40) || (cp >= 0xFF5B && cp <= 0xFF65);
  return punct ? 3 : 0;
}

std::string Apply(const Normalize& n, const std::string& in) {
  std::string s;
  s.reserve(in.size());
  for (size_t i = 0; i < in.size();) {
    if (n.punctuation) {
      const size_t p = PunctuationLength(in, i);
      if (p > 0) {
        i += p;
        continue;
      }
    }
    char c = in[i++];
    if (n.fold_case && c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (n.whitespace && IsSpace(c)) {
      if (!s.empty() && s.back() == ' ') continue;
      c = ' ';
    }
    s.push_back(c);
  }
  if (n.strip) {
    size_t begin = 0;
    while (begin < s.size() && IsSpace(s[begin])) ++begin;
    size_t end = s.size();
    while (end > begin && IsSpace(s[end - 1])) --end;
    s = s.substr(begin, end - begin);
  }
  return s;
}

class ExactGrader final : public Grader {
 public:
  std::string_view name() const override { return kName; }
  std::string_view version() const override { return "1"; }
  std::string_view description() const override {
    return "the whole answer equals an expected string (optional case/space/punctuation rules)";
  }

  void CheckSpec(const nlohmann::json& spec, const SourceLocation& where) const override {
    CheckSpecKeys(spec, where, kName, {"answer", "normalize"});
    if (!spec.contains("answer")) ThrowSpecError(where, kName, "answer", "missing");
    const auto& answer = spec["answer"];
    const bool ok =
        answer.is_string() || (answer.is_array() && !answer.empty() &&
                               std::all_of(answer.begin(), answer.end(),
                                           [](const nlohmann::json& a) { return a.is_string(); }));
    if (!ok) {
      ThrowSpecError(where, kName, "answer", "expected a string or a non-empty list of strings");
    }
    if (spec.contains("normalize")) {
      const auto& n = spec["normalize"];
      if (!n.is_object()) ThrowSpecError(where, kName, "normalize", "expected a mapping");
      const std::vector<std::string> keys = {"case", "whitespace", "punctuation", "strip"};
      for (const auto& [key, value] : n.items()) {
        if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
          std::string problem = "unknown option '" + key + "'";
          const std::string suggestion = ClosestMatch(key, keys);
          if (!suggestion.empty()) problem += ", did you mean '" + suggestion + "'?";
          ThrowSpecError(where, kName, "normalize", problem);
        }
        if (!value.is_boolean()) {
          ThrowSpecError(where, kName, "normalize", "option '" + key + "' expects true or false");
        }
      }
    }
  }

  Grade Run(const nlohmann::json& spec, const Answer& answer,
            const GradeContext& /*context*/) const override {
    Grade grade;
    const Normalize n = ReadNormalize(spec);
    const std::string got = Apply(n, answer.text);
    std::vector<std::string> expected;
    if (spec["answer"].is_string()) {
      expected.push_back(spec["answer"].get<std::string>());
    } else {
      for (const auto& a : spec["answer"]) expected.push_back(a.get<std::string>());
    }
    for (const std::string& want : expected) {
      if (Apply(n, want) == got) {
        grade.score = 1;
        grade.passed = true;
        grade.reason = "answer matches";
        grade.evidence = {{"matched", want}};
        return grade;
      }
    }
    grade.reason =
        "answer matches none of the " + std::to_string(expected.size()) + " expected strings";
    grade.evidence = {{"expected", expected}, {"got", EvidenceText(got)}};
    return grade;
  }
};

}  // namespace

std::unique_ptr<Grader> MakeExactGrader() {
  return std::make_unique<ExactGrader>();
}

}  // namespace evalrun
