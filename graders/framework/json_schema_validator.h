#pragma once
// A JSON Schema validator with AJV 8's semantics: ajv 8.20.0 in strict mode with ajv-formats
// 3.0.1's full formats, for draft-07 and 2020-12. It is the framework's so that every grader
// that validates JSON can share it; zx-bench's structured_contract grader validates with it.
//
// What it follows: AJV's keyword order and its error texts ("must be integer", "must have
// required property 'x'", ...; the first error is kept, prefixed by the data's JSON Pointer),
// what AJV counts as evaluated for unevaluatedProperties/unevaluatedItems (on for 2020-12, off
// for draft-07), strictNumbers (a non-finite number is not a "number"), ucs2length code point
// counts for minLength/maxLength, fast-deep-equal for enum/const/uniqueItems (0 equals -0), and
// the schema checks of AJV's strict compile (CheckJsonSchema). $ref resolves within the
// document, JsonSchemaDocuments::references and absolute $id values only; $dynamicRef is not
// implemented. Known approximation: inside an `if` subschema AJV stops at the first failing
// keyword while this validator evaluates all of them (only what counts as "evaluated" can
// differ).
//
// Work is bounded: schemas nested deeper than 128 levels are refused, validation stops
// (gave_up) after 20 million schema applications or 1,000 nested ones, and regular expressions
// run under graders/framework/regex.h's limits. Distinct validators may run on distinct
// threads; one validator is not shared between threads.
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace evalrun {

enum class JsonSchemaDialect { kDraft07, k2020 };

// How schemas are read and applied. AjvStrict is AJV's strict mode (unknown keywords, unknown
// formats and ignored keywords are refused; the first error is kept); Subset is a documented
// part of the vocabulary, as evalrun's native json_schema grader uses it (only the listed
// keywords are accepted, `pattern` as the regex grader reads it, every violation counted).
struct JsonSchemaProfile {
  JsonSchemaDialect dialect = JsonSchemaDialect::k2020;
  // true: ajv-formats' full formats assert (and an unknown format refuses the schema); false:
  // `format` is an annotation (AJV's validateFormats: false).
  bool format_assertions = true;
  // Empty: the dialect's whole vocabulary. Otherwise only these keywords; any other is refused
  // as "unsupported keyword 'k'" with a did-you-mean and `subset_note` in parentheses.
  std::vector<std::string> keywords;
  std::string subset_note;
  // The flags `pattern` and `patternProperties` are compiled with (Regex::CompileJavaScript):
  // "u" is JavaScript's u grammar, as AJV compiles them; "" is `new RegExp(p)`, as the regex
  // grader reads a pattern without flags.
  std::string pattern_flags = "u";
  // How many violations are kept (all are counted; at least one): AJV's allErrors off keeps the
  // first.
  size_t kept_violations = 1;

  static JsonSchemaProfile AjvStrict(JsonSchemaDialect dialect, bool format_assertions) {
    JsonSchemaProfile profile;
    profile.dialect = dialect;
    profile.format_assertions = format_assertions;
    return profile;
  }
  static JsonSchemaProfile Subset(std::vector<std::string> keywords, std::string note,
                                  std::string pattern_flags, size_t kept_violations) {
    JsonSchemaProfile profile;
    profile.format_assertions = false;
    profile.keywords = std::move(keywords);
    profile.subset_note = std::move(note);
    profile.pattern_flags = std::move(pattern_flags);
    profile.kept_violations = kept_violations;
    return profile;
  }
};

// One failed check: where in the data (a JSON Pointer, "/" for the root) and AJV's message.
struct JsonSchemaViolation {
  std::string at;
  std::string problem;
};

// The documents a $ref may reach. Both point into JSON that outlives every use.
struct JsonSchemaDocuments {
  const nlohmann::json* schema = nullptr;      // the main schema: absolute $id inside it resolve
  const nlohmann::json* references = nullptr;  // an object URI -> schema, or nullptr
};

// A schema AJV's strict compile refuses; what() is "<where>/<pointer>: <problem>".
class JsonSchemaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Checks `schema` (and every subschema) the way AJV's strict compile would: unknown keywords,
// values its meta-schema rejects, unresolvable references, bad patterns, unknown formats,
// keywords strict mode calls ignored. `where` names the schema in the message. Throws
// JsonSchemaError.
void CheckJsonSchema(const JsonSchemaProfile& profile, const JsonSchemaDocuments& documents,
                     const nlohmann::json& schema, const std::string& where);

// Validates data against `root`, which must have passed CheckJsonSchema with the same profile
// and documents (they must outlive the validator).
class JsonSchemaValidator {
 public:
  JsonSchemaValidator(const JsonSchemaProfile& profile, const JsonSchemaDocuments& documents,
                      const nlohmann::json& root);
  ~JsonSchemaValidator();
  JsonSchemaValidator(const JsonSchemaValidator&) = delete;
  JsonSchemaValidator& operator=(const JsonSchemaValidator&) = delete;

  // Whether `data` is valid; false also when the work limit was reached (gave_up).
  bool Validate(const nlohmann::json& data);
  bool gave_up() const;
  // AJV's generated code would throw a TypeError on this value (a patternProperties match on an
  // evaluated-properties variable an untaken branch left undefined).
  bool ajv_throws() const;
  // The first error: "<data pointer, / for the root>: <AJV's message>".
  std::string error() const;
  // Every failed check of the last Validate is counted; the first kept_violations are kept.
  size_t violation_count() const;
  const std::vector<JsonSchemaViolation>& violations() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// A JSON Pointer reference token: "~" as "~0", "/" as "~1".
std::string JsonPointerToken(std::string_view key);

}  // namespace evalrun
