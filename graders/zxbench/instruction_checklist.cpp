// zx-bench's instruction_checklist grader, reproduced (docs/zx-bench.md, "Graders: where evalrun
// knowingly differs"). Reads the whole bank entry as its spec: requirements.constraints[] of
// {id, type, description, check, critical?} and scoring.partialCredit.
//
// Why one file (1.5k lines): it is the port of one upstream file (instructionChecklist.ts), kept
// in its order so that a parity review reads the two side by side; its regular expressions are
// graders/zxbench/js_regex.
//
// Source read: packages/core/src/evaluators/instructionChecklist.ts of suncityldp/zx-bench at
// 183b6f330135a0443f6c8e8a941cc8650b488c3a, the newest stored copy of the evaluator (it names
// itself instruction_checklist_v4; the v6 file the bank at 8e0adf68 names is not stored), plus
// the v5/v6 contract changes the bank migration shows: inclusion's check.matchMode ("literal":
// plain String.includes; "positive": the negation-aware mention search) and numeric_sequence's
// firstLessThan / lastGreaterThan. The v6-only types paragraph_structure, sentence_structure and
// section_reference follow checkRelationalStructure of the v6 file itself
// (bboysky/ajubyte-model-lab at 22bb91d1, instruction_checklist_v6).
// formatValidScore from responseState.ts, weightedScoreByCoverage from scoreAggregate.ts.
//
// Score, 0-100: format = 100, or 60 when cut by max_tokens and then round(60 * 0.7) = 42;
// compliance = round(passed / total * 100) (all or nothing when scoring.partialCredit is false);
// total = round(0.2 format + 0.8 compliance), capped at 60 when a constraint marked
// critical: true fails. Empty output scores 0 (status no_answer here).
//
// Malformed constraints (no id, a duplicate id, an unknown type, an empty or invalid pattern, a
// check with nothing to assert) are bank errors that zx-bench reports as an environment error;
// CheckSpec rejects them when the suite loads, and Run reports env_error if it meets one.
//
// JavaScript regular expressions (format, line_structure, numeric_sequence) are translated to
// PCRE2 (graders/zxbench/js_regex.h) so that \s, \S and '.' mean what they mean in JavaScript,
// and matched with bounded work: format patterns through the shared Regex
// (graders/framework/regex.h); line patterns, which need capture groups, through LineRegex with
// one step budget per Run. A pattern that exhausts its budget counts as not satisfied.
//
// Pure and thread-safe; Run never throws and does bounded work for any output.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/js_value.h"
#include "core/error.h"
#include "graders/framework/answer.h"
#include "graders/framework/regex.h"
#include "graders/zxbench/factories.h"
#include "graders/zxbench/js_regex.h"
#include "graders/framework/grader.h"
#include "graders/zxbench/common.h"

namespace evalrun {
namespace {

using nlohmann::json;
using js::AppendUtf8;
using js::IsJsSpace;
using js::JsRound;
using js::JsTrim;
using zx::Member;
using zx::NormalizeNewlines;
using js::NextCodePoint;
using js::ToWellFormedUtf8;
using zx::CompileFormat;
using zx::kJitRetryMaxSubject;
using zx::kLineStepBudget;
using zx::LineRegex;
using zx::MatchWithJit;

constexpr std::string_view kName = "zxbench:instruction_checklist";
constexpr std::string_view kVersion = "1";
// What evalrun reproduces, recorded in every grade's evidence.
constexpr std::string_view kZxEvaluator = "instruction_checklist@183b6f33+v6-contract";

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Every constraint type instructionChecklist.ts dispatches on (checkConstraint).
const std::vector<std::string> kReproducedTypes = {
    "exact_count", "paragraph_count", "sentence_count", "inclusion",    "ordered_inclusion",
    "exclusion",   "english_free",    "length",         "format",       "exact_order",
    "exact_word",  "conflict_resolution", "numeric_column", "numeric_sequence",
    "line_structure", "json_valid", "paragraph_structure", "sentence_structure",
    "section_reference"};

bool Contains(const std::vector<std::string>& list, std::string_view s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

// ---- Text as JavaScript sees it ----------------------------------------------------------------


// s.replace(/\s/g, '').length
size_t NonSpaceLength(std::string_view s) {
  size_t n = 0;
  for (size_t i = 0; i < s.size();) {
    const char32_t cp = NextCodePoint(s, i);
    if (!IsJsSpace(cp)) n += cp >= 0x10000 ? 2 : 1;
  }
  return n;
}

// String.prototype.toLowerCase for the scripts with case: ASCII, Latin-1, Latin Extended-A and
// Additional, Greek, Cyrillic, Armenian, full-width Latin, Roman numerals, circled letters and
// the Kelvin/Ohm/Angstrom signs. (İ lowers to "i̇", two code points, as in JavaScript.)
char32_t LowerCodePoint(char32_t c) {
  if (c < 0x80) return c >= 'A' && c <= 'Z' ? c + 32 : c;
  if ((c >= 0xC0 && c <= 0xDE && c != 0xD7)) return c + 32;
  if ((c >= 0x100 && c <= 0x12F) || (c >= 0x132 && c <= 0x137) || (c >= 0x14A && c <= 0x177) ||
      (c >= 0x1E00 && c <= 0x1E95) || (c >= 0x1EA0 && c <= 0x1EFF) ||
      (c >= 0x460 && c <= 0x481) || (c >= 0x48A && c <= 0x4BF) || (c >= 0x4D0 && c <= 0x52F)) {
    return c % 2 == 0 ? c + 1 : c;
  }
  if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E) || (c >= 0x4C1 && c <= 0x4CE)) {
    return c % 2 == 1 ? c + 1 : c;
  }
  if (c == 0x178) return 0xFF;
  if ((c >= 0x391 && c <= 0x3A1) || (c >= 0x3A3 && c <= 0x3AB)) return c + 32;
  if (c == 0x386) return 0x3AC;
  if (c >= 0x388 && c <= 0x38A) return c + 37;
  if (c == 0x38C) return 0x3CC;
  if (c == 0x38E || c == 0x38F) return c + 63;
  if (c >= 0x410 && c <= 0x42F) return c + 32;
  if (c >= 0x400 && c <= 0x40F) return c + 80;
  if (c == 0x4C0) return 0x4CF;
  if (c >= 0x531 && c <= 0x556) return c + 48;
  if (c == 0x1E9E) return 0xDF;
  if (c == 0x2126) return 0x3C9;
  if (c == 0x212A) return 'k';
  if (c == 0x212B) return 0xE5;
  if (c >= 0x2160 && c <= 0x216F) return c + 16;
  if (c >= 0x24B6 && c <= 0x24CF) return c + 26;
  if (c >= 0xFF21 && c <= 0xFF3A) return c + 32;
  return c;
}

std::string JsLower(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const char32_t cp = NextCodePoint(s, i);
    if (cp == 0x130) {
      out += "i\xCC\x87";
    } else {
      AppendUtf8(out, LowerCodePoint(cp));
    }
  }
  return out;
}

std::vector<std::string_view> Split(std::string_view s, std::string_view delimiter) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (size_t hit; (hit = s.find(delimiter, start)) != std::string_view::npos;
       start = hit + delimiter.size()) {
    parts.push_back(s.substr(start, hit - start));
  }
  parts.push_back(s.substr(start));
  return parts;
}

// text.replace(/\r\n?/g, '\n').split('\n').filter((line) => line.trim().length > 0)
std::vector<std::string> NonEmptyLines(std::string_view text) {
  const std::string normalized = NormalizeNewlines(text);
  std::vector<std::string> lines;
  for (std::string_view line : Split(normalized, "\n")) {
    if (!JsTrim(line).empty()) lines.emplace_back(line);
  }
  return lines;
}

// Number(string): StringToNumber of ECMAScript (whitespace trimmed, "" is 0, 0x/0o/0b prefixes,
// Infinity), NaN for anything else.
double JsStringToNumber(std::string_view raw) {
  const std::string_view s = JsTrim(raw);
  if (s.empty()) return 0;
  if (s == "Infinity" || s == "+Infinity") return kInf;
  if (s == "-Infinity") return -kInf;
  if (s.size() > 2 && s[0] == '0') {
    int base = 0;
    const char p = static_cast<char>(s[1] | 0x20);
    if (p == 'x') base = 16;
    if (p == 'o') base = 8;
    if (p == 'b') base = 2;
    if (base != 0) {
      double value = 0;
      for (char c : s.substr(2)) {
        int d = -1;
        if (c >= '0' && c <= '9') d = c - '0';
        if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
        if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
        if (d < 0 || d >= base) return kNaN;
        value = value * base + d;
      }
      return value;
    }
  }
  size_t i = 0;
  if (s[i] == '+' || s[i] == '-') ++i;
  const size_t int_start = i;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  size_t digits = i - int_start;
  if (i < s.size() && s[i] == '.') {
    ++i;
    const size_t frac_start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    digits += i - frac_start;
  }
  if (digits == 0) return kNaN;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    const size_t exp_start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    if (i == exp_start) return kNaN;
  }
  if (i != s.size()) return kNaN;
  const std::string text(s);
  return std::strtod(text.c_str(), nullptr);
}

// Number(value) for the JSON values a check holds.
double JsNumber(const json& v) {
  if (v.is_number()) return v.get<double>();
  if (v.is_boolean()) return v.get<bool>() ? 1 : 0;
  if (v.is_null()) return 0;
  if (v.is_string()) return JsStringToNumber(v.get_ref<const std::string&>());
  return kNaN;
}

bool JsIsInteger(double v) { return std::isfinite(v) && std::floor(v) == v; }

// JavaScript truthiness of a JSON value.
bool Truthy(const json& v) {
  if (v.is_null()) return false;
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number()) {
    const double d = v.get<double>();
    return d != 0 && !std::isnan(d);
  }
  if (v.is_string()) return !v.get_ref<const std::string&>().empty();
  return true;
}

// `a ?? b` for JSON members: absent and null fall through.
const json& Coalesce(const json& a, const json& b) { return a.is_null() ? b : a; }

std::string Shorten(std::string_view s, size_t max_bytes = 80) {
  return EvidenceText(s, max_bytes);
}

// ---- Characters ---------------------------------------------------------------------------------

bool IsHexDigit(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
int HexValue(char c) {
  return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAsciiLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// ---- Malformed requirements --------------------------------------------------------------------

// The assertions of a numeric_column check as checkNumericColumn reads them.
struct ColumnAssertions {
  bool has_order = false, desc = false, allow_equal = false, unique = false, integer = false;
  bool even = false, odd = false, has_modulus = false, has_min = false, has_max = false;
  double divisor = 0, remainder = 0, min = 0, max = 0;
};

ColumnAssertions ReadColumnAssertions(const json& check) {
  ColumnAssertions a;
  const json& order_value = Member(check, "order");
  const std::string order = order_value.is_string() ? JsLower(order_value.get<std::string>())
                            : order_value.is_null() ? std::string()
                                                    : order_value.dump();
  a.has_order = order == "desc" || order == "asc";
  a.desc = order == "desc";
  a.allow_equal = Member(check, "allowEqual") == true;
  a.unique = Member(check, "unique") == true;
  a.integer = Member(check, "integer") == true;
  a.even = Member(check, "even") == true;
  a.odd = Member(check, "odd") == true;
  const json& modulus = Member(check, "modulus");
  const json& divisor = Member(modulus, "divisor");
  a.divisor = divisor.is_null() && !(modulus.is_object() && modulus.contains("divisor"))
                  ? kNaN
                  : JsNumber(divisor);  // Number(undefined) is NaN, Number(null) 0
  a.remainder = JsNumber(Coalesce(Member(modulus, "remainder"), json(0)));
  a.has_modulus = modulus.is_object() && JsIsInteger(a.divisor) && a.divisor > 0 &&
                  std::isfinite(a.remainder);
  const auto present = [](const json& v) {
    if (v.is_null()) return false;
    if (v.is_string()) return !JsTrim(v.get_ref<const std::string&>()).empty();
    return true;
  };
  const json& min = Coalesce(Member(check, "min"), Member(check, "minValue"));
  const json& max = Coalesce(Member(check, "max"), Member(check, "maxValue"));
  a.has_min = present(min);
  a.has_max = present(max);
  a.min = JsNumber(min);
  a.max = JsNumber(max);
  return a;
}

bool NumericColumnAssertsSomething(const json& check) {
  const ColumnAssertions a = ReadColumnAssertions(check);
  return a.has_order || a.unique || a.integer || a.has_min || a.has_max || a.even || a.odd ||
         a.has_modulus;
}

// Why `constraint` (constraints[index]) cannot be measured, or "". These are the configuration
// errors zx-bench reports as unmeasured / environment errors instead of scoring the model: no
// check to run ("... specified — skipped", "配置不完整", NO_PATTERN_SPECIFIED,
// NO_ASSERTION_SPECIFIED), an invalid regular expression, an unknown type; plus values of a kind
// zx-bench's code would crash on or silently misread.
std::string ConstraintProblem(const json& constraint) {
  if (!constraint.is_object()) return "is not an object";
  const json& type_value = Member(constraint, "type");
  if (!type_value.is_string()) return "has no string 'type'";
  const std::string& type = type_value.get_ref<const std::string&>();
  if (!Contains(kReproducedTypes, type)) {
    std::string message = "has unknown type '" + type + "'";
    const std::string suggestion = ClosestMatch(type, kReproducedTypes);
    if (!suggestion.empty()) message += ", did you mean '" + suggestion + "'?";
    return message;
  }
  const json& check = Member(constraint, "check");
  if (check.is_null() && type == "english_free") return {};
  if (!check.is_object()) return "(" + type + ") needs a 'check' object";

  const auto number = [&](const char* key) -> std::string {
    const json& v = Member(check, key);
    if (v.is_null() || v.is_number()) return {};
    return "(" + type + "): check." + key + " must be a number";
  };
  const auto strings = [&](const json& list, const std::string& what,
                           bool allow_empty_list) -> std::string {
    if (!list.is_array() || (!allow_empty_list && list.empty())) {
      return "(" + type + "): " + what + " must be a non-empty array of strings";
    }
    for (const json& p : list) {
      if (!p.is_string() || p.get_ref<const std::string&>().empty()) {
        return "(" + type + "): " + what + " must hold non-empty strings only";
      }
    }
    return {};
  };
  const auto regex = [&](const char* key, bool required) -> std::string {
    const json& v = Member(check, key);
    if (v.is_null() && !required) return {};
    if (!v.is_string() || v.get_ref<const std::string&>().empty()) {
      return "(" + type + ") needs a non-empty string check." + key;
    }
    std::string error;
    if (LineRegex::Compile(v.get<std::string>(), &error) == nullptr) {
      return "(" + type + "): check." + key + " is not a valid JavaScript regular expression: " +
             error;
    }
    return {};
  };

  std::string problem;
  if (type == "exact_count") {
    const json& target = Member(check, "target");
    if (!target.is_string() || target.get_ref<const std::string&>().empty()) {
      return "(exact_count) needs a non-empty string check.target";
    }
    problem = number("count");
  } else if (type == "paragraph_structure" || type == "sentence_structure") {
    // Number.isInteger on each; starts a non-empty array (v6's CONFIG_ERROR otherwise).
    const auto integer = [&](const char* key) {
      const json& v = Member(check, key);
      return v.is_number() && std::isfinite(v.get<double>()) &&
             std::floor(v.get<double>()) == v.get<double>();
    };
    if (type == "paragraph_structure") {
      const json& starts = Member(check, "starts");
      if (!starts.is_array() || starts.empty() || !integer("sentencesPerParagraph") ||
          !integer("maxSentenceChars")) {
        return "(paragraph_structure): check.starts (a non-empty array), "
               "check.sentencesPerParagraph and check.maxSentenceChars (integers) are required";
      }
    } else if (!integer("count") || !integer("hanChars")) {
      return "(sentence_structure): check.count and check.hanChars (integers) are required";
    }
  } else if (type == "paragraph_count" || type == "sentence_count") {
    problem = number("count");
  } else if (type == "inclusion" || type == "conflict_resolution") {
    problem = strings(Member(check, "patterns"), "check.patterns", false);
    const json& mode = Member(check, "matchMode");
    if (problem.empty() && type == "inclusion" && !mode.is_null() && mode != "literal" &&
        mode != "positive") {
      problem = "(inclusion): check.matchMode must be 'literal' or 'positive'";
    }
  } else if (type == "ordered_inclusion") {
    const json& steps = Member(check, "steps");
    if (!steps.is_array() || steps.size() < 2) {
      return "(ordered_inclusion) needs at least two check.steps";
    }
    for (const json& step : steps) {
      const json& list = step.is_object() ? Member(step, "patterns") : step;
      if (!(problem = strings(list, "each of check.steps", false)).empty()) break;
    }
  } else if (type == "exclusion") {
    const json& patterns = Member(check, "patterns");
    if (!patterns.is_null()) problem = strings(patterns, "check.patterns", true);
  } else if (type == "length") {
    for (const char* key : {"minLength", "min", "maxLength", "max"}) {
      if (!(problem = number(key)).empty()) break;
    }
  } else if (type == "format") {
    problem = regex("pattern", true);
    if (problem.empty()) {
      std::string error;
      if (CompileFormat(check.at("pattern").get<std::string>(), Truthy(Member(check, "caseInsensitive")),
                        &error) == nullptr) {
        problem = "(format): check.pattern is not a valid JavaScript regular expression: " + error;
      }
    }
  } else if (type == "exact_order") {
    const json& patterns = Member(check, "patterns");
    const json& before = Coalesce(Member(check, "before"), Member(check, "first"));
    const json& after = Coalesce(Member(check, "after"), Member(check, "second"));
    const json& first = before.is_null() && patterns.is_array() && !patterns.empty() ? patterns[0] : before;
    const json& second = after.is_null() && patterns.is_array() && patterns.size() > 1 ? patterns[1] : after;
    if (!first.is_string() || !second.is_string() || first.get_ref<const std::string&>().empty() ||
        second.get_ref<const std::string&>().empty()) {
      return "(exact_order) needs two non-empty strings: check.before and check.after, or "
             "check.patterns[0] and [1]";
    }
  } else if (type == "exact_word") {
    const json& word = Coalesce(Member(check, "word"), Member(check, "pattern"));
    if (!word.is_string() || word.get_ref<const std::string&>().empty()) {
      return "(exact_word) needs a non-empty string check.word";
    }
    const json& position = Member(check, "position");
    if (!position.is_null() && !position.is_string()) {
      return "(exact_word): check.position must be a string";
    }
  } else if (type == "numeric_column") {
    if (!NumericColumnAssertsSomething(check)) {
      return "(numeric_column) asserts nothing: give order, unique, integer, min, max, even, odd "
             "or modulus";
    }
    const json& delimiter = Member(check, "delimiter");
    if (!delimiter.is_null() &&
        (!delimiter.is_string() || delimiter.get_ref<const std::string&>().empty())) {
      return "(numeric_column): check.delimiter must be a non-empty string";
    }
    const json& column_name = Member(check, "columnName");
    if (!column_name.is_null() && !column_name.is_string()) {
      return "(numeric_column): check.columnName must be a string";
    }
    for (const char* key : {"column", "minRows"}) {
      if (!(problem = number(key)).empty()) break;
    }
  } else if (type == "numeric_sequence") {
    if (!(problem = regex("linePattern", true)).empty()) return problem;
    if (!(problem = regex("valuePattern", true)).empty()) return problem;
    const json& order = Member(check, "order");
    const std::string order_text = order.is_string() ? JsLower(order.get<std::string>()) : "";
    if (order_text != "asc" && order_text != "desc" && !check.contains("consecutive")) {
      return "(numeric_sequence) asserts nothing: give order or consecutive";
    }
    for (const char* key : {"consecutive", "exactRows", "minRows", "maxRows", "firstLessThan",
                            "lastGreaterThan"}) {
      if (!(problem = number(key)).empty()) break;
    }
  } else if (type == "line_structure") {
    // oddPattern, evenPattern, uniqueGroup and maxChars are read when not undefined, so a null
    // there would be the pattern /null/ or the number 0: present means a real value.
    if (!(problem = regex("linePattern", true)).empty()) return problem;
    for (const char* key : {"oddPattern", "evenPattern"}) {
      if (check.contains(key) && !(problem = regex(key, true)).empty()) return problem;
    }
    for (const char* key : {"uniqueGroup", "maxChars"}) {
      if (check.contains(key) && !check[key].is_number()) {
        return "(line_structure): check." + std::string(key) + " must be a number";
      }
    }
    for (const char* key : {"exactRows", "minRows", "maxRows"}) {
      if (!(problem = number(key)).empty()) return problem;
    }
    const json& indent = Member(check, "indentCounts");
    if (!indent.is_null() && !indent.is_object()) {
      return "(line_structure): check.indentCounts must be an object of counts";
    }
    if (indent.is_object()) {
      for (const auto& [key, value] : indent.items()) {
        if (!value.is_number()) {
          return "(line_structure): check.indentCounts." + key + " must be a number";
        }
      }
    }
  } else if (type == "json_valid") {
    const json& language = Member(check, "language");
    if (!language.is_null() && !language.is_string()) {
      return "(json_valid): check.language must be a string";
    }
  }
  return problem;
}

// Why the requirements cannot be measured, naming the constraint, or "".
std::string RequirementsProblem(const json& spec) {
  if (!spec.is_object()) return "the spec must be the zx-bench entry (a JSON object)";
  const json& requirements = Member(spec, "requirements");
  const json& constraints = Member(requirements, "constraints");
  if (!constraints.is_array() || constraints.empty()) {
    return "requirements.constraints is missing or empty: zx-bench cannot measure instruction "
           "compliance without constraints (it reports an environment error)";
  }
  std::map<std::string, size_t> seen;
  for (size_t i = 0; i < constraints.size(); ++i) {
    const json& c = constraints[i];
    std::string where = "requirements.constraints[" + std::to_string(i) + "]";
    const json& id = Member(c, "id");
    if (c.is_object() && (!id.is_string() || id.get_ref<const std::string&>().empty())) {
      return where + " has no id (zx-bench counts it as unmeasured)";
    }
    if (id.is_string()) {
      const std::string& text = id.get_ref<const std::string&>();
      where += " (id '" + text + "')";
      const auto [it, fresh] = seen.emplace(text, i);
      if (!fresh) {
        return where + ": the id is also used by requirements.constraints[" +
               std::to_string(it->second) + "] (zx-bench counts both as unmeasured)";
      }
    }
    if (std::string problem = ConstraintProblem(c); !problem.empty()) {
      return where + " " + problem;
    }
  }
  return {};
}

// ---- The checks (instructionChecklist.ts, check* functions) --------------------------------------

struct Verdict {
  bool passed = false;
  std::string detail;
};

// What the checks share within one Run.
struct Context {
  const std::string& text;  // the output, well-formed UTF-8
  std::optional<std::string> lower;  // JsLower(text), made on first use
  uint64_t line_steps = kLineStepBudget;
  int jit_retries = 2;  // MatchWithJit calls left: bounds one Run to a few seconds
  bool gave_up = false;  // some pattern ran out of budget: counted as not satisfied

  const std::string& Lower() {
    if (!lower) lower = JsLower(text);
    return *lower;
  }
};

// text.match(new RegExp(escaped(target), 'g')).length: non-overlapping occurrences.
size_t CountOccurrences(std::string_view text, std::string_view target) {
  size_t count = 0;
  for (size_t at = text.find(target); at != std::string_view::npos;
       at = text.find(target, at + target.size())) {
    ++count;
  }
  return count;
}

Verdict CheckExactCount(Context& ctx, const json& check) {
  const std::string& target = check.at("target").get_ref<const std::string&>();
  const double expected = Member(check, "count").is_null() ? 1 : JsNumber(check["count"]);
  const size_t actual = CountOccurrences(ctx.text, target);
  const bool passed = static_cast<double>(actual) == expected;
  return {passed, "\"" + Shorten(target) + "\" appears " + std::to_string(actual) +
                      " times (expected " + json(expected).dump() + ")"};
}

// text.split(/\n[ \t]*\n+/), no filter.
std::vector<std::string_view> SplitParagraphs(std::string_view text) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\n') continue;
    size_t j = i + 1;
    while (j < text.size() && (text[j] == ' ' || text[j] == '\t')) ++j;
    if (j >= text.size() || text[j] != '\n') continue;
    while (j < text.size() && text[j] == '\n') ++j;
    parts.push_back(text.substr(start, i - start));
    start = j;
    i = j - 1;
  }
  parts.push_back(text.substr(start));
  return parts;
}

// .replace(/\r\n?/g, '\n').split(/\n[ \t]*\n+/).map(trim).filter(non-empty).length
Verdict CheckParagraphCount(Context& ctx, const json& check) {
  const double expected = Member(check, "count").is_null() ? 1 : JsNumber(check["count"]);
  const std::string text = NormalizeNewlines(ctx.text);
  size_t count = 0;
  for (std::string_view piece : SplitParagraphs(text)) {
    if (!JsTrim(piece).empty()) ++count;
  }
  return {static_cast<double>(count) == expected,
          std::to_string(count) + " paragraphs (expected " + json(expected).dump() + ")"};
}

// split(/[。！？!?]+/) (or with \n when newlineAsSeparator) .map(trim).filter(non-empty).length
Verdict CheckSentenceCount(Context& ctx, const json& check) {
  const double expected = Member(check, "count").is_null() ? 1 : JsNumber(check["count"]);
  const bool newline = Member(check, "newlineAsSeparator") == true;
  const auto separator = [&](char32_t cp) {
    return cp == U'。' || cp == U'！' || cp == U'？' || cp == U'!' || cp == U'?' ||
           (newline && cp == U'\n');
  };
  const std::string_view text = ctx.text;
  size_t count = 0;
  size_t start = 0;
  for (size_t i = 0; i < text.size();) {
    const size_t at = i;
    if (!separator(NextCodePoint(text, i))) continue;
    if (!JsTrim(text.substr(start, at - start)).empty()) ++count;
    start = i;
  }
  if (!JsTrim(text.substr(start)).empty()) ++count;
  return {static_cast<double>(count) == expected,
          std::to_string(count) + " sentences (expected " + json(expected).dump() + ")"};
}

bool IsNegationTailChar(char32_t c) {
  return IsJsSpace(c) || (c >= 0x4E00 && c <= 0x9FFF) || c == '_' || (c >= 'a' && c <= 'z') ||
         (c >= 'A' && c <= 'Z') || c == '.' || c == '-';
}

// Walks the lowered text forward, keeping what firstPositivePosition needs at any position:
// where the current clause starts (just after the last 。, ； or \n) and where the trailing run
// of whitespace before the position starts. Positions must be asked in increasing order.
class ClauseScanner {
 public:
  explicit ClauseScanner(std::string_view source) : s_(source) {}

  // Whether /(?:不|未|无|没有|勿|禁止|拒绝|不要|不应|不能|无需|not|never|do not|don't)
  // [\s\u4e00-\u9fff_a-z.-]{0,12}\s*$/i matches source.slice(clauseStart, index), where
  // clauseStart = max(lastIndexOf('。'|'；'|'\n', index)) + 1.
  bool NegatedAt(size_t index) {
    while (pos_ < index) {
      const size_t at = pos_;
      const char32_t cp = NextCodePoint(s_, pos_);
      if (cp == U'。' || cp == U'；' || cp == U'\n') clause_start_ = pos_;
      if (IsJsSpace(cp)) {
        if (!in_space_) space_start_ = at;
        in_space_ = true;
      } else {
        in_space_ = false;
      }
    }
    size_t clause_start = clause_start_;
    for (std::string_view brk : {"。", "；", "\n"}) {  // a break starting at index itself
      if (s_.substr(index, brk.size()) == brk) clause_start = std::max(clause_start, index + brk.size());
    }
    if (clause_start >= index) return false;
    size_t tail = in_space_ ? std::max(space_start_, clause_start) : index;
    // Candidate ends of the negation word: tail, then up to 12 class characters back.
    static const std::string_view kWords[] = {"不", "未", "无", "没有", "勿", "禁止", "拒绝",
                                              "不要", "不应", "不能", "无需", "not", "never",
                                              "do not", "don't"};
    for (int taken = 0;; ++taken) {
      for (std::string_view word : kWords) {
        if (tail >= clause_start + word.size() && s_.substr(tail - word.size(), word.size()) == word) {
          return true;
        }
      }
      if (taken == 12 || tail <= clause_start) return false;
      size_t back = tail - 1;
      while (back > clause_start && (static_cast<unsigned char>(s_[back]) & 0xC0) == 0x80) --back;
      size_t probe = back;
      if (!IsNegationTailChar(NextCodePoint(s_, probe))) return false;
      tail = back;
    }
  }

 private:
  std::string_view s_;
  size_t pos_ = 0;
  size_t clause_start_ = 0;
  size_t space_start_ = 0;
  bool in_space_ = false;
};

// firstPositivePosition: the earliest position of a mention of any pattern (case-insensitive)
// that is not negated within its clause; npos when none.
size_t FirstPositivePosition(Context& ctx, const std::vector<std::string>& patterns) {
  const std::string& source = ctx.Lower();
  size_t best = std::string::npos;
  for (const std::string& raw : patterns) {
    const std::string pattern = JsLower(raw);
    if (pattern.empty()) continue;
    ClauseScanner scanner(source);
    for (size_t index = source.find(pattern); index != std::string::npos;
         index = source.find(pattern, index + pattern.size())) {
      if (!scanner.NegatedAt(index)) {
        if (best == std::string::npos || index < best) best = index;
        break;
      }
    }
  }
  return best;
}

std::vector<std::string> StringList(const json& list) {
  std::vector<std::string> out;
  if (list.is_array()) {
    for (const json& v : list) {
      if (v.is_string()) out.push_back(v.get<std::string>());
    }
  }
  return out;
}

Verdict CheckInclusion(Context& ctx, const json& check) {
  const std::vector<std::string> patterns = StringList(check["patterns"]);
  const bool literal = Member(check, "matchMode") == "literal";
  std::vector<std::string> missing;
  for (const std::string& p : patterns) {
    const bool found = literal ? ctx.text.find(p) != std::string::npos
                               : FirstPositivePosition(ctx, {p}) != std::string::npos;
    if (!found) missing.push_back(p);
  }
  if (Member(check, "requireAll") == true) {
    std::string detail = missing.empty() ? "all " + std::to_string(patterns.size()) + " found"
                                         : "missing:";
    for (const auto& m : missing) detail += " \"" + Shorten(m) + "\"";
    return {missing.empty(), detail};
  }
  const bool passed = missing.size() < patterns.size();
  return {passed, passed ? "found at least one of " + std::to_string(patterns.size())
                         : "none of the " + std::to_string(patterns.size()) + " found"};
}

Verdict CheckOrderedInclusion(Context& ctx, const json& check) {
  std::vector<size_t> positions;
  for (const json& step : check["steps"]) {
    const std::vector<std::string> patterns =
        StringList(step.is_object() ? Member(step, "patterns") : step);
    const size_t position = FirstPositivePosition(ctx, patterns);
    if (position == std::string::npos) {
      return {false, "missing positive step: " + Shorten(patterns.empty() ? "" : patterns[0])};
    }
    positions.push_back(position);
  }
  for (size_t i = 1; i < positions.size(); ++i) {
    if (positions[i] <= positions[i - 1]) {
      return {false, "step " + std::to_string(i + 1) + " appears before or with step " +
                         std::to_string(i)};
    }
  }
  return {true, std::to_string(positions.size()) + " ordered positive steps found"};
}

Verdict CheckExclusion(Context& ctx, const json& check) {
  const json& patterns = Member(check, "patterns");
  if (!patterns.is_array() || patterns.empty()) {  // generic: no digits, no English letters
    const std::string& t = ctx.text;
    if (Member(check, "excludeDigits") != false &&
        std::any_of(t.begin(), t.end(), [](char c) { return IsDigit(c); })) {
      return {false, "contains digits"};
    }
    if (Member(check, "excludeEnglish") != false &&
        std::any_of(t.begin(), t.end(), [](char c) { return IsAsciiLetter(c); })) {
      return {false, "contains English letters"};
    }
    return {true, "no forbidden patterns found"};
  }
  std::string found;
  for (const std::string& p : StringList(patterns)) {
    if (ctx.text.find(p) != std::string::npos) found += " \"" + Shorten(p) + "\"";
  }
  return {found.empty(), found.empty() ? "no forbidden patterns found" : "forbidden:" + found};
}

Verdict CheckEnglishFree(Context& ctx) {
  const bool english = std::any_of(ctx.text.begin(), ctx.text.end(),
                                   [](char c) { return IsAsciiLetter(c); });
  return {!english, english ? "contains English letters" : "no English letters"};
}

Verdict CheckLength(Context& ctx, const json& check) {
  const json& min_value = Coalesce(Member(check, "minLength"), Member(check, "min"));
  const json& max_value = Coalesce(Member(check, "maxLength"), Member(check, "max"));
  const double min = min_value.is_null() ? 0 : JsNumber(min_value);
  const double max = max_value.is_null() ? kInf : JsNumber(max_value);
  const double count = static_cast<double>(NonSpaceLength(ctx.text));
  bool passed = true;
  if (min > 0 && count < min) passed = false;
  if (max < kInf && count > max) passed = false;
  return {passed, "length " + json(count).dump() + " (bounds " + json(min).dump() + ".." +
                      (std::isinf(max) ? std::string("Infinity") : json(max).dump()) + ")"};
}

Verdict CheckFormat(Context& ctx, const json& check) {
  std::string error;
  const std::string& pattern = check.at("pattern").get_ref<const std::string&>();
  const bool case_insensitive = Truthy(Member(check, "caseInsensitive"));
  const auto regex = CompileFormat(pattern, case_insensitive, &error);
  if (!regex) return {false, "invalid pattern: " + error};  // unreachable after validation
  Regex::Result result = regex->Match(ctx.text, /*full=*/false);
  if (result == Regex::Result::kGaveUp && ctx.text.size() <= kJitRetryMaxSubject &&
      ctx.jit_retries > 0) {
    --ctx.jit_retries;
    result = MatchWithJit(pattern, case_insensitive, ctx.text);
  }
  if (result == Regex::Result::kGaveUp) {
    ctx.gave_up = true;
    return {false, "the pattern exhausted evalrun's regex budget: counted as not matching"};
  }
  const bool passed = result == Regex::Result::kMatch;
  return {passed, passed ? "format matches pattern" : "format does not match the pattern"};
}

std::string JsString(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "null";
  return v.dump();
}

Verdict CheckExactOrder(Context& ctx, const json& check) {
  const json& patterns = Member(check, "patterns");
  const json& before_value = Coalesce(Member(check, "before"), Member(check, "first"));
  const json& after_value = Coalesce(Member(check, "after"), Member(check, "second"));
  const std::string before = JsLower(JsString(
      before_value.is_null() && patterns.is_array() && !patterns.empty() ? patterns[0] : before_value));
  const std::string after = JsLower(JsString(
      after_value.is_null() && patterns.is_array() && patterns.size() > 1 ? patterns[1] : after_value));
  const std::string& low = ctx.Lower();
  const size_t i_before = low.find(before);
  const size_t i_after = low.find(after);
  const bool passed = i_before != std::string::npos && i_after != std::string::npos &&
                      i_before < i_after;
  if (passed) return {true, "\"" + Shorten(before) + "\" appears before \"" + Shorten(after) + "\""};
  if (i_before == std::string::npos) return {false, "\"" + Shorten(before) + "\" not found"};
  if (i_after == std::string::npos) return {false, "\"" + Shorten(after) + "\" not found"};
  return {false, "order violated: \"" + Shorten(after) + "\" comes first"};
}

Verdict CheckExactWord(Context& ctx, const json& check) {
  const std::string word = Coalesce(Member(check, "word"), Member(check, "pattern")).get<std::string>();
  const std::string position =
      Member(check, "position").is_null() ? "start" : check["position"].get<std::string>();
  const std::string_view trimmed = JsTrim(ctx.text);
  bool passed;
  if (position == "start") {
    passed = trimmed.substr(0, word.size()) == word;
  } else if (position == "end") {
    passed = trimmed.size() >= word.size() && trimmed.substr(trimmed.size() - word.size()) == word;
  } else {
    passed = trimmed == word;
  }
  return {passed, "text " + position + (passed ? " matches \"" : " does not match \"") +
                      Shorten(word) + "\""};
}

Verdict CheckConflictResolution(Context& ctx, const json& check) {
  const std::vector<std::string> patterns = StringList(check["patterns"]);
  size_t found = 0;
  for (const std::string& p : patterns) {
    if (ctx.text.find(p) != std::string::npos) ++found;
  }
  const bool passed =
      Member(check, "requireAll") == true ? found == patterns.size() : found > 0;
  return {passed, std::to_string(found) + " of " + std::to_string(patterns.size()) +
                      " conflict-resolution markers found"};
}

// ---- numeric_column ---------------------------------------------------------------------------

// parseTableRows: CSV rows (check.format "csv", split by check.delimiter) or the rows of a
// Markdown table (lines starting with '|', outer empty cells dropped, separator rows skipped).
std::vector<std::vector<std::string>> ParseTableRows(const std::string& text, const json& check) {
  const bool csv = Member(check, "format") == "csv";
  const std::string delimiter =
      Member(check, "delimiter").is_string() ? check["delimiter"].get<std::string>() : ",";
  std::vector<std::vector<std::string>> rows;
  for (std::string_view raw : Split(text, "\n")) {  // split(/\r?\n/) then trim
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
    const std::string_view line = JsTrim(raw);
    if (line.empty()) continue;
    std::vector<std::string> cells;
    if (csv) {
      for (std::string_view cell : Split(line, delimiter)) cells.emplace_back(JsTrim(cell));
      rows.push_back(std::move(cells));
      continue;
    }
    if (line.front() != '|') continue;
    for (std::string_view cell : Split(line, "|")) cells.emplace_back(JsTrim(cell));
    if (!cells.empty() && cells.front().empty()) cells.erase(cells.begin());
    if (!cells.empty() && cells.back().empty()) cells.pop_back();
    if (cells.empty()) continue;
    const auto separator_cell = [](std::string_view c) {  // /^:?-{2,}:?$/ or /^:?=+:?$/
      if (!c.empty() && c.front() == ':') c.remove_prefix(1);
      if (!c.empty() && c.back() == ':') c.remove_suffix(1);
      if (c.empty()) return false;
      const char fill = c.front();
      if (fill != '-' && fill != '=') return false;
      if (fill == '-' && c.size() < 2) return false;
      return std::all_of(c.begin(), c.end(), [fill](char x) { return x == fill; });
    };
    if (std::all_of(cells.begin(), cells.end(), separator_cell)) continue;
    rows.push_back(std::move(cells));
  }
  return rows;
}

// normalizeColumnName: '*' and '`' removed, ASCII parentheses made full-width, trimmed.
std::string NormalizeColumnName(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '*' || c == '`') continue;
    if (c == '(') {
      out += "（";
    } else if (c == ')') {
      out += "）";
    } else {
      out += c;
    }
  }
  return std::string(JsTrim(out));
}

struct NumericCell {
  double value;
  std::string suffix;
};

// parseNumericCell: currency signs, commas and '*' removed; up to three approximation prefixes
// (/^(?:约|大约|约合|将近|接近|≈|~|ca\.?|approx\.?|about)\s*/i) removed; then
// /^(-?\d+(?:\.\d+)?)(.*)$/ (ASCII digits; '.' refuses line terminators).
std::optional<NumericCell> ParseNumericCell(const std::string* raw) {
  if (raw == nullptr) return std::nullopt;
  std::string cleaned;
  const std::string_view trimmed = JsTrim(*raw);
  for (size_t i = 0; i < trimmed.size();) {
    const size_t at = i;
    const char32_t cp = NextCodePoint(trimmed, i);
    if (cp == U'¥' || cp == U'￥' || cp == U'$' || cp == U'€' || cp == U',' || cp == U'*') continue;
    cleaned.append(trimmed.substr(at, i - at));
  }
  static const std::string_view kPrefixes[] = {"约", "大约", "约合", "将近", "接近", "≈", "~"};
  for (int round = 0; round < 3; ++round) {
    size_t cut = 0;
    for (std::string_view p : kPrefixes) {
      if (std::string_view(cleaned).substr(0, p.size()) == p) {
        cut = p.size();
        break;
      }
    }
    if (cut == 0) {
      const std::string lower = JsLower(std::string_view(cleaned).substr(0, 7));
      for (std::string_view p : {"ca", "approx", "about"}) {
        if (std::string_view(lower).substr(0, p.size()) == p) {
          cut = p.size();
          if (p != "about" && cleaned.size() > cut && cleaned[cut] == '.') ++cut;
          break;
        }
      }
    }
    if (cut == 0) break;
    size_t i = cut;
    while (i < cleaned.size()) {
      size_t next = i;
      if (!IsJsSpace(NextCodePoint(cleaned, next))) break;
      i = next;
    }
    cleaned.erase(0, i);
  }
  if (cleaned.empty()) return std::nullopt;
  size_t i = 0;
  if (cleaned[i] == '-') ++i;
  const size_t int_start = i;
  while (i < cleaned.size() && IsDigit(cleaned[i])) ++i;
  if (i == int_start) return std::nullopt;
  if (i + 1 < cleaned.size() && cleaned[i] == '.' && IsDigit(cleaned[i + 1])) {
    ++i;
    while (i < cleaned.size() && IsDigit(cleaned[i])) ++i;
  }
  const std::string_view rest = std::string_view(cleaned).substr(i);
  for (size_t k = 0; k < rest.size();) {
    const char32_t cp = NextCodePoint(rest, k);
    if (cp == '\n' || cp == '\r' || cp == 0x2028 || cp == 0x2029) return std::nullopt;
  }
  const double value = std::strtod(cleaned.substr(0, i).c_str(), nullptr);
  if (!std::isfinite(value)) return std::nullopt;
  return NumericCell{value, std::string(JsTrim(rest))};
}

std::string Num(double v) { return json(v).dump(); }

Verdict CheckNumericColumn(Context& ctx, const json& check) {
  const ColumnAssertions a = ReadColumnAssertions(check);
  const bool has_order = a.has_order, desc = a.desc, allow_equal = a.allow_equal;
  const bool unique = a.unique, integer = a.integer, even = a.even, odd = a.odd;
  const bool has_modulus = a.has_modulus, has_min = a.has_min, has_max = a.has_max;
  const double divisor_value = a.divisor, remainder = a.remainder, min = a.min, max = a.max;
  const double min_rows = Member(check, "minRows").is_null() ? 0 : JsNumber(check["minRows"]);

  const auto rows = ParseTableRows(ctx.text, check);
  const bool has_header = Member(check, "hasHeader") != false;
  static const std::vector<std::string> kNoRow;
  const std::vector<std::string>& header = has_header && !rows.empty() ? rows[0] : kNoRow;
  const size_t first_data = has_header ? 1 : 0;

  double column = Member(check, "column").is_null() ? 0 : JsNumber(check["column"]);
  if (!JsIsInteger(column) || column < 0) column = 0;
  size_t index = column > 1e9 ? static_cast<size_t>(1e9) : static_cast<size_t>(column);
  const json& name_value = Member(check, "columnName");
  const bool has_name =
      !name_value.is_null() && !JsTrim(JsString(name_value)).empty();
  std::string label;
  if (has_name) {
    const std::string name(JsTrim(JsString(name_value)));
    const std::string wanted = NormalizeColumnName(name);
    if (!has_header || header.empty()) {
      return {false, "column \"" + Shorten(wanted) + "\" not found: no header row"};
    }
    const auto it = std::find_if(header.begin(), header.end(), [&](const std::string& c) {
      return NormalizeColumnName(c) == wanted;
    });
    if (it == header.end()) {
      return {false, "column \"" + Shorten(wanted) + "\" not found in the header"};
    }
    index = static_cast<size_t>(it - header.begin());
    label = "\"" + Shorten(name) + "\"";
  } else {
    label = "#" + std::to_string(index);
  }

  std::vector<double> values;
  std::vector<size_t> row_numbers;
  std::set<std::string> suffixes;
  std::vector<std::string> violations;
  for (size_t r = first_data; r < rows.size(); ++r) {
    const size_t row_no = r - first_data + 1;
    const auto& cells = rows[r];
    const auto parsed = ParseNumericCell(index < cells.size() ? &cells[index] : nullptr);
    if (!parsed) {
      violations.push_back("row " + std::to_string(row_no) + ": unparseable value");
      continue;
    }
    values.push_back(parsed->value);
    row_numbers.push_back(row_no);
    if (!parsed->suffix.empty()) suffixes.insert(parsed->suffix);
  }
  if (values.empty()) {
    return {false, "column " + label + ": no parseable data row"};
  }
  if (suffixes.size() > 1) {
    return {false, "inconsistent unit suffixes in column " + label};
  }
  if (has_order) {
    for (size_t i = 1; i < values.size(); ++i) {
      const double prev = values[i - 1], cur = values[i];
      const bool bad = desc ? (allow_equal ? cur > prev : cur >= prev)
                            : (allow_equal ? cur < prev : cur <= prev);
      if (bad) violations.push_back("row " + std::to_string(row_numbers[i]) + " out of order");
    }
  }
  if (unique) {
    std::map<double, size_t> counts;
    for (double v : values) ++counts[v == 0 ? 0.0 : v];  // Map keys: SameValueZero
    for (const auto& [v, n] : counts) {
      if (n > 1) violations.push_back("duplicate value " + Num(v));
    }
  }
  for (size_t i = 0; i < values.size(); ++i) {
    const double v = values[i];
    const std::string row = "row " + std::to_string(row_numbers[i]) + ": ";
    if (integer && !JsIsInteger(v)) violations.push_back(row + "not an integer");
    if (even && (!JsIsInteger(v) || std::fmod(v, 2) != 0)) violations.push_back(row + "not even");
    if (odd && (!JsIsInteger(v) || std::fabs(std::fmod(v, 2)) != 1)) {
      violations.push_back(row + "not odd");
    }
    if (has_modulus) {
      if (!JsIsInteger(v)) {
        violations.push_back(row + "not an integer");
      } else {
        const double r = std::fmod(std::fmod(v, divisor_value) + divisor_value, divisor_value);
        if (r != remainder) violations.push_back(row + "wrong remainder");
      }
    }
    if (has_min && std::isfinite(min) && v < min) violations.push_back(row + "below min");
    if (has_max && std::isfinite(max) && v > max) violations.push_back(row + "above max");
  }
  if (std::isfinite(min_rows) && min_rows > 0 && static_cast<double>(values.size()) < min_rows) {
    violations.push_back("only " + std::to_string(values.size()) + " parseable rows");
  }
  if (!violations.empty()) {
    std::string detail = "column " + label + ": " + violations[0];
    if (violations.size() > 1) detail += " (+" + std::to_string(violations.size() - 1) + " more)";
    return {false, detail};
  }
  return {true, "column " + label + ": " + std::to_string(values.size()) + " values satisfy it"};
}

// ---- Line checks --------------------------------------------------------------------------------

// Runs `regex` on `line` within the Run's step budget; a give-up is remembered and reads as no
// match.
bool LineMatches(Context& ctx, const LineRegex& regex, std::string_view line,
                 std::vector<std::optional<std::string_view>>* groups = nullptr) {
  const Regex::Result r = regex.Exec(line, &ctx.line_steps, groups);
  if (r == Regex::Result::kGaveUp) ctx.gave_up = true;
  return r == Regex::Result::kMatch;
}

std::vector<std::string> RowCountViolations(const json& check, size_t lines) {
  std::vector<std::string> v;
  const double exact = Member(check, "exactRows").is_null() ? 0 : JsNumber(check["exactRows"]);
  const double min = Member(check, "minRows").is_null() ? 0 : JsNumber(check["minRows"]);
  const double max = Member(check, "maxRows").is_null() ? kInf : JsNumber(check["maxRows"]);
  const double n = static_cast<double>(lines);
  if (exact > 0 && n != exact) v.push_back("expected exactly " + Num(exact) + " lines, got " + Num(n));
  if (min > 0 && n < min) v.push_back("expected at least " + Num(min) + " lines, got " + Num(n));
  if (max < kInf && n > max) v.push_back("expected at most " + Num(max) + " lines, got " + Num(n));
  return v;
}

Verdict FromViolations(const std::vector<std::string>& violations, std::string ok) {
  if (violations.empty()) return {true, std::move(ok)};
  std::string detail = violations[0];
  if (violations.size() > 1) detail += " (+" + std::to_string(violations.size() - 1) + " more)";
  return {false, detail};
}

Verdict CheckNumericSequence(Context& ctx, const json& check) {
  std::string error;
  const auto line_re = LineRegex::Compile(check.at("linePattern").get<std::string>(), &error);
  const auto value_re = LineRegex::Compile(check.at("valuePattern").get<std::string>(), &error);
  if (!line_re || !value_re) return {false, "invalid pattern: " + error};
  const std::vector<std::string> lines = NonEmptyLines(ctx.text);
  std::vector<std::string> violations;
  std::vector<double> values;
  std::vector<std::optional<std::string_view>> groups;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string n = std::to_string(i + 1);
    if (!LineMatches(ctx, *line_re, lines[i])) violations.push_back("line " + n + " does not match");
    double value = kNaN;
    if (LineMatches(ctx, *value_re, lines[i], &groups)) {
      value = groups.size() > 1 && groups[1] ? JsStringToNumber(*groups[1]) : kNaN;
    }
    if (!std::isfinite(value)) {
      violations.push_back("line " + n + " has no parseable number");
    } else {
      values.push_back(value);
    }
  }
  for (auto& v : RowCountViolations(check, lines.size())) violations.push_back(std::move(v));
  if (values.size() != lines.size()) violations.push_back("some lines have no number");
  const json& order_value = Member(check, "order");
  const std::string order = order_value.is_null() ? "" : JsLower(JsString(order_value));
  if (order == "asc" || order == "desc") {
    for (size_t i = 1; i < values.size(); ++i) {
      if (order == "asc" ? values[i] <= values[i - 1] : values[i] >= values[i - 1]) {
        violations.push_back("order violated at " + Num(values[i]));
      }
    }
  }
  if (check.contains("consecutive")) {
    const double step = JsNumber(check["consecutive"]);
    for (size_t i = 1; i < values.size(); ++i) {
      if (values[i] - values[i - 1] != step) violations.push_back("step violated at " + Num(values[i]));
    }
  }
  // v6 (the bank migration, IF-CN-024): the first value below firstLessThan, the last above
  // lastGreaterThan.
  if (!Member(check, "firstLessThan").is_null() && !values.empty() &&
      !(values.front() < JsNumber(check["firstLessThan"]))) {
    violations.push_back("first value " + Num(values.front()) + " is not below " +
                         Num(JsNumber(check["firstLessThan"])));
  }
  if (!Member(check, "lastGreaterThan").is_null() && !values.empty() &&
      !(values.back() > JsNumber(check["lastGreaterThan"]))) {
    violations.push_back("last value " + Num(values.back()) + " is not above " +
                         Num(JsNumber(check["lastGreaterThan"])));
  }
  return FromViolations(violations, std::to_string(values.size()) + " numeric lines validated");
}

Verdict CheckLineStructure(Context& ctx, const json& check) {
  std::string error;
  const auto line_re = LineRegex::Compile(check.at("linePattern").get<std::string>(), &error);
  std::unique_ptr<LineRegex> odd_re, even_re;
  if (check.contains("oddPattern")) {
    odd_re = LineRegex::Compile(check.at("oddPattern").get<std::string>(), &error);
  }
  if (check.contains("evenPattern")) {
    even_re = LineRegex::Compile(check.at("evenPattern").get<std::string>(), &error);
  }
  if (!line_re) return {false, "invalid pattern: " + error};
  const std::vector<std::string> lines = NonEmptyLines(ctx.text);
  std::vector<std::string> violations = RowCountViolations(check, lines.size());
  const bool has_unique = check.contains("uniqueGroup");
  const double unique_group = has_unique ? JsNumber(check.at("uniqueGroup")) : kNaN;
  const double max_chars = check.contains("maxChars") ? JsNumber(check.at("maxChars")) : kInf;
  const json& indent_counts = Member(check, "indentCounts");
  std::map<double, double> actual_indents;
  std::set<std::string> seen;
  std::vector<std::optional<std::string_view>> groups;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    const size_t line_no = i + 1;
    const std::string n = std::to_string(line_no);
    if (!LineMatches(ctx, *line_re, line, &groups)) {
      violations.push_back("line " + n + " does not match linePattern");
      continue;
    }
    if (indent_counts.is_object()) {
      double indent = 0;
      for (char c : line) {
        if (c == ' ') {
          indent += 1;
        } else if (c == '\t') {
          indent += 4;
        } else {
          break;
        }
      }
      actual_indents[indent] += 1;
    }
    if (odd_re && line_no % 2 == 1 && !LineMatches(ctx, *odd_re, line)) {
      violations.push_back("odd line " + n + " does not match oddPattern");
    }
    if (even_re && line_no % 2 == 0 && !LineMatches(ctx, *even_re, line)) {
      violations.push_back("even line " + n + " does not match evenPattern");
    }
    if (std::isfinite(max_chars) && static_cast<double>(NonSpaceLength(line)) > max_chars) {
      violations.push_back("line " + n + " exceeds " + Num(max_chars) + " characters");
    }
    if (has_unique) {
      std::string key;
      if (JsIsInteger(unique_group) && unique_group >= 0 && unique_group < groups.size() &&
          groups[static_cast<size_t>(unique_group)]) {
        key = std::string(*groups[static_cast<size_t>(unique_group)]);
      }
      if (key.empty()) {
        violations.push_back("line " + n + " has an empty unique group");
      } else if (!seen.insert(key).second) {
        violations.push_back("duplicate \"" + Shorten(key) + "\" at line " + n);
      }
    }
  }
  if (indent_counts.is_object()) {
    double expected_total = 0;
    for (const auto& [key, value] : indent_counts.items()) {
      const double indent = JsStringToNumber(key);
      const double expected = JsNumber(value);
      const auto it = actual_indents.find(indent);
      const double actual = std::isnan(indent) || it == actual_indents.end() ? 0 : it->second;
      if (actual != expected) violations.push_back("indent " + key + ": expected " + Num(expected));
      expected_total += expected;
    }
    if (expected_total != static_cast<double>(lines.size())) {
      violations.push_back("indentCounts cover " + Num(expected_total) + " lines, got " +
                           std::to_string(lines.size()));
    }
  }
  return FromViolations(violations, std::to_string(lines.size()) + " non-empty lines validated");
}

// ---- json_valid ---------------------------------------------------------------------------------

// JSON.parse accepts lone surrogate escapes ("\ud800"); nlohmann does not. Replacing them with
// \ufffd does not change whether the text is JSON.
bool JsonParses(std::string_view text) {
  std::string s;
  s.reserve(text.size());
  bool in_string = false;
  auto unit_at = [&](size_t i) -> long {
    if (i + 6 > text.size() || text[i] != '\\' || text[i + 1] != 'u') return -1;
    long u = 0;
    for (size_t k = i + 2; k < i + 6; ++k) {
      if (!IsHexDigit(text[k])) return -1;
      u = u * 16 + HexValue(text[k]);
    }
    return u;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (!in_string) {
      if (c == '"') in_string = true;
      s += c;
      continue;
    }
    if (c == '"') {
      in_string = false;
      s += c;
    } else if (c == '\\') {
      const long u = unit_at(i);
      if (u >= 0xD800 && u <= 0xDBFF) {
        const long low = unit_at(i + 6);
        if (low >= 0xDC00 && low <= 0xDFFF) {
          s.append(text.substr(i, 12));
          i += 11;
        } else {
          s += "\\ufffd";
          i += 5;
        }
      } else if (u >= 0xDC00 && u <= 0xDFFF) {
        s += "\\ufffd";
        i += 5;
      } else if (i + 1 < text.size()) {
        s += c;
        s += text[++i];
      } else {
        s += c;
      }
    } else {
      s += c;
    }
  }
  return json::accept(s.begin(), s.end());
}

Verdict CheckJsonValid(Context& ctx, const json& check) {
  const json& language_value = Member(check, "language");
  const bool has_language =
      language_value.is_string() && !JsTrim(language_value.get_ref<const std::string&>()).empty();
  const std::string language =
      has_language ? JsLower(JsTrim(language_value.get_ref<const std::string&>())) : "";
  const bool fenced = Member(check, "fenced") == true || has_language;
  struct Target {
    std::string label;
    std::string_view body;
  };
  std::vector<Target> targets;
  const std::string_view text = ctx.text;
  if (fenced) {
    // /```([A-Za-z0-9_+-]*)[ \t]*\r?\n?([\s\S]*?)```/g
    size_t index = 0;
    for (size_t open = text.find("```"); open != std::string_view::npos;) {
      size_t i = open + 3;
      const size_t info_start = i;
      while (i < text.size() && (IsAsciiLetter(text[i]) || IsDigit(text[i]) || text[i] == '_' ||
                                 text[i] == '+' || text[i] == '-')) {
        ++i;
      }
      const std::string info = JsLower(text.substr(info_start, i - info_start));
      while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
      if (i < text.size() && text[i] == '\r') ++i;
      if (i < text.size() && text[i] == '\n') ++i;
      const size_t close = text.find("```", i);
      if (close == std::string_view::npos) break;
      ++index;
      if (!has_language || info == language) {
        targets.push_back({"block #" + std::to_string(index), text.substr(i, close - i)});
      }
      open = text.find("```", close + 3);
    }
    if (targets.empty()) return {false, "no fenced code block to validate"};
  } else {
    targets.push_back({"whole output", text});
  }
  for (const Target& t : targets) {
    const std::string_view body = JsTrim(t.body);
    if (body.empty()) return {false, t.label + ": empty"};
    if (!JsonParses(body)) return {false, t.label + ": invalid JSON"};
  }
  return {true, "valid JSON (" + std::to_string(targets.size()) + " targets)"};
}

// ---- checkRelationalStructure (instruction_checklist_v6: paragraph_structure, sentence_structure,
// section_reference), as bboysky/ajubyte-model-lab 22bb91d1's instructionChecklist.ts has it -----

// Unicode punctuation (General_Category P) or JavaScript white space: /[\p{P}\s]/u on one code
// point. Shared compiled patterns (Regex::CompileJavaScript with the u flag).
bool IsPunctuationOrSpace(char32_t cp) {
  if (IsJsSpace(cp)) return true;
  static const auto punctuation = Regex::CompileJavaScript("^\\p{P}$", "u");
  std::string one;
  AppendUtf8(one, cp);
  return punctuation->Match(one, true) == Regex::Result::kMatch;
}

// s.replace(/[\p{P}\s]/gu, '')
std::string StripPunctuationAndSpace(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    const size_t start = i;
    const char32_t cp = NextCodePoint(s, i);
    if (!IsPunctuationOrSpace(cp)) out.append(s.substr(start, i - start));
  }
  return out;
}

size_t CodePoints(std::string_view s) {
  size_t n = 0;
  for (size_t i = 0; i < s.size(); ++n) NextCodePoint(s, i);
  return n;
}

bool IsSentenceEnd(char32_t cp) {
  return cp == U'。' || cp == U'！' || cp == U'？' || cp == U'!' || cp == U'?';
}

// s.match(/[^。！？!?]+[。！？!?]/gu)?.map(v => v.trim()) ?? []: a run of other characters and one
// terminator; doubled terminators and an unterminated tail are not sentences.
std::vector<std::string> SplitSentences(std::string_view s) {
  std::vector<std::string> sentences;
  size_t run = std::string_view::npos;
  for (size_t i = 0; i < s.size();) {
    const size_t start = i;
    const char32_t cp = NextCodePoint(s, i);
    if (!IsSentenceEnd(cp)) {
      if (run == std::string_view::npos) run = start;
      continue;
    }
    if (run != std::string_view::npos) {
      sentences.emplace_back(JsTrim(s.substr(run, i - run)));
      run = std::string_view::npos;
    }
  }
  return sentences;
}

// /[。！？!?]\s*$/.test(s)
bool EndsWithTerminator(std::string_view s) {
  size_t end = s.size();
  while (end > 0) {
    size_t k = end - 1;
    while (k > 0 && (static_cast<unsigned char>(s[k]) & 0xC0) == 0x80) --k;
    size_t at = k;
    const char32_t cp = NextCodePoint(s, at);
    if (IsJsSpace(cp)) {
      end = k;
      continue;
    }
    return IsSentenceEnd(cp);
  }
  return false;
}

bool OnlyHan(std::string_view s) {  // /^\p{Script=Han}+$/u
  static const auto han = Regex::CompileJavaScript("^\\p{Script=Han}+$", "u");
  return han->Match(s, true) == Regex::Result::kMatch;
}

bool HasNonHanCharacter(std::string_view s) {  // /[^\p{Script=Han}\p{P}\s]/u
  static const auto other = Regex::CompileJavaScript("[^\\p{Script=Han}\\p{P}\\s]", "u");
  return other->Match(s, false) == Regex::Result::kMatch;
}


Verdict CheckParagraphStructure(Context& ctx, const json& check) {
  const json& starts = check.at("starts");
  const double max_chars = JsNumber(check.at("maxSentenceChars"));
  const double per_paragraph = JsNumber(check.at("sentencesPerParagraph"));
  const std::string text = NormalizeNewlines(JsTrim(ctx.text));
  const std::vector<std::string_view> paragraphs = SplitParagraphs(text);
  if (paragraphs.size() != starts.size()) return {false, "Incorrect paragraph count"};
  for (size_t i = 0; i < paragraphs.size(); ++i) {
    const std::string_view p = paragraphs[i];
    const std::string at = "Paragraph " + std::to_string(i + 1) + ": ";
    const std::string start = starts[i].is_string() ? starts[i].get<std::string>()
                                                    : JsString(starts[i]);
    if (JsTrim(p).substr(0, start.size()) != start) return {false, at + "incorrect first word"};
    const std::vector<std::string> sentences = SplitSentences(p);
    if (static_cast<double>(sentences.size()) != per_paragraph || !EndsWithTerminator(p)) {
      return {false, at + "incorrect sentence structure"};
    }
    for (const std::string& s : sentences) {
      if (static_cast<double>(CodePoints(StripPunctuationAndSpace(s))) > max_chars) {
        return {false, at + "sentence too long"};
      }
    }
    if (HasNonHanCharacter(p)) return {false, at + "disallowed character"};
  }
  return {true, "Structural relations satisfied"};
}

Verdict CheckSentenceStructure(Context& ctx, const json& check) {
  const double count = JsNumber(check.at("count"));
  const double han_chars = JsNumber(check.at("hanChars"));
  const std::string_view text = JsTrim(ctx.text);
  std::vector<std::string_view> parts;  // text.split('。')
  for (size_t start = 0;;) {
    const size_t at = text.find("。", start);
    parts.push_back(text.substr(start, at == std::string_view::npos ? at : at - start));
    if (at == std::string_view::npos) break;
    start = at + std::string_view("。").size();
  }
  const std::string_view last = parts.back();
  parts.pop_back();
  if (!JsTrim(last).empty() || static_cast<double>(parts.size()) != count) {
    return {false, "Expected period-terminated sentences"};
  }
  std::vector<std::string> content;
  for (std::string_view part : parts) content.push_back(StripPunctuationAndSpace(part));
  for (const std::string& s : content) {
    if (!OnlyHan(s) || static_cast<double>(CodePoints(s)) != han_chars) {
      return {false, "Incorrect Han character count or non-Han content"};
    }
  }
  const json& suffix = Member(check, "lastSuffix");
  if (Truthy(suffix)) {
    const std::string want = suffix.is_string() ? suffix.get<std::string>() : JsString(suffix);
    const std::string& final_sentence = content.empty() ? std::string() : content.back();
    if (content.empty() || final_sentence.size() < want.size() ||
        final_sentence.compare(final_sentence.size() - want.size(), want.size(), want) != 0) {
      return {false, "Incorrect final sentence suffix"};
    }
  }
  if (Member(check, "secondContainsFourthFirst") == true) {
    std::string first = std::string(1, '\0');  // [...content[3] ?? ''][0] ?? '\0'
    if (content.size() > 3 && !content[3].empty()) {
      size_t i = 0;
      NextCodePoint(content[3], i);
      first = content[3].substr(0, i);
    }
    if (content.size() < 2 || content[1].find(first) == std::string::npos) {
      return {false, "Sentence 2 does not contain sentence 4 first character"};
    }
  }
  return {true, "Structural relations satisfied"};
}

bool IsLineTerminator(char32_t cp) {
  return cp == '\n' || cp == '\r' || cp == 0x2028 || cp == 0x2029;
}

struct Heading {
  size_t index;   // where the match starts
  size_t length;  // of the whole match
  char letter;
  std::string title;  // the second group
};

// [...text.matchAll(/^([ABC])[：:]([^\r\n]+)\r?$/gm)]: a line (after \n, \r, U+2028 or U+2029)
// starting A, B or C, a colon, then the rest of the line.
std::vector<Heading> FindHeadings(std::string_view text) {
  std::vector<Heading> headings;
  bool line_start = true;
  for (size_t i = 0; i < text.size();) {
    if (line_start && (text[i] == 'A' || text[i] == 'B' || text[i] == 'C')) {
      size_t j = i + 1;
      if (text.substr(j, 3) == "：") {
        j += 3;
      } else if (j < text.size() && text[j] == ':') {
        j += 1;
      } else {
        j = std::string_view::npos;
      }
      if (j != std::string_view::npos) {
        size_t end = j;
        while (end < text.size() && text[end] != '\r' && text[end] != '\n') ++end;
        if (end > j) {
          size_t match_end = end;
          if (end < text.size() && text[end] == '\r' &&
              (end + 1 == text.size() || text[end + 1] == '\n')) {
            match_end = end + 1;
          }
          headings.push_back({i, match_end - i, text[i], std::string(text.substr(j, end - j))});
          i = match_end;
          line_start = false;
          continue;
        }
      }
    }
    const char32_t cp = NextCodePoint(text, i);
    line_start = IsLineTerminator(cp);
  }
  return headings;
}

struct Fence {
  size_t index, length;
  std::string_view inner;  // the first group
};

// /```[^\r\n]*\r?\n([\s\S]*?)\r?\n```/g
std::vector<Fence> FindFences(std::string_view text) {
  std::vector<Fence> fences;
  for (size_t q = text.find("```"); q != std::string_view::npos; q = text.find("```", q)) {
    size_t j = q + 3;
    while (j < text.size() && text[j] != '\r' && text[j] != '\n') ++j;
    if (j < text.size() && text[j] == '\r') ++j;
    if (j >= text.size() || text[j] != '\n') {
      ++q;
      continue;
    }
    const size_t inner = j + 1;
    size_t close = std::string_view::npos, end = 0;
    for (size_t k = inner; k < text.size(); ++k) {
      if (text.substr(k, 5) == "\r\n```") {
        close = k;
        end = k + 5;
        break;
      }
      if (text.substr(k, 4) == "\n```") {
        close = k;
        end = k + 4;
        break;
      }
    }
    if (close == std::string_view::npos) {
      ++q;
      continue;
    }
    fences.push_back({q, end - q, text.substr(inner, close - inner)});
    q = end;
  }
  return fences;
}

Verdict CheckSectionReference(Context& ctx) {
  const std::string_view text = ctx.text;
  const std::vector<Heading> headings = FindHeadings(text);
  std::string letters;
  for (const Heading& h : headings) letters += h.letter;
  const size_t first = headings.empty() ? text.size() : headings[0].index;
  if (letters != "ABC" || !JsTrim(text.substr(0, first)).empty()) {
    return {false, "Expected ordered A/B/C headings without preface"};
  }
  std::vector<std::string> bodies;
  for (size_t i = 0; i < headings.size(); ++i) {
    const size_t from = headings[i].index + headings[i].length;
    const size_t to = i + 1 < headings.size() ? headings[i + 1].index : text.size();
    bodies.emplace_back(JsTrim(text.substr(from, to > from ? to - from : 0)));
  }
  const std::vector<Fence> blocks = FindFences(text);
  const auto two_lines = [](std::string_view inner) {  // .split(/\r?\n/).length === 2
    const size_t nl = inner.find('\n');
    return nl != std::string_view::npos && inner.find('\n', nl + 1) == std::string_view::npos;
  };
  if (blocks.size() != 1 ||
      bodies[1].find(text.substr(blocks[0].index, blocks[0].length)) == std::string::npos ||
      !two_lines(blocks[0].inner)) {
    return {false, "B must contain exactly one two-line code block"};
  }
  std::vector<std::string> prose;
  std::vector<std::vector<std::string>> sentences;
  for (const std::string& body : bodies) {
    std::string without;
    size_t at = 0;
    for (const Fence& f : FindFences(body)) {
      without.append(body, at, f.index - at);
      at = f.index + f.length;
    }
    without.append(body, at, std::string::npos);
    prose.emplace_back(JsTrim(without));
    sentences.push_back(SplitSentences(prose.back()));
  }
  for (size_t i = 0; i < prose.size(); ++i) {
    if (sentences[i].size() != 2 || !EndsWithTerminator(prose[i]) ||
        prose[i].find("```") != std::string::npos) {
      return {false, "Each section requires two completed prose sentences"};
    }
  }
  if (prose[0].find(std::string(JsTrim(headings[2].title))) == std::string::npos) {
    return {false, "A does not reference the actual C title"};
  }
  if (std::find(sentences[2].begin(), sentences[2].end(), sentences[0][0]) == sentences[2].end()) {
    return {false, "C does not repeat the actual first sentence of A"};
  }
  return {true, "Structural relations satisfied"};
}

Verdict CheckConstraint(Context& ctx, const std::string& type, const json& check) {
  if (type == "exact_count") return CheckExactCount(ctx, check);
  if (type == "paragraph_count") return CheckParagraphCount(ctx, check);
  if (type == "sentence_count") return CheckSentenceCount(ctx, check);
  if (type == "inclusion") return CheckInclusion(ctx, check);
  if (type == "ordered_inclusion") return CheckOrderedInclusion(ctx, check);
  if (type == "exclusion") return CheckExclusion(ctx, check);
  if (type == "english_free") return CheckEnglishFree(ctx);
  if (type == "length") return CheckLength(ctx, check);
  if (type == "format") return CheckFormat(ctx, check);
  if (type == "exact_order") return CheckExactOrder(ctx, check);
  if (type == "exact_word") return CheckExactWord(ctx, check);
  if (type == "conflict_resolution") return CheckConflictResolution(ctx, check);
  if (type == "numeric_column") return CheckNumericColumn(ctx, check);
  if (type == "numeric_sequence") return CheckNumericSequence(ctx, check);
  if (type == "line_structure") return CheckLineStructure(ctx, check);
  if (type == "json_valid") return CheckJsonValid(ctx, check);
  if (type == "paragraph_structure") return CheckParagraphStructure(ctx, check);
  if (type == "sentence_structure") return CheckSentenceStructure(ctx, check);
  if (type == "section_reference") return CheckSectionReference(ctx);
  return {false, "unknown constraint type"};  // unreachable after validation
}

// This grader's zx-bench score as a Grade (graders/zxbench/common.h).
Grade MakeGrade(int zx_score, json evidence, std::string reason) {
  return zx::ZxGrade(zx_score, std::move(evidence), std::move(reason), kZxEvaluator);
}

class ZxInstructionChecklistGrader final : public Grader {
 public:
  std::string_view name() const override { return kName; }
  std::string_view version() const override { return kVersion; }
  std::string_view description() const override {
    return "zx-bench instruction_checklist: rule constraints (regex formats, counts, inclusions, "
           "table columns, line structure), scored as zx-bench scores them";
  }

  void CheckSpec(const json& spec, const SourceLocation& where) const override {
    if (const std::string problem = RequirementsProblem(spec); !problem.empty()) {
      throw Error(where.ToString() + ": " + std::string(kName) + ": " + problem);
    }
  }

  Grade Run(const json& spec, const Answer& answer, const GradeContext& /*context*/) const override {
    try {
      return Evaluate(spec, answer);
    } catch (const std::exception& e) {  // allocation failure: not the model's fault
      Grade grade = MakeGrade(0, json::object(), std::string("grader failed: ") + e.what());
      grade.status = GradeStatus::kEnvError;
      return grade;
    }
  }

 private:
  static Grade Evaluate(const json& spec, const Answer& answer) {
    const std::string output = ToWellFormedUtf8(answer.text);
    json evidence = json::object();
    if (JsTrim(output).empty()) {
      Grade grade = MakeGrade(0, std::move(evidence), "empty output");
      grade.status = GradeStatus::kNoAnswer;
      return grade;
    }
    if (const std::string problem = RequirementsProblem(spec); !problem.empty()) {
      Grade grade = MakeGrade(0, std::move(evidence), "malformed requirements: " + problem);
      grade.status = GradeStatus::kEnvError;  // zx-bench: environmentError, unmeasured
      return grade;
    }
    const json& constraints = spec.at("requirements").at("constraints");

    Context ctx{output, std::nullopt};
    int passed = 0;
    bool critical_failed = false;
    json results = json::array();
    for (const json& c : constraints) {
      const std::string& type = c.at("type").get_ref<const std::string&>();
      static const json kEmpty = json::object();
      const Verdict v = CheckConstraint(ctx, type, c.contains("check") && c["check"].is_object()
                                                       ? c["check"]
                                                       : kEmpty);
      if (v.passed) ++passed;
      const bool critical = Member(c, "critical") == true;
      if (critical && !v.passed) critical_failed = true;
      json row = {{"id", c["id"]}, {"type", type}, {"passed", v.passed}, {"detail", v.detail}};
      if (critical) row["critical"] = true;
      results.push_back(std::move(row));
    }
    const size_t total = constraints.size();

    // formatValidScore (responseState.ts), then the truncation penalty of step 6.
    int format = answer.truncated ? 60 : 100;
    const json& scoring = Member(spec, "scoring");
    const bool partial_credit = Member(scoring, "partialCredit") != false;
    const int compliance =
        partial_credit ? JsRound(static_cast<double>(passed) /
                                 static_cast<double>(std::max<size_t>(total, 1)) * 100)
                       : (static_cast<size_t>(passed) == total ? 100 : 0);
    if (answer.truncated) format = JsRound(format * 0.7);
    // weightedScoreByCoverage([[format, 0.2], [compliance, 0.8]]): both axes measured.
    double sum = 0, weight = 0;
    sum += format * 0.2;
    weight += 0.2;
    sum += compliance * 0.8;
    weight += 0.8;
    int total_score = JsRound(sum / weight);
    if (critical_failed) total_score = std::min(total_score, 60);

    evidence["format_valid"] = format;
    evidence["instruction_compliance"] = compliance;
    evidence["constraints"] = std::move(results);
    evidence["passed"] = passed;
    evidence["total"] = total;
    if (ctx.gave_up) evidence["regex_budget_exhausted"] = true;
    std::string reason = std::to_string(passed) + "/" + std::to_string(total) + " constraints met";
    if (!partial_credit) reason += " (all or nothing)";
    if (answer.truncated) reason += " (output truncated: format 42)";
    if (critical_failed) reason += ", a critical constraint failed (capped at 60)";
    if (ctx.gave_up) reason += ", a pattern exhausted evalrun's regex budget (counted as failed)";
    return MakeGrade(total_score, std::move(evidence), std::move(reason));
  }
};

}  // namespace

std::unique_ptr<Grader> MakeZxInstructionChecklistGrader() {
  return std::make_unique<ZxInstructionChecklistGrader>();
}

}  // namespace evalrun
