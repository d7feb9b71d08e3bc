// JavaScript's values and text (core/js_value.h): the expected strings are what Node prints for the
// same values (String(x), JSON.stringify, util.isDeepStrictEqual), worked out from ECMA-262.
#include "core/js_value.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "tests/support/catch.h"

#include "core/canonical_json.h"

namespace evalrun::js {
namespace {

TEST_CASE("js: Number.prototype.toString", "[core][js]") {
  CHECK(JsNumberString(5230.0) == "5230");
  CHECK(JsNumberString(-0.0) == "0");
  CHECK(JsNumberString(0.1) == "0.1");
  CHECK(JsNumberString(1e21) == "1e+21");
  CHECK(JsNumberString(1e20) == "100000000000000000000");
  CHECK(JsNumberString(1.5e-7) == "1.5e-7");
  CHECK(JsNumberString(0.000001) == "0.000001");
  CHECK(JsNumberString(123.456) == "123.456");
  CHECK(JsNumberString(std::nan("")) == "NaN");
  CHECK(JsNumberString(-std::numeric_limits<double>::infinity()) == "-Infinity");
}

TEST_CASE("js: canonical JSON prints numbers with the same Number::toString", "[core][js]") {
  std::mt19937_64 random(7);
  std::uniform_int_distribution<uint64_t> bits;
  int compared = 0;
  for (int i = 0; i < 20000; ++i) {
    const uint64_t b = bits(random);
    double x;
    static_assert(sizeof x == sizeof b);
    std::memcpy(&x, &b, sizeof x);
    if (!std::isfinite(x)) continue;
    REQUIRE(EcmaNumber(x) == JsNumberString(x));
    ++compared;
  }
  CHECK(compared > 19000);
  CHECK_THROWS_WITH(EcmaNumber(std::nan("")), "canonical JSON: NaN has no JSON rendering");
}

TEST_CASE("js: JSON.stringify order and numbers, String(v), equality", "[core][js]") {
  CHECK(JsStringify(ordered_json::parse(R"({"b":1,"10":2,"a":3,"2":4,"01":5})")) ==
        R"({"2":4,"10":2,"b":1,"a":3,"01":5})");
  CHECK(JsStringify(ordered_json::parse(R"([5230.0, "é", null, true])")) == R"([5230,"é",null,true])");
  CHECK(JsToString(ordered_json::parse("[1,[2,3]]")) == "1,2,3");
  CHECK(JsToString(ordered_json(nullptr)) == "null");
  const ordered_json a = ordered_json::parse(R"({"x":[1,{"y":2}],"z":0})");
  const ordered_json b = ordered_json::parse(R"({"z":0,"x":[1,{"y":2}]})");
  const ordered_json c = ordered_json::parse(R"({"z":-0.0,"x":[1,{"y":2}]})");
  CHECK(DeepEqual(&a, &b));
  CHECK_FALSE(DeepEqual(&a, &c));  // Object.is(0, -0) is false
  CHECK_FALSE(DeepEqual(&a, nullptr));
  CHECK(Truthy(ordered_json("0")));
  CHECK_FALSE(Truthy(ordered_json(0)));
  CHECK_FALSE(Truthy(ordered_json("")));
  CHECK(GetPath(a, "x/1/y") == ordered_json(2));
  CHECK(GetPath(a, "x/5/y") == std::nullopt);
}

TEST_CASE("js: text as TextDecoder and String.prototype.trim see it", "[core][js]") {
  CHECK(ToWellFormedUtf8("a\xff" "b") == "a\xEF\xBF\xBD" "b");
  CHECK(ToWellFormedUtf8("\xE2\x82") == "\xEF\xBF\xBD");  // a cut sequence is one U+FFFD
  CHECK(JsTrim("\xE3\x80\x80 x\t\n") == "x");               // U+3000 is JavaScript white space
  CHECK(IsJsSpace(0xFEFF));
  CHECK_FALSE(IsJsSpace(0x200B));
  CHECK(JsRound(2.5) == 3);
  std::string out;
  AppendUtf8(out, 0xD800);  // a lone surrogate as WTF-8, as JSON.parse keeps it
  CHECK(out == "\xED\xA0\x80");
}

}  // namespace
}  // namespace evalrun::js
