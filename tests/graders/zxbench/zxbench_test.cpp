// Parity of evalrun's zx-bench rule graders with zx-bench's own scoring (issue 4), and hostile
// outputs. Each expected score was derived by reading zx-bench's evaluator sources
// (suncityldp/zx-bench), not by running evalrun; the derivation is written next to it.
//   E = packages/core/src/evaluators/exactAnswerLine.ts at 098246a990ac7cf5 (exact_answer_v6,
//       compatible with the fixture's exact_answer_v4); line numbers of that file.
//   R = packages/core/src/evaluators/responseState.ts, formatValidScore (L20-22): 60 when
//       truncated, else 100.
//   D = packages/core/src/evaluators/dataExtraction.ts, json_atomic_v3; line numbers of that file.
// Key places: E L30-43 empty output -> 0; E L87-97 no answer line in strict mode -> format 0;
// E L190-194 extractAnswerLine (last non-empty line, /^[ \t]*(\*\*)?(ANSWER|最终答案|答案)(\*\*)?
// [ \t]*[:：][ \t]*(.*)$/i, "**" removed); E L208-217 normalizeAnswer (NFKC, "**", \s, brackets,
// ，；, trailing 。., thousands separators, arrows); E L240-252 canonicalDecimal; E L285-304
// compareStrictAnswer (numeric: ^[¥￥]?NUM(万|亿)?(元|种|次|个|件|%)?$, unit must equal
// answerUnit when written, 万/亿 only with 元); E L142-145 total = round(0.1 format + 0.9 acc).
// D L31-50 no JSON (extractJson, D function extractJson) -> 0; D L56-60 leaves of
// requirements.expected; D L77-86 field accuracy (compareFrozenValue D L248-251: numbers must be
// JSON numbers, Object.is); D L101-108 completeness over requiredFields; D L114-136 schema
// (fieldTypes incl. "$", 0 when allowAdditionalFields is false and the shape differs);
// D L138-141 discipline (checkStrictJsonOnly: the trimmed output is JSON); D L143-148 truncated
// halves completeness; D L151-157 total = round(.2 f + .4 a + .2 c + .1 s + .1 d).
#include "tests/support/catch.h"

#include <chrono>
#include <string>

#include <nlohmann/json.hpp>

#include "graders/builtin.h"
#include "graders/grader.h"
#include "tests/support/fixtures.h"

namespace evalrun {
namespace {

using nlohmann::json;

json FixtureEntry(const std::string& id) {
  const json bank = json::parse(testing::ReadFixture("zx-bench/fixtures.json"));
  for (const auto& entry : bank) {
    if (entry.value("id", "") == id) return entry;
  }
  throw std::runtime_error("fixture entry " + id + " missing");
}

Grade RunGrader(const Grader& grader, const json& entry, const std::string& text,
                bool truncated = false) {
  Answer answer;
  answer.text = text;
  answer.truncated = truncated;
  return grader.Run(entry, answer, GradeContext{});
}

int ZxScore(const Grade& grade) { return grade.evidence.at("zx_score").get<int>(); }

struct Case {
  const char* name;
  std::string output;
  bool truncated;
  int zx_score;
};

void CheckCases(const Grader& grader, const json& entry, const std::vector<Case>& cases) {
  for (const auto& c : cases) {
    SECTION(c.name) {
      const Grade grade = RunGrader(grader, entry, c.output, c.truncated);
      INFO(grade.reason << " " << grade.evidence.dump());
      CHECK(grade.status == GradeStatus::kGraded);
      CHECK(ZxScore(grade) == c.zx_score);
      CHECK(grade.score == Approx(c.zx_score / 100.0));
      CHECK(grade.passed == (c.zx_score >= 60));
    }
  }
}

// ---- exact_answer_line ---------------------------------------------------------------------------

TEST_CASE("zx exact_answer_line: RM-CN-023 scores as zx-bench scores it", "[graders][zxbench]") {
  const auto grader = MakeZxExactAnswerLineGrader();
  REQUIRE(grader != nullptr);
  const json entry = FixtureEntry("RM-CN-023");  // answer 12, answerUnit 种, strict
  const std::string reasoning = "第一个节目是歌唱（2种），最后是魔术，中间4个位置排列并排除相邻。\n";
  CheckCases(*grader, entry, {
      // correct: format 100 (R); last line "ANSWER: 12种" -> "12种" (E L190-194); numeric branch
      // m = 12, unit 种 == answerUnit; canonicalDecimal("12") = "12e0" = canonicalDecimal("12")
      // -> accuracy 100 (E L287-294) -> round(0.1*100 + 0.9*100) = 100.
      {"correct", reasoning + "ANSWER: 12种", false, 100},
      // wrong: "24e0" != "12e0" -> accuracy 0 -> round(0.1*100 + 0.9*0) = 10.
      {"wrong", reasoning + "ANSWER: 24种", false, 10},
      // malformed: the last non-empty line has no ANSWER label -> extractAnswerLine null ->
      // strict: format_valid = 0, accuracy 0 (E L90-97) -> round(0) = 0.
      {"malformed", reasoning + "所以共有12种不同的排列方案。", false, 0},
      // truncated after the answer line: format 60 (R) -> round(6.000000000000001 + 90) = 96.
      {"truncated with answer", reasoning + "ANSWER: 12种", true, 96},
      // truncated mid-reasoning: no answer line -> format forced to 0 (E L91) -> 0.
      {"truncated before answer", "第一个节目必须是歌唱，因此共有", true, 0},
      // formatted differently: "**答案**：１２ 种" matches the label (bold, full-width colon);
      // NFKC makes "12 种", \s removed -> "12种" (E L208-209) -> 100.
      {"bold label, full-width colon and digits", reasoning + "**答案**：１２ 种", false, 100},
      // "[12]种": brackets removed (E L212) -> "12种" -> 100.
      {"template brackets kept", reasoning + "ANSWER: [12]种", false, 100},
      // no unit written: the unit is only checked when one is written (E L290) -> 100.
      {"unit omitted", reasoning + "ANSWER: 12", false, 100},
      // wrong unit 个 != 种 -> accuracy 0 (E L290) -> 10.
      {"wrong unit", reasoning + "ANSWER: 12个", false, 10},
      // lower-case label (regex flag i), trailing 。 removed (E L213), "12.0" -> digits "120",
      // one trailing zero: "12e0" (E L240-252) -> 100.
      {"lower case, 12.0 and full stop", reasoning + "answer: 12.0种。", false, 100},
      // an explanation after the answer line: the last line is not an answer -> format 0 -> 0.
      {"note after the answer", reasoning + "ANSWER: 12种\n（注：按约束逐一枚举）", false, 0},
      // two candidates: "12种或24种" fails the numeric pattern -> 10.
      {"two candidates", reasoning + "ANSWER: 12种 或 24种", false, 10},
      // CRLF line ends: split(/\r?\n/) -> same as correct -> 100.
      {"CRLF", "推导\r\nANSWER: 12种\r\n", false, 100},
      // a code fence around the answer: last line is "```" -> format 0 -> 0.
      {"fenced", "```\nANSWER: 12种\n```", false, 0},
  });
}

json WithGold(json entry, json answer, json unit) {
  entry["requirements"]["answer"] = std::move(answer);
  if (unit.is_null()) {
    entry["scoring"].erase("answerUnit");
  } else {
    entry["scoring"]["answerUnit"] = std::move(unit);
  }
  return entry;
}

TEST_CASE("zx exact_answer_line: hostile and tricky outputs", "[graders][zxbench]") {
  const auto grader = MakeZxExactAnswerLineGrader();
  const json base = FixtureEntry("RM-CN-023");
  const json yuan_1234_5 = WithGold(base, 1234.5, "元");
  const json yuan_15000 = WithGold(base, 15000, "元");
  const json kinds_15000 = WithGold(base, 15000, "种");
  const json plain_1200 = WithGold(base, 1200, nullptr);
  const json order = WithGold(base, "顺序=J3-J1-J4-J2-J5，最短完工时间=23小时", nullptr);
  const json growth = WithGold(base, "结论=错误，今年=75万，增长率=-25%，错误类型=A", nullptr);
  json variants = WithGold(base, "A", nullptr);
  variants["requirements"]["acceptedVariants"] = {"甲", 7};
  json first = base;
  first["answerFirst"] = true;
  json river = WithGold(base, 7, nullptr);
  river["requirements"]["solutionVerifier"] = "river_crossing";

  struct Row {
    const char* name;
    const json* entry;
    std::string output;
    int zx_score;
  };
  const std::vector<Row> rows = {
      // 10 MB of reasoning, answer on the last line -> 100.
      {"10 MB output", &base, std::string(10 << 20, 'x') + "\nANSWER: 12种", 100},
      // invalid UTF-8 in the reasoning becomes U+FFFD, as JavaScript's decoder makes it -> 100.
      {"invalid UTF-8 before", &base, "\xff\xfe推导\xc3\nANSWER: 12种", 100},
      // invalid UTF-8 inside the answer: "12\uFFFD种" fails the numeric pattern -> 10.
      {"invalid UTF-8 inside", &base, "ANSWER: 12\xff种", 10},
      // full-width colon is accepted by the label pattern -> 100.
      {"full-width colon", &base, "ANSWER：12种", 100},
      // a full-width label is not: the label is matched before NFKC -> format 0 -> 0.
      {"full-width label", &base, "ＡＮＳＷＥＲ: 12种", 0},
      // "1,234.50元": a valid thousands separator is dropped (E L215) -> "1234.50元"
      // -> "12345e-1" both sides -> 100.
      {"1,234.50", &yuan_1234_5, "ANSWER: 1,234.50元", 100},
      // with ￥ in front (NFKC ¥, allowed by the pattern) -> 100.
      {"yen sign", &yuan_1234_5, "ANSWER: ￥1,234.50", 100},
      // "1,23,4.5" is not a valid grouping, the commas stay, the pattern fails -> 10.
      {"bad grouping", &yuan_1234_5, "ANSWER: 1,23,4.5元", 10},
      // 1.5万元: shift 4 -> "15e3" = canonical(15000) -> 100.
      {"wan", &yuan_15000, "ANSWER: 1.5万元", 100},
      // 0.00015亿元: digits "15", exponent -5 + 8 = 3 -> "15e3" -> 100.
      {"yi", &yuan_15000, "ANSWER: 0.00015亿元", 100},
      // 万 with a unit other than 元 -> accuracy 0 (E L290) -> 10.
      {"wan with kinds", &kinds_15000, "ANSWER: 1.5万种", 10},
      // bold around the whole line: "12种**" -> "**" removed -> 100.
      {"bold line", &base, "**ANSWER: 12种**", 100},
      // bold value -> 100.
      {"bold value", &base, "ANSWER: **12**种", 100},
      // Arabic-Indic digits are not \d and NFKC keeps them -> 10.
      {"non-ASCII digits", &base, "ANSWER: ١٢种", 10},
      // NFKC: circled twelve becomes "12" -> 100.
      {"NFKC circled number", &base, "ANSWER: ⑫种", 100},
      // NFKC: "…" becomes "...", removed as trailing dots -> 100.
      {"NFKC ellipsis", &base, "ANSWER: 12种…", 100},
      // exponent notation: "1.2e3" -> "12e2" = canonical(1200) -> 100.
      {"1.2e3", &plain_1200, "ANSWER: 1.2e3", 100},
      {"1.2E+3", &plain_1200, "ANSWER: 1.2E+3", 100},
      // text gold (zx-bench's own exactAnswerSeparators.test.ts): ',' and '-' are the same
      // separator in the skeleton -> 100; a different order -> 10.
      {"separators", &order, "ANSWER: 顺序=J3,J1,J4,J2,J5，最短完工时间=23小时", 100},
      {"order differs", &order, "ANSWER: 顺序=J1,J3,J4,J2,J5，最短完工时间=23小时", 10},
      {"number differs", &order, "ANSWER: 顺序=J3,J1,J4,J2,J5，最短完工时间=24小时", 10},
      // the minus sign is part of the number, not a separator -> 10 without it.
      {"sign kept", &growth, "ANSWER: 结论=错误，今年=75万，增长率=25%，错误类型=A", 10},
      {"sign equal", &growth, "ANSWER: 结论=错误，今年=75万，增长率=-25%，错误类型=A", 100},
      // acceptedVariants (strings only) also count -> 100.
      {"accepted variant", &variants, "ANSWER: 甲", 100},
      {"not a variant", &variants, "ANSWER: 7", 10},
      // answerFirst: the first line's answer is a candidate too; the last line is none, so the
      // candidates are ["12种"] and format stays 100 -> 100.
      {"answer first", &first, "答案是12种\n推导：第一个节目是歌唱……", 100},
      // whitespace-only lines after the answer are skipped -> 100.
      {"trailing blank lines", &base, "ANSWER: 12种\n \n\t\n", 100},
      // river_crossing veto (E L126-129, validRiverCrossing E L219-234): the one STEPS line
      // must be seven legal crossings ending with all across. Legal: accuracy stays 100 -> 100.
      {"river crossing legal", &river, "STEPS: 羊,空,狼,羊,白菜,空,羊\nANSWER: 7", 100},
      // the wolf is left with the goat after the second step -> accuracy 0 -> 10.
      {"river crossing illegal", &river, "STEPS: 羊,空,狼,空,白菜,空,羊\nANSWER: 7", 10},
      // a lone CR at the end: JavaScript's '.' refuses it, so the line does not match -> 0.
      {"lone CR", &base, "ANSWER: 12种\r", 0},
  };
  for (const auto& row : rows) {
    SECTION(row.name) {
      const auto start = std::chrono::steady_clock::now();
      const Grade grade = RunGrader(*grader, *row.entry, row.output);
      INFO(grade.reason << " " << grade.evidence.dump());
      CHECK(grade.status == GradeStatus::kGraded);
      CHECK(ZxScore(grade) == row.zx_score);
      CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
    }
  }
}

TEST_CASE("zx exact_answer_line: what is not graded", "[graders][zxbench]") {
  const auto grader = MakeZxExactAnswerLineGrader();
  json entry = FixtureEntry("RM-CN-023");
  SECTION("empty output is no answer (zx-bench: 0, left out of the dimension score)") {
    const Grade grade = RunGrader(*grader, entry, " \n\t");
    CHECK(grade.status == GradeStatus::kNoAnswer);
    CHECK(ZxScore(grade) == 0);
  }
  SECTION("no gold answer is an environment error, as in zx-bench (E L55-60)") {
    entry["requirements"].erase("answer");
    const Grade grade = RunGrader(*grader, entry, "ANSWER: 12种");
    CHECK(grade.status == GradeStatus::kEnvError);
  }
  SECTION("tolerant (non-strict) comparison is skipped with the reason") {
    entry["scoring"]["comparisonMode"] = "tolerant";
    const Grade grade = RunGrader(*grader, entry, "ANSWER: 12种");
    CHECK(grade.status == GradeStatus::kSkipped);
    CHECK(grade.reason.find("comparisonMode") != std::string::npos);
  }
  SECTION("the spec must carry scoring") {
    entry.erase("scoring");
    CHECK_THROWS_WITH(grader->CheckSpec(entry, SourceLocation{"bank.json", 3, 5}),
                      "bank.json:3:5: zxbench:exact_answer_line: the entry has no 'scoring' "
                      "object (zx-bench reads scoring.comparisonMode and scoring.answerUnit "
                      "from it)");
  }
  SECTION("the fixture's spec is accepted") {
    CHECK_NOTHROW(grader->CheckSpec(entry, SourceLocation{"bank.json", 1, 1}));
    CHECK(grader->name() == "zxbench:exact_answer_line");
  }
}

// ---- json_atomic_fields --------------------------------------------------------------------------

TEST_CASE("zx json_atomic_fields: DE-CN-005 scores as zx-bench scores it", "[graders][zxbench]") {
  const auto grader = MakeZxJsonAtomicFieldsGrader();
  REQUIRE(grader != nullptr);
  // expected {original_price 899, coupon_amount 100, final_price 683.05, size "42"}; 4 leaves,
  // 4 requiredFields, 5 fieldTypes ("$" object + 4), allowAdditionalFields false.
  const json entry = FixtureEntry("DE-CN-005");
  const std::string good =
      R"({"original_price":899,"coupon_amount":100,"final_price":683.05,"size":"42"})";
  CheckCases(*grader, entry, {
      // correct: format 100; fields 4/4 -> 100; completeness 4/4 -> 100; types 5/5 -> 100, shape
      // equal -> schema 100; the output is JSON -> discipline 100 -> 20+40+20+10+10 = 100.
      {"correct", good, false, 100},
      // wrong: final_price 683.5 and size 42 (a number): fields 2/4 -> 50; completeness 100;
      // types: size is number not string -> 4/5 -> 80; shape equal -> schema 80; discipline 100
      // -> 20 + 20 + 20 + 8 + 10 = 78.
      {"wrong", R"({"original_price":899,"coupon_amount":100,"final_price":683.5,"size":42})",
       false, 78},
      // malformed: no fence; not JSON; "{original_price: 899, ...}" (first '{' to last '}') is not
      // JSON either -> extractJson null -> 0 (D L31-50).
      {"malformed", "这是结果：{original_price: 899, coupon_amount: 100}", false, 0},
      // truncated inside the object: no '}' after the first '{' -> null -> 0.
      {"truncated mid-object", R"({"original_price": 899, "coupon_amount": 100, "final_pr)", true,
       0},
      // truncated flag on a complete object: completeness round(100*0.5) = 50 (D L143-148)
      // -> 20 + 40 + 10 + 10 + 10 = 90.
      {"truncated but complete", good, true, 90},
      // formatted differently, in a ```json fence: parsed from the fence, all fields right, but
      // the trimmed output is not JSON -> discipline 0 (checkStrictJsonOnly) -> 20+40+20+10+0 = 90.
      {"json fence", "```json\n{\n  \"original_price\": 899,\n  \"coupon_amount\": 100,\n"
                     "  \"final_price\": 683.05,\n  \"size\": \"42\"\n}\n```",
       false, 90},
      // prose around the object: first '{' to last '}' parses -> as above, discipline 0 -> 90.
      {"prose around", "抽取结果如下：\n" + good + "\n以上。", false, 90},
      // an extra field: shape differs (allowAdditionalFields false) -> schema 0 and discipline 0
      // (D L131-140); fields 100, completeness 100 -> 20 + 40 + 20 = 80.
      {"extra field",
       R"({"original_price":899,"coupon_amount":100,"final_price":683.05,"size":"42","color":"黑白"})",
       false, 80},
      // numbers written as strings: fields 1/4 (size) -> 25; completeness 100; types: 3 of 5
      // wrong -> 40; shape equal (leaves are leaves) -> schema 40; discipline 100
      // -> 20 + 10 + 20 + 4 + 10 = 64.
      {"numbers as strings",
       R"({"original_price":"899","coupon_amount":"100","final_price":"683.05","size":"42"})",
       false, 64},
      // a field missing: fields 3/4 -> 75; completeness 3/4 -> 75; shape differs -> schema 0,
      // discipline 0 -> 20 + 30 + 15 = 65.
      {"field missing", R"({"original_price":899,"coupon_amount":100,"final_price":683.05})",
       false, 65},
      // 683.050 and 8.99e2 are the same JSON numbers -> 100.
      {"number spelling", R"({"original_price":8.99e2,"coupon_amount":100.0,"final_price":683.050,"size":"42"})",
       false, 100},
      // JSON null is "no JSON found" in zx-bench (parsed === null) -> 0.
      {"null", "null", false, 0},
      // a bare number: format 100; nothing found: fields 0, completeness 0, types 0/5, shape
      // differs -> 20 + 0 = 20.
      {"bare number", "42", false, 20},
  });
}

TEST_CASE("zx json_atomic_fields: hostile and tricky outputs", "[graders][zxbench]") {
  const auto grader = MakeZxJsonAtomicFieldsGrader();
  const json entry = FixtureEntry("DE-CN-005");
  const std::string good =
      R"({"original_price":899,"coupon_amount":100,"final_price":683.05,"size":"42"})";
  json zero = entry;
  zero["requirements"] = {{"expected", {{"n", 0}}}, {"requiredFields", {"n"}},
                          {"fieldTypes", {{"$", "object"}, {"n", "number"}}},
                          {"allowAdditionalFields", false}};
  // expected 7 at the root: a deep array is a mismatch at "$" and has the wrong shape; fields 0,
  // completeness 100 ("$" present), types 0/1, shape differs -> 20 + 0 + 20 + 0 + 0 = 40.
  json scalar = entry;
  scalar["requirements"] = {{"expected", 7}, {"fieldTypes", {{"$", "number"}}},
                            {"allowAdditionalFields", false}};
  json nested = entry;
  nested["requirements"] = {{"expected", {{"items", {{{"sku", "A"}, {"qty", 2}}, {{"sku", "B"}, {"qty", 1}}}}}},
                            {"requiredFields", {"items.0.sku", "items.1.qty"}},
                            {"fieldTypes", {{"$", "object"}, {"items", "array"}}}};

  struct Row {
    const char* name;
    const json* entry;
    std::string output;
    int zx_score;
  };
  const std::vector<Row> rows = {
      // 10 MB of prose after the JSON: first '{' to last '}' -> all fields; not only JSON -> 90.
      {"10 MB output", &entry, good + "\n" + std::string(10 << 20, 'x'), 90},
      // invalid UTF-8 inside size: decoded to U+FFFD, size wrong: fields 3/4 -> 75; types 5/5;
      // discipline 100 -> 20 + 30 + 20 + 10 + 10 = 90.
      {"invalid UTF-8", &entry,
       R"({"original_price":899,"coupon_amount":100,"final_price":683.05,"size":"4)" "\xff"
       R"(2"})", 90},
      // a lone surrogate escape is valid for JSON.parse: size wrong -> 90 (as above).
      {"lone surrogate", &entry,
       R"({"original_price":899,"coupon_amount":100,"final_price":683.05,"size":"\ud800"})", 90},
      // 1,234.50 is not JSON anywhere -> 0.
      {"1,234.50", &entry, R"({"original_price":1,234.50})", 0},
      // full-width braces and colon: no '{' at all -> 0.
      {"full-width braces", &entry, "｛\"original_price\"：899｝", 0},
      // deeply nested arrays: parsed (format 100) but nothing matches and the root is an array
      // -> 20.
      {"deep nesting", &entry, std::string(100000, '[') + std::string(100000, ']'), 20},
      // 1 MiB of nesting against a gold whose root is a leaf: compared, never copied into the
      // evidence. (Parsing is linear: 5 Mi levels take about 3 s on a 2-core VM.)
      {"deep nesting, root gold", &scalar, std::string(1 << 20, '[') + std::string(1 << 20, ']'),
       40},
      // duplicate keys: the last one wins, as in JSON.parse -> 100.
      {"duplicate keys", &entry,
       R"({"original_price":899,"coupon_amount":100,"final_price":683.05,"size":"41","size":"42"})",
       100},
      // -0 is not 0 for Object.is: fields 0/1, completeness 1/1, types 2/2, discipline 100
      // -> 20 + 0 + 20 + 10 + 10 = 60.
      {"minus zero", &zero, R"({"n":-0})", 60},
      {"zero", &zero, R"({"n":0})", 100},
      // a ```JSON fence (upper case) is not the regex's "json": its body "JSON\n{...}" fails,
      // the whole output fails, first '{' to last '}' succeeds -> discipline 0 -> 90.
      {"upper-case fence", &entry, "```JSON\n" + good + "\n```", 90},
      // nested gold: leaves items.0.sku, items.0.qty, items.1.sku, items.1.qty; all right, both
      // required paths present, types 2/2, no shape rule, discipline 100 -> 100.
      {"nested", &nested, R"({"items":[{"sku":"A","qty":2},{"sku":"B","qty":1}]})", 100},
      // one element only: fields 2/4 -> 50; completeness 1/2 -> 50; types 2/2 -> 100 -> 20 + 20
      // + 10 + 10 + 10 = 70.
      {"nested short", &nested, R"({"items":[{"sku":"A","qty":2}]})", 70},
  };
  for (const auto& row : rows) {
    SECTION(row.name) {
      const auto start = std::chrono::steady_clock::now();
      const Grade grade = RunGrader(*grader, *row.entry, row.output);
      INFO(grade.reason << " " << grade.evidence.dump());
      CHECK(grade.status == GradeStatus::kGraded);
      CHECK(ZxScore(grade) == row.zx_score);
      CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
    }
  }
}

TEST_CASE("zx json_atomic_fields: what is not graded", "[graders][zxbench]") {
  const auto grader = MakeZxJsonAtomicFieldsGrader();
  json entry = FixtureEntry("DE-CN-005");
  SECTION("empty output is no answer") {
    const Grade grade = RunGrader(*grader, entry, "");
    CHECK(grade.status == GradeStatus::kNoAnswer);
    CHECK(ZxScore(grade) == 0);
  }
  SECTION("requirements must be an object") {
    entry["requirements"] = "x";
    CHECK_THROWS_WITH(grader->CheckSpec(entry, SourceLocation{"bank.json", 9, 3}),
                      "bank.json:9:3: zxbench:json_atomic_fields: 'requirements' must be an "
                      "object (requirements.expected holds the gold document)");
  }
  SECTION("the fixture's spec is accepted") {
    CHECK_NOTHROW(grader->CheckSpec(entry, SourceLocation{"bank.json", 1, 1}));
    CHECK(grader->name() == "zxbench:json_atomic_fields");
  }
}

}  // namespace
}  // namespace evalrun
