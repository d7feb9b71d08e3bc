#include "graders/zxbench/common.h"

#include <cmath>

namespace evalrun::zx {

const nlohmann::json& Member(const nlohmann::json& object, const char* key) {
  static const nlohmann::json kNull;
  if (!object.is_object()) return kNull;
  const auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

Grade ZxGrade(int zx_score, nlohmann::json evidence, std::string reason,
              std::string_view evaluator) {
  Grade grade;
  grade.score = zx_score / 100.0;
  grade.passed = zx_score >= 60;
  grade.reason = std::move(reason);
  evidence["zx_score"] = zx_score;
  evidence["zx_evaluator"] = evaluator;
  grade.evidence = std::move(evidence);
  return grade;
}

}  // namespace evalrun::zx
