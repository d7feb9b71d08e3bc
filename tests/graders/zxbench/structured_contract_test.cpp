// Parity of evalrun's zx-bench structured_contract grader with zx-bench's own scoring (issue 4),
// hostile outputs, and the spec checks. Each expected score was derived by reading zx-bench's
// evaluator sources, not by running evalrun; the derivation is written next to it. The sources
// are in Little-Star888/zx-bench at a5f6a19fb2159e703d4ea6659c2ce90280d5e52d (a fork of
// suncityldp/zx-bench; the store holds these files from the fork only), with line numbers of:
//   C1 = packages/core/src/evaluators/structuredContract.ts (structured_contract_v1)
//   C2 = packages/core/src/evaluators/structuredContractV2.ts (structured_contract_v2 and _v3)
//   PY = packages/core/src/evaluators/structuredFormats.py (CSV and XML, run by C2 L64-68)
// and of ajv 8.20.0 (lib/...) and ajv-formats 3.0.1 (src/formats.ts), which zx-bench pins (C1
// L116). Key places: C1 L24-50 prepareStructuredContract (the contract checks; AJV compiled
// with allErrors and strictSchema, C1 L39-41); C1 L95 `JSON.parse(output)`, no extraction or
// repair; C1 L96-99 criteria raw_json and standard_schema; C1 L108-113 one criterion per
// assertion: atPointer (C1 L54-63, own properties only) and isDeepStrictEqual (Object.is for
// numbers); C1 L114/L119 totalScore = every criterion passes ? 100 : 0. C2 L62 a response of
// more than 131072 UTF-16 code units is a syntax error; C2 L64-68 CSV/XML go through PY and the
// JSON of the parsed value; C2 L75 the base evaluation gets '' (invalid JSON) on a syntax error;
// C2 L99-100 total = all criteria pass ? 100 : 0. PY L33-38: csv.reader(strict=True), unique
// non-empty header, equal widths, one dict per row. PY L41-62: DOCTYPE/ENTITY refused,
// ElementTree.fromstring, records/record/field profile, <f null="true"/> is None.
// Every expected score was also replayed against zx-bench's code path with the real ajv 8.20.0,
// ajv-formats 3.0.1 and CPython 3.11 (outside this repository) and agrees.
#include "tests/support/catch.h"

#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "graders/builtin.h"
#include "graders/grader.h"
#include "plugins/sandbox.h"
#include "tests/support/fixtures.h"

namespace evalrun {
namespace {

using nlohmann::json;

json Entry(const std::string& id) {
  const json bank = json::parse(testing::ReadFixture("zx-bench/structured_contract_entries.json"));
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

int ZxScore(const Grade& grade) {
  return grade.evidence.at("zx_score").get<int>();
}

struct Case {
  const char* name;
  std::string output;
  int zx_score;
  bool truncated = false;
};

void CheckCases(const Grader& grader, const json& entry, const std::vector<Case>& cases) {
  for (const auto& c : cases) {
    SECTION(c.name) {
      const auto start = std::chrono::steady_clock::now();
      const Grade grade = RunGrader(grader, entry, c.output, c.truncated);
      INFO(grade.reason << " "
                        << grade.evidence.dump(-1, ' ', false, json::error_handler_t::replace));
      REQUIRE(grade.status == GradeStatus::kGraded);
      CHECK(ZxScore(grade) == c.zx_score);
      CHECK(grade.score == Approx(c.zx_score / 100.0));
      CHECK(grade.passed == (c.zx_score >= 60));
      CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
    }
  }
}

std::string Repeat(const std::string& s, size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (size_t i = 0; i < n; ++i) out += s;
  return out;
}

// ---- SOC-D-D2: structured_contract_v1, JSON, draft-07 -------------------------------------------

// The gold of SOC-D-D2's one assertion (pointer "", the whole document): the input text parsed
// once and then JSON-stringified once more, as the value of "test:literal".
const std::string kD2 = R"json({"test:literal":"\"key=a/b~c\\r\\nquoted=\\\"x\\\"\\tend\""})json";

TEST_CASE("zx structured_contract: SOC-D-D2 (v1, JSON, draft-07) scores as zx-bench scores it",
          "[graders][zxbench]") {
  const auto grader = MakeZxStructuredContractGrader();
  REQUIRE(grader != nullptr);
  const json entry = Entry("SOC-D-D2");
  CheckCases(
      *grader, entry,
      {
          // correct: JSON.parse succeeds (C1 L95); the schema (object, additionalProperties string)
          // accepts it; atPointer("") is the document and isDeepStrictEqual holds (C1 L108-113);
          // 3/3 criteria -> complete -> 100 (C1 L114, L119).
          {"correct", kD2, 100},
          // formatted differently: whitespace and newlines are JSON whitespace for JSON.parse; the
          // value is the same -> 100.
          {"pretty-printed", "{\n  \"test:literal\": " + kD2.substr(16, kD2.size() - 17) + "\n}",
           100},
          // formatted differently: \u escapes and "\/" decode to the same key and value -> 100.
          {"unicode escapes",
           R"json({"test\u003aliteral":"\u0022key=a\/b~c\\r\\nquoted=\\\"x\\\"\\tend\u0022"})json",
           100},
          // a duplicated key: JSON.parse keeps the last value, which is the gold -> 100.
          {"duplicate key, last wins", R"({"test:literal":"draft",)" + kD2.substr(1), 100},
          // cut by max_tokens yet complete: the evaluator never reads the finish reason
          // (C1 L72 evaluate(scenario, output)) -> 100.
          {"complete but marked truncated", kD2, 100, true},
          // wrong: parsed once but not stringified again (real CR LF TAB and quotes in the value):
          // schema passes, content_0 differs -> 2/3 -> 0.
          {"wrong: not stringified twice",
           R"json({"test:literal":"key=a/b~c\r\nquoted=\"x\"\tend"})json", 0},
          // wrong: an extra script is allowed by additionalProperties, but the gold is the whole
          // document, so isDeepStrictEqual fails (key count differs) -> 0.
          {"wrong: extra key", kD2.substr(0, kD2.size() - 1) + R"(,"lint":"eslint ."})", 0},
          // wrong type: additionalProperties {type: string} rejects 1 -> standard_schema fails ->
          // 0.
          {"wrong: number value", R"({"test:literal":1})", 0},
          // malformed: a ```json fence is not JSON and nothing is extracted (C1 L95) -> raw_json
          // fails, the rest is blocked (C1 L97, L109) -> 0.
          {"malformed: fenced", "```json\n" + kD2 + "\n```", 0},
          // malformed: text after the value -> JSON.parse throws -> 0.
          {"malformed: explanation after", kD2 + "\n以上。", 0},
          {"malformed: single quotes", "{'test:literal':'x'}", 0},
          // truncated: the first 40 bytes end inside a string -> JSON.parse throws -> 0.
          {"truncated", kD2.substr(0, 40), 0, true},
          // full-width punctuation: "：" is not JSON's ':' -> JSON.parse throws -> 0.
          {"full-width colon", R"({"test:literal"："x"})", 0},
          // 10 MB of spaces inside the object: v1 has no length limit (C2 L62 is v2 only) and
          // JSON.parse skips whitespace -> still the gold -> 100.
          {"10 MB of whitespace", "{" + std::string(10 << 20, ' ') + kD2.substr(1), 100},
          // a 10 MB value parses and is a string (schema passes) but is not the gold -> 0.
          {"10 MB value", R"({"test:literal":")" + std::string(10 << 20, 'x') + R"("})", 0},
          // invalid UTF-8 inside the value becomes U+FFFD (the HTTP client decodes it so): the
          // value differs -> 0.
          {"invalid UTF-8 in the value", std::string(R"({"test:literal":")") + "\xff\xfe" + R"("})",
           0},
          // invalid UTF-8 outside a string is not JSON -> 0.
          {"invalid UTF-8 outside strings", "\xc3" + kD2, 0},
          // deeply nested JSON: zx-bench parses it and additionalProperties {type: string} rejects
          // the array -> 0 (evalrun refuses nesting past 512 before parsing: also 0).
          {"600 levels of nesting",
           R"({"test:literal":)" + std::string(600, '[') + std::string(600, ']') + "}", 0},
      });
}

// ---- SOC2-A-H-route: structured_contract_v2, JSON, 2020-12, if/then/else ---------------------

const std::string kRoute =
    R"({"mode":"private","host":"svc.internal","ports":[443,8443],"auth":{"scheme":"mtls","ca":"ca/内网.pem"}})";

TEST_CASE("zx structured_contract: SOC2-A-H-route (v2, JSON, 2020-12) scores as zx-bench does",
          "[graders][zxbench]") {
  const auto grader = MakeZxStructuredContractGrader();
  const json entry = Entry("SOC2-A-H-route");
  CheckCases(
      *grader, entry,
      {
          // correct: 2020-12 schema (mode private -> then requires auth; every key is evaluated by
          // `properties`, so unevaluatedProperties false passes); gold deep-equal -> 100 (C2 L75,
          // C1 L108-119, C2 L99-100).
          {"correct", kRoute, 100},
          // formatted differently: other key order and layout; isDeepStrictEqual ignores key
          // order -> 100.
          {"reordered and pretty-printed",
           "{\n  \"auth\": {\"ca\": \"ca/内网.pem\", \"scheme\": \"mtls\"},\n  \"ports\": [443, "
           "8443],"
           "\n  \"host\": \"svc.internal\",\n  \"mode\": \"private\"\n}",
           100},
          // formatted differently: 4.43e2 and 8443.0 are the numbers 443 and 8443 (integers for
          // AJV's type integer), \u escapes are the same characters -> 100.
          {"number and escape spellings",
           R"({"mode":"private","host":"svc.internal","ports":[4.43e2,8443.0],"auth":{"scheme":"mtls","ca":"ca/\u5185\u7f51.pem"}})",
           100},
          // wrong: private without auth -> allOf/0/then/required fails -> 0.
          {"wrong: auth missing", R"({"mode":"private","host":"svc.internal","ports":[443,8443]})",
           0},
          // wrong: ports reordered -> schema passes, content_0 fails (arrays keep order) -> 0.
          {"wrong: ports reversed",
           R"({"mode":"private","host":"svc.internal","ports":[8443,443],"auth":{"scheme":"mtls","ca":"ca/内网.pem"}})",
           0},
          // wrong: an extra key is not evaluated by any keyword -> unevaluatedProperties false ->
          // 0.
          {"wrong: extra key", kRoute.substr(0, kRoute.size() - 1) + R"(,"timeout":30})", 0},
          // wrong: public with auth -> else: not {required: [auth]} fails -> 0.
          {"wrong: public with auth",
           R"({"mode":"public","host":"svc.internal","ports":[443,8443],"auth":{"scheme":"mtls","ca":"ca/内网.pem"}})",
           0},
          // wrong: duplicate ports -> uniqueItems -> 0.
          {"wrong: duplicate ports",
           R"({"mode":"private","host":"svc.internal","ports":[443,443],"auth":{"scheme":"mtls","ca":"ca/内网.pem"}})",
           0},
          // malformed: fenced -> C2 passes the text to C1, JSON.parse throws -> 0.
          {"malformed: fenced", "```json\n" + kRoute + "\n```", 0},
          // truncated after 60 bytes -> JSON.parse throws -> 0.
          {"truncated", kRoute.substr(0, 60), 0, true},
          // full-width colon -> not JSON -> 0.
          {"full-width colon",
           R"({"mode"："private","host":"svc.internal","ports":[443,8443],"auth":{"scheme":"mtls","ca":"ca/内网.pem"}})",
           0},
          // full-width full stop inside a value: valid JSON and schema, but "ca/内网．pem" is not
          // the
          // gold -> 0.
          {"full-width stop in a value",
           R"({"mode":"private","host":"svc.internal","ports":[443,8443],"auth":{"scheme":"mtls","ca":"ca/内网．pem"}})",
           0},
          // 200,000 trailing spaces: more than 131072 UTF-16 code units -> syntax error (C2 L62),
          // C1 gets '' (C2 L75) -> 0, although the JSON itself is correct.
          {"over the 128 KiB limit", kRoute + std::string(200000, ' '), 0},
          // 10 MB -> C2 L62 -> 0.
          {"10 MB", R"({"mode":"private","host":")" + std::string(10 << 20, 'x') + R"("})", 0},
          // invalid UTF-8 in host -> U+FFFD -> content_0 fails -> 0.
          {"invalid UTF-8 in a value",
           R"({"mode":"private","host":"svc.internal)"
           "\xff"
           R"(","ports":[443,8443],"auth":{"scheme":"mtls","ca":"ca/内网.pem"}})",
           0},
          // deep nesting under an extra key: unevaluatedProperties rejects "x" in zx-bench (evalrun
          // refuses the nesting before parsing) -> 0 either way.
          {"600 levels of nesting",
           kRoute.substr(0, kRoute.size() - 1) + R"(,"x":)" + std::string(600, '[') +
               std::string(600, ']') + "}",
           0},
      });
}

// ---- SOC2-F-H-csv: structured_contract_v2, CSV, schema true ------------------------------------

const std::string kCsv = "code,name,note\r\n000,x<y & z,C:\\tmp\\a\r\n002,false,\r\n";

TEST_CASE("zx structured_contract: SOC2-F-H-csv (v2, CSV) scores as zx-bench scores it",
          "[graders][zxbench]") {
  const auto grader = MakeZxStructuredContractGrader();
  const json entry = Entry("SOC2-F-H-csv");
  CheckCases(
      *grader, entry,
      {
          // correct: csv.reader gives [[code,name,note],[000,x<y & z,C:\tmp\a],[002,false,]]; one
          // dict per row (PY L33-38); schema true; both rows equal the gold strings -> 100.
          {"correct", kCsv, 100},
          // formatted differently: LF line ends and no final newline read the same rows -> 100.
          {"LF, no final newline", "code,name,note\n000,x<y & z,C:\\tmp\\a\n002,false,", 100},
          // formatted differently: every field quoted; quotes are removed by the reader -> 100.
          {"all fields quoted",
           "\"code\",\"name\",\"note\"\n\"000\",\"x<y & "
           "z\",\"C:\\tmp\\a\"\n\"002\",\"false\",\"\"\n",
           100},
          // formatted differently: columns in another order -> the same dicts (key order does
          // not matter to isDeepStrictEqual) -> 100.
          {"columns reordered", "note,code,name\nC:\\tmp\\a,000,x<y & z\n,002,false\n", 100},
          // wrong: doubled backslashes (the JSON escape copied literally) -> note differs -> 0.
          {"wrong: doubled backslashes", "code,name,note\n000,x<y & z,C:\\\\tmp\\\\a\n002,false,\n",
           0},
          // wrong: leading zeros dropped -> "2" != "002" -> 0.
          {"wrong: leading zeros dropped", "code,name,note\n000,x<y & z,C:\\tmp\\a\n2,false,\n", 0},
          // wrong: no header row -> the first data row becomes the header -> one row, wrong keys
          // -> 0.
          {"wrong: no header", "000,x<y & z,C:\\tmp\\a\n002,false,\n", 0},
          // malformed: a short row -> "CSV row width differs from header" (PY L36-37) -> syntax
          // error -> C1 gets '' -> 0.
          {"malformed: short row", "code,name,note\n000,x<y & z\n002,false,\n", 0},
          // malformed: text after a closing quote -> strict reader: "',' expected after '\"'" -> 0.
          {"malformed: text after a quote", "code,name,note\n\"000\"x,a,b\n", 0},
          // malformed: a blank line is a row [] of width 0 -> width differs -> 0.
          {"malformed: blank line", "code,name,note\n\n000,x<y & z,C:\\tmp\\a\n002,false,\n", 0},
          // malformed: a fence line "```csv" becomes the header; the next rows are wider -> 0.
          {"malformed: fenced", "```csv\n" + kCsv + "```", 0},
          // truncated mid-field: the second row is "000,x<y & z,C:\tm" -> parses, one row, wrong
          // note, the second record missing -> 0.
          {"truncated", "code,name,note\n000,x<y & z,C:\\tm", 0, true},
          // full-width commas are not delimiters: one column "code，name，note" -> wrong keys -> 0.
          {"full-width commas", "code，name，note\n000，x<y & z，C:\\tmp\\a\n002，false，\n", 0},
          // a quoted field left open -> "unexpected end of data" (strict) -> 0.
          {"unterminated quote", "code,name,note\n\"000,x<y & z,C:\\tmp\\a\n", 0},
          // over 131072 code units -> C2 L62 -> 0.
          {"over the 128 KiB limit", kCsv + std::string(200000, 'x'), 0},
          {"10 MB", kCsv + std::string(10 << 20, 'x'), 0},
          // invalid UTF-8 in the note becomes U+FFFD -> differs -> 0.
          {"invalid UTF-8 in a field", "code,name,note\n000,x<y & z,C:\\tmp\\a\xff\n002,false,\n",
           0},
          // deeply nested JSON instead of CSV: one header field, no data rows -> [] -> 0.
          {"600 levels of nesting", std::string(600, '[') + std::string(600, ']'), 0},
      });
}

// ---- SOC3-F-XML: structured_contract_v2, XML, records profile ---------------------------------

const std::string kXml =
    "<records><record><actor>A/01</actor><index>0</index><code>007</code><note>a,\"b\"\n尾</note>"
    "</record><record><actor>A/01</actor><index>1</index><code>008</code><note></note></record>"
    "<record><actor>B~02</actor><index>0</index><code>010</code><note>ON</note></record>"
    "<record><actor>B~02</actor><index>1</index><code>011</code><note null=\"true\"/></record>"
    "</records>";

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  const size_t at = s.find(from);
  if (at == std::string::npos) throw std::runtime_error("no '" + from + "' to replace");
  return s.replace(at, from.size(), to);
}

TEST_CASE("zx structured_contract: SOC3-F-XML (v2, XML) scores as zx-bench scores it",
          "[graders][zxbench]") {
  const auto grader = MakeZxStructuredContractGrader();
  const json entry = Entry("SOC3-F-XML");
  CheckCases(
      *grader, entry,
      {
          // correct: root records, four records, fields as text, <note></note> is '' and
          // <note null="true"/> is None (PY L41-62); the schema (4 objects, note string or null)
          // passes; the five assertions (the whole array and each row) hold -> 7/7 -> 100.
          {"correct", kXml, 100},
          // formatted differently: an XML declaration, indentation (whitespace-only text and tails
          // are allowed, PY L45, L49, L53), <note/> for '' and <note null="true"></note> -> 100.
          {"declaration and indentation",
           "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<records>\n  <record>\n    "
           "<actor>A/01</actor>"
           "<index>0</index><code>007</code><note>a,\"b\"\n尾</note>\n  </record>\n  <record>\n"
           "    <actor>A/01</actor><index>1</index><code>008</code><note/>\n  </record>\n  "
           "<record>\n"
           "    <actor>B~02</actor><index>0</index><code>010</code><note>ON</note>\n  </record>\n"
           "  <record>\n    <actor>B~02</actor><index>1</index><code>011</code>"
           "<note null=\"true\"></note>\n  </record>\n</records>\n",
           100},
          // formatted differently: entity and character references, a CDATA section and a comment
          // (ElementTree drops comments and joins the text around them) -> the same strings -> 100.
          {"references, CDATA and a comment",
           Replace(Replace(kXml, "a,\"b\"\n尾", "a,&quot;b&#34;&#10;&#x5C3E;"), "<note>ON</note>",
                   "<note><![CDATA[O]]><!-- -->N</note>"),
           100},
          // CRLF line ends are normalised to LF by the XML parser -> the note still has "\n" ->
          // 100.
          {"CRLF", Replace(kXml, "\n", "\r\n"), 100},
          // wrong: <note/> for null gives '' -> row 3 and the whole array differ -> 5/7 -> 0.
          {"wrong: null written as empty", Replace(kXml, "<note null=\"true\"/>", "<note/>"), 0},
          // wrong: spaces inside a field are kept -> " ON " != "ON" -> 0.
          {"wrong: spaces kept", Replace(kXml, "<note>ON</note>", "<note> ON </note>"), 0},
          // malformed: a bare & -> "not well-formed (invalid token)" -> syntax error -> 0.
          {"malformed: bare ampersand", Replace(kXml, "ON", "O&N"), 0},
          // malformed: a DOCTYPE is refused before parsing (PY L42-43) -> 0.
          {"malformed: DOCTYPE", "<!DOCTYPE records>" + kXml, 0},
          // malformed: an attribute on the root -> "Expected records root" (PY L45-46) -> 0.
          {"malformed: root attribute", Replace(kXml, "<records>", "<records version=\"1\">"), 0},
          // malformed: a default namespace makes the root "{urn:x}records" -> 0.
          {"malformed: namespace", Replace(kXml, "<records>", "<records xmlns=\"urn:x\">"), 0},
          // malformed: a nested element in a field (PY L53-54) -> 0.
          {"malformed: nested field", Replace(kXml, "<note>ON</note>", "<note><b>ON</b></note>"),
           0},
          // malformed: a field twice in one record (PY L53) -> 0.
          {"malformed: duplicate field",
           Replace(kXml, "<code>010</code>", "<code>010</code><code>010</code>"), 0},
          // malformed: null="false" is an attribute other than null="true" (PY L59-60) -> 0.
          {"malformed: null=\"false\"", Replace(kXml, "null=\"true\"", "null=\"false\""), 0},
          // malformed: text directly inside a record (PY L49) -> 0.
          {"malformed: text in a record",
           Replace(kXml, "<record><actor>A/01</actor><index>0",
                   "<record>r<actor>A/01</actor><index>0"),
           0},
          // malformed: a second root -> "junk after document element" -> 0.
          {"malformed: two roots", kXml + "<records/>", 0},
          {"malformed: fenced", "```xml\n" + kXml + "\n```", 0},
          // truncated: the first 200 bytes end inside the second record -> unclosed -> 0.
          {"truncated", kXml.substr(0, 200), 0, true},
          // full-width punctuation in a value: well-formed, but "a，“b”" differs -> 0.
          {"full-width punctuation", Replace(kXml, "a,\"b\"", "a，“b”"), 0},
          // a no-break space between records: Python's str.strip() removes it, so the tail counts
          // as blank (PY L49) -> 100.
          {"no-break space between records",
           Replace(kXml, "</record><record>", "</record>\xc2\xa0<record>"), 100},
          // deep nesting: 3000 levels under the root -> the first record is not <record> (PY
          // L49-50) -> 0.
          {"3000 levels of nesting",
           "<records>" + Repeat("<r>", 3000) + Repeat("</r>", 3000) + "</records>", 0},
          // over 131072 code units -> C2 L62 -> 0; 10 MB likewise.
          {"over the 128 KiB limit", Replace(kXml, "ON", std::string(200000, 'O')), 0},
          {"10 MB", Replace(kXml, "ON", std::string(10 << 20, 'O')), 0},
          // invalid UTF-8 in a field -> U+FFFD -> the note differs -> 0.
          {"invalid UTF-8 in a field", Replace(kXml, "<note>ON</note>", "<note>ON\xff</note>"), 0},
      });
}

// ---- AJV's semantics, on the route entry with other schemas ------------------------------------

json WithSchema(json schema, json assertions = json::array()) {
  json entry = Entry("SOC2-A-H-route");
  entry["requirements"]["schema"] = std::move(schema);
  entry["requirements"]["assertions"] = std::move(assertions);
  return entry;
}

TEST_CASE("zx structured_contract: AJV's own semantics are kept", "[graders][zxbench]") {
  const auto grader = MakeZxStructuredContractGrader();
  struct Row {
    const char* name;
    json entry;
    std::string output;
    int zx_score;
  };
  const json if_else = json::parse(R"({"if":{"properties":{"a":{"const":1}},"required":["a"]},
      "then":{"properties":{"b":{}}},"else":{"properties":{"c":{}}},"unevaluatedProperties":false})");
  const json contains = json::parse(R"({"contains":{"type":"string"},"unevaluatedItems":false})");
  const json zero = json::parse(R"([{"pointer":"/0","expected":0,"description":"zero"}])");
  const json length = json::parse(R"([{"pointer":"/length","expected":2,"description":"two"}])");
  const std::vector<Row> rows = {
      // ajv lib/vocabularies/applicator/if.ts L60 merges what `if` evaluated at compile time,
      // and L67 (then) turns it into a variable assigned only when `then` runs: with "a" not 1
      // the else branch runs and "a" is unevaluated -> unevaluatedProperties fails -> 0.
      {"if: a failing condition's properties are unevaluated", if_else, R"({"a":"Z","c":1})", 0},
      // if holds: then runs, {a, b} evaluated -> 100.
      {"if: then keeps the condition's properties", if_else, R"({"a":1,"b":1})", 100},
      // if fails, else evaluates "c" -> 100.
      {"if: else evaluates its own", if_else, R"({"c":1})", 100},
      // ajv lib/vocabularies/applicator/contains.ts L62 `it.items = true`: every item counts as
      // evaluated once contains is there (the specification would mark only matching items)
      // -> unevaluatedItems false passes -> 100.
      {"contains evaluates every item", contains, R"(["a",1])", 100},
      // no string: contains fails -> 0.
      {"contains needs a match", contains, "[1]", 0},
      // multipleOf.ts L29 `res !== parseInt(res)`: 0.3 / 0.1 = 2.9999999999999996 -> 0.
      {"multipleOf in floating point", json{{"multipleOf", 0.1}}, "0.3", 0},
      {"multipleOf exact", json{{"multipleOf", 0.1}}, "0.5", 100},
      // ajv-formats src/formats.ts L136-148: 2023 is not a leap year -> 0; 2024 is -> 100.
      {"format date: not a leap year", json{{"format", "date"}}, R"("2023-02-29")", 0},
      {"format date: leap year", json{{"format", "date"}}, R"("2024-02-29")", 100},
      // ajv-formats src/formats.ts getTime L160-176 ("date-time" requires a zone, L171):
      // second 60 only at 23:59 UTC (L176) -> 100; at 22:59 UTC -> 0; 00:59:60+01:00 is 23:59
      // UTC -> 100; no time zone -> 0.
      {"format date-time: leap second at 23:59 UTC", json{{"format", "date-time"}},
       R"("2016-12-31T23:59:60Z")", 100},
      {"format date-time: leap second at 22:59 UTC", json{{"format", "date-time"}},
       R"("2016-12-31T22:59:60Z")", 0},
      {"format date-time: leap second with an offset", json{{"format", "date-time"}},
       R"("2017-01-01T00:59:60+01:00")", 100},
      {"format date-time: no time zone", json{{"format", "date-time"}}, R"("2016-12-31T23:59:59")",
       0},
      // uniqueItems uses fast-deep-equal: 1 and 1.0 are the same number, so are 0 and -0,
      // and key order does not matter -> 0; 1 and "1" differ -> 100.
      {"uniqueItems: 1 and 1.0", json{{"uniqueItems", true}}, "[1,1.0]", 0},
      {"uniqueItems: key order", json{{"uniqueItems", true}}, R"([{"a":1,"b":2},{"b":2,"a":1}])",
       0},
      {"uniqueItems: 1 and \"1\"", json{{"uniqueItems", true}}, R"([1,"1"])", 100},
      // isDeepStrictEqual compares numbers with Object.is (C1 L110): -0 is not 0 -> 0; 0.0
      // is 0 -> 100.
      {"assertion: -0 is not 0", WithSchema(true, zero), "[-0]", 0},
      {"assertion: 0.0 is 0", WithSchema(true, zero), "[0.0]", 100},
      // atPointer uses Object.hasOwn (C1 L59): an array's own "length" is found -> 100.
      {"assertion: an array's length", WithSchema(true, length), "[7,8]", 100},
      {"assertion: length differs", WithSchema(true, length), "[1]", 0},
  };
  for (const auto& row : rows) {
    SECTION(row.name) {
      const json entry = row.entry.contains("requirements") ? row.entry : WithSchema(row.entry);
      const Grade grade = RunGrader(*grader, entry, row.output);
      INFO(grade.reason << " " << grade.evidence.dump());
      REQUIRE(grade.status == GradeStatus::kGraded);
      CHECK(ZxScore(grade) == row.zx_score);
    }
  }
}

// ---- What is not graded ---------------------------------------------------------------------

json MoreEntry(const std::string& id) {
  for (const auto& e : json::parse(testing::ReadFixture("zx-bench/more_entries.json"))) {
    if (e.value("id", "") == id) return e;
  }
  FAIL(id << " is not in more_entries.json");
  return {};
}

// An answer in a format Python reads (YAML, TOML), graded in the sandbox: its score, the first
// criterion that fails ("" when all pass) and how that criterion's text starts.
struct FormatRow {
  const char* name;
  std::string text;
  int zx_score;
  const char* first_failure;
  const char* detail = "";
};

void CheckFormatRows(const Grader& grader, const json& entry, const Sandbox& sandbox,
                     const std::vector<FormatRow>& rows) {
  for (const FormatRow& row : rows) {
    SECTION(row.name) {
      Answer answer;
      answer.text = row.text;
      GradeContext context;
      context.sandbox = &sandbox;
      const Grade grade = grader.Run(entry, answer, context);
      INFO(grade.reason << " " << grade.evidence.dump());
      REQUIRE(grade.status == GradeStatus::kGraded);
      CHECK(ZxScore(grade) == row.zx_score);
      std::string failed, detail;
      for (const auto& c : grade.evidence["criteria"]) {
        if (c["pass"] == false && failed.empty()) {
          failed = c["id"].get<std::string>();
          detail = c["evidence"].get<std::string>();
        }
      }
      CHECK(failed == row.first_failure);
      CHECK_THAT(detail, Catch::StartsWith(row.detail));
    }
  }
}

// SOC2-F-H-yaml (v2, YAML, the real entry in more_entries.json): PyYAML under zx-bench's
// JSON-compatible profile (structuredFormats.py) in the sandbox, then the JSON path.
TEST_CASE("zx structured_contract: SOC2-F-H-yaml (v2, YAML) scores as zx-bench scores it",
          "[graders][zxbench]") {
  const auto grader = MakeZxStructuredContractGrader();
  const json entry = MoreEntry("SOC2-F-H-yaml");
  const auto sandbox = MakeBubblewrapSandbox();
  if (auto why = sandbox->Unavailable()) {
    WARN("bubblewrap unavailable, YAML not tested: " << *why);
    return;
  }
  if (!grader->Unrunnable(entry).empty()) {
    CHECK(grader->Unrunnable(entry) ==
          "YAML responses are parsed with PyYAML, and python3 with yaml is not installed "
          "(install Debian's python3 and python3-yaml)");
    return;
  }
  const std::string good =
      "- code: \"000\"\n  name: \"x<y & z\"\n  note: 'C:\\tmp\\a'\n"
      "- code: \"002\"\n  name: \"false\"\n  note: \"\"\n";
  CheckFormatRows(*grader, entry, *sandbox, {
      {"block YAML with quoted strings", good, 100, ""},
      {"JSON is YAML", R"([{"code":"000","name":"x<y & z","note":"C:\\tmp\\a"},)"
                       R"({"code":"002","name":"false","note":""}])", 100, ""},
      {"a plain C:\\tmp\\a is a string", "- {code: '000', name: x<y & z, note: C:\\tmp\\a}\n"
                                    "- {code: '002', name: 'false', note: ''}", 100, ""},
      // 000 resolves as the integer 0 and false as a boolean: the assertion fails.
      {"an unquoted 000", "- code: 000\n  name: \"x<y & z\"\n  note: 'C:\\tmp\\a'\n"
                          "- code: \"002\"\n  name: \"false\"\n  note: \"\"\n", 0, "content_0"},
      {"an unquoted false", "- code: \"000\"\n  name: \"x<y & z\"\n  note: 'C:\\tmp\\a'\n"
                            "- code: \"002\"\n  name: false\n  note: \"\"\n", 0, "content_0"},
      {"an anchor", "- &a {code: '000', name: x<y & z, note: C:\\tmp\\a}\n- *a", 0, "raw_format"},
      {"an explicit tag", "- code: !!str 000\n  name: x", 0, "raw_format"},
      {"a duplicate key", "- code: '000'\n  code: '001'", 0, "raw_format"},
      {"two documents", good + "---\n- a\n", 0, "raw_format"},
      {"not YAML at all", "- [unclosed", 0, "raw_format", "Invalid raw YAML: "},
  });
}

// TOML (v2 on): structuredFormats.py's TOML branch is tomllib.loads, then json.dumps with
// allow_nan=False. No TOML entry is in the fixtures: this one is SOC2-F-H-yaml with the format
// changed to toml and the records under a `records` key (a TOML document is a table).
TEST_CASE("zx structured_contract: TOML answers are read by tomllib as zx-bench reads them",
          "[graders][zxbench]") {
  const auto grader = MakeZxStructuredContractGrader();
  json entry = MoreEntry("SOC2-F-H-yaml");
  entry["id"] = "SOC2-F-H-toml (constructed)";
  entry["requirements"]["format"] = "toml";
  auto& expected = entry["requirements"]["assertions"][0]["expected"];
  expected = {{"records", expected}};
  const auto sandbox = MakeBubblewrapSandbox();
  if (auto why = sandbox->Unavailable()) {
    WARN("bubblewrap unavailable, TOML not tested: " << *why);
    return;
  }
  if (!grader->Unrunnable(entry).empty()) {
    CHECK(grader->Unrunnable(entry) ==
          "TOML responses are parsed with Python's tomllib, and no python3 of 3.11 or later is "
          "installed (install Debian's python3)");
    return;
  }
  const std::string tail = "\n[[records]]\ncode = \"002\"\nname = \"false\"\nnote = \"\"\n";
  CheckFormatRows(*grader, entry, *sandbox, {
      {"arrays of tables",
       "[[records]]\ncode = \"000\"\nname = \"x<y & z\"\nnote = 'C:\\tmp\\a'\n" + tail, 100, "",
       ""},
      {"inline tables",
       "records = [{code = \"000\", name = \"x<y & z\", note = \"C:\\\\tmp\\\\a\"}, "
       "{code = \"002\", name = \"false\", note = \"\"}]",
       100, "", ""},
      {"a boolean false", "[[records]]\ncode = \"000\"\nname = \"x<y & z\"\nnote = 'C:\\tmp\\a'\n"
                          "\n[[records]]\ncode = \"002\"\nname = false\nnote = \"\"\n",
       0, "content_0", ""},
      // TOML has no leading zeros: 000 is a syntax error.
      {"an unquoted 000", "[[records]]\ncode = 000\n" + tail, 0, "raw_format",
       "Invalid raw TOML: "},
      // A date parses, and json.dumps refuses it.
      {"a date", "day = 1979-05-27\n[[records]]\ncode = \"000\"\n" + tail, 0, "raw_format",
       "Invalid raw TOML: Object of type date is not JSON serializable"},
      {"nan", "x = nan\n" + tail, 0, "raw_format",
       "Invalid raw TOML: Out of range float values are not JSON compliant"},
      {"a key given twice", "[[records]]\ncode = \"000\"\ncode = \"001\"\n", 0, "raw_format",
       "Invalid raw TOML: Cannot overwrite a value"},
      {"JSON is not TOML", R"([{"code":"000"}])", 0, "raw_format", "Invalid raw TOML: "},
  });
}

TEST_CASE("zx structured_contract: what is not graded", "[graders][zxbench]") {
  const auto grader = MakeZxStructuredContractGrader();
  json csv = Entry("SOC2-F-H-csv");
  SECTION("empty output is no answer (zx-bench: 0, left out of the dimension score)") {
    const Grade grade = RunGrader(*grader, csv, " \n\t");
    CHECK(grade.status == GradeStatus::kNoAnswer);
    CHECK(ZxScore(grade) == 0);
  }
  SECTION("YAML without a sandbox is an environment error, not a verdict") {
    csv["requirements"]["format"] = "yaml";
    const Grade grade = RunGrader(*grader, csv, "- code: '000'");
    CHECK(grade.status == GradeStatus::kEnvError);
    CHECK(grade.reason == "no sandbox to run python3 in (install bubblewrap)");
  }
  SECTION("TOML without a sandbox is an environment error, not a verdict") {
    csv["requirements"]["format"] = "toml";
    const Grade grade = RunGrader(*grader, csv, "a = 1");
    CHECK(grade.status == GradeStatus::kEnvError);
    CHECK(grade.reason == "no sandbox to run python3 in (install bubblewrap)");
  }
  SECTION("SVG is skipped: zx-bench renders it in Chromium") {
    csv["requirements"]["format"] = "svg";
    csv["requirements"]["svg"] = {{"width", 10}, {"height", 10}};
    const Grade grade = RunGrader(*grader, csv, "<svg/>");
    CHECK(grade.status == GradeStatus::kSkipped);
    CHECK(grade.reason.find("Chromium") != std::string::npos);
  }
  SECTION("a model-written schema (generatedSchema) is skipped") {
    json route = Entry("SOC2-A-H-route");
    route["requirements"]["generatedSchema"] = {{"cases", {{{"data", 1}, {"valid", true}}}}};
    const Grade grade = RunGrader(*grader, route, "true");
    CHECK(grade.status == GradeStatus::kSkipped);
    CHECK(grade.reason.find("model-written schemas") != std::string::npos);
  }
  SECTION("v4's private oracle is skipped") {
    csv["graderVersion"] = "structured_contract_v4";
    const Grade grade = RunGrader(*grader, csv, kCsv);
    CHECK(grade.status == GradeStatus::kSkipped);
    CHECK(grade.reason.find("oracle") != std::string::npos);
  }
  SECTION("a contract zx-bench cannot compile is skipped when graded anyway") {
    csv["requirements"]["output_policy"] = "fenced_allowed";
    const Grade grade = RunGrader(*grader, csv, kCsv);
    CHECK(grade.status == GradeStatus::kSkipped);
    CHECK(grade.reason ==
          "zx-bench cannot compile this contract: requirements.output_policy "
          "must be 'raw_only' (zx-bench: Incomplete structured contract)");
  }
  SECTION("the grader names itself and its version") {
    CHECK(grader->name() == "zxbench:structured_contract");
    CHECK(grader->version() == "3");
    const Grade grade = RunGrader(*grader, csv, kCsv);
    CHECK(grade.evidence.at("zx_evaluator") == "structured_contract_v2@a5f6a19f");
  }
}

// ---- CheckSpec ----------------------------------------------------------------------------------

TEST_CASE("zx structured_contract: CheckSpec accepts the bank's entries and names the problem",
          "[graders][zxbench]") {
  const auto grader = MakeZxStructuredContractGrader();
  const SourceLocation where{"bank.json", 3, 5};
  const std::string prefix = "bank.json:3:5: zxbench:structured_contract: ";
  for (const char* id : {"SOC-D-D2", "SOC2-A-H-route", "SOC2-F-H-csv", "SOC3-F-XML"}) {
    SECTION(std::string("accepts ") + id) {
      CHECK_NOTHROW(grader->CheckSpec(Entry(id), where));
    }
  }
  json route = Entry("SOC2-A-H-route");
  json& req = route["requirements"];
  SECTION("the spec must be an object") {
    CHECK_THROWS_WITH(grader->CheckSpec(json::array(), where),
                      prefix + "the spec must be the zx-bench entry (a JSON object)");
  }
  SECTION("unknown grader version") {
    route["graderVersion"] = "structured_contract_v9";
    CHECK_THROWS_WITH(grader->CheckSpec(route, where),
                      prefix +
                          "graderVersion must be one of structured_contract_v1 to _v4, got "
                          "'structured_contract_v9'");
  }
  SECTION("v1 grades JSON only (C1 L24)") {
    json csv = Entry("SOC2-F-H-csv");
    csv["graderVersion"] = "structured_contract_v1";
    CHECK_THROWS_WITH(grader->CheckSpec(csv, where),
                      prefix +
                          "requirements.format: structured_contract_v1 grades only 'json' "
                          "(zx-bench: Incomplete structured contract)");
  }
  SECTION("an unknown format (C2 L18)") {
    req["format"] = "html";
    CHECK_THROWS_WITH(grader->CheckSpec(route, where),
                      prefix +
                          "requirements.format: expected json, csv, xml, toml, yaml or svg "
                          "(zx-bench: Unsupported extended format)");
  }
  SECTION("output_policy (C1 L24)") {
    req["output_policy"] = "fenced_allowed";
    CHECK_THROWS_WITH(grader->CheckSpec(route, where),
                      prefix +
                          "requirements.output_policy must be 'raw_only' (zx-bench: "
                          "Incomplete structured contract)");
  }
  SECTION("dialect (C1 L25)") {
    req["dialect"] = "draft-04";
    CHECK_THROWS_WITH(grader->CheckSpec(route, where),
                      prefix +
                          "requirements.dialect must be 'draft-07' or '2020-12' (zx-bench: "
                          "Incomplete structured contract)");
  }
  SECTION("formatAssertions must be a boolean (C1 L25)") {
    req["formatAssertions"] = "yes";
    CHECK_THROWS_WITH(grader->CheckSpec(route, where),
                      prefix +
                          "requirements.formatAssertions must be true or false (zx-bench: "
                          "Incomplete structured contract)");
  }
  SECTION("family (C1 L26)") {
    req["family"] = "";
    CHECK_THROWS_WITH(grader->CheckSpec(route, where),
                      prefix +
                          "requirements.family is missing (zx-bench: Incomplete structured "
                          "contract)");
  }
  SECTION("schema missing (C1 L26)") {
    req.erase("schema");
    CHECK_THROWS_WITH(grader->CheckSpec(route, where),
                      prefix +
                          "requirements.schema is missing (zx-bench: Incomplete structured "
                          "contract)");
  }
  SECTION("schema of the wrong kind (C1 L31-32)") {
    req["schema"] = json::array();
    CHECK_THROWS_WITH(grader->CheckSpec(route, where),
                      prefix + "requirements.schema: Schema must be an object or boolean");
  }
  SECTION("$schema of the other dialect (C1 L34-35)") {
    req["dialect"] = "draft-07";
    CHECK_THROWS_WITH(grader->CheckSpec(route, where),
                      prefix +
                          "requirements.schema: Schema dialect disagrees with draft-07 "
                          "($schema must be http://json-schema.org/draft-07/schema#)");
  }
  SECTION("an unknown keyword (AJV strict mode, C1 L39)") {
    req["schema"]["properties"]["host"]["format2"] = "hostname";
    CHECK_THROWS_WITH(grader->CheckSpec(route, where),
                      prefix +
                          "requirements.schema/properties/host: unknown keyword 'format2' "
                          "(AJV's strict mode refuses it)");
  }
  SECTION("an unknown format while formatAssertions is on") {
    req["schema"]["properties"]["host"]["format"] = "hostnam";
    CHECK_THROWS_WITH(grader->CheckSpec(route, where),
                      prefix +
                          "requirements.schema/properties/host/format: unknown format "
                          "\"hostnam\"");
    req["formatAssertions"] = false;  // validateFormats off: AJV ignores the keyword
    CHECK_NOTHROW(grader->CheckSpec(route, where));
  }
  SECTION("a reference that does not resolve") {
    req["schema"]["properties"]["host"] = {{"$ref", "#/$defs/missing"}};
    CHECK_THROWS_WITH(grader->CheckSpec(route, where),
                      prefix +
                          "requirements.schema/properties/host/$ref: can't resolve "
                          "reference #/$defs/missing");
  }
  SECTION("a pattern that does not compile") {
    req["schema"]["properties"]["host"]["pattern"] = "(";
    CHECK_THROWS_WITH(grader->CheckSpec(route, where),
                      Catch::StartsWith(prefix + "requirements.schema/properties/host/pattern: "
                                                 "invalid regular expression: "));
  }
  SECTION("a value the meta-schema refuses") {
    req["schema"]["properties"]["ports"]["minItems"] = -1;
    CHECK_THROWS_WITH(grader->CheckSpec(route, where),
                      prefix +
                          "requirements.schema/properties/ports/minItems: must be a "
                          "non-negative integer");
  }
  SECTION("if without then and else (strict mode)") {
    req["schema"]["allOf"][0].erase("then");
    req["schema"]["allOf"][0].erase("else");
    CHECK_THROWS_WITH(grader->CheckSpec(route, where),
                      prefix +
                          "requirements.schema/allOf/0: \"if\" without \"then\" and "
                          "\"else\" is ignored (strict mode)");
  }
  SECTION("if and else without then, refused from v2 on (C2 L25-26)") {
    req["schema"]["allOf"][0].erase("then");
    CHECK_THROWS_WITH(grader->CheckSpec(route, where),
                      prefix +
                          "requirements.schema: AJV profile does not admit dynamicRef or "
                          "if/else without then (zx-bench refuses such contracts from v2 "
                          "on)");
  }
  SECTION("an assertion pointer (C1 L46-49)") {
    req["assertions"][0]["pointer"] = "mode";
    CHECK_THROWS_WITH(grader->CheckSpec(route, where),
                      prefix +
                          "requirements.assertions/0: Invalid JSON Pointer assertion (needs "
                          "a pointer \"\" or \"/...\" with ~0/~1 escapes, `expected` and a "
                          "non-empty description)");
    req["assertions"][0]["pointer"] = "/a~2";
    CHECK_THROWS(grader->CheckSpec(route, where));
  }
  SECTION("generatedSchema cases (C2 L35)") {
    req["generatedSchema"] = {{"cases", json::array()}};
    CHECK_THROWS_WITH(grader->CheckSpec(route, where),
                      prefix + "requirements.generatedSchema: Invalid generated-schema cases");
  }
}

}  // namespace
}  // namespace evalrun
