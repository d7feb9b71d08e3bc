#pragma once
// JavaScript's RegExp syntax on PCRE2: a RegExp source translated into a PCRE2 pattern with the
// same meaning, in either of JavaScript's two grammars. Regex::CompileJavaScript
// (graders/framework/regex.h) compiles the result; zx-bench's instruction_checklist
// (graders/zxbench/js_regex.h) matches it line by line too.
#include <optional>
#include <string>

namespace evalrun {

// kLegacy: `new RegExp(p)` (Annex B: identity escapes such as \a, legacy octal, a lone '{' or
// ']' literal). kUnicode: `new RegExp(p, "u")`, as AJV compiles `pattern`,
// `patternProperties` and ajv-formats' `regex` format: only syntax characters may be escaped,
// \u{H...} and \p{...} / \P{...} property escapes, no legacy octal, no lone brackets, a
// backreference must name a group, a class escape cannot end a range.
enum class JsRegexMode { kLegacy, kUnicode };

// The PCRE2 pattern for the options Regex::Compile uses (UTF, DOLLAR_ENDONLY, ALT_BSUX, no
// UCP): \s and \S are JavaScript's Unicode white space and line terminators (U+00A0, U+FEFF,
// U+2000-U+200A, U+2028, U+2029, U+3000, ...), '.' refuses \n, \r, U+2028 and U+2029,
// JavaScript's escapes become literals, backreferences become \g{N}. nullopt with *error for a
// pattern JavaScript rejects ("invalid escape \q at offset 3"). Matching is on code points: a
// character outside the BMP is one character here; in JavaScript it is two without the u flag.
// `dot_all` is the s flag: '.' matches every character.
std::optional<std::string> TranslateJsRegex(const std::string& pattern, JsRegexMode mode,
                                            std::string* error, bool dot_all = false);

}  // namespace evalrun
