// zx-bench's json_atomic_fields grader, reproduced (docs/zx-bench.md, "Graders: where evalrun
// knowingly differs"). Reads the whole bank entry as its spec: requirements.expected (the frozen
// gold document), requirements.requiredFields, requirements.fieldTypes,
// requirements.allowAdditionalFields; entries without requirements.expected use the older
// contract where every other requirements key is a "path": value pair.
//
// Source read: packages/core/src/evaluators/dataExtraction.ts of suncityldp/zx-bench, evaluator
// version json_atomic_v3 (compatible with json_atomic_v2). Score, 0-100:
//   round(0.2 format + 0.4 fields + 0.2 completeness + 0.1 schema + 0.1 discipline)
// format 100 when a JSON value other than null is found (json fence, else the whole output, else
// the first '{'/'[' to the last '}'/']'), otherwise the total is 0; completeness is halved when
// the output was cut by max_tokens.
//
// Pure and thread-safe; Run never throws and does linear work in the output size.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/js_value.h"
#include "core/error.h"
#include "graders/zxbench/factories.h"
#include "graders/framework/grader.h"
#include "graders/zxbench/common.h"

namespace evalrun {
namespace {

using js::IsJsSpace;
using js::JsRound;
using js::JsTrim;
using zx::Member;
using js::NextCodePoint;
using js::ToWellFormedUtf8;

using nlohmann::json;

constexpr std::string_view kName = "zxbench:json_atomic_fields";
constexpr std::string_view kVersion = "1";
constexpr std::string_view kZxEvaluator = "json_atomic_v3";
constexpr std::string_view kRoot = "$";  // ROOT_PATH: the whole document

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// ---- JSON as JavaScript sees it ----------------------------------------------------------------

bool IsHex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// The code unit of a "\uXXXX" escape at `i` (pointing at the backslash), or -1.
long EscapedUnit(std::string_view s, size_t i) {
  if (i + 6 > s.size() || s[i] != '\\' || s[i + 1] != 'u') return -1;
  long unit = 0;
  for (size_t k = i + 2; k < i + 6; ++k) {
    if (!IsHex(s[k])) return -1;
    unit = unit * 16 + (s[k] <= '9' ? s[k] - '0' : (s[k] | 0x20) - 'a' + 10);
  }
  return unit;
}

// Where JSON.parse and nlohmann read the same text differently, rewrites it so nlohmann gives
// what JavaScript would compare equal: a lone surrogate escape ("\ud800", which nlohmann
// rejects) becomes "\ufffd" (a gold string never holds one, so equality is unchanged), and the
// integer -0 (which nlohmann reads as 0) becomes -0.0, keeping the sign Object.is sees. Neither
// rewrite changes whether the text is valid JSON.
std::string JavaScriptCompatible(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  bool in_string = false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (!in_string) {
      if (c == '"') in_string = true;
      if (c == '-' && i + 1 < s.size() && s[i + 1] == '0' &&
          (i + 2 >= s.size() || !(IsDigit(s[i + 2]) || s[i + 2] == '.' || s[i + 2] == 'e' ||
                                  s[i + 2] == 'E'))) {
        out += "-0.0";
        ++i;
        continue;
      }
      out += c;
      continue;
    }
    if (c == '"') {
      in_string = false;
    } else if (c == '\\') {
      const long unit = EscapedUnit(s, i);
      if (unit >= 0xD800 && unit <= 0xDBFF) {
        const long low = EscapedUnit(s, i + 6);
        if (low >= 0xDC00 && low <= 0xDFFF) {
          out.append(s.substr(i, 12));
          i += 11;
        } else {
          out += "\\ufffd";
          i += 5;
        }
        continue;
      }
      if (unit >= 0xDC00 && unit <= 0xDFFF) {
        out += "\\ufffd";
        i += 5;
        continue;
      }
      if (i + 1 < s.size()) {  // any other escape: copy it whole so \" does not end the string
        out += c;
        out += s[++i];
        continue;
      }
    }
    out += c;
  }
  return out;
}

// JSON.parse; nullopt on a syntax error. nlohmann's grammar is RFC 8259, as JSON.parse's is.
std::optional<json> JsonParse(std::string_view raw) {
  const std::string text = JavaScriptCompatible(raw);
  json value = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) return std::nullopt;
  return value;
}

// Whether JSON.parse would accept `raw`, without building the value.
bool JsonAccepts(std::string_view raw) {
  const std::string text = JavaScriptCompatible(raw);
  return json::accept(text.begin(), text.end());
}

bool IsRecord(const json* v) { return v != nullptr && v->is_object(); }

// jsonType: "undefined" for a missing value (nullptr).
std::string_view JsonType(const json* v) {
  if (v == nullptr) return "undefined";
  switch (v->type()) {
    case json::value_t::null: return "null";
    case json::value_t::array: return "array";
    case json::value_t::object: return "object";
    case json::value_t::string: return "string";
    case json::value_t::boolean: return "boolean";
    default: return "number";
  }
}

// JavaScript's typeof for JSON values (null and arrays are "object").
std::string_view TypeOf(const json* v) {
  if (v == nullptr) return "undefined";
  if (v->is_null() || v->is_array() || v->is_object()) return "object";
  return JsonType(v);
}

// parseInt(part, 10) used as an array index: nullopt for NaN and for indices no array has.
std::optional<size_t> ParseIntIndex(std::string_view part) {
  size_t i = 0;
  while (i < part.size()) {
    size_t next = i;
    if (!IsJsSpace(NextCodePoint(part, next))) break;
    i = next;
  }
  bool negative = false;
  if (i < part.size() && (part[i] == '+' || part[i] == '-')) negative = part[i++] == '-';
  const size_t digits = i;
  size_t value = 0;
  bool huge = false;
  while (i < part.size() && part[i] >= '0' && part[i] <= '9') {
    if (value > 1'000'000'000'000ULL) huge = true;
    value = value * 10 + static_cast<size_t>(part[i] - '0');
    ++i;
  }
  if (i == digits) return std::nullopt;
  if (negative && value != 0) return std::nullopt;  // arr[-1] is undefined; -0 is index 0
  if (huge) return std::nullopt;
  return value;
}

// getNestedValue: nullptr for undefined.
const json* GetNestedValue(const json* root, std::string_view path) {
  if (path == kRoot) return root;
  const json* current = root;
  for (std::string_view part : zx::JsSplit(path, '.')) {
    if (current == nullptr || current->is_null()) return nullptr;
    if (current->is_array()) {
      const auto index = ParseIntIndex(part);
      if (!index || *index >= current->size()) return nullptr;
      current = &(*current)[*index];
    } else if (current->is_object()) {
      const auto it = current->find(std::string(part));
      if (it == current->end()) return nullptr;
      current = &*it;
    } else {
      return nullptr;
    }
  }
  return current;
}

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// hasNestedPath: own keys and in-range array indices only.
bool HasNestedPath(const json* root, std::string_view path) {
  if (path == kRoot) return root != nullptr;
  const json* current = root;
  for (std::string_view part : zx::JsSplit(path, '.')) {
    if (current != nullptr && current->is_array()) {
      if (!AllDigits(part)) return false;
      const auto index = ParseIntIndex(part);  // Number(part) for digits
      if (!index || *index >= current->size()) return false;
      current = &(*current)[*index];
    } else if (IsRecord(current)) {
      const auto it = current->find(std::string(part));
      if (it == current->end()) return false;
      current = &*it;
    } else {
      return false;
    }
  }
  return true;
}

// flattenLeaves: (path, value) for every leaf of the gold document; an empty array or object is
// a leaf; the root alone is "$".
void FlattenLeaves(const json& value, const std::string& path,
                   std::vector<std::pair<std::string, const json*>>& out) {
  const auto child = [&](const std::string& key) {
    return path == kRoot ? key : path + "." + key;
  };
  if (value.is_array() && !value.empty()) {
    for (size_t i = 0; i < value.size(); ++i) FlattenLeaves(value[i], child(std::to_string(i)), out);
  } else if (value.is_object() && !value.empty()) {
    for (const auto& [key, item] : value.items()) FlattenLeaves(item, child(key), out);
  } else {
    out.emplace_back(path, &value);
  }
}

bool SameJsonShape(const json* actual, const json& expected) {
  if (expected.is_array()) {
    if (actual == nullptr || !actual->is_array() || actual->size() != expected.size()) return false;
    for (size_t i = 0; i < expected.size(); ++i) {
      if (!SameJsonShape(&(*actual)[i], expected[i])) return false;
    }
    return true;
  }
  if (expected.is_object()) {
    if (!IsRecord(actual) || actual->size() != expected.size()) return false;
    for (const auto& [key, item] : expected.items()) {
      const auto it = actual->find(key);
      if (it == actual->end() || !SameJsonShape(&*it, item)) return false;
    }
    return true;
  }
  return actual == nullptr || !(actual->is_array() || actual->is_object());
}

// compareFrozenValue: numbers must be JSON numbers and Object.is-equal (so 0 and -0 differ);
// everything else is ===, which an array or object never satisfies.
bool CompareFrozenValue(const json* actual, const json& expected) {
  if (expected.is_number()) {
    if (actual == nullptr || !actual->is_number()) return false;
    const double a = actual->get<double>(), e = expected.get<double>();
    return std::isfinite(a) && a == e && std::signbit(a) == std::signbit(e);
  }
  if (actual == nullptr) return false;
  if (expected.is_string()) return actual->is_string() && *actual == expected;
  if (expected.is_boolean()) return actual->is_boolean() && *actual == expected;
  if (expected.is_null()) return actual->is_null();
  return false;
}

// compareValues (entries without requirements.expected).
bool CompareValues(const json* actual, const json& expected) {
  if (expected.is_null()) {
    return actual == nullptr || actual->is_null() || (actual->is_string() && actual->empty());
  }
  if (actual == nullptr) return false;
  if (expected.is_number()) return actual->is_number() && actual->get<double>() == expected.get<double>();
  if (expected.is_boolean()) return actual->is_boolean() && *actual == expected;
  if (expected.is_string() && actual->is_string()) {
    return JsTrim(actual->get_ref<const std::string&>()) ==
           JsTrim(expected.get_ref<const std::string&>());
  }
  return false;
}

// ---- Finding the JSON (extractJson) -------------------------------------------------------------

// The first of: the first ``` fence (an optional "json" right after it), trimmed; the whole
// output, trimmed; the first '{' or '[' to the last matching closer. A parse that gives null
// counts as "no JSON found", as in zx-bench.
std::optional<json> ExtractJson(std::string_view content) {
  // /```(?:json)?\s*([\s\S]*?)```/: the fence is the first ``` that has another ``` after it.
  const size_t open = content.find("```");
  if (open != std::string_view::npos) {
    const size_t close = content.find("```", open + 3);
    if (close != std::string_view::npos) {
      size_t start = open + 3;
      if (content.substr(start, 4) == "json") start += 4;
      if (auto v = JsonParse(JsTrim(content.substr(start, close - start)))) {
        if (v->is_null()) return std::nullopt;
        return v;
      }
    }
  }
  if (auto v = JsonParse(JsTrim(content))) {
    if (v->is_null()) return std::nullopt;
    return v;
  }
  const size_t first_object = content.find('{');
  const size_t first_array = content.find('[');
  size_t start = std::string_view::npos;
  char closer = '}';
  if (first_object != std::string_view::npos &&
      (first_array == std::string_view::npos || first_object < first_array)) {
    start = first_object;
  } else if (first_array != std::string_view::npos) {
    start = first_array;
    closer = ']';
  }
  if (start != std::string_view::npos) {
    const size_t end = content.rfind(closer);
    if (end != std::string_view::npos && end > start) {
      if (auto v = JsonParse(content.substr(start, end - start + 1))) {
        if (v->is_null()) return std::nullopt;
        return v;
      }
    }
  }
  return std::nullopt;
}

// checkStrictJsonOnly (v3): the whole output, trimmed, is JSON.
int StrictJsonOnly(std::string_view output) {
  const std::string_view trimmed = JsTrim(output);
  if (trimmed.empty()) return 0;
  return JsonAccepts(trimmed) ? 100 : 0;
}

// checkOutputDiscipline (v2): also accepts one ```json fence around everything.
int OutputDiscipline(std::string_view output) {
  const std::string_view trimmed = JsTrim(output);
  if (trimmed.empty()) return 0;
  if (trimmed.size() >= 10 && trimmed.substr(trimmed.size() - 3) == "```" &&
      trimmed.substr(0, 3) == "```") {
    std::string tag(trimmed.substr(3, 4));
    for (char& c : tag) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    if (tag == "json") return 100;
  }
  return JsonAccepts(trimmed) ? 100 : 0;
}

// A value for the evidence: containers by size only, so a hostile, deeply nested output is
// never copied (copying and printing nlohmann values recurse).
json Shown(const json* v) {
  if (v == nullptr) return "<missing>";
  if (v->is_array()) return "<array of " + std::to_string(v->size()) + ">";
  if (v->is_object()) return "<object of " + std::to_string(v->size()) + " keys>";
  return *v;
}

bool IsControlKey(const std::string& key) {
  for (const char* k : {"expected", "requiredFields", "fieldTypes", "outputPolicy", "format",
                        "crossFieldRules", "allowAdditionalFields"}) {
    if (key == k) return true;
  }
  return false;
}

// This grader's zx-bench score as a Grade (graders/zxbench/common.h).
Grade MakeGrade(int zx_score, nlohmann::json evidence, std::string reason) {
  return zx::ZxGrade(zx_score, std::move(evidence), std::move(reason), kZxEvaluator);
}

class ZxJsonAtomicFieldsGrader final : public Grader {
 public:
  std::string_view name() const override { return kName; }
  std::string_view version() const override { return kVersion; }
  std::string_view description() const override {
    return "zx-bench json_atomic_fields: JSON leaf fields, completeness, types and discipline, "
           "scored as zx-bench scores it";
  }

  void CheckSpec(const json& spec, const SourceLocation& where) const override {
    const std::string prefix = where.ToString() + ": " + std::string(kName) + ": ";
    if (!spec.is_object()) {
      throw Error(prefix + "the spec must be the zx-bench entry (a JSON object)");
    }
    const auto& requirements = Member(spec, "requirements");
    if (!requirements.is_null() && !requirements.is_object()) {
      throw Error(prefix + "'requirements' must be an object (requirements.expected holds the "
                           "gold document)");
    }
  }

  Grade Run(const json& spec, const Answer& answer, const GradeContext& /*context*/) const override {
    const std::string output = ToWellFormedUtf8(answer.text);
    json evidence = json::object();
    if (JsTrim(output).empty()) {
      Grade grade = MakeGrade(0, std::move(evidence), "empty output");
      grade.status = GradeStatus::kNoAnswer;
      return grade;
    }
    const auto parsed = ExtractJson(output);
    if (!parsed) {
      evidence["format_valid"] = 0;
      return MakeGrade(0, std::move(evidence), "no JSON value found in the output");
    }
    const json* root = &*parsed;
    const int format = 100;

    const auto& requirements = Member(spec, "requirements");
    const bool v3 = requirements.is_object() && requirements.contains("expected");
    const json& expected = Member(requirements, "expected");
    std::vector<std::pair<std::string, const json*>> fields;
    if (v3) {
      FlattenLeaves(expected, std::string(kRoot), fields);
    } else if (requirements.is_object()) {
      for (const auto& [key, value] : requirements.items()) {
        if (!IsControlKey(key)) fields.emplace_back(key, &value);
      }
    }
    if (fields.empty()) {
      const int discipline = OutputDiscipline(output);
      evidence["format_valid"] = format;
      evidence["output_discipline"] = discipline;
      return MakeGrade(JsRound(format * 0.8 + discipline * 0.2), std::move(evidence),
                       "the entry declares no fields: format and discipline only");
    }

    // Field accuracy.
    int correct = 0;
    json mismatches = json::array();
    for (const auto& [path, gold] : fields) {
      const json* actual = path == kRoot ? root : GetNestedValue(root, path);
      if (v3 ? CompareFrozenValue(actual, *gold) : CompareValues(actual, *gold)) {
        ++correct;
      } else if (mismatches.size() < 5) {
        mismatches.push_back({{"path", path}, {"expected", *gold}, {"got", Shown(actual)}});
      }
    }
    const int field_accuracy =
        JsRound(static_cast<double>(correct) / static_cast<double>(fields.size()) * 100);

    // Completeness.
    std::vector<std::string> required;
    const auto& required_fields = Member(requirements, "requiredFields");
    if (v3 && required_fields.is_array()) {
      for (const auto& f : required_fields) {
        if (f.is_string()) required.push_back(f.get<std::string>());
      }
    } else {
      for (const auto& field : fields) required.push_back(field.first);
    }
    json missing = json::array();
    for (const auto& path : required) {
      if (!HasNestedPath(root, path)) missing.push_back(path);
    }
    int completeness = JsRound(static_cast<double>(required.size() - missing.size()) /
                               static_cast<double>(std::max<size_t>(1, required.size())) * 100);

    // Schema: declared types (v3) or the gold values' typeof (v2).
    int type_errors = 0, type_checks = 0;
    const auto& field_types = Member(requirements, "fieldTypes");
    if (v3 && field_types.is_object()) {
      for (const auto& [path, type] : field_types.items()) {
        ++type_checks;
        const json* actual = path == kRoot ? root : GetNestedValue(root, path);
        if (!HasNestedPath(root, path) || !type.is_string() ||
            JsonType(actual) != type.get_ref<const std::string&>()) {
          ++type_errors;
        }
      }
    } else {
      for (const auto& [path, gold] : fields) {
        const json* actual = path == kRoot ? root : GetNestedValue(root, path);
        if (actual != nullptr && !gold->is_null() && TypeOf(actual) != TypeOf(gold)) ++type_errors;
        ++type_checks;
      }
    }
    const int type_score = JsRound(static_cast<double>(type_checks - type_errors) /
                                   static_cast<double>(std::max(1, type_checks)) * 100);
    const bool exact_shape = v3 && Member(requirements, "allowAdditionalFields") == false;
    const bool shape_matches = !exact_shape || SameJsonShape(root, expected);
    const int schema = exact_shape && !shape_matches ? 0 : type_score;

    // Discipline.
    int discipline = v3 ? StrictJsonOnly(output) : OutputDiscipline(output);
    if (exact_shape && !shape_matches) discipline = 0;

    if (answer.truncated) completeness = JsRound(completeness * 0.5);

    const int total = JsRound(format * 0.20 + field_accuracy * 0.40 + completeness * 0.20 +
                              schema * 0.10 + discipline * 0.10);
    evidence["format_valid"] = format;
    evidence["field_accuracy"] = field_accuracy;
    evidence["completeness"] = completeness;
    evidence["schema_compliance"] = schema;
    evidence["output_discipline"] = discipline;
    evidence["fields_correct"] = correct;
    evidence["fields_total"] = fields.size();
    if (!mismatches.empty()) evidence["mismatches"] = std::move(mismatches);
    if (!missing.empty()) evidence["missing"] = missing;
    if (type_errors > 0) evidence["type_errors"] = type_errors;
    if (!shape_matches) evidence["shape"] = "object keys or array lengths differ from the gold";

    std::string reason = std::to_string(correct) + "/" + std::to_string(fields.size()) +
                         " fields correct";
    if (!missing.empty()) reason += ", " + std::to_string(missing.size()) + " required missing";
    if (!shape_matches) reason += ", shape differs from the gold";
    if (discipline == 0) reason += ", output is not only JSON";
    if (answer.truncated) reason += " (output truncated: completeness halved)";
    return MakeGrade(total, std::move(evidence), std::move(reason));
  }
};

}  // namespace

std::unique_ptr<Grader> MakeZxJsonAtomicFieldsGrader() {
  return std::make_unique<ZxJsonAtomicFieldsGrader>();
}

}  // namespace evalrun
