// JavaScript's RegExp syntax translated into PCRE2 (graders/framework/js_regex_syntax.h).
#include "graders/framework/js_regex_syntax.h"

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "core/js_value.h"

namespace evalrun {
namespace {

using js::AppendUtf8;
using js::NextCodePoint;
using js::ToWellFormedUtf8;

// One character as a PCRE2 literal: ASCII punctuation escaped, control characters as \xHH (two
// digits, which PCRE2_ALT_BSUX also reads), anything else as its UTF-8 bytes.
void EmitLiteral(std::string& out, char32_t cp) {
  static constexpr char kHex[] = "0123456789abcdef";
  if (cp < 0x20 || cp == 0x7F) {
    out += "\\x";
    out += kHex[cp >> 4];
    out += kHex[cp & 0xF];
  } else if (cp < 0x80) {
    const char c = static_cast<char>(cp);
    const bool alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (!alnum) out += '\\';
    out += c;
  } else {
    AppendUtf8(out, cp);
  }
}

std::string Range(char32_t first, char32_t last) {
  std::string out;
  EmitLiteral(out, first);
  if (last != first) {
    out += '-';
    EmitLiteral(out, last);
  }
  return out;
}

// The members of JavaScript's \s (WhiteSpace and LineTerminator), for use inside [...].
const std::string& JsSpaceItems() {
  static const std::string items = Range(0x09, 0x0D) + Range(0x20, 0x20) + Range(0xA0, 0xA0) +
                                   Range(0x1680, 0x1680) + Range(0x2000, 0x200A) +
                                   Range(0x2028, 0x2029) + Range(0x202F, 0x202F) +
                                   Range(0x205F, 0x205F) + Range(0x3000, 0x3000) +
                                   Range(0xFEFF, 0xFEFF);
  return items;
}

// Everything else (\S inside [...]), surrogates left out: they cannot occur in UTF-8.
const std::string& JsNonSpaceItems() {
  static const std::string items =
      Range(0x00, 0x08) + Range(0x0E, 0x1F) + Range(0x21, 0x9F) + Range(0xA1, 0x167F) +
      Range(0x1681, 0x1FFF) + Range(0x200B, 0x2027) + Range(0x202A, 0x202E) +
      Range(0x2030, 0x205E) + Range(0x2060, 0x2FFF) + Range(0x3001, 0xD7FF) +
      Range(0xE000, 0xFEFE) + Range(0xFF00, 0x10FFFF);
  return items;
}

bool IsHexDigit(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
int HexValue(char c) {
  return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAsciiLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// Translates a JavaScript RegExp source (with or without the u flag) into a PCRE2
// pattern with the same meaning under the options Regex::Compile uses (UTF, DOLLAR_ENDONLY,
// ALT_BSUX, no UCP): \s and \S are JavaScript's Unicode whitespace, '.' refuses \n, \r, U+2028
// and U+2029, JavaScript's escapes (\v, \0, \cX, \xHH, \uHHHH and surrogate pairs, legacy octal,
// identity escapes such as \a) become literals, backreferences become \g{N}, and '{' that does
// not start a quantifier is literal. Patterns JavaScript rejects (a quantifier on a quantifier,
// an unknown (? group, a dangling backslash) are errors. Matching stays on code points, not
// UTF-16 code units: a character outside the BMP is one character here and two in JavaScript.
class JsRegexTranslator {
 public:
  JsRegexTranslator(std::string_view pattern, bool unicode, bool dot_all)
      : p_(pattern), unicode_(unicode), dot_all_(dot_all) {}

  // The PCRE2 pattern, or nullopt with error() set.
  std::optional<std::string> Translate() {
    CountGroups();
    while (i_ < p_.size() && error_.empty()) Atom();
    if (!error_.empty()) return std::nullopt;
    return out_;
  }
  const std::string& error() const { return error_; }

 private:
  void CountGroups() {
    bool in_class = false;
    for (size_t i = 0; i < p_.size(); ++i) {
      const char c = p_[i];
      if (c == '\\') {
        ++i;
      } else if (in_class) {
        if (c == ']') in_class = false;
      } else if (c == '[') {
        in_class = true;
      } else if (c == '(') {
        if (i + 1 < p_.size() && p_[i + 1] == '?') {
          if (i + 2 < p_.size() && p_[i + 2] == '<' && i + 3 < p_.size() && p_[i + 3] != '=' &&
              p_[i + 3] != '!') {
            ++groups_;
            named_ = true;
          }
        } else {
          ++groups_;
        }
      }
    }
  }

  char32_t Next() { return NextCodePoint(p_, i_); }

  void Fail(const char* problem, size_t at) {
    if (error_.empty()) error_ = std::string(problem) + " at offset " + std::to_string(at);
  }

  // What the u flag lets a backslash escape by identity: the syntax characters and '/'.
  static bool IsSyntaxCharacter(char32_t c) {
    return c < 0x80 && std::string_view("^$\\.*+?()[]{}|/").find(static_cast<char>(c)) !=
                           std::string_view::npos;
  }

  // \p{...} or \P{...} at i_ (pointing at 'p'/'P'), u flag only: General_Category and Script
  // values as PCRE2's \p{Name} (PCRE2 refuses the names it does not know).
  std::string PropertyEscape() {
    const size_t at = i_ - 1;
    const char kind = p_[i_];
    const size_t close = p_.find('}', i_);
    if (i_ + 1 >= p_.size() || p_[i_ + 1] != '{' || close == std::string_view::npos ||
        close == i_ + 2) {
      Fail("invalid property name", at);
      return {};
    }
    std::string_view name = p_.substr(i_ + 2, close - i_ - 2);
    i_ = close + 1;
    if (const size_t eq = name.find('='); eq != std::string_view::npos) {
      const std::string_view key = name.substr(0, eq);
      if (key != "General_Category" && key != "gc" && key != "Script" && key != "sc" &&
          key != "Script_Extensions" && key != "scx") {
        Fail("invalid property name", at);
        return {};
      }
      name = name.substr(eq + 1);
    }
    for (const char c : name) {
      if (!IsAsciiLetter(c) && !IsDigit(c) && c != '_') {
        Fail("invalid property name", at);
        return {};
      }
    }
    return std::string("\\") + kind + "{" + std::string(name) + "}";
  }

  // A brace quantifier {n}, {n,} or {n,m} at i; returns its end or npos.
  size_t BraceQuantifierEnd(size_t i) const {
    if (i >= p_.size() || p_[i] != '{') return std::string_view::npos;
    size_t j = i + 1;
    const size_t min_start = j;
    while (j < p_.size() && IsDigit(p_[j])) ++j;
    if (j == min_start) return std::string_view::npos;
    if (j < p_.size() && p_[j] == ',') {
      ++j;
      while (j < p_.size() && IsDigit(p_[j])) ++j;
    }
    if (j < p_.size() && p_[j] == '}') return j + 1;
    return std::string_view::npos;
  }

  bool QuantifierAt(size_t i) const {
    return i < p_.size() &&
           (p_[i] == '*' || p_[i] == '+' || p_[i] == '?' ||
            BraceQuantifierEnd(i) != std::string_view::npos);
  }

  // After a quantifier: an optional lazy '?', then no further quantifier (JavaScript: "Nothing
  // to repeat"; PCRE2 would read '+' as possessive).
  void AfterQuantifier() {
    if (i_ < p_.size() && p_[i_] == '?') {
      out_ += '?';
      ++i_;
    }
    if (QuantifierAt(i_)) error_ = "nothing to repeat at offset " + std::to_string(i_);
  }

  void Atom() {
    const char c = p_[i_];
    switch (c) {
      case '\\':
        Escape();
        return;
      case '.':
        ++i_;
        if (dot_all_) {
          out_ += "[\\s\\S]";
          return;
        }
        out_ += "[^\\n\\r";
        AppendUtf8(out_, 0x2028);
        AppendUtf8(out_, 0x2029);
        out_ += ']';
        return;
      case '[':
        Class();
        return;
      case '(':
        Group();
        return;
      case '*':
      case '+':
      case '?':
        out_ += c;
        ++i_;
        AfterQuantifier();
        return;
      case '{': {
        const size_t end = BraceQuantifierEnd(i_);
        if (end == std::string_view::npos) {
          if (unicode_) return Fail("lone quantifier bracket", i_);
          out_ += "\\{";
          ++i_;
          return;
        }
        const std::string_view q = p_.substr(i_, end - i_);
        const size_t comma = q.find(',');
        if (comma != std::string_view::npos && comma + 2 < q.size()) {
          const double lo = std::strtod(std::string(q.substr(1, comma - 1)).c_str(), nullptr);
          const double hi =
              std::strtod(std::string(q.substr(comma + 1, q.size() - comma - 2)).c_str(), nullptr);
          if (lo > hi) {
            error_ = "numbers out of order in {} quantifier at offset " + std::to_string(i_);
            return;
          }
        }
        out_.append(q);
        i_ = end;
        AfterQuantifier();
        return;
      }
      case '}':
        if (unicode_) return Fail("lone quantifier bracket", i_);
        out_ += "\\}";
        ++i_;
        return;
      case ']':
        if (unicode_) return Fail("lone ']'", i_);
        out_ += "\\]";
        ++i_;
        return;
      case '|':
      case '^':
      case '$':
      case ')':
        out_ += c;
        ++i_;
        return;
      default:
        EmitLiteral(out_, Next());
        return;
    }
  }

  void Group() {
    ++i_;  // '('
    if (i_ < p_.size() && p_[i_] == '?') {
      const std::string_view rest = p_.substr(i_);
      for (std::string_view head : {"?:", "?=", "?!", "?<=", "?<!"}) {
        if (rest.substr(0, head.size()) == head) {
          out_ += '(';
          out_.append(head);
          i_ += head.size();
          return;
        }
      }
      if (rest.substr(0, 2) == "?<") {
        const size_t close = rest.find('>');
        if (close != std::string_view::npos && close > 2) {
          out_ += '(';
          out_.append(rest.substr(0, close + 1));
          i_ += close + 1;
          return;
        }
      }
      error_ = "invalid group at offset " + std::to_string(i_ - 1);
      return;
    }
    out_ += '(';
  }

  // A legacy octal escape (Annex B) whose first digit is at i_.
  char32_t LegacyOctal() {
    char32_t value = static_cast<char32_t>(p_[i_++] - '0');
    const bool zero_to_three = value <= 3;
    if (i_ < p_.size() && p_[i_] >= '0' && p_[i_] <= '7') {
      value = value * 8 + static_cast<char32_t>(p_[i_++] - '0');
      if (zero_to_three && i_ < p_.size() && p_[i_] >= '0' && p_[i_] <= '7') {
        value = value * 8 + static_cast<char32_t>(p_[i_++] - '0');
      }
    }
    return value;
  }

  // \uHHHH at i_ (pointing at 'u'), combining a surrogate pair; 0 when not an escape, 0xD800
  // for a lone surrogate (it can never match UTF-8 text).
  char32_t UnicodeEscape() {
    auto unit_at = [&](size_t at) -> long {
      if (at + 5 > p_.size() || p_[at] != 'u') return -1;
      long unit = 0;
      for (size_t k = at + 1; k < at + 5; ++k) {
        if (!IsHexDigit(p_[k])) return -1;
        unit = unit * 16 + HexValue(p_[k]);
      }
      return unit;
    };
    const long unit = unit_at(i_);
    if (unit < 0) return 0;
    i_ += 5;
    if (unit >= 0xD800 && unit <= 0xDBFF && i_ + 1 < p_.size() && p_[i_] == '\\') {
      const long low = unit_at(i_ + 1);
      if (low >= 0xDC00 && low <= 0xDFFF) {
        i_ += 6;
        return static_cast<char32_t>(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00));
      }
    }
    if (unit >= 0xD800 && unit <= 0xDFFF) return 0xD800;
    return static_cast<char32_t>(unit);
  }

  // A character escape shared by atoms and classes, i_ just after the backslash. Returns the
  // code point, or nullopt when the escape is not a single character (not handled here).
  std::optional<char32_t> CharacterEscape(bool in_class) {
    const char c = p_[i_];
    switch (c) {
      case 'n': ++i_; return U'\n';
      case 'r': ++i_; return U'\r';
      case 't': ++i_; return U'\t';
      case 'f': ++i_; return U'\f';
      case 'v': ++i_; return 0x0B;
      case 'x':
        if (i_ + 2 < p_.size() && IsHexDigit(p_[i_ + 1]) && IsHexDigit(p_[i_ + 2])) {
          const char32_t cp = static_cast<char32_t>(HexValue(p_[i_ + 1]) * 16 + HexValue(p_[i_ + 2]));
          i_ += 3;
          return cp;
        }
        if (unicode_) Fail("invalid escape", i_ - 1);
        ++i_;
        return U'x';
      case 'u': {
        if (unicode_ && i_ + 1 < p_.size() && p_[i_ + 1] == '{') {
          const size_t close = p_.find('}', i_ + 2);
          uint32_t value = 0;
          bool ok = close != std::string_view::npos && close > i_ + 2;
          for (size_t k = i_ + 2; ok && k < close; ++k) {
            ok = IsHexDigit(p_[k]) && value <= 0x10FFFF;
            value = value * 16 + static_cast<uint32_t>(HexValue(p_[k]));
          }
          if (!ok || value > 0x10FFFF) {
            Fail("invalid unicode escape", i_ - 1);
            return U'u';
          }
          i_ = close + 1;
          return value >= 0xD800 && value <= 0xDFFF ? 0xD800 : static_cast<char32_t>(value);
        }
        const char32_t cp = UnicodeEscape();
        if (cp != 0) return cp;
        if (unicode_) Fail("invalid unicode escape", i_ - 1);
        ++i_;
        return U'u';
      }
      case 'c':
        if (i_ + 1 < p_.size() &&
            (IsAsciiLetter(p_[i_ + 1]) || (in_class && (IsDigit(p_[i_ + 1]) || p_[i_ + 1] == '_')))) {
          const char32_t cp = static_cast<char32_t>(p_[i_ + 1]) % 32;
          i_ += 2;
          return cp;
        }
        if (unicode_) Fail("invalid escape", i_ - 1);
        return U'\\';  // "\c" not followed by a control letter: the backslash is literal
      default:
        break;
    }
    if (unicode_ && c >= '0' && c <= '9') {
      Fail(in_class ? "invalid class escape" : "invalid escape", i_ - 1);
      ++i_;
      return U'0';
    }
    if (c >= '0' && c <= '7') return LegacyOctal();
    if (c == '8' || c == '9') {
      ++i_;
      return static_cast<char32_t>(c);
    }
    return std::nullopt;
  }

  void Escape() {
    ++i_;  // the backslash
    if (i_ >= p_.size()) {
      error_ = "\\ at end of pattern";
      return;
    }
    const char c = p_[i_];
    switch (c) {
      case 'd': case 'D': case 'w': case 'W': case 'b': case 'B':
        out_ += '\\';
        out_ += c;
        ++i_;
        return;
      case 's':
        out_ += "[" + JsSpaceItems() + "]";
        ++i_;
        return;
      case 'S':
        out_ += "[^" + JsSpaceItems() + "]";
        ++i_;
        return;
      case 'k':
        if (named_) {
          const size_t close = p_.find('>', i_);
          if (i_ + 1 < p_.size() && p_[i_ + 1] == '<' && close != std::string_view::npos) {
            out_ += '\\';
            out_.append(p_.substr(i_, close + 1 - i_));
            i_ = close + 1;
            return;
          }
          error_ = "invalid named reference at offset " + std::to_string(i_ - 1);
          return;
        }
        if (unicode_) return Fail("invalid named reference", i_ - 1);
        break;
      case 'p':
      case 'P':
        if (unicode_) {
          out_ += PropertyEscape();
          return;
        }
        break;
      default:
        break;
    }
    if (c >= '1' && c <= '9') {
      size_t j = i_;
      uint64_t n = 0;
      while (j < p_.size() && IsDigit(p_[j]) && n < 100000) n = n * 10 + (p_[j++] - '0');
      if (n <= groups_) {
        out_ += "\\g{" + std::to_string(n) + "}";
        i_ = j;
        return;
      }
      if (unicode_) return Fail("invalid escape", i_ - 1);
    }
    if (c == '0' && !(i_ + 1 < p_.size() && IsDigit(p_[i_ + 1]))) {
      ++i_;
      EmitLiteral(out_, 0);
      return;
    }
    if (const auto cp = CharacterEscape(/*in_class=*/false)) {
      if (*cp == 0xD800) {
        out_ += "(?!)";
      } else {
        EmitLiteral(out_, *cp);
      }
      return;
    }
    const size_t at = i_ - 1;
    const char32_t identity = Next();  // identity escape: \a is "a", \/ is "/"
    if (unicode_ && !IsSyntaxCharacter(identity)) return Fail("invalid escape", at);
    EmitLiteral(out_, identity);
  }

  void Class() {
    ++i_;  // '['
    bool negated = false;
    if (i_ < p_.size() && p_[i_] == '^') {
      negated = true;
      ++i_;
    }
    if (i_ < p_.size() && p_[i_] == ']') {  // [] matches nothing, [^] anything
      ++i_;
      out_ += negated ? "[\\s\\S]" : "(?!)";
      return;
    }
    std::string items;
    // One class atom: a code point, or a class escape (returned as PCRE2 text, cp unset).
    struct ClassAtom {
      std::optional<char32_t> cp;
      std::string text;
      char escape = 0;  // the class escape letter (s, S, d, ...) when cp is unset
    };
    auto atom = [&]() -> std::optional<ClassAtom> {
      if (i_ >= p_.size()) return std::nullopt;
      if (p_[i_] != '\\') return ClassAtom{Next(), {}};
      ++i_;
      if (i_ >= p_.size()) return std::nullopt;
      const char c = p_[i_];
      switch (c) {
        case 'd': case 'D': case 'w': case 'W':
          ++i_;
          return ClassAtom{std::nullopt, std::string("\\") + c, c};
        case 's':
          ++i_;
          return ClassAtom{std::nullopt, JsSpaceItems(), 's'};
        case 'S':
          ++i_;
          return ClassAtom{std::nullopt, JsNonSpaceItems(), 'S'};
        case 'b':
          ++i_;
          return ClassAtom{0x08, {}};
        case '-':
          ++i_;
          return ClassAtom{U'-', {}};
        case 'p':
        case 'P':
          if (unicode_) return ClassAtom{std::nullopt, PropertyEscape(), c};
          break;
        default:
          break;
      }
      if (c == '0' && !(i_ + 1 < p_.size() && IsDigit(p_[i_ + 1]))) {
        ++i_;
        return ClassAtom{0, {}};
      }
      if (const auto cp = CharacterEscape(/*in_class=*/true)) return ClassAtom{*cp, {}};
      const size_t at = i_ - 1;
      const char32_t identity = Next();
      if (unicode_ && !IsSyntaxCharacter(identity)) Fail("invalid class escape", at);
      return ClassAtom{identity, {}};
    };
    auto emit = [&](char32_t cp) {
      if (cp != 0xD800) EmitLiteral(items, cp);  // a lone surrogate never matches
    };
    // A class holding an escape and its complement ([\s\S], the bank's "any character")
    // matches everything: PCRE2's own [\s\S] says so without a long list of ranges.
    std::string escapes;
    while (error_.empty()) {
      if (i_ >= p_.size()) {
        error_ = "unterminated character class";
        return;
      }
      if (p_[i_] == ']') {
        ++i_;
        break;
      }
      const auto first = atom();
      if (!first) {
        error_ = "unterminated character class";
        return;
      }
      // A range a-b (both single characters; with a class escape on either side JavaScript
      // reads the '-' literally).
      if (first->cp && i_ + 1 < p_.size() && p_[i_] == '-' && p_[i_ + 1] != ']') {
        const size_t save = i_;
        ++i_;
        const auto last = atom();
        if (!last) {
          error_ = "unterminated character class";
          return;
        }
        if (unicode_ && !last->cp) {
          error_ = "invalid character class at offset " + std::to_string(save);
          return;
        }
        if (last->cp) {
          if (*last->cp < *first->cp) {
            error_ = "range out of order in character class at offset " + std::to_string(save);
            return;
          }
          if (*first->cp == 0xD800 || *last->cp == 0xD800) {
            emit(*first->cp);
            emit(*last->cp);
          } else {
            items += Range(*first->cp, *last->cp);
          }
        } else {
          emit(*first->cp);
          items += "\\-";
          items += last->text;
          escapes += last->escape;
        }
        continue;
      }
      if (unicode_ && !first->cp && i_ + 1 < p_.size() && p_[i_] == '-' && p_[i_ + 1] != ']') {
        error_ = "invalid character class at offset " + std::to_string(i_);
        return;
      }
      if (first->cp) {
        emit(*first->cp);
      } else {
        items += first->text;
        escapes += first->escape;
      }
    }
    if (!error_.empty()) return;
    const auto has = [&](char e) { return escapes.find(e) != std::string::npos; };
    if ((has('s') && has('S')) || (has('d') && has('D')) || (has('w') && has('W'))) {
      out_ += negated ? "(?!)" : "[\\s\\S]";
      return;
    }
    if (items.empty()) {
      out_ += negated ? "[\\s\\S]" : "(?!)";
      return;
    }
    out_ += negated ? "[^" : "[";
    out_ += items;
    out_ += ']';
  }

  std::string_view p_;
  size_t i_ = 0;
  std::string out_;
  std::string error_;
  uint64_t groups_ = 0;
  bool named_ = false;
  bool unicode_ = false;  // the u flag's grammar
  bool dot_all_ = false;  // the s flag
};

}  // namespace

std::optional<std::string> TranslateJsRegex(const std::string& pattern, JsRegexMode mode,
                                            std::string* error, bool dot_all) {
  const std::string source = ToWellFormedUtf8(pattern);
  JsRegexTranslator translator(source, mode == JsRegexMode::kUnicode, dot_all);
  auto out = translator.Translate();
  if (!out) *error = translator.error();
  return out;
}

}  // namespace evalrun
