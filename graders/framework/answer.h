#pragma once
// Answer extraction, done once for all graders (DESIGN.md section 7-8): reasoning that arrived
// as reasoning_content is already apart; <think>...</think> blocks in the content are removed;
// an unclosed <think> means the model never got to an answer.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/grade.h"

namespace evalrun {

struct Answer {
  std::string text;            // content with complete <think> blocks removed, trimmed
  std::string reasoning;       // reasoning_content plus the removed think blocks
  bool unclosed_think = false; // content opened <think> and never closed it
  bool truncated = false;      // finish_reason == "length"
  bool empty() const { return text.empty(); }
};

// Never throws.
Answer ExtractAnswer(const Output& output);

// The value of an `ANSWER:` line when it is the last non-empty line of `text`: "answer" in any
// case, an ASCII or full-width colon (`ANSWER：`), markdown emphasis around either part
// (`**ANSWER:** 12`), trailing `.`/`。` and emphasis removed, trimmed. nullopt when the last
// non-empty line is not an ANSWER line. Used by answer_line and numeric (graders/framework/answer.cpp).
std::optional<std::string> FindAnswerLine(std::string_view text);

// Text with every Unicode decimal digit (the common Nd ranges: full-width, Arabic-Indic,
// Devanagari, Thai, ...) mapped to ASCII, and full-width `．＋－`, U+2212 minus and the Arabic
// decimal/thousands separators mapped to `. + - . ,`. Invalid UTF-8 bytes pass through.
std::string NormalizeNumerals(std::string_view text);

// An exact decimal number: value = (negative ? -1 : 1) × digits × 10^exponent. No floating
// point anywhere, so "0.1" + "0.2" compares exactly with "0.3".
struct Decimal {
  bool negative = false;
  std::string digits;     // ASCII digits, no leading or trailing zeros; "" is zero
  int64_t exponent = 0;
  bool IsZero() const { return digits.empty(); }
  std::string ToString() const;  // "-1234.5", "0.001"; scientific ("1.5e+400") when huge
  bool operator==(const Decimal& other) const = default;
};

// Parses a number at the start of ASCII `text` (run NormalizeNumerals first): optional sign,
// digits with optional thousands groups ("1,234,567"), optional fraction, optional exponent
// ("1.2e3"). Sets *consumed to the bytes used. nullopt (consumed 0) when none starts there.
std::optional<Decimal> ParseDecimalPrefix(std::string_view text, size_t* consumed);
// A JSON number as a Decimal (through its shortest round-trip text); nullopt for non-numbers.
std::optional<Decimal> DecimalFromJson(const nlohmann::json& value);
// Calls `visit` for every number in ASCII-normalized `text`, left to right. A sign counts only
// when it does not follow a letter or digit ("x-2" is 2, " -2" is -2). Linear time.
void ForEachNumber(std::string_view text, const std::function<void(const Decimal&)>& visit);
// |x - a| <= tolerance, exactly (tolerance >= 0). Numbers whose exponents are more than 4,000
// apart are compared in long double instead.
bool WithinTolerance(const Decimal& x, const Decimal& a, const Decimal& tolerance);
// |a| × factor, exactly.
Decimal MultiplyAbs(const Decimal& a, const Decimal& factor);
int CompareDecimal(const Decimal& a, const Decimal& b);  // -1, 0, 1

// Answer text safe to put in evidence: invalid UTF-8 replaced by U+FFFD (nlohmann refuses to
// dump it), cut at a character boundary after `max_bytes` with "..." appended.
std::string EvidenceText(std::string_view text, size_t max_bytes = 200);

// JSON found in an answer (json_fields, json_schema): the first ```json fence (else the first
// ``` fence), else the whole text, else the span from the first `{` or `[` to the last `}` or
// `]`. Nesting deeper than kMaxJsonDepth is refused before parsing (no deep recursion).
constexpr int kMaxJsonDepth = 512;
struct FoundJson {
  std::optional<nlohmann::json> value;  // nullopt: none found; `error` says why
  std::string error;
};
FoundJson FindJson(std::string_view text);

}  // namespace evalrun
