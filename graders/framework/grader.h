#pragma once
// The grader interface (DESIGN.md section 8, STYLE.md 6): what every grader, native or zx-bench,
// is built on. A grader is a pure, thread-safe function of (task grader spec, extracted answer,
// context) to a Grade; its spec is checked once when the suite loads. Graders are versioned: the
// version goes into the grade. The registry of built-in graders is graders/grader.h.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/grade.h"
#include "core/task.h"
#include "graders/framework/answer.h"

namespace evalrun {

class Sandbox;  // plugins/sandbox.h

// What a grader may need beyond the output: files the task references (hidden tests) and the
// sandbox for running code. Either may be absent; a grader that needs one returns kSkipped.
struct GradeContext {
  // Bytes of a file of the task's suite by its path (TaskFile::path); nullopt if unavailable.
  std::function<std::optional<std::string>(const std::string& path)> read_file;
  const Sandbox* sandbox = nullptr;
  bool unsafe_no_sandbox = false;  // the user accepted running code without isolation
  // The task's `agent` mapping (evalrun agent tasks: the world, the repository); null for
  // others. Set by GradeOutput.
  const nlohmann::json* agent = nullptr;
  // Judged graders: the judge's exchange recorded with the task (a JudgeRecord as JSON, see
  // below); null when no judge was asked.
  const nlohmann::json* judge = nullptr;
  // The user let code that needs the network reach it (--sandbox-network; NeedsNetwork below).
  bool network = false;
};

// ---- Judged graders (zx-bench's hallucination_resistance) ---------------------------------------
// A judged grader scores an answer with the verdict of an LLM judge. The runner asks the judge
// (runner/judge.h) with the question the grader writes, stores every request and reply with the
// task (its transcript's "judge" member), and the grader then scores from that record alone: a
// pure function of (spec, answer, record), so `evalrun verify` recomputes the grade from the
// recorded verdict without asking anyone.
//
// The record's shape (docs/bundle-format.md):
//   {"endpoint": URL, "model": judge model id,
//    "attempts": [{"request": {"model", "messages": [{role, content}...], "max_tokens",
//                              "temperature"},
//                  "outcome": "ok" | a request outcome, "error": text, "http_status": n,
//                  "content": the judge's answer channel, "finish_reason": text,
//                  "latency_ms": n, "usage": {...} or null}, ...]}

// What the grader knows of the candidate's reply beyond its text, for the judge's prompt.
struct CandidateInfo {
  std::string finish_reason;       // as the server sent it
  int64_t completion_tokens = -1;  // -1: not reported
  int64_t max_tokens = -1;         // -1: none was sent
};

// One request to the judge, as the grader wants it sent.
struct JudgeQuestion {
  std::string system;
  std::string user;
  int64_t max_tokens = -1;
  double temperature = 0;
};

class Grader {
 public:
  virtual ~Grader() = default;
  virtual std::string_view name() const = 0;         // "answer_line"
  virtual std::string_view version() const = 0;      // "1"
  virtual std::string_view description() const = 0; // one line for `evalrun graders`
  // Throws Error naming `where` (and the spec key) when the spec is malformed.
  virtual void CheckSpec(const nlohmann::json& spec, const SourceLocation& where) const = 0;
  // Grades an extracted answer. Never throws for any output; must finish for any output
  // (bounded work: regex match limits, size caps).
  virtual Grade Run(const nlohmann::json& spec, const Answer& answer,
                    const GradeContext& context) const = 0;
  // Why this task cannot be graded on this host whatever the model answers ("" when it can),
  // from the spec and the host alone (an execution contract evalrun does not run, a runtime not
  // installed). Asked once when the suite loads: `evalrun validate` and the run then skip the
  // same tasks, and the model is not asked for an answer nobody can grade.
  virtual std::string Unrunnable(const nlohmann::json& spec) const {
    (void)spec;
    return {};
  }
  // Agent graders grade an episode record (the JSON document an agent task stores as its
  // output: a world's calls and final state, a repository's diff), not a model's answer: they
  // get it verbatim in Answer::text, with no think-block extraction and no empty-answer rule.
  virtual bool grades_episode() const { return false; }
  // Checks the task's `agent` mapping (null when the task has none) when the suite loads; an
  // agent grader refuses a task without the agent kind it grades. Throws Error naming `where`.
  virtual void CheckAgent(const nlohmann::json& agent, const SourceLocation& where) const {
    (void)agent;
    (void)where;
  }
  // Judged graders (above): why a task cannot be graded when the run has no judge ("" for a
  // grader that needs none). Such tasks are skipped with it (MarkJudgedTasks, graders/grader.h).
  virtual std::string NeedsJudge() const { return {}; }
  // Why this task's code needs the network, which the sandbox opens only when the user lets it
  // (--sandbox-network, GradeContext::network): zx-bench's project entries whose tests install
  // packages. "" when it needs none. Without it such tasks are skipped with this reason
  // (MarkNetworkTasks, graders/grader.h).
  virtual std::string NeedsNetwork(const nlohmann::json& spec) const {
    (void)spec;
    return {};
  }
  // The judge's question about `answer` to `task`: attempt 0 first, attempt k > 0 after k
  // unusable replies. nullopt when no (further) question is asked: the answer needs no judge,
  // or the attempts are used up.
  virtual std::optional<JudgeQuestion> JudgeQuestionFor(const Task& task, const Answer& answer,
                                                        const CandidateInfo& candidate,
                                                        int attempt) const {
    (void)task;
    (void)answer;
    (void)candidate;
    (void)attempt;
    return std::nullopt;
  }
  // Why a judge's reply cannot be used ("" when it can): the runner asks again
  // (JudgeQuestionFor with the next attempt) after an unusable reply.
  virtual std::string JudgeReplyProblem(const nlohmann::json& spec, std::string_view content,
                                        std::string_view finish_reason) const {
    (void)spec;
    (void)content;
    (void)finish_reason;
    return {};
  }
};

// Helpers for graders' CheckSpec (graders/framework/grader.cpp). Errors read
// "<where>: <grader> grader: key '<key>': <problem>"; unknown keys get "did you mean".
[[noreturn]] void ThrowSpecError(const SourceLocation& where, std::string_view grader,
                                 std::string_view key, std::string_view problem);
// Rejects keys of `spec` other than "type" and `allowed`.
void CheckSpecKeys(const nlohmann::json& spec, const SourceLocation& where,
                   std::string_view grader, const std::vector<std::string>& allowed);
// The one-line name of a JSON value's type for messages: "a number", "a string", ...
std::string JsonTypeName(const nlohmann::json& value);

// What a task's grader receives as its spec: the task's `grader` mapping, or for zx-bench tasks
// the whole bank entry (Task::raw), which holds zx-bench's scoring and requirements.
const nlohmann::json& GraderSpec(const Task& task);

}  // namespace evalrun
