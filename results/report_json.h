#pragma once
// `evalrun report RUN_ID -o json`: the report's figures (results/run_report.h ScoreRun) as JSON,
// for scripts.
#include <nlohmann/json.hpp>

#include "results/run_report.h"

namespace evalrun {

// {"overall": {"score", "ci95": [low, high], "standard_error"} or null, "passed",
// "scored_tasks", "dimensions": [...], "coverage": {...}, "tokens": {...}, "speed": {...}}.
nlohmann::json RunScoresToJson(const RunScores& scores);

}  // namespace evalrun
