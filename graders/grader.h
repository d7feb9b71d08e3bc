#pragma once
// The registry of built-in graders and grading one output (DESIGN.md section 8): what the rest of
// evalrun calls. The grader interface is graders/framework/grader.h; evalrun's own graders are in
// graders/native/, the zx-bench ports in graders/zxbench/, and this registry holds them all.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/grade.h"
#include "core/task.h"
#include "graders/framework/grader.h"

namespace evalrun {

// The built-in graders, one table, registered in one constructor; duplicates are a programmer
// error.
class GraderRegistry {
 public:
  static const GraderRegistry& Builtin();
  const Grader* Find(std::string_view name) const;
  std::vector<const Grader*> All() const;  // sorted by name
  std::vector<std::string> Names() const;

 private:
  GraderRegistry();
  std::vector<std::unique_ptr<Grader>> graders_;
};

// The native graders' names and versions (not the zxbench:* ones, which only zx-bench entries
// use): the table the YAML loader checks grader types against and hashes versions from.
GraderVersions NativeGraderVersions();

// Checks every task's grader spec against the registry; unknown grader names get "did you mean"
// ("<file:line:col>: unknown grader 'answerline', did you mean 'answer_line'? (evalrun graders
// lists them)"). Tasks with a skip_reason are left alone.
void CheckGraderSpecs(const Suite& suite);

// Gives every task without a skip_reason its grader's Unrunnable reason, if any (after
// CheckGraderSpecs).
void MarkUnrunnableTasks(Suite& suite);

// Judged tasks (graders/framework/grader.h): the reason a task is skipped when the run has no
// judge ("" when its grader needs none or it is skipped already), and every such task of a
// suite marked with it (a run without --judge-endpoint, `evalrun validate` without it).
std::string JudgeSkipReason(const Task& task);
void MarkJudgedTasks(Suite& suite);

// Tasks whose code needs the network (Grader::NeedsNetwork): the reason such a task is skipped
// when the run keeps the sandbox offline ("" when it needs none or is skipped already), and
// every such task of a suite marked with it (a run without --sandbox-network, `evalrun
// validate` without it).
std::string NetworkSkipReason(const Task& task);
void MarkNetworkTasks(Suite& suite);

// Grades one output of one task: extraction once for all graders (graders/framework/answer.h), the status
// rules (unclosed <think> -> no_answer; cut by max_tokens before any answer -> budget_exhausted),
// then the task's grader. Fills grade.grader and grade.grader_version.
Grade GradeOutput(const Task& task, const Output& output, const GradeContext& context);

}  // namespace evalrun
