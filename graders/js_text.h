#pragma once
// Text as zx-bench's JavaScript sees it, shared by the zx-bench graders: UTF-8 decoded the WHATWG
// way (ill-formed sequences become U+FFFD), JavaScript's whitespace and trim, Math.round, and a
// null-safe member lookup.
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace evalrun::js {

// Decodes one code point at `i` of well-formed UTF-8 and advances `i`.
char32_t NextCodePoint(std::string_view s, size_t& i);
// Every ill-formed UTF-8 sequence (maximal subpart) replaced by U+FFFD, as TextDecoder does.
std::string ToWellFormedUtf8(std::string_view in);
// JavaScript's WhiteSpace and LineTerminator: what `\s` matches and String.prototype.trim strips.
bool IsJsSpace(char32_t c);
std::string_view JsTrim(std::string_view s);
// Math.round for the non-negative scores zx-bench computes (halves round up).
int JsRound(double x);
// object[key], or a null value when `object` is not an object or has no such key.
const nlohmann::json& Member(const nlohmann::json& object, const char* key);

}  // namespace evalrun::js
