// zx-bench's exact_answer_line grader, reproduced (docs/zx-bench.md, "Graders: where evalrun
// knowingly differs"). Reads the whole bank entry as its spec: requirements.answer (number or
// string), requirements.acceptedVariants, requirements.solutionVerifier, scoring.comparisonMode,
// scoring.answerUnit, answerFirst.
//
// Source read: packages/core/src/evaluators/exactAnswerLine.ts of suncityldp/zx-bench, evaluator
// version exact_answer_v6 at commit 098246a990ac7cf5b9f5f7f7c336f4f180b9fa28 (it declares itself
// compatible with the bank's exact_answer_v4); formatValidScore from responseState.ts. The score is
// zx-bench's 0-100 total: round(0.1 * format + 0.9 * accuracy), format 100, or 60 when the output
// was cut by max_tokens, or 0 in strict mode when the last non-empty line is not an answer line.
//
// Pure and thread-safe; Run never throws and does linear work in the output size.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/js_value.h"
#include "core/error.h"
#include "graders/zxbench/factories.h"
#include "graders/framework/grader.h"
#include "graders/zxbench/common.h"
#include "graders/zxbench/format_parsers.h"
#include "graders/zxbench/nfkc.h"

namespace evalrun {
namespace {

using js::IsJsSpace;
using js::JsRound;
using js::JsTrim;
using zx::Member;
using zx::ReplaceAll;
using zx::SplitLines;
using js::NextCodePoint;
using js::ToWellFormedUtf8;

constexpr std::string_view kName = "zxbench:exact_answer_line";
constexpr std::string_view kVersion = "1";
// What evalrun's version reproduces, recorded in every grade's evidence.
constexpr std::string_view kZxEvaluator = "exact_answer_v6@098246a9";

// ---- Answer normalisation (normalizeAnswer) ------------------------------------------------------

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// `.replace(/(?<![\d.,])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\d.,])/g, m => m.replace(/,/g, ''))`: only
// syntactically valid thousands separators are dropped. The pattern never needs backtracking to
// succeed (a shorter alternative always leaves a digit, '.' or ',' that the lookahead rejects), so
// greedy matching at each allowed start is the regex's result.
std::string DropThousandsSeparators(const std::string& s) {
  auto in_set = [](char c) { return IsDigit(c) || c == '.' || c == ','; };
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    if (IsDigit(s[i]) && (i == 0 || !in_set(s[i - 1]))) {
      size_t j = i;
      while (j < s.size() && IsDigit(s[j])) ++j;
      bool matched = false;
      size_t end = j;
      if (j - i <= 3) {
        size_t k = j;
        int groups = 0;
        while (k + 3 < s.size() && s[k] == ',' && IsDigit(s[k + 1]) && IsDigit(s[k + 2]) &&
               IsDigit(s[k + 3])) {
          k += 4;
          ++groups;
        }
        if (groups > 0) {
          if (k + 1 < s.size() && s[k] == '.' && IsDigit(s[k + 1])) {
            ++k;
            while (k < s.size() && IsDigit(s[k])) ++k;
          }
          if (k >= s.size() || !in_set(s[k])) {
            matched = true;
            end = k;
          }
        }
      }
      if (matched) {
        for (size_t p = i; p < end; ++p) {
          if (s[p] != ',') out += s[p];
        }
        i = end;
        continue;
      }
    }
    out += s[i];
    ++i;
  }
  return out;
}

std::string NormalizeAnswer(std::string_view text) {
  std::string s = zx::NfkcSubset(text);
  ReplaceAll(s, "**", "");
  {  // .replace(/\s+/g, '') and .replace(/[\[\]]/g, '')
    std::string t;
    t.reserve(s.size());
    for (size_t i = 0; i < s.size();) {
      const size_t start = i;
      const char32_t c = NextCodePoint(s, i);
      if (IsJsSpace(c) || c == '[' || c == ']') continue;
      t.append(s, start, i - start);
    }
    s = std::move(t);
  }
  ReplaceAll(s, "\xEF\xBC\x8C", ",");  // ，
  ReplaceAll(s, ";", ",");
  ReplaceAll(s, "\xEF\xBC\x9B", ",");  // ；
  // .replace(/[。.,]+$/, '')
  for (;;) {
    if (!s.empty() && (s.back() == '.' || s.back() == ',')) {
      s.pop_back();
    } else if (s.size() >= 3 && s.compare(s.size() - 3, 3, "\xE3\x80\x82") == 0) {  // 。
      s.resize(s.size() - 3);
    } else {
      break;
    }
  }
  s = DropThousandsSeparators(s);
  ReplaceAll(s, "->", "-");
  ReplaceAll(s, "\xE2\x86\x92", "-");  // →
  ReplaceAll(s, "\xE2\x87\x92", "-");  // ⇒
  ReplaceAll(s, "\xE2\x80\x94", "-");  // —
  return s;
}

// ---- Exact decimals (canonicalDecimal) -----------------------------------------------------------

// Signed significant digits and a base-10 exponent, "-125e-2"; nullopt when `text` is not a plain
// decimal, is longer than 4096 characters or has an exponent of more than six digits. Never goes
// through floating point.
std::optional<std::string> CanonicalDecimal(std::string_view text, long shift = 0) {
  if (text.size() > 4096) return std::nullopt;
  size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
  const size_t whole_begin = i;
  while (i < text.size() && IsDigit(text[i])) ++i;
  std::string_view whole = text.substr(whole_begin, i - whole_begin);
  std::string_view fraction;
  if (i < text.size() && text[i] == '.') {
    const size_t f = ++i;
    while (i < text.size() && IsDigit(text[i])) ++i;
    fraction = text.substr(f, i - f);
    if (whole.empty() && fraction.empty()) return std::nullopt;
  } else if (whole.empty()) {
    return std::nullopt;
  }
  long exponent = 0;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool exp_negative = false;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) exp_negative = text[i++] == '-';
    const size_t e = i;
    while (i < text.size() && IsDigit(text[i])) ++i;
    if (i == e || i - e > 6) return std::nullopt;
    for (size_t k = e; k < i; ++k) exponent = exponent * 10 + (text[k] - '0');
    if (exp_negative) exponent = -exponent;
  }
  if (i != text.size()) return std::nullopt;
  std::string digits = std::string(whole) + std::string(fraction);
  digits.erase(0, digits.find_first_not_of('0') == std::string::npos
                      ? digits.size()
                      : digits.find_first_not_of('0'));
  if (digits.empty()) return "0";
  const size_t last = digits.find_last_not_of('0');
  const long trailing = static_cast<long>(digits.size() - last - 1);
  digits.resize(last + 1);
  exponent += -static_cast<long>(fraction.size()) + trailing + shift;
  return (negative ? "-" : "") + digits + "e" + std::to_string(exponent);
}

// canonicalDecimal(String(n)) for a JavaScript number: String(n) prints the shortest digits that
// round-trip, as std::to_chars does, so the canonical form is built from those digits directly.
std::optional<std::string> CanonicalNumber(double value) {
  if (!std::isfinite(value)) return std::nullopt;  // String(NaN) is not a decimal
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value,
                                 std::chars_format::scientific);
  if (ec != std::errc()) return std::nullopt;
  std::string_view sci(buffer, static_cast<size_t>(end - buffer));  // "-1.2345e+02"
  return CanonicalDecimal(sci);
}

// ---- Answer comparison (compareStrictAnswer) ----------------------------------------------------

// `^[¥￥]?(NUMBER)(万|亿)?(元|种|次|个|件|%)?$` on the normalised answer.
struct NumericAnswer {
  std::string number;
  std::string multiplier;  // "", "万", "亿"
  std::string unit;        // "", "元", "种", "次", "个", "件", "%"
};

bool ConsumePrefix(std::string_view& s, std::string_view prefix) {
  if (s.substr(0, prefix.size()) != prefix) return false;
  s.remove_prefix(prefix.size());
  return true;
}

std::optional<NumericAnswer> ParseNumericAnswer(std::string_view s) {
  if (!ConsumePrefix(s, "\xC2\xA5")) ConsumePrefix(s, "\xEF\xBF\xA5");  // ¥ or ￥
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  const size_t int_begin = i;
  while (i < s.size() && IsDigit(s[i])) ++i;
  if (i > int_begin) {
    if (i < s.size() && s[i] == '.') {
      ++i;
      while (i < s.size() && IsDigit(s[i])) ++i;
    }
  } else {
    if (i + 1 < s.size() && s[i] == '.' && IsDigit(s[i + 1])) {
      ++i;
      while (i < s.size() && IsDigit(s[i])) ++i;
    } else {
      return std::nullopt;
    }
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {  // taken only when complete
    size_t k = i + 1;
    if (k < s.size() && (s[k] == '+' || s[k] == '-')) ++k;
    const size_t e = k;
    while (k < s.size() && IsDigit(s[k])) ++k;
    if (k > e) i = k;
  }
  NumericAnswer answer;
  answer.number = std::string(s.substr(0, i));
  std::string_view rest = s.substr(i);
  for (std::string_view m : {"\xE4\xB8\x87", "\xE4\xBA\xBF"}) {  // 万 亿
    if (ConsumePrefix(rest, m)) {
      answer.multiplier = std::string(m);
      break;
    }
  }
  for (std::string_view u : {"\xE5\x85\x83", "\xE7\xA7\x8D", "\xE6\xAC\xA1", "\xE4\xB8\xAA",
                             "\xE4\xBB\xB6", "%"}) {  // 元 种 次 个 件 %
    if (ConsumePrefix(rest, u)) {
      answer.unit = std::string(u);
      break;
    }
  }
  if (!rest.empty()) return std::nullopt;
  return answer;
}

// The numbers of `(?<![A-Za-z\d.])[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?` (global) and the
// text with each replaced by '#'.
struct NumbersAndSkeleton {
  std::vector<std::optional<std::string>> values;  // canonicalDecimal of each match
  std::string skeleton;
};

NumbersAndSkeleton SplitNumbers(const std::string& s) {
  auto blocks = [](char c) {
    return IsDigit(c) || c == '.' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
  };
  NumbersAndSkeleton result;
  size_t i = 0;
  while (i < s.size()) {
    if (i == 0 || !blocks(s[i - 1])) {
      size_t k = i;
      if (s[k] == '+' || s[k] == '-') ++k;
      size_t end = 0;  // 0: no match here
      if (k < s.size() && IsDigit(s[k])) {
        while (k < s.size() && IsDigit(s[k])) ++k;
        if (k < s.size() && s[k] == '.') {
          ++k;
          while (k < s.size() && IsDigit(s[k])) ++k;
        }
        end = k;
      } else if (k + 1 < s.size() && s[k] == '.' && IsDigit(s[k + 1])) {
        k += 1;
        while (k < s.size() && IsDigit(s[k])) ++k;
        end = k;
      }
      if (end != 0) {
        if (end < s.size() && (s[end] == 'e' || s[end] == 'E')) {
          size_t e = end + 1;
          if (e < s.size() && (s[e] == '+' || s[e] == '-')) ++e;
          const size_t digits = e;
          while (e < s.size() && IsDigit(s[e])) ++e;
          if (e > digits) end = e;
        }
        result.values.push_back(CanonicalDecimal(std::string_view(s).substr(i, end - i)));
        result.skeleton += '#';
        i = end;
        continue;
      }
    }
    result.skeleton += s[i];
    ++i;
  }
  return result;
}

// normalizeSkeletonSeparators: runs of field/list separators become one ',', then runs of '-'.
std::string NormalizeSkeletonSeparators(const std::string& s) {
  auto is_separator = [](char32_t c) {
    switch (c) {
      case 0xFF0C: case ',': case 0x3001: case ';': case 0xFF1B: case '|': case '/': case '\\':
      case '~': case 0xFF5E: case 0x2014: case 0x2013:
        return true;
      default:
        return false;
    }
  };
  std::string first;
  bool in_run = false;
  for (size_t i = 0; i < s.size();) {
    const size_t start = i;
    const char32_t c = NextCodePoint(s, i);
    if (is_separator(c)) {
      if (!in_run) first += ',';
      in_run = true;
      continue;
    }
    in_run = false;
    first.append(s, start, i - start);
  }
  std::string out;
  for (size_t i = 0; i < first.size(); ++i) {
    if (first[i] == '-') {
      out += ',';
      while (i + 1 < first.size() && first[i + 1] == '-') ++i;
    } else {
      out += first[i];
    }
  }
  return out;
}

// 100 or 0 (compareStrictAnswer).
int CompareStrictAnswer(std::string_view extracted, const nlohmann::json& expected,
                        const nlohmann::json& unit) {
  const std::string actual = NormalizeAnswer(extracted);
  if (expected.is_number()) {
    const auto m = ParseNumericAnswer(actual);
    if (!m) return 0;
    if (unit.is_string()) {
      const std::string u = unit.get<std::string>();
      if (!m->unit.empty() && m->unit != u) return 0;
      if (!m->multiplier.empty() && u != "\xE5\x85\x83") return 0;  // 万/亿 only with 元
    }
    const long shift = m->multiplier.empty() ? 0 : m->multiplier == "\xE4\xB8\x87" ? 4 : 8;
    const auto value = CanonicalDecimal(m->number, shift);
    const auto gold = CanonicalNumber(expected.get<double>());
    return value && gold && *value == *gold ? 100 : 0;
  }
  if (!expected.is_string()) return 0;
  const std::string target =
      NormalizeAnswer(ToWellFormedUtf8(expected.get_ref<const std::string&>()));
  const auto a = SplitNumbers(actual);
  const auto t = SplitNumbers(target);
  if (NormalizeSkeletonSeparators(a.skeleton) != NormalizeSkeletonSeparators(t.skeleton) ||
      a.values.size() != t.values.size()) {
    return 0;
  }
  for (size_t i = 0; i < a.values.size(); ++i) {
    if (!a.values[i] || a.values[i] != t.values[i]) return 0;
  }
  return 100;
}

// ---- Extraction ----------------------------------------------------------------------------------

bool ConsumeAsciiNoCase(std::string_view& s, std::string_view word) {
  if (s.size() < word.size()) return false;
  for (size_t i = 0; i < word.size(); ++i) {
    char c = s[i];
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    if (c != word[i]) return false;
  }
  s.remove_prefix(word.size());
  return true;
}

bool ConsumeLabel(std::string_view& s, bool with_result_labels) {
  if (ConsumeAsciiNoCase(s, "ANSWER")) return true;
  if (ConsumePrefix(s, "\xE6\x9C\x80\xE7\xBB\x88\xE7\xAD\x94\xE6\xA1\x88")) return true;  // 最终答案
  if (ConsumePrefix(s, "\xE7\xAD\x94\xE6\xA1\x88")) return true;                          // 答案
  if (!with_result_labels) return false;
  if (ConsumePrefix(s, "\xE6\x9C\x80\xE7\xBB\x88\xE7\xBB\x93\xE6\x9E\x9C")) return true;  // 最终结果
  return ConsumePrefix(s, "\xE7\xBB\x93\xE6\x9E\x9C");                                   // 结果
}

bool HasLineTerminator(std::string_view s) {  // what JavaScript's '.' refuses to match
  return s.find('\n') != std::string_view::npos || s.find('\r') != std::string_view::npos ||
         s.find("\xE2\x80\xA8") != std::string_view::npos ||
         s.find("\xE2\x80\xA9") != std::string_view::npos;
}

std::string StripBold(std::string_view s) {
  std::string out(s);
  ReplaceAll(out, "**", "");
  return out;
}

// extractAnswerLine: the last non-empty line must match
// /^[ \t]*(?:\*\*)?(?:ANSWER|最终答案|答案)(?:\*\*)?[ \t]*[:：][ \t]*(.*)$/i.
std::optional<std::string> ExtractAnswerLine(std::string_view text) {
  std::string_view last;
  bool found = false;
  for (std::string_view line : SplitLines(text)) {
    if (!JsTrim(line).empty()) {
      last = line;
      found = true;
    }
  }
  if (!found) return std::nullopt;
  std::string_view s = last;
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  ConsumePrefix(s, "**");  // dropping an optional "**" never helps a label match
  if (!ConsumeLabel(s, false)) return std::nullopt;
  ConsumePrefix(s, "**");
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  if (!ConsumePrefix(s, ":") && !ConsumePrefix(s, "\xEF\xBC\x9A")) return std::nullopt;  // ：
  if (HasLineTerminator(s)) return std::nullopt;
  return StripBold(JsTrim(s));
}

void SkipJsSpace(std::string_view& s) {
  while (!s.empty()) {
    size_t i = 0;
    if (!IsJsSpace(NextCodePoint(s, i))) break;
    s.remove_prefix(i);
  }
}

// extractFirstAnswer (answerFirst entries): the first non-empty line, trimmed, must match
// /^(?:\*\*)?(?:ANSWER|最终答案|答案|最终结果|结果)(?:\*\*)?\s*(?:是|为|[:：])\s*(.+)$/i.
std::optional<std::string> ExtractFirstAnswer(std::string_view text) {
  for (std::string_view line : SplitLines(text)) {
    std::string_view s = JsTrim(line);
    if (s.empty()) continue;
    ConsumePrefix(s, "**");
    if (!ConsumeLabel(s, true)) return std::nullopt;
    ConsumePrefix(s, "**");
    SkipJsSpace(s);
    if (!ConsumePrefix(s, "\xE6\x98\xAF") && !ConsumePrefix(s, "\xE4\xB8\xBA") &&  // 是 为
        !ConsumePrefix(s, ":") && !ConsumePrefix(s, "\xEF\xBC\x9A")) {
      return std::nullopt;
    }
    SkipJsSpace(s);  // the line is trimmed, so (.+) still has a character after this
    if (s.empty() || HasLineTerminator(s)) return std::nullopt;
    return StripBold(JsTrim(s));
  }
  return std::nullopt;
}

// validRiverCrossing, for requirements.solutionVerifier == "river_crossing": exactly one
// "STEPS:" line of seven legal crossings (空 狼 羊 白菜/菜) that ends with everything across.
bool ValidRiverCrossing(std::string_view output) {
  std::string_view steps_line;
  int count = 0;
  for (std::string_view line : SplitLines(output)) {
    std::string_view s = JsTrim(line);
    if (!ConsumeAsciiNoCase(s, "STEPS")) continue;
    SkipJsSpace(s);
    if (!ConsumePrefix(s, ":")) continue;
    SkipJsSpace(s);
    steps_line = s;  // .replace(/^\s*STEPS\s*:\s*/i, '') on the untrimmed line gives the same
    ++count;
  }
  if (count != 1) return false;
  // .split(/\s*[,，、]\s*/)
  std::vector<std::string> steps(1);
  for (size_t i = 0; i < steps_line.size();) {
    const size_t start = i;
    const char32_t c = NextCodePoint(steps_line, i);
    if (c == ',' || c == 0xFF0C || c == 0x3001) {
      steps.emplace_back();
    } else {
      steps.back().append(steps_line.substr(start, i - start));
    }
  }
  if (steps.size() != 7) return false;
  int state = 0;
  for (const std::string& raw : steps) {
    const std::string_view step = JsTrim(raw);
    int bit = -1;
    if (step == "\xE7\xA9\xBA") bit = 0;                                   // 空
    else if (step == "\xE7\x8B\xBC") bit = 2;                              // 狼
    else if (step == "\xE7\xBE\x8A") bit = 4;                              // 羊
    else if (step == "\xE7\x99\xBD\xE8\x8F\x9C" || step == "\xE8\x8F\x9C") bit = 8;  // 白菜 菜
    if (bit < 0) return false;  // (inherited Object.prototype names are not modelled)
    if (bit != 0 && ((state & bit) != 0) != ((state & 1) != 0)) return false;
    state ^= 1 | bit;
    const bool farmer = state & 1, wolf = state & 2, goat = state & 4, cabbage = state & 8;
    if ((wolf == goat && farmer != goat) || (goat == cabbage && farmer != goat)) return false;
  }
  return state == 15;
}

// This grader's zx-bench score as a Grade (graders/zxbench/common.h).
Grade MakeGrade(int zx_score, nlohmann::json evidence, std::string reason) {
  return zx::ZxGrade(zx_score, std::move(evidence), std::move(reason), kZxEvaluator);
}

class ZxExactAnswerLineGrader final : public Grader {
 public:
  std::string_view name() const override { return kName; }
  std::string_view version() const override { return kVersion; }
  std::string_view description() const override {
    return "zx-bench exact_answer_line: the last line's ANSWER, exact decimals and units, "
           "scored as zx-bench scores it";
  }

  void CheckSpec(const nlohmann::json& spec, const SourceLocation& where) const override {
    const std::string prefix = where.ToString() + ": " + std::string(kName) + ": ";
    if (!spec.is_object()) {
      throw Error(prefix + "the spec must be the zx-bench entry (a JSON object)");
    }
    const auto& scoring = Member(spec, "scoring");
    if (!scoring.is_object()) {
      throw Error(prefix + "the entry has no 'scoring' object (zx-bench reads "
                           "scoring.comparisonMode and scoring.answerUnit from it)");
    }
    const auto& requirements = Member(spec, "requirements");
    if (!requirements.is_null() && !requirements.is_object()) {
      throw Error(prefix + "'requirements' must be an object holding the gold 'answer'");
    }
  }

  Grade Run(const nlohmann::json& spec, const Answer& answer,
            const GradeContext& /*context*/) const override {
    const std::string output = ToWellFormedUtf8(answer.text);
    nlohmann::json evidence = nlohmann::json::object();
    if (JsTrim(output).empty()) {
      Grade grade = MakeGrade(0, std::move(evidence), "empty output");
      grade.status = GradeStatus::kNoAnswer;
      return grade;
    }
    const auto& requirements = Member(spec, "requirements");
    const auto& scoring = Member(spec, "scoring");
    const auto& expected = Member(requirements, "answer");
    int format = answer.truncated ? 60 : 100;  // formatValidScore: cut by max_tokens -> 60
    if (expected.is_null()) {
      // zx-bench: environmentError, "GRADING_UNAVAILABLE: missing reference answer".
      Grade grade = MakeGrade(0, std::move(evidence), "the entry has no requirements.answer");
      grade.status = GradeStatus::kEnvError;
      return grade;
    }
    if (Member(scoring, "comparisonMode") != "strict") {
      Grade grade;
      grade.status = GradeStatus::kSkipped;
      grade.reason = "scoring.comparisonMode is not 'strict': zx-bench's tolerant extraction "
                     "is not reproduced by evalrun";
      return grade;
    }
    if (Member(scoring, "mathReviewPolicy").is_string() &&
        Member(requirements, "answerFields").is_array()) {
      Grade grade;
      grade.status = GradeStatus::kSkipped;
      grade.reason = "scoring.mathReviewPolicy (field-level math review) is not reproduced by "
                     "evalrun";
      return grade;
    }

    std::vector<std::string> candidates;
    const auto default_answer = ExtractAnswerLine(output);
    if (Member(spec, "answerFirst") == true) {
      if (auto first = ExtractFirstAnswer(output)) candidates.push_back(*first);
    }
    if (default_answer &&
        std::find(candidates.begin(), candidates.end(), *default_answer) == candidates.end()) {
      candidates.push_back(*default_answer);
    }
    evidence["expected"] = expected;
    if (candidates.empty()) {
      format = 0;  // strict: no answer line on the last non-empty line is a format failure
      evidence["format_valid"] = format;
      evidence["answer_accuracy"] = 0;
      const int total = JsRound(format * 0.1 + 0 * 0.9);
      return MakeGrade(total, std::move(evidence),
                       "the last non-empty line is not an 'ANSWER:' line");
    }

    std::vector<const nlohmann::json*> golds = {&expected};
    const auto& variants = Member(requirements, "acceptedVariants");
    if (variants.is_array()) {
      for (const auto& v : variants) {
        if (v.is_string()) golds.push_back(&v);
      }
    }
    const auto& unit = Member(scoring, "answerUnit");
    auto score_answer = [&](const std::string& candidate) {
      int best = 0;
      for (const auto* gold : golds) best = std::max(best, CompareStrictAnswer(candidate, *gold, unit));
      return best;
    };
    size_t chosen = 0;
    int accuracy = score_answer(candidates[0]);
    for (size_t i = 1; i < candidates.size(); ++i) {
      const int a = score_answer(candidates[i]);
      if (a > accuracy) {
        chosen = i;
        accuracy = a;
      }
    }
    evidence["extracted"] = candidates[chosen];
    if (Member(requirements, "solutionVerifier") == "river_crossing" &&
        !ValidRiverCrossing(output)) {
      accuracy = 0;
      evidence["veto"] = "required river crossing sequence is missing or illegal";
    }
    evidence["format_valid"] = format;
    evidence["answer_accuracy"] = accuracy;
    const int total = JsRound(format * 0.10 + accuracy * 0.90);
    std::string reason = accuracy == 100 ? "answer '" + candidates[chosen] + "' is correct"
                                         : "answer '" + candidates[chosen] + "' does not match " +
                                               expected.dump();
    if (answer.truncated) reason += " (output truncated: format 60)";
    return MakeGrade(total, std::move(evidence), std::move(reason));
  }
};

}  // namespace

std::unique_ptr<Grader> MakeZxExactAnswerLineGrader() {
  return std::make_unique<ZxExactAnswerLineGrader>();
}

}  // namespace evalrun
