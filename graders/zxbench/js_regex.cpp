// JavaScript regular expressions on PCRE2 (graders/zxbench/js_regex.h): the translation of a
// RegExp source and the two bounded ways instruction_checklist matches it.
#define PCRE2_CODE_UNIT_WIDTH 8
#include "graders/zxbench/js_regex.h"

#include <pcre2.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/js_value.h"
#include "graders/framework/js_regex_syntax.h"
#include "graders/framework/pcre2_handles.h"

namespace evalrun::zx {
namespace {

using pcre2::CodeDeleter;
using pcre2::CodePtr;
using pcre2::CompileContextDeleter;
using pcre2::JitStackDeleter;
using pcre2::MatchContextDeleter;
using pcre2::MatchDataDeleter;


// ---- Line patterns: PCRE2 with capture groups and one step budget -------------------------------


int SpendStep(pcre2_callout_block* /*block*/, void* data) {
  auto* left = static_cast<uint64_t*>(data);
  if (*left == 0) return PCRE2_ERROR_CALLOUT;
  --*left;
  return 0;
}

}  // namespace

std::optional<std::string> TranslateJsRegex(const std::string& pattern, std::string* error) {
  return evalrun::TranslateJsRegex(pattern, JsRegexMode::kLegacy, error);
}

struct LineRegex::Code {
  explicit Code(pcre2_code* c) : code(c) {}
  std::unique_ptr<pcre2_code, CodeDeleter> code;
};

LineRegex::LineRegex(std::unique_ptr<Code> code) : code_(std::move(code)) {}
LineRegex::~LineRegex() = default;

std::unique_ptr<LineRegex> LineRegex::Compile(const std::string& js_pattern, std::string* error,
                                              bool case_insensitive, bool multiline) {
  const auto translated = TranslateJsRegex(js_pattern, error);
  if (!translated) return nullptr;
  std::unique_ptr<pcre2_compile_context, CompileContextDeleter> context(
      pcre2_compile_context_create(nullptr));
  if (!context) {
    *error = "out of memory";
    return nullptr;
  }
  pcre2_set_compile_extra_options(context.get(), PCRE2_EXTRA_ALT_BSUX);
  int code_error = 0;
  PCRE2_SIZE offset = 0;
  pcre2_code* code = pcre2_compile(
      reinterpret_cast<PCRE2_SPTR>(translated->data()), translated->size(),
      PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | PCRE2_ALT_BSUX | PCRE2_DOLLAR_ENDONLY |
          PCRE2_AUTO_CALLOUT | (case_insensitive ? PCRE2_CASELESS : 0) |
          (multiline ? PCRE2_MULTILINE : 0),
      &code_error, &offset, context.get());
  if (code == nullptr) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(code_error, message, sizeof message);
    *error = std::string(reinterpret_cast<const char*>(message)) + " at offset " +
             std::to_string(offset);
    return nullptr;
  }
  return std::unique_ptr<LineRegex>(new LineRegex(std::make_unique<Code>(code)));
}

// Every subject reaching LineRegex is well-formed UTF-8 (the graders convert outputs with
// ToWellFormedUtf8 first). Without this option PCRE2_MATCH_INVALID_UTF scans the subject from the
// start offset for its valid extent on every call: a reply searched match after match (canary
// patterns over a 3 MB reply) went quadratic.
constexpr uint32_t kMatchOptions = PCRE2_NO_UTF_CHECK;

Regex::Result LineRegex::Exec(std::string_view subject, uint64_t* steps_left,
                              std::vector<std::optional<std::string_view>>* groups,
                              size_t start) const {
  std::unique_ptr<pcre2_match_data, MatchDataDeleter> data(
      pcre2_match_data_create_from_pattern(code_->code.get(), nullptr));
  std::unique_ptr<pcre2_match_context, MatchContextDeleter> context(
      pcre2_match_context_create(nullptr));
  if (!data || !context || *steps_left == 0) return Regex::Result::kGaveUp;
  pcre2_set_match_limit(context.get(), 1'000'000);
  pcre2_set_depth_limit(context.get(), 10'000);
  pcre2_set_heap_limit(context.get(), 64 * 1024);
  pcre2_set_callout(context.get(), SpendStep, steps_left);
  const int rc = pcre2_match(code_->code.get(), reinterpret_cast<PCRE2_SPTR>(subject.data()),
                             subject.size(), start, kMatchOptions, data.get(), context.get());
  if (rc == PCRE2_ERROR_NOMATCH) return Regex::Result::kNoMatch;
  if (rc < 0) return Regex::Result::kGaveUp;
  if (groups != nullptr) {
    groups->clear();
    const uint32_t count = pcre2_get_ovector_count(data.get());
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(data.get());
    for (uint32_t g = 0; g < count; ++g) {
      if (ovector[2 * g] == PCRE2_UNSET) {
        groups->push_back(std::nullopt);
      } else {
        groups->push_back(subject.substr(ovector[2 * g], ovector[2 * g + 1] - ovector[2 * g]));
      }
    }
  }
  return Regex::Result::kMatch;
}

// The pattern of a format constraint as the shared, bounded Regex, or nullptr with *error.
std::shared_ptr<const Regex> CompileFormat(const std::string& js_pattern, bool case_insensitive,
                                           std::string* error) {
  const auto translated = TranslateJsRegex(js_pattern, error);
  if (!translated) return nullptr;
  try {
    return Regex::Compile(*translated, case_insensitive ? "i" : "");
  } catch (const Error& e) {
    *error = e.what();
    return nullptr;
  }
}

// A second try for a format pattern that exhausted the shared Regex's budget on a short output:
// PCRE2's JIT with a match limit of kJitMatchLimit (about a second of work). Some bank
// patterns need it on ordinary answers: IF-CN-038 c1, (?!(?:[\s\S]*?(?:^|\n)...[^\n]*){11}),
// backtracks about 5e7 steps over a plain ten-line list (V8 takes 23 s for it). kGaveUp when the
// JIT is unavailable or this budget runs out too.
constexpr uint32_t kJitMatchLimit = 200'000'000;


Regex::Result MatchWithJit(const std::string& js_pattern, bool case_insensitive,
                           std::string_view subject) {
  std::string error;
  const auto translated = TranslateJsRegex(js_pattern, &error);
  if (!translated) return Regex::Result::kGaveUp;
  std::unique_ptr<pcre2_compile_context, CompileContextDeleter> compile_context(
      pcre2_compile_context_create(nullptr));
  if (!compile_context) return Regex::Result::kGaveUp;
  pcre2_set_compile_extra_options(compile_context.get(), PCRE2_EXTRA_ALT_BSUX);
  int code_error = 0;
  PCRE2_SIZE offset = 0;
  const uint32_t options = PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | PCRE2_ALT_BSUX |
                           PCRE2_DOLLAR_ENDONLY | (case_insensitive ? PCRE2_CASELESS : 0);
  std::unique_ptr<pcre2_code, CodeDeleter> code(
      pcre2_compile(reinterpret_cast<PCRE2_SPTR>(translated->data()), translated->size(), options,
                    &code_error, &offset, compile_context.get()));
  if (!code || pcre2_jit_compile(code.get(), PCRE2_JIT_COMPLETE) != 0) {
    return Regex::Result::kGaveUp;
  }
  std::unique_ptr<pcre2_match_data, MatchDataDeleter> data(
      pcre2_match_data_create_from_pattern(code.get(), nullptr));
  std::unique_ptr<pcre2_match_context, MatchContextDeleter> context(
      pcre2_match_context_create(nullptr));
  std::unique_ptr<pcre2_jit_stack, JitStackDeleter> stack(
      pcre2_jit_stack_create(32 * 1024, 8 * 1024 * 1024, nullptr));
  if (!data || !context || !stack) return Regex::Result::kGaveUp;
  pcre2_set_match_limit(context.get(), kJitMatchLimit);
  pcre2_jit_stack_assign(context.get(), nullptr, stack.get());
  const int rc = pcre2_match(code.get(), reinterpret_cast<PCRE2_SPTR>(subject.data()),
                             subject.size(), 0, 0, data.get(), context.get());
  if (rc >= 0) return Regex::Result::kMatch;
  if (rc == PCRE2_ERROR_NOMATCH) return Regex::Result::kNoMatch;
  return Regex::Result::kGaveUp;
}

}  // namespace evalrun::zx
