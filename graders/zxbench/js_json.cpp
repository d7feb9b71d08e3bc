// JSON as JSON.parse reads it (graders/zxbench/js_json.h). Moved from structured_contract.cpp.
#include "graders/zxbench/js_json.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <utility>

#include "core/js_value.h"

namespace evalrun::zx {
namespace {

using js::AppendUtf8;

using nlohmann::json;

constexpr int kMaxJsonDepth = kMaxJsJsonDepth;

bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}

double Num(const json& v) {
  return v.get<double>();
}

// ---- JSON as JSON.parse reads it ----------------------------------------------------------------

// A recursive-descent reader of RFC 8259 JSON that keeps what nlohmann's parser would change: -0
// stays -0 (Object.is tells them apart), numbers beyond double range become ±Infinity or ±0,
// lone surrogate escapes are kept (as WTF-8), the last of duplicate keys wins. Every number is
// a double, as in JavaScript. Nesting deeper than kMaxJsonDepth is refused (JSON.parse would
// accept it; no gold value evalrun grades nests that deep, so the score is the same).
template <class Json>
class JsonReader {
 public:
  explicit JsonReader(std::string_view text) : s_(text) {}

  std::optional<Json> Parse() {
    Json value;
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
  bool Literal(std::string_view word, Json value, Json& out) {
    if (s_.substr(i_, word.size()) != word) return Fail("unexpected token");
    i_ += word.size();
    out = std::move(value);
    return true;
  }

  bool Value(Json& out, int depth) {
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

  bool Object(Json& out, int depth) {
    ++i_;
    out = Json::object();
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
      Json item;
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

  bool Array(Json& out, int depth) {
    ++i_;
    out = Json::array();
    SkipSpace();
    if (i_ < s_.size() && s_[i_] == ']') {
      ++i_;
      return true;
    }
    for (;;) {
      Json item;
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

  bool Number(Json& out) {
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

}  // namespace

std::optional<json> ParseJsJson(std::string_view text, std::string* error) {
  JsonReader<json> reader(text);
  auto value = reader.Parse();
  if (!value && error != nullptr) *error = reader.error();
  return value;
}

std::optional<nlohmann::ordered_json> ParseJsJsonOrdered(std::string_view text,
                                                         std::string* error) {
  JsonReader<nlohmann::ordered_json> reader(text);
  auto value = reader.Parse();
  if (!value && error != nullptr) *error = reader.error();
  return value;
}

// String.prototype.length: UTF-16 code units of well-formed UTF-8 (WTF-8 surrogates count 1).
size_t Utf16Length(std::string_view s) {
  size_t units = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const auto b = static_cast<unsigned char>(s[i]);
    if ((b & 0xC0) != 0x80) units += b >= 0xF0 ? 2 : 1;
  }
  return units;
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

}  // namespace evalrun::zx
