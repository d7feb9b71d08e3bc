#pragma once
// CSV as zx-bench's structuredFormats.py reads it: Python's
// csv.reader(io.StringIO(text, newline=''), strict=True) with the excel dialect, then (ParseCsv)
// one object per data row keyed by a unique header row.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace evalrun::zx {

// The rows and fields csv.reader yields (quoted fields keep their line breaks; a blank line is
// an empty row, as csv.reader yields []), or nullopt with *error set to CPython's message
// ("unexpected end of data", "',' expected after '\"'").
std::optional<std::vector<std::vector<std::string>>> ReadCsv(std::string_view text,
                                                             std::string* error);

// structuredFormats.py, fmt == 'csv': an array of objects of strings, or nullopt with *error
// ("CSV: <reader message>", "Missing or duplicate CSV headers", "CSV row width differs from
// header (row N)").
std::optional<nlohmann::json> ParseCsv(std::string_view text, std::string* error);

}  // namespace evalrun::zx
