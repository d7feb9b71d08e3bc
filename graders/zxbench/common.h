#pragma once
// What the zx-bench graders share: text as zx-bench's JavaScript sees it (UTF-8 decoded the WHATWG
// way, ill-formed sequences becoming U+FFFD; JavaScript's whitespace and trim; Math.round), a
// null-safe member lookup, and the mapping of a 0-100 zx-bench score onto a Grade.
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/grade.h"

namespace evalrun::zx {

// Decodes one code point at `i` of well-formed UTF-8 and advances `i`.
char32_t NextCodePoint(std::string_view s, size_t& i);
// Appends `cp` as UTF-8 (a lone surrogate as its 3-byte form, WTF-8, as JSON.parse keeps it).
void AppendUtf8(std::string& out, char32_t cp);
// Every ill-formed UTF-8 sequence (maximal subpart) replaced by U+FFFD, as TextDecoder does.
std::string ToWellFormedUtf8(std::string_view in);
// JavaScript's WhiteSpace and LineTerminator: what `\s` matches and String.prototype.trim strips.
bool IsJsSpace(char32_t c);
std::string_view JsTrim(std::string_view s);
// Math.round for the non-negative scores zx-bench computes (halves round up).
int JsRound(double x);
// object[key], or a null value when `object` is not an object or has no such key.
const nlohmann::json& Member(const nlohmann::json& object, const char* key);

// A zx-bench score (0-100) as a Grade: score / 100, passed at 60 or more (zx-bench's pass
// mark), the score and the reproduced evaluator's name in the evidence.
Grade ZxGrade(int zx_score, nlohmann::json evidence, std::string reason,
              std::string_view evaluator);

}  // namespace evalrun::zx
