#pragma once
// Run-fatal errors (STYLE.md 4): one exception type, caught once in main(), carrying the exit
// code of DESIGN.md section 4. Per-item failures (an HTTP 500 on one request) are data, never
// exceptions; programmer errors are assertions.
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace evalrun {

enum class ExitCode : int {
  kOk = 0,              // done and everything graded / measured
  kSomeFailed = 1,      // done, but some tasks or requests ended in error
  kUsage = 2,           // usage or configuration error: nothing was run
  kVerifyFailed = 3,    // verification failed
  kInterrupted = 130,   // interrupted, state saved
};

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, ExitCode code = ExitCode::kUsage)
      : std::runtime_error(message), code_(code) {}
  ExitCode code() const { return code_; }

 private:
  ExitCode code_;
};

// The candidate closest to `word` by edit distance, or "" when none is close enough to be a
// plausible typo. Used for "did you mean" hints.
std::string ClosestMatch(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace evalrun
