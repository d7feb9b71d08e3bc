#include "core/grade.h"

namespace evalrun {

namespace {
constexpr struct {
  GradeStatus status;
  const char* name;
} kStatusNames[] = {
    {GradeStatus::kGraded, "graded"},
    {GradeStatus::kNoAnswer, "no_answer"},
    {GradeStatus::kBudgetExhausted, "budget_exhausted"},
    {GradeStatus::kTimeout, "timeout"},
    {GradeStatus::kModelError, "model_error"},
    {GradeStatus::kEnvError, "env_error"},
    {GradeStatus::kSkipped, "skipped"},
};
}  // namespace

const char* GradeStatusName(GradeStatus status) {
  for (const auto& entry : kStatusNames) {
    if (entry.status == status) return entry.name;
  }
  return "graded";
}

std::optional<GradeStatus> ParseGradeStatus(std::string_view name) {
  for (const auto& entry : kStatusNames) {
    if (name == entry.name) return entry.status;
  }
  return std::nullopt;
}

nlohmann::json ToJson(const Grade& grade) {
  return {{"score", grade.score},       {"passed", grade.passed},
          {"status", GradeStatusName(grade.status)}, {"reason", grade.reason},
          {"evidence", grade.evidence}, {"grader", grade.grader},
          {"grader_version", grade.grader_version}};
}

}  // namespace evalrun
