#pragma once
// A model's output and its grade: plain data shared by graders/ (which make grades), runner/
// (which schedules) and results/ (which stores and verifies them). DESIGN.md section 8.
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace evalrun {

enum class GradeStatus {
  kGraded,           // the output was judged; score and passed mean something
  kNoAnswer,         // nothing parseable (or an unclosed <think>: reasoning, never an answer)
  kBudgetExhausted,  // cut by max_tokens before any answer
  kTimeout,          // the code under test or the request ran out of time
  kModelError,       // the model's side failed in a way that is its fault
  kEnvError,         // the endpoint or this machine failed: never counted against the model
  kSkipped,          // cannot run here (reason says why): never passed
};

const char* GradeStatusName(GradeStatus status);  // "graded", "no_answer", ...
std::optional<GradeStatus> ParseGradeStatus(std::string_view name);

struct Grade {
  double score = 0;      // in [0, 1]
  bool passed = false;
  GradeStatus status = GradeStatus::kGraded;
  std::string reason;    // one line for the user
  nlohmann::json evidence = nlohmann::json::object();  // structured: what was compared
  std::string grader;          // grader name
  std::string grader_version;  // e.g. "answer_line/1"
};

// What the model produced for one task, as recorded.
struct Output {
  std::string content;        // the answer channel
  std::string reasoning;      // reasoning_content / reasoning, kept apart
  std::string finish_reason;  // "length" means cut by max_tokens
};

nlohmann::json ToJson(const Grade& grade);

}  // namespace evalrun
