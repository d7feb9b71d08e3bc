// The grader registry, spec checking at load time, and GradeOutput's status rules.
#include "graders/grader.h"

#include <algorithm>
#include <cassert>

#include "core/error.h"
#include "graders/builtin.h"

namespace evalrun {

GraderRegistry::GraderRegistry() {
  // Every built-in grader, once. A factory returns nullptr while its grader is unfinished; it is
  // then simply absent (unknown at load time) rather than a stub that grades wrongly.
  std::unique_ptr<Grader> (*const factories[])() = {
      MakeAnswerLineGrader,        MakeExactGrader,
      MakeNumericGrader,           MakeRegexGrader,
      MakeContainsGrader,          MakeExcludesGrader,
      MakeJsonFieldsGrader,        MakeJsonSchemaGrader,
      MakeCodeTestsGrader,         MakeCommandGrader,
      MakeZxExactAnswerLineGrader, MakeZxJsonAtomicFieldsGrader,
      MakeZxInstructionChecklistGrader, MakeZxStructuredContractGrader,
      MakeZxCodeRepairGrader,      MakeZxCliCommandGrader,      MakeZxCliShellGrader,
      MakeZxProjectRepairGrader,
      MakeRepoTestsGrader,
      MakeZxToolCallTraceGrader,   MakeZxAgentTraceGrader,
      MakeZxCanaryAuthorityGrader, MakeZxCanaryAuthorityTextGrader,
      MakeZxSchemaComplianceGrader, MakeZxAgentLoopTraceGrader, MakeZxHallucinationResistanceGrader,
      MakeWorldGrader,
  };
  for (auto factory : factories) {
    std::unique_ptr<Grader> grader = factory();
    if (!grader) continue;
    assert(Find(grader->name()) == nullptr && "duplicate grader name");
    graders_.push_back(std::move(grader));
  }
  std::sort(graders_.begin(), graders_.end(),
            [](const auto& a, const auto& b) { return a->name() < b->name(); });
}

const GraderRegistry& GraderRegistry::Builtin() {
  static const GraderRegistry registry;  // thread-safe initialisation (C++11 magic statics)
  return registry;
}

const Grader* GraderRegistry::Find(std::string_view name) const {
  for (const auto& grader : graders_) {
    if (grader->name() == name) return grader.get();
  }
  return nullptr;
}

std::vector<const Grader*> GraderRegistry::All() const {
  std::vector<const Grader*> all;
  for (const auto& grader : graders_) all.push_back(grader.get());
  return all;
}

std::vector<std::string> GraderRegistry::Names() const {
  std::vector<std::string> names;
  for (const auto& grader : graders_) names.emplace_back(grader->name());
  return names;
}

GraderVersions NativeGraderVersions() {
  GraderVersions versions;
  for (const Grader* grader : GraderRegistry::Builtin().All()) {
    if (grader->name().find(':') == std::string_view::npos) {
      versions.emplace(std::string(grader->name()), std::string(grader->version()));
    }
  }
  return versions;
}

void CheckGraderSpecs(const Suite& suite) {
  const GraderRegistry& registry = GraderRegistry::Builtin();
  for (const Task& task : suite.tasks) {
    if (!task.skip_reason.empty()) continue;
    std::string where = task.location.ToString();
    if (!where.empty()) where += ": ";
    const nlohmann::json& spec = task.grader;
    if (!spec.is_object() || !spec.contains("type") || !spec["type"].is_string()) {
      throw Error(where + "task '" + task.id + "': grader needs a string 'type'");
    }
    const std::string type = spec["type"].get<std::string>();
    const Grader* grader = registry.Find(type);
    if (grader == nullptr) {
      std::string message = where + "unknown grader '" + type + "'";
      const std::string suggestion = ClosestMatch(type, registry.Names());
      if (!suggestion.empty()) message += ", did you mean '" + suggestion + "'?";
      throw Error(message + " (evalrun graders lists them)");
    }
    grader->CheckSpec(GraderSpec(task), task.location);
    if (task.format == "evalrun") {
      if (task.agent.is_object() && !grader->grades_episode()) {
        throw Error(where + "task '" + task.id + "': an agent task (agent.kind '" +
                    task.agent.value("kind", "") + "') is graded by its episode: grader 'world' "
                    "or 'repo_tests', not '" + type + "'");
      }
      grader->CheckAgent(task.agent, task.location);
    }
  }
}

void MarkUnrunnableTasks(Suite& suite) {
  const GraderRegistry& registry = GraderRegistry::Builtin();
  for (Task& task : suite.tasks) {
    if (!task.skip_reason.empty()) continue;
    const Grader* grader = registry.Find(task.grader.value("type", ""));
    if (grader == nullptr) continue;
    task.skip_reason = grader->Unrunnable(GraderSpec(task));
  }
}

std::string JudgeSkipReason(const Task& task) {
  if (!task.skip_reason.empty()) return {};
  const Grader* grader = GraderRegistry::Builtin().Find(task.grader.value("type", ""));
  return grader == nullptr ? std::string() : grader->NeedsJudge();
}

void MarkJudgedTasks(Suite& suite) {
  for (Task& task : suite.tasks) {
    std::string reason = JudgeSkipReason(task);
    if (!reason.empty()) task.skip_reason = std::move(reason);
  }
}

std::string NetworkSkipReason(const Task& task) {
  if (!task.skip_reason.empty()) return {};
  const Grader* grader = GraderRegistry::Builtin().Find(task.grader.value("type", ""));
  return grader == nullptr ? std::string() : grader->NeedsNetwork(GraderSpec(task));
}

void MarkNetworkTasks(Suite& suite) {
  for (Task& task : suite.tasks) {
    std::string reason = NetworkSkipReason(task);
    if (!reason.empty()) task.skip_reason = std::move(reason);
  }
}

Grade GradeOutput(const Task& task, const Output& output, const GradeContext& context) {
  Grade grade;
  grade.status = GradeStatus::kSkipped;
  const nlohmann::json& spec = task.grader;
  const std::string type = spec.is_object() && spec.contains("type") && spec["type"].is_string()
                               ? spec["type"].get<std::string>()
                               : std::string();
  grade.grader = type;
  const Grader* grader = GraderRegistry::Builtin().Find(type);
  if (grader != nullptr) {
    grade.grader_version = std::string(grader->name()) + "/" + std::string(grader->version());
  }
  if (!task.skip_reason.empty()) {
    grade.reason = task.skip_reason;
    return grade;
  }
  if (grader == nullptr) {
    grade.reason = "unknown grader '" + type + "'";
    return grade;
  }
  GradeContext with_agent = context;
  if (task.agent.is_object()) with_agent.agent = &task.agent;
  if (grader->grades_episode()) {
    Answer episode;
    episode.text = output.content;
    Grade result = grader->Run(GraderSpec(task), episode, with_agent);
    result.grader = grade.grader;
    result.grader_version = grade.grader_version;
    if (result.status != GradeStatus::kGraded) result.passed = false;
    result.score = std::clamp(result.score, 0.0, 1.0);
    return result;
  }
  const Answer answer = ExtractAnswer(output);
  grade.status = GradeStatus::kNoAnswer;
  if (answer.unclosed_think) {
    grade.reason = "reasoning never closed (<think> without </think>): no answer";
    return grade;
  }
  if (answer.empty()) {
    if (answer.truncated) {
      grade.status = GradeStatus::kBudgetExhausted;
      grade.reason = "cut by max_tokens before any answer";
    } else {
      grade.reason = "empty answer";
    }
    return grade;
  }
  Grade result = grader->Run(GraderSpec(task), answer, with_agent);
  result.grader = grade.grader;
  result.grader_version = grade.grader_version;
  if (result.status != GradeStatus::kGraded) result.passed = false;
  result.score = std::clamp(result.score, 0.0, 1.0);
  return result;
}

}  // namespace evalrun
