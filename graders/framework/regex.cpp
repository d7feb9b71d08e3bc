// The shared Regex class (graders/framework/regex.h): JavaScript-style patterns through PCRE2
// with bounded matching, used by the regex, json_schema and zxbench:instruction_checklist
// graders. docs/graders.md states the rules.
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "core/error.h"
#include "graders/framework/js_regex_syntax.h"
#include "graders/framework/pcre2_handles.h"
#include "graders/framework/regex.h"

namespace evalrun {

namespace {

using pcre2::CodeDeleter;
using pcre2::CodePtr;
using pcre2::CompileContextDeleter;
using pcre2::MatchContextDeleter;
using pcre2::MatchDataDeleter;

// Limits per pcre2_match call (PCRE2 counts them per start position).
constexpr uint32_t kMatchLimit = 1'000'000;
constexpr uint32_t kDepthLimit = 10'000;
constexpr uint32_t kHeapLimitKiB = 64 * 1024;
// Subjects longer than this are matched with a pattern compiled with auto-callouts, whose
// callback counts every step across all start positions and stops at kTotalSteps: the
// per-position limits alone would allow kMatchLimit work at each of millions of positions.
constexpr size_t kCountedSubjectBytes = 16 * 1024;
constexpr uint64_t kTotalSteps = 50'000'000;

int CountSteps(pcre2_callout_block* /*block*/, void* data) {
  auto* steps = static_cast<uint64_t*>(data);
  return ++*steps > kTotalSteps ? PCRE2_ERROR_CALLOUT : 0;
}

CodePtr CompileOrThrow(const std::string& pattern, uint32_t options) {
  std::unique_ptr<pcre2_compile_context, CompileContextDeleter> context(
      pcre2_compile_context_create(nullptr));
  pcre2_set_compile_extra_options(context.get(), PCRE2_EXTRA_ALT_BSUX);
  int error = 0;
  PCRE2_SIZE offset = 0;
  CodePtr code(pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), options,
                             &error, &offset, context.get()));
  if (!code) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error, message, sizeof message);
    throw Error(std::string(reinterpret_cast<const char*>(message)) + " at offset " +
                std::to_string(offset));
  }
  return code;
}

class Pcre2Regex final : public Regex {
 public:
  Pcre2Regex(CodePtr code, CodePtr counted)
      : code_(std::move(code)), counted_(std::move(counted)) {}

  Result Match(std::string_view subject, bool full) const override {
    const bool counted = subject.size() > kCountedSubjectBytes;
    const pcre2_code* code = counted ? counted_.get() : code_.get();
    std::unique_ptr<pcre2_match_data, MatchDataDeleter> data(
        pcre2_match_data_create_from_pattern(code, nullptr));
    std::unique_ptr<pcre2_match_context, MatchContextDeleter> context(
        pcre2_match_context_create(nullptr));
    if (!data || !context) return Result::kGaveUp;
    pcre2_set_match_limit(context.get(), kMatchLimit);
    pcre2_set_depth_limit(context.get(), kDepthLimit);
    pcre2_set_heap_limit(context.get(), kHeapLimitKiB);
    uint64_t steps = 0;
    if (counted) pcre2_set_callout(context.get(), CountSteps, &steps);
    const uint32_t options = full ? (PCRE2_ANCHORED | PCRE2_ENDANCHORED) : 0;
    const int rc = pcre2_match(code, reinterpret_cast<PCRE2_SPTR>(subject.data()), subject.size(),
                               0, options, data.get(), context.get());
    if (rc >= 0) return Result::kMatch;
    if (rc == PCRE2_ERROR_NOMATCH) return Result::kNoMatch;
    return Result::kGaveUp;  // match, depth or heap limit, the step budget, or out of memory
  }

 private:
  CodePtr code_;
  CodePtr counted_;
};

}  // namespace

std::string Regex::FlagsError(const std::string& flags) {
  for (size_t i = 0; i < flags.size(); ++i) {
    const char f = flags[i];
    if (f != 'i' && f != 'm' && f != 's' && f != 'u') {
      return std::string("unknown flag '") + f + "' (allowed: i, m, s, u)";
    }
    if (flags.find(f, i + 1) != std::string::npos) return std::string("flag '") + f + "' twice";
  }
  return {};
}

// A bounded cache of compiled patterns by (flags, pattern): `make` runs on a miss (and may
// throw). Suites hold far fewer patterns than the bound.
class RegexCache {
 public:
  template <typename Make>
  std::shared_ptr<const Regex> Get(const std::string& pattern, const std::string& flags,
                                   Make&& make) {
    const std::string key = flags + '\0' + pattern;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = cache_.find(key);
      if (it != cache_.end()) return it->second;
    }
    std::shared_ptr<const Regex> regex = make();
    std::lock_guard<std::mutex> lock(mutex_);
    if (cache_.size() >= 4096) cache_.clear();
    cache_.emplace(key, regex);
    return regex;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<std::string, std::shared_ptr<const Regex>> cache_;
};

std::shared_ptr<const Regex> Regex::Compile(const std::string& pattern, const std::string& flags) {
  static RegexCache cache;
  return cache.Get(pattern, flags, [&]() -> std::shared_ptr<const Regex> {
    if (const std::string error = Regex::FlagsError(flags); !error.empty()) throw Error(error);
    // JavaScript semantics where PCRE2 has them: \uHHHH and \u{H...} (ALT_BSUX), `$` only at the
    // very end without the m flag (DOLLAR_ENDONLY), ASCII \d \w \s classes (no UCP).
    uint32_t options = PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | PCRE2_ALT_BSUX | PCRE2_DOLLAR_ENDONLY;
    if (flags.find('i') != std::string::npos) options |= PCRE2_CASELESS;
    if (flags.find('m') != std::string::npos) options |= PCRE2_MULTILINE;
    if (flags.find('s') != std::string::npos) options |= PCRE2_DOTALL;
    return std::make_shared<const Pcre2Regex>(
        CompileOrThrow(pattern, options), CompileOrThrow(pattern, options | PCRE2_AUTO_CALLOUT));
  });
}

std::shared_ptr<const Regex> Regex::CompileJavaScript(const std::string& pattern,
                                                      const std::string& flags) {
  // Its own cache, so a pattern matched once per value (json_schema's `pattern`) is translated
  // once.
  static RegexCache cache;
  return cache.Get(pattern, flags, [&]() -> std::shared_ptr<const Regex> {
    if (const std::string error = Regex::FlagsError(flags); !error.empty()) throw Error(error);
    const bool unicode = flags.find('u') != std::string::npos;
    std::string error;
    const auto translated =
        TranslateJsRegex(pattern, unicode ? JsRegexMode::kUnicode : JsRegexMode::kLegacy, &error,
                         flags.find('s') != std::string::npos);
    if (!translated) throw Error(error);
    std::string pcre2_flags = flags;
    if (unicode) pcre2_flags.erase(pcre2_flags.find('u'), 1);
    return Compile(*translated, pcre2_flags);
  });
}

}  // namespace evalrun
