// zx-bench's structured_contract grader, reproduced (docs/zx-bench.md, "Graders: where evalrun
// knowingly differs"). Reads the whole bank entry as its spec: graderVersion and requirements
// (format, dialect, schema, contentSchema, references, assertions, formatAssertions, family,
// output_policy; generatedSchema, svg and v4's oracle mark the entries evalrun skips).
//
// Sources read: packages/core/src/evaluators/structuredContract.ts (structured_contract_v1),
// structuredContractV2.ts (v2, and v3 which differs only for generatedSchema),
// structuredContractV4.ts and structuredFormats.py of Little-Star888/zx-bench at
// a5f6a19fb2159e703d4ea6659c2ce90280d5e52d, a fork of suncityldp/zx-bench: the store holds these
// files from that fork only. suncityldp's contract registry (packages/core/src/contracts/
// registry.ts) names the same versions and requirement fields. zx-bench validates with
// ajv 8.20.0 and ajv-formats 3.0.1 (strict mode), which this file follows.
//
// Score, 0-100: 100 when every criterion passes, otherwise 0 (zx-bench's `complete`):
//   raw format   the whole response parses as requirements.format, with no extraction or repair:
//                JSON as JSON.parse reads it; CSV as Python's csv.reader(strict=True) reads it,
//                then one object per row keyed by the header; XML as ElementTree reads it, then
//                the <records><record><field>... profile (<field null="true"/> is null). From v2
//                on, a response longer than 131072 UTF-16 code units fails here.
//   schema       the value validates against requirements.schema (the dialect's AJV);
//   content      the value validates against requirements.contentSchema, when present;
//   assertions   one criterion each: the value at the JSON Pointer exists and is deep-strictly
//                equal (Node's util.isDeepStrictEqual) to `expected`.
// Graded as skipped: YAML and TOML (zx-bench parses them with PyYAML/tomllib), SVG (rendered in
// Chromium), generatedSchema (the model writes a schema that zx-bench compiles and runs), v4 (a
// private oracle file outside the entry), and $dynamicRef/$dynamicAnchor under v1 (v2 refuses
// $dynamicRef itself).
//
// Known approximations (docs/zx-bench.md lists them): inside an `if` subschema AJV stops at the
// first failing keyword while this file evaluates all of them (only what counts as "evaluated"
// for unevaluated* can differ); $ref resolves within the document, requirements.references and
// absolute $id values only; XML names use XML 1.0 fifth-edition character classes.
//
// Pure and thread-safe; Run never throws. Work is bounded: JSON nesting deeper than 512 levels is
// refused while reading (nothing deeper is built), schema validation stops after 20 million
// steps or 1,000 nested schema applications, regular expressions run under graders/native/regex.cpp's
// limits, and CSV and XML are only parsed within v2's 131072-unit limit.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/js_value.h"
#include "core/error.h"
#include "graders/framework/answer.h"
#include "graders/framework/regex.h"
#include "graders/zxbench/factories.h"
#include "graders/framework/grader.h"
#include "graders/zxbench/common.h"

namespace evalrun {
namespace {

using nlohmann::json;
using js::AppendUtf8;
using js::IsJsSpace;
using js::JsTrim;
using zx::Member;
using js::NextCodePoint;
using js::ToWellFormedUtf8;

constexpr std::string_view kName = "zxbench:structured_contract";
constexpr std::string_view kVersion = "1";

constexpr int kMaxJsonDepth = 512;            // deeper JSON is refused before it is built
constexpr int kMaxSchemaDepth = 128;          // nesting of a frozen schema
constexpr int kMaxApplyDepth = 1000;          // nested schema applications, $ref chains included
constexpr uint64_t kMaxSteps = 20'000'000;    // schema applications per validation
constexpr size_t kMaxResponseUnits = 131072;  // v2+: "published 128 KiB character limit"

constexpr std::string_view kDraft07Uri = "http://json-schema.org/draft-07/schema#";
constexpr std::string_view k2020Uri = "https://json-schema.org/draft/2020-12/schema";

// A contract zx-bench itself cannot compile (it reports the entry as unavailable, never scored).
class ContractError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// ---- Text -----------------------------------------------------------------------------------

// String.prototype.length: UTF-16 code units of well-formed UTF-8 (WTF-8 surrogates count 1).
size_t Utf16Length(std::string_view s) {
  size_t units = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const auto b = static_cast<unsigned char>(s[i]);
    if ((b & 0xC0) != 0x80) units += b >= 0xF0 ? 2 : 1;
  }
  return units;
}

// Code points, as AJV's ucs2length counts a string for minLength/maxLength.
size_t CodePoints(std::string_view s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}


// Python's str.isspace(), for the code points that can occur in XML text.
bool IsPySpace(char32_t c) {
  switch (c) {
    case 0x09:
    case 0x0A:
    case 0x0B:
    case 0x0C:
    case 0x0D:
    case 0x20:
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
      return true;
    default:
      return (c >= 0x1C && c <= 0x1F) || (c >= 0x2000 && c <= 0x200A);
  }
}

// `not s.strip()` in Python.
bool PyBlank(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    if (!IsPySpace(NextCodePoint(s, i))) return false;
  }
  return true;
}

bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}

std::string Shown(std::string_view text) {
  return EvidenceText(text, 120);
}

// ---- JSON as JSON.parse reads it ----------------------------------------------------------------

// A recursive-descent reader of RFC 8259 JSON that keeps what nlohmann's parser would change: -0
// stays -0 (Object.is tells them apart), numbers beyond double range become ±Infinity or ±0,
// lone surrogate escapes are kept (as WTF-8), the last of duplicate keys wins. Every number is
// a double, as in JavaScript. Nesting deeper than kMaxJsonDepth is refused (JSON.parse would
// accept it; no gold value evalrun grades nests that deep, so the score is the same).
class JsonReader {
 public:
  explicit JsonReader(std::string_view text) : s_(text) {}

  std::optional<json> Parse() {
    json value;
    if (!Value(value, 0)) return std::nullopt;
    SkipSpace();
    if (i_ != s_.size()) {
      Fail("unexpected text after the JSON value");
      return std::nullopt;
    }
    return value;
  }
  const std::string& error() const { return error_; }

 private:
  bool Fail(const std::string& message) {
    if (error_.empty()) error_ = message + " at position " + std::to_string(i_);
    return false;
  }
  void SkipSpace() {
    while (i_ < s_.size() &&
           (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) {
      ++i_;
    }
  }
  bool Literal(std::string_view word, json value, json& out) {
    if (s_.substr(i_, word.size()) != word) return Fail("unexpected token");
    i_ += word.size();
    out = std::move(value);
    return true;
  }

  bool Value(json& out, int depth) {
    SkipSpace();
    if (i_ >= s_.size()) return Fail("unexpected end of JSON input");
    const char c = s_[i_];
    if (c == '{' || c == '[') {
      if (depth >= kMaxJsonDepth) return Fail("JSON nested deeper than 512 levels");
      return c == '{' ? Object(out, depth) : Array(out, depth);
    }
    if (c == '"') {
      std::string text;
      if (!String(text)) return false;
      out = std::move(text);
      return true;
    }
    if (c == 't') return Literal("true", true, out);
    if (c == 'f') return Literal("false", false, out);
    if (c == 'n') return Literal("null", nullptr, out);
    if (c == '-' || IsDigit(c)) return Number(out);
    return Fail("unexpected token");
  }

  bool Object(json& out, int depth) {
    ++i_;
    out = json::object();
    SkipSpace();
    if (i_ < s_.size() && s_[i_] == '}') {
      ++i_;
      return true;
    }
    for (;;) {
      SkipSpace();
      if (i_ >= s_.size() || s_[i_] != '"') return Fail("expected a property name");
      std::string key;
      if (!String(key)) return false;
      SkipSpace();
      if (i_ >= s_.size() || s_[i_] != ':') return Fail("expected ':'");
      ++i_;
      json item;
      if (!Value(item, depth + 1)) return false;
      out[key] = std::move(item);
      SkipSpace();
      if (i_ < s_.size() && s_[i_] == ',') {
        ++i_;
        continue;
      }
      if (i_ < s_.size() && s_[i_] == '}') {
        ++i_;
        return true;
      }
      return Fail("expected ',' or '}'");
    }
  }

  bool Array(json& out, int depth) {
    ++i_;
    out = json::array();
    SkipSpace();
    if (i_ < s_.size() && s_[i_] == ']') {
      ++i_;
      return true;
    }
    for (;;) {
      json item;
      if (!Value(item, depth + 1)) return false;
      out.push_back(std::move(item));
      SkipSpace();
      if (i_ < s_.size() && s_[i_] == ',') {
        ++i_;
        continue;
      }
      if (i_ < s_.size() && s_[i_] == ']') {
        ++i_;
        return true;
      }
      return Fail("expected ',' or ']'");
    }
  }

  std::optional<char32_t> Hex4(size_t at) const {
    if (at + 4 > s_.size()) return std::nullopt;
    char32_t unit = 0;
    for (size_t k = at; k < at + 4; ++k) {
      const char h = s_[k];
      int v = -1;
      if (h >= '0' && h <= '9') v = h - '0';
      if (h >= 'a' && h <= 'f') v = h - 'a' + 10;
      if (h >= 'A' && h <= 'F') v = h - 'A' + 10;
      if (v < 0) return std::nullopt;
      unit = unit * 16 + static_cast<char32_t>(v);
    }
    return unit;
  }

  bool String(std::string& out) {
    ++i_;  // the opening quote
    for (;;) {
      if (i_ >= s_.size()) return Fail("unterminated string");
      const auto c = static_cast<unsigned char>(s_[i_]);
      if (c == '"') {
        ++i_;
        return true;
      }
      if (c < 0x20) return Fail("bad control character in string literal");
      if (c != '\\') {
        out += static_cast<char>(c);
        ++i_;
        continue;
      }
      if (++i_ >= s_.size()) return Fail("unterminated string");
      const char e = s_[i_++];
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          const auto unit = Hex4(i_);
          if (!unit) return Fail("bad Unicode escape");
          i_ += 4;
          char32_t cp = *unit;
          if (cp >= 0xD800 && cp <= 0xDBFF && s_.substr(i_, 2) == "\\u") {
            const auto low = Hex4(i_ + 2);
            if (low && *low >= 0xDC00 && *low <= 0xDFFF) {
              cp = 0x10000 + ((cp - 0xD800) << 10) + (*low - 0xDC00);
              i_ += 6;
            }
          }
          AppendUtf8(out, cp);
          break;
        }
        default:
          return Fail("bad escaped character");
      }
    }
  }

  bool Number(json& out) {
    const size_t start = i_;
    const bool negative = s_[i_] == '-';
    if (negative) ++i_;
    if (i_ >= s_.size() || !IsDigit(s_[i_])) return Fail("no number after minus sign");
    if (s_[i_] == '0') {
      ++i_;
    } else {
      while (i_ < s_.size() && IsDigit(s_[i_])) ++i_;
    }
    bool integral = true;
    if (i_ < s_.size() && s_[i_] == '.') {
      integral = false;
      if (++i_ >= s_.size() || !IsDigit(s_[i_])) return Fail("unterminated fractional number");
      while (i_ < s_.size() && IsDigit(s_[i_])) ++i_;
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      integral = false;
      ++i_;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
      if (i_ >= s_.size() || !IsDigit(s_[i_])) return Fail("exponent part is missing a number");
      while (i_ < s_.size() && IsDigit(s_[i_])) ++i_;
    }
    const std::string_view literal = s_.substr(start, i_ - start);
    double value = 0;
    const auto [end, ec] = std::from_chars(literal.data(), literal.data() + literal.size(), value);
    if (ec == std::errc::result_out_of_range) value = OutOfRange(literal, negative);
    // Integers within 2^53 are kept as integers only so that evidence prints them as written.
    if (integral && std::fabs(value) < 9007199254740992.0 && !(value == 0 && negative)) {
      out = static_cast<int64_t>(value);
    } else {
      out = value;
    }
    return true;
  }

  // What JavaScript makes of a literal beyond double range: ±Infinity when its magnitude is at
  // least 1, else ±0.
  static double OutOfRange(std::string_view literal, bool negative) {
    int64_t order = 0;  // the power of ten of the first significant digit
    size_t k = negative ? 1 : 0;
    int64_t int_digits = 0;
    bool seen = false;
    for (; k < literal.size() && IsDigit(literal[k]); ++k) {
      if (literal[k] != '0') seen = true;
      if (seen) ++int_digits;
    }
    if (seen) {
      order = int_digits - 1;
    } else if (k < literal.size() && literal[k] == '.') {
      int64_t zeros = 0;
      for (++k; k < literal.size() && literal[k] == '0'; ++k) ++zeros;
      order = -zeros - 1;
    }
    while (k < literal.size() && literal[k] != 'e' && literal[k] != 'E') ++k;
    if (k < literal.size()) {
      ++k;
      const bool minus = literal[k] == '-';
      if (literal[k] == '+' || literal[k] == '-') ++k;
      int64_t exponent = 0;
      for (; k < literal.size(); ++k) {
        exponent = std::min<int64_t>(exponent * 10 + (literal[k] - '0'), 1'000'000'000);
      }
      order += minus ? -exponent : exponent;
    }
    const double magnitude = order >= 0 ? HUGE_VAL : 0.0;
    return negative ? -magnitude : magnitude;
  }

  std::string_view s_;
  size_t i_ = 0;
  std::string error_;
};

// ---- JavaScript value semantics -----------------------------------------------------------------

double Num(const json& v) {
  return v.get<double>();
}

// Node's util.isDeepStrictEqual for JSON values: numbers by Object.is (0 and -0 differ).
bool DeepStrictEqual(const json& a, const json& b) {
  if (a.is_number() || b.is_number()) {
    if (!a.is_number() || !b.is_number()) return false;
    const double x = Num(a), y = Num(b);
    return x == y && std::signbit(x) == std::signbit(y);
  }
  if (a.type() != b.type()) return false;
  if (a.is_array()) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!DeepStrictEqual(a[i], b[i])) return false;
    }
    return true;
  }
  if (a.is_object()) {
    if (a.size() != b.size()) return false;
    for (const auto& [key, value] : a.items()) {
      const auto it = b.find(key);
      if (it == b.end() || !DeepStrictEqual(value, *it)) return false;
    }
    return true;
  }
  return a == b;
}

// AJV's `equal` (fast-deep-equal) for enum, const and uniqueItems: numbers by === (0 equals -0).
bool DeepEqual(const json& a, const json& b) {
  if (a.is_number() || b.is_number()) return a.is_number() && b.is_number() && Num(a) == Num(b);
  if (a.type() != b.type()) return false;
  if (a.is_array()) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!DeepEqual(a[i], b[i])) return false;
    }
    return true;
  }
  if (a.is_object()) {
    if (a.size() != b.size()) return false;
    for (const auto& [key, value] : a.items()) {
      const auto it = b.find(key);
      if (it == b.end() || !DeepEqual(value, *it)) return false;
    }
    return true;
  }
  return a == b;
}

// A text that is equal for two values exactly when DeepEqual is (uniqueItems in linear time).
void EqualityKey(const json& v, std::string& out) {
  switch (v.type()) {
    case json::value_t::null:
      out += 'n';
      return;
    case json::value_t::boolean:
      out += v.get<bool>() ? 't' : 'f';
      return;
    case json::value_t::string: {
      const auto& s = v.get_ref<const std::string&>();
      out += 's' + std::to_string(s.size()) + ':' + s;
      return;
    }
    case json::value_t::array:
      out += '[';
      for (const auto& item : v) EqualityKey(item, out);
      out += ']';
      return;
    case json::value_t::object:
      out += '{';  // nlohmann keeps keys sorted, so equal objects list them alike
      for (const auto& [key, item] : v.items()) {
        out += std::to_string(key.size()) + ':' + key;
        EqualityKey(item, out);
      }
      out += '}';
      return;
    default: {
      double d = Num(v);
      if (d == 0) d = 0;  // -0 === 0
      char buffer[32];
      const auto result = std::to_chars(buffer, buffer + sizeof buffer, d);
      out += 'd';
      out.append(buffer, result.ptr);
      out += ';';
      return;
    }
  }
}

bool Truthy(const json& v) {  // JavaScript's ToBoolean
  switch (v.type()) {
    case json::value_t::null:
      return false;
    case json::value_t::boolean:
      return v.get<bool>();
    case json::value_t::string:
      return !v.get_ref<const std::string&>().empty();
    case json::value_t::array:
    case json::value_t::object:
      return true;
    default:
      return Num(v) != 0;
  }
}

bool IsInteger(double d) {
  return std::isfinite(d) && std::floor(d) == d;
}

// ---- Formats: ajv-formats 3.0.1, full mode ------------------------------------------------------

bool Matches(const char* pattern, const char* flags, std::string_view s, bool* gave_up) {
  const auto result = Regex::Compile(pattern, flags)->Match(s, false);
  if (result == Regex::Result::kGaveUp) *gave_up = true;
  return result == Regex::Result::kMatch;
}

bool Digits(std::string_view s, size_t at, size_t count) {
  if (at + count > s.size()) return false;
  for (size_t k = at; k < at + count; ++k) {
    if (!IsDigit(s[k])) return false;
  }
  return true;
}
int Int2(std::string_view s, size_t at) {
  return (s[at] - '0') * 10 + (s[at + 1] - '0');
}

// date: /^(\d\d\d\d)-(\d\d)-(\d\d)$/ and a real calendar day.
bool IsDate(std::string_view s) {
  if (s.size() != 10 || !Digits(s, 0, 4) || s[4] != '-' || !Digits(s, 5, 2) || s[7] != '-' ||
      !Digits(s, 8, 2)) {
    return false;
  }
  const int year = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + Int2(s, 2);
  const int month = Int2(s, 5), day = Int2(s, 8);
  static constexpr int kDays[] = {0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
  return month >= 1 && month <= 12 && day >= 1 && day <= (month == 2 && leap ? 29 : kDays[month]);
}

// time: /^(\d\d):(\d\d):(\d\d(?:\.\d+)?)(z|([+-])(\d\d)(?::?(\d\d))?)?$/i, with the leap-second
// rule of ajv-formats 3 (23:59:60 UTC only).
bool IsTime(std::string_view s, bool strict_time_zone) {
  if (!Digits(s, 0, 2) || s.size() < 8 || s[2] != ':' || !Digits(s, 3, 2) || s[5] != ':' ||
      !Digits(s, 6, 2)) {
    return false;
  }
  size_t k = 8;
  double fraction = 0;
  if (k < s.size() && s[k] == '.') {
    const size_t begin = ++k;
    double scale = 0.1;
    while (k < s.size() && IsDigit(s[k])) {
      fraction += (s[k] - '0') * scale;
      scale /= 10;
      ++k;
    }
    if (k == begin) return false;
  }
  bool tz = false;
  int sign = 1, tz_hour = 0, tz_minute = 0;
  if (k < s.size()) {
    tz = true;
    if (s[k] == 'z' || s[k] == 'Z') {
      ++k;
    } else if (s[k] == '+' || s[k] == '-') {
      sign = s[k] == '-' ? -1 : 1;
      if (!Digits(s, k + 1, 2)) return false;
      tz_hour = Int2(s, k + 1);
      k += 3;
      if (k < s.size() && s[k] == ':' && Digits(s, k + 1, 2)) {
        tz_minute = Int2(s, k + 1);
        k += 3;
      } else if (Digits(s, k, 2)) {
        tz_minute = Int2(s, k);
        k += 2;
      }
    } else {
      return false;
    }
    if (k != s.size()) return false;
  }
  const int hour = Int2(s, 0), minute = Int2(s, 3);
  const double second = Int2(s, 6) + fraction;
  if (tz_hour > 23 || tz_minute > 59 || (strict_time_zone && !tz)) return false;
  if (hour <= 23 && minute <= 59 && second < 60) return true;
  const int utc_minute = minute - tz_minute * sign;
  const int utc_hour = hour - tz_hour * sign - (utc_minute < 0 ? 1 : 0);
  return (utc_hour == 23 || utc_hour == -1) && (utc_minute == 59 || utc_minute == -1) &&
         second < 61;
}

// date-time: split on /t|\s/i (JavaScript's \s) into exactly two parts.
bool IsDateTime(std::string_view s, bool strict_time_zone) {
  size_t separator = std::string_view::npos, after = 0;
  for (size_t i = 0; i < s.size();) {
    const size_t at = i;
    const char32_t c = NextCodePoint(s, i);
    if (c == 't' || c == 'T' || IsJsSpace(c)) {
      if (separator != std::string_view::npos) return false;
      separator = at;
      after = i;
    }
  }
  if (separator == std::string_view::npos) return false;
  return IsDate(s.substr(0, separator)) && IsTime(s.substr(after), strict_time_zone);
}

constexpr const char* kUriReference =
    R"(^(?:[a-z][a-z0-9+\-.]*:)?(?:\/?\/(?:(?:[a-z0-9\-._~!$&'()*+,;=:]|%[0-9a-f]{2})*@)?(?:\[(?:(?:(?:(?:[0-9a-f]{1,4}:){6}|::(?:[0-9a-f]{1,4}:){5}|(?:[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){4}|(?:(?:[0-9a-f]{1,4}:){0,1}[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){3}|(?:(?:[0-9a-f]{1,4}:){0,2}[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){2}|(?:(?:[0-9a-f]{1,4}:){0,3}[0-9a-f]{1,4})?::[0-9a-f]{1,4}:|(?:(?:[0-9a-f]{1,4}:){0,4}[0-9a-f]{1,4})?::)(?:[0-9a-f]{1,4}:[0-9a-f]{1,4}|(?:(?:25[0-5]|2[0-4]\d|[01]?\d\d?)\.){3}(?:25[0-5]|2[0-4]\d|[01]?\d\d?))|(?:(?:[0-9a-f]{1,4}:){0,5}[0-9a-f]{1,4})?::[0-9a-f]{1,4}|(?:(?:[0-9a-f]{1,4}:){0,6}[0-9a-f]{1,4})?::)|[Vv][0-9a-f]+\.[a-z0-9\-._~!$&'()*+,;=:]+)\]|(?:(?:25[0-5]|2[0-4]\d|[01]?\d\d?)\.){3}(?:25[0-5]|2[0-4]\d|[01]?\d\d?)|(?:[a-z0-9\-._~!$&'"()*+,;=]|%[0-9a-f]{2})*)(?::\d*)?(?:\/(?:[a-z0-9\-._~!$&'"()*+,;=:@]|%[0-9a-f]{2})*)*|\/(?:(?:[a-z0-9\-._~!$&'"()*+,;=:@]|%[0-9a-f]{2})+(?:\/(?:[a-z0-9\-._~!$&'"()*+,;=:@]|%[0-9a-f]{2})*)*)?|(?:[a-z0-9\-._~!$&'"()*+,;=:@]|%[0-9a-f]{2})+(?:\/(?:[a-z0-9\-._~!$&'"()*+,;=:@]|%[0-9a-f]{2})*)*)?(?:\?(?:[a-z0-9\-._~!$&'"()*+,;=:@/?]|%[0-9a-f]{2})*)?(?:#(?:[a-z0-9\-._~!$&'"()*+,;=:@/?]|%[0-9a-f]{2})*)?$)";
constexpr const char* kUri =
    R"(^(?:[a-z][a-z0-9+\-.]*:)(?:\/?\/(?:(?:[a-z0-9\-._~!$&'()*+,;=:]|%[0-9a-f]{2})*@)?(?:\[(?:(?:(?:(?:[0-9a-f]{1,4}:){6}|::(?:[0-9a-f]{1,4}:){5}|(?:[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){4}|(?:(?:[0-9a-f]{1,4}:){0,1}[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){3}|(?:(?:[0-9a-f]{1,4}:){0,2}[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){2}|(?:(?:[0-9a-f]{1,4}:){0,3}[0-9a-f]{1,4})?::[0-9a-f]{1,4}:|(?:(?:[0-9a-f]{1,4}:){0,4}[0-9a-f]{1,4})?::)(?:[0-9a-f]{1,4}:[0-9a-f]{1,4}|(?:(?:25[0-5]|2[0-4]\d|[01]?\d\d?)\.){3}(?:25[0-5]|2[0-4]\d|[01]?\d\d?))|(?:(?:[0-9a-f]{1,4}:){0,5}[0-9a-f]{1,4})?::[0-9a-f]{1,4}|(?:(?:[0-9a-f]{1,4}:){0,6}[0-9a-f]{1,4})?::)|[Vv][0-9a-f]+\.[a-z0-9\-._~!$&'()*+,;=:]+)\]|(?:(?:25[0-5]|2[0-4]\d|[01]?\d\d?)\.){3}(?:25[0-5]|2[0-4]\d|[01]?\d\d?)|(?:[a-z0-9\-._~!$&'()*+,;=]|%[0-9a-f]{2})*)(?::\d*)?(?:\/(?:[a-z0-9\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*|\/(?:(?:[a-z0-9\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})+(?:\/(?:[a-z0-9\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*)?|(?:[a-z0-9\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})+(?:\/(?:[a-z0-9\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*)(?:\?(?:[a-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9a-f]{2})*)?(?:#(?:[a-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9a-f]{2})*)?$)";
constexpr const char* kIpv6 =
    R"(^((([0-9a-f]{1,4}:){7}([0-9a-f]{1,4}|:))|(([0-9a-f]{1,4}:){6}(:[0-9a-f]{1,4}|((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3})|:))|(([0-9a-f]{1,4}:){5}(((:[0-9a-f]{1,4}){1,2})|:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3})|:))|(([0-9a-f]{1,4}:){4}(((:[0-9a-f]{1,4}){1,3})|((:[0-9a-f]{1,4})?:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}))|:))|(([0-9a-f]{1,4}:){3}(((:[0-9a-f]{1,4}){1,4})|((:[0-9a-f]{1,4}){0,2}:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}))|:))|(([0-9a-f]{1,4}:){2}(((:[0-9a-f]{1,4}){1,5})|((:[0-9a-f]{1,4}){0,3}:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}))|:))|(([0-9a-f]{1,4}:){1}(((:[0-9a-f]{1,4}){1,6})|((:[0-9a-f]{1,4}){0,4}:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}))|:))|(:(((:[0-9a-f]{1,4}){1,7})|((:[0-9a-f]{1,4}){0,5}:((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}))|:)))$)";

// One row of ajv-formats' full formats: a regular expression with its flags, or a function.
struct FormatRow {
  const char* name;
  bool numeric;         // applies to numbers ({type: "number"}), else to strings
  const char* pattern;  // nullptr: see CheckFormat
  const char* flags;
};
constexpr FormatRow kFormats[] = {
    {"date", false, nullptr, ""},
    {"time", false, nullptr, ""},
    {"date-time", false, nullptr, ""},
    {"iso-time", false, nullptr, ""},
    {"iso-date-time", false, nullptr, ""},
    {"duration", false, R"(^P(?!$)((\d+Y)?(\d+M)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+S)?)?|(\d+W)?)$)",
     ""},
    {"uri", false, nullptr, ""},
    {"uri-reference", false, kUriReference, "i"},
    {"uri-template", false,
     R"(^(?:(?:[^\x00-\x20"'<>%\\^`{|}]|%[0-9a-f]{2})|\{[+#./;?&=,!@|]?(?:[a-z0-9_]|%[0-9a-f]{2})+(?::[1-9][0-9]{0,3}|\*)?(?:,(?:[a-z0-9_]|%[0-9a-f]{2})+(?::[1-9][0-9]{0,3}|\*)?)*\})*$)",
     "i"},
    {"url", false,
     R"(^(?:https?|ftp):\/\/(?:\S+(?::\S*)?@)?(?:(?!(?:10|127)(?:\.\d{1,3}){3})(?!(?:169\.254|192\.168)(?:\.\d{1,3}){2})(?!172\.(?:1[6-9]|2\d|3[0-1])(?:\.\d{1,3}){2})(?:[1-9]\d?|1\d\d|2[01]\d|22[0-3])(?:\.(?:1?\d{1,2}|2[0-4]\d|25[0-5])){2}(?:\.(?:[1-9]\d?|1\d\d|2[0-4]\d|25[0-4]))|(?:(?:[a-z0-9\u{00a1}-\u{ffff}]+-)*[a-z0-9\u{00a1}-\u{ffff}]+)(?:\.(?:[a-z0-9\u{00a1}-\u{ffff}]+-)*[a-z0-9\u{00a1}-\u{ffff}]+)*(?:\.(?:[a-z\u{00a1}-\u{ffff}]{2,})))(?::\d{2,5})?(?:\/[^\s]*)?$)",
     "iu"},
    {"email", false,
     R"(^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$)",
     "i"},
    {"hostname", false,
     R"(^(?=.{1,253}\.?$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[-0-9a-z]{0,61}[0-9a-z])?)*\.?$)",
     "i"},
    {"ipv4", false, R"(^(?:(?:25[0-5]|2[0-4]\d|[01]?\d\d?)\.){3}(?:25[0-5]|2[0-4]\d|[01]?\d\d?)$)",
     ""},
    {"ipv6", false, kIpv6, "i"},
    {"regex", false, nullptr, ""},
    {"uuid", false, R"(^(?:urn:uuid:)?[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}$)", "i"},
    {"json-pointer", false, R"(^(?:\/(?:[^~/]|~0|~1)*)*$)", ""},
    {"json-pointer-uri-fragment", false,
     R"(^#(?:\/(?:[a-z0-9_\-.!$&'()*+,;:=@]|%[0-9a-f]{2}|~0|~1)*)*$)", "i"},
    {"relative-json-pointer", false, R"(^(?:0|[1-9][0-9]*)(?:#|(?:\/(?:[^~/]|~0|~1)*)*)$)", ""},
    {"byte", false, R"(^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$)", "m"},
    {"int32", true, nullptr, ""},
    {"int64", true, nullptr, ""},
    {"float", true, nullptr, ""},
    {"double", true, nullptr, ""},
    {"password", false, nullptr, ""},
    {"binary", false, nullptr, ""},
};

const FormatRow* FindFormat(std::string_view name) {
  for (const auto& row : kFormats) {
    if (name == row.name) return &row;
  }
  return nullptr;
}

// Whether `data` satisfies the format; values of the other JSON type always do.
bool CheckFormat(const FormatRow& format, const json& data, bool* gave_up) {
  const std::string_view name = format.name;
  if (format.numeric) {
    if (!data.is_number()) return true;
    const double d = Num(data);
    if (name == "int32") return IsInteger(d) && d >= -2147483648.0 && d <= 2147483647.0;
    if (name == "int64") return IsInteger(d);
    return true;  // float, double
  }
  if (!data.is_string()) return true;
  const std::string& s = data.get_ref<const std::string&>();
  if (format.pattern != nullptr) return Matches(format.pattern, format.flags, s, gave_up);
  if (name == "date") return IsDate(s);
  if (name == "time") return IsTime(s, true);
  if (name == "iso-time") return IsTime(s, false);
  if (name == "date-time") return IsDateTime(s, true);
  if (name == "iso-date-time") return IsDateTime(s, false);
  if (name == "uri") {
    return s.find_first_of("/:") != std::string::npos && Matches(kUri, "i", s, gave_up);
  }
  if (name == "regex") {
    // /[^\\]\\Z/ refuses a \Z anchor; otherwise `new RegExp(str)` must compile.
    for (size_t i = 0; i + 2 < s.size(); ++i) {
      if (s[i] != '\\' && s[i + 1] == '\\' && s[i + 2] == 'Z') return false;
    }
    try {
      Regex::Compile(s, "");
      return true;
    } catch (const Error&) {
      return false;
    }
  }
  return true;  // password, binary
}

// ---- The contract -------------------------------------------------------------------------------

enum class Dialect { kDraft07, k2020 };

struct Assertion {
  std::string pointer;
  const json* expected = nullptr;
};

struct Resolved {
  const json* schema;
  const json* resource;  // where "#..." references inside `schema` resolve
};

// requirements of one entry, checked as zx-bench's prepareStructuredContract and
// prepareExtendedContract check them. Points into the entry, which outlives it.
struct Contract {
  int version = 1;  // structured_contract_vN
  std::string format;
  Dialect dialect = Dialect::kDraft07;
  bool format_assertions = true;
  const json* schema = nullptr;
  const json* content_schema = nullptr;
  const json* references = nullptr;  // object: URI -> schema, or nullptr
  std::vector<Assertion> assertions;
  std::string skip;  // why evalrun cannot grade this entry as zx-bench does; "" when it can

  std::optional<Resolved> Resolve(const std::string& ref, const json* resource) const;
};

// A subschema that starts a new resource: an object with a non-fragment $id.
bool IsResource(const json& schema) {
  if (!schema.is_object()) return false;
  const auto it = schema.find("$id");
  return it != schema.end() && it->is_string() && !it->get_ref<const std::string&>().empty() &&
         it->get_ref<const std::string&>()[0] != '#';
}

std::optional<std::string> PercentDecode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size()) return std::nullopt;
    int value = 0;
    for (size_t k = i + 1; k <= i + 2; ++k) {
      const char h = s[k];
      value *= 16;
      if (h >= '0' && h <= '9') {
        value += h - '0';
      } else if (h >= 'a' && h <= 'f') {
        value += h - 'a' + 10;
      } else if (h >= 'A' && h <= 'F') {
        value += h - 'A' + 10;
      } else {
        return std::nullopt;
      }
    }
    out += static_cast<char>(value);
    i += 2;
  }
  return out;
}

// The schema in `document` with `$anchor` (or draft-07's `$id: "#name"`) equal to `name`.
const json* FindAnchor(const json& node, const std::string& name, int depth) {
  if (depth > kMaxSchemaDepth) return nullptr;
  if (node.is_object()) {
    for (const char* key : {"$anchor", "$dynamicAnchor"}) {
      const auto it = node.find(key);
      if (it != node.end() && *it == name) return &node;
    }
    const auto id = node.find("$id");
    if (id != node.end() && *id == "#" + name) return &node;
    for (const auto& [key, child] : node.items()) {
      if (key == "enum" || key == "const" || key == "default" || key == "examples") continue;
      if (const json* hit = FindAnchor(child, name, depth + 1)) return hit;
    }
  } else if (node.is_array()) {
    for (const auto& child : node) {
      if (const json* hit = FindAnchor(child, name, depth + 1)) return hit;
    }
  }
  return nullptr;
}

// The subschema of `node` whose $id is exactly `uri` (absolute identifiers only: relative ones
// are not resolved against a base).
const json* FindResource(const json& node, const std::string& uri, int depth) {
  if (depth > kMaxSchemaDepth) return nullptr;
  if (node.is_object()) {
    if (Member(node, "$id") == uri) return &node;
    for (const auto& [key, child] : node.items()) {
      if (key == "enum" || key == "const" || key == "default" || key == "examples") continue;
      if (const json* hit = FindResource(child, uri, depth + 1)) return hit;
    }
  } else if (node.is_array()) {
    for (const auto& child : node) {
      if (const json* hit = FindResource(child, uri, depth + 1)) return hit;
    }
  }
  return nullptr;
}

std::optional<Resolved> Contract::Resolve(const std::string& ref, const json* resource) const {
  const size_t hash = ref.find('#');
  const std::string base = ref.substr(0, hash);
  const std::string raw_fragment = hash == std::string::npos ? "" : ref.substr(hash + 1);
  const json* document = resource;
  if (!base.empty()) {
    document = nullptr;
    if (references != nullptr) {
      const auto it = references->find(base);
      if (it != references->end()) document = &*it;
      for (const auto& [uri, schema_value] : references->items()) {
        if (document == nullptr && schema_value.is_object() &&
            Member(schema_value, "$id") == base) {
          document = &schema_value;
        }
      }
    }
    if (document == nullptr) document = FindResource(*schema, base, 0);
    if (document == nullptr && references != nullptr) {
      for (const auto& [uri, schema_value] : references->items()) {
        if (document == nullptr) document = FindResource(schema_value, base, 0);
      }
    }
    if (document == nullptr) return std::nullopt;
  }
  const auto fragment = PercentDecode(raw_fragment);
  if (!fragment) return std::nullopt;
  if (fragment->empty()) return Resolved{document, document};
  if ((*fragment)[0] != '/') {
    const json* hit = FindAnchor(*document, *fragment, 0);
    if (hit == nullptr) return std::nullopt;
    return Resolved{hit, IsResource(*hit) ? hit : document};
  }
  const json* node = document;
  const json* node_resource = document;
  size_t start = 1;
  for (;;) {
    const size_t slash = fragment->find('/', start);
    std::string token =
        fragment->substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    std::string key;
    for (size_t i = 0; i < token.size(); ++i) {
      if (token[i] == '~' && i + 1 < token.size() && (token[i + 1] == '0' || token[i + 1] == '1')) {
        key += token[i + 1] == '0' ? '~' : '/';
        ++i;
      } else {
        key += token[i];
      }
    }
    if (node->is_object()) {
      const auto it = node->find(key);
      if (it == node->end()) return std::nullopt;
      node = &*it;
    } else if (node->is_array()) {
      if (key.empty() || !std::all_of(key.begin(), key.end(), IsDigit) ||
          (key.size() > 1 && key[0] == '0') || key.size() > 9) {
        return std::nullopt;
      }
      const size_t index = std::stoul(key);
      if (index >= node->size()) return std::nullopt;
      node = &(*node)[index];
    } else {
      return std::nullopt;
    }
    if (IsResource(*node)) node_resource = node;
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  if (!node->is_object() && !node->is_boolean()) return std::nullopt;
  return Resolved{node, node_resource};
}

// ---- Schemas as AJV compiles them (strict mode) ---------------------------------------------

const std::set<std::string, std::less<>>& Keywords(Dialect dialect) {
  static const std::set<std::string, std::less<>> kCommon = {"$schema",
                                                             "$id",
                                                             "$ref",
                                                             "$comment",
                                                             "$defs",
                                                             "definitions",
                                                             "$vocabulary",
                                                             "type",
                                                             "enum",
                                                             "const",
                                                             "multipleOf",
                                                             "maximum",
                                                             "exclusiveMaximum",
                                                             "minimum",
                                                             "exclusiveMinimum",
                                                             "maxLength",
                                                             "minLength",
                                                             "pattern",
                                                             "maxItems",
                                                             "minItems",
                                                             "uniqueItems",
                                                             "maxProperties",
                                                             "minProperties",
                                                             "required",
                                                             "properties",
                                                             "patternProperties",
                                                             "additionalProperties",
                                                             "propertyNames",
                                                             "dependencies",
                                                             "items",
                                                             "contains",
                                                             "allOf",
                                                             "anyOf",
                                                             "oneOf",
                                                             "not",
                                                             "if",
                                                             "then",
                                                             "else",
                                                             "format",
                                                             "title",
                                                             "description",
                                                             "default",
                                                             "deprecated",
                                                             "readOnly",
                                                             "writeOnly",
                                                             "examples",
                                                             "contentEncoding",
                                                             "contentMediaType",
                                                             "contentSchema",
                                                             "nullable"};
  static const std::set<std::string, std::less<>> kDraft07 = [] {
    auto keys = kCommon;
    keys.insert("additionalItems");
    return keys;
  }();
  static const std::set<std::string, std::less<>> k2020 = [] {
    auto keys = kCommon;
    for (const char* key :
         {"prefixItems", "dependentRequired", "dependentSchemas", "minContains", "maxContains",
          "unevaluatedProperties", "unevaluatedItems", "$dynamicRef", "$dynamicAnchor"}) {
      keys.insert(key);
    }
    return keys;
  }();
  return dialect == Dialect::k2020 ? k2020 : kDraft07;
}

bool IsTypeName(const json& v) {
  static const std::set<std::string, std::less<>> kTypes = {"null",   "boolean", "object", "array",
                                                            "number", "integer", "string"};
  return v.is_string() && kTypes.count(v.get_ref<const std::string&>()) > 0;
}

bool IsNonNegativeInteger(const json& v) {
  return v.is_number() && IsInteger(Num(v)) && Num(v) >= 0;
}

bool IsStringArray(const json& v, bool unique) {
  if (!v.is_array()) return false;
  std::set<std::string> seen;
  for (const auto& item : v) {
    if (!item.is_string()) return false;
    if (unique && !seen.insert(item.get<std::string>()).second) return false;
  }
  return true;
}

std::string PointerToken(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

// Checks one schema (and every subschema) the way AJV's strict compile would refuse it: unknown
// keywords, values its meta-schema rejects, unresolvable references, bad patterns, unknown
// formats, keywords strict mode calls ignored. Throws ContractError naming the place.
class SchemaRules {
 public:
  explicit SchemaRules(const Contract& contract) : contract_(contract) {}

  void Check(const json& schema, const json* resource, const std::string& at, int depth) const {
    if (depth > kMaxSchemaDepth) Throw(at, "schema nested deeper than 128 levels");
    if (schema.is_boolean()) return;
    if (!schema.is_object()) Throw(at, "a schema must be an object or a boolean");
    if (IsResource(schema)) resource = &schema;
    const auto& known = Keywords(contract_.dialect);
    for (const auto& [key, value] : schema.items()) {
      if (known.count(key) == 0) {
        Throw(at, "unknown keyword '" + key + "' (AJV's strict mode refuses it)");
      }
      CheckKeyword(key, value, resource, at + "/" + PointerToken(key), depth);
    }
    const auto has = [&](const char* key) { return schema.contains(key); };
    if (has("if") && !has("then") && !has("else")) {
      Throw(at, "\"if\" without \"then\" and \"else\" is ignored (strict mode)");
    }
    for (const char* key : {"then", "else"}) {
      if (has(key) && !has("if"))
        Throw(at, std::string("\"") + key + "\" without \"if\" is ignored");
    }
    if (contract_.dialect == Dialect::kDraft07 && has("additionalItems") &&
        !schema["items"].is_array()) {
      Throw(at, "\"additionalItems\" is ignored when \"items\" is not an array of schemas");
    }
    for (const char* key : {"minContains", "maxContains"}) {
      if (has(key) && !has("contains")) {
        Throw(at, std::string("\"") + key + "\" without \"contains\" is ignored");
      }
    }
    if (has("contains") && contract_.dialect == Dialect::k2020) {
      const bool max = has("maxContains");
      const double min = has("minContains") ? Num(schema["minContains"]) : 1;
      if (!max && min == 0) Throw(at, "\"minContains\" == 0 without \"maxContains\"");
      if (max && min > Num(schema["maxContains"])) {
        Throw(at, "\"minContains\" > \"maxContains\" is always invalid");
      }
    }
    if (Member(schema, "nullable") == true && !has("type")) {
      Throw(at, "\"nullable\" cannot be used without \"type\"");
    }
  }

 private:
  [[noreturn]] static void Throw(const std::string& at, const std::string& problem) {
    throw ContractError(at + ": " + problem);
  }

  void Schemas(const json& value, const json* resource, const std::string& at, int depth,
               bool non_empty) const {
    if (!value.is_array() || (non_empty && value.empty())) {
      Throw(at, "must be a non-empty array of schemas");
    }
    for (size_t i = 0; i < value.size(); ++i) {
      Check(value[i], resource, at + "/" + std::to_string(i), depth + 1);
    }
  }

  void SchemaMap(const json& value, const json* resource, const std::string& at, int depth) const {
    if (!value.is_object()) Throw(at, "must be an object of schemas");
    for (const auto& [key, item] : value.items()) {
      Check(item, resource, at + "/" + PointerToken(key), depth + 1);
    }
  }

  static void Pattern(const std::string& pattern, const std::string& at) {
    try {
      Regex::Compile(pattern, "u");
    } catch (const Error& e) {
      Throw(at, std::string("invalid regular expression: ") + e.what());
    }
  }

  void CheckKeyword(const std::string& key, const json& value, const json* resource,
                    const std::string& at, int depth) const {
    const bool draft07 = contract_.dialect == Dialect::kDraft07;
    if (key == "type") {
      if (value.is_array()) {
        std::set<std::string> seen;
        for (const auto& t : value) {
          if (!IsTypeName(t) || !seen.insert(t.get<std::string>()).second) {
            Throw(at, "must be a type name or an array of distinct type names");
          }
        }
      } else if (!IsTypeName(value)) {
        Throw(at, "must be a type name or an array of distinct type names");
      }
    } else if (key == "enum" || key == "examples") {
      if (!value.is_array()) Throw(at, "must be an array");
    } else if (key == "multipleOf") {
      if (!value.is_number() || Num(value) <= 0) Throw(at, "must be a number greater than 0");
    } else if (key == "maximum" || key == "minimum" || key == "exclusiveMaximum" ||
               key == "exclusiveMinimum") {
      if (!value.is_number()) Throw(at, "must be a number");
    } else if (key == "maxLength" || key == "minLength" || key == "maxItems" || key == "minItems" ||
               key == "maxProperties" || key == "minProperties" || key == "minContains" ||
               key == "maxContains") {
      if (!IsNonNegativeInteger(value)) Throw(at, "must be a non-negative integer");
    } else if (key == "pattern") {
      if (!value.is_string()) Throw(at, "must be a string");
      Pattern(value.get<std::string>(), at);
    } else if (key == "required") {
      if (!IsStringArray(value, true)) Throw(at, "must be an array of distinct strings");
    } else if (key == "uniqueItems" || key == "readOnly" || key == "writeOnly" ||
               key == "deprecated" || key == "nullable") {
      if (!value.is_boolean()) Throw(at, "must be a boolean");
    } else if (key == "properties" || key == "$defs" || key == "definitions" ||
               key == "dependentSchemas") {
      SchemaMap(value, resource, at, depth);
    } else if (key == "patternProperties") {
      SchemaMap(value, resource, at, depth);
      for (const auto& [pattern, item] : value.items()) Pattern(pattern, at + "/" + pattern);
    } else if (key == "dependencies") {
      if (!value.is_object()) Throw(at, "must be an object");
      for (const auto& [name, item] : value.items()) {
        if (item.is_array()) {
          if (!IsStringArray(item, true)) Throw(at + "/" + PointerToken(name), "must be strings");
        } else {
          Check(item, resource, at + "/" + PointerToken(name), depth + 1);
        }
      }
    } else if (key == "dependentRequired") {
      if (!value.is_object()) Throw(at, "must be an object");
      for (const auto& [name, item] : value.items()) {
        if (!IsStringArray(item, true)) Throw(at + "/" + PointerToken(name), "must be strings");
      }
    } else if (key == "items") {
      if (draft07 && value.is_array()) {
        Schemas(value, resource, at, depth, true);
      } else {
        Check(value, resource, at, depth + 1);
      }
    } else if (key == "prefixItems" || key == "allOf" || key == "anyOf" || key == "oneOf") {
      Schemas(value, resource, at, depth, true);
    } else if (key == "additionalProperties" || key == "propertyNames" || key == "contains" ||
               key == "not" || key == "if" || key == "then" || key == "else" ||
               key == "unevaluatedProperties" || key == "unevaluatedItems" ||
               key == "additionalItems" || key == "contentSchema") {
      Check(value, resource, at, depth + 1);
    } else if (key == "format") {
      if (!value.is_string()) Throw(at, "must be a string");
      if (contract_.format_assertions && FindFormat(value.get<std::string>()) == nullptr) {
        Throw(at, "unknown format \"" + value.get<std::string>() + "\"");
      }
    } else if (key == "$ref" || key == "$dynamicRef") {
      if (!value.is_string()) Throw(at, "must be a string");
      if (key == "$ref" && !contract_.Resolve(value.get<std::string>(), resource)) {
        Throw(at, "can't resolve reference " + value.get<std::string>());
      }
    } else if (key == "$vocabulary") {
      if (!value.is_object()) Throw(at, "must be an object");
    } else if (key != "const" && key != "default") {
      if (!value.is_string()) Throw(at, "must be a string");  // $id, $comment, title, ...
    }
  }

  const Contract& contract_;
};

// structuredContractV2.ts prepareExtendedContract: schemas with $dynamicRef, or "if" and "else"
// without "then", are refused (its walk, not AJV's: map values and the listed applicators).
bool V2ProfileRefuses(const json& x, int depth) {
  if (!x.is_object() || depth > kMaxSchemaDepth) return false;
  if (x.contains("$dynamicRef") ||
      (x.contains("if") && x.contains("else") && !x.contains("then"))) {
    return true;
  }
  for (const char* key : {"properties", "patternProperties", "$defs", "definitions",
                          "dependentSchemas", "dependencies"}) {
    const json& map = Member(x, key);
    if (map.is_object()) {
      for (const auto& [name, value] : map.items()) {
        if (!value.is_array() && V2ProfileRefuses(value, depth + 1)) return true;
      }
    }
  }
  for (const char* key :
       {"allOf", "anyOf", "oneOf", "items", "prefixItems", "additionalItems",
        "additionalProperties", "unevaluatedProperties", "unevaluatedItems", "not", "if", "then",
        "else", "contains", "propertyNames", "contentSchema"}) {
    const json& value = Member(x, key);
    if (value.is_array()) {
      for (const auto& item : value) {
        if (V2ProfileRefuses(item, depth + 1)) return true;
      }
    } else if (V2ProfileRefuses(value, depth + 1)) {
      return true;
    }
  }
  return false;
}

bool UsesDynamicRef(const json& x, int depth) {
  if (depth > kMaxSchemaDepth) return false;
  if (x.is_object()) {
    if (x.contains("$dynamicRef") || x.contains("$dynamicAnchor")) return true;
    for (const auto& [key, value] : x.items()) {
      if (key != "enum" && key != "const" && key != "default" && key != "examples" &&
          UsesDynamicRef(value, depth + 1)) {
        return true;
      }
    }
  } else if (x.is_array()) {
    for (const auto& value : x) {
      if (UsesDynamicRef(value, depth + 1)) return true;
    }
  }
  return false;
}

// Reads and checks the contract. Throws ContractError for what zx-bench reports as unavailable.
Contract ReadContract(const json& spec) {
  if (!spec.is_object()) throw ContractError("the spec must be the zx-bench entry (a JSON object)");
  Contract c;
  const json& version = Member(spec, "graderVersion");
  static const std::map<std::string, int, std::less<>> kVersions = {{"structured_contract_v1", 1},
                                                                    {"structured_contract_v2", 2},
                                                                    {"structured_contract_v3", 3},
                                                                    {"structured_contract_v4", 4}};
  if (!version.is_string() || kVersions.count(version.get<std::string>()) == 0) {
    throw ContractError(
        "graderVersion must be one of structured_contract_v1 to _v4, got " +
        (version.is_string() ? "'" + version.get<std::string>() + "'" : JsonTypeName(version)));
  }
  c.version = kVersions.find(version.get<std::string>())->second;
  const json& req = Member(spec, "requirements");
  if (!req.is_object()) throw ContractError("requirements must be an object");

  const json& format = Member(req, "format");
  c.format = format.is_string() ? format.get<std::string>() : std::string();
  static const std::set<std::string, std::less<>> kExtended = {"json", "csv",  "xml",
                                                               "toml", "yaml", "svg"};
  if (c.version == 1 && c.format != "json") {
    throw ContractError(
        "requirements.format: structured_contract_v1 grades only 'json' "
        "(zx-bench: Incomplete structured contract)");
  }
  if (kExtended.count(c.format) == 0) {
    throw ContractError(
        "requirements.format: expected json, csv, xml, toml, yaml or svg "
        "(zx-bench: Unsupported extended format)");
  }
  if (Member(req, "output_policy") != "raw_only") {
    throw ContractError(
        "requirements.output_policy must be 'raw_only' "
        "(zx-bench: Incomplete structured contract)");
  }
  const json& dialect = Member(req, "dialect");
  if (dialect == "draft-07") {
    c.dialect = Dialect::kDraft07;
  } else if (dialect == "2020-12") {
    c.dialect = Dialect::k2020;
  } else {
    throw ContractError(
        "requirements.dialect must be 'draft-07' or '2020-12' "
        "(zx-bench: Incomplete structured contract)");
  }
  const json& format_assertions = Member(req, "formatAssertions");
  if (!format_assertions.is_boolean()) {
    throw ContractError(
        "requirements.formatAssertions must be true or false "
        "(zx-bench: Incomplete structured contract)");
  }
  c.format_assertions = format_assertions.get<bool>();
  if (!Truthy(Member(req, "family"))) {
    throw ContractError(
        "requirements.family is missing "
        "(zx-bench: Incomplete structured contract)");
  }
  if (!req.contains("schema")) {
    throw ContractError(
        "requirements.schema is missing "
        "(zx-bench: Incomplete structured contract)");
  }
  c.schema = &req["schema"];
  if (req.contains("contentSchema")) c.content_schema = &req["contentSchema"];
  const json& references = Member(req, "references");
  if (!references.is_null() && !references.is_object()) {
    throw ContractError("requirements.references must be an object of URI -> schema");
  }
  if (references.is_object()) c.references = &references;

  // Every schema: an object or a boolean, of the declared dialect, compiling under strict AJV.
  const std::string_view dialect_uri = c.dialect == Dialect::kDraft07 ? kDraft07Uri : k2020Uri;
  std::vector<std::pair<std::string, const json*>> schemas = {{"requirements.schema", c.schema}};
  if (c.content_schema != nullptr) {
    schemas.emplace_back("requirements.contentSchema", c.content_schema);
  }
  if (c.references != nullptr) {
    for (const auto& [uri, schema] : c.references->items()) {
      schemas.emplace_back("requirements.references/" + PointerToken(uri), &schema);
    }
  }
  for (const auto& [where, schema] : schemas) {
    if (!schema->is_boolean() && !schema->is_object()) {
      throw ContractError(where + ": Schema must be an object or boolean");
    }
    const json& declared = Member(*schema, "$schema");
    if (Truthy(declared) && declared != dialect_uri) {
      throw ContractError(where + ": Schema dialect disagrees with " + dialect.get<std::string>() +
                          " ($schema must be " + std::string(dialect_uri) + ")");
    }
  }
  const SchemaRules rules(c);
  for (auto it = schemas.rbegin(); it != schemas.rend(); ++it) {
    rules.Check(*it->second, it->second, it->first, 0);
  }

  const json& assertions = Member(req, "assertions");
  if (!assertions.is_null() && !assertions.is_array()) {
    throw ContractError("requirements.assertions must be an array");
  }
  if (assertions.is_array()) {
    for (size_t i = 0; i < assertions.size(); ++i) {
      const json& a = assertions[i];
      const json& pointer = Member(a, "pointer");
      const json& description = Member(a, "description");
      bool ok = a.is_object() && pointer.is_string() && description.is_string() &&
                !description.get_ref<const std::string&>().empty() && a.contains("expected");
      if (ok) {
        const auto& p = pointer.get_ref<const std::string&>();
        ok = p.empty() || p[0] == '/';
        for (size_t k = 0; ok && k < p.size(); ++k) {
          if (p[k] == '~' && (k + 1 == p.size() || (p[k + 1] != '0' && p[k + 1] != '1'))) {
            ok = false;
          }
        }
      }
      if (!ok) {
        throw ContractError("requirements.assertions/" + std::to_string(i) +
                            ": Invalid JSON Pointer assertion (needs a pointer \"\" or \"/...\" "
                            "with ~0/~1 escapes, `expected` and a non-empty description)");
      }
      c.assertions.push_back({pointer.get<std::string>(), &a["expected"]});
    }
  }

  if (c.version >= 2) {
    for (const auto& [where, schema] : schemas) {
      if (V2ProfileRefuses(*schema, 0)) {
        throw ContractError(where +
                            ": AJV profile does not admit dynamicRef or if/else without "
                            "then (zx-bench refuses such contracts from v2 on)");
      }
    }
    const json& generated = Member(req, "generatedSchema");
    if (Truthy(generated)) {
      const json& cases = Member(generated, "cases");
      bool ok = c.format == "json" && cases.is_array() && !cases.empty();
      for (size_t i = 0; ok && i < cases.size(); ++i) ok = Member(cases[i], "valid").is_boolean();
      if (!ok) throw ContractError("requirements.generatedSchema: Invalid generated-schema cases");
      c.skip =
          "the response is a JSON Schema that zx-bench compiles and runs on "
          "requirements.generatedSchema.cases (" +
          std::string(c.version == 3 ? "python-jsonschema 4.26.0" : "AJV 8.20.0") +
          "): evalrun does not run model-written schemas";
    }
    if (c.format == "svg") {
      if (!Truthy(Member(req, "svg"))) {
        throw ContractError("requirements.svg is missing (zx-bench: SVG contract unavailable)");
      }
      c.skip =
          "SVG responses are rasterised in Chromium and probed pixel by pixel; evalrun has "
          "no renderer";
    }
  }
  if (c.format == "yaml") {
    c.skip =
        "YAML responses are parsed with PyYAML 6.0.3 under a custom JSON-compatible "
        "profile; evalrun has no YAML parser among its graders";
  }
  if (c.format == "toml") {
    c.skip = "TOML responses are parsed with Python's tomllib; evalrun has no TOML parser";
  }
  if (c.version == 4) {
    c.skip =
        "structured_contract_v4 compares with a private oracle file "
        "(data/pilots/structured-contract-*/oracle.private.json) that is not in the entry";
  }
  if (c.skip.empty() && c.version == 1) {
    for (const auto& [where, schema] : schemas) {
      if (UsesDynamicRef(*schema, 0)) {
        c.skip = where +
                 " uses $dynamicRef or $dynamicAnchor, which evalrun's schema validator "
                 "does not implement";
      }
    }
  }
  return c;
}

// ---- Schema validation (AJV 8 semantics) --------------------------------------------------------

// What unevaluatedProperties and unevaluatedItems see is AJV's, not the specification's. AJV
// tracks "evaluated" per schema context while it generates code: undefined, true, a set known
// at compile time (static), or a variable filled at run time (a Name). Keywords run in AJV's
// rule order (untyped applicators first, then the array and object groups), and a merge inside
// a conditional branch turns the static set into a variable assigned only on that branch — so,
// for example, what `if` evaluated survives only when `then` runs. This emulation keeps that
// compile-time state next to the run-time values (ajv lib/compile/util.ts mergeEvaluated,
// lib/compile/validate/index.ts mergeValidEvaluated, and the applicator keywords).
enum class Kind { kUndefined, kTrue, kStatic, kVariable };

struct PropsVar {  // a run-time `props` variable: undefined, true or {key: true}
  enum class V { kUndefined, kTrue, kMap } v = V::kUndefined;
  std::set<std::string> keys;
};
struct ItemsVar {  // a run-time `items` variable: undefined, true or a count
  enum class V { kUndefined, kTrue, kNumber } v = V::kUndefined;
  double n = 0;
};

struct PropsState {
  Kind kind = Kind::kUndefined;
  std::set<std::string> names;    // kStatic
  std::shared_ptr<PropsVar> var;  // kName
};
struct ItemsState {
  Kind kind = Kind::kUndefined;
  double n = 0;                   // kStatic
  std::shared_ptr<ItemsVar> var;  // kName
};
struct Evaluated {
  PropsState props;
  ItemsState items;
};

// mergeEvaluated.props(gen, from, to, toName): `executed` says whether the code it generates
// runs at this point of this validation.
PropsState MergeProps(const PropsState& from, PropsState to, bool to_name, bool executed) {
  PropsState res;
  if (to.kind == Kind::kUndefined) {
    res = from;
  } else if (to.kind == Kind::kVariable) {
    PropsVar& t = *to.var;
    if (executed && t.v != PropsVar::V::kTrue) {
      if (from.kind == Kind::kVariable) {
        if (from.var->v == PropsVar::V::kTrue) {
          t.v = PropsVar::V::kTrue;
        } else if (from.var->v == PropsVar::V::kMap) {
          t.v = PropsVar::V::kMap;
          t.keys.insert(from.var->keys.begin(), from.var->keys.end());
        }
      } else if (from.kind == Kind::kTrue) {
        t.v = PropsVar::V::kTrue;
      } else {
        t.v = PropsVar::V::kMap;
        t.keys.insert(from.names.begin(), from.names.end());
      }
    }
    res = to;
  } else if (from.kind == Kind::kVariable) {
    PropsVar& f = *from.var;
    if (executed && f.v != PropsVar::V::kTrue) {
      f.v = PropsVar::V::kMap;
      f.keys.insert(to.names.begin(), to.names.end());
    }
    res = from;
  } else {
    res.kind = from.kind == Kind::kTrue ? Kind::kTrue : Kind::kStatic;
    if (res.kind == Kind::kStatic) {
      res.names = to.names;
      res.names.insert(from.names.begin(), from.names.end());
    }
  }
  if (to_name && res.kind != Kind::kVariable) {
    auto var = std::make_shared<PropsVar>();
    if (executed) {
      var->v = res.kind == Kind::kTrue ? PropsVar::V::kTrue : PropsVar::V::kMap;
      var->keys = res.names;
    }
    res = PropsState{Kind::kVariable, {}, std::move(var)};
  }
  return res;
}

// JavaScript's `a > b` for an items variable and a count (undefined compares false).
ItemsState MergeItems(const ItemsState& from, ItemsState to, bool to_name, bool executed) {
  const auto number = [](const ItemsVar& v) { return v.v == ItemsVar::V::kTrue ? 1.0 : v.n; };
  ItemsState res;
  if (to.kind == Kind::kUndefined) {
    res = from;
  } else if (to.kind == Kind::kVariable) {
    ItemsVar& t = *to.var;
    if (executed && t.v != ItemsVar::V::kTrue) {
      if (from.kind == Kind::kVariable) {
        const ItemsVar& f = *from.var;
        if (f.v == ItemsVar::V::kTrue) {
          t.v = ItemsVar::V::kTrue;
        } else if (f.v == ItemsVar::V::kNumber) {
          if (!(t.v != ItemsVar::V::kUndefined && number(t) > f.n)) t = f;
        }
      } else if (from.kind == Kind::kTrue) {
        t.v = ItemsVar::V::kTrue;
      } else if (!(t.v != ItemsVar::V::kUndefined && number(t) > from.n)) {
        t.v = ItemsVar::V::kNumber;
        t.n = from.n;
      }
    }
    res = to;
  } else if (from.kind == Kind::kVariable) {
    ItemsVar& f = *from.var;
    if (executed && f.v != ItemsVar::V::kTrue) {
      if (to.kind == Kind::kTrue) {
        f.v = ItemsVar::V::kTrue;
      } else if (!(f.v != ItemsVar::V::kUndefined && number(f) > to.n)) {
        f.v = ItemsVar::V::kNumber;
        f.n = to.n;
      }
    }
    res = from;
  } else {
    res.kind = from.kind == Kind::kTrue ? Kind::kTrue : Kind::kStatic;
    res.n = std::max(from.n, to.n);
  }
  if (to_name && res.kind != Kind::kVariable) {
    auto var = std::make_shared<ItemsVar>();
    if (executed) {
      var->v = res.kind == Kind::kTrue ? ItemsVar::V::kTrue : ItemsVar::V::kNumber;
      var->n = res.n;
    }
    res = ItemsState{Kind::kVariable, 0, std::move(var)};
  }
  return res;
}

// AJV's alwaysValidSchema: true, {}, or only keywords without rules (annotations, $defs, ...).
bool AlwaysValid(const json& schema) {
  if (schema.is_boolean()) return schema.get<bool>();
  if (!schema.is_object()) return false;
  static const std::set<std::string, std::less<>> kNoRule = {"$schema",
                                                             "$id",
                                                             "$defs",
                                                             "$vocabulary",
                                                             "definitions",
                                                             "title",
                                                             "description",
                                                             "default",
                                                             "deprecated",
                                                             "readOnly",
                                                             "writeOnly",
                                                             "examples",
                                                             "contentMediaType",
                                                             "contentEncoding",
                                                             "contentSchema"};
  return std::all_of(schema.items().begin(), schema.items().end(),
                     [](const auto& item) { return kNoRule.count(item.key()) > 0; });
}

// compile/resolve.ts hasRef: AJV inlines a referenced schema unless it holds a reference itself.
bool HasRef(const json& schema, int depth) {
  if (!schema.is_object() || depth > kMaxSchemaDepth) return false;
  for (const auto& [key, value] : schema.items()) {
    if (key == "$ref" || key == "$dynamicRef" || key == "$dynamicAnchor") return true;
    if (value.is_array()) {
      for (const auto& item : value) {
        if (HasRef(item, depth + 1)) return true;
      }
    } else if (HasRef(value, depth + 1)) {
      return true;
    }
  }
  return false;
}

class Validator {
 public:
  // Compiles `root` as AJV would (deciding, for each reference, whether AJV inlines it, calls a
  // function whose evaluated set is static, or reads it at run time).
  Validator(const Contract& contract, const json& root)
      : c_(contract), root_(root), tracking_(contract.dialect == Dialect::k2020) {
    in_progress_.insert(&root_);
    Evaluated ignored;
    Context(root_, &root_, nullptr, "", ignored, 0);
    in_progress_.erase(&root_);
  }

  bool Validate(const json& data) {
    Evaluated evaluated;
    return Context(root_, &root_, &data, "", evaluated, 0) && !gave_up_;
  }
  bool gave_up() const { return gave_up_; }
  // AJV's generated code would throw a TypeError on this value (zx-bench records no score).
  bool ajv_throws() const { return ajv_throws_; }
  const std::string& error() const { return error_; }

 private:
  struct RefPlan {
    enum class Mode { kInline, kStatic, kDynamic } props = Mode::kInline, items = Mode::kInline;
    Evaluated callee;  // the callee's compile-time result (kStatic)
  };

  bool Fail(const std::string& at, const std::string& what) {
    if (speculative_ == 0 && error_.empty()) error_ = (at.empty() ? "/" : at) + ": " + what;
    return false;
  }

  bool TypeIs(const std::string& type, const json& data) const {
    if (type == "null") return data.is_null();
    if (type == "boolean") return data.is_boolean();
    if (type == "object") return data.is_object();
    if (type == "array") return data.is_array();
    if (type == "string") return data.is_string();
    if (type == "number") return data.is_number() && std::isfinite(Num(data));  // strictNumbers
    if (type == "integer") return data.is_number() && IsInteger(Num(data));
    return false;
  }

  bool PatternMatches(const std::string& pattern, std::string_view subject) {
    const auto result = Regex::Compile(pattern, "u")->Match(subject, false);
    if (result == Regex::Result::kGaveUp) gave_up_ = true;
    return result == Regex::Result::kMatch;
  }

  void Merge(Evaluated& to, const Evaluated& from, bool to_name, bool executed) const {
    if (!tracking_) return;
    if (to.props.kind != Kind::kTrue && from.props.kind != Kind::kUndefined) {
      to.props = MergeProps(from.props, to.props, to_name, executed);
    }
    if (to.items.kind != Kind::kTrue && from.items.kind != Kind::kUndefined) {
      to.items = MergeItems(from.items, to.items, to_name, executed);
    }
  }
  // mergeValidEvaluated: the merge runs inside `if (valid)`.
  void MergeValid(Evaluated& to, const Evaluated& from, bool valid, bool executed) const {
    if (tracking_ && (to.props.kind != Kind::kTrue || to.items.kind != Kind::kTrue)) {
      Merge(to, from, true, executed && valid);
    }
  }

  // The compile-time state of a context that does not run in this validation (a `then` whose
  // `if` failed, a dependent schema whose property is absent): its variables stay undefined.
  Evaluated Compiled(const json& schema, const json* resource) {
    const auto it = compiled_.find(&schema);
    if (it != compiled_.end()) return Fresh(it->second);
    Evaluated ev;
    Context(schema, resource, nullptr, "", ev, 0);
    compiled_.emplace(&schema, ev);
    return Fresh(ev);
  }
  static Evaluated Fresh(const Evaluated& state) {  // same kinds, undefined variables
    Evaluated ev = state;
    if (ev.props.kind == Kind::kVariable) ev.props.var = std::make_shared<PropsVar>();
    if (ev.items.kind == Kind::kVariable) ev.items.var = std::make_shared<ItemsVar>();
    return ev;
  }

  // A referenced schema AJV compiles into its own function: its final state, unless it is
  // still being compiled (a recursive reference), in which case callers read it at run time.
  const RefPlan& Plan(const json& site, const json& target, const json* target_resource,
                      bool root_ref) {
    const auto found = plans_.find(&site);
    if (found != plans_.end()) return found->second;
    RefPlan plan;
    if (!root_ref && (target.is_boolean() || !HasRef(target, 0))) {
      plan.props = plan.items = RefPlan::Mode::kInline;
    } else if (root_ref || in_progress_.count(&target) > 0) {
      plan.props = plan.items = RefPlan::Mode::kDynamic;
    } else {
      auto done = functions_.find(&target);
      if (done == functions_.end()) {
        in_progress_.insert(&target);
        Evaluated ev;
        Context(target, target_resource, nullptr, "", ev, 0);
        in_progress_.erase(&target);
        done = functions_.emplace(&target, ev).first;
      }
      plan.callee = done->second;
      plan.props = done->second.props.kind == Kind::kVariable ? RefPlan::Mode::kDynamic
                                                              : RefPlan::Mode::kStatic;
      plan.items = done->second.items.kind == Kind::kVariable ? RefPlan::Mode::kDynamic
                                                              : RefPlan::Mode::kStatic;
    }
    return plans_.emplace(&site, std::move(plan)).first->second;
  }

  // One schema context, in AJV's keyword order. `data` is nullptr when only compiling.
  bool Context(const json& schema, const json* resource, const json* data, const std::string& at,
               Evaluated& ev, int depth) {
    if (gave_up_) return false;
    if (++steps_ > kMaxSteps || depth > kMaxApplyDepth) {
      gave_up_ = true;
      return false;
    }
    if (schema.is_boolean()) {
      return data == nullptr || schema.get<bool>() || Fail(at, "the false schema");
    }
    if (!schema.is_object()) return true;
    if (data == nullptr) {
      if (!visiting_.insert(&schema).second) return true;  // compiling a cycle of inlined schemas
    }
    if (IsResource(schema)) resource = &schema;
    const auto has = [&](const char* key) -> const json* {
      const auto it = schema.find(key);
      return it == schema.end() ? nullptr : &*it;
    };
    const bool run = data != nullptr;
    bool valid = true;
    // Runs a subschema on `d` (nullptr: compile only) in a fresh context.
    const auto sub = [&](const json& s, const json* d, const std::string& where, Evaluated& e) {
      return Context(s, resource, d, where, e, depth + 1);
    };
    const auto speculative = [&](const json& s, Evaluated& e) {
      ++speculative_;
      const bool ok = sub(s, data, at, e);
      --speculative_;
      return ok;
    };

    // -- untyped keywords: $ref, const/enum, not, anyOf, oneOf, allOf, if/then/else
    if (const json* ref = has("$ref")) {
      const std::string& text = ref->get_ref<const std::string&>();
      const bool root_ref = (text == "#" || text == "#/") && resource == &root_;
      const auto target = c_.Resolve(text, resource);
      if (!target) {
        valid = !run || Fail(at, "unresolvable $ref");
      } else {
        const RefPlan& plan = Plan(schema, *target->schema, target->resource, root_ref);
        const bool inline_ref = plan.props == RefPlan::Mode::kInline;
        Evaluated callee;
        const bool ok = (run || inline_ref) ? sub(*target->schema, data, at, callee) : true;
        if (!ok) valid = false;
        if (inline_ref) {
          Merge(ev, callee, false, run);
        } else {
          // addEvaluatedFrom runs in the call's success branch.
          const bool executed = run && ok;
          Evaluated from;
          from.props = plan.props == RefPlan::Mode::kStatic ? plan.callee.props
                                                            : AsVariable(callee.props, executed);
          from.items = plan.items == RefPlan::Mode::kStatic ? plan.callee.items
                                                            : AsVariable(callee.items, executed);
          if (tracking_ && ev.props.kind != Kind::kTrue && from.props.kind != Kind::kUndefined) {
            ev.props =
                MergeProps(from.props, ev.props, plan.props == RefPlan::Mode::kDynamic, executed);
          }
          if (tracking_ && ev.items.kind != Kind::kTrue && from.items.kind != Kind::kUndefined) {
            ev.items =
                MergeItems(from.items, ev.items, plan.items == RefPlan::Mode::kDynamic, executed);
          }
        }
      }
    }
    if (run) valid = Values(schema, *data, at) && valid;
    if (const json* negated = has("not")) {
      Evaluated e;
      if (run ? speculative(*negated, e) : (sub(*negated, nullptr, at, e), false)) {
        valid = Fail(at, "must NOT be valid");
      }
    }
    if (const json* any = has("anyOf")) {
      bool ok = !run;
      for (const auto& s : *any) {
        Evaluated e;
        const bool branch = run ? speculative(s, e) : sub(s, nullptr, at, e);
        ok = ok || branch;
        MergeValid(ev, e, branch, run);
      }
      if (!ok) valid = Fail(at, "must match a schema in anyOf");
    }
    if (const json* one = has("oneOf")) {
      int passing = 0;
      for (const auto& s : *one) {
        if (AlwaysValid(s)) {
          ++passing;
          continue;
        }
        Evaluated e;
        const bool branch = run ? speculative(s, e) : sub(s, nullptr, at, e);
        passing += branch;
        if (tracking_) Merge(ev, e, true, run && branch);
      }
      if (run && passing != 1) valid = Fail(at, "must match exactly one schema in oneOf");
    }
    if (const json* all = has("allOf")) {
      for (const auto& s : *all) {
        Evaluated e;
        if (!sub(s, data, at, e)) valid = false;
        Merge(ev, e, false, run);
      }
    }
    const json* then_schema = has("then");
    const json* else_schema = has("else");
    const bool has_then = then_schema != nullptr && !AlwaysValid(*then_schema);
    const bool has_else = else_schema != nullptr && !AlwaysValid(*else_schema);
    if (const json* condition = has("if"); condition != nullptr && (has_then || has_else)) {
      Evaluated e;
      const bool holds = run ? speculative(*condition, e) : (sub(*condition, nullptr, at, e), true);
      Merge(ev, e, false, run);  // validateIf merges unconditionally
      const auto clause = [&](const json* branch, bool taken, const char* name) {
        Evaluated b;
        bool ok = true;
        if (run && taken) {
          ok = sub(*branch, data, at, b);
          if (!ok) valid = Fail(at, std::string("must match \"") + name + "\" schema");
        } else {
          b = Compiled(*branch, resource);
          ok = false;
        }
        MergeValid(ev, b, ok, run && taken);
      };
      if (has_then) clause(then_schema, holds, "then");
      if (has_else) clause(else_schema, !holds, "else");
    }
    // -- typed groups: arrays, then objects (numbers and strings are checked in Values)
    valid = Arrays(schema, resource, data, at, ev, depth) && valid;
    valid = Objects(schema, resource, data, at, ev, depth) && valid;
    if (!run) visiting_.erase(&schema);
    return valid && !gave_up_;
  }

  // A run-time variable holding a called function's final evaluated set (`source.evaluated`).
  static PropsState AsVariable(const PropsState& final_state, bool executed) {
    auto var = std::make_shared<PropsVar>();
    if (executed) {
      if (final_state.kind == Kind::kVariable) {
        *var = *final_state.var;
      } else if (final_state.kind == Kind::kTrue) {
        var->v = PropsVar::V::kTrue;
      } else if (final_state.kind == Kind::kStatic) {
        var->v = PropsVar::V::kMap;
        var->keys = final_state.names;
      }
    }
    return PropsState{Kind::kVariable, {}, std::move(var)};
  }
  static ItemsState AsVariable(const ItemsState& final_state, bool executed) {
    auto var = std::make_shared<ItemsVar>();
    if (executed) {
      if (final_state.kind == Kind::kVariable) {
        *var = *final_state.var;
      } else if (final_state.kind == Kind::kTrue) {
        var->v = ItemsVar::V::kTrue;
      } else if (final_state.kind == Kind::kStatic) {
        var->v = ItemsVar::V::kNumber;
        var->n = final_state.n;
      }
    }
    return ItemsState{Kind::kVariable, 0, std::move(var)};
  }

  // type, enum, const, format and the number and string keywords: no subschemas.
  bool Values(const json& schema, const json& data, const std::string& at) {
    bool valid = true;
    if (const auto it = schema.find("type"); it != schema.end()) {
      bool ok = Member(schema, "nullable") == true && data.is_null();
      if (it->is_string()) {
        ok = ok || TypeIs(it->get<std::string>(), data);
      } else {
        for (const auto& t : *it) ok = ok || TypeIs(t.get<std::string>(), data);
      }
      if (!ok)
        valid = Fail(at, "must be " + (it->is_string() ? it->get<std::string>() : it->dump()));
    }
    if (const auto it = schema.find("enum"); it != schema.end()) {
      if (std::none_of(it->begin(), it->end(), [&](const json& v) { return DeepEqual(v, data); })) {
        valid = Fail(at, "must be equal to one of the allowed values");
      }
    }
    if (const auto it = schema.find("const"); it != schema.end() && !DeepEqual(*it, data)) {
      valid = Fail(at, "must be equal to constant");
    }
    if (const auto it = schema.find("format"); it != schema.end() && c_.format_assertions) {
      if (const FormatRow* row = FindFormat(it->get<std::string>())) {
        if (!CheckFormat(*row, data, &gave_up_)) {
          valid = Fail(at, "must match format \"" + it->get<std::string>() + "\"");
        }
      }
    }
    if (data.is_number()) valid = Numbers(schema, Num(data), at) && valid;
    if (data.is_string()) {
      const std::string& s = data.get_ref<const std::string&>();
      const json& max = Member(schema, "maxLength");
      const json& min = Member(schema, "minLength");
      const json& pattern = Member(schema, "pattern");
      if (max.is_number() && static_cast<double>(CodePoints(s)) > Num(max)) {
        valid = Fail(at, "must NOT have more than " + max.dump() + " characters");
      }
      if (min.is_number() && static_cast<double>(CodePoints(s)) < Num(min)) {
        valid = Fail(at, "must NOT have fewer than " + min.dump() + " characters");
      }
      if (pattern.is_string() && !PatternMatches(pattern.get<std::string>(), s)) {
        valid = Fail(at, "must match pattern \"" + pattern.get<std::string>() + "\"");
      }
    }
    return valid;
  }

  bool Numbers(const json& schema, double d, const std::string& at) {
    bool valid = true;
    const auto limit = [&](const char* key) -> std::optional<double> {
      const json& v = Member(schema, key);
      if (!v.is_number()) return std::nullopt;
      return Num(v);
    };
    if (const auto m = limit("multipleOf")) {
      const double q = d / *m;  // AJV: (data / m) !== parseInt(data / m)
      if (!(std::isfinite(q) && std::trunc(q) == q && std::fabs(q) < 1e21)) {
        valid = Fail(at, "must be multiple of " + Member(schema, "multipleOf").dump());
      }
    }
    if (const auto v = limit("maximum"); v && !(d <= *v)) valid = Fail(at, "must be <= maximum");
    if (const auto v = limit("minimum"); v && !(d >= *v)) valid = Fail(at, "must be >= minimum");
    if (const auto v = limit("exclusiveMaximum"); v && !(d < *v)) {
      valid = Fail(at, "must be < exclusiveMaximum");
    }
    if (const auto v = limit("exclusiveMinimum"); v && !(d > *v)) {
      valid = Fail(at, "must be > exclusiveMinimum");
    }
    return valid;
  }

  // The array group: maxItems/minItems, items, uniqueItems, prefixItems (additionalItems in
  // draft-07), contains, maxContains/minContains, unevaluatedItems.
  bool Arrays(const json& schema, const json* resource, const json* data, const std::string& at,
              Evaluated& ev, int depth) {
    const bool run = data != nullptr && data->is_array();
    const bool compile = data == nullptr;  // walk subschemas only to compile them
    const size_t n = run ? data->size() : 0;
    const bool draft07 = c_.dialect == Dialect::kDraft07;
    bool valid = true;
    const auto item_at = [&](size_t i) { return at + "/" + std::to_string(i); };
    const auto each = [&](const json& s, size_t from) {
      for (size_t i = from; i < n; ++i) {
        Evaluated e;
        if (!Context(s, resource, &(*data)[i], item_at(i), e, depth + 1)) valid = false;
      }
      if (compile) {
        Evaluated e;
        Context(s, resource, nullptr, at, e, depth + 1);
      }
    };
    if (run) {
      const json& max = Member(schema, "maxItems");
      const json& min = Member(schema, "minItems");
      if (max.is_number() && static_cast<double>(n) > Num(max)) {
        valid = Fail(at, "must NOT have more than " + max.dump() + " items");
      }
      if (min.is_number() && static_cast<double>(n) < Num(min)) {
        valid = Fail(at, "must NOT have fewer than " + min.dump() + " items");
      }
      if (Member(schema, "uniqueItems") == true) {
        std::unordered_set<std::string> seen;
        for (const auto& item : *data) {
          std::string key;
          EqualityKey(item, key);
          if (!seen.insert(std::move(key)).second) {
            valid = Fail(at, "must NOT have duplicate items");
            break;
          }
        }
      }
    }
    const json& items = Member(schema, "items");
    static const json kNone;
    const json& tuple =
        draft07 ? (items.is_array() ? items : kNone) : Member(schema, "prefixItems");
    if (!draft07 && !items.is_null()) ev.items = ItemsState{Kind::kTrue, 0, nullptr};
    if (!draft07 && !items.is_null() && !AlwaysValid(items)) {
      each(items, tuple.is_array() ? tuple.size() : 0);
    }
    if (tuple.is_array()) {
      if (tracking_ && !tuple.empty() && ev.items.kind != Kind::kTrue) {
        ev.items = MergeItems(ItemsState{Kind::kStatic, static_cast<double>(tuple.size()), nullptr},
                              ev.items, false, run);
      }
      for (size_t i = 0; i < tuple.size(); ++i) {
        if (AlwaysValid(tuple[i])) continue;
        Evaluated e;
        if (i < n) {
          if (!Context(tuple[i], resource, &(*data)[i], item_at(i), e, depth + 1)) valid = false;
        } else if (compile) {
          Context(tuple[i], resource, nullptr, at, e, depth + 1);
        }
      }
    }
    if (draft07 && !items.is_null() && !items.is_array() && !AlwaysValid(items)) each(items, 0);
    if (draft07 && items.is_array()) {
      const json& additional = Member(schema, "additionalItems");
      if (!additional.is_null() && !AlwaysValid(additional)) each(additional, items.size());
    }
    if (const json& contains = Member(schema, "contains"); !contains.is_null()) {
      double least = 1;
      std::optional<double> most;
      if (!draft07) {
        if (Member(schema, "minContains").is_number()) least = Num(schema["minContains"]);
        if (Member(schema, "maxContains").is_number()) most = Num(schema["maxContains"]);
      }
      size_t count = n;
      if (!AlwaysValid(contains)) {
        ev.items = ItemsState{Kind::kTrue, 0, nullptr};
        ++speculative_;
        count = 0;
        for (size_t i = 0; i < n; ++i) {
          Evaluated e;
          if (Context(contains, resource, &(*data)[i], item_at(i), e, depth + 1)) ++count;
        }
        --speculative_;
        if (compile) {
          Evaluated e;
          Context(contains, resource, nullptr, at, e, depth + 1);
        }
      }
      if (run &&
          (static_cast<double>(count) < least || (most && static_cast<double>(count) > *most))) {
        valid = Fail(at, "must contain the required number of valid items");
      }
    }
    if (const json& rest = Member(schema, "unevaluatedItems"); !rest.is_null() && !draft07) {
      valid = UnevaluatedItems(rest, resource, data, run, compile, at, ev, depth) && valid;
    }
    return valid;
  }

  // unevaluatedItems with allErrors: `const items = it.items || 0`, then JavaScript's
  // comparisons: an undefined variable makes `len > items` and `len <= items` false and the
  // loop from it empty (so nothing fails); `true` counts as 1 and its first iteration checks
  // data[true], which is undefined (counted here as a failure).
  bool UnevaluatedItems(const json& rest, const json* resource, const json* data, bool run,
                        bool compile, const std::string& at, Evaluated& ev, int depth) {
    if (ev.items.kind == Kind::kTrue) return true;
    bool valid = true;
    if (compile) {
      Evaluated e;
      Context(rest, resource, nullptr, at, e, depth + 1);
    }
    if (run) {
      const double len = static_cast<double>(data->size());
      std::optional<double> from = 0;  // nullopt: undefined
      bool starts_at_true = false;
      if (ev.items.kind == Kind::kStatic) {
        from = ev.items.n;
      } else if (ev.items.kind == Kind::kVariable) {
        const ItemsVar& v = *ev.items.var;
        if (v.v == ItemsVar::V::kUndefined) from.reset();
        if (v.v == ItemsVar::V::kNumber) from = v.n;
        if (v.v == ItemsVar::V::kTrue) {
          from = 1;
          starts_at_true = true;
        }
      }
      if (rest == false) {
        if (from && len > *from) valid = Fail(at, "must NOT have unevaluated items");
      } else if (!AlwaysValid(rest) && from && !(len <= *from)) {
        if (starts_at_true) valid = Fail(at, "must NOT have unevaluated items");
        for (size_t i = static_cast<size_t>(std::max(*from, starts_at_true ? 2.0 : 0.0));
             i < data->size(); ++i) {
          Evaluated e;
          if (!Context(rest, resource, &(*data)[i], at + "/" + std::to_string(i), e, depth + 1)) {
            valid = Fail(at, "must NOT have unevaluated items");
          }
        }
      }
    }
    ev.items = ItemsState{Kind::kTrue, 0, nullptr};
    return valid;
  }

  // The object group: maxProperties/minProperties, required, propertyNames,
  // additionalProperties, dependencies, properties, patternProperties, dependentRequired,
  // dependentSchemas, unevaluatedProperties.
  bool Objects(const json& schema, const json* resource, const json* data, const std::string& at,
               Evaluated& ev, int depth) {
    const bool run = data != nullptr && data->is_object();
    const bool compile = data == nullptr;  // walk subschemas only to compile them
    bool valid = true;
    const auto child = [&](const std::string& key) { return at + "/" + PointerToken(key); };
    if (run) {
      const json& max = Member(schema, "maxProperties");
      const json& min = Member(schema, "minProperties");
      if (max.is_number() && static_cast<double>(data->size()) > Num(max)) {
        valid = Fail(at, "must NOT have more than " + max.dump() + " properties");
      }
      if (min.is_number() && static_cast<double>(data->size()) < Num(min)) {
        valid = Fail(at, "must NOT have fewer than " + min.dump() + " properties");
      }
      const json& required = Member(schema, "required");
      if (required.is_array()) {
        for (const auto& name : required) {
          if (!data->contains(name.get<std::string>())) {
            valid =
                Fail(at, "must have required property '" + Shown(name.get<std::string>()) + "'");
          }
        }
      }
    }
    const json& properties = Member(schema, "properties");
    const json& patterns = Member(schema, "patternProperties");
    const json& additional = Member(schema, "additionalProperties");
    if (const json& names = Member(schema, "propertyNames"); !names.is_null()) {
      if (run) {
        for (const auto& [key, value] : data->items()) {
          const json name(key);
          Evaluated e;
          if (!Context(names, resource, &name, at, e, depth + 1)) {
            valid = Fail(at, "property name '" + Shown(key) + "' is invalid");
          }
        }
      } else if (compile) {
        Evaluated e;
        Context(names, resource, nullptr, at, e, depth + 1);
      }
    }
    if (!additional.is_null()) {
      ev.props = PropsState{Kind::kTrue, {}, nullptr};
      if (!AlwaysValid(additional)) {
        if (run) {
          for (const auto& [key, value] : data->items()) {
            if (properties.is_object() && properties.contains(key)) continue;
            bool matched = false;
            if (patterns.is_object()) {
              for (const auto& [pattern, s] : patterns.items()) {
                if (PatternMatches(pattern, key)) matched = true;
              }
            }
            if (matched) continue;
            Evaluated e;
            if (!Context(additional, resource, &value, child(key), e, depth + 1)) {
              valid = additional == false
                          ? Fail(at, "must NOT have additional properties ('" + Shown(key) + "')")
                          : false;
            }
          }
        } else if (compile) {
          Evaluated e;
          Context(additional, resource, nullptr, at, e, depth + 1);
        }
      }
    }
    const auto required_with = [&](const std::string& key, const json& names) {
      for (const auto& name : names) {
        if (!data->contains(name.get<std::string>())) {
          valid = Fail(at, "must have property '" + Shown(name.get<std::string>()) +
                               "' when property '" + Shown(key) + "' is present");
        }
      }
    };
    const auto schema_deps = [&](const json& map) {
      for (const auto& [key, s] : map.items()) {
        if (s.is_array() || AlwaysValid(s)) continue;
        Evaluated e;
        bool ok = false;
        const bool present = run && data->contains(key);
        if (present) {
          ok = Context(s, resource, data, at, e, depth + 1);
          if (!ok) valid = false;
        } else {
          e = Compiled(s, resource);
        }
        MergeValid(ev, e, ok, present);
      }
    };
    if (const json& deps = Member(schema, "dependencies"); deps.is_object()) {
      if (run) {
        for (const auto& [key, value] : deps.items()) {
          if (value.is_array() && data->contains(key)) required_with(key, value);
        }
      }
      schema_deps(deps);
    }
    if (properties.is_object()) {
      std::set<std::string> names;
      for (const auto& [key, s] : properties.items()) {
        if (key != "__proto__") names.insert(key);
        if (run) {
          const auto it = data->find(key);
          if (it != data->end() && !AlwaysValid(s)) {
            Evaluated e;
            if (!Context(s, resource, &*it, child(key), e, depth + 1)) valid = false;
          }
        } else if (compile) {
          Evaluated e;
          Context(s, resource, nullptr, at, e, depth + 1);
        }
      }
      if (tracking_ && !names.empty() && ev.props.kind != Kind::kTrue) {
        ev.props =
            MergeProps(PropsState{Kind::kStatic, std::move(names), nullptr}, ev.props, false, run);
      }
    }
    if (patterns.is_object() && !patterns.empty()) {
      const bool all_trivial = std::all_of(patterns.items().begin(), patterns.items().end(),
                                           [](const auto& p) { return AlwaysValid(p.value()); });
      if (!(all_trivial && (!tracking_ || ev.props.kind == Kind::kTrue))) {
        if (tracking_ && ev.props.kind != Kind::kTrue && ev.props.kind != Kind::kVariable) {
          auto var = std::make_shared<PropsVar>();
          var->v = PropsVar::V::kMap;
          var->keys = ev.props.names;
          if (!run) var->v = PropsVar::V::kUndefined;
          ev.props = PropsState{Kind::kVariable, {}, std::move(var)};
        }
        for (const auto& [pattern, s] : patterns.items()) {
          if (!run) {
            if (compile) {
              Evaluated e;
              Context(s, resource, nullptr, at, e, depth + 1);
            }
            continue;
          }
          for (const auto& [key, value] : data->items()) {
            if (!PatternMatches(pattern, key)) continue;
            if (!AlwaysValid(s)) {
              Evaluated e;
              if (!Context(s, resource, &value, child(key), e, depth + 1)) valid = false;
            }
            if (tracking_ && ev.props.kind == Kind::kVariable) {
              // `props[key] = true`: on a variable left undefined by an untaken branch, AJV's
              // generated code throws a TypeError instead of answering.
              if (ev.props.var->v == PropsVar::V::kUndefined) ajv_throws_ = true;
              if (ev.props.var->v == PropsVar::V::kMap) ev.props.var->keys.insert(key);
            }
          }
        }
      }
    }
    if (run) {
      if (const json& deps = Member(schema, "dependentRequired"); deps.is_object()) {
        for (const auto& [key, value] : deps.items()) {
          if (data->contains(key)) required_with(key, value);
        }
      }
    }
    if (const json& deps = Member(schema, "dependentSchemas"); deps.is_object()) schema_deps(deps);
    if (const json& rest = Member(schema, "unevaluatedProperties"); !rest.is_null()) {
      if (run && ev.props.kind != Kind::kTrue) {
        const bool dynamic = ev.props.kind == Kind::kVariable;
        const bool skip = dynamic && ev.props.var->v == PropsVar::V::kTrue;
        for (const auto& [key, value] : data->items()) {
          if (skip) break;
          const bool evaluated =
              dynamic ? (ev.props.var->v == PropsVar::V::kMap && ev.props.var->keys.count(key) > 0)
                      : ev.props.names.count(key) > 0;
          if (evaluated) continue;
          if (rest == false) {
            valid = Fail(at, "must NOT have unevaluated properties ('" + Shown(key) + "')");
          } else if (!AlwaysValid(rest)) {
            Evaluated e;
            if (!Context(rest, resource, &value, child(key), e, depth + 1)) {
              valid = Fail(at, "unevaluated property '" + Shown(key) + "' is invalid");
            }
          }
        }
      } else if (compile) {
        Evaluated e;
        Context(rest, resource, nullptr, at, e, depth + 1);
      }
      ev.props = PropsState{Kind::kTrue, {}, nullptr};
    }
    return valid;
  }

  const Contract& c_;
  const json& root_;
  const bool tracking_;  // AJV's `unevaluated` option: on for 2020-12, off for draft-07
  std::map<const json*, RefPlan> plans_;        // per $ref site
  std::map<const json*, Evaluated> functions_;  // separately compiled schemas, when done
  std::map<const json*, Evaluated> compiled_;   // compile-time states of unexecuted contexts
  std::set<const json*> in_progress_;
  std::set<const json*> visiting_;
  uint64_t steps_ = 0;
  int speculative_ = 0;  // inside anyOf/oneOf/not/if/contains: failures there are not errors
  bool gave_up_ = false;
  bool ajv_throws_ = false;
  std::string error_;
};

// ---- CSV: Python's csv.reader(io.StringIO(text, newline=''), strict=True) -----------------------

// The excel dialect's state machine of CPython's Modules/_csv.c, fed line by line as StringIO
// with newline='' splits (after "\n", "\r\n" or a lone "\r"), each line followed by an
// end-of-line mark. Quoted fields keep their line breaks.
class CsvReader {
 public:
  std::optional<std::vector<std::vector<std::string>>> Read(std::string_view text) {
    std::vector<std::vector<std::string>> rows;
    size_t pos = 0;
    while (pos < text.size()) {
      size_t end = pos;
      while (end < text.size() && text[end] != '\n' && text[end] != '\r') ++end;
      if (end < text.size())
        end += (text[end] == '\r' && end + 1 < text.size() && text[end + 1] == '\n') ? 2 : 1;
      for (size_t k = pos; k < end; ++k) {
        if (!Char(text[k])) return std::nullopt;
      }
      EndOfLine();
      if (state_ == kStartRecord) {
        rows.push_back(std::move(fields_));
        fields_.clear();
      }
      pos = end;
    }
    if (!field_.empty() || state_ == kInQuotedField) {
      error_ = "unexpected end of data";
      return std::nullopt;
    }
    return rows;
  }
  const std::string& error() const { return error_; }

 private:
  enum State { kStartRecord, kStartField, kInField, kInQuotedField, kQuoteInQuotedField, kEatCrnl };

  void Save() {
    fields_.push_back(std::move(field_));
    field_.clear();
  }

  bool Char(char c) {
    const bool newline = c == '\n' || c == '\r';
    switch (state_) {
      case kStartRecord:
        if (newline) {
          state_ = kEatCrnl;
          return true;
        }
        state_ = kStartField;
        [[fallthrough]];
      case kStartField:
        if (newline) {
          Save();
          state_ = kEatCrnl;
        } else if (c == '"') {
          state_ = kInQuotedField;
        } else if (c == ',') {
          Save();
        } else {
          field_ += c;
          state_ = kInField;
        }
        return true;
      case kInField:
        if (newline) {
          Save();
          state_ = kEatCrnl;
        } else if (c == ',') {
          Save();
          state_ = kStartField;
        } else {
          field_ += c;
        }
        return true;
      case kInQuotedField:
        if (c == '"') {
          state_ = kQuoteInQuotedField;
        } else {
          field_ += c;
        }
        return true;
      case kQuoteInQuotedField:
        if (c == '"') {
          field_ += '"';
          state_ = kInQuotedField;
        } else if (c == ',') {
          Save();
          state_ = kStartField;
        } else if (newline) {
          Save();
          state_ = kEatCrnl;
        } else {
          error_ = "',' expected after '\"'";
          return false;
        }
        return true;
      case kEatCrnl:
        if (!newline) {
          error_ = "new-line character seen in unquoted field";
          return false;
        }
        return true;
    }
    return true;
  }

  void EndOfLine() {
    switch (state_) {
      case kStartField:
      case kInField:
      case kQuoteInQuotedField:
        Save();
        state_ = kStartRecord;
        break;
      case kEatCrnl:
        state_ = kStartRecord;
        break;
      case kStartRecord:
      case kInQuotedField:
        break;
    }
  }

  State state_ = kStartRecord;
  std::vector<std::string> fields_;
  std::string field_;
  std::string error_;
};

// structuredFormats.py, fmt == 'csv': one object per data row, keyed by a unique header row.
std::optional<json> ParseCsv(std::string_view text, std::string* error) {
  CsvReader reader;
  const auto rows = reader.Read(text);
  if (!rows) {
    *error = "CSV: " + reader.error();
    return std::nullopt;
  }
  const auto& header = rows->empty() ? std::vector<std::string>() : (*rows)[0];
  if (header.empty() ||
      std::set<std::string>(header.begin(), header.end()).size() != header.size()) {
    *error = "Missing or duplicate CSV headers";
    return std::nullopt;
  }
  json value = json::array();
  for (size_t r = 1; r < rows->size(); ++r) {
    if ((*rows)[r].size() != header.size()) {
      *error = "CSV row width differs from header (row " + std::to_string(r + 1) + ")";
      return std::nullopt;
    }
  }
  for (size_t r = 1; r < rows->size(); ++r) {
    json row = json::object();
    for (size_t k = 0; k < header.size(); ++k) row[header[k]] = (*rows)[r][k];
    value.push_back(std::move(row));
  }
  return value;
}

// ---- XML: ElementTree.fromstring (expat, namespaces resolved) and the records profile --------

bool IsXmlSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

bool IsXmlChar(char32_t c) {
  return c == 0x9 || c == 0xA || c == 0xD || (c >= 0x20 && c <= 0xD7FF) ||
         (c >= 0xE000 && c <= 0xFFFD) || (c >= 0x10000 && c <= 0x10FFFF);
}

bool IsNameStart(char32_t c) {
  return c == ':' || c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
         (c >= 0xC0 && c <= 0xD6) || (c >= 0xD8 && c <= 0xF6) || (c >= 0xF8 && c <= 0x2FF) ||
         (c >= 0x370 && c <= 0x37D) || (c >= 0x37F && c <= 0x1FFF) || c == 0x200C || c == 0x200D ||
         (c >= 0x2070 && c <= 0x218F) || (c >= 0x2C00 && c <= 0x2FEF) ||
         (c >= 0x3001 && c <= 0xD7FF) || (c >= 0xF900 && c <= 0xFDCF) ||
         (c >= 0xFDF0 && c <= 0xFFFD) || (c >= 0x10000 && c <= 0xEFFFF);
}

bool IsNameChar(char32_t c) {
  return IsNameStart(c) || c == '-' || c == '.' || (c >= '0' && c <= '9') || c == 0xB7 ||
         (c >= 0x300 && c <= 0x36F) || c == 0x203F || c == 0x2040;
}

struct XmlElement {
  std::string tag;  // "{namespace}local" or "local", as ElementTree names it
  std::map<std::string, std::string> attrib;
  std::string text;
  std::string tail;
  size_t children = 0;  // element children (cells only)
};

struct XmlRecord {
  XmlElement element;
  std::vector<XmlElement> cells;
};

struct XmlDocument {
  XmlElement root;
  std::vector<XmlRecord> records;
};

// A non-validating XML 1.0 reader with the checks expat makes: well-formedness, the five
// predefined entities and character references only, namespace prefixes bound. It keeps the
// three levels the profile reads, with ElementTree's text/tail split (comments and processing
// instructions dropped, their neighbouring text joined).
class XmlReader {
 public:
  explicit XmlReader(std::string text) : s_(std::move(text)) {}

  std::optional<XmlDocument> Read() {
    if (!Prepare() || !Prolog()) return std::nullopt;
    while (i_ < s_.size()) {
      if (!Step()) return std::nullopt;
    }
    if (!root_closed_) return Fail("no element found");
    return std::move(doc_);
  }
  const std::string& error() const { return error_; }

 private:
  struct Open {
    std::string raw_name;
    std::vector<std::pair<std::string, std::optional<std::string>>>
        saved;  // ns bindings to restore
  };

  std::nullopt_t Fail(const std::string& message) {
    if (error_.empty()) error_ = "XML: " + message + " (byte " + std::to_string(i_) + ")";
    return std::nullopt;
  }
  bool Bad(const std::string& message) {
    Fail(message);
    return false;
  }
  bool StartsWith(std::string_view prefix) const {
    return std::string_view(s_).substr(i_, prefix.size()) == prefix;
  }
  bool SkipSpace() {
    const size_t start = i_;
    while (i_ < s_.size() && IsXmlSpace(s_[i_])) ++i_;
    return i_ > start;
  }

  // Line ends normalised to "\n" (as expat does before anything else), a BOM dropped, every
  // character an XML Char.
  bool Prepare() {
    if (s_.compare(0, 3, "\xEF\xBB\xBF") == 0) s_.erase(0, 3);
    std::string out;
    out.reserve(s_.size());
    for (size_t k = 0; k < s_.size(); ++k) {
      if (s_[k] == '\r') {
        out += '\n';
        if (k + 1 < s_.size() && s_[k + 1] == '\n') ++k;
      } else {
        out += s_[k];
      }
    }
    s_ = std::move(out);
    for (size_t k = 0; k < s_.size();) {
      const size_t at = k;
      if (!IsXmlChar(NextCodePoint(s_, k))) {
        i_ = at;
        return Bad("not well-formed (invalid token)");
      }
    }
    return true;
  }

  bool Name(std::string& out) {
    const size_t start = i_;
    size_t k = i_;
    if (k >= s_.size() || !IsNameStart(NextCodePoint(s_, k)))
      return Bad("not well-formed (invalid token)");
    i_ = k;
    while (i_ < s_.size()) {
      size_t next = i_;
      if (!IsNameChar(NextCodePoint(s_, next))) break;
      i_ = next;
    }
    out = s_.substr(start, i_ - start);
    return true;
  }

  bool Quoted(std::string& out) {
    if (i_ >= s_.size() || (s_[i_] != '"' && s_[i_] != '\''))
      return Bad("not well-formed (invalid token)");
    const char quote = s_[i_++];
    const size_t end = s_.find(quote, i_);
    if (end == std::string::npos) return Bad("unclosed token");
    out = s_.substr(i_, end - i_);
    i_ = end + 1;
    return true;
  }

  // <?xml version="..." encoding="..." standalone="..."?> at the very start.
  bool Prolog() {
    if (!(StartsWith("<?xml") && s_.size() > 5 && IsXmlSpace(s_[5]))) return true;
    i_ = 5;
    const auto pseudo = [&](const char* name, bool required, const auto& valid) {
      const size_t save = i_;
      const bool space = SkipSpace();
      if (!space || !StartsWith(name)) {
        i_ = save;
        return !required || Bad("XML declaration not well-formed");
      }
      i_ += std::string_view(name).size();
      SkipSpace();
      if (i_ >= s_.size() || s_[i_] != '=') return Bad("XML declaration not well-formed");
      ++i_;
      SkipSpace();
      std::string value;
      if (!Quoted(value)) return false;
      return valid(value) || Bad("XML declaration not well-formed");
    };
    const auto version = [](const std::string& v) {
      return !v.empty() && std::all_of(v.begin(), v.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == ':' ||
               c == '-';
      });
    };
    const auto encoding = [](const std::string& v) {
      return !v.empty() && std::isalpha(static_cast<unsigned char>(v[0])) &&
             std::all_of(v.begin(), v.end(), [](char c) {
               return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' ||
                      c == '-';
             });
    };
    const auto standalone = [](const std::string& v) { return v == "yes" || v == "no"; };
    if (!pseudo("version", true, version) || !pseudo("encoding", false, encoding) ||
        !pseudo("standalone", false, standalone)) {
      return false;
    }
    SkipSpace();
    if (!StartsWith("?>")) return Bad("XML declaration not well-formed");
    i_ += 2;
    return true;
  }

  std::string* Target() { return text_target_; }

  void AppendText(std::string_view text) {
    if (std::string* target = Target()) target->append(text);
  }

  bool Reference(std::string& out) {
    const size_t semi = s_.find(';', i_);
    if (semi == std::string::npos) return Bad("not well-formed (invalid token)");
    const std::string body = s_.substr(i_ + 1, semi - i_ - 1);
    if (!body.empty() && body[0] == '#') {
      const bool hex = body.size() > 1 && body[1] == 'x';
      const std::string digits = body.substr(hex ? 2 : 1);
      if (digits.empty() || digits.size() > 8) return Bad("reference to invalid character number");
      char32_t cp = 0;
      for (char d : digits) {
        int v = -1;
        if (d >= '0' && d <= '9') v = d - '0';
        if (hex && d >= 'a' && d <= 'f') v = d - 'a' + 10;
        if (hex && d >= 'A' && d <= 'F') v = d - 'A' + 10;
        if (v < 0) return Bad("not well-formed (invalid token)");
        cp = cp * (hex ? 16 : 10) + static_cast<char32_t>(v);
      }
      if (!IsXmlChar(cp)) return Bad("reference to invalid character number");
      AppendUtf8(out, cp);
    } else {
      static const std::map<std::string, std::string, std::less<>> kEntities = {
          {"lt", "<"}, {"gt", ">"}, {"amp", "&"}, {"apos", "'"}, {"quot", "\""}};
      const auto it = kEntities.find(body);
      if (it == kEntities.end()) {
        return Bad(body.empty() || !IsNameStart(static_cast<unsigned char>(body[0]))
                       ? "not well-formed (invalid token)"
                       : "undefined entity");
      }
      out += it->second;
    }
    i_ = semi + 1;
    return true;
  }

  bool Step() {
    if (s_[i_] == '<') {
      if (StartsWith("<!--")) return Comment();
      if (StartsWith("<![CDATA[")) {
        if (stack_.empty()) return Bad("not well-formed (invalid token)");
        const size_t end = s_.find("]]>", i_ + 9);
        if (end == std::string::npos) return Bad("unclosed CDATA section");
        AppendText(std::string_view(s_).substr(i_ + 9, end - i_ - 9));
        i_ = end + 3;
        return true;
      }
      if (StartsWith("<?")) return ProcessingInstruction();
      if (StartsWith("<!")) return Bad("syntax error");
      if (StartsWith("</")) return EndTag();
      return StartTag();
    }
    if (s_[i_] == '&') {
      if (stack_.empty()) return Bad(root_closed_ ? "junk after document element" : "syntax error");
      std::string text;
      if (!Reference(text)) return false;
      AppendText(text);
      return true;
    }
    size_t end = i_;
    while (end < s_.size() && s_[end] != '<' && s_[end] != '&') ++end;
    const std::string_view text = std::string_view(s_).substr(i_, end - i_);
    if (stack_.empty()) {
      if (!std::all_of(text.begin(), text.end(), IsXmlSpace)) {
        return Bad(root_closed_ ? "junk after document element" : "syntax error");
      }
    } else {
      const size_t bad = text.find("]]>");
      if (bad != std::string_view::npos) {
        i_ += bad;
        return Bad("not well-formed (invalid token)");
      }
      AppendText(text);
    }
    i_ = end;
    return true;
  }

  bool Comment() {
    const size_t dashes = s_.find("--", i_ + 4);
    if (dashes == std::string::npos) return Bad("unclosed token");
    if (dashes + 2 >= s_.size() || s_[dashes + 2] != '>') {
      i_ = dashes;
      return Bad("not well-formed (invalid token)");
    }
    i_ = dashes + 3;
    return true;
  }

  bool ProcessingInstruction() {
    i_ += 2;
    std::string target;
    if (!Name(target)) return false;
    std::string lower = target;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower == "xml") return Bad("XML or text declaration not at start of entity");
    if (StartsWith("?>")) {
      i_ += 2;
      return true;
    }
    if (!SkipSpace()) return Bad("not well-formed (invalid token)");
    const size_t end = s_.find("?>", i_);
    if (end == std::string::npos) return Bad("unclosed token");
    i_ = end + 2;
    return true;
  }

  // Binds or rebinds a prefix ("" is the default namespace); remembers what to restore.
  bool Bind(const std::string& prefix, const std::string& uri, Open& open) {
    static const std::string kXmlUri = "http://www.w3.org/XML/1998/namespace";
    if (prefix == "xmlns") return Bad("reserved prefix (xmlns) must not be declared or undeclared");
    if (prefix == "xml" && uri != kXmlUri)
      return Bad("reserved prefix (xml) must not be undeclared or bound to another namespace name");
    if (prefix != "xml" && uri == kXmlUri)
      return Bad("prefix must not be bound to one of the reserved namespace names");
    if (!prefix.empty() && uri.empty()) return Bad("must not undeclare prefix");
    const auto it = namespaces_.find(prefix);
    open.saved.emplace_back(
        prefix, it == namespaces_.end() ? std::nullopt : std::optional<std::string>(it->second));
    namespaces_[prefix] = uri;
    return true;
  }

  // ElementTree's name for a qualified name: "{uri}local", or "local" without a namespace.
  bool Expand(const std::string& qname, bool attribute, std::string& out) {
    const size_t colon = qname.find(':');
    if (colon == std::string::npos) {
      const auto it = namespaces_.find("");
      out = (!attribute && it != namespaces_.end() && !it->second.empty())
                ? "{" + it->second + "}" + qname
                : qname;
      return true;
    }
    const std::string prefix = qname.substr(0, colon);
    const std::string local = qname.substr(colon + 1);
    if (prefix == "xml") {
      out = "{http://www.w3.org/XML/1998/namespace}" + local;
      return true;
    }
    const auto it = namespaces_.find(prefix);
    if (prefix.empty() || local.empty() || it == namespaces_.end()) return Bad("unbound prefix");
    out = "{" + it->second + "}" + local;
    return true;
  }

  bool StartTag() {
    if (root_closed_) return Bad("junk after document element");
    ++i_;
    Open open;
    if (!Name(open.raw_name)) return false;
    std::vector<std::pair<std::string, std::string>> raw;
    bool empty = false;
    for (;;) {
      const bool space = SkipSpace();
      if (i_ >= s_.size()) return Bad("unclosed token");
      if (s_[i_] == '>') {
        ++i_;
        break;
      }
      if (StartsWith("/>")) {
        i_ += 2;
        empty = true;
        break;
      }
      if (!space) return Bad("not well-formed (invalid token)");
      std::string name;
      if (!Name(name)) return false;
      SkipSpace();
      if (i_ >= s_.size() || s_[i_] != '=') return Bad("not well-formed (invalid token)");
      ++i_;
      SkipSpace();
      if (i_ >= s_.size() || (s_[i_] != '"' && s_[i_] != '\''))
        return Bad("not well-formed (invalid token)");
      const char quote = s_[i_++];
      std::string value;
      for (;;) {
        if (i_ >= s_.size()) return Bad("unclosed token");
        const char c = s_[i_];
        if (c == quote) {
          ++i_;
          break;
        }
        if (c == '<') return Bad("not well-formed (invalid token)");
        if (c == '&') {
          if (!Reference(value)) return false;
          continue;
        }
        value += (c == '\t' || c == '\n') ? ' ' : c;  // attribute-value normalisation
        ++i_;
      }
      for (const auto& [other, ignored] : raw) {
        if (other == name) return Bad("duplicate attribute");
      }
      raw.emplace_back(std::move(name), std::move(value));
    }
    for (const auto& [name, value] : raw) {
      if (name == "xmlns") {
        if (!Bind("", value, open)) return false;
      } else if (name.compare(0, 6, "xmlns:") == 0) {
        if (!Bind(name.substr(6), value, open)) return false;
      }
    }
    XmlElement element;
    if (!Expand(open.raw_name, false, element.tag)) return false;
    for (const auto& [name, value] : raw) {
      if (name == "xmlns" || name.compare(0, 6, "xmlns:") == 0) continue;
      std::string expanded;
      if (!Expand(name, true, expanded)) return false;
      if (!element.attrib.emplace(expanded, value).second) return Bad("duplicate attribute");
    }
    Start(std::move(element));
    stack_.push_back(std::move(open));
    if (empty) return End();
    return true;
  }

  bool EndTag() {
    i_ += 2;
    std::string name;
    if (!Name(name)) return false;
    SkipSpace();
    if (i_ >= s_.size() || s_[i_] != '>') return Bad("not well-formed (invalid token)");
    ++i_;
    if (stack_.empty() || stack_.back().raw_name != name) return Bad("mismatched tag");
    return End();
  }

  // Tree building for the three levels the profile reads; text goes to the innermost kept
  // element's text before its first child, to the last closed child's tail after it.
  void Start(XmlElement element) {
    const size_t depth = stack_.size();
    if (depth == 0) {
      doc_.root = std::move(element);
      text_target_ = &doc_.root.text;
    } else if (depth == 1) {
      doc_.records.push_back({std::move(element), {}});
      text_target_ = &doc_.records.back().element.text;
    } else if (depth == 2) {
      doc_.records.back().cells.push_back(std::move(element));
      text_target_ = &doc_.records.back().cells.back().text;
    } else {
      if (depth == 3) ++doc_.records.back().cells.back().children;
      text_target_ = nullptr;
    }
  }

  bool End() {
    Open open = std::move(stack_.back());
    stack_.pop_back();
    for (auto it = open.saved.rbegin(); it != open.saved.rend(); ++it) {
      if (it->second) {
        namespaces_[it->first] = *it->second;
      } else {
        namespaces_.erase(it->first);
      }
    }
    const size_t depth = stack_.size();
    if (depth == 0) {
      root_closed_ = true;
      text_target_ = nullptr;
    } else if (depth == 1) {
      text_target_ = &doc_.records.back().element.tail;
    } else if (depth == 2) {
      text_target_ = &doc_.records.back().cells.back().tail;
    } else {
      text_target_ = nullptr;
    }
    return true;
  }

  std::string s_;
  size_t i_ = 0;
  std::vector<Open> stack_;
  std::map<std::string, std::string> namespaces_;
  bool root_closed_ = false;
  XmlDocument doc_;
  std::string* text_target_ = nullptr;
  std::string error_;
};

// Whether `text`, upper-cased as Python's str.upper() would, contains `word` (ASCII upper case).
bool ContainsUpper(std::string_view text, std::string_view word) {
  std::string upper;
  upper.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t at = i;
    const char32_t c = NextCodePoint(text, i);
    if (c >= 'a' && c <= 'z') {
      upper += static_cast<char>(c - 'a' + 'A');
    } else if (c == 0x131) {  // dotless i
      upper += 'I';
    } else if (c == 0x17F) {  // long s
      upper += 'S';
    } else {
      upper.append(text.substr(at, i - at));
    }
  }
  return upper.find(word) != std::string::npos;
}

// structuredFormats.py, fmt == 'xml'.
std::optional<json> ParseXml(std::string_view text, std::string* error) {
  if (ContainsUpper(text, "<!DOCTYPE") || ContainsUpper(text, "<!ENTITY")) {
    *error = "DTD and entities are outside the published XML profile";
    return std::nullopt;
  }
  XmlReader reader{std::string(text)};
  auto doc = reader.Read();
  if (!doc) {
    *error = reader.error();
    return std::nullopt;
  }
  const XmlElement& root = doc->root;
  if (root.tag != "records" || !root.attrib.empty() || !PyBlank(root.text)) {
    *error = "Expected records root";
    return std::nullopt;
  }
  json rows = json::array();
  for (const auto& record : doc->records) {
    const XmlElement& r = record.element;
    if (r.tag != "record" || !r.attrib.empty() || !PyBlank(r.text) || !PyBlank(r.tail)) {
      *error = "Expected record elements only";
      return std::nullopt;
    }
    json row = json::object();
    for (const auto& cell : record.cells) {
      if (row.contains(cell.tag) || cell.children > 0 || !PyBlank(cell.tail)) {
        *error = "Duplicate/nested XML field or extra text";
        return std::nullopt;
      }
      if (cell.attrib.size() == 1 && cell.attrib.begin()->first == "null" &&
          cell.attrib.begin()->second == "true" && cell.text.empty()) {
        row[cell.tag] = nullptr;
      } else if (cell.attrib.empty()) {
        row[cell.tag] = cell.text;
      } else {
        *error = "Only empty null=\"true\" fields may have attributes";
        return std::nullopt;
      }
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

// ---- Grading -----------------------------------------------------------------------------------

// atPointer: own properties only; on arrays, canonical indices and "length".
std::optional<json> AtPointer(const json& data, const std::string& pointer) {
  if (pointer.empty()) return data;
  const json* value = &data;
  size_t start = 1;
  for (;;) {
    const size_t slash = pointer.find('/', start);
    const std::string encoded =
        pointer.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    std::string key;
    for (size_t i = 0; i < encoded.size(); ++i) {  // ~1 -> "/" first, then ~0 -> "~"
      if (encoded[i] == '~' && i + 1 < encoded.size() && encoded[i + 1] == '1') {
        key += '/';
        ++i;
      } else if (encoded[i] == '~' && i + 1 < encoded.size() && encoded[i + 1] == '0') {
        key += '~';
        ++i;
      } else {
        key += encoded[i];
      }
    }
    if (value->is_object()) {
      const auto it = value->find(key);
      if (it == value->end()) return std::nullopt;
      value = &*it;
    } else if (value->is_array()) {
      if (key == "length") {
        if (slash != std::string::npos) return std::nullopt;  // a number has no properties
        return json(value->size());
      }
      if (key.empty() || key.size() > 10 || !std::all_of(key.begin(), key.end(), IsDigit) ||
          (key.size() > 1 && key[0] == '0')) {
        return std::nullopt;
      }
      const size_t index = std::stoul(key);
      if (index >= value->size()) return std::nullopt;
      value = &(*value)[index];
    } else {
      return std::nullopt;
    }
    if (slash == std::string::npos) return *value;
    start = slash + 1;
  }
}

struct Criterion {
  std::string id;
  bool pass = false;
  std::string evidence;
};

std::string Evaluator(const Contract& c) {
  return "structured_contract_v" + std::to_string(c.version) + "@a5f6a19f";
}

Grade MakeGrade(int zx_score, json evidence, std::string reason, const std::string& evaluator) {
  return zx::ZxGrade(zx_score, std::move(evidence), std::move(reason), evaluator);
}

Grade Skipped(std::string reason, json evidence) {
  Grade grade;
  grade.status = GradeStatus::kSkipped;
  grade.reason = std::move(reason);
  grade.evidence = std::move(evidence);
  return grade;
}

Grade GradeContract(const Contract& c, const std::string& output) {
  std::vector<Criterion> criteria;
  std::optional<json> data;
  std::string syntax_error;
  if (c.version >= 2 && Utf16Length(output) > kMaxResponseUnits) {
    syntax_error = "Response exceeds published 128 KiB character limit (" +
                   std::to_string(Utf16Length(output)) + " UTF-16 code units)";
  } else if (c.format == "csv") {
    data = ParseCsv(output, &syntax_error);
  } else if (c.format == "xml") {
    data = ParseXml(output, &syntax_error);
  } else {
    JsonReader reader(output);
    data = reader.Parse();
    if (!data) syntax_error = "Invalid raw JSON: " + reader.error();
  }
  criteria.push_back({c.version == 1 ? "raw_json" : "raw_format", data.has_value(),
                      data ? "parsed the whole response as " + c.format : syntax_error});

  bool gave_up = false, ajv_throws = false;
  const auto validate = [&](const json& schema, const char* id) {
    if (!data) {
      criteria.push_back({id, false, "blocked by the invalid response"});
      return;
    }
    Validator validator(c, schema);
    const bool ok = validator.Validate(*data);
    gave_up = gave_up || validator.gave_up();
    ajv_throws = ajv_throws || validator.ajv_throws();
    criteria.push_back({id, ok,
                        ok                    ? "accepted"
                        : validator.gave_up() ? "validation stopped at evalrun's work limit"
                                              : validator.error()});
  };
  validate(*c.schema, "standard_schema");
  if (c.content_schema != nullptr) validate(*c.content_schema, "content_schema");
  for (size_t i = 0; i < c.assertions.size(); ++i) {
    const Assertion& a = c.assertions[i];
    const std::string where = a.pointer.empty() ? "/" : a.pointer;
    const auto actual = data ? AtPointer(*data, a.pointer) : std::nullopt;
    const bool ok = actual && DeepStrictEqual(*actual, *a.expected);
    criteria.push_back(
        {"content_" + std::to_string(i), ok,
         ok ? "matched " + where : (actual ? "value differs at " : "missing at ") + where});
  }

  if (ajv_throws) {
    return Skipped(
        "zx-bench's AJV throws a TypeError validating this response (an unevaluated-"
        "properties variable left undefined by an untaken branch), so it records no "
        "score",
        {{"format", c.format}, {"zx_evaluator", Evaluator(c)}});
  }
  const bool complete =
      std::all_of(criteria.begin(), criteria.end(), [](const Criterion& k) { return k.pass; });
  json evidence = json::object();
  json listed = json::array();
  size_t passed = 0;
  for (const auto& k : criteria) {
    passed += k.pass;
    listed.push_back({{"id", k.id}, {"pass", k.pass}, {"evidence", Shown(k.evidence)}});
  }
  evidence["format"] = c.format;
  evidence["criteria"] = std::move(listed);
  evidence["criteria_passed"] = passed;
  if (gave_up) evidence["work_limit"] = true;
  std::string reason;
  if (complete) {
    reason = "all " + std::to_string(criteria.size()) + " criteria pass";
  } else {
    const auto first =
        std::find_if(criteria.begin(), criteria.end(), [](const Criterion& k) { return !k.pass; });
    reason = std::to_string(passed) + "/" + std::to_string(criteria.size()) +
             " criteria pass; first failure " + first->id + ": " + Shown(first->evidence);
  }
  return MakeGrade(complete ? 100 : 0, std::move(evidence), std::move(reason), Evaluator(c));
}

class ZxStructuredContractGrader final : public Grader {
 public:
  std::string_view name() const override { return kName; }
  std::string_view version() const override { return kVersion; }
  std::string_view description() const override {
    return "zx-bench structured_contract: the whole response parses as JSON/CSV/XML and meets "
           "the frozen JSON Schema and pointer assertions, scored 100 or 0 as zx-bench scores it";
  }

  void CheckSpec(const json& spec, const SourceLocation& where) const override {
    try {
      ReadContract(spec);
    } catch (const ContractError& e) {
      throw Error(where.ToString() + ": " + std::string(kName) + ": " + e.what());
    }
  }

  Grade Run(const json& spec, const Answer& answer,
            const GradeContext& /*context*/) const override {
    try {
      const std::string output = ToWellFormedUtf8(answer.text);
      if (JsTrim(output).empty()) {
        Grade grade = MakeGrade(0, json::object(), "empty output", "structured_contract");
        grade.status = GradeStatus::kNoAnswer;
        return grade;
      }
      Contract contract;
      try {
        contract = ReadContract(spec);
      } catch (const ContractError& e) {
        return Skipped(std::string("zx-bench cannot compile this contract: ") + e.what(),
                       json::object());
      }
      if (!contract.skip.empty()) {
        return Skipped(contract.skip,
                       {{"format", contract.format}, {"zx_evaluator", Evaluator(contract)}});
      }
      return GradeContract(contract, output);
    } catch (const std::exception& e) {  // out of memory and the like: never thrown to the runner
      return Skipped(std::string("internal error while grading: ") + e.what(), json::object());
    }
  }
};

}  // namespace

std::unique_ptr<Grader> MakeZxStructuredContractGrader() {
  return std::make_unique<ZxStructuredContractGrader>();
}

}  // namespace evalrun
