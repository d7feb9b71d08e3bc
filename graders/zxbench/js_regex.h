#pragma once
// JavaScript regular expressions on PCRE2, as zx-bench's instruction_checklist compiles them (no
// u flag): a RegExp source translated into a PCRE2 pattern with the same meaning, matched either
// through the shared bounded Regex (format constraints) or line by line with capture groups and
// one step budget for a whole grading run (LineRegex).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "graders/framework/regex.h"

namespace evalrun::zx {

// Translates a JavaScript RegExp source into a PCRE2 pattern with the same meaning under the
// options Regex::Compile uses (UTF, DOLLAR_ENDONLY, ALT_BSUX, no UCP): \s and \S are
// JavaScript's Unicode whitespace, '.' refuses \n, \r, U+2028 and U+2029, JavaScript's escapes
// become literals, backreferences become \g{N}. nullopt with *error for a pattern JavaScript
// rejects. Matching is on code points: a character outside the BMP is one character here and two
// in JavaScript.
std::optional<std::string> TranslateJsRegex(const std::string& pattern, std::string* error);

// Steps (PCRE2 auto-callouts) one Run may spend on line patterns, across all lines: far more than
// any real answer needs (a few hundred per line), small enough that a hostile output and pattern
// finish in about a second.
constexpr uint64_t kLineStepBudget = 50'000'000;

// A translated pattern compiled with Regex::Compile's options plus auto-callouts, for
// RegExp.prototype.exec on one line: the match and its capture groups. Used within one Run.
class LineRegex {
 public:
  // Throws nothing; nullptr with *error set for a pattern JavaScript or PCRE2 rejects.
  // `case_insensitive` is the i flag; `multiline` the m flag (^ and $ at each \n; JavaScript
  // also breaks lines at \r, U+2028 and U+2029).
  static std::unique_ptr<LineRegex> Compile(const std::string& js_pattern, std::string* error,
                                            bool case_insensitive = false,
                                            bool multiline = false);
  ~LineRegex();
  LineRegex(const LineRegex&) = delete;
  LineRegex& operator=(const LineRegex&) = delete;

  // exec(subject): kMatch with the groups (nullopt for a group that did not participate),
  // kNoMatch, or kGaveUp when the step budget `*steps_left` or a PCRE2 limit ran out.
  // `start` is RegExp's lastIndex: the search begins there, look-behinds still see before it.
  Regex::Result Exec(std::string_view subject, uint64_t* steps_left,
                     std::vector<std::optional<std::string_view>>* groups = nullptr,
                     size_t start = 0) const;

 private:
  struct Code;
  explicit LineRegex(std::unique_ptr<Code> code);
  std::unique_ptr<Code> code_;
};

// The pattern of a format constraint as the shared, bounded Regex, or nullptr with *error.
std::shared_ptr<const Regex> CompileFormat(const std::string& js_pattern, bool case_insensitive,
                                           std::string* error);

// A second try for a format pattern that exhausted the shared Regex's budget on a short output
// (at most kJitRetryMaxSubject bytes): PCRE2's JIT with a match limit of about a second of work.
// Some bank patterns need it on ordinary answers (IF-CN-038 c1 backtracks about 5e7 steps over a
// plain ten-line list; V8 takes 23 s for it). kGaveUp when the JIT is unavailable or this budget
// runs out too.
constexpr size_t kJitRetryMaxSubject = 64 * 1024;
Regex::Result MatchWithJit(const std::string& js_pattern, bool case_insensitive,
                           std::string_view subject);

}  // namespace evalrun::zx
