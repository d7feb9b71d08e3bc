#include "plugins/zxbench_importer.h"

#include <fstream>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "tests/support/catch.h"

#include "core/canonical_json.h"
#include "core/error.h"

using evalrun::DifficultyWeight;
using evalrun::Error;
using evalrun::ImportZxBench;
using evalrun::Suite;
using evalrun::Task;
using evalrun::ZxCanonicalScenario;
using evalrun::ZxNormalizeGoldVerifiedAt;
using evalrun::ZxScenarioHash;
using nlohmann::json;

// Expected hashes and renderings that are not stored in the fixtures were printed by node v20
// running zx-bench's canonicalize.ts logic (stabilize, then JSON.stringify), never by the code
// under test. tools/zxbench_hash.py (the project's Python cross-check) agrees on the fixtures.

namespace {

const std::string kLabel = "data/scenarios/benchmark.json";

std::string FixtureText() {
  std::ifstream in(std::string(EVALRUN_TEST_FIXTURES) + "/zx-bench/fixtures.json",
                   std::ios::binary);
  REQUIRE(in);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

json Fixtures() {
  return json::parse(FixtureText());
}

json Entry(const std::string& id) {
  for (const json& entry : Fixtures()) {
    if (entry["id"] == id) return entry;
  }
  FAIL("no fixture " << id);
  return {};
}

// An entry changed by a test, with its scenarioHash made to match again.
json Rehashed(json entry) {
  entry["scenarioHash"] = ZxScenarioHash(entry);
  return entry;
}

// The message ImportZxBench throws for `bank`, or "" when it loads.
std::string ImportError(const json& bank) {
  try {
    ImportZxBench(bank.dump(), kLabel);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

Task ImportOne(const json& entry) {
  const Suite suite = ImportZxBench(json::array({entry}).dump(), kLabel);
  REQUIRE(suite.tasks.size() == 1);
  return suite.tasks.front();
}

const Task& TaskById(const Suite& suite, const std::string& id) {
  for (const Task& task : suite.tasks) {
    if (task.id == id) return task;
  }
  FAIL("no task " << id);
  return suite.tasks.front();
}

}  // namespace

TEST_CASE("zx-bench: every fixture reproduces its stored scenarioHash", "[zxbench]") {
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"RM-CN-023", "6daf2a85974d06a5"},
      {"DE-CN-005", "216289c12309da8c"},
      {"IF-CN-006", "87941556c97cec9c"},
      {"CP-L2-TD-JS-003", "3e15e6f1c7960e7c"},
      {"TC-CN-055-RECOVERY-1", "559848e212b202fb"},
      {"SA-CN-001-RECOVERY-0", "8ecc5b5c9319fedb"},
      {"AL-CN-001-DOCKER-PILOT", "b5724f905ef2a9d4"},
  };
  const json fixtures = Fixtures();
  REQUIRE(fixtures.size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    INFO(expected[i].first);
    CHECK(fixtures[i]["id"] == expected[i].first);
    CHECK(fixtures[i]["scenarioHash"] == expected[i].second);
    CHECK(ZxScenarioHash(fixtures[i]) == expected[i].second);
  }
}

TEST_CASE("zx-bench: without array-index keys the rendering is CanonicalObjectInOrder's",
          "[zxbench]") {
  // clang-format off
  const std::vector<std::string> fields = {
      "id", "dimension", "category", "difficulty", "language", "locale", "status", "tier",
      "promptTemplate", "sourceCode", "functionName", "expectedVerdict", "grader",
      "graderVersion", "scoring", "hiddenTests", "publicTests", "requirements", "schema",
      "constraints", "bugInvariants", "acceptablePatches", "unacceptablePatches", "outOfScope",
      "judgeHint", "responseMode", "outputPolicy", "answerFirst", "maxAnswerTokens",
      "maxReasoningTokens", "environmentImage", "seed", "goldSource", "goldVerifiedAt",
      "reviewStatus"};
  // clang-format on
  REQUIRE(fields.size() == 35);
  for (const json& entry : Fixtures()) {
    INFO(entry["id"]);
    std::vector<std::pair<std::string, const json*>> in_order;
    for (const std::string& field : fields) {
      const auto it = entry.find(field);
      in_order.emplace_back(field, it == entry.end() ? nullptr : &*it);
    }
    CHECK(ZxCanonicalScenario(entry) == evalrun::CanonicalObjectInOrder(in_order));
  }
  const std::string rendering = ZxCanonicalScenario(Entry("RM-CN-023"));
  CHECK(rendering.rfind(R"({"id":"RM-CN-023","dimension":"reasoning_math","category":)", 0) == 0);
  CHECK(rendering.find(R"("sourceCode":null,"functionName":null,)") != std::string::npos);
  CHECK(rendering.find(R"("requirements":{"answer":12},"schema":null,)") != std::string::npos);
  CHECK(rendering.find("tags") == std::string::npos);  // not hashed
  CHECK(rendering.substr(rendering.size() - 26) == R"("reviewStatus":"verified"})");
}

TEST_CASE("zx-bench: array-index keys come first, in numeric order, as JavaScript enumerates",
          "[zxbench]") {
  json entry = Entry("RM-CN-023");
  entry["requirements"] = json::parse(
      R"({"answer":12,"10":"ten","9":"nine","-1":"minus","01":"zero-one","b":{"2":"x","1":"y"}})");
  CHECK(ZxCanonicalScenario(entry).find(
            R"("requirements":{"9":"nine","10":"ten","-1":"minus","01":"zero-one","answer":12,)"
            R"("b":{"1":"y","2":"x"}},)") != std::string::npos);
  CHECK(ZxScenarioHash(entry) == "d7e4a92e21396f9d");
}

TEST_CASE("zx-bench: other keys sort by UTF-16 code units", "[zxbench]") {
  json entry = Entry("RM-CN-023");
  // U+E000 is above the surrogates that encode U+1F600, so the emoji sorts first.
  entry["requirements"] = {
      {"answer", 12}, {"\xEE\x80\x80", "private"}, {"\xF0\x9F\x98\x80", "emoji"}, {"z", "z"}};
  CHECK(ZxCanonicalScenario(entry).find(
            "\"requirements\":{\"answer\":12,\"z\":\"z\",\"\xF0\x9F\x98\x80\":\"emoji\","
            "\"\xEE\x80\x80\":\"private\"}") != std::string::npos);
  CHECK(ZxScenarioHash(entry) == "b8155d2184ac58ad");
}

TEST_CASE("zx-bench: nested numbers and strings are written as JSON.stringify writes them",
          "[zxbench]") {
  json entry = Entry("RM-CN-023");
  entry["requirements"] =
      json::parse(R"({"answer":1.0,"b":0.1,"c":1e21,"d":1e-7,"e":-0.0,"f":123456789012345678901,)"
                  R"("s":"tab\t ctl\u0001 \u2028 / \u00e9 \ud83d\ude00 \"q\" \\"})");
  CHECK(ZxCanonicalScenario(entry).find(
            R"("requirements":{"answer":1,"b":0.1,"c":1e+21,"d":1e-7,"e":0,)"
            R"("f":123456789012345680000,"s":"tab\t ctl\u0001 )"
            "\xE2\x80\xA8 / \xC3\xA9 \xF0\x9F\x98\x80 "
            R"(\"q\" \\"},)") != std::string::npos);
  CHECK(ZxScenarioHash(entry) == "6f9c3d3c37675870");
}

TEST_CASE("zx-bench: an absent field and a null field hash the same", "[zxbench]") {
  json with_nulls = Entry("TC-CN-055-RECOVERY-1");
  REQUIRE(with_nulls.contains("sourceCode"));
  REQUIRE(with_nulls["sourceCode"].is_null());
  json without = with_nulls;
  for (const char* field : {"sourceCode", "functionName", "expectedVerdict", "outputPolicy",
                            "environmentImage", "seed", "goldSource", "answerFirst"}) {
    without.erase(field);
  }
  CHECK(ZxScenarioHash(without) == "559848e212b202fb");

  json extra_nulls = Entry("RM-CN-023");
  extra_nulls["publicTests"] = nullptr;
  extra_nulls["judgeHint"] = nullptr;
  extra_nulls["goldVerifiedAt"] = nullptr;
  CHECK(ZxScenarioHash(extra_nulls) == "6daf2a85974d06a5");
}

TEST_CASE("zx-bench: fields outside the hashed 35 do not change the hash", "[zxbench]") {
  json entry = Entry("SA-CN-001-RECOVERY-0");
  entry["tags"] = {"other"};
  entry["scenarioVersion"] = "9.9.9";
  entry["scenarioHash"] = "0000000000000000";
  entry["benchmarkSource"] = nullptr;
  entry["somethingNew"] = {{"a", 1}};
  CHECK(ZxScenarioHash(entry) == "8ecc5b5c9319fedb");

  SECTION("but each hashed field does") {
    json changed = Entry("SA-CN-001-RECOVERY-0");
    changed["maxAnswerTokens"] = 1024;
    CHECK(ZxScenarioHash(changed) != "8ecc5b5c9319fedb");
  }
}

TEST_CASE("zx-bench: goldVerifiedAt is normalised as new Date(v).toISOString()", "[zxbench]") {
  // Expected values printed by node v20; the unchanged ones are what zx-bench cannot normalise
  // reproducibly (no offset: the machine's local time) or what is not a date at all.
  const auto [input, expected] = GENERATE(table<std::string, std::string>({
      {"2026-09-11T16:00:00.000Z", "2026-09-11T16:00:00.000Z"},
      {"2026-09-12T00:00:00.000+08:00", "2026-09-11T16:00:00.000Z"},
      {"2026-09-07T00:00:00Z", "2026-09-07T00:00:00.000Z"},
      {"2026-09-12T10:20+01:00", "2026-09-12T09:20:00.000Z"},
      {"2026-09-12T10:20:30.1+05:30", "2026-09-12T04:50:30.100Z"},
      {"2026-09-12T00:00:00.9996Z", "2026-09-12T00:00:00.999Z"},
      {"2026-09-12T23:59:59.9999-01:30", "2026-09-13T01:29:59.999Z"},
      {"2026-09-12T24:00:00Z", "2026-09-13T00:00:00.000Z"},
      {"2026-02-29T00:00:00Z", "2026-03-01T00:00:00.000Z"},
      {"2026-09-12", "2026-09-12T00:00:00.000Z"},
      {"2026-09", "2026-09-01T00:00:00.000Z"},
      {"2026", "2026-01-01T00:00:00.000Z"},
      {"0000-01-01T00:00:00+00:01", "-000001-12-31T23:59:00.000Z"},
      {"9999-12-31T23:59:59.999-00:01", "+010000-01-01T00:00:59.999Z"},
      {"2026-09-12T10:20:30", "2026-09-12T10:20:30"},
      {"2026-09-12T24:00:01Z", "2026-09-12T24:00:01Z"},
      {"2026-13-12T00:00:00Z", "2026-13-12T00:00:00Z"},
      {"2026-09-32T00:00:00Z", "2026-09-32T00:00:00Z"},
      {"2026-09-12T00:00:60Z", "2026-09-12T00:00:60Z"},
      {"2026-09-12T00:00:00+24:00", "2026-09-12T00:00:00+24:00"},
      {"2026-09-12T00:00:00.Z", "2026-09-12T00:00:00.Z"},
      {"verified by hand", "verified by hand"},
      {"", ""},
  }));
  INFO(input);
  CHECK(ZxNormalizeGoldVerifiedAt(input) == expected);
}

TEST_CASE("zx-bench: a goldVerifiedAt with an offset hashes as its UTC form", "[zxbench]") {
  json entry = Entry("DE-CN-005");
  REQUIRE(entry["goldVerifiedAt"] == "2026-09-11T16:00:00.000Z");
  entry["goldVerifiedAt"] = "2026-09-12T00:00:00.000+08:00";
  CHECK(ZxScenarioHash(entry) == "216289c12309da8c");
  entry["goldVerifiedAt"] = "2026-09-11T16:00:00Z";
  CHECK(ZxScenarioHash(entry) == "216289c12309da8c");
}

TEST_CASE("zx-bench: the fixtures load as a bank", "[zxbench]") {
  const Suite suite = ImportZxBench(FixtureText(), kLabel);
  CHECK(suite.name == "zx-bench");
  CHECK(suite.format == "zxbench");
  CHECK(suite.description ==
        "zx-bench question bank (data/scenarios/benchmark.json): 7 entries, 7 runnable here, "
        "0 skipped");
  CHECK(suite.dimension_weights.size() == 11);
  CHECK(suite.dimension_weights.at("program") == Approx(0.17));
  CHECK(suite.dimension_weights.at("agent_loop") == Approx(0.03));
  double total = 0;
  for (const auto& [dimension, weight] : suite.dimension_weights) total += weight;
  CHECK(total == Approx(1.0));
  REQUIRE(suite.tasks.size() == 7);

  const json fixtures = Fixtures();
  // {id, dimension, difficulty, zxbench grader, skip reason, entry line, scenarioHash line}
  using Row = std::tuple<std::string, std::string, std::string, std::string, std::string, int, int>;
  const std::vector<Row> rows = {
      {"RM-CN-023", "reasoning_math", "adversarial", "exact_answer_line", "", 2, 31},
      {"DE-CN-005", "data_extraction", "medium", "json_atomic_fields", "", 35, 81},
      {"IF-CN-006", "instruction_following", "medium", "instruction_checklist", "", 87, 180},
      {"CP-L2-TD-JS-003", "program", "hard", "code_repair", "", 183, 300},
      {"TC-CN-055-RECOVERY-1", "tool_cli_workflow", "adversarial", "tool_call_trace", "", 303, 468},
      {"SA-CN-001-RECOVERY-0", "safety_authority", "easy", "canary_authority", "", 491, 583},
      {"AL-CN-001-DOCKER-PILOT", "agent_loop", "adversarial", "agent_loop_trace", "", 606, 625},
  };
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& [id, dimension, difficulty, grader, skip, line, hash_line] = rows[i];
    const Task& task = suite.tasks[i];
    INFO(id);
    CHECK(task.id == id);
    CHECK(task.dimension == dimension);
    CHECK(task.difficulty == difficulty);
    CHECK(task.weight == 1.0);
    CHECK(task.format == "zxbench");
    CHECK(task.grader["type"] == "zxbench:" + grader);
    CHECK(task.grader["grader_version"] == fixtures[i]["graderVersion"]);
    CHECK(task.grader["entry_hash"] == fixtures[i]["scenarioHash"]);
    CHECK(task.skip_reason == skip);
    CHECK(task.messages ==
          json::array({{{"role", "user"}, {"content", fixtures[i]["promptTemplate"]}}}));
    CHECK(task.generation == json::object());  // no fixture sets maxAnswerTokens
    CHECK(task.tags == fixtures[i]["tags"].get<std::vector<std::string>>());
    CHECK(task.raw == fixtures[i]);
    CHECK(task.declared_hash == fixtures[i]["scenarioHash"].get<std::string>());
    CHECK(task.hash.size() == 64);
    CHECK(task.ShortHash() == task.declared_hash);
    CHECK(task.location.ToString() == kLabel + ":" + std::to_string(line) + ":3");
    CHECK(task.hash_location.ToString() == kLabel + ":" + std::to_string(hash_line) + ":5");
  }
  CHECK(suite.tasks[0].hash ==
        "6daf2a85974d06a5" + suite.tasks[0].hash.substr(16));  // full hash kept
  CHECK(TaskById(suite, "DE-CN-005").hash ==
        "216289c12309da8ca9e362905a80dc834d572a4716b5b1ea7b7f8fb30303873f");
}

TEST_CASE("zx-bench: a compact bank locates entries on one line", "[zxbench]") {
  const json bank = Fixtures();
  const std::string text = bank.dump();
  const Suite suite = ImportZxBench(text, kLabel);
  REQUIRE(suite.tasks.size() == 7);
  CHECK(suite.tasks[0].location.ToString() == kLabel + ":1:2");
  const std::size_t second = text.find(R"({"answerFirst")", 1);
  REQUIRE(second != std::string::npos);
  const std::size_t hash_key = text.find(R"("scenarioHash")", 1);
  CHECK(suite.tasks[0].hash_location.column == static_cast<int>(hash_key) + 1);
  // nlohmann writes keys sorted, so "answerFirst" opens the TC entry, the fifth.
  CHECK(suite.tasks[4].location.column == static_cast<int>(second) + 1);
}

TEST_CASE("zx-bench: changing one character of one prompt names that entry", "[zxbench]") {
  json bank = Fixtures();
  std::string prompt = bank[2]["promptTemplate"];
  prompt[prompt.find("CSV")] = 'T';
  bank[2]["promptTemplate"] = prompt;
  json copy = bank[2];
  const std::string computed = ZxScenarioHash(copy);
  CHECK(computed != "87941556c97cec9c");
  CHECK(ImportError(bank) ==
        "data/scenarios/benchmark.json: entry 'IF-CN-006' (index 2): "
        "scenarioHash is 87941556c97cec9c but its content hashes to " +
            computed);
}

TEST_CASE("zx-bench: a changed stored hash is a mismatch too", "[zxbench]") {
  json bank = Fixtures();
  bank[6]["scenarioHash"] = "b5724f905ef2a9d5";
  CHECK(ImportError(bank) ==
        "data/scenarios/benchmark.json: entry 'AL-CN-001-DOCKER-PILOT' (index 6): scenarioHash "
        "is b5724f905ef2a9d5 but its content hashes to b5724f905ef2a9d4");
}

TEST_CASE("zx-bench: a bank whose hashes mostly differ is refused as another version",
          "[zxbench]") {
  json bank = Fixtures();
  SECTION("all differ: a hashed field removed everywhere") {
    for (json& entry : bank) entry.erase("reviewStatus");
    CHECK(ImportError(bank) ==
          "data/scenarios/benchmark.json: this bank version's scenarioHash cannot be reproduced "
          "(7 of 7 entries differ): evalrun supports banks from about 920 entries on (bank "
          "1.60.0, commit 8e0adf68)");
  }
  SECTION("four of seven differ") {
    for (int i : {1, 3, 4, 6}) bank[i]["tier"] = "other";
    CHECK(ImportError(bank).find("(4 of 7 entries differ)") != std::string::npos);
  }
  SECTION("three of seven is not most: the first is named") {
    for (int i : {3, 4, 6}) bank[i]["tier"] = "other";
    CHECK(ImportError(bank).rfind(
              "data/scenarios/benchmark.json: entry 'CP-L2-TD-JS-003' (index 3): scenarioHash is "
              "3e15e6f1c7960e7c but its content hashes to ",
              0) == 0);
  }
}

TEST_CASE("zx-bench: structural errors name the entry", "[zxbench]") {
  json bank = Fixtures();
  SECTION("duplicate id") {
    bank[5] = bank[1];
    CHECK(ImportError(bank) ==
          "data/scenarios/benchmark.json: entry 'DE-CN-005' (index 5) repeats the id of index 1");
  }
  SECTION("missing id") {
    bank[3].erase("id");
    CHECK(ImportError(bank) == "data/scenarios/benchmark.json: entry at index 3 has no id");
  }
  SECTION("id that is not a string") {
    bank[3]["id"] = 17;
    CHECK(ImportError(bank) == "data/scenarios/benchmark.json: entry at index 3 has no id");
  }
  SECTION("entry that is not an object") {
    bank[4] = "TC-CN-055";
    CHECK(ImportError(bank) ==
          "data/scenarios/benchmark.json: entry at index 4 is not a JSON object");
  }
  SECTION("missing scenarioHash") {
    bank[0].erase("scenarioHash");
    CHECK(ImportError(bank) ==
          "data/scenarios/benchmark.json: entry 'RM-CN-023' (index 0) has no scenarioHash");
  }
  SECTION("missing dimension") {
    bank[0].erase("dimension");
    bank[0] = Rehashed(bank[0]);
    CHECK(ImportError(bank) ==
          "data/scenarios/benchmark.json: entry 'RM-CN-023' (index 0) has no dimension");
  }
  SECTION("unknown difficulty") {
    bank[0]["difficulty"] = "expert";
    bank[0] = Rehashed(bank[0]);
    CHECK(ImportError(bank) ==
          "data/scenarios/benchmark.json: entry 'RM-CN-023' (index 0): difficulty 'expert' is "
          "not one of easy, medium, hard, adversarial");
  }
}

TEST_CASE("zx-bench: what is not a bank is refused", "[zxbench]") {
  const auto error = [](const std::string& text) {
    try {
      ImportZxBench(text, kLabel);
    } catch (const Error& e) {
      CHECK(e.code() == evalrun::ExitCode::kUsage);
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(error(R"({"id": "RM-CN-023"})") ==
        "data/scenarios/benchmark.json: not a JSON array (found object); a zx-bench bank is an "
        "array of entries");
  CHECK(error("[]") == "data/scenarios/benchmark.json: the bank holds no entries");
  CHECK(error("[\n  {\"id\": tru}\n]") ==
        "data/scenarios/benchmark.json: not JSON (byte 15): parse error at line 2, column 13: "
        "syntax error while parsing value - invalid literal; last read: '\"id\": tru}'");
  CHECK(error("").rfind("data/scenarios/benchmark.json: not JSON (byte 1): ", 0) == 0);
}

TEST_CASE("zx-bench: weights follow zx-bench's scoring", "[zxbench]") {
  json entry = Entry("CP-L2-TD-JS-003");  // hard: difficulty weight 2
  SECTION("plain entries carry weight 1; the difficulty weight applies apart") {
    CHECK(ImportOne(entry).weight == 1.0);
  }
  SECTION("long_task categories weigh 3.0 in place of the difficulty weight") {
    entry["category"] = "long_task_multi_file";
    const Task task = ImportOne(Rehashed(entry));
    CHECK(task.difficulty == "hard");
    CHECK(DifficultyWeight(task.difficulty) * task.weight == Approx(3.0));
  }
  SECTION("attack levels multiply") {
    const auto [level, factor] = GENERATE(table<std::string, double>(
        {{"L1", 1.0}, {"L2", 1.2}, {"L3", 1.5}, {"L4", 2.0}, {"L5", 1.0}}));
    entry["requirements"]["attackLevel"] = level;
    CHECK(ImportOne(Rehashed(entry)).weight == Approx(factor));
  }
  SECTION("both") {
    entry["category"] = "long_task_x";
    entry["requirements"]["attackLevel"] = "L4";
    const Task task = ImportOne(Rehashed(entry));
    CHECK(DifficultyWeight(task.difficulty) * task.weight == Approx(6.0));
  }
  SECTION("missing difficulty is medium") {
    entry.erase("difficulty");
    CHECK(ImportOne(Rehashed(entry)).difficulty == "medium");
    entry["difficulty"] = nullptr;
    CHECK(ImportOne(Rehashed(entry)).difficulty == "medium");
  }
}

TEST_CASE("zx-bench: mapping details", "[zxbench]") {
  json entry = Entry("RM-CN-023");
  SECTION("maxAnswerTokens, plus maxReasoningTokens, become max_tokens") {
    entry["maxAnswerTokens"] = 1024;
    CHECK(ImportOne(Rehashed(entry)).generation == json{{"max_tokens", 1024}});
    entry["maxReasoningTokens"] = 4096;
    CHECK(ImportOne(Rehashed(entry)).generation == json{{"max_tokens", 5120}});
    entry["maxAnswerTokens"] = nullptr;
    CHECK(ImportOne(Rehashed(entry)).generation == json::object());
  }
  SECTION("the old dimension name code_repair aggregates as program") {
    entry["dimension"] = "code_repair";
    CHECK(ImportOne(Rehashed(entry)).dimension == "program");
  }
  SECTION("no tags") {
    entry.erase("tags");
    CHECK(ImportOne(Rehashed(entry)).tags.empty());
  }
}

TEST_CASE("zx-bench: skip reasons", "[zxbench]") {
  json entry = Entry("RM-CN-023");
  const auto reason = [](json e) { return ImportOne(Rehashed(std::move(e))).skip_reason; };
  SECTION("only valid entries run") {
    entry["status"] = "draft";
    CHECK(reason(entry) == "status 'draft': only valid entries run officially");
    entry.erase("status");
    CHECK(reason(entry) == "no status: only valid entries run officially");
  }
  SECTION("graders that run from the entry alone") {
    const std::string grader =
        GENERATE(as<std::string>(), "exact_answer_line", "json_atomic_fields",
                 "instruction_checklist", "structured_contract", "code_repair");
    entry["grader"] = grader;
    CHECK(reason(entry) == "");
  }
  SECTION("execution worlds run; without a world the traces do not") {
    json world = Entry("TC-CN-055-RECOVERY-1");
    const std::string grader = GENERATE(as<std::string>(), "agent_trace", "tool_call_trace");
    world["grader"] = grader;
    CHECK(reason(world) == "");
    world["requirements"].erase("executionWorld");
    CHECK(reason(world) == "grader '" + grader +
                               "' without requirements.executionWorld (a declarative trace) is "
                               "not supported");
  }
  SECTION("canary_authority runs with a world and without one (declarative: the reply alone)") {
    json world = Entry("TC-CN-055-RECOVERY-1");
    world["grader"] = "canary_authority";
    CHECK(reason(world) == "");
    world["requirements"].erase("executionWorld");
    CHECK(reason(world) == "");
  }
  SECTION("judge-led graders") {
    // hallucination_resistance loads; a run without --judge-endpoint skips it (MarkJudgedTasks,
    // tests/graders/zxbench/hallucination_resistance_test.cpp).
    entry["grader"] = "hallucination_resistance";
    CHECK(reason(entry) == "");
    entry["grader"] = "ultra_proof_part";
    CHECK(reason(entry) ==
          "needs a judge model (zx-bench grades 'ultra_proof_part' with an LLM judge)");
  }
  SECTION("graders in pinned Docker images") {
    // cli_command and project_repair run here with a stand-in for their image: their graders
    // decide what they skip.
    entry["environmentImage"] = "zxbench/cli-sandbox:1.4";
    entry["grader"] = "cli_command";
    CHECK(reason(entry) == "");
    entry["grader"] = "project_repair";
    CHECK(reason(entry) == "");
    // agent_loop_trace runs evalrun's in-process engine where zx-bench's docker backend runs
    // the same engine: it needs its loop, not the image.
    entry["grader"] = "agent_loop_trace";
    CHECK(reason(entry) ==
          "grader 'agent_loop_trace' without requirements.agentLoop (no loop to run)");
    entry["requirements"]["agentLoop"] = {{"backend", "docker"},
                                          {"expectedImageId", "sha256:c610fcdf"}};
    CHECK(reason(entry) == "");
  }
  SECTION("gold answers in separate source packs") {
    const std::string grader = GENERATE(as<std::string>(), "ultra_batch_part",
                                        "challenge_supplement", "challenge_extension");
    entry["grader"] = grader;
    CHECK(reason(entry) == "gold answer lives outside the bank (separate source pack)");
  }
  SECTION("unknown and missing graders") {
    entry["grader"] = "bug_finding";
    CHECK(reason(entry) == "grader 'bug_finding' is not known to evalrun");
    entry.erase("grader");
    CHECK(reason(entry) == "entry has no grader");
  }
  SECTION("no prompt") {
    entry.erase("promptTemplate");
    const Task task = ImportOne(Rehashed(entry));
    CHECK(task.skip_reason == "entry has no promptTemplate");
    CHECK(task.messages == json::array());
  }
}

TEST_CASE("zx-bench: a world entry keeps the bank's key order for the prompts", "[zxbench]") {
  // fixtures.json in its own key order (JavaScript insertion order, as the bank is written).
  const nlohmann::ordered_json ordered =
      nlohmann::ordered_json::parse(FixtureText());
  nlohmann::ordered_json world;
  for (const auto& entry : ordered) {
    if (entry["id"] == "TC-CN-055-RECOVERY-1") world = entry;
  }
  REQUIRE(world.is_object());
  const std::string rm = Entry("RM-CN-023").dump();
  // The world in the middle of a three-entry bank, laid out with spaces and newlines.
  const std::string bank = "[\n  " + rm + ",\n  " + world.dump(2) + " ,\n" +
                           Rehashed(Entry("DE-CN-005")).dump() + "\n]\n";
  const Suite suite = ImportZxBench(bank, "bank.json");
  REQUIRE(suite.tasks.size() == 3);
  CHECK(suite.tasks[0].raw_ordered.is_null());
  CHECK(suite.tasks[2].raw_ordered.is_null());
  const Task& task = suite.tasks[1];
  CHECK(task.raw_ordered.dump() == world.dump());
  CHECK(json::parse(task.raw_ordered.dump()) == task.raw);
  // The order differs from nlohmann's sorted one where it matters: the first tool's keys.
  const auto& tool = task.raw_ordered["requirements"]["executionWorld"]["tools"][0];
  CHECK(tool.begin().key() == "name");
  CHECK(task.raw["requirements"]["executionWorld"]["tools"][0].begin().key() == "description");
}
