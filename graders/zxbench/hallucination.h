#pragma once
// zx-bench's hallucination_resistance (hallucination_v5 with a reviewed rubric), the pieces the
// grader and its tests share: the deterministic pre-check on `offlineAnswer`
// (reviewedHallucination.ts), the judge's prompt (judge/prompts.ts, buildJudgeUserPrompt) and
// the reading of the judge's reply (judge/index.ts). docs/zx-bench.md says where evalrun
// differs; docs/upstream/zx-bench-judge.md holds the notes on zx-bench's code.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/js_value.h"

namespace evalrun::zx {

// What the offline answer says of a reply.
enum class OfflineVerdict {
  kUndetermined,  // SEMANTIC_JUDGE_REQUIRED: only the judge can score it
  kCorrect,       // DETERMINISTIC_FACT: 100 whatever the judge says
  kWrong,         // DETERMINISTIC_VETO: 0 whatever the judge says
};

// reviewedHallucination's verdict for `reply` from requirements.offlineAnswer (kind fact,
// choice or quantity); an empty reply (after normalising) is kWrong, an entry without an
// offline answer kUndetermined.
OfflineVerdict CheckOfflineAnswer(const nlohmann::json& requirements, std::string_view reply);

// The evaluator's evidence line for a verdict ("SEMANTIC_JUDGE_REQUIRED: ...").
std::string OfflineEvidence(OfflineVerdict verdict);

// The candidate's output metadata the judge is shown.
struct CandidateMetadata {
  std::string finish_reason;       // as the server sent it ("" none)
  int64_t completion_tokens = -1;  // -1 unknown
  int64_t max_tokens = -1;         // -1 none sent
};

// The judge's two messages for `reply` to the bank entry `entry` (its key order is the bank's:
// the requirements are shown as JSON.stringify(requirements, null, 2) writes them).
// `compact_retry` adds the retry block after an unusable first reply.
struct HallucinationJudgePrompt {
  std::string system;
  std::string user;
};
HallucinationJudgePrompt BuildHallucinationJudgePrompt(const js::ordered_json& entry,
                                                       std::string_view reply,
                                                       const CandidateMetadata& candidate,
                                                       bool compact_retry);

// The judge's request settings: max_tokens 16000 (doubled on the retry, at most 32000) and
// temperature 0.1, zx-bench's defaults for a judge model without its own.
constexpr int64_t kJudgeMaxTokens = 16000;
constexpr int64_t kJudgeRetryMaxTokens = 32000;
constexpr double kJudgeTemperature = 0.1;

// A judge's reply read as zx-bench reads it, with the rubric's arithmetic applied.
struct JudgeVerdict {
  std::string error;            // "" when usable; else zx-bench's error text
                                // ("JUDGE_INVALID_JSON: ...")
  std::string verdict;          // correct | incorrect | partial | ambiguous (after the rubric)
  double factuality = 0;        // from the rubric: 0 on a critical error, else sum of weights
  double confidence = 0;
  bool critical_error = false;
  bool needs_escalation = false;
  nlohmann::json rubric_scores;  // as the judge sent them
  nlohmann::json evidence = nlohmann::json::array();  // the judge's, plus the RUBRIC_SCORES line
  nlohmann::json notes = nlohmann::json::array();
};
JudgeVerdict ReadJudgeReply(std::string_view content, std::string_view finish_reason,
                            const nlohmann::json& requirements);

// JSON.stringify(value, null, 2).
std::string JsStringifyIndented(const js::ordered_json& value);

}  // namespace evalrun::zx
