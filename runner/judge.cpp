// Asking an LLM judge (runner/judge.h).
#include "runner/judge.h"

#include <optional>
#include <utility>

#include "core/clock.h"
#include "core/error.h"
#include "core/request_record.h"
#include "plugins/http_client.h"
#include "plugins/openai_backend.h"
#include "plugins/server_probe.h"

namespace evalrun {
namespace {

using nlohmann::json;

// zx-bench's judge request: model, the two messages, max_tokens, streamed with usage, and the
// temperature; nothing else.
json JudgeBody(const json& request, bool stream_options) {
  json body = {{"model", request.value("model", "")},
               {"messages", request.value("messages", json::array())},
               {"max_tokens", request.value("max_tokens", json())},
               {"stream", true}};
  if (stream_options) body["stream_options"] = {{"include_usage", true}};
  body["temperature"] = request.value("temperature", json());
  return body;
}

RequestRecord Send(const JudgeEndpoint& judge, const json& body) {
  RequestRecord record;
  record.label = "judge";
  ChatStreamReader reader(record);
  StreamingClient client(1);
  HttpRequest http =
      MakeChatHttpRequest(judge.endpoint, body, judge.idle_timeout_s, judge.total_timeout_s);
  http.connect_timeout_s = judge.connect_timeout_s;
  client.Add(std::move(http), &reader);
  client.Run();
  return record;
}

// One request sent to the judge, as an attempt of the record.
json SendJudgeRequest(const JudgeEndpoint& judge, const json& request) {
  json sent = request;
  sent["model"] = judge.model;
  const TimePoint t0 = Clock::now();
  RequestRecord record = Send(judge, JudgeBody(sent, true));
  if (record.http_status == 400 && record.error_message.find("stream_options") != std::string::npos) {
    // zx-bench sends the same request again without stream_options when a server refuses them.
    record = Send(judge, JudgeBody(sent, false));
  }
  json attempt = {{"request", sent},
                  {"outcome", OutcomeName(record.outcome)},
                  {"error", record.error_message},
                  {"http_status", record.http_status},
                  {"content", record.content},
                  {"finish_reason", record.finish_reason},
                  {"latency_ms", NanosToMs(NanosBetween(t0, Clock::now()))},
                  {"usage", record.usage.raw}};
  if (!record.reasoning.empty()) attempt["reasoning"] = record.reasoning;
  return attempt;
}

}  // namespace

JudgeEndpoint ConnectJudge(const std::string& url, const std::string& model) {
  JudgeEndpoint judge;
  judge.endpoint = url;
  HttpRequest ping;
  ping.method = "GET";
  ping.url = judge.endpoint + "/v1/models";
  ping.connect_timeout_s = judge.connect_timeout_s;
  ping.total_timeout_s = 15;
  const HttpResponse answer = Fetch(ping);
  if (answer.status == 0) {
    throw Error("--judge-endpoint " + judge.endpoint + ": cannot reach the judge (" +
                (answer.error.empty() ? std::string("no answer") : answer.error) + ")");
  }
  judge.model = model;
  if (judge.model.empty()) {
    judge.model = DetectServer(judge.endpoint, Fetch).model;
    if (judge.model.empty()) {
      throw Error("--judge-endpoint " + judge.endpoint +
                  ": the judge serves no model in /v1/models; name one with --judge-model");
    }
  }
  return judge;
}

json AskJudge(const JudgeEndpoint& judge, const Grader& grader, const Task& task,
              const Answer& answer, const CandidateInfo& candidate, const json* replay) {
  json attempts = json::array();
  for (int attempt = 0;; ++attempt) {
    const size_t k = static_cast<size_t>(attempt);
    json request;
    if (replay != nullptr && replay->is_array() && k < replay->size() &&
        (*replay)[k].contains("request")) {
      request = (*replay)[k]["request"];
    } else {
      const std::optional<JudgeQuestion> question =
          grader.JudgeQuestionFor(task, answer, candidate, attempt);
      if (!question) break;
      request = {{"messages",
                  json::array({{{"role", "system"}, {"content", question->system}},
                               {{"role", "user"}, {"content", question->user}}})},
                 {"max_tokens", question->max_tokens},
                 {"temperature", question->temperature}};
    }
    json sent = SendJudgeRequest(judge, request);
    const bool ok = sent["outcome"] == "ok";
    const std::string problem =
        ok ? grader.JudgeReplyProblem(GraderSpec(task), sent["content"].get<std::string>(),
                                      sent["finish_reason"].get<std::string>())
           : std::string();
    attempts.push_back(std::move(sent));
    // A failed request is not sent again; a usable reply ends the exchange.
    if (!ok || problem.empty()) break;
  }
  if (attempts.empty()) return nullptr;
  return {{"endpoint", judge.endpoint}, {"model", judge.model}, {"attempts", attempts}};
}

json JudgeSettings(const JudgeEndpoint& judge) {
  return {{"endpoint", judge.endpoint}, {"model", judge.model}};
}

}  // namespace evalrun
