// zxbench:schema_compliance (graders/zxbench/schema_compliance.cpp) on the real SO-CN entries of
// tests/fixtures/zx-bench/more_entries.json (8e0adf68): JSON with a schema and constraints, CSV
// with cell rules, YAML, XML, HTML and Mermaid with text contracts. The answers are
// tests/fixtures/zx-bench/schema_compliance_samples.jsonl; the expected totals and axes are what
// zx-bench's own evaluator (structuredOutput.ts v6, parsers/index.ts a8f5306, textStructure.ts
// and structuredTextContracts.ts a5f6a19f) gives for them, run under Node.
#include "tests/support/catch.h"

#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "graders/grader.h"
#include "tests/support/fixtures.h"

namespace evalrun {
namespace {

using nlohmann::json;

json MoreEntry(const std::string& id) {
  const json bank = json::parse(testing::ReadFixture("zx-bench/more_entries.json"));
  for (const auto& entry : bank) {
    if (entry.value("id", "") == id) return entry;
  }
  throw std::runtime_error("fixture entry " + id + " missing");
}

std::vector<json> Samples() {
  std::istringstream in(testing::ReadFixture("zx-bench/schema_compliance_samples.jsonl"));
  std::vector<json> out;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(json::parse(line));
  }
  return out;
}

const Grader& SchemaCompliance() {
  const Grader* grader = GraderRegistry::Builtin().Find("zxbench:schema_compliance");
  REQUIRE(grader != nullptr);
  return *grader;
}

Grade Run(const json& entry, const std::string& output) {
  Answer answer;
  answer.text = output;
  return SchemaCompliance().Run(entry, answer, GradeContext{});
}

TEST_CASE("zx schema_compliance: real entries score as zx-bench's evaluator scores them",
          "[zxbench]") {
  // One line per sample, in the samples file's order: the total and the failed criteria.
  struct Expected {
    int zx_score;
    std::vector<std::string> failed;
  };
  const std::vector<Expected> expected = {
      {100, {}},  // SO-CN-006 #1
      {84, {"structured_output_discipline"}},  // SO-CN-006 #2
      {72, {"structured_schema", "structured_field_6", "structured_field_7", "structured_output_discipline"}},  // SO-CN-006 #3
      {47, {"structured_syntax", "structured_schema", "structured_field_0", "structured_field_1", "structured_field_2", "structured_field_3", "structured_field_4", "structured_field_5", "structured_field_6", "structured_field_7", "structured_field_8"}},  // SO-CN-006 #4
      {100, {}},  // SO-CN-011 #5
      {37, {"structured_syntax", "structured_field_3", "structured_field_4", "structured_field_5", "structured_field_7", "structured_field_8", "structured_field_9", "structured_output_discipline"}},  // SO-CN-011 #6
      {78, {"structured_field_5", "structured_field_6", "structured_field_7"}},  // SO-CN-012 #7
      {33, {"structured_syntax", "structured_field_2", "structured_field_3", "structured_field_5", "structured_field_6", "structured_field_8", "structured_field_9", "structured_field_10", "structured_field_11", "structured_field_12", "structured_field_13", "structured_field_14"}},  // SO-CN-012 #8
      {100, {}},  // SO-CN-014 #9
      {20, {"structured_field_3", "structured_field_4", "structured_field_5", "structured_field_6", "structured_field_7", "structured_field_8", "structured_output_discipline"}},  // SO-CN-014 #10
      {100, {}},  // SO-CN-019 #11
      {20, {"structured_field_2", "structured_field_3", "structured_field_5", "structured_field_6", "structured_field_7", "structured_field_8", "structured_field_9", "structured_output_discipline"}},  // SO-CN-019 #12
      {100, {}},  // SO-CN-020 #13
      {60, {"structured_field_0", "structured_field_7", "structured_field_8", "structured_field_9"}},  // SO-CN-020 #14
      {89, {"structured_field_11"}},  // SO-CN-037 #15
      {68, {"structured_field_5", "structured_field_7", "structured_field_9", "structured_field_11", "structured_field_12"}},  // SO-CN-037 #16
  };
  const std::vector<json> samples = Samples();
  REQUIRE(samples.size() == expected.size());
  for (size_t i = 0; i < samples.size(); ++i) {
    CAPTURE(i, samples[i]["id"]);
    const Grade g = Run(MoreEntry(samples[i]["id"]), samples[i]["output"]);
    INFO(g.evidence.dump());
    REQUIRE(g.status == GradeStatus::kGraded);
    std::vector<std::string> failed;
    for (const json& c : g.evidence["criteria"]) {
      if (!c["pass"].get<bool>()) failed.push_back(c["id"]);
    }
    CHECK(g.evidence["zx_score"] == expected[i].zx_score);
    CHECK(failed == expected[i].failed);
    CHECK(g.passed == (expected[i].zx_score >= 60));
  }
}

TEST_CASE("zx schema_compliance: the axes and evidence of a JSON answer", "[zxbench]") {
  const json entry = MoreEntry("SO-CN-006");
  const Grade fenced = Run(entry, Samples()[1]["output"]);
  // raw_only and a fence: discipline 0; everything else passes: round(.15*100 + .2*100 +
  // .45*100 + .15*0) / .95 = 84
  CHECK(fenced.evidence["axes"]["output_discipline"] == 0);
  CHECK(fenced.evidence["axes"]["cross_field_consistency"].is_null());
  CHECK(fenced.evidence["zx_score"] == 84);
  CHECK(fenced.reason == "format json: 1 of 12 checks failed");
  const Grade broken = Run(entry, R"({"data": {"user": {"id": "x",, }})");
  CHECK(broken.evidence["axes"]["syntax_parse"] == 65);
  CHECK(broken.evidence["evidence"][0] == "Format \"json\" structural errors: 1");
}

// SO-CN-016 (tests/fixtures/zx-bench/schema_compliance_real.json, the bank at 8e0adf68): an RSS
// 2.0 feed whose text contract (structuredTextContracts.ts, v1) checks every item's pubDate with
// !Number.isNaN(Date.parse(...)), read here as V8 reads dates (graders/zxbench/js_date.h).
// Weights (its axis_weights): syntax .15, schema .20 (no schema: unmeasured), fields .45,
// cross .05 (no rules: unmeasured), discipline .15.
TEST_CASE("zx schema_compliance: SO-CN-016's pubDate check reads dates as JavaScript does",
          "[zxbench]") {
  const json entry = json::parse(
      testing::ReadFixture("zx-bench/schema_compliance_real.json"))["entries"][0];
  REQUIRE(entry["id"] == "SO-CN-016");
  CHECK(SchemaCompliance().Unrunnable(entry).empty());
  const auto feed = [](const std::vector<std::string>& dates) {
    std::string xml =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<rss version=\"2.0\">\n<channel>\n"
        "<title>技术博客</title>\n<link>https://blog.example.com</link>\n"
        "<description>后端与运维</description>\n<language>zh-CN</language>\n"
        "<lastBuildDate>Wed, 20 Mar 2024 10:00:00 +0800</lastBuildDate>\n<ttl>60</ttl>\n";
    for (size_t i = 0; i < dates.size(); ++i) {
      const std::string n = std::to_string(i + 1);
      xml += "<item>\n<title>第" + n + "篇</title>\n<link>https://blog.example.com/p/" + n +
             "</link>\n<description><![CDATA[<p>正文 " + n +
             "</p>]]></description>\n<pubDate>" + dates[i] +
             "</pubDate>\n<author>dev@example.com (Dev)</author>\n<category>后端</category>\n"
             "<guid isPermaLink=\"false\">post-" + n + "</guid>\n</item>\n";
    }
    return xml + "</channel>\n</rss>";
  };
  const std::vector<std::string> rfc822 = {
      "Wed, 20 Mar 2024 10:00:00 +0800", "Tue, 19 Mar 2024 09:30:00 GMT",
      "Mon, 18 Mar 2024 08:00:00 CST", "Sun, 17 Mar 2024 22:15:00 +0000",
      "Sat, 16 Mar 2024 07:45:00 EST"};
  // Every check passes: every measured axis 100.
  const Grade good = Run(entry, feed(rfc822));
  INFO(good.evidence.dump(1));
  CHECK(good.status == GradeStatus::kGraded);
  CHECK(good.evidence["zx_score"] == 100);
  // Dates Date.parse still reads (ISO, V8's legacy forms) pass too.
  std::vector<std::string> lenient = rfc822;
  lenient[1] = "2024-03-19T09:30:00+08:00";
  lenient[2] = "March 18, 2024 8:00 PM";
  CHECK(Run(entry, feed(lenient)).evidence["zx_score"] == 100);
  // A Chinese date is NaN in JavaScript: the contract's date check fails, 5 of its 6 checks
  // pass, fields = min(required fields 100, round(100 * 5 / 6) = 83) = 83;
  // round((.15 * 100 + .45 * 83 + .15 * 100) / .75) = round(89.8) = 90.
  std::vector<std::string> chinese = rfc822;
  chinese[4] = "2024年3月16日 07:45";
  const Grade bad = Run(entry, feed(chinese));
  CHECK(bad.evidence["axes"]["field_constraints"] == 83);
  CHECK(bad.evidence["zx_score"] == 90);
  // So is a date with a word after it.
  std::vector<std::string> trailing = rfc822;
  trailing[0] = "Wed, 20 Mar 2024 10:00:00 +0800 北京时间";
  CHECK(Run(entry, feed(trailing)).evidence["zx_score"] == 90);
}

TEST_CASE("zx schema_compliance: entries it cannot grade as zx-bench would are skipped at load",
          "[zxbench]") {
  json odd = MoreEntry("SO-CN-011");
  odd["requirements"]["constraints"][2] = 7;
  CHECK(SchemaCompliance().Unrunnable(odd) ==
        "schema_compliance: requirements.constraints[2] is a number, not a string");
  json version = MoreEntry("SO-CN-011");
  version["graderVersion"] = "schema_compliance_v7";
  CHECK(SchemaCompliance().Unrunnable(version).rfind(
            "schema_compliance version 'schema_compliance_v7' is not reproduced", 0) == 0);
  for (const char* id : {"SO-CN-006", "SO-CN-011", "SO-CN-012", "SO-CN-014", "SO-CN-019",
                         "SO-CN-020", "SO-CN-037"}) {
    CHECK(SchemaCompliance().Unrunnable(MoreEntry(id)).empty());
  }
}

TEST_CASE("zx schema_compliance: hostile answers give a grade, bounded", "[zxbench]") {
  const json entry = MoreEntry("SO-CN-006");
  const std::string brackets(400'000, '[');
  const Grade g = Run(entry, brackets);
  CHECK(g.status == GradeStatus::kGraded);
  CHECK(g.evidence["zx_score"].get<int>() < 60);
  const Grade yaml = Run(MoreEntry("SO-CN-012"), std::string(20'000, '-') + ":\n" +
                                                     std::string(5'000, ' ') + "a: b");
  CHECK(yaml.status == GradeStatus::kGraded);
}

}  // namespace
}  // namespace evalrun
