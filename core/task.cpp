#include "core/task.h"

namespace evalrun {

std::string SourceLocation::ToString() const {
  std::string out = file;
  if (line > 0) {
    out += ":" + std::to_string(line);
    if (column > 0) out += ":" + std::to_string(column);
  }
  return out;
}

double DifficultyWeight(const std::string& difficulty) {
  if (difficulty == "easy") return 1.0;
  if (difficulty == "medium") return 1.5;
  if (difficulty == "hard") return 2.0;
  if (difficulty == "adversarial") return 2.5;
  return 0.0;
}

}  // namespace evalrun
