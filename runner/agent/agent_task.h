#pragma once
// Agent tasks inside `evalrun suite` (DESIGN.md section 9): which tasks are agent tasks, and one
// episode of a task run against the endpoint, recorded and graded. Four kinds:
//
//   zx-bench execution worlds   entries with requirements.executionWorld: zx-bench's own text
//                               protocol (runner/agent/zx_world_loop.h), so scores compare with zx-bench
//   zx-bench agent loops        entries with requirements.agentLoop: its retail loop and engine
//                               (runner/agent/zx_agent_loop.h), the output zx-bench's trace
//   evalrun world tasks         `agent: {kind: world, world: {...}}`: the same worlds driven
//                               through OpenAI tool calls (runner/agent/agent_loop.h, world_tools.h)
//   repository coding tasks     `agent: {kind: repo, ...}`: a sandboxed workspace of a pinned
//                               repository, graded by its tests (runner/agent/repo_tools.h)
//
// Whatever the kind, the task's output is its episode record (the JSON document its grader
// reads: a world's calls and final state, a repository's diff), graded by GradeOutput like any
// output, so `evalrun verify` re-grades it from the bundle; the transcript holds every turn.
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/grade.h"
#include "core/request_record.h"
#include "core/task.h"
#include "graders/grader.h"
#include "plugins/openai_backend.h"
#include "plugins/tool_call_text.h"

namespace evalrun {

// A zx-bench entry with an execution world or an agent loop, or an evalrun task with an
// `agent.kind`.
bool IsAgentTask(const Task& task);

// Sends one request of the episode and returns its final attempt as measured (the scheduler's
// retries and pauses happen inside). A record whose outcome is not ok ends the episode.
using AgentSend = std::function<RequestRecord(const ChatRequest& request, double remaining_s)>;

struct AgentTaskOptions {
  ToolCallFormat text_format = ToolCallFormat::kAuto;  // tool calls written as text (--tool-format)
  // True once the episode's result will be thrown away (Ctrl-C, the endpoint failed for good):
  // grading that would run tests is then skipped. Null: never.
  std::function<bool()> abandoned;
};

struct AgentTaskOutcome {
  std::string output;         // the episode record, compact JSON: what the grader reads
  std::string reasoning;      // the last turn's reasoning
  std::string finish_reason;  // the last turn's
  nlohmann::json transcript;  // every turn (docs/agent.md)
  Grade grade;
};

// Runs one episode of `task`. `base` carries the model, max_tokens and sampling (and the task's
// messages); `context` the suite's files and the sandbox. A task whose kind cannot run here
// (no sandbox, no python3, no git checkout) is kSkipped with the reason before any request.
// Never throws for what the model, the tools or the tests do.
AgentTaskOutcome RunAgentTask(const Task& task, const ChatRequest& base, const AgentSend& send,
                              const GradeContext& context, const AgentTaskOptions& options = {});

}  // namespace evalrun
