// graders/zxbench/js_json: JSON as JavaScript's JSON.parse reads it (duplicate keys, -0, numbers
// beyond double range, lone surrogates as WTF-8, the nesting limit), the error texts, and the
// JavaScript value semantics (String.prototype.length, util.isDeepStrictEqual, ToBoolean).
#include "tests/support/catch.h"

#include <cmath>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "graders/zxbench/js_json.h"

namespace evalrun::zx {
namespace {

using nlohmann::json;

json Parsed(const std::string& text) {
  std::string error;
  const auto value = ParseJsJson(text, &error);
  INFO(text << " -> " << error);
  REQUIRE(value.has_value());
  return *value;
}

std::string ErrorOf(const std::string& text) {
  std::string error;
  const auto value = ParseJsJson(text, &error);
  INFO(text);
  REQUIRE_FALSE(value.has_value());
  return error;
}

TEST_CASE("js_json: the last of duplicate keys wins, as in JSON.parse") {
  const json value = Parsed(R"({"a": 1, "b": 2, "a": {"c": true}})");
  CHECK(value.size() == 2);
  CHECK(value.at("a") == json{{"c", true}});
  CHECK(value.at("b") == 2);
  CHECK(Parsed(R"({"k":"first","k":"second"})") == json{{"k", "second"}});
}

TEST_CASE("js_json: escapes, surrogate pairs and lone surrogates (kept as WTF-8)") {
  CHECK(Parsed(R"("\"\\\/\b\f\n\r\t")") == "\"\\/\b\f\n\r\t");
  CHECK(Parsed(R"("\u00e9")") == "\xC3\xA9");
  CHECK(Parsed(R"("\ud83d\ude00")") == "\xF0\x9F\x98\x80");  // U+1F600
  CHECK(Parsed(R"("\ud800")") == "\xED\xA0\x80");            // a lone high surrogate
  CHECK(Parsed(R"("\udc00x")") == "\xED\xB0\x80x");          // a lone low surrogate
  // A high surrogate followed by something other than a low one stays lone.
  CHECK(Parsed(R"("\ud800\u0041")") ==
        "\xED\xA0\x80"
        "A");
  CHECK(Parsed("\"\xC3\xA9 raw\"") == "\xC3\xA9 raw");
}

TEST_CASE("js_json: numbers are JavaScript doubles, -0 and out-of-range literals kept") {
  const json minus_zero = Parsed("-0");
  REQUIRE(minus_zero.is_number_float());
  CHECK(minus_zero.get<double>() == 0.0);
  CHECK(std::signbit(minus_zero.get<double>()));
  CHECK(Parsed("0").is_number_integer());
  CHECK(Parsed("123").get<int64_t>() == 123);
  CHECK(Parsed("1.0").is_number_float());
  CHECK(Parsed("1.5e2").get<double>() == 150.0);
  CHECK(Parsed("9007199254740991").is_number_integer());
  CHECK(Parsed("9007199254740993").is_number_float());  // 2^53 + 1: no longer exact
  CHECK(Parsed("9007199254740993").get<double>() == 9007199254740992.0);
  CHECK(Parsed("1e400").get<double>() == HUGE_VAL);
  CHECK(Parsed("-1e400").get<double>() == -HUGE_VAL);
  CHECK(Parsed("123456789e999").get<double>() == HUGE_VAL);
  const json tiny = Parsed("1e-400");
  CHECK(tiny.get<double>() == 0.0);
  CHECK_FALSE(std::signbit(tiny.get<double>()));
  CHECK(std::signbit(Parsed("-1e-400").get<double>()));
}

TEST_CASE("js_json: refusals name the problem and its byte position") {
  CHECK(ErrorOf("") == "unexpected end of JSON input at position 0");
  CHECK(ErrorOf("   ") == "unexpected end of JSON input at position 3");
  CHECK(ErrorOf("[1,]") == "unexpected token at position 3");
  CHECK(ErrorOf("{\"a\":1} x") == "unexpected text after the JSON value at position 8");
  CHECK(ErrorOf("01") == "unexpected text after the JSON value at position 1");
  CHECK(ErrorOf("{'a':1}") == "expected a property name at position 1");
  CHECK(ErrorOf("{\"a\" 1}") == "expected ':' at position 5");
  CHECK(ErrorOf("{\"a\":1 \"b\":2}") == "expected ',' or '}' at position 7");
  CHECK(ErrorOf("[1 2]") == "expected ',' or ']' at position 3");
  CHECK(ErrorOf("\"abc") == "unterminated string at position 4");
  CHECK(ErrorOf("\"a\x01\"") == "bad control character in string literal at position 2");
  CHECK(ErrorOf(R"("\u12G4")") == "bad Unicode escape at position 3");
  CHECK(ErrorOf(R"("\x")") == "bad escaped character at position 3");
  CHECK(ErrorOf("-") == "no number after minus sign at position 1");
  CHECK(ErrorOf("1.") == "unterminated fractional number at position 2");
  CHECK(ErrorOf("1e+") == "exponent part is missing a number at position 3");
  CHECK(ErrorOf("tru") == "unexpected token at position 0");
  CHECK(ErrorOf("NaN") == "unexpected token at position 0");
  // JSON's whitespace is space, tab, LF and CR only: U+00A0 is a token JSON.parse refuses.
  CHECK(ErrorOf("\xC2\xA0"
                "1") == "unexpected token at position 0");
  CHECK(Parsed(" \t\r\n1 \n") == 1);
}

TEST_CASE("js_json: nesting up to 512 levels is read, deeper is refused before it is built") {
  CHECK(Parsed(std::string(512, '[') + std::string(512, ']')).is_array());
  CHECK(ErrorOf(std::string(513, '[') + std::string(513, ']')) ==
        "JSON nested deeper than 512 levels at position 512");
  std::string objects;
  for (int i = 0; i < 513; ++i) objects += "{\"a\":";
  CHECK(ErrorOf(objects + "1" + std::string(513, '}')) ==
        "JSON nested deeper than 512 levels at position 2560");
}

TEST_CASE("js_json: Utf16Length counts UTF-16 code units") {
  CHECK(Utf16Length("") == 0);
  CHECK(Utf16Length("abc") == 3);
  CHECK(Utf16Length("\xC3\xA9") == 1);          // é
  CHECK(Utf16Length("\xE2\x82\xAC") == 1);      // €
  CHECK(Utf16Length("\xF0\x9F\x98\x80") == 2);  // a surrogate pair
  CHECK(Utf16Length("\xED\xA0\x80") == 1);      // a lone surrogate (WTF-8)
}

TEST_CASE("js_json: DeepStrictEqual is Node's util.isDeepStrictEqual on JSON values") {
  CHECK(DeepStrictEqual(Parsed("1"), Parsed("1.0")));
  CHECK_FALSE(DeepStrictEqual(Parsed("0"), Parsed("-0")));  // Object.is
  CHECK(DeepStrictEqual(Parsed("-0"), Parsed("-0.0")));
  CHECK_FALSE(DeepStrictEqual(json("1"), json(1)));
  CHECK_FALSE(DeepStrictEqual(json(nullptr), json(false)));
  CHECK(DeepStrictEqual(Parsed(R"({"a":[1,{"b":null}],"c":"x"})"),
                        Parsed(R"({"c":"x","a":[1,{"b":null}]})")));
  CHECK_FALSE(DeepStrictEqual(Parsed("[1,2]"), Parsed("[2,1]")));
  CHECK_FALSE(DeepStrictEqual(Parsed(R"({"a":1})"), Parsed(R"({"b":1})")));
  CHECK_FALSE(DeepStrictEqual(Parsed(R"({"a":1})"), Parsed(R"({"a":1,"b":2})")));
  CHECK_FALSE(DeepStrictEqual(Parsed("[]"), Parsed("{}")));
}

TEST_CASE("js_json: Truthy is JavaScript's ToBoolean") {
  CHECK_FALSE(Truthy(json(nullptr)));
  CHECK_FALSE(Truthy(json(false)));
  CHECK_FALSE(Truthy(json(0)));
  CHECK_FALSE(Truthy(Parsed("-0")));
  CHECK_FALSE(Truthy(json("")));
  CHECK(Truthy(json("0")));
  CHECK(Truthy(json(0.5)));
  CHECK(Truthy(json::array()));
  CHECK(Truthy(json::object()));
}

}  // namespace
}  // namespace evalrun::zx
