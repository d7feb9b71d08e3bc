// Date.parse as V8 computes it (graders/zxbench/js_date.h).
#include "graders/zxbench/js_date.h"

#include <climits>
#include <cmath>
#include <cstdint>
#include <string>

#include "core/js_value.h"

namespace evalrun::zx {
namespace {

constexpr int kNone = INT_MAX;               // a component not given
constexpr int kMaxSignificantDigits = 9;     // digits of a numeral that count
constexpr double kMaxTimeMs = 8.64e15;       // ECMAScript's time range
constexpr double kMsPerDay = 86400000.0;

bool Between(int x, int lo, int hi) {
  return static_cast<unsigned>(x - lo) <= static_cast<unsigned>(hi - lo);
}
bool IsMonth(int x) { return Between(x, 1, 12); }
bool IsDay(int x) { return Between(x, 1, 31); }
bool IsHour(int x) { return Between(x, 0, 23); }
bool IsMinute(int x) { return Between(x, 0, 59); }
bool IsSecond(int x) { return Between(x, 0, 59); }
bool IsHour12(int x) { return Between(x, 0, 12); }
bool IsMillisecond(int x) { return Between(x, 0, 999); }

// The string as JavaScript holds it: UTF-16 code units.
std::u16string Utf16(std::string_view s) {
  std::u16string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const char32_t c = js::NextCodePoint(s, i);
    if (c > 0xFFFF) {
      out.push_back(static_cast<char16_t>(0xD800 + ((c - 0x10000) >> 10)));
      out.push_back(static_cast<char16_t>(0xDC00 + ((c - 0x10000) & 0x3FF)));
    } else {
      out.push_back(static_cast<char16_t>(c));
    }
  }
  return out;
}

// One character at a time; 0 past the end (and at a NUL, as in V8).
class Reader {
 public:
  explicit Reader(const std::u16string& units) : units_(units) { Next(); }
  size_t position() const { return index_; }
  void Next() {
    ch_ = index_ < units_.size() ? units_[index_] : 0;
    ++index_;
  }
  bool IsEnd() const { return ch_ == 0; }
  bool IsDigit() const { return ch_ >= '0' && ch_ <= '9'; }
  // A "word" character: 'A' and everything above it, non-ASCII included, but not JavaScript's
  // white space (U+00A0, U+3000, U+FEFF, ...), which Node's V8 skips as white space. The line
  // separators U+2028 and U+2029 stay word characters there (Node 20: NaN after a number).
  bool IsWordChar() const {
    return ch_ >= 'A' && (!js::IsJsSpace(ch_) || ch_ == 0x2028 || ch_ == 0x2029);
  }
  bool Skip(char16_t c) {
    if (ch_ != c) return false;
    Next();
    return true;
  }
  // Digits as a number, only the first kMaxSignificantDigits counted.
  int ReadNumeral() {
    int n = 0;
    for (int i = 0; IsDigit(); ++i, Next()) {
      if (i < kMaxSignificantDigits) n = n * 10 + (ch_ - '0');
    }
    return n;
  }
  // A word; its first three characters lower-cased into `prefix` (zero-padded). Its length.
  int ReadWord(uint32_t prefix[3]) {
    int length = 0;
    for (; IsWordChar(); Next(), ++length) {
      if (length < 3) prefix[length] = ch_ | 0x20;
    }
    for (int i = length; i < 3; ++i) prefix[i] = 0;
    return length;
  }
  bool SkipWhiteSpace() {
    if (!js::IsJsSpace(ch_)) return false;
    Next();
    return true;
  }
  // "(...)" with nesting, to the matching ')' or the end.
  bool SkipParentheses() {
    if (ch_ != '(') return false;
    int balance = 0;
    do {
      if (ch_ == ')') {
        --balance;
      } else if (ch_ == '(') {
        ++balance;
      }
      Next();
    } while (balance > 0 && ch_ != 0);
    return true;
  }

 private:
  const std::u16string& units_;
  size_t index_ = 0;
  char32_t ch_ = 0;
};

enum class Keyword { kInvalid, kMonthName, kTimeZoneName, kTimeSeparator, kAmPm };

struct KeywordEntry {
  char prefix[3];
  Keyword type;
  int value;
};

constexpr KeywordEntry kKeywords[] = {
    {{'j', 'a', 'n'}, Keyword::kMonthName, 1},     {{'f', 'e', 'b'}, Keyword::kMonthName, 2},
    {{'m', 'a', 'r'}, Keyword::kMonthName, 3},     {{'a', 'p', 'r'}, Keyword::kMonthName, 4},
    {{'m', 'a', 'y'}, Keyword::kMonthName, 5},     {{'j', 'u', 'n'}, Keyword::kMonthName, 6},
    {{'j', 'u', 'l'}, Keyword::kMonthName, 7},     {{'a', 'u', 'g'}, Keyword::kMonthName, 8},
    {{'s', 'e', 'p'}, Keyword::kMonthName, 9},     {{'o', 'c', 't'}, Keyword::kMonthName, 10},
    {{'n', 'o', 'v'}, Keyword::kMonthName, 11},    {{'d', 'e', 'c'}, Keyword::kMonthName, 12},
    {{'a', 'm', 0}, Keyword::kAmPm, 0},            {{'p', 'm', 0}, Keyword::kAmPm, 12},
    {{'u', 't', 0}, Keyword::kTimeZoneName, 0},    {{'u', 't', 'c'}, Keyword::kTimeZoneName, 0},
    {{'z', 0, 0}, Keyword::kTimeZoneName, 0},      {{'g', 'm', 't'}, Keyword::kTimeZoneName, 0},
    {{'c', 'd', 't'}, Keyword::kTimeZoneName, -5}, {{'c', 's', 't'}, Keyword::kTimeZoneName, -6},
    {{'e', 'd', 't'}, Keyword::kTimeZoneName, -4}, {{'e', 's', 't'}, Keyword::kTimeZoneName, -5},
    {{'m', 'd', 't'}, Keyword::kTimeZoneName, -6}, {{'m', 's', 't'}, Keyword::kTimeZoneName, -7},
    {{'p', 'd', 't'}, Keyword::kTimeZoneName, -7}, {{'p', 's', 't'}, Keyword::kTimeZoneName, -8},
    {{'t', 0, 0}, Keyword::kTimeSeparator, 0},
};

// The keyword a word is: its first three characters match, and a word longer than three is
// only a month name ("March", "Sept").
const KeywordEntry* LookupKeyword(const uint32_t prefix[3], int length) {
  for (const KeywordEntry& k : kKeywords) {
    bool same = true;
    for (int j = 0; j < 3 && same; ++j) {
      same = prefix[j] == static_cast<uint32_t>(static_cast<unsigned char>(k.prefix[j]));
    }
    if (same && (length <= 3 || k.type == Keyword::kMonthName)) return &k;
  }
  return nullptr;
}

struct Token {
  enum class Kind { kInvalid, kUnknown, kWhiteSpace, kNumber, kSymbol, kEnd, kKeyword };
  Kind kind = Kind::kEnd;
  int length = 0;
  int value = 0;  // the number, the symbol's character, or the keyword's value
  Keyword keyword = Keyword::kInvalid;

  bool IsNumber() const { return kind == Kind::kNumber; }
  bool IsNumber(int digits) const { return IsNumber() && length == digits; }
  bool IsSymbol(char c) const { return kind == Kind::kSymbol && value == c; }
  bool IsSign() const { return IsSymbol('+') || IsSymbol('-'); }
  int Sign() const { return value == '+' ? 1 : -1; }
  bool IsEnd() const { return kind == Kind::kEnd; }
  bool IsInvalid() const { return kind == Kind::kInvalid; }
  bool IsWhiteSpace() const { return kind == Kind::kWhiteSpace; }
  bool IsKeyword() const { return kind == Kind::kKeyword; }
  bool IsKeyword(Keyword k) const { return IsKeyword() && keyword == k; }
  // "Z" alone (not "UTC"): the ES5 form's zone letter.
  bool IsZ() const { return IsKeyword(Keyword::kTimeZoneName) && length == 1 && value == 0; }

  static Token Of(Kind kind, int length, int value) { return {kind, length, value, {}}; }
};

class Tokenizer {
 public:
  explicit Tokenizer(Reader& in) : in_(in), next_(Scan()) {}
  Token Next() {
    const Token t = next_;
    next_ = Scan();
    return t;
  }
  const Token& Peek() const { return next_; }
  bool SkipSymbol(char c) {
    if (!next_.IsSymbol(c)) return false;
    next_ = Scan();
    return true;
  }

 private:
  Token Scan() {
    using Kind = Token::Kind;
    const size_t start = in_.position();
    if (in_.IsEnd()) return Token::Of(Kind::kEnd, 0, -1);
    if (in_.IsDigit()) {
      const int n = in_.ReadNumeral();
      return Token::Of(Kind::kNumber, static_cast<int>(in_.position() - start), n);
    }
    for (char c : {':', '-', '+', '.', ')'}) {
      if (in_.Skip(static_cast<char16_t>(c))) return Token::Of(Kind::kSymbol, 1, c);
    }
    if (in_.IsWordChar()) {
      uint32_t prefix[3];
      const int length = in_.ReadWord(prefix);
      const KeywordEntry* k = LookupKeyword(prefix, length);
      Token t = Token::Of(Kind::kKeyword, length, k != nullptr ? k->value : 0);
      t.keyword = k != nullptr ? k->type : Keyword::kInvalid;
      return t;
    }
    if (in_.SkipWhiteSpace()) {
      return Token::Of(Kind::kWhiteSpace, static_cast<int>(in_.position() - start), -1);
    }
    if (!in_.SkipParentheses()) in_.Next();
    return Token::Of(Kind::kUnknown, 1, -1);
  }

  Reader& in_;
  Token next_;
};

// The three-digit milliseconds of a fraction written with any number of digits.
int Milliseconds(const Token& t) {
  int number = t.value;
  int length = t.length;
  if (length == 1) return number * 100;
  if (length == 2) return number * 10;
  if (length > kMaxSignificantDigits) length = kMaxSignificantDigits;
  while (length > 3) {
    number /= 10;
    --length;
  }
  return number;
}

struct Fields {
  double year = 0, month = 0, day = 1, hour = 0, minute = 0, second = 0, ms = 0;
  std::optional<double> offset_s;  // UTC offset in seconds; none: local time
};

class ZoneComposer {
 public:
  void Set(int offset_hours) {
    sign_ = offset_hours < 0 ? -1 : 1;
    hour_ = offset_hours * sign_;
    minute_ = 0;
  }
  void SetSign(int sign) { sign_ = sign < 0 ? -1 : 1; }
  void SetHour(int hour) { hour_ = hour; }
  void SetMinute(int minute) { minute_ = minute; }
  bool IsExpecting(int n) const { return hour_ != kNone && minute_ == kNone && IsMinute(n); }
  bool IsUtc() const { return hour_ == 0 && minute_ == 0; }
  bool IsEmpty() const { return hour_ == kNone; }
  bool Write(Fields& out) const {
    if (sign_ == kNone) return true;
    const uint64_t seconds = static_cast<uint64_t>(hour_ == kNone ? 0 : hour_) * 3600U +
                             static_cast<uint64_t>(minute_ == kNone ? 0 : minute_) * 60U;
    if (seconds > (1U << 30) - 1) return false;  // beyond a Smi
    out.offset_s = sign_ * static_cast<double>(seconds);
    return true;
  }

 private:
  int sign_ = kNone;
  int hour_ = kNone;
  int minute_ = kNone;
};

class TimeComposer {
 public:
  bool IsEmpty() const { return count_ == 0; }
  bool IsExpecting(int n) const {
    return (count_ == 1 && IsMinute(n)) || (count_ == 2 && IsSecond(n)) ||
           (count_ == 3 && IsMillisecond(n));
  }
  bool Add(int n) {
    if (count_ >= 4) return false;
    parts_[count_++] = n;
    return true;
  }
  bool AddFinal(int n) {
    if (!Add(n)) return false;
    while (count_ < 4) parts_[count_++] = 0;
    return true;
  }
  void SetHourOffset(int n) { hour_offset_ = n; }
  bool Write(Fields& out) {
    while (count_ < 4) parts_[count_++] = 0;
    int& hour = parts_[0];
    const int minute = parts_[1], second = parts_[2], ms = parts_[3];
    if (hour_offset_ != kNone) {
      if (!IsHour12(hour)) return false;
      hour = hour % 12 + hour_offset_;
    }
    if (!IsHour(hour) || !IsMinute(minute) || !IsSecond(second) || !IsMillisecond(ms)) {
      // 24:00:00.000 is the end of the day; no other 24th hour.
      if (hour != 24 || minute != 0 || second != 0 || ms != 0) return false;
    }
    out.hour = hour;
    out.minute = minute;
    out.second = second;
    out.ms = ms;
    return true;
  }

 private:
  int parts_[4] = {0, 0, 0, 0};
  int count_ = 0;
  int hour_offset_ = kNone;
};

class DayComposer {
 public:
  bool IsEmpty() const { return count_ == 0; }
  bool Add(int n) {
    if (count_ >= 3) return false;
    parts_[count_++] = n;
    return true;
  }
  void SetNamedMonth(int n) { named_month_ = n; }
  void SetIsoDate() { iso_ = true; }
  // The parts not given are 1, and they are read as given: so a year not given is 1, that is
  // 2001 ("Mar 20" is 2001-03-20), and a lone number that is no day is a year ("2024 Mar").
  bool Write(Fields& out) {
    if (count_ < 1) return false;
    while (count_ < 3) parts_[count_++] = 1;
    int year = 0;
    int month = kNone;
    int day = kNone;
    if (named_month_ == kNone) {
      if (iso_ || !IsDay(parts_[0])) {  // Y M D
        year = parts_[0];
        month = parts_[1];
        day = parts_[2];
      } else {  // M D Y
        month = parts_[0];
        day = parts_[1];
        year = parts_[2];
      }
    } else {
      month = named_month_;
      if (!IsDay(parts_[0])) {  // Y M D, M Y D, Y D M
        year = parts_[0];
        day = parts_[1];
      } else {  // D M Y, M D Y, D Y M
        day = parts_[0];
        year = parts_[1];
      }
    }
    if (!iso_) {
      if (Between(year, 0, 49)) {
        year += 2000;
      } else if (Between(year, 50, 99)) {
        year += 1900;
      }
    }
    if (year > (1 << 30) - 1 || year < -(1 << 30) || !IsMonth(month) || !IsDay(day)) {
      return false;
    }
    out.year = year;
    out.month = month - 1;
    out.day = day;
    return true;
  }

 private:
  int parts_[3] = {0, 0, 0};
  int count_ = 0;
  int named_month_ = kNone;
  bool iso_ = false;
};

// The ES5 date-time string, as far as it goes. Returns the token the legacy parser continues
// with: kEnd when the whole string was one, kInvalid when it cannot be a date at all.
Token ParseEs5(Tokenizer& scanner, DayComposer& day, TimeComposer& time, ZoneComposer& zone) {
  const Token invalid = Token::Of(Token::Kind::kInvalid, 0, -1);
  // [+-yy]yyyy
  if (scanner.Peek().IsSign()) {
    const Token sign = scanner.Next();  // handed back when unused
    if (!scanner.Peek().IsNumber(6)) return sign;
    const int year = scanner.Next().value;
    if (sign.Sign() < 0 && year == 0) return sign;
    day.Add(sign.Sign() * year);
  } else if (scanner.Peek().IsNumber(4)) {
    day.Add(scanner.Next().value);
  } else {
    return scanner.Next();
  }
  // [-MM[-DD]]
  if (scanner.SkipSymbol('-')) {
    if (!scanner.Peek().IsNumber(2) || !IsMonth(scanner.Peek().value)) return scanner.Next();
    day.Add(scanner.Next().value);
    if (scanner.SkipSymbol('-')) {
      if (!scanner.Peek().IsNumber(2) || !IsDay(scanner.Peek().value)) return scanner.Next();
      day.Add(scanner.Next().value);
    }
  }
  // [THH:mm[:ss[.s+]][Z|+-hh:mm|+-hhmm]]
  if (!scanner.Peek().IsKeyword(Keyword::kTimeSeparator)) {
    if (!scanner.Peek().IsEnd()) return scanner.Next();
  } else {
    scanner.Next();
    if (!scanner.Peek().IsNumber(2) || !Between(scanner.Peek().value, 0, 24)) return invalid;
    const bool hour_24 = scanner.Peek().value == 24;  // only 24:00[:00[.000]]
    time.Add(scanner.Next().value);
    if (!scanner.SkipSymbol(':')) return invalid;
    if (!scanner.Peek().IsNumber(2) || !IsMinute(scanner.Peek().value) ||
        (hour_24 && scanner.Peek().value > 0)) {
      return invalid;
    }
    time.Add(scanner.Next().value);
    if (scanner.SkipSymbol(':')) {
      if (!scanner.Peek().IsNumber(2) || !IsSecond(scanner.Peek().value) ||
          (hour_24 && scanner.Peek().value > 0)) {
        return invalid;
      }
      time.Add(scanner.Next().value);
      if (scanner.SkipSymbol('.')) {
        if (!scanner.Peek().IsNumber() || (hour_24 && scanner.Peek().value > 0)) return invalid;
        time.Add(Milliseconds(scanner.Next()));
      }
    }
    if (scanner.Peek().IsZ()) {
      scanner.Next();
      zone.Set(0);
    } else if (scanner.Peek().IsSign()) {
      zone.SetSign(scanner.Next().Sign());
      if (scanner.Peek().IsNumber(4)) {  // hhmm
        const int hhmm = scanner.Next().value;
        if (!IsHour(hhmm / 100) || !IsMinute(hhmm % 100)) return invalid;
        zone.SetHour(hhmm / 100);
        zone.SetMinute(hhmm % 100);
      } else {
        if (!scanner.Peek().IsNumber(2) || !IsHour(scanner.Peek().value)) return invalid;
        zone.SetHour(scanner.Next().value);
        if (!scanner.SkipSymbol(':')) return invalid;
        if (!scanner.Peek().IsNumber(2) || !IsMinute(scanner.Peek().value)) return invalid;
        zone.SetMinute(scanner.Next().value);
      }
    }
    if (!scanner.Peek().IsEnd()) return invalid;
  }
  // A date alone is UTC; a date-time without a zone is local time.
  if (zone.IsEmpty() && time.IsEmpty()) zone.Set(0);
  day.SetIsoDate();
  return Token::Of(Token::Kind::kEnd, 0, -1);
}

bool Parse(const std::u16string& units, Fields& out) {
  Reader in(units);
  Tokenizer scanner(in);
  ZoneComposer zone;
  TimeComposer time;
  DayComposer day;
  const Token first = ParseEs5(scanner, day, time, zone);
  if (first.IsInvalid()) return false;
  bool has_read_number = !day.IsEmpty();
  for (Token token = first; !token.IsEnd(); token = scanner.Next()) {
    if (token.IsNumber()) {
      has_read_number = true;
      const int n = token.value;
      if (scanner.SkipSymbol(':')) {
        if (scanner.SkipSymbol(':')) {  // n::
          if (!time.IsEmpty()) return false;
          time.Add(n);
          time.Add(0);
        } else {  // n:
          if (!time.Add(n)) return false;
          if (scanner.Peek().IsSymbol('.')) scanner.Next();
        }
      } else if (scanner.SkipSymbol('.') && time.IsExpecting(n)) {
        time.Add(n);
        if (!scanner.Peek().IsNumber()) return false;
        const int ms = Milliseconds(scanner.Next());
        if (ms < 0) return false;
        time.AddFinal(ms);
      } else if (zone.IsExpecting(n)) {
        zone.SetMinute(n);
      } else if (time.IsExpecting(n)) {
        time.AddFinal(n);
        // The end, white space, "Z" or a sign must follow a finished time.
        const Token& peek = scanner.Peek();
        if (!peek.IsEnd() && !peek.IsWhiteSpace() && !peek.IsZ() && !peek.IsSign()) {
          return false;
        }
      } else {
        if (!day.Add(n)) return false;
        scanner.SkipSymbol('-');
      }
    } else if (token.IsKeyword()) {
      if (token.keyword == Keyword::kAmPm && !time.IsEmpty()) {
        time.SetHourOffset(token.value);
      } else if (token.keyword == Keyword::kMonthName) {
        day.SetNamedMonth(token.value);
        scanner.SkipSymbol('-');
      } else if (token.keyword == Keyword::kTimeZoneName && has_read_number) {
        zone.Set(token.value);
      } else {
        // Words are ignored only before the first number, and must not touch it.
        if (has_read_number) return false;
        if (scanner.Peek().IsNumber()) return false;
      }
    } else if (token.IsSign() && (zone.IsUtc() || !time.IsEmpty())) {
      // A UTC offset, after a zone name or a time: +hh, +hhmm, +hh:mm.
      zone.SetSign(token.Sign());
      int n = 0;
      int length = 0;
      if (scanner.Peek().IsNumber()) {
        const Token number = scanner.Next();
        length = number.length;
        n = number.value;
      }
      has_read_number = true;
      if (scanner.Peek().IsSymbol(':')) {
        zone.SetHour(n);
        zone.SetMinute(kNone);
      } else if (length == 1 || length == 2) {
        zone.SetHour(n);
        zone.SetMinute(0);
      } else if (length == 3 || length == 4) {
        zone.SetHour(n / 100);
        zone.SetMinute(n % 100);
      } else {
        return false;
      }
    } else if ((token.IsSign() || token.IsSymbol(')')) && has_read_number) {
      return false;  // a stray sign or ')' after a number
    }
    // Anything else (white space, other characters, parentheses) is skipped.
  }
  return day.Write(out) && time.Write(out) && zone.Write(out);
}

// Days from 1970-01-01 to the first of `month` (0-11, any integer) of `year`.
double DaysFromCivil(double year, double month) {
  const double ym = year + std::floor(month / 12);
  const int64_t y = static_cast<int64_t>(ym);
  const int64_t m = static_cast<int64_t>(month - std::floor(month / 12) * 12) + 1;  // 1-12
  const int64_t yy = m <= 2 ? y - 1 : y;
  const int64_t era = (yy >= 0 ? yy : yy - 399) / 400;
  const int64_t yoe = yy - era * 400;
  const int64_t mp = (m + 9) % 12;
  const int64_t doy = (153 * mp + 2) / 5;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return static_cast<double>(era * 146097 + doe - 719468);
}

}  // namespace

std::optional<double> JsDateParse(std::string_view s) {
  Fields f;
  if (!Parse(Utf16(s), f)) return std::nullopt;
  const double days = DaysFromCivil(f.year, f.month) + f.day - 1;
  double t = days * kMsPerDay + ((f.hour * 60 + f.minute) * 60 + f.second) * 1000 + f.ms;
  if (f.offset_s) t -= *f.offset_s * 1000;  // else local time, taken as UTC (js_date.h)
  if (!(std::fabs(t) <= kMaxTimeMs)) return std::nullopt;
  return t + 0.0;  // -0 is +0 after TimeClip
}

}  // namespace evalrun::zx
