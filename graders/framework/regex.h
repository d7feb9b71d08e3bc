#pragma once
// Bounded JavaScript-style regular expressions through PCRE2, shared by the graders that match
// patterns (native regex and json_schema, zx-bench instruction_checklist).
#include <memory>
#include <string>
#include <string_view>

namespace evalrun {

// A compiled PCRE2 pattern with JavaScript-style flags (graders/framework/regex.cpp).
// Thread-safe after construction; matching is bounded: match limit 1,000,000, depth limit
// 10,000, heap 64 MiB per call, and an overall budget for large subjects, so no pattern or
// subject can hang a run.
class Regex {
 public:
  enum class Result { kMatch, kNoMatch, kGaveUp };
  // Compiled patterns are cached by (pattern, flags). Throws Error("<problem> at offset N") for
  // a bad pattern or flag; `flags` is a subset of "imsu".
  static std::shared_ptr<const Regex> Compile(const std::string& pattern,
                                              const std::string& flags);
  // A JavaScript RegExp source with JavaScript's meaning (graders/framework/js_regex_syntax.h):
  // the 'u' flag selects the u grammar, \s is Unicode white space, '.' refuses line terminators.
  // Throws Error with JavaScript's kind of complaint ("invalid escape at offset 2") or PCRE2's.
  static std::shared_ptr<const Regex> CompileJavaScript(const std::string& pattern,
                                                        const std::string& flags);
  // `full`: the whole subject must match. Invalid UTF-8 in the subject never matches a
  // character but does not fail the call.
  virtual Result Match(std::string_view subject, bool full) const = 0;
  // What is wrong with `flags` ("unknown flag 'x' (allowed: i, m, s, u)", "flag 'i' twice"),
  // or "" when they are a valid subset of "imsu".
  static std::string FlagsError(const std::string& flags);
  virtual ~Regex() = default;
};

}  // namespace evalrun
