// Date.parse as V8 computes it (graders/zxbench/js_date.h), against Node 20's own answers
// (tests/fixtures/js_date_node20.json, made with TZ=UTC so that local time is UTC).
#include "graders/zxbench/js_date.h"

#include <string>

#include <nlohmann/json.hpp>

#include "tests/support/catch.h"
#include "tests/support/fixtures.h"

namespace evalrun::zx {
namespace {

TEST_CASE("js_date: RSS and ISO dates parse as in Node, other text is NaN", "[graders][zxbench]") {
  // RFC 822 as RSS writes it, with a numeric zone, GMT or a US zone name.
  CHECK(JsDateParse("Wed, 20 Mar 2024 10:00:00 +0800") == 1710900000000.0);
  CHECK(JsDateParse("Wed, 20 Mar 2024 10:00:00 GMT") == 1710928800000.0);
  CHECK(JsDateParse("Sat, 13 Jan 2024 09:00:00 EST") == JsDateParse("13 Jan 2024 14:00 GMT"));
  // ES5 ISO: a date alone is UTC; hours 24:00 only; ±hhmm and long fractions are V8's own.
  CHECK(JsDateParse("2024-03-20") == 1710892800000.0);
  CHECK(JsDateParse("2024-03-20T24:00:00Z") == 1710979200000.0);
  CHECK_FALSE(JsDateParse("2024-03-20T24:00:01Z"));
  CHECK(JsDateParse("2024-03-20T10:00:00.123456+0800") == 1710900000123.0);
  // V8's legacy reading: words before the first number are skipped, a year not given is 2001,
  // a day 32 or more is a year.
  CHECK(JsDateParse("星期三 Mar 20") == JsDateParse("2001-03-20T00:00:00Z"));
  CHECK(JsDateParse("March 2024") == JsDateParse("2024-03-01T00:00:00Z"));
  // Not dates: a word after the first number, Chinese dates, an hour past 12 with pm, a day
  // outside its month's range of 1-31, a lone separator.
  CHECK_FALSE(JsDateParse("Wed, 20 Mar 2024 10:00:00 +0800 extra"));
  CHECK_FALSE(JsDateParse("2024年3月20日"));
  CHECK_FALSE(JsDateParse("13:00 pm Jan 1 2024"));
  CHECK_FALSE(JsDateParse("Mon, 32 Mar 2024 10:00:00 GMT 5"));
  CHECK_FALSE(JsDateParse(""));
  CHECK_FALSE(JsDateParse("abc"));
  // The ends of ECMAScript's time range.
  CHECK(JsDateParse("+275760-09-13T00:00:00Z") == 8.64e15);
  CHECK_FALSE(JsDateParse("+275760-09-13T00:00:00.001Z"));
}

TEST_CASE("js_date: every case Node 20 answered gives the same value or NaN",
          "[graders][zxbench]") {
  const nlohmann::json fixture =
      nlohmann::json::parse(testing::ReadFixture("js_date_node20.json"));
  const auto& cases = fixture.at("cases");
  REQUIRE(cases.size() > 3000);
  size_t same = 0, dates = 0;
  for (const auto& c : cases) {
    const std::string text = c[0].get<std::string>();
    const auto ours = JsDateParse(text);
    const bool nan = c[1].is_null();
    dates += nan ? 0 : 1;
    const bool equal = nan ? !ours.has_value() : (ours && *ours == c[1].get<double>());
    if (!equal) {
      INFO(nlohmann::json(text).dump() << ": Node " << c[1].dump() << ", evalrun "
                                       << (ours ? std::to_string(*ours) : "NaN"));
      CHECK(equal);
    }
    same += equal ? 1 : 0;
  }
  CHECK(same == cases.size());
  CHECK(dates > 400);
}

}  // namespace
}  // namespace evalrun::zx
