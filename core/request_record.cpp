#include "core/request_record.h"

namespace evalrun {

const char* OutcomeName(RequestOutcome outcome) {
  switch (outcome) {
    case RequestOutcome::kOk: return "ok";
    case RequestOutcome::kConnectFailed: return "connect_failed";
    case RequestOutcome::kHttpError: return "http_error";
    case RequestOutcome::kStreamError: return "stream_error";
    case RequestOutcome::kDropped: return "dropped";
    case RequestOutcome::kIdleTimeout: return "idle_timeout";
    case RequestOutcome::kTotalTimeout: return "total_timeout";
    case RequestOutcome::kMalformed: return "malformed";
    case RequestOutcome::kCancelled: return "cancelled";
  }
  return "unknown";
}

std::optional<RequestOutcome> ParseOutcome(std::string_view name) {
  for (int i = 0; i <= static_cast<int>(RequestOutcome::kCancelled); ++i) {
    const auto outcome = static_cast<RequestOutcome>(i);
    if (name == OutcomeName(outcome)) return outcome;
  }
  return std::nullopt;
}

}  // namespace evalrun
