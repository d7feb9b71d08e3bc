// The grader framework: spec-checking helpers every grader's CheckSpec uses, and what a task's
// grader receives as its spec.
#include "graders/framework/grader.h"

#include <algorithm>

#include "core/error.h"

namespace evalrun {

void ThrowSpecError(const SourceLocation& where, std::string_view grader, std::string_view key,
                    std::string_view problem) {
  std::string message = where.ToString();
  if (!message.empty()) message += ": ";
  message += std::string(grader) + " grader: ";
  if (!key.empty()) message += "key '" + std::string(key) + "': ";
  message += problem;
  throw Error(message);
}

void CheckSpecKeys(const nlohmann::json& spec, const SourceLocation& where, std::string_view grader,
                   const std::vector<std::string>& allowed) {
  if (!spec.is_object()) ThrowSpecError(where, grader, "", "the spec must be a mapping");
  for (const auto& [key, value] : spec.items()) {
    if (key == "type" || std::find(allowed.begin(), allowed.end(), key) != allowed.end()) {
      continue;
    }
    std::string problem = "unknown key";
    const std::string suggestion = ClosestMatch(key, allowed);
    if (!suggestion.empty()) problem += ", did you mean '" + suggestion + "'?";
    ThrowSpecError(where, grader, key, problem);
  }
}

std::string JsonTypeName(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::null:
      return "null";
    case nlohmann::json::value_t::boolean:
      return "a boolean";
    case nlohmann::json::value_t::string:
      return "a string";
    case nlohmann::json::value_t::array:
      return "a list";
    case nlohmann::json::value_t::object:
      return "a mapping";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
    case nlohmann::json::value_t::number_float:
      return "a number";
    default:
      return "a value";
  }
}

const nlohmann::json& GraderSpec(const Task& task) {
  // zx-bench's graders read their gold and contract from the whole bank entry.
  return task.format == "zxbench" ? task.raw : task.grader;
}

}  // namespace evalrun
