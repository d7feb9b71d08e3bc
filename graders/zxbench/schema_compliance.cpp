// zx-bench's schema_compliance (structured_output: SO-CN-* entries), as
// packages/core/src/evaluators/structuredOutput.ts v6 (a5f6a19f) grades them; versions v2-v5 and
// the alias structured_output_v2 are graded by the same code there, and here.
//
//   parse        the answer in requirements.format (graders/zxbench/format_parsers.h): its
//                payload (fence stripped), syntax errors and warnings, a JSON schema's checks
//   axes         syntax_parse     100 - 35 per syntax error (at least 0)
//                schema_compliance (with a declared schema) 100, or round((1 - V/checks) x 100)
//                field_constraints min(share of requiredFields + constraints passed, share of the
//                                 text contract's checks passed) x 100
//                cross_field_consistency share of crossFieldRules passed
//                output_discipline 0/20/50/70/100 by the fence policy and trailing text
//   total        round(sum score x weight / sum weight) over measured axes (weights from
//                requirements.axis_weights, else .30/.20/.40/.05/.05), at most 99 when any
//                criterion (syntax, schema, each field, each cross rule, discipline) failed
//
// Constraints and cross-field rules are zx-bench's rule language (graders/zxbench/
// schema_rules.h). Pure and thread-safe; Run never throws.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/js_value.h"
#include "graders/framework/grader.h"
#include "graders/zxbench/common.h"
#include "graders/zxbench/factories.h"
#include "graders/zxbench/format_parsers.h"
#include "graders/zxbench/js_json.h"
#include "graders/zxbench/js_regex.h"
#include "graders/zxbench/schema_rules.h"
#include "graders/zxbench/text_contracts.h"

namespace evalrun {
namespace {

using nlohmann::json;
using js::ordered_json;
using zx::Member;
using J = const ordered_json*;  // nullptr is undefined

constexpr std::string_view kName = "zxbench:schema_compliance";
constexpr std::string_view kEvaluator = "schema_compliance_v6";

const char* const kFormats[] = {"json", "csv",   "xml",     "sql",      "html",
                                "yaml", "regex", "mermaid", "markdown", "toml"};
const char* const kVersions[] = {"schema_compliance_v6", "schema_compliance_v5",
                                 "schema_compliance_v4", "schema_compliance_v3",
                                 "schema_compliance_v2", "structured_output_v2"};
// DEFAULT_AXIS_WEIGHTS, in zx-bench's order (the order the bank writes axis_weights in too).
const std::pair<const char*, double> kDefaultWeights[] = {{"syntax_parse", 0.30},
                                                          {"schema_compliance", 0.20},
                                                          {"field_constraints", 0.40},
                                                          {"cross_field_consistency", 0.05},
                                                          {"output_discipline", 0.05}};

bool PlainObject(J v) { return v != nullptr && v->is_object(); }
J Pick(J row, const std::string& field) {
  if (row == nullptr || !row->is_object()) return nullptr;
  const auto it = row->find(field);
  return it == row->end() ? nullptr : &*it;
}
bool Test(const std::string& pattern, const std::string& flags, std::string_view subject) {
  return zx::JsRegexTest(pattern, flags, subject).value_or(false);
}

// ---- declared fields ----------------------------------------------------------------------------

bool LiteralToken(std::string_view field) {  // /^[^\w\u4e00-\u9fff]/
  if (field.empty()) return false;
  size_t i = 0;
  const char32_t cp = js::NextCodePoint(field, i);
  const bool word = (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') || (cp >= '0' && cp <= '9') ||
                    cp == '_';
  return !word && !(cp >= 0x4E00 && cp <= 0x9FFF);
}

bool CheckSingleField(const std::string& format, J parsed, const std::string& text,
                      const std::string& field) {
  if (format == "json") return zx::SchemaPath(parsed, field) != nullptr;
  if (format == "csv") {
    J headers = PlainObject(parsed) ? Pick(parsed, "headers") : nullptr;
    return headers != nullptr && headers->is_array() &&
           std::any_of(headers->begin(), headers->end(), [&](const ordered_json& h) {
             return h.is_string() && h.get_ref<const std::string&>() == field;
           });
  }
  if (text.empty()) return false;
  if (field.rfind("re:", 0) == 0) return Test(field.substr(3), "m", text);
  const std::string escaped = zx::EscapeJsRegex(field);
  if (format == "yaml") {
    if (LiteralToken(field)) return text.find(field) != std::string::npos;
    return Test("^\\s*" + escaped + "\\s*:", "mi", text);
  }
  if (format == "toml") {
    if (LiteralToken(field)) return text.find(field) != std::string::npos;
    return Test("(?:^\\s*\\[\\[?" + escaped + "\\]\\]?\\s*$|^\\s*" + escaped + "\\s*=)", "mi", text);
  }
  if (format == "xml") {
    std::string lower = field;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower == "xml") return Test("<\\?xml", "i", text);
    if (Test("^(?:[\\w.-]+:)?(?:positiveInteger|nonNegativeInteger|integer|decimal|boolean|string|"
             "date|dateTime)$",
             "", field)) {
      return Test("\\b(?:type|base)\\s*=\\s*[\"']" + escaped + "[\"']", "i", text);
    }
    return Test("<(?:[\\w.-]+:)?" + escaped + "(?:\\s|>|/)", "i", text) ||
           Test("\\s(?:[\\w.-]+:)?" + escaped + "\\s*=", "i", text);
  }
  if (format == "html") {
    std::string upper = field;
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (upper == "DOCTYPE") return Test("^<!doctype\\s+html", "i", text);
    return Test("<" + escaped + "(?:\\s|>)", "i", text) ||
           Test("\\b" + escaped + "\\s*=\\s*[\"']", "i", text);
  }
  if (format == "sql") {
    std::string spaced;  // escaped.replace(/\s+/g, '\\s+')
    for (size_t i = 0; i < escaped.size();) {
      size_t next = i;
      if (js::IsJsSpace(js::NextCodePoint(escaped, next))) {
        while (i < escaped.size()) {
          size_t probe = i;
          if (!js::IsJsSpace(js::NextCodePoint(escaped, probe))) break;
          i = probe;
        }
        spaced += "\\s+";
        continue;
      }
      spaced.append(escaped, i, next - i);
      i = next;
    }
    return Test("\\b" + spaced + "\\b", "i", text);
  }
  if (format == "mermaid" || format == "markdown" || format == "regex") {
    return text.find(field) != std::string::npos;
  }
  return false;
}

bool CheckDeclaredField(const std::string& format, J parsed, const std::string& text,
                        const std::string& field) {
  const auto alternatives = zx::PathAlternatives(field);
  return std::any_of(alternatives.begin(), alternatives.end(), [&](const std::string& alt) {
    return CheckSingleField(format, parsed, text, alt);
  });
}

// ---- output discipline ----------------------------------------------------------------------

int OutputDiscipline(std::string_view output, bool fenced_allowed,
                     const std::vector<std::string>& allowed_languages, bool wrapped_or_trailing) {
  const std::string_view trimmed = js::JsTrim(output);
  if (trimmed.empty()) return 0;
  std::vector<std::string> languages;  // the opening fences' languages, lower-cased
  bool inside = false;
  for (size_t start = 0;;) {
    const size_t nl = trimmed.find('\n', start);
    std::string_view line = trimmed.substr(start, nl == std::string_view::npos ? nl : nl - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.substr(0, 3) == "```") {  // /^```([\w-]*)/
      if (!inside) {
        size_t i = 3;
        while (i < line.size() && (std::isalnum(static_cast<unsigned char>(line[i])) != 0 ||
                                   line[i] == '_' || line[i] == '-')) {
          ++i;
        }
        std::string language(line.substr(3, i - 3));
        for (char& c : language) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        languages.push_back(language);
        inside = true;
      } else {
        inside = false;
      }
    }
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  const bool has_fence = !languages.empty();
  if (fenced_allowed) {
    if (!has_fence) return wrapped_or_trailing ? 50 : 100;
    const bool all_allowed =
        allowed_languages.empty() ||
        std::all_of(languages.begin(), languages.end(), [&](const std::string& l) {
          return std::find(allowed_languages.begin(), allowed_languages.end(), l) !=
                 allowed_languages.end();
        });
    if (!all_allowed) return 20;
    return wrapped_or_trailing ? 70 : 100;
  }
  if (has_fence) return 0;
  return wrapped_or_trailing ? 0 : 100;
}

// ---- the entry --------------------------------------------------------------------------------

struct Requirements {
  std::string format = "json";
  const json* schema = nullptr;
  std::vector<std::string> required_fields, constraints, cross_rules;
  std::string text_contract;  // "v1", "v2" or ""
  bool fenced_allowed = false;
  std::vector<std::string> allowed_languages;  // lower-cased
  std::vector<std::pair<std::string, double>> weights;
  std::string problem;  // why the entry cannot be graded as zx-bench would ("" when it can)
};

// A list of strings from spec[key] or requirements[key] (the first that is an array); a
// non-string element is a problem (zx-bench's code would throw on it).
std::vector<std::string> StringList(const json& value, const std::string& where,
                                    std::string* problem) {
  std::vector<std::string> out;
  if (!value.is_array()) return out;
  for (size_t i = 0; i < value.size(); ++i) {
    if (!value[i].is_string()) {
      if (problem->empty()) {
        *problem = where + "[" + std::to_string(i) + "] is " + JsonTypeName(value[i]) +
                   ", not a string";
      }
      continue;
    }
    out.push_back(value[i].get<std::string>());
  }
  return out;
}

Requirements ReadRequirements(const json& spec) {
  Requirements r;
  const json& req = Member(spec, "requirements");  // null when absent: every Member is null
  const auto supported = [](const json& v) {
    return v.is_string() && std::any_of(std::begin(kFormats), std::end(kFormats),
                                        [&](const char* f) { return v.get<std::string>() == f; });
  };
  // detectFormat: requirements.format, then scenario.schema.format, then the grader's name
  // (which for schema_compliance names no format): json.
  if (supported(Member(req, "format"))) {
    r.format = Member(req, "format").get<std::string>();
  } else if (supported(Member(Member(spec, "schema"), "format"))) {
    r.format = Member(Member(spec, "schema"), "format").get<std::string>();
  }
  if (Member(spec, "schema").is_structured()) {
    r.schema = &Member(spec, "schema");
  } else if (Member(req, "schema").is_structured()) {
    r.schema = &Member(req, "schema");
  }
  r.required_fields = StringList(Member(req, "requiredFields"), "requirements.requiredFields",
                                 &r.problem);
  if (Member(spec, "constraints").is_array()) {
    r.constraints = StringList(Member(spec, "constraints"), "constraints", &r.problem);
  } else {
    r.constraints = StringList(Member(req, "constraints"), "requirements.constraints", &r.problem);
  }
  r.cross_rules = StringList(Member(req, "crossFieldRules"), "requirements.crossFieldRules",
                             &r.problem);
  const json& contract = Member(req, "text_contract");
  if (contract.is_string() && (contract == "v1" || contract == "v2")) {
    r.text_contract = contract.get<std::string>();
  }
  // outputPolicy ?? output_policy ?? 'raw_only'
  const json& policy = !Member(req, "outputPolicy").is_null() ? Member(req, "outputPolicy")
                                                             : Member(req, "output_policy");
  r.fenced_allowed = policy.is_string() && policy == "fenced_allowed";
  const json& languages = !Member(req, "allowedFenceLanguages").is_null()
                              ? Member(req, "allowedFenceLanguages")
                              : Member(req, "allowed_fence_languages");
  for (std::string& l : StringList(languages, "requirements.allowed_fence_languages", &r.problem)) {
    for (char& c : l) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    r.allowed_languages.push_back(std::move(l));
  }
  // readAxisWeights: finite non-negative numbers, else the defaults
  const json& raw = !Member(req, "axis_weights").is_null() ? Member(req, "axis_weights")
                                                          : Member(req, "axisWeights");
  if (raw.is_object()) {
    for (const auto& [axis, weight] : kDefaultWeights) {  // zx-bench's axis order first
      (void)weight;
      const json& w = Member(raw, axis);
      if (w.is_number() && std::isfinite(w.get<double>()) && w.get<double>() >= 0) {
        r.weights.emplace_back(axis, w.get<double>());
      }
    }
    for (const auto& item : raw.items()) {
      const std::string& axis = item.key();
      const json& w = item.value();
      const bool known = std::any_of(std::begin(kDefaultWeights), std::end(kDefaultWeights),
                                     [&](const auto& d) { return axis == d.first; });
      if (!known && w.is_number() && std::isfinite(w.get<double>()) && w.get<double>() >= 0) {
        r.weights.emplace_back(axis, w.get<double>());
      }
    }
  }
  if (r.weights.empty()) r.weights.assign(std::begin(kDefaultWeights), std::end(kDefaultWeights));
  return r;
}

std::string EntryId(const json& spec) {
  const json& id = Member(spec, "id");
  return id.is_string() ? id.get<std::string>() : "";
}

class ZxSchemaComplianceGrader final : public Grader {
 public:
  std::string_view name() const override { return kName; }
  std::string_view version() const override { return "1"; }
  std::string_view description() const override {
    return "zx-bench schema_compliance: structured output in ten formats (syntax, schema, "
           "declared fields and constraints, text contracts, output discipline; "
           "structuredOutput.ts v6)";
  }

  void CheckSpec(const json& spec, const SourceLocation& where) const override {
    if (!spec.is_object()) {
      throw Error(where.ToString() + ": " + std::string(kName) +
                  ": the spec must be the zx-bench entry (a JSON object)");
    }
  }

  std::string Unrunnable(const json& spec) const override {
    const json& version = Member(spec, "graderVersion");
    if (version.is_string() &&
        std::none_of(std::begin(kVersions), std::end(kVersions),
                     [&](const char* v) { return version.get<std::string>() == v; })) {
      return "schema_compliance version '" + version.get<std::string>() +
             "' is not reproduced (evalrun follows schema_compliance_v6 and the versions it "
             "grades: v2-v5, structured_output_v2)";
    }
    const Requirements r = ReadRequirements(spec);
    if (!r.problem.empty()) return "schema_compliance: " + r.problem;
    return {};
  }

  Grade Run(const json& spec, const Answer& answer, const GradeContext&) const override {
    if (const std::string why = Unrunnable(spec); !why.empty()) {
      Grade grade;
      grade.status = GradeStatus::kSkipped;
      grade.reason = why;
      return grade;
    }
    const std::string output = js::ToWellFormedUtf8(answer.text);
    const Requirements r = ReadRequirements(spec);
    std::map<std::string, int> scores;
    std::map<std::string, std::string> axis_evidence;  // "rule" or "unmeasured"
    json criteria = json::array();
    std::vector<std::string> evidence;
    const auto criterion = [&](const std::string& id, const std::string& description, bool pass) {
      criteria.push_back(
          {{"id", "structured_" + id}, {"description", description}, {"pass", pass}});
    };

    const zx::FormatParse parsed = zx::ParseByFormat(
        r.format, output, r.schema, r.format == "csv" ? &r.required_fields : nullptr);
    J data = parsed.parsed ? &*parsed.parsed : nullptr;
    const zx::FormatPayload payload = zx::ExtractFormatPayload(r.format, output);
    const std::string& corpus = payload.text;

    std::vector<const zx::FormatViolation*> syntax, warnings, schema_violations;
    bool trailing_violation = false;
    for (const zx::FormatViolation& v : parsed.violations) {
      if (zx::IsSyntaxViolation(v)) syntax.push_back(&v);
      if (!v.error) warnings.push_back(&v);
      if (v.type == "schema_mismatch" || v.type == "missing_required") schema_violations.push_back(&v);
      trailing_violation = trailing_violation || v.type == "trailing_content";
    }
    criterion("syntax", "Format parses without structural errors", syntax.empty());
    scores["syntax_parse"] = syntax.empty() ? 100 : std::max(0, 100 - 35 * static_cast<int>(syntax.size()));
    axis_evidence["syntax_parse"] = "rule";
    evidence.push_back(syntax.empty() ? "Format \"" + r.format + "\" parsed successfully"
                                      : "Format \"" + r.format + "\" structural errors: " +
                                            std::to_string(syntax.size()));
    for (size_t i = 0; i < syntax.size() && i < 3; ++i) evidence.push_back("  - " + syntax[i]->message);
    for (size_t i = 0; i < warnings.size() && i < 3; ++i) {
      evidence.push_back("  ! " + warnings[i]->message);
    }

    if (r.schema != nullptr) {
      const size_t checks = parsed.schema_checks;
      const size_t v = schema_violations.size();
      criterion("schema", "Declared schema accepts the output", v == 0 && checks > 0);
      scores["schema_compliance"] =
          v == 0 ? 100
          : checks > 0
              ? std::max(0, js::JsRound((1 - static_cast<double>(v) / static_cast<double>(checks)) * 100))
              : std::max(0, 100 - 25 * static_cast<int>(v));
      axis_evidence["schema_compliance"] = "rule";
      evidence.push_back(v == 0 ? "Schema validation passed (" + std::to_string(checks) + " constraints)"
                                : "Schema violations: " + std::to_string(v) + "/" +
                                      std::to_string(checks) + " constraints");
      for (size_t i = 0; i < v && i < 5; ++i) evidence.push_back("  - " + schema_violations[i]->message);
    } else {
      axis_evidence["schema_compliance"] = "unmeasured";
    }

    // declared fields and constraints, and the text contract
    std::vector<zx::TextCheck> base;
    for (const std::string& field : r.required_fields) {
      base.push_back({"required field " + field, CheckDeclaredField(r.format, data, corpus, field)});
    }
    for (const std::string& c : r.constraints) {
      base.push_back({"constraint " + c, zx::EvaluateConstraint(c, data, corpus)});
    }
    std::vector<zx::TextCheck> text;
    if (!r.text_contract.empty()) {
      for (zx::TextCheck& check :
           zx::EvaluateTextContract(EntryId(spec), r.format, corpus, r.text_contract)) {
        text.push_back({"text structure " + check.label, check.pass});
      }
    }
    std::vector<const zx::TextCheck*> checks;
    for (const auto& c : base) checks.push_back(&c);
    for (const auto& c : text) checks.push_back(&c);
    for (size_t i = 0; i < checks.size(); ++i) {
      criterion("field_" + std::to_string(i), checks[i]->label, checks[i]->pass);
    }
    if (!checks.empty()) {
      const auto rate = [](const std::vector<zx::TextCheck>& list) {
        if (list.empty()) return 1.0;
        const auto passed = std::count_if(list.begin(), list.end(), [](const auto& c) { return c.pass; });
        return static_cast<double>(passed) / static_cast<double>(list.size());
      };
      scores["field_constraints"] = js::JsRound(std::min(rate(base), rate(text)) * 100);
      axis_evidence["field_constraints"] = "rule";
      size_t passed = 0;
      std::string failures;
      size_t shown = 0;
      for (const zx::TextCheck* c : checks) {
        if (c->pass) {
          ++passed;
        } else if (shown++ < 5) {
          failures += (failures.empty() ? "" : ", ") + c->label;
        }
      }
      evidence.push_back("Declared fields/constraints: " + std::to_string(passed) + "/" +
                         std::to_string(checks.size()) + " passed");
      if (!failures.empty()) evidence.push_back("Missing or invalid: " + failures);
    } else {
      axis_evidence["field_constraints"] = "unmeasured";
    }

    if (!r.cross_rules.empty()) {
      size_t passed = 0;
      std::vector<std::string> failed;
      for (size_t i = 0; i < r.cross_rules.size(); ++i) {
        const bool pass = zx::EvaluateCrossFieldRule(r.cross_rules[i], data);
        criterion("cross_" + std::to_string(i), "cross-field rule " + r.cross_rules[i], pass);
        if (pass) {
          ++passed;
        } else {
          failed.push_back(r.cross_rules[i]);
        }
      }
      scores["cross_field_consistency"] = js::JsRound(
          static_cast<double>(passed) / static_cast<double>(r.cross_rules.size()) * 100);
      axis_evidence["cross_field_consistency"] = "rule";
      evidence.push_back("Cross-field rules: " + std::to_string(passed) + "/" +
                         std::to_string(r.cross_rules.size()) + " passed");
      for (const std::string& f : failed) evidence.push_back("  - failed rule: " + f);
    } else {
      axis_evidence["cross_field_consistency"] = "unmeasured";
    }
    axis_evidence["executable"] = "unmeasured";

    const bool wrapped_or_trailing = payload.trailing || trailing_violation;
    const int discipline =
        OutputDiscipline(output, r.fenced_allowed, r.allowed_languages, wrapped_or_trailing);
    scores["output_discipline"] = discipline;
    axis_evidence["output_discipline"] = "rule";
    criterion("output_discipline", "Output follows the declared wrapping policy", discipline == 100);
    if (discipline < 100) {
      evidence.push_back(wrapped_or_trailing
                             ? "Output wraps the format body in a fence or appends non-format text"
                             : "Output contains a fence or non-format text forbidden by raw_only policy");
    }

    double numerator = 0, denominator = 0;
    for (const auto& [axis, weight] : r.weights) {
      const auto score = scores.find(axis);
      if (axis_evidence[axis] == "unmeasured" || score == scores.end()) continue;
      numerator += score->second * weight;
      denominator += weight;
    }
    const int weighted = denominator == 0 ? 0 : js::JsRound(numerator / denominator);
    const bool strict = std::all_of(criteria.begin(), criteria.end(),
                                    [](const json& c) { return c["pass"].get<bool>(); });
    const int total = strict ? weighted : std::min(99, weighted);
    if (!strict) evidence.push_back("STRICT_CONTRACT_FAIL: one or more declared checks failed");

    json axes = json::object();
    for (const auto& [axis, how] : axis_evidence) {
      axes[axis] = how == "unmeasured" ? json(nullptr) : json(scores[axis]);
    }
    size_t failed_criteria = 0;
    for (const json& c : criteria) failed_criteria += c["pass"].get<bool>() ? 0 : 1;
    json ev = {{"format", r.format}, {"axes", axes}, {"criteria", criteria}, {"evidence", evidence}};
    std::string reason = "format " + r.format + ": " +
                         (failed_criteria == 0 ? std::string("every check passed")
                                               : std::to_string(failed_criteria) + " of " +
                                                     std::to_string(criteria.size()) +
                                                     " checks failed");
    return zx::ZxGrade(total, std::move(ev), std::move(reason), kEvaluator);
  }
};

}  // namespace

std::unique_ptr<Grader> MakeZxSchemaComplianceGrader() {
  return std::make_unique<ZxSchemaComplianceGrader>();
}

}  // namespace evalrun
