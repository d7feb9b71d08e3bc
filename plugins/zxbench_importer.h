#pragma once
// The zx-bench bank importer (DESIGN.md section 6; the bank's facts are in docs/zx-bench.md):
// reads data/scenarios/benchmark.json, reproduces every scenarioHash byte-exactly, and maps the
// entries onto evalrun tasks, each runnable here or skipped with the reason.
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/task.h"

namespace evalrun {

inline constexpr const char* kZxBenchBankPath = "data/scenarios/benchmark.json";

// First 16 lowercase hex characters of SHA-256 over zx-bench's canonical rendering of the 35
// hashed fields of `entry`, in zx-bench's order. Throws Error only for strings that are not
// valid UTF-8 (nlohmann's parser never yields them).
std::string ZxScenarioHash(const nlohmann::json& entry);

// The exact bytes ZxScenarioHash hashes: `{"id":...,"dimension":...,...}` with the 35 fields in
// zx-bench's order, a missing field rendered `null`, goldVerifiedAt normalised
// (ZxNormalizeGoldVerifiedAt), and values written as zx-bench's canonicalize.ts writes them:
// JSON.stringify of an object rebuilt with sorted keys. JavaScript enumerates array-index keys
// ("0", "7", "42"; no leading zero, at most 2^32 - 2) first, in numeric order, whatever order
// they were inserted in, so nested objects put those keys first and the rest after in UTF-16
// order. Without such keys this equals CanonicalObjectInOrder over the same fields.
std::string ZxCanonicalScenario(const nlohmann::json& entry);

// goldVerifiedAt as zx-bench hashes it: `new Date(v).toISOString()` when `v` parses as a date.
// Handled: the ECMAScript date-time string format with a four-digit year — YYYY, YYYY-MM,
// YYYY-MM-DD (read as UTC), each optionally followed by THH:MM, THH:MM:SS or THH:MM:SS.f...
// with Z or ±HH:MM — giving "YYYY-MM-DDTHH:MM:SS.mmmZ" (fractions truncated to milliseconds, a
// day past the month's end rolls over as JavaScript does). Anything else, including a date-time
// without an offset (JavaScript reads it in the hashing machine's local time zone, which the
// hash cannot tell us), is returned unchanged. Never throws.
std::string ZxNormalizeGoldVerifiedAt(const std::string& value);

// Parses and verifies a bank. Errors (evalrun::Error, exit 2): not JSON (nlohmann's message and
// the byte offset); not a JSON array; no entries; an entry that is not an object, has no id, or
// repeats an id; an entry without scenarioHash; "<file>: entry '<id>' (index N): scenarioHash is
// <stored> but its content hashes to <computed>" for the first mismatch; and, when more than half
// of the entries mismatch, a refusal saying this bank version uses a hash evalrun cannot
// reproduce. An entry without a dimension, or with a difficulty other than easy, medium, hard
// or adversarial, is an error too.
//
// Each task keeps the raw entry (Task::raw) and the full SHA-256 of ZxCanonicalScenario
// (Task::hash; ShortHash() is the scenarioHash); Task::location is `file_label:LINE:COLUMN` of
// the entry's opening brace and Task::hash_location that of its "scenarioHash" key (1-based,
// columns in bytes). docs/zx-bench.md describes the mapping and the skip reasons.
Suite ImportZxBench(std::string_view bank_json, const std::string& file_label);

}  // namespace evalrun
