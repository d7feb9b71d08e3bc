#include "runner/request_failure.h"

#include <algorithm>
#include <cctype>

namespace evalrun {
namespace {

bool ContainsNoCase(std::string_view text, std::string_view word) {
  if (word.empty()) return true;
  const auto it = std::search(text.begin(), text.end(), word.begin(), word.end(),
                              [](char a, char b) {
                                return std::tolower(static_cast<unsigned char>(a)) ==
                                       std::tolower(static_cast<unsigned char>(b));
                              });
  return it != text.end();
}

// Servers that are starting or swapping models say so, whatever status they use for it:
// llama.cpp answers 503 {"error":{"code":503,"message":"Loading model"}}, llama-swap and
// others answer while a model loads.
bool SaysLoading(std::string_view message) {
  return ContainsNoCase(message, "loading model") || ContainsNoCase(message, "model is loading") ||
         ContainsNoCase(message, "server is starting") ||
         ContainsNoCase(message, "swapping model");
}

}  // namespace

const char* FailureKindName(FailureKind kind) {
  switch (kind) {
    case FailureKind::kNone: return "none";
    case FailureKind::kUnavailable: return "unavailable";
    case FailureKind::kTransient: return "transient";
    case FailureKind::kTimeout: return "timeout";
    case FailureKind::kPermanent: return "permanent";
    case FailureKind::kCancelled: return "cancelled";
  }
  return "permanent";
}

bool RefusesStreamedTools(std::string_view message) {
  return ContainsNoCase(message, "cannot use tools with stream");
}

bool IsPermanentServerMessage(std::string_view message) {
  return RefusesStreamedTools(message) || ContainsNoCase(message, "requires --jinja") ||
         ContainsNoCase(message, "exceeds the available context size") ||
         ContainsNoCase(message, "maximum context length") ||
         ContainsNoCase(message, "context length exceeded") ||
         ContainsNoCase(message, "does not support tools");
}

FailureKind ClassifyFailure(const RequestRecord& r, int idle_timeouts_before) {
  switch (r.outcome) {
    case RequestOutcome::kOk: return FailureKind::kNone;
    case RequestOutcome::kConnectFailed: return FailureKind::kUnavailable;
    case RequestOutcome::kDropped:
      return FailureKind::kTransient;
    case RequestOutcome::kStreamError:
      if (SaysLoading(r.error_message)) return FailureKind::kUnavailable;
      return IsPermanentServerMessage(r.error_message) ? FailureKind::kPermanent
                                                       : FailureKind::kTransient;
    case RequestOutcome::kHttpError: {
      const int s = r.http_status;
      if (s == 429 || s == 502 || s == 503 || s == 504) return FailureKind::kUnavailable;
      if (SaysLoading(r.error_message)) return FailureKind::kUnavailable;
      if (s == 408) return FailureKind::kTransient;
      if (s >= 500) {
        return IsPermanentServerMessage(r.error_message) ? FailureKind::kPermanent
                                                         : FailureKind::kTransient;
      }
      return FailureKind::kPermanent;
    }
    case RequestOutcome::kIdleTimeout:
      return idle_timeouts_before > 0 ? FailureKind::kTimeout : FailureKind::kTransient;
    case RequestOutcome::kTotalTimeout: return FailureKind::kTimeout;
    case RequestOutcome::kMalformed: return FailureKind::kPermanent;
    case RequestOutcome::kCancelled: return FailureKind::kCancelled;
  }
  return FailureKind::kPermanent;
}

std::string PermanentErrorFix(std::string_view message, int http_status) {
  if (ContainsNoCase(message, "requires --jinja")) {
    return "start llama-server with --jinja (the default in newer builds: drop --no-jinja), or "
           "run with --tool-format hermes (or qwen_xml) so that evalrun sends no `tools` field";
  }
  if (RefusesStreamedTools(message)) {
    return "run with --tool-format hermes (or qwen_xml) so that evalrun sends no `tools` field, "
           "or update llama-server";
  }
  if (ContainsNoCase(message, "context")) {
    return "give the server a larger context (llama-server --ctx-size, vLLM --max-model-len), "
           "or lower --max-tokens";
  }
  if (http_status == 401 || http_status == 403) {
    return "check the endpoint's API key and permissions";
  }
  if (http_status == 404) {
    return "check --endpoint (evalrun appends /v1/chat/completions) and --model";
  }
  return "";
}

}  // namespace evalrun
