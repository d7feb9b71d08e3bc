#pragma once
// zx-bench's interactive shell investigation (cli_command entries with
// requirements.executionShell): shellLoop.ts's runShellLoop (Little-Star888/zx-bench at a5f6a19;
// docs/upstream/zx-bench-execution-shell.md). One working copy at /workspace for the whole
// episode, seeded with the entry's files and its setup commands; each turn is one independent
// chat call, system and user, the task followed by every command run so far with its exit code
// and output; the model writes `SHELL <command>` lines, which run in the sandbox with a stand-in
// for the entry's image (graders/zxbench/image_stand_in.h), and one `ANSWER: <answer>` line,
// which ends the episode. The output is zx-bench's trace (what zxbench:cli_shell scores); every
// turn is also recorded (messages, reply, request timing, commands) in a transcript.
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/grade.h"
#include "core/js_value.h"
#include "graders/zxbench/cli_shell.h"
#include "plugins/sandbox.h"
#include "runner/agent/zx_world_loop.h"

namespace evalrun::zx {

struct ShellLoopRun {
  // zx-bench's ShellTrace: {imageId, turns: [{turn, assistantRaw, events, finishReason}],
  // events: [{turn, command, stdout, stderr, exitCode, timedOut, outputLimitExceeded}], answer,
  // errors, elapsedMs, terminationReason, hardTimeoutMs}. Null when the episode could not run.
  js::ordered_json trace;
  // Set when zx-bench's evaluation fails instead of scoring (the workspace or a setup command
  // failed, the first request failed for another reason than time): kEnvError, or kSkipped when
  // this machine cannot run the image's stand-in.
  std::optional<Grade> failed;
  // {"schema_version": 1, "system", "turns": [{"turn", "messages", "assistant_raw", "reasoning",
  // "finish_reason", "request", "commands", "model_ms", "tools_ms"}], "errors", "wall_ms",
  // "model_ms", "outside_model_ms"}.
  nlohmann::json transcript;
  std::string last_reasoning;
  std::string last_finish_reason;
};

// Runs one episode of `config` for the entry's promptTemplate `task` (the episode's budget is
// `hard_timeout_s`, zx-bench's 600 s default). Never throws for what the model does.
ShellLoopRun RunShellLoopEpisode(const ShellConfig& config, std::string_view task,
                                 const ModelTurn& model, const Sandbox& sandbox,
                                 double hard_timeout_s = 600);

}  // namespace evalrun::zx
