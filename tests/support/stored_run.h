#pragma once
// What a test reads back from a results database a run wrote: the one run in it, and the
// messages of its events of one kind.
#include <string>
#include <vector>

#include "results/store.h"
#include "tests/support/catch.h"

namespace evalrun::testing {

// The id of the database's only run (the test fails when there is not exactly one).
inline std::string OnlyRun(const std::string& db) {
  ResultStore store(db);
  const auto runs = store.ListRuns();
  REQUIRE(runs.size() == 1);
  return runs.front().id;
}

// The messages of the run's events of `kind` ("pause", "retry", ...), in order.
inline std::vector<std::string> Events(const RunData& run, const std::string& kind) {
  std::vector<std::string> out;
  for (const auto& e : run.events) {
    if (e.kind == kind) out.push_back(e.message);
  }
  return out;
}

}  // namespace evalrun::testing
