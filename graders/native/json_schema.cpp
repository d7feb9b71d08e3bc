// json_schema: JSON found in the answer validates against a documented subset of JSON Schema
// 2020-12 (docs/graders.md lists it). Unknown keywords are refused when the suite loads, so a
// schema never silently means less than its author thinks.
#include <cmath>
#include <string>

#include "core/error.h"
#include "graders/framework/regex.h"
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
const std::vector<std::string> kTypes = {"null",   "boolean", "object", "array",
                                         "number", "integer", "string"};

std::string Pointer(const std::string& parent, const std::string& token) {
  std::string escaped;
  for (char c : token) {
    if (c == '~') {
      escaped += "~0";
    } else if (c == '/') {
      escaped += "~1";
    } else {
      escaped.push_back(c);
    }
  }
  return parent + "/" + escaped;
}

// Checks a (sub)schema at JSON pointer `at` inside the spec; throws via ThrowSpecError.
void CheckSchema(const nlohmann::json& schema, const std::string& at, const SourceLocation& where) {
  auto fail = [&](const std::string& problem) {
    ThrowSpecError(where, kName, "schema", "at '" + (at.empty() ? "/" : at) + "': " + problem);
  };
  if (schema.is_boolean()) return;
  if (!schema.is_object()) fail("a schema must be a mapping or true/false");
  for (const auto& [key, value] : schema.items()) {
    if (std::find(kKeywords.begin(), kKeywords.end(), key) == kKeywords.end()) {
      std::string problem = "unsupported keyword '" + key + "'";
      const std::string suggestion = ClosestMatch(key, kKeywords);
      if (!suggestion.empty()) problem += ", did you mean '" + suggestion + "'?";
      fail(problem + " (docs/graders.md lists the supported subset)");
    }
  }
  if (schema.contains("type")) {
    const auto& type = schema["type"];
    auto check_one = [&](const nlohmann::json& t) {
      if (!t.is_string() ||
          std::find(kTypes.begin(), kTypes.end(), t.get<std::string>()) == kTypes.end()) {
        fail("unknown type " + t.dump());
      }
    };
    if (type.is_array()) {
      if (type.empty()) fail("'type' must not be an empty list");
      for (const auto& t : type) check_one(t);
    } else {
      check_one(type);
    }
  }
  if (schema.contains("properties")) {
    if (!schema["properties"].is_object()) fail("'properties' must be a mapping");
    for (const auto& [key, sub] : schema["properties"].items()) {
      CheckSchema(sub, Pointer(Pointer(at, "properties"), key), where);
    }
  }
  if (schema.contains("required")) {
    const auto& required = schema["required"];
    if (!required.is_array()) fail("'required' must be a list of strings");
    for (const auto& r : required) {
      if (!r.is_string()) fail("'required' must be a list of strings");
    }
  }
  if (schema.contains("additionalProperties")) {
    CheckSchema(schema["additionalProperties"], Pointer(at, "additionalProperties"), where);
  }
  if (schema.contains("items")) CheckSchema(schema["items"], Pointer(at, "items"), where);
  if (schema.contains("enum") && (!schema["enum"].is_array() || schema["enum"].empty())) {
    fail("'enum' must be a non-empty list");
  }
  for (const char* key : {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}) {
    if (schema.contains(key) && !schema[key].is_number())
      fail(std::string("'") + key + "' must be a number");
  }
  for (const char* key : {"minLength", "maxLength"}) {
    if (schema.contains(key) &&
        !(schema[key].is_number_unsigned() ||
          (schema[key].is_number_integer() && schema[key].get<int64_t>() >= 0))) {
      fail(std::string("'") + key + "' must be an integer >= 0");
    }
  }
  if (schema.contains("pattern")) {
    if (!schema["pattern"].is_string()) fail("'pattern' must be a string");
    try {
      Regex::Compile(schema["pattern"].get<std::string>(), "");
    } catch (const Error& e) {
      fail(std::string("bad 'pattern': ") + e.what());
    }
  }
}

bool HasType(const nlohmann::json& value, const std::string& type) {
  if (type == "null") return value.is_null();
  if (type == "boolean") return value.is_boolean();
  if (type == "object") return value.is_object();
  if (type == "array") return value.is_array();
  if (type == "string") return value.is_string();
  if (type == "number") return value.is_number();
  if (type == "integer") {
    if (value.is_number_integer() || value.is_number_unsigned()) return true;
    if (!value.is_number_float()) return false;
    const double d = value.get<double>();
    return std::isfinite(d) && std::floor(d) == d;  // 2020-12: 1.0 is an integer
  }
  return false;
}

size_t CodePoints(const std::string& s) {
  size_t n = 0;
  for (char c : s) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
  }
  return n;
}

struct Validation {
  nlohmann::json shown = nlohmann::json::array();
  size_t count = 0;
  void Add(const std::string& at, const std::string& problem) {
    if (++count <= kShownViolations) {
      shown.push_back({{"path", at.empty() ? "/" : at}, {"problem", EvidenceText(problem)}});
    }
  }
};

void Validate(const nlohmann::json& schema, const nlohmann::json& value, const std::string& at,
              Validation* out) {
  if (schema.is_boolean()) {
    if (!schema.get<bool>()) out->Add(at, "no value is allowed here");
    return;
  }
  if (schema.contains("type")) {
    const auto& type = schema["type"];
    bool ok = false;
    if (type.is_array()) {
      for (const auto& t : type) ok = ok || HasType(value, t.get<std::string>());
    } else {
      ok = HasType(value, type.get<std::string>());
    }
    if (!ok) {
      out->Add(at, "expected type " + type.dump() + ", got " + JsonTypeName(value));
      return;  // the other keywords would only repeat the same mistake
    }
  }
  if (schema.contains("enum")) {
    bool ok = false;
    for (const auto& option : schema["enum"]) ok = ok || option == value;
    if (!ok) out->Add(at, "not one of " + schema["enum"].dump());
  }
  if (schema.contains("const") && !(schema["const"] == value)) {
    out->Add(at, "must be " + schema["const"].dump());
  }
  if (value.is_number()) {
    const double x = value.get<double>();
    auto bound = [&](const char* key) { return schema[key].get<double>(); };
    if (schema.contains("minimum") && x < bound("minimum")) {
      out->Add(at, "below minimum " + schema["minimum"].dump());
    }
    if (schema.contains("maximum") && x > bound("maximum")) {
      out->Add(at, "above maximum " + schema["maximum"].dump());
    }
    if (schema.contains("exclusiveMinimum") && x <= bound("exclusiveMinimum")) {
      out->Add(at, "not above exclusiveMinimum " + schema["exclusiveMinimum"].dump());
    }
    if (schema.contains("exclusiveMaximum") && x >= bound("exclusiveMaximum")) {
      out->Add(at, "not below exclusiveMaximum " + schema["exclusiveMaximum"].dump());
    }
  }
  if (value.is_string()) {
    const std::string& s = value.get_ref<const std::string&>();
    const size_t length = CodePoints(s);
    if (schema.contains("minLength") && length < schema["minLength"].get<size_t>()) {
      out->Add(at, "shorter than minLength " + schema["minLength"].dump());
    }
    if (schema.contains("maxLength") && length > schema["maxLength"].get<size_t>()) {
      out->Add(at, "longer than maxLength " + schema["maxLength"].dump());
    }
    if (schema.contains("pattern")) {
      const auto regex = Regex::Compile(schema["pattern"].get<std::string>(), "");
      const Regex::Result r = regex->Match(s, /*full=*/false);
      if (r == Regex::Result::kGaveUp) {
        out->Add(at, "pattern gave up (match limit)");
      } else if (r == Regex::Result::kNoMatch) {
        out->Add(at, "does not match pattern " + schema["pattern"].dump());
      }
    }
  }
  if (value.is_object()) {
    if (schema.contains("required")) {
      for (const auto& r : schema["required"]) {
        if (!value.contains(r.get<std::string>())) {
          out->Add(at, "missing required property '" + r.get<std::string>() + "'");
        }
      }
    }
    const nlohmann::json* properties =
        schema.contains("properties") ? &schema["properties"] : nullptr;
    for (const auto& [key, item] : value.items()) {
      if (properties != nullptr && properties->contains(key)) {
        Validate((*properties)[key], item, Pointer(at, key), out);
      } else if (schema.contains("additionalProperties")) {
        const auto& extra = schema["additionalProperties"];
        if (extra.is_boolean() && !extra.get<bool>()) {
          out->Add(Pointer(at, key), "additional property not allowed");
        } else {
          Validate(extra, item, Pointer(at, key), out);
        }
      }
    }
  }
  if (value.is_array() && schema.contains("items")) {
    for (size_t i = 0; i < value.size(); ++i) {
      Validate(schema["items"], value[i], Pointer(at, std::to_string(i)), out);
    }
  }
}

class JsonSchemaGrader final : public Grader {
 public:
  std::string_view name() const override { return kName; }
  std::string_view version() const override { return "1"; }
  std::string_view description() const override {
    return "JSON in the answer validates against a JSON Schema (documented 2020-12 subset)";
  }

  void CheckSpec(const nlohmann::json& spec, const SourceLocation& where) const override {
    CheckSpecKeys(spec, where, kName, {"schema"});
    if (!spec.contains("schema")) ThrowSpecError(where, kName, "schema", "missing");
    CheckSchema(spec["schema"], "", where);
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
    Validation validation;
    try {
      Validate(spec["schema"], *found.value, "", &validation);
    } catch (const std::exception& e) {  // a spec that skipped CheckSpec; never the output
      grade.status = GradeStatus::kSkipped;
      grade.reason = std::string("bad schema: ") + e.what();
      return grade;
    }
    grade.passed = validation.count == 0;
    grade.score = grade.passed ? 1 : 0;
    grade.evidence = {{"violations", validation.shown}, {"violation_count", validation.count}};
    grade.reason = grade.passed ? "valid against the schema"
                                : std::to_string(validation.count) + " violation(s), first at " +
                                      validation.shown[0]["path"].get<std::string>() + ": " +
                                      validation.shown[0]["problem"].get<std::string>();
    return grade;
  }
};

}  // namespace

std::unique_ptr<Grader> MakeJsonSchemaGrader() {
  return std::make_unique<JsonSchemaGrader>();
}

}  // namespace evalrun
