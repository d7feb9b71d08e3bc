#pragma once
// zx-bench's format parsers for structured-output answers (packages/core/src/parsers/index.ts at
// a8f5306): the payload of an answer (its fence stripped), the syntax checks of the ten formats
// schema_compliance grades, and the small JSON Schema validator whose checks it counts. Values
// are JavaScript's (core/js_value.h); a parsed CSV is {headers, rows}, a SQL answer its statements,
// the other text formats their payload text. Pure and thread-safe.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/js_value.h"

namespace evalrun::zx {

// What the answer holds for a format (extractFormatPayload): the whole answer when it is one
// ```fence``` (its body), else the first fenced block (trailing: something lies outside it),
// else the trimmed answer. Markdown keeps inner fences: only a whole-answer fence is stripped.
struct FormatPayload {
  std::string text;
  bool fenced = false;
  bool trailing = false;
};
FormatPayload ExtractFormatPayload(std::string_view format, std::string_view content);

struct FormatViolation {
  std::string type;      // parse_error, schema_mismatch, missing_required, trailing_content ...
  std::string message;
  bool error = true;     // severity 'error'; false is 'warning'
};

// A syntax violation costs the syntax axis: an error that is not a content (schema) one.
bool IsSyntaxViolation(const FormatViolation& v);

struct FormatParse {
  std::optional<js::ordered_json> parsed;  // nullopt: nothing parsed (undefined)
  std::vector<FormatViolation> violations;
  size_t schema_checks = 0;                // JSON with a schema: the constraints it executed
};

// parseByFormat for json, csv, xml, sql, html, yaml, regex, mermaid, markdown and toml.
// `schema` is used by json; `expected_columns` (the entry's requiredFields) by csv.
FormatParse ParseByFormat(std::string_view format, std::string_view content,
                          const nlohmann::json* schema,
                          const std::vector<std::string>* expected_columns);

// countSchemaViolations: the violations of `instance` against zx-bench's own validator
// (type, const, enum, string and number bounds, pattern, five formats, items, oneOf, anyOf,
// allOf, required, properties, additionalProperties: false, local $ref); other keywords are
// ignored, as there.
size_t CountSchemaViolations(const js::ordered_json& instance, const js::ordered_json& schema);

// `new RegExp(pattern, flags).test(subject)` (flags a subset of "imsu"): nullopt when the
// pattern does not compile (JavaScript throws), false when matching gave up (bounded).
std::optional<bool> JsRegexTest(const std::string& pattern, const std::string& flags,
                                std::string_view subject);
// `(subject.match(new RegExp(pattern, "gm")) ?? []).length`: nullopt when the pattern does
// not compile or matching gave up.
std::optional<size_t> JsRegexCountGm(const std::string& pattern, std::string_view subject);
// text.split(/\r?\n/): the lines, views into `text`.
std::vector<std::string_view> SplitLines(std::string_view text);

// The pattern as a literal (zx-bench's escapeRegExp).
std::string EscapeJsRegex(std::string_view text);

}  // namespace evalrun::zx
