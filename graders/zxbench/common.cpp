#include "graders/zxbench/common.h"

#include <cmath>

namespace evalrun::zx {

// Decodes one code point at `i` of well-formed UTF-8 (see ToWellFormedUtf8) and advances `i`.
char32_t NextCodePoint(std::string_view s, size_t& i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) {
    ++i;
    return b0;
  }
  int len = b0 >= 0xF0 ? 4 : b0 >= 0xE0 ? 3 : 2;
  char32_t cp = b0 & (len == 4 ? 0x07 : len == 3 ? 0x0F : 0x1F);
  for (int k = 1; k < len && i + k < s.size(); ++k) {
    cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  }
  i += len;
  return cp;
}

// zx-bench sees the model's reply as a JavaScript string, decoded from UTF-8 with the WHATWG
// decoder: every ill-formed sequence (maximal subpart) becomes U+FFFD. Doing the same here makes
// invalid bytes behave as they do there, and lets the rest of this file assume valid UTF-8.
void AppendUtf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::string ToWellFormedUtf8(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  size_t i = 0;
  while (i < in.size()) {
    const auto b0 = static_cast<unsigned char>(in[i]);
    if (b0 < 0x80) {
      out += static_cast<char>(b0);
      ++i;
      continue;
    }
    int need = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (b0 >= 0xC2 && b0 <= 0xDF) {
      need = 1;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
      need = 2;
      if (b0 == 0xE0) lo = 0xA0;
      if (b0 == 0xED) hi = 0x9F;
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
      need = 3;
      if (b0 == 0xF0) lo = 0x90;
      if (b0 == 0xF4) hi = 0x8F;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
      continue;
    }
    size_t j = i + 1;
    bool ok = true;
    for (int k = 0; k < need; ++k, ++j) {
      if (j >= in.size()) {
        ok = false;
        break;
      }
      const auto b = static_cast<unsigned char>(in[j]);
      const unsigned char l = k == 0 ? lo : 0x80, h = k == 0 ? hi : 0xBF;
      if (b < l || b > h) {
        ok = false;
        break;
      }
    }
    if (ok) {
      out.append(in.substr(i, j - i));
    } else {
      out += "\xEF\xBF\xBD";  // the maximal subpart [i, j) is replaced by one U+FFFD
    }
    i = j;
  }
  return out;
}

// JavaScript's WhiteSpace and LineTerminator: what `\s` matches and String.prototype.trim strips.
bool IsJsSpace(char32_t c) {
  switch (c) {
    case 0x09: case 0x0A: case 0x0B: case 0x0C: case 0x0D: case 0x20: case 0xA0: case 0x1680:
    case 0x2028: case 0x2029: case 0x202F: case 0x205F: case 0x3000: case 0xFEFF:
      return true;
    default:
      return c >= 0x2000 && c <= 0x200A;
  }
}

std::string_view JsTrim(std::string_view s) {
  size_t begin = 0;
  while (begin < s.size()) {
    size_t next = begin;
    if (!IsJsSpace(NextCodePoint(s, next))) break;
    begin = next;
  }
  size_t end = begin;  // end of the last non-space code point
  for (size_t i = begin; i < s.size();) {
    const char32_t c = NextCodePoint(s, i);
    if (!IsJsSpace(c)) end = i;
  }
  return s.substr(begin, end - begin);
}

// Math.round for the non-negative scores here (halves round up, as in JavaScript).
int JsRound(double x) {
  const double floor = std::floor(x);
  return static_cast<int>(x - floor >= 0.5 ? floor + 1 : floor);
}

const nlohmann::json& Member(const nlohmann::json& object, const char* key) {
  static const nlohmann::json kNull;
  if (!object.is_object()) return kNull;
  const auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

Grade ZxGrade(int zx_score, nlohmann::json evidence, std::string reason,
              std::string_view evaluator) {
  Grade grade;
  grade.score = zx_score / 100.0;
  grade.passed = zx_score >= 60;
  grade.reason = std::move(reason);
  evidence["zx_score"] = zx_score;
  evidence["zx_evaluator"] = evaluator;
  grade.evidence = std::move(evidence);
  return grade;
}

}  // namespace evalrun::zx
