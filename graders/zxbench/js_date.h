#pragma once
// JavaScript's Date.parse as V8 (Node) computes it, for graders that test whether a string is a
// date the way zx-bench's TypeScript does (`!Number.isNaN(Date.parse(s))`).
//
// V8 first reads an ES5 date-time string ([+-yy]yyyy[-MM[-DD]][THH:mm[:ss[.sss]][Z|±hh:mm]],
// with V8's extensions: any number of fraction digits, ±hhmm) and hands what is left to its
// legacy parser, which is Safari-compatible and permissive: words before the first number are
// ignored, parenthesised text is skipped, month names are matched on their first three letters,
// `am`/`pm`, `UT`/`UTC`/`GMT`/`Z` and the US zone names (EST, PDT, ...) are understood, and
// numbers are placed as month, day and year by V8's own rules (two-digit years: 0-49 are 20xx,
// 50-99 19xx). The result must also fall within ECMAScript's time range (±8.64e15 ms).
//
// Written from the structure of V8's src/date/dateparser{.h,.cc,-inl.h} and ParseDateTimeString
// (builtins-date.cc), read for understanding. One difference: a date without a zone is local
// time in JavaScript; here it is taken as UTC (so the value of such a string is off by the zone
// offset, and whether it is NaN can differ only within a day of the ends of the time range).
//
// Pure and thread-safe.
#include <optional>
#include <string_view>

namespace evalrun::zx {

// Date.parse(s) in milliseconds since the epoch, or nullopt where JavaScript gives NaN. `s` is
// UTF-8 (read as JavaScript reads the UTF-16 string: a NUL ends it, as in V8).
std::optional<double> JsDateParse(std::string_view s);

}  // namespace evalrun::zx
