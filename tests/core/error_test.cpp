#include "core/error.h"

#include "tests/support/catch.h"

using evalrun::ClosestMatch;

TEST_CASE("did you mean: one edit per three characters, swaps count once", "[error]") {
  const std::vector<std::string> words = {"answer_line", "exact", "numeric", "speed", "mine"};
  CHECK(ClosestMatch("answerline", words) == "answer_line");
  CHECK(ClosestMatch("spead", words) == "speed");
  CHECK(ClosestMatch("mien", words) == "mine");      // a swap of neighbours is one edit
  CHECK(ClosestMatch("EXACT", words) == "exact");    // case does not count
  CHECK(ClosestMatch("xml", {"md", "json"}).empty()); // too far to be a typo
  CHECK(ClosestMatch("", words).empty());
}

TEST_CASE("errors carry their exit code", "[error]") {
  const evalrun::Error usage("bad flag");
  CHECK(usage.code() == evalrun::ExitCode::kUsage);
  const evalrun::Error failed("write failed", evalrun::ExitCode::kSomeFailed);
  CHECK(static_cast<int>(failed.code()) == 1);
  CHECK(std::string(failed.what()) == "write failed");
}
