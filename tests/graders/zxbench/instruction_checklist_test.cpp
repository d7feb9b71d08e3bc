// Parity of evalrun's zx-bench instruction_checklist grader with zx-bench's own scoring (issue 4),
// and hostile outputs. Each expected score was derived by reading zx-bench's sources
// (suncityldp/zx-bench), not by running evalrun; the derivation is written next to it.
//   I = packages/core/src/evaluators/instructionChecklist.ts at 183b6f330135a044 (the newest stored
//       copy; the bank at 8e0adf68 names instruction_checklist_v6, whose file is not stored).
//       Line numbers are of that file: L49-62 empty output -> 0; L64 format = formatValidScore;
//       L98-104 compliance = Math.round(passed / max(total, 1) * 100), or all-or-nothing when
//       scoring.partialCredit === false; L108-111 truncated -> format = Math.round(format * 0.7);
//       L114-121 total = weightedScoreByCoverage([[format, .2], [compliance, .8]]), capped at 60
//       when a constraint with critical === true fails. The checks are the functions named
//       (checkExactCount L277-299, checkParagraphCount L302-328, checkSentenceCount L331-357,
//       checkInclusion L360ff, then checkOrderedInclusion, firstPositivePosition, checkExclusion,
//       checkEnglishFree, checkLength, checkFormat, checkJsonValid, parseTableRows,
//       parseNumericCell, checkNumericColumn, checkNumericSequence, checkLineStructure).
//   R = packages/core/src/evaluators/responseState.ts, formatValidScore (L20-22): 60 when
//       truncated, else 100.
//   A = scoreAggregate.ts weightedScoreByCoverage: Math.round(sum / measuredWeight), both axes
//       measured, so total = round(0.2 format + 0.8 compliance).
//   M = the bank migration that sets instruction_checklist_v6 (every inclusion gets
//       check.matchMode 'literal', or 'positive' for CP-L3-AW-PLAN entries; IF-CN-024 gets
//       numeric_sequence firstLessThan / lastGreaterThan), and evaluationLab's
//       INSTRUCTION_ADVERSARIAL_CONTROLS for v6: literal inclusion passes "没有花。" for 花 and fails
//       "ＡLLOW" for ALLOW.
// With k of n constraints met, compliance = round(k/n*100). For n = 6 and format 100:
//   k=6: 100; k=5: round(20 + 83*.8 = 86.4) = 86; k=4: round(20 + 67*.8 = 73.6) = 74;
//   k=3: round(20 + 50*.8) = 60; k=2: round(20 + 33*.8 = 46.4) = 46; k=1: 34; k=0: 20.
// Truncated, format round(60*.7) = 42 (8.4 of the total): k=6: round(88.4) = 88;
//   k=5: round(8.4 + 66.4 = 74.8) = 75; k=4: 62; k=3: round(48.4) = 48; k=0: 8.
// One constraint: met -> 100, not met -> 20 (truncated: 88 and 8).
#include "tests/support/catch.h"

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
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

// The instruction_checklist entries (constraints only) copied from the bank at 8e0adf68.
json BankEntries() {
  return json::parse(testing::ReadFixture("zx-bench/instruction_checklist_bank.json"))["entries"];
}

json BankEntry(const std::string& id) {
  for (const auto& entry : BankEntries()) {
    if (entry.value("id", "") == id) return entry;
  }
  throw std::runtime_error("bank excerpt " + id + " missing");
}

// An entry with one constraint {id "t", type, check}.
json Single(const std::string& type, json check) {
  return {{"id", "T"},
          {"scoring", {{"type", "instruction_checklist"}, {"partialCredit", true}}},
          {"requirements",
           {{"constraints", json::array({{{"id", "t"}, {"type", type}, {"check", std::move(check)}}})}}}};
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
  json entry;
  std::string output;
  bool truncated;
  int zx_score;
};

void CheckCases(const Grader& grader, const std::vector<Case>& cases) {
  for (const auto& c : cases) {
    SECTION(c.name) {
      const auto start = std::chrono::steady_clock::now();
      const Grade grade = RunGrader(grader, c.entry, c.output, c.truncated);
      INFO(grade.reason << " " << grade.evidence.dump());
      REQUIRE(grade.status == GradeStatus::kGraded);
      CHECK(ZxScore(grade) == c.zx_score);
      CHECK(grade.score == Approx(c.zx_score / 100.0));
      CHECK(grade.passed == (c.zx_score >= 60));
      CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(3));
    }
  }
}

std::string Join(const std::vector<std::string>& lines, const std::string& sep = "\n") {
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) out += (i ? sep : "") + lines[i];
  return out;
}

std::string ReplaceAll(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
  return s;
}

// ---- IF-CN-006 -----------------------------------------------------------------------------------
// c1 inclusion literal, requireAll: 省份 省会 面积_万平方公里 人口_万人 (String.includes);
// c2 exact_count "\n" == 5; c3 format ^(?![\s\S]*\d[ \t]*万)[\s\S]*$ (no digit then 万);
// c4 exclusion " and '; c5 numeric_column csv, column 面积_万平方公里, order desc (strict);
// c6 format ^省份,省会.

const std::string kHeader = "省份,省会,面积_万平方公里,人口_万人";
const std::vector<std::string> kRows = {"新疆,乌鲁木齐,166.49,2587", "西藏,拉萨,122.84,364",
                                        "内蒙古,呼和浩特,118.3,2400", "青海,西宁,72.23,594",
                                        "四川,成都,48.6,8367"};
std::string GoodCsv() { return kHeader + "\n" + Join(kRows); }

TEST_CASE("zx instruction_checklist: IF-CN-006 scores as zx-bench scores it", "[graders][zxbench]") {
  const auto grader = MakeZxInstructionChecklistGrader();
  REQUIRE(grader != nullptr);
  const json e = FixtureEntry("IF-CN-006");
  const std::string good = GoodCsv();
  std::vector<std::string> swapped = kRows;
  std::swap(swapped[0], swapped[1]);
  std::string units = kHeader;
  for (const char* row : {"新疆,乌鲁木齐,166.49万,2587", "西藏,拉萨,122.84万,364",
                          "内蒙古,呼和浩特,118.3万,2400", "青海,西宁,72.23万,594",
                          "四川,成都,48.6万,8367"}) {
    units += std::string("\n") + row;
  }
  std::string markdown = "以下是5个省份的信息：\n| 省份 | 省会 | 面积_万平方公里 | 人口_万人 |\n|---|---|---|---|";
  for (const auto& row : kRows) markdown += "\n| " + ReplaceAll(row, ",", " | ") + " |";
  std::string quoted = kHeader;
  for (const auto& row : kRows) quoted += "\n\"" + row.substr(0, row.find(',')) + "\"" + row.substr(row.find(','));

  CheckCases(*grader, {
      // correct: c1 all four names present; c2 six lines -> 5 "\n"; c3 no digit is followed by
      // 万 (the header's "_万" follows '_'); c4 no quotes; c5 header found, areas 166.49 > 122.84
      // > 118.3 > 72.23 > 48.6; c6 starts "省份,省会" -> 6/6 -> 100.
      {"correct", e, good, false, 100},
      // wrong: 122.84 then 166.49 -> c5 "row 2 (166.49) > row 1" (checkNumericColumn, desc) -> 5/6
      // -> 86.
      {"wrong order", e, kHeader + "\n" + Join(swapped), false, 86},
      // wrong: "166.49万" -> c3 fails (\d then 万); c5 strips the common suffix 万 and still
      // sorts (parseNumericCell, one distinct suffix) -> 5/6 -> 86.
      {"units in the area column", e, units, false, 86},
      // malformed: a preamble and a Markdown table: c1 passes (the names are there); c2 8 lines ->
      // 7 "\n" fails; c3, c4 pass; c5 (format csv) splits lines on ',', the header row is the
      // preamble -> column not found; c6 fails -> 3/6 -> 60.
      {"preamble and markdown table", e, markdown, false, 60},
      // truncated mid-row: c2 3 "\n" fails; c5 166.49 > 122.84 > 11 passes; the rest pass -> 5/6,
      // format round(60 * 0.7) = 42 (R, I L108-111) -> round(8.4 + 66.4) = 75.
      {"truncated mid-row", e, kHeader + "\n" + kRows[0] + "\n" + kRows[1] + "\n内蒙古,呼和浩特,11",
       true, 75},
      // truncated flag on a complete answer: 6/6, format 42 -> round(8.4 + 80) = 88.
      {"truncated but complete", e, good, true, 88},
      // formatted differently, CRLF: "\r\n" holds "\n" -> c2 5; parseTableRows splits /\r?\n/ ->
      // 6/6 -> 100.
      {"CRLF line ends", e, ReplaceAll(good, "\n", "\r\n"), false, 100},
      // ", " between fields: c5 trims cells (header still matches) but c6 ^省份,省会 fails -> 86.
      {"spaces after commas", e, ReplaceAll(good, ",", ", "), false, 86},
      // a ```csv fence: c2 7 "\n"; c5 header row is "```csv"; c6 fails -> 3/6 -> 60.
      {"csv code fence", e, "```csv\n" + good + "\n```", false, 60},
      // "\"新疆\"": c4 finds '"' -> 5/6 -> 86.
      {"quoted fields", e, quoted, false, 86},
      // a trailing newline is a sixth "\n" (the grader sees the text as given) -> c2 fails -> 86.
      {"trailing newline", e, good + "\n", false, 86},
      // full-width commas: c5 sees one cell per line, column not found; c6 fails -> 4/6 -> 74.
      {"full-width commas", e, ReplaceAll(good, ",", "，"), false, 74},
      // full-width digits: parseNumericCell's \d is ASCII -> row 1 unparseable -> c5 fails; c3's
      // \d does not see them either -> 5/6 -> 86.
      {"full-width digits", e, ReplaceAll(good, "166.49", "１６６.４９"), false, 86},
      // Arabic-Indic digits: the same -> 86.
      {"Arabic-Indic digits", e, ReplaceAll(good, "166.49", "١٦٦.٤٩"), false, 86},
      // an ideographic space between number and 万: c3's [ \t]* does not take U+3000, so c3
      // passes; c5's suffix is "　万".trim() = "万" on every row -> 6/6 -> 100.
      {"ideographic space before 万", e, ReplaceAll(units, "万,", "\u3000万,"), false, 100},
      // "约**166.49**": parseNumericCell drops '*' and the 约 prefix -> 166.49 -> 6/6 -> 100.
      {"approximation and bold", e, ReplaceAll(good, "166.49", "约**166.49**"), false, 100},
      // equal areas: 166.49 then 166.49 fails strict desc (allowEqual unset) -> 86.
      {"equal areas", e, ReplaceAll(good, "122.84", "166.49"), false, 86},
      // hostile: invalid UTF-8 inside a value becomes U+FFFD (as the WHATWG decoder does); the
      // checks do not look at that cell -> 100.
      {"invalid UTF-8 in a value", e, ReplaceAll(good, "新疆", "新\xff疆"), false, 100},
      // hostile: invalid UTF-8 inside the header: "省\uFFFD份": c1 misses 省份, c6 fails; c5
      // still finds its column -> 4/6 -> 74.
      {"invalid UTF-8 in the header", e, ReplaceAll(good, "省份", "省\xff\xfe份"), false, 74},
      // hostile: 10 MB on the last line ending in "1万": c3's lookahead finds it at the end (the
      // greedy [\s\S]* backtracks two characters) -> fails; c2 still 5; c5's area cells are
      // untouched -> 5/6 -> 86.
      {"10 MB output", e, good + std::string(10 << 20, 'x') + "1万", false, 86},
      // hostile: 600 KB of "1 \t" after the answer: c3 backtracks through every digit and tab
      // without finding 万 (a digit, [ \t]*, no 万) and passes; the rest hold -> 100. (Above about
      // 1 MB of such text evalrun's regex budget runs out: see "where evalrun differs".)
      {"backtracking pattern on a long output", e, good + " " + [] {
         std::string s;
         for (int i = 0; i < 200000; ++i) s += "1 \t";
         return s;
       }(), false, 100},
  });
}

json MoreEntry(const std::string& id) {
  for (const auto& entry : json::parse(testing::ReadFixture("zx-bench/more_entries.json"))) {
    if (entry.value("id", "") == id) return entry;
  }
  throw std::runtime_error("fixture entry " + id + " missing");
}

// The v6 structural types on the real entries IF-CN-023 (paragraph_structure alone), IF-CN-036
// (sentence_structure, exclusion, exact_count) and IF-CN-039 (section_reference, exclusion), as
// checkRelationalStructure (22bb91d1) decides them; totals are round(0.2 * 100 + 0.8 *
// round(passed / total * 100)).
TEST_CASE("zx instruction_checklist: paragraph, sentence and section structure (v6)",
          "[graders][zxbench]") {
  const auto grader = MakeZxInstructionChecklistGrader();
  struct Row {
    const char* name;
    const char* id;
    std::string output;
    int zx_score;
    const char* detail;  // the first constraint's detail
  };
  const std::string spring =
      "春风拂面暖意浓。柳枝轻摇绿意生。燕子归来筑新巢。\n\n天空湛蓝白云飘。阳光洒落照大地。"
      "万物复苏展生机。\n\n美丽花朵竞相开。桃红李白满山坡。蜜蜂蝴蝶忙采蜜。\n\n好雨知时润物细。"
      "农人播种盼丰收。人间处处是春光。";
  const auto replace = [](std::string text, const std::string& from, const std::string& to) {
    return text.replace(text.find(from), from.size(), to);
  };
  const std::string ai =
      "人工智能正在改变人类生活。机器学习让计算机拥有智能。医疗教育交通领域广泛应用。"
      "机器人帮助人类完成繁重活。智能技术将会创造美好未来。";
  const std::string sections =
      "A：夏日指南\n夏天需要多喝水。下面的C部分题为秋日总结。\n\nB：代码示例\n这里给出一个示例。"
      "代码如下所示。\n```python\nx = 1\nprint(x)\n```\n\nC：秋日总结\n夏天需要多喝水。秋天适合出游。";
  const std::vector<Row> rows = {
      {"four paragraphs as asked", "IF-CN-023", spring, 100, "Structural relations satisfied"},
      {"CRLF and blank lines with spaces", "IF-CN-023",
       replace(replace(spring, "\n\n", "\r\n  \r\n"), "\n\n", "\n\t\n"), 100,
       "Structural relations satisfied"},
      {"commas do not count towards the 20", "IF-CN-023",
       replace(spring, "春风拂面暖意浓。", "春风轻轻拂面，暖意浓浓，吹过田野山岗和小河边。"),
       100, "Structural relations satisfied"},
      {"three paragraphs", "IF-CN-023", spring.substr(0, spring.rfind("\n\n")), 20,
       "Incorrect paragraph count"},
      {"a paragraph that starts wrong", "IF-CN-023", replace(spring, "天空湛蓝", "蓝天湛湛"), 20,
       "Paragraph 2: incorrect first word"},
      {"an unterminated last sentence", "IF-CN-023",
       spring.substr(0, spring.size() - std::string("。").size()), 20,
       "Paragraph 4: incorrect sentence structure"},
      {"a sentence of 21 characters", "IF-CN-023",
       replace(spring, "燕子归来筑新巢。", "燕子归来筑新巢燕子归来筑新巢燕子归来筑新巢。"), 20,
       "Paragraph 1: sentence too long"},
      {"a Latin letter", "IF-CN-023", replace(spring, "桃红李白", "桃红AI"), 20,
       "Paragraph 3: disallowed character"},
      {"a digit", "IF-CN-023", replace(spring, "农人播种", "农人3种"), 20,
       "Paragraph 4: disallowed character"},
      {"five sentences of twelve", "IF-CN-036", ai, 100, "Structural relations satisfied"},
      {"sentence 4 starts with a character sentence 2 lacks", "IF-CN-036",
       replace(ai, "机器人帮助人类完成繁重活", "自动驾驶帮助人类安全出行"), 74,
       "Sentence 2 does not contain sentence 4 first character"},
      {"the last sentence ends otherwise", "IF-CN-036",
       replace(ai, "智能技术将会创造美好未来", "智能技术将会创造美好明天"), 74,
       "Incorrect final sentence suffix"},
      {"thirteen characters in one", "IF-CN-036",
       replace(ai, "医疗教育交通领域广泛应用", "医疗教育交通领域都广泛应用"), 74,
       "Incorrect Han character count or non-Han content"},
      {"no final period", "IF-CN-036", ai.substr(0, ai.size() - std::string("。").size()), 74,
       "Expected period-terminated sentences"},
      {"three sections as asked", "IF-CN-039", sections, 100, "Structural relations satisfied"},
      {"CRLF line ends", "IF-CN-039",
       [&] {
         std::string crlf;
         for (char c : sections) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
         return crlf;
       }(),
       100, "Structural relations satisfied"},
      {"a preface", "IF-CN-039", "说明如下\n" + sections, 60,
       "Expected ordered A/B/C headings without preface"},
      {"C does not repeat A's first sentence", "IF-CN-039",
       replace(sections, "C：秋日总结\n夏天需要多喝水。", "C：秋日总结\n冬天需要多保暖。"), 60,
       "C does not repeat the actual first sentence of A"},
      {"A does not name C's title", "IF-CN-039", replace(sections, "题为秋日总结", "题为别的"), 60,
       "A does not reference the actual C title"},
      {"a three-line code block", "IF-CN-039", replace(sections, "print(x)\n", "print(x)\ny = 2\n"),
       60, "B must contain exactly one two-line code block"},
  };
  for (const Row& row : rows) {
    SECTION(row.name) {
      const Grade grade = RunGrader(*grader, MoreEntry(row.id), row.output);
      INFO(grade.reason << " " << grade.evidence.dump());
      CHECK(grade.status == GradeStatus::kGraded);
      CHECK(ZxScore(grade) == row.zx_score);
      CHECK(grade.evidence["constraints"][0]["detail"] == row.detail);
    }
  }
}

TEST_CASE("zx instruction_checklist: what is not graded", "[graders][zxbench]") {
  const auto grader = MakeZxInstructionChecklistGrader();
  const json entry = FixtureEntry("IF-CN-006");
  SECTION("empty output is no answer (zx-bench: total 0, I L49-62)") {
    for (const char* text : {"", " \n\t\u3000"}) {
      const Grade grade = RunGrader(*grader, entry, text);
      CHECK(grade.status == GradeStatus::kNoAnswer);
      CHECK(ZxScore(grade) == 0);
    }
  }
  SECTION("malformed requirements met at run time are an environment error, as in zx-bench") {
    json broken = entry;
    broken["requirements"]["constraints"][2]["check"]["pattern"] = "(";
    const Grade grade = RunGrader(*grader, broken, GoodCsv());
    CHECK(grade.status == GradeStatus::kEnvError);
    CHECK(grade.reason.find("requirements.constraints[2] (id 'c3')") != std::string::npos);
    json none = entry;
    none["requirements"]["constraints"] = json::array();
    CHECK(RunGrader(*grader, none, GoodCsv()).status == GradeStatus::kEnvError);
  }
}

TEST_CASE("zx instruction_checklist: where evalrun knowingly differs", "[graders][zxbench]") {
  const auto grader = MakeZxInstructionChecklistGrader();
  SECTION("a format pattern that exhausts the regex budget counts as not met") {
    // zx-bench: 10 MB with no digit before 万 passes c3 (V8 backtracks 10M characters) -> 100.
    // evalrun: PCRE2 stops at its match limit -> c3 counted as not met -> 5/6 -> 86, and says so.
    const Grade grade = RunGrader(*grader, FixtureEntry("IF-CN-006"), GoodCsv() + std::string(10 << 20, 'x'));
    CHECK(ZxScore(grade) == 86);
    CHECK(grade.evidence.value("regex_budget_exhausted", false));
    CHECK(grade.reason.find("regex budget") != std::string::npos);
  }
  SECTION("IF-CN-038 c1 backtracks exponentially on a plain answer") {
    // Ten numbered lines and then other lines: c1's (?!(?:[\s\S]*?(?:^|\n)...){11}) takes Node 20
    // about 44 s to reject; zx-bench then passes c1. c2-c6 pass (苹果 first; every two-character
    // fruit has 🍎 and 猕猴桃 🍊; no tropical fruit; no English; 草莓, 葡萄, 蓝莓); c7 fails (the
    // tenth item does not end the text). zx-bench: 6/7 -> round(20 + 86*.8 = 88.8) = 89.
    // evalrun gives up on c1 within its budget (the shared Regex, then the JIT retry's 2e8
    // steps): 5/7 -> round(20 + 71*.8 = 76.8) = 77.
    std::string answer = "1. 苹果🍎\n2. 草莓🍎\n3. 葡萄🍎\n4. 蓝莓🍎\n5. 樱桃🍎\n6. 梨子🍎\n"
                         "7. 桃子🍎\n8. 西瓜🍎\n9. 柿子🍎\n10. 猕猴桃🍊\n"
                         "问：什么是长江？\n答：中国最长河流。\n问：哪里是首都？\n答：北京。";
    const auto start = std::chrono::steady_clock::now();
    const Grade grade = RunGrader(*grader, BankEntry("IF-CN-038"), answer);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
    CHECK(grade.evidence["constraints"][0]["passed"] == false);
    CHECK(grade.evidence["constraints"][6]["passed"] == false);
    CHECK(ZxScore(grade) == 77);
  }
}

// ---- Each constraint type ------------------------------------------------------------------------

TEST_CASE("zx instruction_checklist: format patterns keep JavaScript's meaning", "[graders][zxbench]") {
  const auto grader = MakeZxInstructionChecklistGrader();
  const auto format = [](const std::string& pattern) { return Single("format", {{"pattern", pattern}}); };
  CheckCases(*grader, {
      // IF-CN-003: all six met -> 100. c4 "age": 30 matches (1[89]|[2-5]\d|6[0-5]) then ','.
      {"IF-CN-003 JSON", BankEntry("IF-CN-003"),
       R"({"name":"张三","age":30,"email":"zs@example.com","isActive":true})", false, 100},
      // age 70 fails c4; single quotes fail c2 (exclusion "'") -> 4/6 -> 74.
      {"IF-CN-003 age and quotes", BankEntry("IF-CN-003"),
       R"({"name":"张三's","age":70,"email":"zs@example.com","isActive":true})", false, 74},
      // IF-CN-004: look-aheads for five keys, port 5432, pool_size digits, exactly five '#',
      // no ``` -> 6/6 -> 100.
      {"IF-CN-004 YAML", BankEntry("IF-CN-004"),
       "database:\n  host: localhost # 主机\n  port: 5432 # 端口\n  name: app # 库名\n"
       "  username: admin # 用户\n  pool_size: 10 # 连接池", false, 100},
      // \bname: inside "username:" does not count (\b needs a word boundary), so removing the
      // "name:" line fails c2; it also removes a '#', so c5 counts 4 -> 4/6 -> 74.
      {"IF-CN-004 word boundary", BankEntry("IF-CN-004"),
       "database:\n  host: localhost # 主机\n  port: 5432 # 端口\n"
       "  username: admin # 用户\n  pool_size: 10 # 连接池", false, 74},
      // IF-CN-038, the plain right answer: ten numbered fruits, two-character ones with 🍎, the
      // three-character last one with 🍊, two berries, nothing after -> 7/7 -> 100. c1's nested
      // look-ahead backtracks about 5e7 steps here (V8: 23 s): past the shared Regex's budget, so
      // it is decided by the JIT retry.
      {"IF-CN-038 right answer", BankEntry("IF-CN-038"),
       "1. 苹果🍎\n2. 草莓🍎\n3. 葡萄🍎\n4. 蓝莓🍎\n5. 樱桃🍎\n6. 梨子🍎\n7. 桃子🍎\n8. 西瓜🍎\n"
       "9. 柿子🍎\n10. 猕猴桃🍊", false, 100},
      // eleven items: c1's look-ahead finds 11 -> c1 fails; c7 wants the 🍊 item to be "10."
      // at the end -> fails -> 5/7 -> round(20 + 71*.8 = 76.8) = 77.
      {"IF-CN-038 eleven items", BankEntry("IF-CN-038"),
       "1. 苹果🍎\n2. 草莓🍎\n3. 葡萄🍎\n4. 蓝莓🍎\n5. 樱桃🍎\n6. 梨子🍎\n7. 桃子🍎\n8. 西瓜🍎\n"
       "9. 柿子🍎\n10. 李子🍎\n11. 猕猴桃🍊", false, 77},
      // IF-CN-026: the exact 0/2/4-space tree, an optional final newline -> 100.
      {"IF-CN-026 tree", BankEntry("IF-CN-026"),
       "- 公司\n  - 研发部\n    - 工程师\n    - 架构师\n  - 市场部\n    - 经理\n    - 专员\n"
       "  - 财务部\n    - 会计\n    - 出纳\n", false, 100},
      // the same tree indented with tabs does not match -> 20.
      {"IF-CN-026 tabs", BankEntry("IF-CN-026"),
       "- 公司\n\t- 研发部\n\t\t- 工程师\n\t\t- 架构师\n\t- 市场部\n\t\t- 经理\n\t\t- 专员\n"
       "\t- 财务部\n\t\t- 会计\n\t\t- 出纳", false, 20},
      // IF-CN-034: 1..20 with the marks, CRLF allowed by \r?\n, trailing \s* -> 100.
      {"IF-CN-034 CRLF", BankEntry("IF-CN-034"),
       "1\r\n2\r\n3（三）\r\n4\r\n5（五）\r\n6（三）\r\n7\r\n8\r\n9（三）\r\n10（五）\r\n11\r\n"
       "12（三）\r\n13\r\n14\r\n15（十五）\r\n16\r\n17\r\n18（三）\r\n19\r\n20（五）\r\n", false, 100},
      // 15 marked （三） instead of （十五） -> 20.
      {"IF-CN-034 wrong mark", BankEntry("IF-CN-034"),
       "1\n2\n3（三）\n4\n5（五）\n6（三）\n7\n8\n9（三）\n10（五）\n11\n12（三）\n13\n14\n"
       "15（三）\n16\n17\n18（三）\n19\n20（五）", false, 20},
      // JavaScript's \s includes U+3000, so "\S{21,}" counts only the 20 non-space characters of
      // IF-CN-012 c5's answer below (the ideographic spaces are \s): c5 holds. The rest: c1 needs
      // six 问：, c4 six question words -> fail; c2, c3, c6, c7 hold -> 5/7 ->
      // round(20 + 71*.8 = 76.8) = 77.
      {"IF-CN-012 ideographic spaces are \\s", BankEntry("IF-CN-012"),
       "问：什么是长江？\n答：中国最长的河流　一二三四五六七八九十一二\u3000三", false, 77},
      // '.' refuses '\r' in JavaScript: "a.b" does not match "a\rb" -> 20; but it does match
      // "a\u0085b" (NEL is not a line terminator in JavaScript) -> 100.
      {"dot refuses CR", format("^a.b$"), "a\rb", false, 20},
      {"dot takes NEL", format("^a.b$"), "a\u0085b", false, 100},
      // \v is U+000B, not PCRE2's vertical-space class: "\v" does not match "\n" -> 20.
      {"\\v is VT only", format("\\v"), "x\ny", false, 20},
      // \u0041 is "A" -> 100; a surrogate pair escape is one emoji -> 100.
      {"\\u escape", format("^\\u0041$"), "A", false, 100},
      {"surrogate pair escape", format("^\\uD83C\\uDF4E$"), "🍎", false, 100},
      // identity escapes: \a is "a", \/ is "/" -> 100.
      {"identity escapes", format("^\\a\\/$"), "a/", false, 100},
      // "{,3}" is not a quantifier in JavaScript: literal -> matches "x{,3}" -> 100.
      {"brace literal", format("^x{,3}$"), "x{,3}", false, 100},
      // \1 after one group is a backreference: (a|b)\1 finds "bb" in "abba" -> 100.
      {"backreference", format("(a|b)\\1"), "abba", false, 100},
      // \12 with one group is the octal escape \n -> matches "x\ny" -> 100.
      {"legacy octal", format("(x)\\12"), "x\ny", false, 100},
      // [^] is any character in JavaScript; [] matches nothing -> 100 and 20.
      {"empty negated class", format("^[^]$"), "字", false, 100},
      {"empty class", format("[]"), "anything", false, 20},
      // \S inside a class is JavaScript's: [\S] refuses U+3000 -> "^[\S]+$" fails on "a　b" -> 20.
      {"class \\S refuses ideographic space", format("^[\\S]+$"), "a\u3000b", false, 20},
      // caseInsensitive: 'i' flag -> "ABC" matches abc -> 100.
      {"caseInsensitive", Single("format", {{"pattern", "^abc$"}, {"caseInsensitive", true}}), "ABC",
       false, 100},
  });
}

TEST_CASE("zx instruction_checklist: inclusion, exclusion and counts", "[graders][zxbench]") {
  const auto grader = MakeZxInstructionChecklistGrader();
  const json literal = Single("inclusion", {{"patterns", {"花"}}, {"matchMode", "literal"}});
  const json positive = Single("inclusion", {{"patterns", {"花"}}, {"matchMode", "positive"}});
  const json allow = Single("inclusion", {{"patterns", {"ALLOW"}}, {"matchMode", "literal"}});
  const json both = Single("inclusion", {{"patterns", {"上海", "北京"}}, {"requireAll", true},
                                         {"matchMode", "literal"}});
  const json any = Single("inclusion", {{"patterns", {"上海", "北京"}}, {"matchMode", "literal"}});
  const json steps = Single("ordered_inclusion",
                            {{"steps", {{"新增列"}, {"双写"}, {"回填"}, {"切读"}, {"删除旧列"}}}});
  CheckCases(*grader, {
      // M: literal inclusion requires the word, not agreement: "没有花。" passes -> 100.
      {"literal ignores negation", literal, "没有花。", false, 100},
      // M: a full-width homoglyph is not the string -> 20.
      {"literal homoglyph", allow, "ＡLLOW", false, 20},
      // literal is case-sensitive (String.includes) -> "allow" fails -> 20.
      {"literal case", allow, "allow", false, 20},
      // positive: 没有 before 花 in the same clause negates it -> 20; a later clause with a plain
      // 花 counts -> 100 (firstPositivePosition).
      {"positive negated", positive, "没有花。", false, 20},
      {"positive in another clause", positive, "没有花。院子里花开了", false, 100},
      // positive: up to 12 class characters may sit between the negation and the word:
      // "不要把那朵红色的花" has 不要 then 把那朵红色的 (6) -> negated -> 20.
      {"positive negation at a distance", positive, "不要把那朵红色的花摘下", false, 20},
      // positive: matching is case-insensitive ("Allow" for ALLOW) and "not" negates in English.
      {"positive case-insensitive",
       Single("inclusion", {{"patterns", {"ALLOW"}}, {"matchMode", "positive"}}), "we Allow it",
       false, 100},
      {"positive not",
       Single("inclusion", {{"patterns", {"allow"}}, {"matchMode", "positive"}}), "we do not allow it",
       false, 20},
      // requireAll: both cities -> 100; one -> 20; without requireAll one is enough -> 100.
      {"requireAll both", both, "上海和北京", false, 100},
      {"requireAll one", both, "上海", false, 20},
      {"any one", any, "北京", false, 100},
      // ordered_inclusion (the v6 red-team control's steps): the first non-negated mention of each
      // step must come after the previous one's: in order -> 100; reversed -> 20.
      {"ordered steps", steps, "先新增列，再双写，然后回填并校验，随后切读，最后删除旧列。", false, 100},
      {"reversed steps", steps, "先删除旧列，再切读，然后回填、双写，最后新增列。", false, 20},
      // negated steps are not positions: "不要双写" -> step 2 missing -> 20.
      {"negated step", steps, "新增列。不要双写。回填。切读。删除旧列。", false, 20},
      // exclusion: IF-CN-040 c6 forbids 很: present -> c6 fails.
      {"exclusion pattern", Single("exclusion", {{"patterns", {"很", "非常"}}}), "时间很快", false, 20},
      // exclusion without patterns: no digits and no English letters (checkExclusion) -> "abc"
      // fails; with excludeEnglish false it passes -> 20 and 100.
      {"generic exclusion", Single("exclusion", json::object()), "纯中文abc", false, 20},
      {"generic exclusion, English allowed", Single("exclusion", {{"excludeEnglish", false}}),
       "纯中文abc", false, 100},
      {"generic exclusion digit", Single("exclusion", {{"excludeEnglish", false}}), "第1条", false, 20},
      // english_free: any ASCII letter fails; full-width letters are not [a-zA-Z] -> 20 and 100.
      {"english_free", Single("english_free", json::object()), "中文x", false, 20},
      {"english_free full-width", Single("english_free", json::object()), "中文ｘ", false, 100},
      // exact_count counts non-overlapping occurrences: "aaaa" has two "aa" -> count 2 -> 100.
      {"exact_count non-overlapping", Single("exact_count", {{"target", "aa"}, {"count", 2}}), "aaaa",
       false, 100},
      // count defaults to 1 -> one "？" -> 100.
      {"exact_count default", Single("exact_count", {{"target", "？"}}), "是吗？是的。", false, 100},
  });
}

TEST_CASE("zx instruction_checklist: paragraphs, sentences and length", "[graders][zxbench]") {
  const auto grader = MakeZxInstructionChecklistGrader();
  const json three = Single("paragraph_count", {{"count", 3}});
  const json five = Single("sentence_count", {{"count", 5}});
  const json lines = Single("sentence_count", {{"count", 3}, {"newlineAsSeparator", true}});
  CheckCases(*grader, {
      // checkParagraphCount: CRLF normalised, blank lines may hold spaces or tabs -> 3 -> 100.
      {"paragraphs CRLF and blank spaces", three, "一。\r\n\r\n二。\n \t\n三。", false, 100},
      // a blank line of U+3000 is not [ \t]: two paragraphs -> 20.
      {"paragraphs ideographic blank", three, "一。\n\u3000\n二。\n\n三。", false, 20},
      // runs of blank lines count once -> 3 -> 100.
      {"paragraphs many blanks", three, "一\n\n\n\n二\n\n三", false, 100},
      // checkSentenceCount: split on runs of 。！？!? -> "一。二！三？四!五?" is 5 -> 100.
      {"sentences", five, "一。二！三？四!五?", false, 100},
      // "……" and "；" do not end sentences: "一", "二；三", "四……五" -> 3 -> 20.
      {"sentences semicolons", five, "一。二；三。四……五。", false, 20},
      // a trailing fragment without punctuation still counts (the 183b6f33 code) -> 5 -> 100.
      {"sentences trailing fragment", five, "一。二。三。四。五", false, 100},
      // newlineAsSeparator: lines without punctuation are sentences -> 3 -> 100.
      {"sentences by line", lines, "一\n二\n三", false, 100},
      // checkLength: non-whitespace UTF-16 code units; an emoji counts 2, U+3000 is whitespace:
      // "春🌸\u3000天" is 4 -> within [4, 4] -> 100; [5, 5] -> 20.
      {"length UTF-16", Single("length", {{"min", 4}, {"max", 4}}), "春🌸\u3000天", false, 100},
      {"length too short", Single("length", {{"minLength", 5}, {"maxLength", 5}}), "春🌸\u3000天", false,
       20},
      // IF-CN-029: 上海 before 北京, both present, at most 50 characters -> 3/3 -> 100.
      {"IF-CN-029", BankEntry("IF-CN-029"), "中国最大的城市是上海，首都是北京。", false, 100},
      // reversed: c2 exact_order fails -> 2/3 -> round(20 + 67*.8 = 73.6) = 74.
      {"IF-CN-029 reversed", BankEntry("IF-CN-029"), "北京是首都，上海更大。", false, 74},
      // IF-CN-040 (7 constraints): three paragraphs of 1, 3 and 2 sentences, two ？, no 很, with
      // 光阴似箭, but only 34 non-space characters (c1 wants 120-130) -> 6/7 ->
      // round(20 + 86*.8 = 88.8) = 89.
      {"IF-CN-040", BankEntry("IF-CN-040"),
       "光阴似箭。\n\n时间是什么？我们如何度过？它从不停留。\n\n珍惜当下。继续前行。", false, 89},
  });
}

TEST_CASE("zx instruction_checklist: order, words, JSON and conflict markers", "[graders][zxbench]") {
  const auto grader = MakeZxInstructionChecklistGrader();
  const json start = Single("exact_word", {{"word", "春"}});
  const json end = Single("exact_word", {{"word", "。"}, {"position", "end"}});
  const json whole = Single("exact_word", {{"pattern", "好"}, {"position", "all"}});
  CheckCases(*grader, {
      // checkExactOrder compares the first two patterns only (case-insensitive): IF-CN-022's
      // 上海 before 北京 -> c1 passes whatever follows; c2 人口约 present -> 100.
      {"IF-CN-022", BankEntry("IF-CN-022"), "上海 - 人口约2487万\n北京 - 人口约2189万\n深圳 - 人口约1766万",
       false, 100},
      {"IF-CN-022 reversed", BankEntry("IF-CN-022"), "北京 - 人口约2189万\n上海 - 人口约2487万", false,
       60},
      // exact_word: trimmed text starts with 春 -> 100; ends with 。 -> 100; whole text equals 好
      // -> 100; otherwise 20.
      {"exact_word start", start, "  春天来了。", false, 100},
      {"exact_word start no", start, "天春", false, 20},
      {"exact_word end", end, "结束。 \n", false, 100},
      {"exact_word whole", whole, " 好 ", false, 100},
      {"exact_word whole no", whole, "好的", false, 20},
      // conflict_resolution (IF-CN-032 c4): any of the markers -> 100.
      {"conflict marker", Single("conflict_resolution", {{"patterns", {"兮", "矣"}}}), "月出皎兮", false,
       100},
      {"conflict marker all", Single("conflict_resolution", {{"patterns", {"兮", "矣"}}, {"requireAll", true}}),
       "月出皎兮", false, 20},
      // json_valid: the whole output must be JSON -> 100; a trailing comma -> 20; a lone
      // surrogate escape is valid for JSON.parse -> 100.
      {"json whole", Single("json_valid", json::object()), R"({"note":"忽略所有规则"})", false, 100},
      {"json trailing comma", Single("json_valid", json::object()), "[1,2,]", false, 20},
      {"json lone surrogate", Single("json_valid", json::object()), R"("\ud800")", false, 100},
      // language json: only ```json blocks (info string lower-cased) are checked -> 100; no such
      // block -> 20.
      {"json fenced", Single("json_valid", {{"language", "json"}}),
       "说明\n```JSON\n{\"a\": 1}\n```\n```js\nnot json\n```", false, 100},
      {"json fence missing", Single("json_valid", {{"language", "json"}}), "```js\n{}\n```", false, 20},
  });
}

TEST_CASE("zx instruction_checklist: table columns and line structure", "[graders][zxbench]") {
  const auto grader = MakeZxInstructionChecklistGrader();
  const std::string table =
      "| 名称 | 价格 | 库存 | 评分 |\n| --- | --- | --- | --- |\n| 甲 | 300 | 10 | 5 |\n"
      "| 乙 | 200 | 12 | 4 |\n| 丙 | 150 | 8 | 3 |\n| 丁 | 100 | 6 | 2 |\n| 戊 | 80 | 4 | 1 |\n"
      "| 己 | 50 | 2 | 5 |\n\n- 价格递减\n- 评分在1到5之间\n- 库存为偶数";
  const json evens = Single("numeric_column", {{"columnName", "库存"}, {"even", true}});
  const json rating = Single("numeric_column", {{"columnName", "评分"}, {"integer", true}, {"min", 1},
                                                {"max", 5}});
  CheckCases(*grader, {
      // IF-CN-037, a right answer: header and 6 data rows (8 '|' lines, not 9), separator row,
      // ratings 1-5 integers, names unique, 3-item list after the table, prices descending ->
      // 7/7 -> 100.
      {"IF-CN-037", BankEntry("IF-CN-037"), table, false, 100},
      // a rating of 4.5: c4 not an integer -> 6/7 -> round(20 + 86*.8 = 88.8) = 89.
      {"IF-CN-037 rating 4.5", BankEntry("IF-CN-037"), ReplaceAll(table, "| 12 | 4 |", "| 12 | 4.5 |"),
       false, 89},
      // a duplicate name: c5's backreference finds 甲 twice -> 89.
      {"IF-CN-037 duplicate name", BankEntry("IF-CN-037"), ReplaceAll(table, "| 乙 |", "| 甲 |"), false,
       89},
      // even: 10 12 8 6 4 2 -> 100; "待定" is unparseable -> 20.
      {"even", evens, table, false, 100},
      {"even unparseable", evens, ReplaceAll(table, "| 12 |", "| 待定 |"), false, 20},
      // mixed unit suffixes in one column cannot be compared -> 20.
      {"mixed units", evens, ReplaceAll(ReplaceAll(table, "| 10 |", "| 10件 |"), "| 12 |", "| 12个 |"),
       false, 20},
      // the column name matches after normalizeColumnName: "**评分**" and "评分" are the same.
      {"bold header", rating, ReplaceAll(table, "评分 |", "**评分** |"), false, 100},
      {"column missing", rating, ReplaceAll(table, "评分 |", "得分 |"), false, 20},
      // IF-CN-024 (numeric_sequence, v6 firstLessThan 1970 / lastGreaterThan 2020): five
      // increasing years from 1969 to 2022 -> 100.
      {"IF-CN-024", BankEntry("IF-CN-024"),
       "【1969】阿帕网诞生\n【1983】TCP/IP 协议启用\n【1991】万维网公开\n【2004】社交网络兴起\n【2022】生成式AI普及",
       false, 100},
      // first year 1971 is not below 1970 -> 20.
      {"IF-CN-024 first year", BankEntry("IF-CN-024"),
       "【1971】电子邮件\n【1983】TCP/IP 协议启用\n【1991】万维网公开\n【2004】社交网络兴起\n【2022】生成式AI普及",
       false, 20},
      // four lines: minRows 5 -> 20.
      {"IF-CN-024 too few", BankEntry("IF-CN-024"), "【1969】阿帕网\n【1991】万维网\n【2004】社交\n【2022】AI",
       false, 20},
      // IF-CN-027: five 【animal】 lines, odd ones end 。, even ones are 难道…吗？, labels unique,
      // each at most 25 non-space characters, and 蚂蚁 before 蜜蜂 -> 2/2 -> 100.
      {"IF-CN-027", BankEntry("IF-CN-027"),
       "【蚂蚁】蚂蚁是勤劳的小昆虫。\n【蜜蜂】难道蜜蜂不会酿蜜吗？\n【麻雀】麻雀常在屋檐下筑巢。\n"
       "【家猫】难道家猫不爱晒太阳吗？\n【大象】大象是陆地上最大的动物。", false, 100},
      // a repeated label: uniqueGroup 1 sees 蚂蚁 twice -> c1 fails -> 1/2 -> round(20 + 40) = 60.
      {"IF-CN-027 duplicate", BankEntry("IF-CN-027"),
       "【蚂蚁】蚂蚁是勤劳的小昆虫。\n【蜜蜂】难道蜜蜂不会酿蜜吗？\n【蚂蚁】蚂蚁又来了。\n"
       "【家猫】难道家猫不爱晒太阳吗？\n【大象】大象是陆地上最大的动物。", false, 60},
  });
}

TEST_CASE("zx instruction_checklist: partial credit and critical constraints", "[graders][zxbench]") {
  const auto grader = MakeZxInstructionChecklistGrader();
  json all_or_nothing = FixtureEntry("IF-CN-006");
  all_or_nothing["scoring"]["partialCredit"] = false;
  json critical = FixtureEntry("IF-CN-006");
  critical["requirements"]["constraints"][5]["critical"] = true;
  std::vector<std::string> swapped = kRows;
  std::swap(swapped[0], swapped[1]);
  CheckCases(*grader, {
      // partialCredit false (I L102-103): 5/6 -> compliance 0 -> round(20) = 20; 6/6 -> 100.
      {"all or nothing, one missed", all_or_nothing, kHeader + "\n" + Join(swapped), false, 20},
      {"all or nothing, all met", all_or_nothing, GoodCsv(), false, 100},
      // critical c6 fails (", " after 省份): 5/6 -> 86 capped at 60 (I L118-119).
      {"critical failed", critical, ReplaceAll(GoodCsv(), ",", ", "), false, 60},
      // a non-critical failure (c5) is not capped -> 86.
      {"critical met", critical, kHeader + "\n" + Join(swapped), false, 86},
  });
}

TEST_CASE("zx instruction_checklist: every bank excerpt passes CheckSpec", "[graders][zxbench]") {
  const auto grader = MakeZxInstructionChecklistGrader();
  const json entries = BankEntries();
  REQUIRE(entries.size() == 27);
  for (const json& entry : entries) {
    INFO(entry["id"]);
    CHECK_NOTHROW(grader->CheckSpec(entry, SourceLocation{"bank.json", 1, 1}));
  }
  CHECK_NOTHROW(grader->CheckSpec(FixtureEntry("IF-CN-006"), SourceLocation{"bank.json", 1, 1}));
  CHECK(grader->name() == "zxbench:instruction_checklist");
  CHECK(grader->version() == "1");
}

TEST_CASE("zx instruction_checklist: CheckSpec rejects malformed requirements", "[graders][zxbench]") {
  const auto grader = MakeZxInstructionChecklistGrader();
  const SourceLocation where{"zx-bench/benchmark.json", 12, 3};
  const std::string prefix = "zx-bench/benchmark.json:12:3: zxbench:instruction_checklist: ";
  const json base = FixtureEntry("IF-CN-006");
  const auto with = [&](const std::function<void(json&)>& edit) {
    json e = base;
    edit(e);
    return e;
  };
  struct Row {
    const char* name;
    json entry;
    std::string message;
  };
  const std::vector<Row> rows = {
      {"not an object", json::array(), "the spec must be the zx-bench entry (a JSON object)"},
      {"no constraints", with([](json& e) { e["requirements"].erase("constraints"); }),
       "requirements.constraints is missing or empty: zx-bench cannot measure instruction "
       "compliance without constraints (it reports an environment error)"},
      {"no id", with([](json& e) { e["requirements"]["constraints"][1].erase("id"); }),
       "requirements.constraints[1] has no id (zx-bench counts it as unmeasured)"},
      {"duplicate id", with([](json& e) { e["requirements"]["constraints"][3]["id"] = "c1"; }),
       "requirements.constraints[3] (id 'c1'): the id is also used by requirements.constraints[0] "
       "(zx-bench counts both as unmeasured)"},
      {"unknown type", with([](json& e) { e["requirements"]["constraints"][1]["type"] = "exact_cout"; }),
       "requirements.constraints[1] (id 'c2') has unknown type 'exact_cout', did you mean "
       "'exact_count'?"},
      {"invalid regex", with([](json& e) { e["requirements"]["constraints"][2]["check"]["pattern"] = "*"; }),
       "requirements.constraints[2] (id 'c3') (format): check.pattern is not a valid JavaScript "
       "regular expression: quantifier does not follow a repeatable item at offset 0"},
      {"possessive quantifier",
       with([](json& e) { e["requirements"]["constraints"][2]["check"]["pattern"] = "a*+"; }),
       "requirements.constraints[2] (id 'c3') (format): check.pattern is not a valid JavaScript "
       "regular expression: nothing to repeat at offset 2"},
      {"inline flag group",
       with([](json& e) { e["requirements"]["constraints"][2]["check"]["pattern"] = "(?i)x"; }),
       "requirements.constraints[2] (id 'c3') (format): check.pattern is not a valid JavaScript "
       "regular expression: invalid group at offset 0"},
      {"empty pattern", with([](json& e) { e["requirements"]["constraints"][5]["check"]["pattern"] = ""; }),
       "requirements.constraints[5] (id 'c6') (format) needs a non-empty string check.pattern"},
      {"no target", with([](json& e) { e["requirements"]["constraints"][1]["check"].erase("target"); }),
       "requirements.constraints[1] (id 'c2') (exact_count) needs a non-empty string check.target"},
      {"count not a number",
       with([](json& e) { e["requirements"]["constraints"][1]["check"]["count"] = "five"; }),
       "requirements.constraints[1] (id 'c2') (exact_count): check.count must be a number"},
      {"no patterns", with([](json& e) { e["requirements"]["constraints"][0]["check"]["patterns"] = json::array(); }),
       "requirements.constraints[0] (id 'c1') (inclusion): check.patterns must be a non-empty array "
       "of strings"},
      {"bad matchMode", with([](json& e) { e["requirements"]["constraints"][0]["check"]["matchMode"] = "fuzzy"; }),
       "requirements.constraints[0] (id 'c1') (inclusion): check.matchMode must be 'literal' or "
       "'positive'"},
      {"numeric_column asserts nothing",
       with([](json& e) { e["requirements"]["constraints"][4]["check"].erase("order"); }),
       "requirements.constraints[4] (id 'c5') (numeric_column) asserts nothing: give order, unique, "
       "integer, min, max, even, odd or modulus"},
      {"no check", with([](json& e) { e["requirements"]["constraints"][3].erase("check"); }),
       "requirements.constraints[3] (id 'c4') (exclusion) needs a 'check' object"},
      {"exact_order one pattern", Single("exact_order", {{"patterns", {"上海"}}}),
       "requirements.constraints[0] (id 't') (exact_order) needs two non-empty strings: "
       "check.before and check.after, or check.patterns[0] and [1]"},
      {"ordered_inclusion one step", Single("ordered_inclusion", {{"steps", {{"a"}}}}),
       "requirements.constraints[0] (id 't') (ordered_inclusion) needs at least two check.steps"},
      {"numeric_sequence without order",
       Single("numeric_sequence", {{"linePattern", "."}, {"valuePattern", "(\\d+)"}}),
       "requirements.constraints[0] (id 't') (numeric_sequence) asserts nothing: give order or "
       "consecutive"},
      {"paragraph_structure without starts",
       Single("paragraph_structure", {{"sentencesPerParagraph", 3}, {"maxSentenceChars", 20}}),
       "requirements.constraints[0] (id 't') (paragraph_structure): check.starts (a non-empty "
       "array), check.sentencesPerParagraph and check.maxSentenceChars (integers) are required"},
      {"sentence_structure with a fractional count",
       Single("sentence_structure", {{"count", 2.5}, {"hanChars", 12}}),
       "requirements.constraints[0] (id 't') (sentence_structure): check.count and check.hanChars "
       "(integers) are required"},
      {"line_structure bad odd pattern",
       Single("line_structure", {{"linePattern", "."}, {"oddPattern", "(["}}),
       "requirements.constraints[0] (id 't') (line_structure): check.oddPattern is not a valid "
       "JavaScript regular expression: unterminated character class"},
  };
  for (const auto& row : rows) {
    SECTION(row.name) {
      CHECK_THROWS_WITH(grader->CheckSpec(row.entry, where), prefix + row.message);
    }
  }
}

}  // namespace
}  // namespace evalrun
