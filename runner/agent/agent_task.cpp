// Agent tasks inside `evalrun suite` (runner/agent/agent_task.h): one episode per task, of the kind
// the task names, its output the episode record and its grade GradeOutput's.
#include "runner/agent/agent_task.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>

#include "core/error.h"
#include "plugins/sandbox.h"
#include "runner/agent/world_runtime.h"
#include "runner/agent/agent_loop.h"
#include "runner/agent/repo_tools.h"
#include "runner/agent/world_tools.h"
#include "graders/zxbench/retail_world.h"
#include "runner/agent/zx_agent_loop.h"
#include "runner/agent/zx_shell_loop.h"
#include "runner/agent/zx_world_loop.h"
#include "tasks/repo_workspace.h"

namespace evalrun {
namespace {

using nlohmann::json;
using zx::ordered_json;

// What a native world task's model is told besides the task's own messages (when the task
// brings no system message of its own).
constexpr const char* kWorldSystemPrompt =
    "You act for the user through the tools you are given. Call tools to look things up and "
    "to make changes; do only what the request asks, and nothing it forbids. When you are done, "
    "reply to the user in plain text without calling a tool: that reply is your final answer.";

// What a repository task's model is told (when the task brings no system message).
constexpr const char* kRepoSystemPrompt =
    "You are working in a git repository checked out at /work (the current directory). Use the "
    "tools to inspect the code, run commands and edit files until the problem described by the "
    "user is fixed. The network is not available. Change the code, not the tests. When you are "
    "done, call `submit`.";

std::string AgentKind(const Task& task) {
  if (task.agent.is_object() && task.agent.contains("kind") && task.agent["kind"].is_string()) {
    return task.agent["kind"].get<std::string>();
  }
  return "";
}

AgentTaskOutcome Skipped(const Task& task, const std::string& reason) {
  AgentTaskOutcome out;
  out.grade.status = GradeStatus::kSkipped;
  out.grade.reason = reason;
  out.grade.grader = task.grader.value("type", "");
  out.grade.grader_version = task.grader_version;
  return out;
}

// The task's messages with `system` first, unless the task has a system message itself.
json WithSystemPrompt(const json& messages, const char* system) {
  for (const json& m : messages) {
    if (m.is_object() && m.value("role", "") == "system") return messages;
  }
  json out = json::array({{{"role", "system"}, {"content", system}}});
  for (const json& m : messages) out.push_back(m);
  return out;
}

Grade GradeEpisode(const Task& task, const std::string& record, const GradeContext& context) {
  return GradeOutput(task, Output{record, "", ""}, context);
}

// The bank entry with its keys in the file's order (what zx-bench's JSON.stringify shows).
ordered_json OrderedEntry(const Task& task) {
  return task.raw_ordered.is_object() ? task.raw_ordered : ordered_json::parse(task.raw.dump());
}

// An entry whose world the loader accepted but the runtime cannot read: evalrun's failure, not
// the model's.
AgentTaskOutcome ConfigError(const Task& task, const Error& e) {
  AgentTaskOutcome out = Skipped(task, e.what());
  out.grade.status = GradeStatus::kEnvError;
  return out;
}

// The model seam of zx-bench's text-protocol loops: one request through `send`, its failure
// told as zx-bench's caller tells it.
zx::ModelTurn TextProtocolModel(const ChatRequest& base, const AgentSend& send,
                                std::string* last_reasoning) {
  return [&base, &send, last_reasoning](const json& messages, double remaining_s) {
    ChatRequest request = base;
    request.messages = messages;
    zx::TurnReply reply;
    reply.record = send(request, remaining_s);
    const RequestRecord& r = reply.record;
    reply.content = r.content;
    reply.reasoning = r.reasoning;
    reply.finish_reason = r.finish_reason;
    if (last_reasoning != nullptr) *last_reasoning = r.reasoning;
    if (!r.ok()) {
      reply.error = true;
      reply.timed_out =
          r.outcome == RequestOutcome::kIdleTimeout || r.outcome == RequestOutcome::kTotalTimeout;
      reply.error_message = std::string(OutcomeName(r.outcome)) +
                            (r.error_message.empty() ? "" : ": " + r.error_message);
    }
    return reply;
  };
}

// A zx-bench execution world: zx-bench's own text protocol, so the score compares with its.
AgentTaskOutcome RunZxWorld(const Task& task, const ChatRequest& base, const AgentSend& send,
                            const GradeContext& context) {
  zx::WorldConfig config;
  try {
    config = zx::ParseWorldConfig(OrderedEntry(task));
  } catch (const Error& e) {
    return ConfigError(task, e);
  }
  std::string last_reasoning;
  const zx::ModelTurn model = TextProtocolModel(base, send, &last_reasoning);
  const std::string prompt = task.raw.value("promptTemplate", "");
  const std::string evaluator = zx::WorldEvaluatorName(task.raw);
  zx::WorldLoopResult loop = zx::RunWorldLoop(config, prompt, model, context.sandbox, evaluator);
  AgentTaskOutcome out;
  out.transcript = std::move(loop.transcript);
  out.reasoning = last_reasoning;
  out.finish_reason = loop.episode.last_finish_reason;
  // Not run (no sandbox), or zx-bench would have thrown at the first turn: the loop's grade.
  if (loop.grade.status == GradeStatus::kSkipped || loop.grade.status == GradeStatus::kEnvError) {
    out.grade = loop.grade;
    out.grade.grader = task.grader.value("type", "");
    out.grade.grader_version = task.grader_version;
    if (!loop.episode.events.empty() || loop.episode.has_turns) {
      out.output = zx::EpisodeToJson(loop.episode).dump();
    }
    return out;
  }
  out.output = zx::EpisodeToJson(loop.episode).dump();
  out.grade = GradeEpisode(task, out.output, context);
  return out;
}

// What a zx-bench text-protocol loop (the agent loop, the shell investigation) gives: its
// transcript, and the grade of its stored trace, or the loop's own grade when zx-bench's
// evaluation would have failed there.
template <typename LoopRun>
AgentTaskOutcome LoopOutcome(const Task& task, LoopRun& loop, const GradeContext& context) {
  AgentTaskOutcome out;
  out.transcript = std::move(loop.transcript);
  out.reasoning = loop.last_reasoning;
  out.finish_reason = loop.last_finish_reason;
  if (loop.failed) {
    out.grade = *loop.failed;
    out.grade.grader = task.grader.value("type", "");
    out.grade.grader_version = task.grader_version;
    return out;
  }
  out.output = loop.trace.dump();
  out.grade = GradeEpisode(task, out.output, context);
  return out;
}

// A zx-bench agent loop (requirements.agentLoop): zx-bench's retail loop and text protocol,
// the world run by evalrun's own engine (as zx-bench's docker backend runs the same engine).
AgentTaskOutcome RunZxAgentLoop(const Task& task, const ChatRequest& base, const AgentSend& send) {
  zx::AgentLoopConfig config;
  try {
    config = zx::ParseAgentLoopConfig(OrderedEntry(task));
  } catch (const Error& e) {
    return ConfigError(task, e);
  }
  zx::AgentLoopRun loop = zx::RunAgentLoopEpisode(
      config, task.raw.value("promptTemplate", ""), TextProtocolModel(base, send, nullptr));
  return LoopOutcome(task, loop, GradeContext{});
}

// zx-bench's shell investigation (requirements.executionShell): its text protocol, each SHELL
// command run in a sandboxed /workspace with a stand-in for the entry's image.
AgentTaskOutcome RunZxShellLoop(const Task& task, const ChatRequest& base, const AgentSend& send,
                                const GradeContext& context) {
  zx::ShellConfig config;
  try {
    config = zx::ParseShellConfig(task.raw);
  } catch (const Error& e) {
    return ConfigError(task, e);
  }
  if (context.sandbox == nullptr) return Skipped(task, "no sandbox configured");
  zx::ShellLoopRun loop =
      zx::RunShellLoopEpisode(config, task.raw.value("promptTemplate", ""),
                              TextProtocolModel(base, send, nullptr), *context.sandbox);
  return LoopOutcome(task, loop, context);
}

// An evalrun world task: the world's tools as OpenAI functions.
AgentTaskOutcome RunNativeWorld(const Task& task, const ChatRequest& base, const AgentSend& send,
                                const GradeContext& context, const AgentTaskOptions& options) {
  if (auto why = zx::WorldUnavailable(context.sandbox)) return Skipped(task, *why);
  const ordered_json entry = {
      {"id", task.id},
      {"requirements", {{"executionWorld", ordered_json::parse(task.agent["world"].dump())}}}};
  zx::WorldConfig config;
  try {
    config = zx::ParseWorldConfig(entry);
  } catch (const Error& e) {
    AgentTaskOutcome out = Skipped(task, e.what());
    out.grade.status = GradeStatus::kEnvError;
    return out;
  }
  WorldTools tools(config, *context.sandbox);
  ChatRequest request = base;
  request.messages = WithSystemPrompt(base.messages, kWorldSystemPrompt);
  AgentLoopOptions loop_options;
  loop_options.text_format = options.text_format;
  loop_options.text_reply_completes = true;
  loop_options.limits.max_steps = std::max(1, task.agent.value("max_turns", config.max_turns));
  if (task.agent.contains("wall_s") && task.agent["wall_s"].is_number()) {
    loop_options.limits.wall_s = task.agent["wall_s"].get<double>();
  }
  const AgentModel model = [&](const ChatRequest& r, double remaining_s) {
    return send(r, remaining_s);
  };
  AgentLoopResult loop = RunAgentLoop(request, tools, model, loop_options);
  AgentTaskOutcome out;
  out.transcript = std::move(loop.transcript);
  if (!loop.requests.empty()) {
    out.reasoning = loop.requests.back().reasoning;
    out.finish_reason = loop.requests.back().finish_reason;
  }
  out.output = zx::EpisodeToJson(WorldEpisodeOf(tools, loop, loop_options.limits.wall_s)).dump();
  out.grade = GradeEpisode(task, out.output, context);
  return out;
}

// A repository coding task: the agent works in a sandboxed workspace; its diff is graded by the
// repository's tests in a fresh copy (graders/native/repo_tests.cpp).
AgentTaskOutcome RunRepo(const Task& task, const ChatRequest& base, const AgentSend& send,
                         const GradeContext& context, const AgentTaskOptions& options) {
  if (context.sandbox == nullptr) return Skipped(task, "no sandbox configured");
  if (auto why = context.sandbox->Unavailable()) return Skipped(task, *why);
  RepoTask repo;
  std::unique_ptr<RepoWorkspace> workspace;
  try {
    repo = ParseRepoTask(task.agent);
    workspace = RepoWorkspace::Create(repo, context.read_file);
  } catch (const Error& e) {
    // The task was checked at load: failing here is the machine's (a clone, a disk), not the
    // model's: env_error, left out of the score and shown in coverage.
    AgentTaskOutcome out = Skipped(task, std::string("cannot set up the repository: ") + e.what());
    out.grade.status = GradeStatus::kEnvError;
    return out;
  }
  RepoTools tools(repo, *workspace, *context.sandbox);
  ChatRequest request = base;
  request.messages = WithSystemPrompt(base.messages, kRepoSystemPrompt);
  AgentLoopOptions loop_options;
  loop_options.text_format = options.text_format;
  loop_options.limits.max_steps = repo.limits.steps;
  loop_options.limits.max_total_tokens = repo.limits.tokens;
  loop_options.limits.wall_s = repo.limits.wall_s;
  // The tools cut their output to the task's limit with their own note; the loop's cut is only a
  // backstop, with room for that note, so nothing is cut twice.
  loop_options.limits.max_observation_bytes = repo.limits.observation_bytes + 256;
  const AgentModel model = [&](const ChatRequest& r, double remaining_s) {
    return send(r, remaining_s);
  };
  AgentLoopResult loop = RunAgentLoop(request, tools, model, loop_options);
  AgentTaskOutcome out;
  if (!loop.requests.empty()) {
    out.reasoning = loop.requests.back().reasoning;
    out.finish_reason = loop.requests.back().finish_reason;
  }
  if (options.abandoned && options.abandoned()) {
    // Not graded: running the tests would only delay the stop.
    out.transcript = std::move(loop.transcript);
    out.grade = Skipped(task, "the episode was abandoned").grade;
    return out;
  }
  json record;
  try {
    record = tools.Episode(loop.termination_reason);
  } catch (const Error& e) {
    out.transcript = std::move(loop.transcript);
    out.grade = Skipped(task, std::string("cannot read the agent's diff: ") + e.what()).grade;
    out.grade.status = GradeStatus::kEnvError;
    return out;
  }
  out.transcript = std::move(loop.transcript);
  out.output = record.dump(-1, ' ', false, json::error_handler_t::replace);
  out.grade = GradeEpisode(task, out.output, context);
  return out;
}

}  // namespace

bool IsAgentTask(const Task& task) {
  if (task.format == "zxbench") {
    return zx::HasExecutionWorld(task.raw) || zx::HasAgentLoop(task.raw) ||
           zx::HasExecutionShell(task.raw);
  }
  return !AgentKind(task).empty();
}

AgentTaskOutcome RunAgentTask(const Task& task, const ChatRequest& base, const AgentSend& send,
                              const GradeContext& context, const AgentTaskOptions& options) {
  if (!task.skip_reason.empty()) return Skipped(task, task.skip_reason);
  try {
    if (task.format == "zxbench") {
      if (zx::HasExecutionShell(task.raw)) return RunZxShellLoop(task, base, send, context);
      if (!zx::HasExecutionWorld(task.raw)) return RunZxAgentLoop(task, base, send);
      return RunZxWorld(task, base, send, context);
    }
    const std::string kind = AgentKind(task);
    if (kind == "world") return RunNativeWorld(task, base, send, context, options);
    if (kind == "repo") return RunRepo(task, base, send, context, options);
    return Skipped(task, "agent kind '" + kind + "' is not known to this evalrun");
  } catch (const std::exception& e) {
    // Loading checked the task, so this is evalrun's own failure: the task is not scored, and
    // the run goes on.
    AgentTaskOutcome out = Skipped(task, std::string("evalrun failed running the episode: ") +
                                             e.what());
    out.grade.status = GradeStatus::kEnvError;
    return out;
  }
}

}  // namespace evalrun
