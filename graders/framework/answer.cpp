// Answer extraction and the small parsers every grader shares: the ANSWER line, Unicode digits,
// exact decimals and JSON found inside prose. All pure; none throws for any input.
#include "graders/framework/answer.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "core/json_depth.h"

namespace evalrun {

namespace {

constexpr std::string_view kSpace = " \t\r\n\f\v";

std::string_view Trim(std::string_view s) {
  const size_t begin = s.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) return {};
  const size_t end = s.find_last_not_of(kSpace);
  return s.substr(begin, end - begin + 1);
}

bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}
bool IsAlnum(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         static_cast<unsigned char>(c) >= 0x80;
}

// Decodes one UTF-8 sequence at s[i]; returns the code point and sets *length, or -1 (length 1)
// for an invalid byte.
int32_t DecodeUtf8(std::string_view s, size_t i, size_t* length) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  *length = 1;
  if (b0 < 0x80) return b0;
  int extra = 0;
  int32_t cp = 0;
  if ((b0 & 0xE0) == 0xC0) {
    extra = 1;
    cp = b0 & 0x1F;
  } else if ((b0 & 0xF0) == 0xE0) {
    extra = 2;
    cp = b0 & 0x0F;
  } else if ((b0 & 0xF8) == 0xF0) {
    extra = 3;
    cp = b0 & 0x07;
  } else {
    return -1;
  }
  if (i + extra >= s.size()) return -1;
  for (int k = 1; k <= extra; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) return -1;
    cp = (cp << 6) | (b & 0x3F);
  }
  *length = static_cast<size_t>(extra) + 1;
  return cp;
}

// The zero of each run of ten Unicode decimal digits (general category Nd) we map to ASCII.
constexpr int32_t kDigitZeros[] = {
    0x0660, 0x06F0, 0x07C0, 0x0966,  0x09E6,  0x0A66,  0x0AE6,  0x0B66,  0x0BE6,  0x0C66,  0x0CE6,
    0x0D66, 0x0DE6, 0x0E50, 0x0ED0,  0x0F20,  0x1040,  0x1090,  0x17E0,  0x1810,  0x1946,  0x19D0,
    0x1A80, 0x1A90, 0x1B50, 0x1BB0,  0x1C40,  0x1C50,  0xA620,  0xA8D0,  0xA900,  0xA9D0,  0xA9F0,
    0xAA50, 0xABF0, 0xFF10, 0x104A0, 0x11066, 0x1D7CE, 0x1D7D8, 0x1D7E2, 0x1D7EC, 0x1D7F6,
};

int DigitValue(int32_t cp) {
  for (int32_t zero : kDigitZeros) {
    if (cp >= zero && cp < zero + 10) return cp - zero;
  }
  return -1;
}

// Unsigned big integers as ASCII digit strings without leading zeros ("" is zero).
std::string StripLeadingZeros(std::string s) {
  const size_t nz = s.find_first_not_of('0');
  return nz == std::string::npos ? std::string() : s.substr(nz);
}

int CompareUnsigned(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  const int c = a.compare(b);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

std::string AddUnsigned(const std::string& a, const std::string& b) {
  std::string out;
  int carry = 0;
  for (size_t i = 0; i < std::max(a.size(), b.size()) || carry; ++i) {
    int d = carry;
    if (i < a.size()) d += a[a.size() - 1 - i] - '0';
    if (i < b.size()) d += b[b.size() - 1 - i] - '0';
    out.push_back(static_cast<char>('0' + d % 10));
    carry = d / 10;
  }
  std::reverse(out.begin(), out.end());
  return StripLeadingZeros(out);
}

// a - b for a >= b.
std::string SubtractUnsigned(const std::string& a, const std::string& b) {
  std::string out;
  int borrow = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    int d = a[a.size() - 1 - i] - '0' - borrow;
    if (i < b.size()) d -= b[b.size() - 1 - i] - '0';
    borrow = d < 0 ? 1 : 0;
    out.push_back(static_cast<char>('0' + (d + 10) % 10));
  }
  std::reverse(out.begin(), out.end());
  return StripLeadingZeros(out);
}

Decimal Normalized(bool negative, std::string digits, int64_t exponent) {
  Decimal d;
  digits = StripLeadingZeros(std::move(digits));
  size_t trailing = 0;
  while (trailing < digits.size() && digits[digits.size() - 1 - trailing] == '0') ++trailing;
  digits.resize(digits.size() - trailing);
  d.digits = std::move(digits);
  d.exponent = d.digits.empty() ? 0 : exponent + static_cast<int64_t>(trailing);
  d.negative = !d.digits.empty() && negative;
  return d;
}

long double ToLongDouble(const Decimal& d) {
  return std::strtold(d.ToString().c_str(), nullptr);
}

// The digit string of |d| scaled to 10^scale (scale <= d.exponent).
std::string Scaled(const Decimal& d, int64_t scale) {
  if (d.IsZero()) return {};
  return d.digits + std::string(static_cast<size_t>(d.exponent - scale), '0');
}

}  // namespace

Answer ExtractAnswer(const Output& output) {
  Answer answer;
  answer.reasoning = output.reasoning;
  answer.truncated = output.finish_reason == "length";
  std::string_view content = output.content;
  std::string text;
  size_t pos = 0;
  while (pos < content.size()) {
    const size_t open = content.find("<think>", pos);
    if (open == std::string_view::npos) {
      text.append(content.substr(pos));
      break;
    }
    text.append(content.substr(pos, open - pos));
    const size_t close = content.find("</think>", open + 7);
    if (close == std::string_view::npos) {
      answer.unclosed_think = true;
      if (!answer.reasoning.empty()) answer.reasoning += "\n";
      answer.reasoning.append(content.substr(open + 7));
      break;
    }
    if (!answer.reasoning.empty()) answer.reasoning += "\n";
    answer.reasoning.append(content.substr(open + 7, close - open - 7));
    pos = close + 8;
  }
  answer.text = std::string(Trim(text));
  return answer;
}

std::optional<std::string> FindAnswerLine(std::string_view text) {
  std::string_view line;
  size_t end = text.size();
  while (true) {  // the last non-empty line
    const size_t nl = end == 0 ? std::string_view::npos : text.rfind('\n', end - 1);
    const size_t begin = nl == std::string_view::npos ? 0 : nl + 1;
    line = Trim(text.substr(begin, end - begin));
    if (!line.empty() || begin == 0) break;
    end = nl;
  }
  auto skip_emphasis = [](std::string_view s) {
    while (!s.empty() && (s.front() == '*' || s.front() == '_' || s.front() == ' ' ||
                          s.front() == '#' || s.front() == '\t')) {
      s.remove_prefix(1);
    }
    return s;
  };
  line = skip_emphasis(line);
  if (line.size() < 6) return std::nullopt;
  static constexpr std::string_view kWord = "answer";
  for (size_t i = 0; i < kWord.size(); ++i) {
    if ((line[i] | 0x20) != kWord[i]) return std::nullopt;
  }
  line.remove_prefix(kWord.size());
  line = skip_emphasis(line);
  if (line.substr(0, 1) == ":") {
    line.remove_prefix(1);
  } else if (line.substr(0, 3) == "\xEF\xBC\x9A") {  // U+FF1A FULLWIDTH COLON
    line.remove_prefix(3);
  } else {
    return std::nullopt;
  }
  line = Trim(skip_emphasis(line));
  while (!line.empty()) {  // trailing emphasis, code ticks and a full stop
    if (line.back() == '*' || line.back() == '_' || line.back() == '.' || line.back() == ' ') {
      line.remove_suffix(1);
    } else if (line.size() >= 3 && line.substr(line.size() - 3) == "\xE3\x80\x82") {  // 。
      line.remove_suffix(3);
    } else {
      break;
    }
  }
  if (line.size() >= 2 && line.front() == '`' && line.back() == '`') {
    line = Trim(line.substr(1, line.size() - 2));
  }
  return std::string(line);
}

std::string NormalizeNumerals(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      out.push_back(text[i++]);
      continue;
    }
    size_t length = 1;
    const int32_t cp = DecodeUtf8(text, i, &length);
    const int digit = cp < 0 ? -1 : DigitValue(cp);
    if (digit >= 0) {
      out.push_back(static_cast<char>('0' + digit));
    } else if (cp == 0xFF0E || cp == 0x066B) {
      out.push_back('.');
    } else if (cp == 0x066C) {
      out.push_back(',');
    } else if (cp == 0xFF0B) {
      out.push_back('+');
    } else if (cp == 0xFF0D || cp == 0x2212) {
      out.push_back('-');
    } else {
      out.append(text.substr(i, length));
    }
    i += length;
  }
  return out;
}

std::string Decimal::ToString() const {
  if (IsZero()) return "0";
  std::string out = negative ? "-" : "";
  const auto n = static_cast<int64_t>(digits.size());
  if (exponent >= 0 && exponent <= 40) {
    out += digits + std::string(static_cast<size_t>(exponent), '0');
  } else if (exponent < 0 && -exponent < n) {
    out += digits.substr(0, static_cast<size_t>(n + exponent)) + "." +
           digits.substr(static_cast<size_t>(n + exponent));
  } else if (exponent < 0 && -exponent - n <= 40) {
    out += "0." + std::string(static_cast<size_t>(-exponent - n), '0') + digits;
  } else {
    out += digits.substr(0, 1);
    if (n > 1) out += "." + digits.substr(1);
    const int64_t e = exponent + n - 1;
    out += (e < 0 ? "e-" : "e+") + std::to_string(e < 0 ? -e : e);
  }
  return out;
}

std::optional<Decimal> ParseDecimalPrefix(std::string_view text, size_t* consumed) {
  *consumed = 0;
  size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
  std::string digits;
  int64_t exponent = 0;
  const size_t int_begin = i;
  while (i < text.size() && IsDigit(text[i])) digits.push_back(text[i++]);
  // Thousands groups: a comma followed by exactly three digits, after a 1-3 digit lead.
  if (i - int_begin >= 1 && i - int_begin <= 3) {
    while (i + 4 <= text.size() && text[i] == ',' && IsDigit(text[i + 1]) && IsDigit(text[i + 2]) &&
           IsDigit(text[i + 3]) && (i + 4 == text.size() || !IsDigit(text[i + 4]))) {
      digits.append(text.substr(i + 1, 3));
      i += 4;
    }
  }
  const bool had_int = !digits.empty();
  if (i + 1 < text.size() && text[i] == '.' && IsDigit(text[i + 1])) {
    ++i;
    while (i < text.size() && IsDigit(text[i])) {
      digits.push_back(text[i++]);
      --exponent;
    }
  } else if (!had_int) {
    return std::nullopt;
  }
  if (i + 1 < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    size_t j = i + 1;
    bool exp_negative = false;
    if (text[j] == '+' || text[j] == '-') exp_negative = text[j++] == '-';
    if (j < text.size() && IsDigit(text[j])) {
      int64_t e = 0;
      while (j < text.size() && IsDigit(text[j])) {
        if (e < 1'000'000'000) e = e * 10 + (text[j] - '0');
        ++j;
      }
      exponent += exp_negative ? -e : e;
      i = j;
    }
  }
  *consumed = i;
  return Normalized(negative, std::move(digits), exponent);
}

std::optional<Decimal> DecimalFromJson(const nlohmann::json& value) {
  if (!value.is_number()) return std::nullopt;
  const std::string text = value.dump();
  size_t consumed = 0;
  auto d = ParseDecimalPrefix(text, &consumed);
  if (!d || consumed != text.size()) return std::nullopt;
  return d;
}

void ForEachNumber(std::string_view text, const std::function<void(const Decimal&)>& visit) {
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    const bool starts =
        IsDigit(c) || (c == '.' && i + 1 < text.size() && IsDigit(text[i + 1])) ||
        ((c == '-' || c == '+') && i + 1 < text.size() &&
         (IsDigit(text[i + 1]) || text[i + 1] == '.') && (i == 0 || !IsAlnum(text[i - 1])));
    if (!starts || (IsDigit(c) && i > 0 && IsDigit(text[i - 1]))) {
      ++i;
      continue;
    }
    size_t consumed = 0;
    auto d = ParseDecimalPrefix(text.substr(i), &consumed);
    if (!d) {
      ++i;
      continue;
    }
    visit(*d);
    i += consumed;
  }
}

int CompareDecimal(const Decimal& a, const Decimal& b) {
  if (a.IsZero() && b.IsZero()) return 0;
  if (a.negative != b.negative || a.IsZero() || b.IsZero()) {
    const int sa = a.IsZero() ? 0 : (a.negative ? -1 : 1);
    const int sb = b.IsZero() ? 0 : (b.negative ? -1 : 1);
    return sa < sb ? -1 : 1;
  }
  // Same sign, both non-zero: compare magnitudes by order of magnitude, then digits.
  const int64_t ma = a.exponent + static_cast<int64_t>(a.digits.size());
  const int64_t mb = b.exponent + static_cast<int64_t>(b.digits.size());
  int magnitude = 0;
  if (ma != mb) {
    magnitude = ma < mb ? -1 : 1;
  } else {
    const int c = a.digits.compare(b.digits);
    magnitude = c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  return a.negative ? -magnitude : magnitude;
}

Decimal MultiplyAbs(const Decimal& a, const Decimal& factor) {
  if (a.IsZero() || factor.IsZero()) return {};
  std::vector<int> product(a.digits.size() + factor.digits.size(), 0);
  for (size_t i = 0; i < a.digits.size(); ++i) {
    for (size_t j = 0; j < factor.digits.size(); ++j) {
      product[i + j + 1] += (a.digits[i] - '0') * (factor.digits[j] - '0');
    }
  }
  for (size_t k = product.size() - 1; k > 0; --k) {
    product[k - 1] += product[k] / 10;
    product[k] %= 10;
  }
  std::string digits;
  for (int d : product) digits.push_back(static_cast<char>('0' + d));
  return Normalized(false, std::move(digits), a.exponent + factor.exponent);
}

bool WithinTolerance(const Decimal& x, const Decimal& a, const Decimal& tolerance) {
  if (x == a) return true;
  if (tolerance.IsZero() || tolerance.negative) return false;
  int64_t low = tolerance.exponent;
  int64_t high = tolerance.exponent;
  for (const Decimal* d : {&x, &a}) {
    if (d->IsZero()) continue;
    low = std::min(low, d->exponent);
    high = std::max(high, d->exponent + static_cast<int64_t>(d->digits.size()));
  }
  if (high - low > 4000) {
    return std::fabs(ToLongDouble(x) - ToLongDouble(a)) <= ToLongDouble(tolerance);
  }
  const std::string sx = Scaled(x, low);
  const std::string sa = Scaled(a, low);
  std::string difference;
  if (x.negative == a.negative || x.IsZero() || a.IsZero()) {
    difference = CompareUnsigned(sx, sa) >= 0 ? SubtractUnsigned(sx, sa) : SubtractUnsigned(sa, sx);
  } else {
    difference = AddUnsigned(sx, sa);
  }
  return CompareUnsigned(difference, Scaled(tolerance, low)) <= 0;
}

std::string EvidenceText(std::string_view text, size_t max_bytes) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    if (out.size() >= max_bytes) {
      out += "...";
      break;
    }
    size_t length = 1;
    const int32_t cp = DecodeUtf8(text, i, &length);
    if (cp < 0 || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF || (length == 2 && cp < 0x80) ||
        (length == 3 && cp < 0x800) || (length == 4 && cp < 0x10000)) {
      out += "\xEF\xBF\xBD";
    } else {
      out.append(text.substr(i, length));
    }
    i += length;
  }
  return out;
}

FoundJson FindJson(std::string_view text) {
  FoundJson found;
  // One scan for depth before nlohmann parses (core/json_depth.h), strings skipped.
  auto depth_ok = [](std::string_view s) { return !JsonDepthExceeded(s, kMaxJsonDepth); };
  bool too_deep = false;
  auto try_parse = [&](std::string_view candidate) -> bool {
    candidate = Trim(candidate);
    if (candidate.empty()) return false;
    if (!depth_ok(candidate)) {
      too_deep = true;
      return false;
    }
    nlohmann::json value = nlohmann::json::parse(candidate, nullptr, /*allow_exceptions=*/false);
    if (value.is_discarded()) return false;
    found.value = std::move(value);
    return true;
  };
  // A fenced block: ```json first, else the first ``` fence.
  for (std::string_view opener : {std::string_view("```json"), std::string_view("```")}) {
    const size_t open = text.find(opener);
    if (open == std::string_view::npos) continue;
    const size_t body = text.find('\n', open);
    if (body == std::string_view::npos) continue;
    const size_t close = text.find("```", body + 1);
    if (close == std::string_view::npos) continue;
    if (try_parse(text.substr(body + 1, close - body - 1))) return found;
  }
  if (try_parse(text)) return found;
  const size_t first = text.find_first_of("{[");
  const size_t last = text.find_last_of("}]");
  if (first != std::string_view::npos && last != std::string_view::npos && last > first &&
      try_parse(text.substr(first, last - first + 1))) {
    return found;
  }
  found.error = too_deep ? "JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels"
                         : "no JSON found in the answer";
  return found;
}

}  // namespace evalrun
