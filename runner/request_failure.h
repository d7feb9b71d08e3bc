#pragma once
// How `evalrun suite` treats a failed request (docs/serving.md): whether the endpoint is away
// (the whole run pauses and probes; no retry is used up), the failure may pass (the task's
// retries with backoff), or it will not change with time (the task fails at once with the
// server's message). Pure, so every rule is tested on its own.
#include <string>
#include <string_view>

#include "core/request_record.h"

namespace evalrun {

enum class FailureKind {
  kNone,         // the request succeeded
  kUnavailable,  // connection refused/reset, DNS, HTTP 429/502/503/504, a "loading" answer
  kTransient,    // a dropped stream, an error event inside a 200 stream, other 5xx, 408, one
                 // idle timeout
  kTimeout,      // the request ran out of time (total timeout; a second idle timeout)
  kPermanent,    // 4xx other than 408/429, a 500 whose message will not change with time,
                 // unreadable JSON
  kCancelled,    // evalrun cancelled it (interrupt)
};

const char* FailureKindName(FailureKind kind);  // "none", "unavailable", "transient", ...

// The kind of `record`'s failure. An idle timeout is kTransient (retried once) unless
// `idle_timeouts_before` > 0, then kTimeout.
FailureKind ClassifyFailure(const RequestRecord& record, int idle_timeouts_before = 0);

// A 500 (or other) message that names a server setting, not a passing state:
// "Cannot use tools with stream", "tools param requires --jinja flag", "... exceeds the
// available context size ...". Case-insensitive.
bool IsPermanentServerMessage(std::string_view message);

// True for the message llama.cpp's tool-call code gives a streamed request with `tools`
// ("Cannot use tools with stream", llama.cpp before mid-2025).
bool RefusesStreamedTools(std::string_view message);

// The fix for a permanent error that stopped a run, in one sentence ("" when evalrun knows
// none): "start llama-server with --jinja (the default in newer builds: drop --no-jinja), or
// run with --tool-format hermes (or qwen_xml) so that evalrun sends no `tools` field".
std::string PermanentErrorFix(std::string_view message, int http_status);

}  // namespace evalrun
