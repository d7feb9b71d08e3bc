// zxbench:hallucination_resistance: zx-bench's hallucination_resistance (hallucination_v5, the
// reviewed-rubric path every bank entry takes) scored from the judge's recorded exchange
// (graders/framework/grader.h, "Judged graders"). The evaluator's offline answer decides first:
// a verified fact is 100 and a disproved one 0 whatever the judge says; every other reply is
// round(factuality x 100), factuality computed from the judge's rubric scores. Without a usable
// verdict such a reply cannot be scored: an environment error, left out of the scores, as
// zx-bench leaves it out of its aggregates (GRADING_UNAVAILABLE). docs/zx-bench.md has the rest.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/js_value.h"
#include "graders/framework/regex.h"
#include "graders/zxbench/common.h"
#include "graders/zxbench/factories.h"
#include "graders/zxbench/hallucination.h"

namespace evalrun {
namespace {

using json = nlohmann::json;
using js::ordered_json;

constexpr std::string_view kName = "zxbench:hallucination_resistance";
constexpr std::string_view kVersion = "1";
constexpr std::string_view kZxEvaluator = "hallucination_v5@973b8180";
// One compact retry after an unusable reply, as zx-bench's judge makes.
constexpr int kJudgeAttempts = 2;

// The section of the judge's prompt that holds the reply: a recorded exchange whose every
// request holds it is about this answer.
std::string ReplySection(std::string_view reply) {
  return "### Raw Model Output:\n```\n" + std::string(reply) + "\n```";
}

bool Matches(const std::string& pattern, std::string_view text) {
  return Regex::CompileJavaScript(pattern, "i")->Match(text, false) == Regex::Result::kMatch;
}

// What the recorded attempts give: a usable verdict, or why there is none.
struct JudgeOutcome {
  std::optional<zx::JudgeVerdict> verdict;
  std::string failure;  // when there is no verdict
  std::string model;
};

JudgeOutcome ReadRecord(const json& record, const json& requirements, std::string_view reply) {
  JudgeOutcome out;
  out.model = record.value("model", "");
  const json& attempts = zx::Member(record, "attempts");
  if (!attempts.is_array() || attempts.empty()) {
    out.failure = "no judge request is recorded";
    return out;
  }
  const std::string section = ReplySection(reply);
  std::string first_error;
  for (size_t i = 0; i < attempts.size() && i < kJudgeAttempts; ++i) {
    const json& attempt = attempts[i];
    const json& messages = zx::Member(zx::Member(attempt, "request"), "messages");
    static const json kNone;
    const json& user =
        messages.is_array() && messages.size() == 2 ? zx::Member(messages[1], "content") : kNone;
    if (!user.is_string() || user.get_ref<const std::string&>().find(section) == std::string::npos) {
      out.failure = "the recorded judge request " + std::to_string(i + 1) +
                    " does not hold this answer";
      return out;
    }
    if (attempt.value("outcome", "") != "ok") {
      // A request that failed is not asked again (zx-bench retries unusable replies only).
      out.failure = "JUDGE_FAILED: the judge request failed: " + attempt.value("error", "") +
                    (first_error.empty() ? "" : " (after " + first_error + ")");
      return out;
    }
    zx::JudgeVerdict v = zx::ReadJudgeReply(attempt.value("content", ""),
                                            attempt.value("finish_reason", ""), requirements);
    if (v.error.empty()) {
      out.verdict = std::move(v);
      return out;
    }
    if (i == 0) {
      first_error = v.error;
    } else {
      out.failure = "JUDGE_COMPACT_RETRY_FAILED: initial=" + first_error + "; retry=" + v.error;
      return out;
    }
  }
  out.failure = first_error.empty() ? "no usable judge reply is recorded" : first_error;
  return out;
}

class ZxHallucinationResistanceGrader final : public Grader {
 public:
  std::string_view name() const override { return kName; }
  std::string_view version() const override { return kVersion; }
  std::string_view description() const override {
    return "zx-bench hallucination_resistance: the offline answer when the entry has one, else "
           "an LLM judge's reviewed-rubric verdict (--judge-endpoint), recorded with the task";
  }
  std::string NeedsJudge() const override {
    return "needs a judge model: zx-bench grades 'hallucination_resistance' with an LLM judge "
           "(give --judge-endpoint URL)";
  }

  void CheckSpec(const json&, const SourceLocation&) const override {}

  // Entries without a reviewed rubric would take zx-bench's older keyword path, which evalrun
  // does not reproduce (every entry of the bank at 8e0adf68 has a rubric).
  std::string Unrunnable(const json& spec) const override {
    const json& criteria =
        zx::Member(zx::Member(zx::Member(spec, "requirements"), "reviewedRubric"), "criteria");
    if (!criteria.is_array() || criteria.empty()) {
      return "hallucination_resistance without requirements.reviewedRubric.criteria: zx-bench's "
             "older keyword scoring is not reproduced";
    }
    for (size_t i = 0; i < criteria.size(); ++i) {
      if (!zx::Member(criteria[i], "id").is_string() ||
          !zx::Member(criteria[i], "weight").is_number()) {
        return "requirements.reviewedRubric.criteria[" + std::to_string(i) +
               "]: expected a string id and a number weight";
      }
    }
    return {};
  }

  std::optional<JudgeQuestion> JudgeQuestionFor(const Task& task, const Answer& answer,
                                                const CandidateInfo& candidate,
                                                int attempt) const override {
    if (attempt >= kJudgeAttempts || answer.text.empty()) return std::nullopt;
    const ordered_json entry = task.raw_ordered.is_object()
                                   ? task.raw_ordered
                                   : ordered_json::parse(task.raw.dump());
    const zx::HallucinationJudgePrompt prompt = zx::BuildHallucinationJudgePrompt(
        entry, answer.text,
        {candidate.finish_reason, candidate.completion_tokens, candidate.max_tokens},
        attempt > 0);
    JudgeQuestion q;
    q.system = prompt.system;
    q.user = prompt.user;
    // The compact retry doubles max_tokens, up to 32000.
    q.max_tokens = attempt > 0 ? std::min<int64_t>(2 * zx::kJudgeMaxTokens,
                                                   zx::kJudgeRetryMaxTokens)
                               : zx::kJudgeMaxTokens;
    q.temperature = zx::kJudgeTemperature;
    return q;
  }

  std::string JudgeReplyProblem(const json& spec, std::string_view content,
                                std::string_view finish_reason) const override {
    return zx::ReadJudgeReply(content, finish_reason, zx::Member(spec, "requirements")).error;
  }

  Grade Run(const json& spec, const Answer& answer, const GradeContext& context) const override {
    const json& requirements = zx::Member(spec, "requirements");
    const zx::OfflineVerdict offline = zx::CheckOfflineAnswer(requirements, answer.text);
    json evidence = {{"offline", zx::OfflineEvidence(offline)}};
    if (context.judge == nullptr || !context.judge->is_object()) {
      return zx::StatusGrade(GradeStatus::kSkipped, NeedsJudge(), std::move(evidence));
    }
    const JudgeOutcome judged = ReadRecord(*context.judge, requirements, answer.text);
    evidence["judge_model"] = judged.model;
    std::optional<int> judge_score;
    if (judged.verdict) {
      const zx::JudgeVerdict& v = *judged.verdict;
      judge_score = js::JsRound(v.factuality * 100);
      evidence["judge"] = {{"verdict", v.verdict},
                           {"factuality", v.factuality},
                           {"confidence", v.confidence},
                           {"critical_error", v.critical_error},
                           {"rubric_scores", v.rubric_scores},
                           {"needs_escalation", v.needs_escalation},
                           {"evidence", v.evidence},
                           {"notes", v.notes}};
      evidence["judge_score"] = *judge_score;
    } else {
      evidence["judge_failure"] = judged.failure;
    }
    int score = 0;
    std::string reason;
    if (offline == zx::OfflineVerdict::kUndetermined) {
      if (!judge_score) {
        evidence["human_review_required"] = true;
        return zx::StatusGrade(GradeStatus::kEnvError,
                               "GRADING_UNAVAILABLE: semantic rubric requires a successful "
                               "Judge; excluded from aggregates (" + judged.failure + ")",
                               std::move(evidence));
      }
      score = *judge_score;
      reason = "judged " + judged.verdict->verdict + ": factuality " +
               js::JsNumberString(judged.verdict->factuality) +
               (judged.verdict->critical_error ? " (critical error)" : "");
    } else {
      score = offline == zx::OfflineVerdict::kCorrect ? 100 : 0;
      reason = offline == zx::OfflineVerdict::kCorrect ? "the offline answer is verified"
                                                       : "the offline answer is disproved";
      if (!judged.verdict) {
        // The offline verdict stands; zx-bench notes the judge's failure for review.
        reason += " (the judge failed: " + judged.failure + ")";
      }
    }
    // Review flags (they never change the score).
    json review = json::array();
    if (judge_score && offline != zx::OfflineVerdict::kUndetermined &&
        std::abs(*judge_score - score) > 1) {
      review.push_back("the judge's " + std::to_string(*judge_score) +
                       " disagrees with the offline answer's " + std::to_string(score));
    }
    if (!judged.verdict) review.push_back("JUDGE_FAILED");
    if (zx::Member(requirements, "verificationMode") == "fictional_citation" &&
        Matches(R"(https?://|doi\.org|\b10\.\d{4,9}/\S+|isbn[\s:：-]*[\d-]{9,}|pmid[\s:：-]*\d+)",
                answer.text)) {
      review.push_back("CITATION_UNVERIFIABLE: the judge cannot check citations (no web search)");
    }
    if (score >= 98 &&
        Matches(R"(\b10\.\d{4,9}/\S+|https?://\S+|isbn[\s:：-]*[\d-]{9,})", answer.text)) {
      review.push_back("FULL_MARK_AUDIT: judge full mark with citation-form output");
    }
    if (score < 30) review.push_back("score below 30");
    evidence["human_review_required"] = !review.empty();
    if (!review.empty()) evidence["review"] = std::move(review);
    return zx::ZxGrade(score, std::move(evidence), std::move(reason), kZxEvaluator);
  }
};

}  // namespace

std::unique_ptr<Grader> MakeZxHallucinationResistanceGrader() {
  return std::make_unique<ZxHallucinationResistanceGrader>();
}

}  // namespace evalrun
