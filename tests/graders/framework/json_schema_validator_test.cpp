// graders/framework/json_schema_validator: AJV 8 semantics under the AjvStrict profile: AJV's
// error texts at the data's JSON Pointer, the strict compile's refusals, both dialects,
// references, unevaluatedProperties, fast-deep-equal for enum/const/uniqueItems, code point
// lengths, strictNumbers, and ajv-formats' full formats (calendar dates, the leap-second rule of
// date-time and time, format assertions off).
#include "tests/support/catch.h"

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "graders/framework/json_schema_validator.h"

namespace evalrun {
namespace {

using nlohmann::json;

const JsonSchemaProfile k2020 = JsonSchemaProfile::AjvStrict(JsonSchemaDialect::k2020, true);
const JsonSchemaProfile kDraft07 = JsonSchemaProfile::AjvStrict(JsonSchemaDialect::kDraft07, true);

// "" when `data` is valid, else the validator's first error.
std::string Check(const json& schema, const json& data, const JsonSchemaProfile& profile = k2020,
                  const json* references = nullptr) {
  const JsonSchemaDocuments documents{&schema, references};
  CheckJsonSchema(profile, documents, schema, "schema");
  JsonSchemaValidator validator(profile, documents, schema);
  const bool ok = validator.Validate(data);
  CHECK_FALSE(validator.gave_up());
  CHECK(ok == validator.error().empty());
  return ok ? "" : validator.error();
}

// The JsonSchemaError CheckJsonSchema throws, or "" when it accepts the schema.
std::string Refusal(const json& schema, const JsonSchemaProfile& profile = k2020) {
  try {
    CheckJsonSchema(profile, JsonSchemaDocuments{&schema, nullptr}, schema, "schema");
    return "";
  } catch (const JsonSchemaError& e) {
    return e.what();
  }
}

bool Format(const char* format, const std::string& value) {
  return Check({{"format", format}}, value).empty();
}

TEST_CASE("json_schema_validator: AJV's messages at the data's JSON Pointer") {
  CHECK(Check({{"type", "integer"}}, 1.5) == "/: must be integer");
  CHECK(Check({{"type", "integer"}}, 2.0).empty());  // 2.0 is an integer in JavaScript
  CHECK(Check({{"type", json::array({"string", "null"})}}, 1) == R"(/: must be ["string","null"])");
  CHECK(Check({{"required", {"a", "b"}}}, {{"a", 1}}) == "/: must have required property 'b'");
  CHECK(Check(json::parse(R"({"properties":{"a":{"properties":{"b/c":{"type":"string"}}}}})"),
              json::parse(R"({"a":{"b/c":1}})")) == "/a/b~1c: must be string");
  // additionalProperties: false is the object's error, as AJV reports it (instancePath "",
  // params.additionalProperty), not the false schema's at the member.
  CHECK(Check(json::parse(R"({"properties":{"a":true},"additionalProperties":false})"),
              json::parse(R"({"a":1,"z":2})")) == "/: must NOT have additional properties ('z')");
  CHECK(Check(json::parse(R"({"patternProperties":{"^x":true},"additionalProperties":false})"),
              json::parse(R"({"x1":1,"y":2})")) == "/: must NOT have additional properties ('y')");
  CHECK(Check(json::parse(R"({"additionalProperties":{"type":"string"}})"),
              json::parse(R"({"a":"s","b":2})")) == "/b: must be string");
  CHECK(Check({{"items", {{"minimum", 0}}}}, json::array({1, -1})) == "/1: must be >= minimum");
  CHECK(Check({{"exclusiveMaximum", 3}}, 3) == "/: must be < exclusiveMaximum");
  CHECK(Check({{"enum", {"a", "b"}}}, "c") == "/: must be equal to one of the allowed values");
  CHECK(Check({{"const", "a"}}, "b") == "/: must be equal to constant");
  CHECK(Check({{"not", {{"type", "string"}}}}, "x") == "/: must NOT be valid");
  CHECK(Check({{"oneOf", {{{"type", "number"}}, {{"type", "integer"}}}}}, 1) ==
        "/: must match exactly one schema in oneOf");
  CHECK(Check({{"anyOf", {{{"type", "number"}}, {{"type", "null"}}}}}, "x") ==
        "/: must match a schema in anyOf");
  CHECK(Check(json::parse(R"({"if":{"type":"string"},"then":{"minLength":2}})"), "x") ==
        "/: must NOT have fewer than 2 characters");
  CHECK(Check({{"minItems", 2}}, json::array({1})) == "/: must NOT have fewer than 2 items");
  CHECK(Check({{"maxProperties", 0}}, {{"a", 1}}) == "/: must NOT have more than 0 properties");
  CHECK(Check({{"pattern", "^a+$"}}, "ab") == "/: must match pattern \"^a+$\"");
  CHECK(Check(false, 1) == "/: the false schema");
  CHECK(Check(json::parse(R"({"dependentRequired":{"a":["b"]}})"), {{"a", 1}}) ==
        "/: must have property 'b' when property 'a' is present");
}

TEST_CASE("json_schema_validator: numbers: strictNumbers and multipleOf by division") {
  CHECK(Check({{"type", "number"}}, HUGE_VAL) == "/: must be number");
  CHECK(Check({{"type", "number"}}, -0.0).empty());
  CHECK(Check({{"multipleOf", 0.5}}, 2.5).empty());
  // AJV divides: 0.07 / 0.01 is 7.000000000000001, not an integer.
  CHECK(Check({{"multipleOf", 0.01}}, 0.07) == "/: must be multiple of 0.01");
}

TEST_CASE("json_schema_validator: enum, const and uniqueItems compare as fast-deep-equal") {
  CHECK(Check({{"const", 0}}, -0.0).empty());  // 0 === -0
  CHECK(Check({{"const", 1}}, 1.0).empty());
  CHECK(Check({{"enum", json::array({json::object({{"a", json::array({1})}})})}},
              json::parse(R"({"a":[1.0]})"))
            .empty());
  CHECK(Check({{"uniqueItems", true}}, json::array({1, 1.0})) ==
        "/: must NOT have duplicate items");
  CHECK(Check({{"uniqueItems", true}}, json::array({0, -0.0})) ==
        "/: must NOT have duplicate items");
  CHECK(Check({{"uniqueItems", true}}, json::parse(R"([{"a":1,"b":2},{"b":2,"a":1}])")) ==
        "/: must NOT have duplicate items");
  CHECK(Check({{"uniqueItems", true}}, json::parse(R"([1,"1",[1],{"1":1}])")).empty());
}

TEST_CASE("json_schema_validator: string lengths count code points (AJV's ucs2length)") {
  CHECK(Check({{"maxLength", 1}}, "\xF0\x9F\x98\x80").empty());  // one code point, two UTF-16 units
  CHECK(Check({{"maxLength", 1}}, "\xC3\xA9x") == "/: must NOT have more than 1 characters");
  CHECK(Check({{"pattern", "^\\p{L}+$"}}, "\xC3\xA9t\xC3\xA9").empty());  // the u flag
}

TEST_CASE("json_schema_validator: references within the document and to other documents") {
  const json schema =
      json::parse(R"({"$defs":{"n":{"type":"number"}},"properties":{"x":{"$ref":"#/$defs/n"}}})");
  CHECK(Check(schema, {{"x", 1}}).empty());
  CHECK(Check(schema, {{"x", "s"}}) == "/x: must be number");
  const json anchored = json::parse(
      R"({"definitions":{"n":{"$id":"#num","type":"number"}},"items":{"$ref":"#num"}})");
  CHECK(Check(anchored, json::array({1, "a"}), kDraft07) == "/1: must be number");
  const json references = json::parse(R"({"urn:s":{"type":"string"}})");
  CHECK(Check({{"$ref", "urn:s"}}, 1, k2020, &references) == "/: must be string");
  CHECK(Check({{"$ref", "urn:s"}}, "a", k2020, &references).empty());
  const json recursive =
      json::parse(R"({"type":"object","properties":{"next":{"$ref":"#"}},"required":["v"]})");
  CHECK(Check(recursive, json::parse(R"({"v":1,"next":{"v":2,"next":{}}})")) ==
        "/next/next: must have required property 'v'");
  CHECK(Refusal({{"$ref", "#/$defs/missing"}}) ==
        "schema/$ref: can't resolve reference #/$defs/missing");
  CHECK(Refusal({{"$ref", "urn:nowhere"}}) == "schema/$ref: can't resolve reference urn:nowhere");
}

TEST_CASE("json_schema_validator: a referenced document's own references resolve in it") {
  // JSON-Schema-Test-Suite refRemote: "$ref to $ref finds detached $anchor"-like shapes: the
  // target's "#/$defs/leaf" is the target document's, not the caller's (which has no $defs).
  const json references = json::parse(R"({"https://example.com/tree.json":{
      "type":"object","properties":{"v":{"$ref":"#/$defs/leaf"},"kids":{"type":"array",
      "items":{"$ref":"#"}}},"$defs":{"leaf":{"type":"integer"}}}})");
  const json schema = json::parse(R"({"properties":{"root":{"$ref":"https://example.com/tree.json"}}})");
  CHECK(Check(schema, json::parse(R"({"root":{"v":1,"kids":[{"v":2}]}})"), k2020, &references)
            .empty());
  CHECK(Check(schema, json::parse(R"({"root":{"v":1,"kids":[{"v":"x"}]}})"), k2020,
              &references) == "/root/kids/0/v: must be integer");
  const json to_fragment = json::parse(R"({"$ref":"https://example.com/tree.json#/properties/v"})");
  CHECK(Check(to_fragment, "a", k2020, &references) == "/: must be integer");
}

TEST_CASE("json_schema_validator: pattern is JavaScript's with the u flag, as AJV compiles it") {
  // \s and \S are JavaScript's Unicode white space (U+00A0, U+FEFF, U+2003, U+2029, ...).
  for (const char* space : {"\u00a0", "\ufeff", "\u2003", "\u2029", "\u3000", "\\t"}) {
    CAPTURE(space);
    const std::string text = std::string("a") + json::parse(std::string("\"") + space + "\"")
                                                    .get<std::string>() + "b";
    CHECK(Check({{"pattern", "^a\\sb$"}}, text).empty());
    CHECK(Check({{"pattern", "^a\\Sb$"}}, text) == "/: must match pattern \"^a\\Sb$\"");
  }
  CHECK(Check({{"pattern", "^\\d+$"}}, "\u0663") == "/: must match pattern \"^\\d+$\"");
  // The u grammar at compile: an identity escape of a non-syntax character is an error.
  CHECK(Refusal({{"pattern", "\\q"}}) ==
        "schema/pattern: invalid regular expression: invalid escape at offset 0");
  CHECK(Refusal({{"pattern", "a{"}}) ==
        "schema/pattern: invalid regular expression: lone quantifier bracket at offset 1");
  // format: regex is ajv-formats 3.0.1's `new RegExp(s)` (no u flag, as its formats.js reads):
  // [^] and Annex B's \q and a{1 are fine, Python's (?P<n>) and PCRE2's (?>) are not.
  CHECK(Format("regex", "[^]"));
  CHECK(Format("regex", "^(?<year>\\d{4})-\\k<year>$"));
  CHECK(Format("regex", "\\q"));
  CHECK(Format("regex", "a{1"));
  CHECK(Format("regex", "\\1(a)\\2"));
  CHECK_FALSE(Format("regex", "(?P<n>a)"));
  CHECK_FALSE(Format("regex", "(?>a)"));
  CHECK_FALSE(Format("regex", "a**"));
  CHECK_FALSE(Format("regex", "[b-a]"));
}

TEST_CASE("json_schema_validator: unevaluatedProperties as AJV tracks evaluation (2020-12)") {
  const json schema = json::parse(R"({"allOf":[{"properties":{"a":true}}],
                                      "properties":{"b":true},"unevaluatedProperties":false})");
  CHECK(Check(schema, json::parse(R"({"a":1,"b":2})")).empty());
  CHECK(Check(schema, json::parse(R"({"a":1,"c":3})")) ==
        "/: must NOT have unevaluated properties ('c')");
  const json conditional = json::parse(R"({"if":{"properties":{"kind":{"const":"x"}}},
      "then":{"properties":{"x":true}},"properties":{"kind":true},"unevaluatedProperties":false})");
  CHECK(Check(conditional, json::parse(R"({"kind":"x","x":1})")).empty());
  CHECK(Check(conditional, json::parse(R"({"kind":"y","x":1})")) ==
        "/: must NOT have unevaluated properties ('x')");
  CHECK(Check(json::parse(R"({"prefixItems":[true],"unevaluatedItems":false})"),
              json::array({1, 2})) == "/: must NOT have unevaluated items");
}

TEST_CASE("json_schema_validator: the strict compile's refusals") {
  CHECK(Refusal({{"colour", "red"}}) ==
        "schema: unknown keyword 'colour' (AJV's strict mode refuses it)");
  CHECK(Refusal({{"properties", {{"a", {{"typ", "string"}}}}}}) ==
        "schema/properties/a: unknown keyword 'typ' (AJV's strict mode refuses it)");
  CHECK(Refusal({{"type", "int"}}) ==
        "schema/type: must be a type name or an array of distinct type names");
  CHECK(Refusal({{"minLength", -1}}) == "schema/minLength: must be a non-negative integer");
  CHECK(Refusal({{"multipleOf", 0}}) == "schema/multipleOf: must be a number greater than 0");
  CHECK(Refusal({{"required", {"a", "a"}}}) ==
        "schema/required: must be an array of distinct strings");
  CHECK(Refusal({{"if", {{"type", "string"}}}}) ==
        "schema: \"if\" without \"then\" and \"else\" is ignored (strict mode)");
  CHECK(Refusal({{"then", true}}) == "schema: \"then\" without \"if\" is ignored");
  CHECK(Refusal({{"nullable", true}}) == "schema: \"nullable\" cannot be used without \"type\"");
  CHECK(Refusal({{"anyOf", json::array()}}) ==
        "schema/anyOf: must be a non-empty array of schemas");
  CHECK(Refusal(1) == "schema: a schema must be an object or a boolean");
  CHECK(Refusal({{"pattern", "("}}).rfind("schema/pattern: invalid regular expression: ", 0) == 0);
  CHECK(Refusal({{"format", "colour"}}) == "schema/format: unknown format \"colour\"");
  CHECK(Refusal({{"format", "colour"}},
                JsonSchemaProfile::AjvStrict(JsonSchemaDialect::k2020, false)) == "");
  json deep = true;
  for (int i = 0; i < 130; ++i) deep = json{{"not", deep}};
  CHECK(Refusal(deep).find(": schema nested deeper than 128 levels") != std::string::npos);
}

TEST_CASE("json_schema_validator: the dialects know different keywords") {
  CHECK(Refusal({{"additionalItems", false}}) ==
        "schema: unknown keyword 'additionalItems' (AJV's strict mode refuses it)");
  CHECK(Refusal({{"prefixItems", {true}}}, kDraft07) ==
        "schema: unknown keyword 'prefixItems' (AJV's strict mode refuses it)");
  CHECK(Refusal({{"additionalItems", false}}, kDraft07) ==
        "schema: \"additionalItems\" is ignored when \"items\" is not an array of schemas");
  const json tuple = json::parse(R"({"items":[{"type":"string"}],"additionalItems":false})");
  CHECK(Check(tuple, json::array({"a"}), kDraft07).empty());
  CHECK(Check(tuple, json::array({"a", 1}), kDraft07) == "/1: the false schema");
  CHECK(Check(tuple, json::array({1}), kDraft07) == "/0: must be string");
  // Draft-07 counts `contains` once; minContains is 2020-12's.
  CHECK(Check(json::parse(R"({"contains":{"type":"string"},"minContains":2})"),
              json::array({"a", 1})) == "/: must contain the required number of valid items");
}

TEST_CASE("json_schema_validator: date, time and date-time as ajv-formats checks them") {
  CHECK(Format("date", "2024-02-29"));
  CHECK_FALSE(Format("date", "2023-02-29"));
  CHECK_FALSE(Format("date", "1900-02-29"));
  CHECK(Format("date", "2000-02-29"));
  CHECK_FALSE(Format("date", "2024-04-31"));
  CHECK_FALSE(Format("date", "2024-13-01"));
  CHECK_FALSE(Format("date", "2024-1-01"));
  CHECK(Format("date-time", "2024-05-01T12:30:00Z"));
  CHECK(Format("date-time", "2024-05-01t12:30:00.123+02:00"));
  CHECK(Format("date-time", "2024-05-01 12:30:00z"));       // split on /t|\s/i
  CHECK_FALSE(Format("date-time", "2024-05-01T12:30:00"));  // a time zone is required
  CHECK(Format("iso-date-time", "2024-05-01T12:30:00"));
  CHECK_FALSE(Format("date-time", "2024-05-01T24:00:00Z"));
  CHECK_FALSE(Format("date-time", "2024-05-01T12:30:00+24:00"));
  // Leap seconds: 23:59:60 in UTC only.
  CHECK(Format("date-time", "2016-12-31T23:59:60Z"));
  CHECK(Format("date-time", "2016-12-31T22:59:60-01:00"));
  CHECK(Format("date-time", "2017-01-01T00:29:60+00:30"));
  CHECK_FALSE(Format("date-time", "2016-12-31T23:59:60+01:00"));
  CHECK_FALSE(Format("date-time", "2016-12-31T12:59:60Z"));
  CHECK(Format("time", "23:59:60Z"));
  CHECK_FALSE(Format("time", "23:59:61Z"));
  CHECK_FALSE(Format("time", "12:00:00"));
  CHECK(Format("iso-time", "12:00:00"));
  CHECK(Check({{"format", "date"}}, "2023-02-29") == "/: must match format \"date\"");
}

TEST_CASE("json_schema_validator: the other formats, and format assertions off") {
  CHECK(Format("email", "a.b@example.co"));
  CHECK_FALSE(Format("email", "a@b"));
  CHECK(Format("ipv4", "192.168.0.1"));
  CHECK_FALSE(Format("ipv4", "256.0.0.1"));
  CHECK(Format("ipv6", "::1"));
  CHECK(Format("uuid", "123e4567-e89b-12d3-a456-426614174000"));
  CHECK_FALSE(Format("uuid", "123e4567-e89b-12d3-a456-42661417400"));
  CHECK(Format("uri", "https://example.com/a?b#c"));
  CHECK_FALSE(Format("uri", "example"));
  CHECK(Format("duration", "P1Y2M3DT4H"));
  CHECK_FALSE(Format("duration", "P"));
  CHECK(Format("regex", "^a+$"));
  CHECK_FALSE(Format("regex", "("));
  CHECK(Check({{"format", "int32"}}, 2147483647).empty());
  CHECK(Check({{"format", "int32"}}, 2147483648.0) == "/: must match format \"int32\"");
  CHECK(Check({{"format", "date"}}, 5).empty());  // formats apply to their own type only
  const auto off = JsonSchemaProfile::AjvStrict(JsonSchemaDialect::k2020, false);
  CHECK(Check({{"format", "date"}}, "2023-02-29", off).empty());
  CHECK(Check({{"format", "colour"}}, "red", off).empty());
}

TEST_CASE("json_schema_validator: JsonPointerToken escapes ~ and /") {
  CHECK(JsonPointerToken("a/b~c") == "a~1b~0c");
  CHECK(JsonPointerToken("") == "");
  CHECK(JsonPointerToken("~1") == "~01");
}

}  // namespace
}  // namespace evalrun
