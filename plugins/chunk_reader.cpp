#include "plugins/chunk_reader.h"

#include <array>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

// A one-pass scanner over RFC 8259 JSON that validates everything it reads and decodes only the
// few strings a measurement needs. Values it has no use for are skipped by grammar, which is
// still a full check: strings (escapes, surrogate pairs, control characters, UTF-8 per RFC 3629
// section 4, as nlohmann::json checks them), numbers, literals, nesting up to kMaxDepth. What it
// accepts and rejects is tested against nlohmann::json::accept on mutated server chunks.
//
// Nothing here allocates except appending to the ChunkFields strings (whose capacity Clear()
// keeps) and writing an error message. Object keys are decoded into a small stack buffer, so a
// key written with escapes ("\u0063ontent") still matches.

namespace evalrun {

void ChunkFields::Clear() {
  content.clear();
  reasoning.clear();
  finish_reason.clear();
  model = {};
  system_fingerprint = {};
  usage_json = {};
  timings_json = {};
  meta_info_json = {};
  error_json = {};
  tool_calls_json = {};
  message_json = {};
  has_choices = false;
}

namespace {

// Deeper JSON is rejected rather than risking the stack (each level is a few hundred bytes).
// Server chunks nest six levels at most.
constexpr int kMaxDepth = 512;

enum CharClass : uint8_t { kPlain, kQuote, kBackslash, kControl, kNonAscii };

constexpr std::array<uint8_t, 256> kStringClass = [] {
  std::array<uint8_t, 256> table{};
  for (int c = 0; c < 0x20; ++c) table[c] = kControl;
  table['"'] = kQuote;
  table['\\'] = kBackslash;
  for (int c = 0x80; c < 0x100; ++c) table[c] = kNonAscii;
  return table;
}();

// Length of the well-formed UTF-8 sequence starting at text[pos] (RFC 3629 section 4: no
// overlong forms, no surrogates, nothing above U+10FFFF); 0 when it is ill-formed; -1 when the
// text ends inside it.
int Utf8SequenceLength(std::string_view text, size_t pos) {
  const auto lead = static_cast<unsigned char>(text[pos]);
  int length = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead == 0xE0) {
    length = 3;
    lo = 0xA0;
  } else if ((lead >= 0xE1 && lead <= 0xEC) || lead == 0xEE || lead == 0xEF) {
    length = 3;
  } else if (lead == 0xED) {
    length = 3;
    hi = 0x9F;
  } else if (lead == 0xF0) {
    length = 4;
    lo = 0x90;
  } else if (lead >= 0xF1 && lead <= 0xF3) {
    length = 4;
  } else if (lead == 0xF4) {
    length = 4;
    hi = 0x8F;
  } else {
    return 0;
  }
  for (int k = 1; k < length; ++k) {
    if (pos + k >= text.size()) return -1;
    const auto b = static_cast<unsigned char>(text[pos + k]);
    if (b < lo || b > hi) return 0;
    lo = 0x80;
    hi = 0xBF;
  }
  return length;
}

// How many of the eight bytes at `p` are plain inside a string (8 when all are): the first that
// is '"', '\\', a control character (< 0x20) or non-ASCII ends the run. Word-at-a-time ("SWAR")
// tests: a borrow can only flag a byte above a true match, so the lowest flagged byte is always
// a true one and its index is exact (little-endian; other machines take the byte loop).
[[gnu::always_inline]] inline size_t PlainPrefix8(const char* p) {
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  constexpr uint64_t kHighs = 0x8080808080808080ULL;
  uint64_t x;
  std::memcpy(&x, p, sizeof x);
  const uint64_t quote = x ^ (kOnes * '"');
  const uint64_t backslash = x ^ (kOnes * '\\');
  const uint64_t stop = (((quote - kOnes) & ~quote) | ((backslash - kOnes) & ~backslash) |
                         ((x - kOnes * 0x20) & ~x) | x) &
                        kHighs;
  return stop == 0 ? 8 : static_cast<size_t>(__builtin_ctzll(stop)) / 8;
}

#if defined(__SSE2__)
// The same test sixteen bytes at a time (x86-64's baseline SSE2): a signed compare below 0x20
// flags control characters and every non-ASCII byte at once.
[[gnu::always_inline]] inline size_t PlainPrefix16(const char* p) {
  const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i stop =
      _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('"')),
                                _mm_cmpeq_epi8(x, _mm_set1_epi8('\\'))),
                   _mm_cmplt_epi8(x, _mm_set1_epi8(0x20)));
  const unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(stop));
  return mask == 0 ? 16 : static_cast<size_t>(__builtin_ctz(mask));
}
#endif

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Where the decoded text of a string goes.
// AppendRun gets runs of the event's own text, Append decoded bytes (escapes), which may live in
// a local buffer.
struct DiscardSink {  // the string is only validated
  void AppendRun(const char*, size_t) {}
  void Append(const char*, size_t) {}
};

struct StringSink {
  std::string* out;
  void AppendRun(const char* bytes, size_t n) { out->append(bytes, n); }
  void Append(const char* bytes, size_t n) { out->append(bytes, n); }
};

// Object keys. A key without escapes (every key a server sends) is a view into the event, never
// copied; an escaped one is decoded into a small buffer (the keys looked for are at most 18
// bytes; a longer escaped key matches none of them).
class KeySink {
 public:
  void AppendRun(const char* bytes, size_t n) {
    if (pieces_ == 0) {  // so far the key is this run of the event's text
      view_ = std::string_view(bytes, n);
      pieces_ = 1;
      return;
    }
    Append(bytes, n);
  }
  void Append(const char* bytes, size_t n) {  // from here on the key is copied
    if (pieces_ == 1) Copy(view_.data(), view_.size());
    pieces_ = 2;
    Copy(bytes, n);
  }
  // A long escaped key becomes a string no JSON key we look for can equal.
  std::string_view Text() const {
    if (pieces_ < 2) return view_;
    return overflow_ ? std::string_view("\x01") : std::string_view(buffer_, size_);
  }

 private:
  void Copy(const char* bytes, size_t n) {
    if (n > sizeof(buffer_) - size_) {
      overflow_ = true;
      return;
    }
    std::memcpy(buffer_ + size_, bytes, n);
    size_ += n;
  }

  std::string_view view_;
  int pieces_ = 0;
  char buffer_[24];
  size_t size_ = 0;
  bool overflow_ = false;
};

template <typename Sink>
void AppendUtf8(Sink& sink, uint32_t code_point) {
  char bytes[4];
  size_t n = 0;
  if (code_point < 0x80) {
    bytes[n++] = static_cast<char>(code_point);
  } else if (code_point < 0x800) {
    bytes[n++] = static_cast<char>(0xC0 | (code_point >> 6));
    bytes[n++] = static_cast<char>(0x80 | (code_point & 0x3F));
  } else if (code_point < 0x10000) {
    bytes[n++] = static_cast<char>(0xE0 | (code_point >> 12));
    bytes[n++] = static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    bytes[n++] = static_cast<char>(0x80 | (code_point & 0x3F));
  } else {
    bytes[n++] = static_cast<char>(0xF0 | (code_point >> 18));
    bytes[n++] = static_cast<char>(0x80 | ((code_point >> 12) & 0x3F));
    bytes[n++] = static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    bytes[n++] = static_cast<char>(0x80 | (code_point & 0x3F));
  }
  sink.Append(bytes, n);
}

class ChunkScanner {
 public:
  ChunkScanner(std::string_view text, ChunkFields& out, std::string* error)
      : text_(text), out_(out), error_(error) {}

  bool Run() {
    SkipWhitespace();
    if (Peek() != '{') return FailExpected("'{'");
    if (!ScanObject(1, [this](std::string_view key) { return TopMember(key); })) return false;
    SkipWhitespace();
    if (pos_ != text_.size()) return FailExpected("end of input");
    return true;
  }

 private:
  static constexpr int kEnd = -1;

  // The byte at the cursor as 0..255, or kEnd.
  int Peek() const { return pos_ < text_.size() ? static_cast<unsigned char>(text_[pos_]) : kEnd; }

  void SkipWhitespace() {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c != ' ' && c != '\n' && c != '\r' && c != '\t') return;
      ++pos_;
    }
  }

  bool Fail(size_t at, std::string_view what) {
    if (error_ != nullptr) {
      *error_ = "at byte ";
      *error_ += std::to_string(at);
      *error_ += ": ";
      *error_ += what;
    }
    return false;
  }

  // "'x'", "byte 0x0a" or "end of input": a byte of the input, as error messages name it.
  static std::string Describe(int c) {
    if (c == kEnd) return "end of input";
    if (c >= 0x20 && c < 0x7F) return std::string{'\'', static_cast<char>(c), '\''};
    char hex[16];
    std::snprintf(hex, sizeof(hex), "byte 0x%02x", c);
    return hex;
  }

  // "expected ':', got '}'" at the cursor.
  bool FailExpected(std::string_view what) {
    std::string message = "expected ";
    message += what;
    message += ", got ";
    message += Describe(Peek());
    return Fail(pos_, message);
  }

  // --- the members the chunk is read for; every handler consumes exactly one value ---

  bool TopMember(std::string_view key) {
    if (key == "choices") {  // a repeated key counts its last value, as in nlohmann::json
      out_.content.clear();
      out_.reasoning.clear();
      out_.finish_reason.clear();
      out_.tool_calls_json = {};
      out_.message_json = {};
      out_.has_choices = false;
      if (Peek() == '[') return ScanChoices();
      return SkipValue(2);
    }
    if (key == "model") return ViewString(&out_.model);
    if (key == "system_fingerprint") return ViewString(&out_.system_fingerprint);
    if (key == "usage") return CaptureIf('{', &out_.usage_json, 2);
    if (key == "timings") return CaptureIf('{', &out_.timings_json, 2);
    if (key == "meta_info") return CaptureIf('{', &out_.meta_info_json, 2);
    if (key == "error") {  // an object from most servers, a bare string from some
      out_.error_json = {};
      if (Peek() == 'n') return SkipValue(2);
      return CaptureValue(2, &out_.error_json);
    }
    return SkipValue(2);
  }

  // Only choices[0] is read: evalrun asks for one completion (n = 1).
  bool ScanChoices() {
    return ScanArray(2, [this](size_t index) {
      if (index != 0) return SkipValue(3);
      out_.has_choices = true;
      if (Peek() != '{') return SkipValue(3);
      return ScanObject(3, [this](std::string_view key) { return ChoiceMember(key); });
    });
  }

  bool ChoiceMember(std::string_view key) {
    if (key == "delta") {
      out_.content.clear();
      out_.reasoning.clear();
      out_.tool_calls_json = {};
      if (Peek() == '{') return ScanDelta();
      return SkipValue(4);
    }
    if (key == "finish_reason") return DecodeString(&out_.finish_reason, 4);
    if (key == "message") return CaptureIf('{', &out_.message_json, 4);
    return SkipValue(4);
  }

  // DeepSeek's API, SGLang and older vLLM send `reasoning_content`; newer vLLM sends `reasoning`,
  // some versions both with the same text. A non-empty reasoning_content wins, so text sent under
  // both names is counted once; `reasoning` is decoded only when it is needed, from its saved
  // offset.
  bool ScanDelta() {
    size_t reasoning_at = std::string_view::npos;
    const bool ok = ScanObject(4, [this, &reasoning_at](std::string_view key) {
      if (key == "content") return DecodeString(&out_.content, 5);
      if (key == "reasoning_content") return DecodeString(&out_.reasoning, 5);
      if (key == "tool_calls") return CaptureIf('[', &out_.tool_calls_json, 5);
      if (key == "reasoning") reasoning_at = Peek() == '"' ? pos_ : std::string_view::npos;
      return SkipValue(5);
    });
    if (!ok) return false;
    if (out_.reasoning.empty() && reasoning_at != std::string_view::npos) {
      const size_t resume = pos_;
      pos_ = reasoning_at;
      StringSink sink{&out_.reasoning};
      ScanString(sink);  // validated already: cannot fail
      pos_ = resume;
    }
    return true;
  }

  // A string value decoded into *out; null (or any other type) leaves it empty.
  bool DecodeString(std::string* out, int depth) {
    out->clear();
    if (Peek() != '"') return SkipValue(depth);
    StringSink sink{out};
    return ScanString(sink);
  }

  // A string value as the raw text between its quotes (escapes left as they are: model names
  // and fingerprints have none); null (or any other type) gives "".
  bool ViewString(std::string_view* view) {
    *view = {};
    if (Peek() != '"') return SkipValue(2);
    const size_t start = pos_;
    DiscardSink sink;
    if (!ScanString(sink)) return false;
    *view = text_.substr(start + 1, pos_ - start - 2);
    return true;
  }

  // The raw text of a value that starts with `open` ('{' or '['); null (or any other type)
  // gives "".
  bool CaptureIf(char open, std::string_view* span, int depth) {
    *span = {};
    if (Peek() != open) return SkipValue(depth);
    return CaptureValue(depth, span);
  }

  bool CaptureValue(int depth, std::string_view* span) {
    const size_t start = pos_;
    if (!SkipValue(depth)) return false;
    *span = text_.substr(start, pos_ - start);
    return true;
  }

  // --- the JSON grammar ---

  // `depth` counts containers from the top-level object (1): the depth this value would have.
  bool SkipValue(int depth) {
    switch (Peek()) {
      case '{':
        return ScanObject(depth, [this, depth](std::string_view) { return SkipValue(depth + 1); });
      case '[':
        return ScanArray(depth, [this, depth](size_t) { return SkipValue(depth + 1); });
      case '"': {
        DiscardSink sink;
        return ScanString(sink);
      }
      case 't':
        return ScanLiteral("true");
      case 'f':
        return ScanLiteral("false");
      case 'n':
        return ScanLiteral("null");
      case '-':
      case '0':
      case '1':
      case '2':
      case '3':
      case '4':
      case '5':
      case '6':
      case '7':
      case '8':
      case '9':
        return ScanNumber();
      default:
        return FailExpected("a value");
    }
  }

  // At '{'. on_member(key) is called with the cursor on the member's value and must consume it.
  template <typename OnMember>
  bool ScanObject(int depth, OnMember&& on_member) {
    if (depth > kMaxDepth) return Fail(pos_, "nesting deeper than 512 levels");
    ++pos_;
    SkipWhitespace();
    if (Peek() == '}') {
      ++pos_;
      return true;
    }
    if (Peek() != '"') return FailExpected("a string key or '}'");
    for (;;) {
      KeySink sink;
      std::string_view key;
      if (!ScanKey(sink, &key)) return false;
      SkipWhitespace();
      if (Peek() != ':') return FailExpected("':'");
      ++pos_;
      SkipWhitespace();
      if (!on_member(key)) return false;
      SkipWhitespace();
      if (Peek() == '}') {
        ++pos_;
        return true;
      }
      if (Peek() != ',') return FailExpected("',' or '}'");
      ++pos_;
      SkipWhitespace();
      if (Peek() != '"') return FailExpected("a string key");
    }
  }

  // At '['. on_element(index) is called with the cursor on the element and must consume it.
  template <typename OnElement>
  bool ScanArray(int depth, OnElement&& on_element) {
    if (depth > kMaxDepth) return Fail(pos_, "nesting deeper than 512 levels");
    ++pos_;
    SkipWhitespace();
    if (Peek() == ']') {
      ++pos_;
      return true;
    }
    for (size_t index = 0;; ++index) {
      if (!on_element(index)) return false;
      SkipWhitespace();
      if (Peek() == ']') {
        ++pos_;
        return true;
      }
      if (Peek() != ',') return FailExpected("',' or ']'");
      ++pos_;
      SkipWhitespace();
    }
  }

  // At the '"' of an object key: *key is its text. Every key a server sends is short and plain,
  // so the first sixteen (or eight) bytes usually hold it whole and its closing quote: one word
  // test, no byte loop. Anything else takes ScanString (`sink` keeps an escaped key's decoded
  // text).
  bool ScanKey(KeySink& sink, std::string_view* key) {
#if defined(__SSE2__)
    constexpr size_t kWord = 16;
    const auto plain_prefix = PlainPrefix16;
#else
    constexpr size_t kWord = 8;
    const auto plain_prefix = PlainPrefix8;
#endif
    if constexpr (kWord == 16 || std::endian::native == std::endian::little) {
      const size_t start = pos_ + 1;
      size_t at = start;
      while (at + kWord <= text_.size()) {
        const size_t plain = plain_prefix(text_.data() + at);
        at += plain;
        if (plain == kWord) continue;
        if (text_[at] != '"') break;
        *key = text_.substr(start, at - start);
        pos_ = at + 1;
        return true;
      }
    }
    if (!ScanString(sink)) return false;
    *key = sink.Text();
    return true;
  }

  // At '"'. Appends the unescaped text to `sink` in runs, leaves the cursor after the closing
  // quote.
  template <typename Sink>
  bool ScanString(Sink& sink) {
    const size_t open = pos_;
    ++pos_;
    size_t run = pos_;  // start of the bytes not yet given to the sink
    for (;;) {
      // Sixteen or eight bytes at a time to the first that needs a look; byte by byte near the
      // end.
#if defined(__SSE2__)
      while (pos_ + 16 <= text_.size()) {
        const size_t plain = PlainPrefix16(text_.data() + pos_);
        pos_ += plain;
        if (plain < 16) break;
      }
#endif
      if constexpr (std::endian::native == std::endian::little) {
        while (pos_ + 8 <= text_.size()) {
          const size_t plain = PlainPrefix8(text_.data() + pos_);
          pos_ += plain;
          if (plain < 8) break;
        }
      }
      while (pos_ < text_.size() &&
             kStringClass[static_cast<unsigned char>(text_[pos_])] == kPlain) {
        ++pos_;
      }
      if (pos_ >= text_.size()) return Fail(open, "unterminated string");
      switch (kStringClass[static_cast<unsigned char>(text_[pos_])]) {
        case kQuote:
          sink.AppendRun(text_.data() + run, pos_ - run);
          ++pos_;
          return true;
        case kBackslash:
          sink.AppendRun(text_.data() + run, pos_ - run);
          if (!ScanEscape(sink, open)) return false;
          run = pos_;
          break;
        case kControl:
          return Fail(pos_, "control character in string (it must be escaped)");
        case kNonAscii: {
          const int length = Utf8SequenceLength(text_, pos_);
          if (length < 0) return Fail(open, "unterminated string");
          if (length == 0) return Fail(pos_, "invalid UTF-8 in string");
          pos_ += static_cast<size_t>(length);
          break;
        }
        default:
          break;  // kPlain was consumed above
      }
    }
  }

  // At the backslash of an escape inside the string that opened at `open`.
  template <typename Sink>
  bool ScanEscape(Sink& sink, size_t open) {
    if (pos_ + 1 >= text_.size()) return Fail(open, "unterminated string");
    const char kind = text_[pos_ + 1];
    char decoded;
    switch (kind) {
      case '"':
      case '\\':
      case '/':
        decoded = kind;
        break;
      case 'b':
        decoded = '\b';
        break;
      case 'f':
        decoded = '\f';
        break;
      case 'n':
        decoded = '\n';
        break;
      case 'r':
        decoded = '\r';
        break;
      case 't':
        decoded = '\t';
        break;
      case 'u':
        return ScanUnicodeEscape(sink, open);
      default: {
        const auto c = static_cast<unsigned char>(kind);
        std::string message = c >= 0x20 && c < 0x7F
                                  ? std::string("invalid escape '\\") + kind + "'"
                                  : "invalid escape: '\\' followed by " + Describe(c);
        return Fail(pos_, message + R"( (JSON allows \" \\ \/ \b \f \n \r \t \uXXXX))");
      }
    }
    sink.Append(&decoded, 1);
    pos_ += 2;
    return true;
  }

  // The four hex digits of \uXXXX at text[at + 2]; -1 if they are not four hex digits.
  int32_t ReadHex4(size_t at) const {
    if (at + 6 > text_.size()) return -1;
    int32_t value = 0;
    for (size_t k = at + 2; k < at + 6; ++k) {
      const int digit = HexValue(text_[k]);
      if (digit < 0) return -1;
      value = value * 16 + digit;
    }
    return value;
  }

  // At the backslash of \uXXXX. A UTF-16 surrogate pair (\uD83D\uDE00) is one code point; a
  // surrogate without its partner has no UTF-8 form and is rejected (RFC 8259 section 8.2
  // leaves it open; nlohmann::json rejects it too).
  template <typename Sink>
  bool ScanUnicodeEscape(Sink& sink, size_t open) {
    const size_t at = pos_;
    int32_t code_point = ReadHex4(at);
    if (code_point < 0) return FailHex4(at, open);
    pos_ += 6;
    if (code_point >= 0xDC00 && code_point <= 0xDFFF) {
      return Fail(at, "low surrogate " + std::string(text_.substr(at, 6)) +
                          " without a high surrogate before it");
    }
    if (code_point >= 0xD800 && code_point <= 0xDBFF) {
      const std::string_view rest = text_.substr(pos_);
      if (rest.empty() || rest == "\\") return Fail(open, "unterminated string");
      const int32_t low = rest.starts_with("\\u") ? ReadHex4(pos_) : -2;
      if (low == -1) return FailHex4(pos_, open);
      if (low < 0xDC00 || low > 0xDFFF) {
        return Fail(at, "high surrogate " + std::string(text_.substr(at, 6)) +
                            " not followed by a low surrogate");
      }
      code_point = 0x10000 + ((code_point - 0xD800) << 10) + (low - 0xDC00);
      pos_ += 6;
    }
    AppendUtf8(sink, static_cast<uint32_t>(code_point));
    return true;
  }

  bool FailHex4(size_t at, size_t open) {
    // Running out of text inside the digits is a truncated string, not a bad escape.
    for (size_t k = at + 2; k < at + 6; ++k) {
      if (k >= text_.size()) return Fail(open, "unterminated string");
      if (HexValue(text_[k]) < 0) {
        pos_ = k;
        return FailExpected("4 hex digits after '\\u'");
      }
    }
    return Fail(at, "invalid \\u escape");  // unreachable: ReadHex4 failed for a reason
  }

  bool ScanLiteral(std::string_view literal) {
    if (text_.substr(pos_, literal.size()) != literal) {
      std::string message = "invalid literal, expected '";
      message += literal;
      message += '\'';
      return Fail(pos_, message);
    }
    pos_ += literal.size();
    return true;
  }

  bool IsDigitAt() const { return pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9'; }

  void SkipDigits() {
    while (IsDigitAt()) ++pos_;
  }

  // -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
  bool ScanNumber() {
    if (Peek() == '-') ++pos_;
    if (Peek() == '0') {
      ++pos_;
    } else if (IsDigitAt()) {
      SkipDigits();
    } else {
      return FailExpected("a digit");
    }
    if (Peek() == '.') {
      ++pos_;
      if (!IsDigitAt()) return FailExpected("a digit after '.'");
      SkipDigits();
    }
    if (Peek() == 'e' || Peek() == 'E') {
      ++pos_;
      if (Peek() == '+' || Peek() == '-') ++pos_;
      if (!IsDigitAt()) return FailExpected("a digit in the exponent");
      SkipDigits();
    }
    return true;
  }

  std::string_view text_;
  size_t pos_ = 0;
  ChunkFields& out_;
  std::string* error_;
};

}  // namespace

bool ReadChunk(std::string_view data, ChunkFields& out, std::string* error) {
  out.Clear();
  ChunkScanner scanner(data, out, error);
  if (scanner.Run()) return true;
  out.Clear();  // half-read fields would be mistaken for data
  return false;
}

}  // namespace evalrun
