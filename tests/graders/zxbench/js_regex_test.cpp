// JavaScript regular expressions on PCRE2 (graders/zxbench/js_regex.h): what a RegExp source
// means in V8 (no u flag), checked through the translation and both ways of matching it.
#include "graders/zxbench/js_regex.h"

#include <string>

#include "tests/support/catch.h"

namespace evalrun::zx {
namespace {

Regex::Result Line(const std::string& pattern, std::string_view subject,
                   std::vector<std::optional<std::string_view>>* groups = nullptr) {
  std::string error;
  const auto regex = LineRegex::Compile(pattern, &error);
  REQUIRE(regex != nullptr);
  uint64_t steps = kLineStepBudget;
  return regex->Exec(subject, &steps, groups);
}

TEST_CASE("js_regex: \\s, '.' and escapes mean what they mean in JavaScript", "[graders][zxbench]") {
  CHECK(Line(R"(^a\sb$)", "a\xE3\x80\x80" "b") == Regex::Result::kMatch);  // U+3000 is \s
  CHECK(Line(R"(^a\sb$)", "a\xE2\x80\x8B" "b") == Regex::Result::kNoMatch);  // U+200B is not
  CHECK(Line("^a.b$", "a\nb") == Regex::Result::kNoMatch);
  CHECK(Line("^a.b$", "a\xE2\x80\xA8" "b") == Regex::Result::kNoMatch);  // U+2028 ends a line
  CHECK(Line("^a.b$", "a-b") == Regex::Result::kMatch);
  CHECK(Line(R"(^\x41\u0042\103$)", "ABC") == Regex::Result::kMatch);  // hex, \u, legacy octal
  CHECK(Line(R"(^a{,2}$)", "a{,2}") == Regex::Result::kMatch);  // not a quantifier: literal
  std::vector<std::optional<std::string_view>> groups;
  REQUIRE(Line(R"((\d+)-(x)?-\1)", "12--12", &groups) == Regex::Result::kMatch);
  REQUIRE(groups.size() == 3);
  CHECK(groups[1] == std::optional<std::string_view>("12"));
  CHECK(groups[2] == std::nullopt);  // a group that did not take part
}

TEST_CASE("js_regex: patterns JavaScript rejects are errors", "[graders][zxbench]") {
  std::string error;
  CHECK_FALSE(TranslateJsRegex("a**", &error));
  CHECK_FALSE(error.empty());
  error.clear();
  CHECK_FALSE(TranslateJsRegex("(?<x", &error));
  CHECK_FALSE(error.empty());
  error.clear();
  CHECK(LineRegex::Compile("ab\\", &error) == nullptr);
  CHECK_FALSE(error.empty());
}

TEST_CASE("js_regex: the step budget stops a catastrophic pattern", "[graders][zxbench]") {
  std::string error;
  const auto regex = LineRegex::Compile("^(a+)+$", &error);
  REQUIRE(regex != nullptr);
  uint64_t steps = 100000;
  CHECK(regex->Exec(std::string(40, 'a') + "b", &steps) == Regex::Result::kGaveUp);
  CHECK(steps == 0);
  const auto format = CompileFormat("^[A-Z]{3}$", true, &error);
  REQUIRE(format != nullptr);
  CHECK(format->Match("abc", true) == Regex::Result::kMatch);  // the i flag
  CHECK(MatchWithJit("^[A-Z]{3}$", false, "ABC") == Regex::Result::kMatch);
}

}  // namespace
}  // namespace evalrun::zx
