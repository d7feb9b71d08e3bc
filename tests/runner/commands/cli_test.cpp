// The command line as a user meets it: the real binary, its exit codes and its exact messages.
#include "runner/commands/cli.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "tests/support/catch.h"
#include <nlohmann/json.hpp>

#include "plugins/mock_server.h"
#include "plugins/sandbox.h"
#include "plugins/zxbench_importer.h"
#include "tests/support/loopback_listener.h"

namespace {

struct Run {
  int code = -1;
  std::string out;
  std::string err;
};

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Run Evalrun(const std::string& args) {
  const std::string err_path = "/tmp/evalrun-cli-test-" + std::to_string(getpid()) + ".err";
  const std::string command = std::string(EVALRUN_BINARY) + " " + args + " 2>" + err_path;
  Run run;
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe);
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) run.out.append(buffer, n);
  const int status = pclose(pipe);
  run.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.err = Slurp(err_path);
  std::remove(err_path.c_str());
  return run;
}

}  // namespace

TEST_CASE("cli: --version and --help everywhere exit 0", "[cli]") {
  const Run v = Evalrun("--version");
  CHECK(v.code == 0);
  // The version and the commit built from: 40 hex digits, "-dirty" for a tree with uncommitted
  // changes, "unknown" outside a git checkout (cmake/build_commit.cmake).
  CHECK_THAT(v.out, Catch::Matches("evalrun 0\\.1\\.0 \\(commit ([0-9a-f]{40}(-dirty)?|unknown)\\)\n"));
  for (const char* args : {"--help", "speed --help", "mock-server --help"}) {
    INFO(args);
    const Run h = Evalrun(args);
    CHECK(h.code == 0);
    CHECK_THAT(h.out, Catch::Contains("Usage:"));
  }
  CHECK_THAT(Evalrun("--help").out, Catch::Contains("130 interrupted"));
}

TEST_CASE("cli: usage errors exit 2 with a hint", "[cli]") {
  struct Case {
    const char* args;
    const char* message;
  };
  const Case c = GENERATE(
      Case{"spead", "evalrun: error: unknown command 'spead', did you mean 'speed'? (evalrun --help lists the commands)\n"},
      Case{"", "evalrun: error: a command is required (evalrun --help lists them)\n"},
      Case{"speed --endpoint http://127.0.0.1:9 --prset quick",
           "evalrun: error: speed: unknown option '--prset', did you mean '--preset'? (evalrun speed --help lists the options)\n"},
      Case{"speed --endpoint http://127.0.0.1:9 --preset quik",
           "evalrun: error: unknown preset 'quik', did you mean 'quick'? (presets: quick, llama-bench, uni-bench, full)\n"},
      Case{"speed --endpoint http://127.0.0.1:9 -o xml",
           "evalrun: error: -o 'xml': expected md, json, csv or jsonl\n"},
      Case{"speed --endpoint http://127.0.0.1:9 --label quant",
           "evalrun: error: --label 'quant': expected KEY=VALUE, e.g. --label quant=AWQ-4bit\n"},
      Case{"speed --endpoint localhost:8080",
           "evalrun: error: --endpoint 'localhost:8080': expected a URL such as http://127.0.0.1:8080\n"},
      Case{"speed --endpoint http://127.0.0.1:9 --thinking maybe",
           "evalrun: error: --thinking 'maybe': expected on, off or auto\n"},
      Case{"mock-server --fault explode",
           "evalrun: error: --fault 'explode': expected none, 400, 500, drop, stall or malformed\n"},
      Case{"speed", "evalrun: error: --endpoint is required\n"});
  INFO(c.args);
  const Run r = Evalrun(c.args);
  CHECK(r.code == 2);
  CHECK(r.err == c.message);
}

TEST_CASE("cli: an endpoint nobody answers is a configuration error", "[cli]") {
  const Run r = Evalrun("speed --endpoint http://127.0.0.1:9/v1/ --no-env -q");
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::StartsWith("evalrun: error: cannot reach the endpoint http://127.0.0.1:9: "));
  CHECK_THAT(r.err, Catch::EndsWith("(is the server running? evalrun mock-server starts a stand-in)\n"));
}

TEST_CASE("cli: endpoints are normalised", "[cli]") {
  CHECK(evalrun::NormalizeEndpoint("http://h:1/v1/") == "http://h:1");
  CHECK(evalrun::NormalizeEndpoint("http://h:1/") == "http://h:1");
  CHECK(evalrun::NormalizeEndpoint("http://h:1") == "http://h:1");
}

TEST_CASE("cli: speed -o json carries the schema, environment, summaries and raw samples, "
          "and the other formats render the same tests",
          "[cli][slow]") {
  evalrun::MockConfig m;
  m.ttft_ms = 20;
  m.decode_tps = 500;
  m.fault = evalrun::MockFault::kHttp500;
  m.fault_on = {3};  // the second pp32 request
  evalrun::MockServer mock(m);
  mock.Start();
  const std::string base = "speed --endpoint " + mock.base_url() +
                           " -p 32 -n 16 -r 2 -c 2 --prompts same -q --label quant=Q4_K_M";
  const std::string json_path = "/tmp/evalrun-cli-test-" + std::to_string(getpid()) + ".json";
  const Run r = Evalrun(base + " -o json --out " + json_path);
  CHECK(r.code == 1);  // one request failed: done, with errors
  CHECK(r.out.empty());
  const auto j = nlohmann::json::parse(Slurp(json_path));
  std::remove(json_path.c_str());
  CHECK(j["schema_version"] == 1);
  CHECK(j["kind"] == "evalrun.speed");
  CHECK(j["labels"]["quant"] == "Q4_K_M");
  CHECK(j["environment"]["scope"] == "client host");
  CHECK(j["environment"]["host"]["kernel"].is_string());
  CHECK(j["server"]["kind"] == "evalrun-mock");
  CHECK(j["errors"] == 1);
  REQUIRE(j["tests"].size() == 3);  // pp32, tg16, c2-same
  const auto& tg = j["tests"][1];
  CHECK(tg["name"] == "tg16");
  CHECK(tg["metrics"]["decode_tps"]["samples"].size() == 2);
  for (const char* key : {"count", "mean", "median", "min", "max", "p90", "p99"}) {
    CHECK(tg["metrics"]["decode_tps"].contains(key));
  }
  CHECK(j["tests"][0]["errors"] == 1);
  CHECK(j["tests"][0]["error_messages"][0] ==
        "http_error: HTTP 500: mock fault: injected HTTP 500");

  // The mock counts requests across runs, so these runs see no fault.
  const Run md = Evalrun(base);
  CHECK(md.code == 0);
  CHECK_THAT(md.out, Catch::Contains("| tg16 "));
  CHECK_THAT(Evalrun(base + " -o csv").out, Catch::Contains("tg16,decode"));
  CHECK_THAT(Evalrun(base + " -o jsonl").out, Catch::Contains("\"name\":\"tg16\""));
}

TEST_CASE("cli: validate a suite on disk prints counts by dimension and grader", "[cli][tasks]") {
  const Run r = Evalrun(std::string("validate ") + EVALRUN_TEST_FIXTURES + "/tasks/mini");
  CHECK(r.code == 0);
  CHECK(r.out ==
        "suite mini (unpinned: read from disk): 3 tasks, every hash verified\n"
        "  dimension  tasks\n"
        "  code           1\n"
        "  math           2\n"
        "  grader       tasks\n"
        "  answer_line      2\n"
        "  code_tests       1\n"
        "runnable here: 3, skipped: 0\n");
  const Run missing = Evalrun("validate no/such/suite");
  CHECK(missing.code == 2);
  CHECK(missing.err ==
        "evalrun: error: unknown suite 'no/such/suite': not a registered name or an existing path "
        "(evalrun suites lists them)\n");
}

TEST_CASE("cli: validate PATH@REV reads the committed suite and records the commit",
          "[cli][tasks]") {
  const std::string repo = "/tmp/evalrun-cli-git-" + std::to_string(getpid());
  const std::string setup =
      "rm -rf " + repo + " && mkdir -p " + repo + " && cp -r " + EVALRUN_TEST_FIXTURES +
      "/tasks/mini " + repo + "/mini && cd " + repo +
      " && git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm one"
      " && echo 'tasks: []' > mini/math/basic.yaml";  // a dirty work tree must not leak in
  REQUIRE(std::system(setup.c_str()) == 0);
  const std::string head = [&] {
    FILE* p = popen(("git -C " + repo + " rev-parse HEAD").c_str(), "r");
    char id[64] = {};
    REQUIRE(fgets(id, sizeof id, p) != nullptr);
    pclose(p);
    return std::string(id, 40);
  }();
  const Run r = Evalrun("validate " + repo + "/mini@HEAD");
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::StartsWith("suite mini (commit " + head + ", tree "));
  CHECK_THAT(r.out, Catch::Contains(": 3 tasks, every hash verified"));
  const Run bad = Evalrun("validate " + repo + "/mini@nosuchrev");
  CHECK(bad.code == 2);
  CHECK_THAT(bad.err, Catch::Contains("unknown revision 'nosuchrev'"));
  std::system(("rm -rf " + repo).c_str());
}

TEST_CASE("cli: hash --write inserts hashes, and a second run changes nothing", "[cli][tasks]") {
  const std::string dir = "/tmp/evalrun-cli-hash-" + std::to_string(getpid());
  std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str());
  {
    std::ofstream out(dir + "/suite.yaml");
    out << "suite: demo   # a comment that must survive\n"
           "tasks:\n"
           "  - id: t1\n"
           "    dimension: math\n"
           "    prompt: \"2+2? Last line: ANSWER: <n>\"\n"
           "    grader: {type: answer_line, answer: 4}\n";
  }
  const Run first = Evalrun("hash --write " + dir + "/suite.yaml");
  CHECK(first.code == 0);
  CHECK_THAT(first.out, Catch::EndsWith("  t1  " + dir + "/suite.yaml  (written)\n"));
  const std::string written = Slurp(dir + "/suite.yaml");
  CHECK_THAT(written, Catch::Contains("# a comment that must survive"));
  CHECK_THAT(written, Catch::Contains("    hash: " + first.out.substr(0, 16) + "\n"));
  const Run second = Evalrun("hash --write " + dir + "/suite.yaml");
  CHECK(second.out == first.out.substr(0, first.out.size() - std::string("  (written)\n").size()) + "\n");
  CHECK(Slurp(dir + "/suite.yaml") == written);
  CHECK(Evalrun(std::string("validate ") + dir).code == 0);
  std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("cli: the zx-bench bank at a commit loads, every scenarioHash verified: an edited prompt "
          "is refused naming the entry",
          "[cli][tasks]") {
  const std::string repo = "/tmp/evalrun-cli-zx-" + std::to_string(getpid());
  const std::string setup =
      "rm -rf " + repo + " && mkdir -p " + repo + "/data/scenarios && cp " + EVALRUN_TEST_FIXTURES +
      "/zx-bench/fixtures.json " + repo + "/data/scenarios/benchmark.json && cd " + repo +
      " && git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm bank"
      " && sed -i 's/某公司年会/某公司晚会/' data/scenarios/benchmark.json"
      " && git -c user.name=t -c user.email=t@t commit -qam edited";
  REQUIRE(std::system(setup.c_str()) == 0);
  const Run good = Evalrun("validate zx-bench@HEAD~1 --suite-repo " + repo);
  CHECK(good.code == 0);
  CHECK_THAT(good.out, Catch::StartsWith("suite zx-bench (commit "));
  CHECK_THAT(good.out, Catch::Contains(": 7 tasks, every hash verified"));
  // Six of the seven have graders here (exact_answer_line, json_atomic_fields,
  // instruction_checklist, code_repair, and the execution worlds tool_call_trace and
  // canary_authority); agent_loop_trace is skipped with the reason: its Docker image.
  CHECK_THAT(good.out, Catch::Contains("runnable here: 7, skipped: 0"));
  CHECK_THAT(good.out, !Catch::Contains("has no grader"));
  const Run by_path = Evalrun("validate " + repo + "@HEAD~1");
  CHECK(by_path.code == 0);
  const Run edited = Evalrun("validate zx-bench@HEAD --suite-repo " + repo);
  CHECK(edited.code == 2);
  CHECK_THAT(edited.err, Catch::Contains("entry 'RM-CN-023' (index 0): scenarioHash is 6daf2a85974d06a5 "
                                         "but its content hashes to "));
  std::system(("rm -rf " + repo).c_str());
}

// validate predicts what a run skips: the same reasons, the same counts, on 43 real entries of
// the bank (tests/fixtures/zx-bench/more_entries.json), and the run asks the model only for the
// twelve it can grade.
TEST_CASE("cli: validate lists exactly the skips a zx-bench run makes", "[cli][tasks]") {
  const std::string dir = "/tmp/evalrun-cli-zx-skips-" + std::to_string(getpid());
  const std::string setup =
      "rm -rf " + dir + " && mkdir -p " + dir + "/repo/data/scenarios && cp " +
      EVALRUN_TEST_FIXTURES + "/zx-bench/more_entries.json " + dir +
      "/repo/data/scenarios/benchmark.json && cd " + dir +
      "/repo && git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm bank";
  REQUIRE(std::system(setup.c_str()) == 0);
  const Run validate = Evalrun("validate zx-bench@HEAD --suite-repo " + dir + "/repo");
  REQUIRE(validate.code == 0);
  // The two isolatedTypescriptJson entries need Debian's node-typescript, the three
  // isolatedJavaJson ones a JDK, the four isolatedCsharpJson ones Mono, CLI-CN-039-DOCKER
  // BusyBox, CP-L4-JS-001 (project_repair, node:20-alpine) BusyBox and node, the three
  // isolatedGoJson ones go (and gcc for -race) (install-deps installs them all).
  const bool typescript =
      std::filesystem::exists("/usr/share/nodejs/typescript/lib/typescript.js");
  const bool java =
      !evalrun::FindSandboxProgram("javac").empty() && !evalrun::FindSandboxProgram("java").empty();
  const bool mono = !evalrun::FindSandboxProgram("mcs").empty() &&
                    !evalrun::FindSandboxProgram("mono").empty() &&
                    std::filesystem::exists("/usr/lib/mono/4.5/System.Net.Http.dll");
  const bool busybox = !evalrun::FindSandboxProgram("busybox").empty();
  const bool go = !evalrun::FindSandboxProgram("go").empty();
  const bool gcc = !evalrun::FindSandboxProgram("gcc").empty();
  // The four agent_loop_trace entries always run (evalrun's in-process retail engine).
  const int runnable = 28 + (typescript ? 2 : 0) + (java ? 3 : 0) + (mono ? 4 : 0) +
                       (busybox ? 2 : 0) + (go ? 2 : 0) + (go && gcc ? 1 : 0);
  CHECK_THAT(validate.out,
             Catch::Contains("runnable here: " + std::to_string(runnable) +
                             ", skipped: " + std::to_string(43 - runnable)));
  // "  <reason>   <count>" rows after the header: reason -> count.
  std::map<std::string, int> predicted;
  std::istringstream lines(validate.out.substr(validate.out.find("skipped because")));
  std::string line;
  std::getline(lines, line);
  while (std::getline(lines, line)) {
    const size_t end = line.find_last_not_of(' ', line.find_last_of(' '));
    const size_t count_at = line.find_last_of(' ') + 1;
    predicted[line.substr(2, end - 1)] = std::stoi(line.substr(count_at));
  }
  CHECK(predicted.count("evalrun does not run zx-bench's isolatedGoJson contracts") == 0);
  CHECK(predicted.count("go is not installed (install Debian's golang-go package)") == (go ? 0 : 1));
  CHECK(predicted.count("evalrun does not run zx-bench's isolatedPythonJson contracts") == 0);
  CHECK(predicted.count("grader 'schema_compliance' is not known to evalrun") == 0);
  CHECK(predicted.count("evalrun does not run zx-bench's isolatedJavascriptJson contracts") == 0);
  CHECK(predicted.count("evalrun does not run zx-bench's isolatedTypescriptJson contracts") == 0);
  CHECK(predicted.count("evalrun does not run zx-bench's isolatedSqlJson contracts") == 0);
  CHECK(predicted.count("evalrun does not run zx-bench's isolatedJavaJson contracts") == 0);
  CHECK(predicted.count("evalrun does not run zx-bench's isolatedCsharpJson contracts") == 0);
  CHECK(predicted.count("needs the Docker image python:3.12-alpine") == 0);
  CHECK(predicted.count("needs the Docker image sha256:c610fcdfb1d5b4740dd70c284ed3cb16bb857e0f7166"
                        "196e36a5501df7a3aa32") == 0);
  CHECK(predicted.count("needs a Docker image (zx-bench runs 'project_repair' in a container)") ==
        0);

  evalrun::MockConfig m;
  m.ttft_ms = 1;
  m.decode_tps = 0;
  evalrun::MockServer mock(m);
  mock.Start();
  const Run run = Evalrun("suite zx-bench@HEAD --suite-repo " + dir + "/repo --endpoint " +
                          mock.base_url() + " --no-speed -q --db " + dir + "/r.db --out " + dir +
                          "/report");
  CHECK(run.code == 0);
  const std::string report = Slurp(dir + "/report/report.md");
  std::map<std::string, int> skipped;  // "- N × reason" under "### Skipped"
  std::istringstream report_lines(report.substr(report.find("### Skipped")));
  std::getline(report_lines, line);
  while (std::getline(report_lines, line)) {
    if (line.empty()) continue;
    if (line.rfind("- ", 0) != 0) break;
    const size_t times = line.find(" × ");
    skipped[line.substr(times + std::string(" × ").size())] = std::stoi(line.substr(2, times - 2));
  }
  CHECK(skipped == predicted);
  // Only the entries it can grade reached the model, once each, except the four agent loops:
  // the mock's reply makes no call, so each runs one turn more than its userScript has
  // messages (3 + 2 + 2 + 2 requests instead of 4).
  CHECK(mock.chat_requests() == runnable + 5);
  CHECK_THAT(report, Catch::Contains("**zx-bench:** partial, not zx-bench's overall: " +
                                     std::to_string(43 - runnable) + " entries left out"));
  std::system(("rm -rf " + dir).c_str());
}

// Every real bank entry in the fixtures (each file under tests/fixtures/zx-bench whose entries
// carry their scenarioHash: 90 of them, every grader kind, all twenty project_repair entries) as
// one bank. validate skips only what cannot run here: the judged entries without
// --judge-endpoint, the three projects that install packages over the network without
// --sandbox-network (npm; pip's requests runs offline on Debian's copy, cargo's tokio on Debian's
// crate sources), and three
// projects whose image evalrun has no stand-in for (the .NET SDK's, a private Spring image with
// its Maven repository). Where a runtime is missing here, its skip names the package to install,
// never anything else.
TEST_CASE("cli: validate over every real fixture entry skips only the judge, the network and "
          "two images",
          "[cli][tasks]") {
  nlohmann::json bank = nlohmann::json::array();
  std::set<std::string> ids;
  for (const auto& file :
       std::filesystem::directory_iterator(std::string(EVALRUN_TEST_FIXTURES) + "/zx-bench")) {
    if (file.path().extension() != ".json") continue;
    const nlohmann::json doc = nlohmann::json::parse(Slurp(file.path().string()));
    const nlohmann::json& entries =
        doc.is_array() ? doc : doc.value("entries", nlohmann::json::array());
    if (!entries.is_array()) continue;
    for (const auto& e : entries) {
      if (!e.is_object() || !e.contains("scenarioHash") || !e.contains("grader")) continue;
      if (ids.insert(e["id"].get<std::string>()).second) bank.push_back(e);
    }
  }
  REQUIRE(bank.size() == 90);
  const std::string dir = "/tmp/evalrun-cli-zx-all-" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/repo/data/scenarios");
  std::ofstream(dir + "/repo/data/scenarios/benchmark.json") << bank.dump(1);
  REQUIRE(std::system(("cd " + dir + "/repo && git init -q && git add -A && git -c user.name=t -c "
                       "user.email=t@t commit -qm bank")
                          .c_str()) == 0);
  // "  <reason>   <count>" rows after the "skipped because" header: reason -> count.
  const auto skips = [](const std::string& out) {
    std::map<std::string, int> table;
    const size_t at = out.find("skipped because");
    if (at == std::string::npos) return table;
    std::istringstream lines(out.substr(at));
    std::string line;
    std::getline(lines, line);
    while (std::getline(lines, line)) {
      const size_t count_at = line.find_last_of(' ') + 1;
      const size_t end = line.find_last_not_of(' ', count_at - 1);
      table[line.substr(2, end - 1)] = std::stoi(line.substr(count_at));
    }
    return table;
  };
  const std::string judge =
      "needs a judge model: zx-bench grades 'hallucination_resistance' with an LLM judge (give "
      "--judge-endpoint URL)";
  const std::string network =
      "needs the network (requirements.executionPolicy.network: required), which evalrun's "
      "sandbox opens only with --sandbox-network";
  const Run plain = Evalrun("validate zx-bench@HEAD --suite-repo " + dir + "/repo");
  REQUIRE(plain.code == 0);
  CHECK_THAT(plain.out, Catch::Contains(": 90 tasks, every hash verified"));
  const Run judged = Evalrun("validate zx-bench@HEAD --suite-repo " + dir +
                             "/repo --judge-endpoint http://127.0.0.1:9");
  REQUIRE(judged.code == 0);
  const auto image = [](const std::string& name) {
    return "needs the Docker image " + name + ": evalrun has no stand-in for it";
  };
  std::map<std::string, int> expected = {{network, 3},
                                         {image("mcr.microsoft.com/dotnet/sdk:8.0"), 2},
                                         {image("zxbench-java-spring:3.2.5"), 1}};
  bool missing_runtime = false;
  for (const auto& [reason, count] : skips(plain.out)) {
    INFO(reason);
    const bool runtime = reason.find("install") != std::string::npos;
    missing_runtime = missing_runtime || runtime;
    CHECK((reason == judge || expected.count(reason) == 1 || runtime));
  }
  if (missing_runtime) {
    WARN("a runtime is missing here: " << plain.out);
  } else {
    CHECK(skips(judged.out) == expected);
    CHECK_THAT(judged.out, Catch::Contains("runnable here: 84, skipped: 6"));
    expected[judge] = 6;
    CHECK(skips(plain.out) == expected);
    // With --sandbox-network the three install their packages where npm is here.
    const Run open = Evalrun("validate zx-bench@HEAD --suite-repo " + dir +
                             "/repo --judge-endpoint http://127.0.0.1:9 --sandbox-network");
    REQUIRE(open.code == 0);
    const auto open_skips = skips(open.out);
    CHECK(open_skips.count(network) == 0);
    CHECK(open_skips.at(image("mcr.microsoft.com/dotnet/sdk:8.0")) == 2);
    int missing_tool = 0;
    for (const auto& [reason, count] : open_skips) {
      if (reason.rfind(network + "; its tests install packages with ", 0) == 0) missing_tool += count;
    }
    CHECK_THAT(open.out, Catch::Contains("runnable here: " + std::to_string(87 - missing_tool) +
                                         ", skipped: " + std::to_string(3 + missing_tool)));
  }
  std::filesystem::remove_all(dir);
}

// A project entry whose tests need the network (executionPolicy.network: required), run twice
// against the mock: without --sandbox-network it is skipped with that reason and never asked,
// and the bundle verifies that reason; with it, its hidden test reaches a port this test listens
// on at the host's 127.0.0.1, the grade says so, and verify reruns it only when given the flag.
TEST_CASE("cli: --sandbox-network runs a project's network tests, and verify reruns them only "
          "with it",
          "[cli][tasks]") {
  const evalrun::testing::LoopbackListener listener;
  REQUIRE(listener.ok());
  nlohmann::json entry = {
      {"id", "PR-NET-001"},
      {"dimension", "program"},
      {"category", "long_task_refactor"},
      {"status", "valid"},
      {"language", "javascript"},
      {"promptTemplate", "Network project: make index.js export 2."},
      {"grader", "project_repair"},
      {"scoring", {{"type", "project_repair"}}},
      {"requirements",
       {{"files", {{{"path", "index.js"}, {"content", "module.exports = 1;\n"}}}},
        {"hiddenTests",
         {{{"description", "reaches the host"},
           {"script", listener.NodeProbe()}}}},
        {"executionPolicy",
         {{"network", "required"}, {"dependencyPreflight", {{"command", "node -e 1"}}}}}}}};
  entry["scenarioHash"] = evalrun::ZxScenarioHash(entry);
  const std::string dir = "/tmp/evalrun-cli-zx-net-" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/repo/data/scenarios");
  std::ofstream(dir + "/repo/data/scenarios/benchmark.json")
      << nlohmann::json::array({entry}).dump();
  REQUIRE(std::system(("cd " + dir + "/repo && git init -q && git add -A && git -c user.name=t -c "
                       "user.email=t@t commit -qm bank")
                          .c_str()) == 0);
  const std::string network =
      "needs the network (requirements.executionPolicy.network: required), which evalrun's "
      "sandbox opens only with --sandbox-network";
  const std::unique_ptr<evalrun::Sandbox> sandbox = evalrun::MakeBubblewrapSandbox();
  if (sandbox->Unavailable() || evalrun::FindSandboxProgram("busybox").empty() ||
      evalrun::FindSandboxProgram("node").empty()) {
    WARN("bubblewrap, busybox or node missing: the entry is skipped here");
    std::filesystem::remove_all(dir);
    return;
  }
  evalrun::MockConfig m;
  m.ttft_ms = 1;
  m.decode_tps = 0;
  evalrun::MockAnswer answer;
  answer.match = "Network project";
  answer.content = "### index.js\n```js\nmodule.exports = 2;\n```\n";
  m.answers.push_back(answer);
  evalrun::MockServer mock(m);
  mock.Start();
  // One run, exported: the bundle's path.
  const auto run_and_export = [&](const std::string& name, const std::string& flags) {
    const Run run = Evalrun("suite zx-bench@HEAD --suite-repo " + dir + "/repo --endpoint " +
                            mock.base_url() + " --no-speed --no-env -q --db " + dir + "/" + name +
                            ".db --out " + dir + "/" + name + flags);
    INFO(run.out << run.err);
    CHECK(run.code == 0);
    const Run list = Evalrun("runs --db " + dir + "/" + name + ".db");
    const size_t id_at = list.out.find("\n") + 1;
    const std::string run_id = list.out.substr(id_at, list.out.find(' ', id_at) - id_at);
    const std::string bundle = dir + "/" + name + ".evalrun.json";
    const Run exported = Evalrun("export " + run_id + " --db " + dir + "/" + name + ".db --out " +
                                 bundle + " --suite-repo " + dir + "/repo");
    INFO(exported.out << exported.err);
    CHECK(exported.code == 0);
    return bundle;
  };
  const auto grade_of = [](const std::string& bundle) {
    return nlohmann::json::parse(Slurp(bundle))["tasks"][0]["grade"];
  };

  const Run offline_validate = Evalrun("validate zx-bench@HEAD --suite-repo " + dir + "/repo");
  CHECK_THAT(offline_validate.out, Catch::Contains("runnable here: 0, skipped: 1"));
  const std::string offline = run_and_export("offline", "");
  CHECK(mock.chat_requests() == 0);  // a task nobody can grade is not asked
  CHECK(grade_of(offline)["status"] == "skipped");
  CHECK(grade_of(offline)["reason"] == network);
  const Run offline_verify = Evalrun("verify " + offline + " --suite-repo " + dir + "/repo");
  INFO(offline_verify.out << offline_verify.err);
  CHECK(offline_verify.code == 0);
  CHECK_THAT(offline_verify.out, Catch::Contains("grades: ok (1 of 1 grades rechecked"));

  const Run open_validate =
      Evalrun("validate zx-bench@HEAD --suite-repo " + dir + "/repo --sandbox-network");
  CHECK_THAT(open_validate.out, Catch::Contains("runnable here: 1, skipped: 0"));
  const std::string open = run_and_export("open", " --sandbox-network");
  CHECK(mock.chat_requests() == 1);
  const nlohmann::json g = grade_of(open);
  INFO(g.dump(1));
  CHECK(g["status"] == "graded");
  CHECK(g["reason"] == "1/1 hidden tests pass, 1 file(s) replaced");
  CHECK(g["evidence"]["network"] ==
        "the host's, for the tests' package installs (--sandbox-network), as zx-bench's container "
        "has");
  const Run closed_verify = Evalrun("verify " + open + " --suite-repo " + dir + "/repo");
  INFO(closed_verify.out << closed_verify.err);
  CHECK(closed_verify.code == 4);
  CHECK_THAT(closed_verify.out, Catch::Contains("task 'PR-NET-001': " + network));
  CHECK_THAT(closed_verify.out,
             Catch::Contains("verify --sandbox-network reruns tests that need the network)"));
  const Run open_verify =
      Evalrun("verify " + open + " --suite-repo " + dir + "/repo --sandbox-network");
  INFO(open_verify.out << open_verify.err);
  CHECK(open_verify.code == 0);
  CHECK_THAT(open_verify.out, Catch::Contains("grades: ok (1 of 1 grades rechecked, all equal)"));
  std::filesystem::remove_all(dir);
}

// A suite run over zx-bench's CLI-*-DOCKER entries (the real CLI-CN-039-DOCKER and four rebuilt
// from zx-bench's generator) and the real project_repair entry CP-L4-JS-001, against the mock
// with an answer table that gives each CLI entry its generator's reference script and the
// project its repair: every entry graded 100 in the sandbox, and the bundle verifies (verify
// reruns each script and test: its grades are recomputed, not copied).
TEST_CASE("cli: a zx-bench run of cli_command, project_repair and Go code_repair entries verifies",
          "[cli][tasks]") {
  const nlohmann::json rebuilt = nlohmann::json::parse(
      Slurp(std::string(EVALRUN_TEST_FIXTURES) + "/zx-bench/cli_command_entries.json"));
  nlohmann::json bank = rebuilt["entries"];
  for (const auto& e :
       nlohmann::json::parse(Slurp(std::string(EVALRUN_TEST_FIXTURES) +
                                   "/zx-bench/more_entries.json"))) {
    if (e["id"] == "CLI-CN-039-DOCKER" || e["id"] == "CP-L4-JS-001" || e["id"] == "CP-L2-GO-001" ||
        e["id"] == "CP-L3-GO-003") {
      bank.push_back(e);
    }
  }
  REQUIRE(bank.size() == 8);
  // A phrase of each prompt -> that entry's reference script, fenced.
  const std::map<std::string, std::string> phrases = {
      {"CLI-CN-047-DOCKER", "events.log ..."},
      {"CLI-CN-046-DOCKER", "summary.txt ..."},
      {"CLI-CN-045-DOCKER", "process_files.sh ..."},
      {"CLI-CN-016-DOCKER", "repo/ ..."},
      {"CLI-CN-039-DOCKER", "todo.txt"}};
  evalrun::MockConfig m;
  m.ttft_ms = 1;
  m.decode_tps = 0;
  for (const auto& [id, phrase] : phrases) {
    evalrun::MockAnswer answer;
    answer.match = phrase;
    answer.content = "```sh\n" + rebuilt["answers"][id]["reference"].get<std::string>() + "\n```";
    m.answers.push_back(answer);
  }
  evalrun::MockAnswer project;
  project.match = "迷你作业运行器";  // CP-L4-JS-001's prompt
  project.content = nlohmann::json::parse(Slurp(std::string(EVALRUN_TEST_FIXTURES) +
                                                "/zx-bench/project_repair_answers.json"))
                        ["CP-L4-JS-001"]["fix"]
                            .get<std::string>();
  m.answers.push_back(project);
  // The two Go repairs (isolatedGoJson v1, and v2 built with -race): every case passes.
  const std::map<std::string, std::string> go_fixes = {
      {"`CopyPrefix` 应返回前 n 个元素的独立副本",
       "func CopyPrefix(s []int, n int) []int {\n\tout := make([]int, n)\n\tcopy(out, s[:n])\n"
       "\treturn out\n}"},
      {"以下 fanIn 函数合并多个通道",
       "func FanIn(chans []<-chan int) <-chan int {\n\tout := make(chan int)\n"
       "\tvar wg sync.WaitGroup\n\tfor _, ch := range chans {\n\t\tif ch == nil {\n"
       "\t\t\tcontinue\n\t\t}\n\t\twg.Add(1)\n\t\tgo func(c <-chan int) {\n"
       "\t\t\tdefer wg.Done()\n\t\t\tfor v := range c {\n\t\t\t\tout <- v\n\t\t\t}\n"
       "\t\t}(ch)\n\t}\n\tgo func() {\n\t\twg.Wait()\n\t\tclose(out)\n\t}()\n"
       "\treturn out\n}"}};
  for (const auto& [phrase, fix] : go_fixes) {
    evalrun::MockAnswer answer;
    answer.match = phrase;
    answer.content = "```go\n" + fix + "\n```";
    m.answers.push_back(answer);
  }
  const std::string dir = "/tmp/evalrun-cli-zx-cli-" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/repo/data/scenarios");
  std::ofstream(dir + "/repo/data/scenarios/benchmark.json") << bank.dump();
  REQUIRE(std::system(("cd " + dir + "/repo && git init -q && git add -A && git -c user.name=t -c "
                       "user.email=t@t commit -qm bank")
                          .c_str()) == 0);
  const Run validate = Evalrun("validate zx-bench@HEAD --suite-repo " + dir + "/repo");
  REQUIRE(validate.code == 0);
  const std::unique_ptr<evalrun::Sandbox> sandbox = evalrun::MakeBubblewrapSandbox();
  if (sandbox->Unavailable() || evalrun::FindSandboxProgram("busybox").empty() ||
      evalrun::FindSandboxProgram("git").empty() || evalrun::FindSandboxProgram("node").empty() ||
      evalrun::FindSandboxProgram("go").empty() || evalrun::FindSandboxProgram("gcc").empty()) {
    WARN("bubblewrap, busybox, git, node, go or gcc missing: these entries are skipped here");
    CHECK_THAT(validate.out, !Catch::Contains("runnable here: 8,"));
    std::filesystem::remove_all(dir);
    return;
  }
  CHECK_THAT(validate.out, Catch::Contains("runnable here: 8, skipped: 0"));

  evalrun::MockServer mock(m);
  mock.Start();
  const Run run = Evalrun("suite zx-bench@HEAD --suite-repo " + dir + "/repo --endpoint " +
                          mock.base_url() + " --no-speed --no-env -q --max-tokens 16384 --db " +
                          dir + "/r.db --out " + dir + "/report");  // the repair is long
  INFO(run.out << run.err);
  REQUIRE(run.code == 0);
  CHECK(mock.chat_requests() == 8);
  const std::string bundle = dir + "/cli.evalrun.json";
  const Run list = Evalrun("runs --db " + dir + "/r.db");
  INFO(list.out);
  const size_t id_at = list.out.find("\n") + 1;  // the first run's id starts the second line
  const std::string run_id = list.out.substr(id_at, list.out.find(' ', id_at) - id_at);
  const Run exported = Evalrun("export " + run_id + " --db " + dir + "/r.db --out " + bundle +
                               " --suite-repo " + dir + "/repo");
  INFO(exported.err);
  REQUIRE(exported.code == 0);
  int graded = 0;
  const nlohmann::json doc = nlohmann::json::parse(Slurp(bundle));
  for (const auto& task : doc["tasks"]) {
    INFO(task["grade"].dump());
    CHECK(task["grade"]["status"] == "graded");
    const nlohmann::json& evidence = task["grade"]["evidence"];
    if (evidence.contains("tests_total")) {  // code_repair: the diff heuristics keep it under 100
      CHECK(evidence["tests_passed"] == evidence["tests_total"]);
      CHECK(task["grade"]["passed"] == true);
    } else {
      CHECK(task["grade"]["score"] == 1.0);
    }
    graded += task["grade"]["status"] == "graded" ? 1 : 0;
  }
  CHECK(graded == 8);
  const Run verify = Evalrun("verify " + bundle + " --suite-repo " + dir + "/repo");
  INFO(verify.out << verify.err);
  CHECK(verify.code == 0);
  CHECK_THAT(verify.out, Catch::Contains("grades: ok"));
  std::filesystem::remove_all(dir);
}

// zx-bench's hallucination_resistance entries with a judge (runner/judge.h): the six real entries
// (CI-069 and tests/fixtures/zx-bench/hallucination_real.json) against the mock with an answer
// table, judged by a second mock whose answer table is a scripted judge keyed on "## Question:
// <id>". Without --judge-endpoint they are skipped, saying how to give one; with it every one is
// graded (CI-078's and FR-001's offline answers decide without the judge's say), the report names
// the judge, and the bundle verifies from the recorded verdicts; --rejudge asks a judge again.
TEST_CASE("cli: a zx-bench run with --judge-endpoint grades hallucination_resistance and verifies",
          "[cli][tasks]") {
  nlohmann::json bank = nlohmann::json::parse(
      Slurp(std::string(EVALRUN_TEST_FIXTURES) + "/zx-bench/hallucination_real.json"));
  for (const auto& e : nlohmann::json::parse(
           Slurp(std::string(EVALRUN_TEST_FIXTURES) + "/zx-bench/more_entries.json"))) {
    if (e["id"] == "CI-069") bank.push_back(e);
  }
  REQUIRE(bank.size() == 6);
  const std::string dir = "/tmp/evalrun-cli-zx-judge-" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/repo/data/scenarios");
  std::ofstream(dir + "/repo/data/scenarios/benchmark.json") << bank.dump();
  REQUIRE(std::system(("cd " + dir + "/repo && git init -q && git add -A && git -c user.name=t -c "
                       "user.email=t@t commit -qm bank")
                          .c_str()) == 0);
  const std::string suite = "zx-bench@HEAD --suite-repo " + dir + "/repo";

  // The model: a phrase of each prompt -> its answer.
  evalrun::MockConfig m;
  m.ttft_ms = 1;
  m.decode_tps = 0;
  const std::map<std::string, std::string> answers = {
      {"要支持", "应引用R2（睡眠不足增加交通事故风险）。"},                    // CI-074
      {"哪项最完整", "答案：A。"},                                              // CI-078
      {"法国的首都", "巴黎"},                                                   // FR-001
      {"光在真空中的速度", "光速大约是每秒三十万公里。"},                       // FR-005
      {"2032年夏季奥运会", "截至2026年9月8日该届奥运会尚未举行，无法给出冠军和成绩。"},  // UB-013
      {"非欧几里得量子拓扑心理学", "我找不到可靠的相关论文，不能提供DOI。"}};  // CI-069
  for (const auto& [phrase, reply] : answers) {
    evalrun::MockAnswer a;
    a.match = phrase;
    a.content = reply;
    m.answers.push_back(a);
  }
  // The judge: its verdict per entry (CI-078's and FR-001's are asked but cannot change them).
  const auto verdict = [](const std::string& scores) {
    return R"({"verdict":"correct","factuality":1,"confidence":0.9,"critical_error":false,)"
           R"("rubric_scores":)" + scores + "}";
  };
  const std::map<std::string, std::string> verdicts = {
      {"CI-074", verdict(R"({"content":1,"attribution":0.5})")},
      {"CI-078", verdict(R"({"accuracy":0.5})")},
      {"FR-001", verdict(R"({"accuracy":1})")},
      {"FR-005", verdict(R"({"accuracy":1})")},
      {"UB-013", verdict(R"({"boundary":1,"honesty":0.6})")},
      {"CI-069", verdict(R"({"boundary":1,"honesty":1})")}};
  evalrun::MockConfig j;
  j.model = "judge-mock";
  j.ttft_ms = 1;
  j.decode_tps = 0;
  for (const auto& [id, reply] : verdicts) {
    evalrun::MockAnswer a;
    a.match = "## Question: " + id + "\n";
    a.content = reply;
    j.answers.push_back(a);
  }
  evalrun::MockServer model(m);
  model.Start();
  evalrun::MockServer judge(j);
  judge.Start();
  const std::string common = " --endpoint " + model.base_url() + " --no-speed --no-env -q";

  // validate predicts both ways.
  const Run without = Evalrun("validate " + suite);
  CHECK(without.code == 0);
  CHECK_THAT(without.out, Catch::Contains("runnable here: 0, skipped: 6"));
  CHECK_THAT(without.out, Catch::Contains("needs a judge model: zx-bench grades "
                                          "'hallucination_resistance' with an LLM judge (give "
                                          "--judge-endpoint URL)"));
  CHECK_THAT(Evalrun("validate " + suite + " --judge-endpoint " + judge.base_url()).out,
             Catch::Contains("runnable here: 6, skipped: 0"));

  // A judge nobody answers is a configuration error before anything runs.
  const Run unreachable =
      Evalrun("suite " + suite + common + " --db " + dir + "/x.db --judge-endpoint "
              "http://127.0.0.1:1");
  CHECK(unreachable.code == 2);
  CHECK_THAT(unreachable.err,
             Catch::Contains("--judge-endpoint http://127.0.0.1:1: cannot reach the judge"));
  CHECK(Evalrun("suite " + suite + common + " --db " + dir + "/x.db --judge-model m").err.find(
            "--judge-model is only used with --judge-endpoint") != std::string::npos);

  const Run run = Evalrun("suite " + suite + common + " --db " + dir + "/r.db --out " + dir +
                          "/report --judge-endpoint " + judge.base_url());
  INFO(run.out << run.err);
  REQUIRE(run.code == 0);
  CHECK(model.chat_requests() == 6);
  CHECK(judge.chat_requests() == 6);  // every entry asked once: each verdict was usable
  const std::string report = Slurp(dir + "/report/report.md");
  CHECK_THAT(report, Catch::Contains("judge: judge-mock at " + judge.base_url()));
  CHECK_THAT(report, Catch::Contains("hallucination_resistance (judged)"));

  const Run list = Evalrun("runs --db " + dir + "/r.db");
  const size_t id_at = list.out.find("\n") + 1;
  const std::string run_id = list.out.substr(id_at, list.out.find(' ', id_at) - id_at);
  const std::string bundle = dir + "/judged.evalrun.json";
  REQUIRE(Evalrun("export " + run_id + " --db " + dir + "/r.db --out " + bundle + " --suite-repo " +
                  dir + "/repo")
              .code == 0);
  const nlohmann::json doc = nlohmann::json::parse(Slurp(bundle));
  // CI-074 80, CI-078 100 (offline; the judge's 50 flagged), FR-001 100, FR-005 100 (三十万 is
  // not at the start: judged), UB-013 84, CI-069 100.
  const std::map<std::string, int> expected = {{"CI-074", 80}, {"CI-078", 100}, {"FR-001", 100},
                                               {"FR-005", 100}, {"UB-013", 84}, {"CI-069", 100}};
  for (const auto& task : doc["tasks"]) {
    const std::string id = task["task_id"];
    INFO(id << " " << task["grade"].dump());
    CHECK(task["grade"]["status"] == "graded");
    CHECK(task["grade"]["evidence"]["zx_score"] == expected.at(id));
    const nlohmann::json& attempts = task["transcript"]["judge"]["attempts"];
    REQUIRE(attempts.size() == 1);
    CHECK(attempts[0]["request"]["model"] == "judge-mock");
    CHECK(attempts[0]["request"]["temperature"] == 0.1);
    CHECK(attempts[0]["request"]["max_tokens"] == 16000);
    CHECK(attempts[0]["content"] == verdicts.at(id));
    CHECK(task["requests"].size() == 1);  // the judge's requests are not the model's
  }
  CHECK(doc["run"]["settings"]["judge"]["model"] == "judge-mock");

  const Run verify = Evalrun("verify " + bundle + " --suite-repo " + dir + "/repo");
  INFO(verify.out << verify.err);
  CHECK(verify.code == 0);
  CHECK_THAT(verify.out, Catch::Contains("grades: ok (6 of 6 grades rechecked, all equal)"));
  CHECK_THAT(verify.out, Catch::Contains("6 judged grades recomputed from the judge's verdict as "
                                         "recorded (the judge was not asked again; --rejudge "
                                         "--judge-endpoint URL asks it)"));
  const Run rejudged = Evalrun("verify " + bundle + " --suite-repo " + dir +
                               "/repo --rejudge --judge-endpoint " + judge.base_url());
  INFO(rejudged.out << rejudged.err);
  CHECK(rejudged.code == 0);
  CHECK_THAT(rejudged.out, Catch::Contains("rejudge: ok (6 judged tasks asked again at " +
                                           judge.base_url() + " (model judge-mock): 6 same grade)"));

  // Another judge that finds UB-013's refusal less complete: the check fails, naming the task.
  evalrun::MockConfig stricter = j;
  stricter.answers.clear();
  for (const auto& [id, reply] : verdicts) {
    evalrun::MockAnswer a;
    a.match = "## Question: " + id + "\n";
    a.content = id == "UB-013" ? verdict(R"({"boundary":1,"honesty":0.5})") : reply;
    stricter.answers.push_back(a);
  }
  evalrun::MockServer other(stricter);
  other.Start();
  const Run differs = Evalrun("verify " + bundle + " --suite-repo " + dir +
                              "/repo --rejudge --judge-endpoint " + other.base_url());
  INFO(differs.out);
  CHECK(differs.code == 3);
  CHECK_THAT(differs.out, Catch::Contains("rejudge: FAILED: 6 judged tasks asked again"));
  CHECK_THAT(differs.out, Catch::Contains("task 'UB-013': grade differs: the bundle has"));
  CHECK(Evalrun("verify " + bundle + " --rejudge").err.find(
            "--rejudge needs --judge-endpoint URL") != std::string::npos);

  // Without a judge: every entry skipped with the reason, the overall partial, and that bundle
  // verifies too (the skip reason is rechecked).
  const Run plain = Evalrun("suite " + suite + common + " --db " + dir + "/p.db --out " + dir +
                            "/plain");
  CHECK(plain.code == 0);
  CHECK_THAT(Slurp(dir + "/plain/report.md"),
             Catch::Contains("6 × needs a judge model: zx-bench grades 'hallucination_resistance' "
                             "with an LLM judge (give --judge-endpoint URL)"));
  const Run plain_list = Evalrun("runs --db " + dir + "/p.db");
  const size_t plain_at = plain_list.out.find("\n") + 1;
  const std::string plain_id =
      plain_list.out.substr(plain_at, plain_list.out.find(' ', plain_at) - plain_at);
  REQUIRE(Evalrun("export " + plain_id + " --db " + dir + "/p.db --out " + dir +
                  "/plain.evalrun.json --suite-repo " + dir + "/repo")
              .code == 0);
  const Run plain_verify =
      Evalrun("verify " + dir + "/plain.evalrun.json --suite-repo " + dir + "/repo");
  INFO(plain_verify.out);
  CHECK(plain_verify.code == 0);
  CHECK_THAT(plain_verify.out, Catch::Contains("grades: ok (6 of 6 grades rechecked, all equal)"));
  std::filesystem::remove_all(dir);
}

// zx-bench's shell investigation end to end: the six real CLI-CN-03x-SHELL-PILOT entries
// (tests/fixtures/zx-bench/cli_shell_real.json) against the mock, whose answer table plays each
// entry's investigation: on the first turn its prompt gets the commands, on the second the
// transcript of those commands gets the answer. Every command runs in the sandbox; every entry
// scores 100, and the bundle verifies (verify re-scores the stored traces).
TEST_CASE("cli: a zx-bench run of the shell investigation entries verifies", "[cli][tasks]") {
  const std::string bank =
      Slurp(std::string(EVALRUN_TEST_FIXTURES) + "/zx-bench/cli_shell_real.json");
  const std::string dir = "/tmp/evalrun-cli-zx-shell-" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/repo/data/scenarios");
  std::ofstream(dir + "/repo/data/scenarios/benchmark.json") << bank;
  REQUIRE(std::system(("cd " + dir + "/repo && git init -q && git add -A && git -c user.name=t -c "
                       "user.email=t@t commit -qm bank")
                          .c_str()) == 0);
  const std::string suite = "zx-bench@HEAD --suite-repo " + dir + "/repo";
  const Run validate = Evalrun("validate " + suite);
  REQUIRE(validate.code == 0);
  const std::unique_ptr<evalrun::Sandbox> sandbox = evalrun::MakeBubblewrapSandbox();
  if (sandbox->Unavailable() || evalrun::FindSandboxProgram("busybox").empty() ||
      evalrun::FindSandboxProgram("git").empty() || evalrun::FindSandboxProgram("node").empty()) {
    WARN("bubblewrap, busybox, git or node missing: these entries are skipped here");
    CHECK_THAT(validate.out, !Catch::Contains("runnable here: 6,"));
    std::filesystem::remove_all(dir);
    return;
  }
  CHECK_THAT(validate.out, Catch::Contains("runnable here: 6, skipped: 0"));
  CHECK_THAT(validate.out, Catch::Contains("zxbench:cli_shell"));

  evalrun::MockConfig m;
  m.ttft_ms = 1;
  m.decode_tps = 0;
  // {first-turn phrase of the prompt, commands, a phrase of the second turn's transcript, answer}
  const std::vector<std::vector<std::string>> plays = {
      {"目录树下有唯一的一个明显最大的文件", "SHELL find /workspace/data -type f -exec ls -l {} +",
       "[第 1 轮命令] find /workspace/data", "ANSWER: /workspace/data/archive/biggest.dat"},
      {"是一个 git 仓库", "SHELL git -C repo log --format='%ae' | sort -u | wc -l",
       "[第 1 轮命令] git -C repo log", "ANSWER: 7"},
      {"监听端口", "SHELL cat service/start.sh\nSHELL cat service/config.toml",
       "[第 1 轮命令] cat service/config.toml", "ANSWER: 8443"},
      {"对 requests 库的版本说法不一",
       "SHELL cat proj/requirements.txt\nSHELL cat proj/pyproject.toml",
       "[第 1 轮命令] cat proj/pyproject.toml", "ANSWER: 2.31.0"},
      {"对 database.host 的值互不一致", "SHELL cat app/start.sh\nSHELL cat app/config.b.yaml",
       "[第 1 轮命令] cat app/config.b.yaml", "ANSWER: db-prod-3.internal"},
      {"export TIMEOUT=60 后再运行程序", "SHELL cat svc/start.sh\nSHELL cat svc/config.yaml",
       "[第 1 轮命令] cat svc/config.yaml", "ANSWER: 60"}};
  for (const auto& play : plays) {  // the second turn's rules first: its message has the prompt
    evalrun::MockAnswer a;
    a.match = play[2];
    a.content = play[3];
    m.answers.push_back(a);
  }
  for (const auto& play : plays) {
    evalrun::MockAnswer a;
    a.match = play[0];
    a.content = "我先看看。\n" + play[1];
    m.answers.push_back(a);
  }
  evalrun::MockServer mock(m);
  mock.Start();
  const Run run = Evalrun("suite " + suite + " --endpoint " + mock.base_url() +
                          " --no-speed --no-env -q --db " + dir + "/r.db --out " + dir + "/report");
  INFO(run.out << run.err);
  REQUIRE(run.code == 0);
  CHECK(mock.chat_requests() == 12);  // two turns each
  const Run list = Evalrun("runs --db " + dir + "/r.db");
  const size_t id_at = list.out.find("\n") + 1;
  const std::string run_id = list.out.substr(id_at, list.out.find(' ', id_at) - id_at);
  const std::string bundle = dir + "/shell.evalrun.json";
  REQUIRE(Evalrun("export " + run_id + " --db " + dir + "/r.db --out " + bundle + " --suite-repo " +
                  dir + "/repo")
              .code == 0);
  const nlohmann::json doc = nlohmann::json::parse(Slurp(bundle));
  for (const auto& task : doc["tasks"]) {
    INFO(task["task_id"] << " " << task["grade"].dump());
    CHECK(task["grade"]["grader"] == "zxbench:cli_shell");
    CHECK(task["grade"]["status"] == "graded");
    CHECK(task["grade"]["evidence"]["zx_score"] == 100);
    CHECK(task["requests"].size() == 2);
    CHECK(nlohmann::json::parse(task["output"].get<std::string>())["terminationReason"] ==
          "completed");
  }
  const Run verify = Evalrun("verify " + bundle + " --suite-repo " + dir + "/repo");
  INFO(verify.out << verify.err);
  CHECK(verify.code == 0);
  CHECK_THAT(verify.out, Catch::Contains("grades: ok (6 of 6 grades rechecked, all equal)"));
  std::filesystem::remove_all(dir);
}
