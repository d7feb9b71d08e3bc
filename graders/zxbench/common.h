#pragma once
// What the zx-bench graders share: a null-safe member lookup and the mapping of a 0-100 zx-bench
// score onto a Grade. Text and values as zx-bench's JavaScript sees them are core/js_value.h.
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/grade.h"
#include "core/js_value.h"

namespace evalrun::zx {

// object[key], or a null value when `object` is not an object or has no such key.
const nlohmann::json& Member(const nlohmann::json& object, const char* key);
const js::ordered_json& Member(const js::ordered_json& object, const char* key);

// Number.isInteger(v) for a JSON value.
bool IsIntegral(const nlohmann::json& v);

// Whether `v` is a string equal to one of `options` (Array#includes on strings).
bool OneOf(const nlohmann::json& v, std::initializer_list<std::string_view> options);

// A zx-bench score (0-100) as a Grade: score / 100, passed at 60 or more (zx-bench's pass
// mark), the score and the reproduced evaluator's name in the evidence.
Grade ZxGrade(int zx_score, nlohmann::json evidence, std::string reason,
              std::string_view evaluator);

// A grade that is no zx-bench score (skipped, no answer, an environment error): the status, the
// reason and what was found so far.
Grade StatusGrade(GradeStatus status, std::string reason,
                  nlohmann::json evidence = nlohmann::json::object());

// s.split(from).join(to): every occurrence of `from` (not empty) replaced, left to right.
void ReplaceAll(std::string& s, std::string_view from, std::string_view to);

// text.replace(/\r\n?/g, '\n'): every CRLF and lone CR as LF.
std::string NormalizeNewlines(std::string_view text);

// ---- Hand-walked JavaScript patterns (valid UTF-8 in) -------------------------------------------

// \w (and \b's notion of a word character) without the u flag.
bool IsWordChar(char c);
// An ASCII capital as its small letter; every other byte as it is.
char AsciiLower(char c);
// Whether s[i..] starts with `lower` (small ASCII letters), ignoring ASCII case (the i flag).
bool StartsWithNoCase(std::string_view s, size_t i, std::string_view lower);
// \s*: the index past the JavaScript white space starting at `i`.
size_t SkipJsSpaces(std::string_view s, size_t i);
// text.split(separator) for a one-character separator: the parts, views into `text` (an empty
// text is one empty part).
std::vector<std::string_view> JsSplit(std::string_view text, char separator);

}  // namespace evalrun::zx
