#pragma once
// zx-bench's interactive shell investigation (cli_command entries with
// requirements.executionShell; docs/upstream/zx-bench-execution-shell.md): the entry's
// configuration, the text protocol the model speaks (`SHELL <command>` lines, one `ANSWER:`
// line), and the score cliCommand.ts gives the trace. The loop that drives the model and runs
// the commands in a sandboxed /workspace is runner/agent/zx_shell_loop.h; the grader
// zxbench:cli_shell scores the trace it stores as the task's output.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/grade.h"
#include "core/js_value.h"

namespace evalrun::zx {

// requirements.executionShell (shellLoop.ts ShellConfig).
struct ShellConfig {
  nlohmann::json files = nlohmann::json::array();  // [{path, content, executable?}]
  std::string answer;                 // String(answer).trim()
  int max_turns = 0;                  // clamped to 1..10
  std::string image = "python:3.12-alpine";
  int min_commands = 1;
  int max_commands_per_turn = 4;      // clamped to 1..8
  std::vector<std::string> setup_commands;
};

bool HasExecutionShell(const nlohmann::json& entry);

// Throws Error naming the field when the entry's executionShell is malformed (zx-bench's
// session would throw there).
ShellConfig ParseShellConfig(const nlohmann::json& entry);

// The loop's system prompt (three lines, K = max_commands_per_turn).
std::string ShellSystemPrompt(const ShellConfig& config);

// One reply as shellLoop.ts reads it: the commands of the lines that start `SHELL` and white
// space at column 0 (the rest trimmed, empty ones dropped), and the first `ANSWER:` line's rest,
// trimmed ("" when none).
struct ShellReply {
  std::vector<std::string> commands;
  std::string answer;
};
ShellReply ParseShellReply(std::string_view raw);

// One executed command as the transcript shows it to the model on later turns.
std::string ShellTranscriptEntry(int turn, const std::string& command,
                                 const std::optional<int>& exit_code, const std::string& stdout_text,
                                 const std::string& stderr_text);

// The score of a trace ({answer, events: [{command, stdout, stderr, exitCode, timedOut,
// outputLimitExceeded}], errors, terminationReason, ...}): three critical criteria (the answer,
// the exploration, the protocol), 0 for an empty answer, else round(passes / 3 x 100).
Grade ScoreShellTrace(const ShellConfig& config, const js::ordered_json& trace);

}  // namespace evalrun::zx
