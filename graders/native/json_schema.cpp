// json_schema: JSON found in the answer validates against a documented subset of JSON Schema
// 2020-12 (docs/graders.md lists it), with the framework's validator (the one zx-bench's
// structured_contract uses with AJV's whole vocabulary). Unknown keywords are refused when the
// suite loads, so a schema never silently means less than its author thinks.
//
// Version 2 (the shared validator): AJV's messages and keyword order; an additional property is
// reported at its object ("must NOT have additional properties ('x')"). Version 1 had its own
// validator and texts; a bundle graded by json_schema/1 is reported "not rechecked" by verify.
#include <string>

#include "core/error.h"
#include "graders/framework/json_schema_validator.h"
#include "graders/native/factories.h"

namespace evalrun {

namespace {

constexpr std::string_view kName = "json_schema";
constexpr size_t kShownViolations = 5;

const std::vector<std::string> kKeywords = {
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "pattern",
    // Annotations: accepted and ignored.
    "$schema",
    "$id",
    "$comment",
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
};
// The documented subset as a profile of the framework's validator: 2020-12, `format` an
// annotation, `pattern` as the regex grader reads it, every violation counted, the first five
// kept.
const JsonSchemaProfile& Profile() {
  static const JsonSchemaProfile profile = JsonSchemaProfile::Subset(
      kKeywords, "docs/graders.md lists the supported subset", "", kShownViolations);
  return profile;
}

class JsonSchemaGrader final : public Grader {
 public:
  std::string_view name() const override { return kName; }
  std::string_view version() const override { return "3"; }
  std::string_view description() const override {
    return "JSON in the answer validates against a JSON Schema (documented 2020-12 subset)";
  }

  void CheckSpec(const nlohmann::json& spec, const SourceLocation& where) const override {
    CheckSpecKeys(spec, where, kName, {"schema"});
    if (!spec.contains("schema")) ThrowSpecError(where, kName, "schema", "missing");
    const nlohmann::json& schema = spec["schema"];
    try {
      CheckJsonSchema(Profile(), JsonSchemaDocuments{&schema, nullptr}, schema, "#");
    } catch (const JsonSchemaError& e) {
      ThrowSpecError(where, kName, "schema", e.what());
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
    const nlohmann::json& schema = spec["schema"];
    try {
      CheckJsonSchema(Profile(), JsonSchemaDocuments{&schema, nullptr}, schema, "#");
    } catch (const JsonSchemaError& e) {  // a spec that skipped CheckSpec; never the output
      grade.status = GradeStatus::kSkipped;
      grade.reason = std::string("bad schema: ") + e.what();
      return grade;
    }
    JsonSchemaValidator validator(Profile(), JsonSchemaDocuments{&schema, nullptr}, schema);
    grade.passed = validator.Validate(*found.value);
    grade.score = grade.passed ? 1 : 0;
    nlohmann::json shown = nlohmann::json::array();
    for (const auto& v : validator.violations()) {
      shown.push_back({{"path", v.at}, {"problem", EvidenceText(v.problem)}});
    }
    grade.evidence = {{"violations", shown}, {"violation_count", validator.violation_count()}};
    if (validator.gave_up()) {
      // A pattern that hit the regex match limit, or the validator's work limit: not valid.
      grade.evidence["gave_up"] = true;
      grade.reason = "validation gave up (a pattern hit the match limit, or the work limit)";
    } else if (grade.passed) {
      grade.reason = "valid against the schema";
    } else if (shown.empty()) {  // not expected from the subset; never an out-of-range read
      grade.reason = "not valid against the schema";
    } else {
      grade.reason = std::to_string(validator.violation_count()) + " violation(s), first at " +
                     shown[0]["path"].get<std::string>() + ": " +
                     shown[0]["problem"].get<std::string>();
    }
    return grade;
  }
};

}  // namespace

std::unique_ptr<Grader> MakeJsonSchemaGrader() {
  return std::make_unique<JsonSchemaGrader>();
}

}  // namespace evalrun
