#pragma once
// What every report of a run says the same way (run_report, speed_report, compare): JSON fields as
// display text, the GPUs the environment probe saw, the suite's name. Plain text; each printer
// escapes it for its format.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/run_data.h"

namespace evalrun::report_text {

// Text from outside (model and GPU names, reasons, server messages) as one line of valid UTF-8
// that XML accepts: invalid bytes and U+FFFE/U+FFFF become U+FFFD, control characters spaces.
std::string CleanText(std::string_view raw);
// The one escaping function for Markdown, in every report: CleanText, then a backslash before
// every character that could end a table cell, open an HTML tag a forum would swallow
// ("<think>"), or start a link, emphasis or code span.
std::string MdText(std::string_view raw);

// What a cell shows where nothing was measured.
inline constexpr std::string_view kAbsent = "—";

// A figure with a fixed number of decimals (fmt, never the locale), or kAbsent.
std::string Fixed(std::optional<double> value, int decimals);
// A speed table's prefill cell: the rate, or "cached N of M" for a test whose requests were
// prompt-cache hits (no rate, the median cached and prompt tokens), else kAbsent.
std::string PrefillCell(std::optional<double> prefill_tps, std::optional<double> cached_tokens,
                        std::optional<double> prompt_tokens);

// object[key], or nullptr when `object` is not an object or has no such key.
const nlohmann::json* Child(const nlohmann::json& object, std::string_view key);
// A field as display text: strings as they are, numbers and booleans as JSON writes them,
// anything else (absent, null, objects) as "".
std::string JsonText(const nlohmann::json& object, std::string_view key);
std::string Join(const std::vector<std::string>& parts, std::string_view separator);
// The environment probe's GPUs (plugins/env_probe.cpp: nvidia.gpus and rocm.gpus) counted by
// name in order of first appearance, "unnamed GPU" for one without a name.
std::vector<std::pair<std::string, int>> GpuCounts(const nlohmann::json& environment);
// "zx-bench@8e0adf68a1b2", or "smoke (unpinned)" for a suite read from a bare path.
std::string SuiteText(const RunInfo& info);

}  // namespace evalrun::report_text
