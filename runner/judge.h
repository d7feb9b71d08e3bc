#pragma once
// Asking an LLM judge (`--judge-endpoint`) for judged graders (graders/framework/grader.h,
// "Judged graders"): zx-bench's hallucination_resistance. The grader writes each question; this
// sends it to the judge's OpenAI-compatible endpoint as zx-bench's judge does (one streamed chat
// completion, no retry of a failed request), records every request and reply, and asks again
// only when the grader finds a reply unusable and has a further question. The record is stored
// with the task (its transcript's "judge" member) and the grader scores from it alone.
#include <string>

#include <nlohmann/json.hpp>

#include "core/task.h"
#include "graders/framework/answer.h"
#include "graders/framework/grader.h"

namespace evalrun {

struct JudgeEndpoint {
  std::string endpoint;           // base URL, normalised
  std::string model;              // the judge's model id as served
  double connect_timeout_s = 10;
  double idle_timeout_s = 180;    // zx-bench: max(30 s, min(timeout, 180 s))
  double total_timeout_s = 300;   // zx-bench's default judge timeout
};

// The judge at `url` (a base URL, normalised) with `model` ("" -> the server's first model).
// Throws Error naming the URL when the server cannot be reached or serves no model.
JudgeEndpoint ConnectJudge(const std::string& url, const std::string& model);

// The judge's exchange about `answer` to `task` (the record's shape is in
// graders/framework/grader.h); null when the grader asks no question for this answer. With
// `replay` (a recorded record's "attempts", `evalrun verify --rejudge`), attempt k sends the
// recorded attempt k's request again, with the judge's model in place of the recorded one; an
// attempt beyond those recorded is the grader's question, as in a run.
nlohmann::json AskJudge(const JudgeEndpoint& judge, const Grader& grader, const Task& task,
                        const Answer& answer, const CandidateInfo& candidate,
                        const nlohmann::json* replay = nullptr);

// The judge as recorded in the run's settings: {"endpoint": URL, "model": id}.
nlohmann::json JudgeSettings(const JudgeEndpoint& judge);

}  // namespace evalrun
