// zx-bench's shell investigation (runner/agent/zx_shell_loop.h) and its grader (zxbench:cli_shell)
// on the six real CLI-CN-03x-SHELL-PILOT entries (tests/fixtures/zx-bench/cli_shell_real.json,
// bank 8e0adf68, every scenarioHash checked), with scripted models. The commands really run, in
// bubblewrap with the image stand-ins. Expected scores are worked out from cliCommand.ts's
// executionShell branch (docs/upstream/zx-bench-execution-shell.md §6 and §9): three critical
// criteria (the answer, the exploration, the protocol), 0 without an answer, else
// round(passes / 3 x 100).
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/catch.h"

#include "graders/grader.h"
#include "graders/zxbench/cli_shell.h"
#include "graders/zxbench/image_stand_in.h"
#include "plugins/sandbox.h"
#include "plugins/zxbench_importer.h"
#include "runner/agent/zx_shell_loop.h"
#include "tests/support/fixtures.h"

namespace evalrun::zx {
namespace {

using json = nlohmann::json;

json Entry(const std::string& id) {
  for (const json& e : json::parse(testing::ReadFixture("zx-bench/cli_shell_real.json"))) {
    if (e.value("id", "") == id) return e;
  }
  FAIL("fixture entry " << id << " missing");
  return {};
}

struct Played {
  ShellLoopRun run;
  Grade grade;
  std::vector<json> sent;  // the messages of each turn
};

// The sandbox, or nullptr when this machine cannot run the entry's stand-in (then WARN).
const Sandbox* SandboxFor(const ShellConfig& config) {
  static const std::unique_ptr<Sandbox> sandbox = MakeBubblewrapSandbox();
  if (sandbox->Unavailable() || !StandInUnavailable(StandInFor(config.image)).empty()) {
    WARN("no bubblewrap or no stand-in for " << config.image << ": not run here");
    return nullptr;
  }
  return sandbox.get();
}

// Plays `replies` (one per turn; the loop may stop earlier) on the entry and grades the trace.
std::optional<Played> Play(const std::string& id, const std::vector<std::string>& replies,
                           double hard_timeout_s = 600) {
  const json entry = Entry(id);
  const ShellConfig config = ParseShellConfig(entry);
  const Sandbox* sandbox = SandboxFor(config);
  if (sandbox == nullptr) return std::nullopt;
  Played out;
  size_t next = 0;
  const ModelTurn model = [&](const json& messages, double) {
    out.sent.push_back(messages);
    TurnReply r;
    r.finish_reason = "stop";
    r.content = next < replies.size() ? replies[next] : "（脚本已用完）";
    ++next;
    return r;
  };
  out.run = RunShellLoopEpisode(config, entry["promptTemplate"].get<std::string>(), model,
                                *sandbox, hard_timeout_s);
  const Grader* grader = GraderRegistry::Builtin().Find("zxbench:cli_shell");
  REQUIRE(grader != nullptr);
  Answer answer;
  answer.text = out.run.trace.dump();
  out.grade = grader->Run(entry, answer, GradeContext{});
  return out;
}

int Score(const Played& p) { return p.grade.evidence.at("zx_score").get<int>(); }

TEST_CASE("zx shell loop: the protocol lines as shellLoop.ts reads them", "[agent][zxbench]") {
  const ShellReply r = ParseShellReply(
      "Let me look.\nSHELL cat a.txt  # look\n  SHELL ls\nshell ls\nSHELL\nSHELL   \r\n"
      "SHELL\tpwd\r\nANSWER: 8443 \nANSWER: 9090");
  CHECK(r.commands == std::vector<std::string>{"cat a.txt  # look", "pwd"});
  CHECK(r.answer == "8443");
  CHECK(ParseShellReply("ANSWER：8443\n**ANSWER:** 1\n ANSWER: 2\n答案: 3").answer.empty());
  CHECK(ParseShellReply("ANSWER:8443").answer == "8443");
  CHECK(ParseShellReply("ANSWER: `8443`").answer == "`8443`");
  ShellConfig config;
  config.max_commands_per_turn = 8;
  CHECK(ShellSystemPrompt(config) ==
        "你在隔离的 Linux 工作区调查用户的问题。需要查看环境时，每行输出 SHELL <命令>。\n"
        "每轮最多 8 条命令。命令会真实执行，下一轮会收到原始 stdout、stderr 和退出码。\n"
        "调查完成后单独输出一行 ANSWER: <答案>。不要声称没有执行过的检查已经完成。");
  CHECK(ShellTranscriptEntry(2, "cat x", std::nullopt, "a\n", "") ==
        "[第 2 轮命令] cat x\n[退出码] null\n[stdout]\na\n\n[stderr]\n");
  // The real entries' configurations.
  const ShellConfig c33 = ParseShellConfig(Entry("CLI-CN-033-SHELL-PILOT"));
  CHECK(c33.answer == "8443");
  CHECK(c33.max_turns == 5);
  CHECK(c33.min_commands == 2);
  CHECK(c33.max_commands_per_turn == 8);
  CHECK(c33.image == "python:3.12-alpine");
  const ShellConfig c31 = ParseShellConfig(Entry("CLI-CN-031-SHELL-PILOT"));
  CHECK(c31.image == "node:22-alpine");
  CHECK(c31.max_commands_per_turn == 4);
  CHECK(c31.setup_commands == std::vector<std::string>{"node __zx_size_setup.mjs && rm __zx_size_setup.mjs"});
  json bad = Entry("CLI-CN-033-SHELL-PILOT");
  bad["requirements"]["executionShell"]["files"][0]["path"] = "../x";
  const Grader* grader = GraderRegistry::Builtin().Find("zxbench:cli_shell");
  REQUIRE(grader != nullptr);
  CHECK(grader->Unrunnable(bad) == "zx-bench cannot run this entry: Invalid workspace path: ../x");
  // The importer hands these entries to zxbench:cli_shell, and they are agent tasks.
  const Suite suite = ImportZxBench(testing::ReadFixture("zx-bench/cli_shell_real.json"), "bank");
  REQUIRE(suite.tasks.size() == 6);
  for (const Task& t : suite.tasks) CHECK(t.grader.value("type", "") == "zxbench:cli_shell");
}

TEST_CASE("zx shell loop: CLI-CN-033 (which port) scores 100, 33 and 67 as zx-bench scores it",
          "[agent][zxbench]") {
  // E1: two commands, then the answer: every criterion passes.
  auto p = Play("CLI-CN-033-SHELL-PILOT",
                {"SHELL cat service/start.sh\nSHELL cat service/config.toml", "ANSWER: 8443"});
  if (!p) return;
  CHECK(Score(*p) == 100);
  CHECK(p->run.trace["terminationReason"] == "completed");
  CHECK(p->run.trace["events"].size() == 2);
  CHECK(p->run.trace["events"][0]["exitCode"] == 0);
  CHECK(p->run.trace["events"][0]["stdout"].get<std::string>().find("CONFIG_FILE=config.toml") !=
        std::string::npos);
  CHECK(p->grade.evidence["evidence"][0] == "Docker shell investigation: 2 commands, answer=8443");
  // Turn 2's user message: the task, then each command with its exit code and output.
  REQUIRE(p->sent.size() == 2);
  const std::string user = p->sent[1][1]["content"];
  CHECK(user.find("\n\n[第 1 轮命令] cat service/start.sh\n[退出码] 0\n[stdout]\n#!/bin/sh\n") !=
        std::string::npos);
  CHECK(user.find("\n\n[第 1 轮命令] cat service/config.toml\n[退出码] 0\n[stdout]\n") !=
        std::string::npos);
  CHECK(p->sent[1][0]["content"].get<std::string>().find("每轮最多 8 条命令") != std::string::npos);

  // E2: one command and an answer in the same turn: the answer is wrong and 1 < minCommands 2.
  p = Play("CLI-CN-033-SHELL-PILOT", {"SHELL cat service/config.yaml\nANSWER: 8080"});
  CHECK(Score(*p) == 33);
  CHECK(p->grade.evidence["criteria"][0]["status"] == "fail");
  CHECK(p->grade.evidence["criteria"][1]["evidence"] == "commands=1");
  // The same with the right answer: 67.
  p = Play("CLI-CN-033-SHELL-PILOT", {"SHELL cat service/config.yaml\nANSWER: 8443"});
  CHECK(Score(*p) == 67);
  // E3: explored, answered wrong: 67; "8443." is wrong too (no normalisation).
  p = Play("CLI-CN-033-SHELL-PILOT",
           {"SHELL cat service/start.sh\nSHELL python service/app.py --config "
            "service/config.toml",
            "ANSWER: 8443."});
  CHECK(Score(*p) == 67);
  CHECK(p->run.trace["events"][1]["stdout"] == "listening on 0.0.0.0:8443\n");
}

TEST_CASE("zx shell loop: limits, protocol errors and silence score as zx-bench scores them",
          "[agent][zxbench]") {
  // E4: five commands under CLI-CN-034's default cap of 4: nothing runs, the answer is not read.
  auto p = Play("CLI-CN-034-SHELL-PILOT",
                {"SHELL ls\nSHELL cat proj/requirements.txt\nSHELL cat proj/pyproject.toml\n"
                 "SHELL cat proj/README.md\nSHELL cat proj/app.py\nANSWER: 2.31.0"});
  if (!p) return;
  CHECK(Score(*p) == 0);
  CHECK(p->run.trace["errors"] == json({"TURN_1_TOO_MANY_COMMANDS"}));
  CHECK(p->run.trace["events"].empty());
  CHECK(p->grade.evidence["human_review_required"] == true);
  // The same reading in two turns of four and one: 100.
  p = Play("CLI-CN-034-SHELL-PILOT",
           {"SHELL cat proj/requirements.txt\nSHELL cat proj/pyproject.toml",
            "ANSWER: 2.31.0"});
  CHECK(Score(*p) == 100);

  // E6: a command that runs out of time in the answering turn: the session's limit, 67.
  p = Play("CLI-CN-036-SHELL-PILOT",
           {"SHELL cat svc/start.sh\nSHELL sleep 60\nSHELL cat svc/config.yaml\nANSWER: 60"}, 3);
  CHECK(Score(*p) == 67);
  CHECK(p->run.trace["errors"] == json({"TURN_1_EXECUTION_LIMIT"}));
  CHECK(p->run.trace["events"].size() == 2);  // the third command never runs
  CHECK(p->run.trace["events"][1]["timedOut"] == true);
  CHECK(p->run.trace["events"][1]["exitCode"].is_null());
  CHECK(p->grade.evidence["criteria"][2]["evidence"] == "TURN_1_EXECUTION_LIMIT");

  // Too much output: cut at 256 KiB, the protocol fails.
  p = Play("CLI-CN-036-SHELL-PILOT",
           {"SHELL cat svc/start.sh\nSHELL yes a | head -c 300000\nANSWER: 60"});
  CHECK(Score(*p) == 67);
  CHECK(p->run.trace["events"][1]["outputLimitExceeded"] == true);
  CHECK(p->run.trace["events"][1]["stdout"].get<std::string>().size() == 262144);

  // E7: commands every turn and never an answer: SHELL_TURN_LIMIT, 0.
  std::vector<std::string> seven(7, "SHELL ls svc");
  p = Play("CLI-CN-036-SHELL-PILOT", seven);
  CHECK(Score(*p) == 0);
  CHECK(p->run.trace["errors"] == json({"SHELL_TURN_LIMIT"}));
  CHECK(p->run.trace["turns"].size() == 7);
  // A reply with neither commands nor an answer ends the episode: no_action, 0.
  p = Play("CLI-CN-036-SHELL-PILOT", {"I think it is 60."});
  CHECK(Score(*p) == 0);
  CHECK(p->run.trace["terminationReason"] == "no_action");
  CHECK(p->run.trace["errors"].empty());
}

TEST_CASE("zx shell loop: setup commands, the gcc:13 and node:22-alpine stand-ins",
          "[agent][zxbench]") {
  // E8: CLI-CN-032's setup builds a git history (9 commits, 7 author emails) with python3 and
  // git; the model counts the emails.
  auto p = Play("CLI-CN-032-SHELL-PILOT",
                {"SHELL git -C repo log --format='%ae' | sort -u | wc -l", "ANSWER: 7"});
  if (p) {
    CHECK(Score(*p) == 100);
    CHECK(p->run.trace["events"][0]["stdout"] == "7\n");
    // Counting names instead: 6, wrong, 67.
    p = Play("CLI-CN-032-SHELL-PILOT",
             {"SHELL git -C repo log --format='%an' | sort -u | wc -l", "ANSWER: 6"});
    CHECK(Score(*p) == 67);
  }
  // E5: CLI-CN-031's setup writes the files with node; BusyBox's find and ls do the rest.
  p = Play("CLI-CN-031-SHELL-PILOT",
           {"SHELL find /workspace/data -type f -exec ls -l {} +",
            "ANSWER: /workspace/data/archive/biggest.dat"});
  if (p) {
    CHECK(Score(*p) == 100);
    CHECK(p->run.trace["events"][0]["stdout"].get<std::string>().find(
              "5242880 ") != std::string::npos);
    // A relative path is not the answer: 67.
    p = Play("CLI-CN-031-SHELL-PILOT",
             {"SHELL du -a data | sort -n | tail -1", "ANSWER: data/archive/biggest.dat"});
    CHECK(Score(*p) == 67);
  }
  // CLI-CN-035: the last -c file wins (a -> c -> b); the workspace lasts across turns.
  p = Play("CLI-CN-035-SHELL-PILOT",
           {"SHELL cat app/start.sh\nSHELL cp app/config.b.yaml /workspace/seen.yaml",
            "SHELL cat seen.yaml", "ANSWER: db-prod-3.internal"});
  if (p) {
    CHECK(Score(*p) == 100);
    CHECK(p->run.trace["events"][2]["stdout"] == "database:\n  host: db-prod-3.internal\n");
  }
}

TEST_CASE("zx shell loop: a failing first request is zx-bench's failed evaluation, a trace "
          "without commands is not",
          "[agent][zxbench]") {
  const json entry = Entry("CLI-CN-036-SHELL-PILOT");
  const ShellConfig config = ParseShellConfig(entry);
  const Sandbox* sandbox = SandboxFor(config);
  if (sandbox == nullptr) return;
  const ModelTurn refused = [](const json&, double) {
    TurnReply r;
    r.error = true;
    r.error_message = "http_error: HTTP 500: boom";
    return r;
  };
  ShellLoopRun run = RunShellLoopEpisode(config, "task", refused, *sandbox);
  REQUIRE(run.failed);
  CHECK(run.failed->status == GradeStatus::kEnvError);
  CHECK(run.failed->reason ==
        "the first request failed: http_error: HTTP 500: boom (zx-bench does not score the "
        "episode)");
  // A timeout on the first turn is scored: 0.
  const ModelTurn slow = [](const json&, double) {
    TurnReply r;
    r.error = true;
    r.timed_out = true;
    r.error_message = "total_timeout: request timed out";
    return r;
  };
  run = RunShellLoopEpisode(config, "task", slow, *sandbox);
  CHECK_FALSE(run.failed);
  CHECK(run.trace["errors"] ==
        json({"TURN_1_MODEL_ERROR: Error: total_timeout: request timed out"}));
  CHECK(run.trace["terminationReason"] == "timeout");
  // A setup command that fails: the evaluation fails, naming it.
  json broken = entry;
  broken["requirements"]["executionShell"]["setupCommands"] = {"echo nope >&2; exit 3"};
  run = RunShellLoopEpisode(ParseShellConfig(broken), "task", slow, *sandbox);
  REQUIRE(run.failed);
  CHECK(run.failed->reason == "Shell fixture setup failed: nope\n");
  // A stored trace that is not one: the grader says so.
  const Grader* grader = GraderRegistry::Builtin().Find("zxbench:cli_shell");
  Answer answer;
  answer.text = "not json";
  const Grade g = grader->Run(entry, answer, GradeContext{});
  CHECK(g.status == GradeStatus::kEnvError);
  CHECK(g.reason == "SHELL_TRACE_MISSING");
}

}  // namespace
}  // namespace evalrun::zx
