#pragma once
// Formatters for a SpeedResult (STYLE.md 7: a record and its formatters are separate). All four
// render the same numbers: json is the full record (schema_version, environment, per-test
// summaries with raw samples, per-request records); md fits a forum post; csv and jsonl have one
// row per test with the summary figures flattened as <metric>_<stat>.
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/speed_result.h"

namespace evalrun {

enum class SpeedFormat { kMarkdown, kJson, kCsv, kJsonl };
std::optional<SpeedFormat> ParseSpeedFormat(std::string_view name);  // "md", "json", "csv", "jsonl"
// The names ParseSpeedFormat accepts, in registry order, for help text and error messages.
std::vector<std::string_view> SpeedFormatNames();

// The full record as JSON (schema_version kSpeedSchemaVersion). Each record also carries its
// "round" (SpeedTest::record_round; null when the record has none), and its send_offset_ns is
// relative to the earliest t_send of that round. Never throws on odd input.
nlohmann::json SpeedResultToJson(const SpeedResult& result);
// SpeedResultToJson's document written piece by piece to `sink`, never held whole: the
// per-event arrays (text_event_ns, itl_ms samples) are written number by number, so a
// 200,000-token request costs its samples, not a DOM of them. One line per test header, per
// metric and per record; parsing it gives exactly SpeedResultToJson(result).
void WriteSpeedJson(const SpeedResult& result, const std::function<void(std::string_view)>& sink);
// RenderSpeed, written to `sink` (json streamed by WriteSpeedJson, the others at once).
void WriteSpeed(const SpeedResult& result, SpeedFormat format,
                const std::function<void(std::string_view)>& sink);

// The result in `format`, ending with a newline. md picks the llama-bench or uni-bench layout
// when result.preset names it and every test is of a kind that layout shows; otherwise the
// generic table. Never throws on invalid UTF-8 from a server (it is replaced with U+FFFD).
std::string RenderSpeed(const SpeedResult& result, SpeedFormat format);

// Serialise JSON for output: invalid UTF-8 from a server is replaced, never thrown on; numbers
// are written in the C locale by nlohmann. indent < 0 gives one line.
std::string DumpJson(const nlohmann::json& json, int indent = 2);

}  // namespace evalrun
