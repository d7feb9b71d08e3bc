// The JSON Schema validator with AJV 8's semantics (graders/framework/json_schema_validator.h).
//
// Why one file (1.7k lines): the schema rules (AJV's strict compile) and the validator read one
// keyword table and one reference resolver, and AJV's evaluated-properties emulation threads
// through every applicator; the formats (about 200 lines) are the only part that stands alone.
// Moved from graders/zxbench/structured_contract.cpp; sources: ajv 8.20.0 (lib/compile,
// lib/vocabularies) and ajv-formats 3.0.1 (src/formats.ts).
#include "graders/framework/json_schema_validator.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/js_value.h"
#include "graders/framework/answer.h"
#include "graders/framework/regex.h"

namespace evalrun {
namespace {

using nlohmann::json;
using Dialect = JsonSchemaDialect;

constexpr int kMaxSchemaDepth = 128;        // nesting of a frozen schema
constexpr int kMaxApplyDepth = 1000;        // nested schema applications, $ref chains included
constexpr uint64_t kMaxSteps = 20'000'000;  // schema applications per validation

// ---- Text ---------------------------------------------------------------------------------------

using js::IsJsSpace;      // JavaScript's WhiteSpace and LineTerminator: what `\s` matches
using js::NextCodePoint;  // one code point of well-formed UTF-8

// object[key], or a null value when `object` is not an object or has no such key.
const json& Member(const json& object, const char* key) {
  static const json kNull;
  if (!object.is_object()) return kNull;
  const auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

// Code points, as AJV's ucs2length counts a string for minLength/maxLength.
size_t CodePoints(std::string_view s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}

std::string Shown(std::string_view text) {
  return EvidenceText(text, 120);
}

// ---- JavaScript value semantics -----------------------------------------------------------------

double Num(const json& v) {
  return v.get<double>();
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

bool IsInteger(double d) {
  return std::isfinite(d) && std::floor(d) == d;
}

// `pattern` and `patternProperties`: JavaScript's grammar and meaning, with the u flag's grammar
// where the profile's flags hold it (AJV's unicodeRegExp).
std::shared_ptr<const Regex> CompilePattern(const std::string& pattern, const std::string& flags) {
  return Regex::CompileJavaScript(pattern, flags);
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
      Regex::CompileJavaScript(s, "");  // ajv-formats 3.0.1: new RegExp(str), no u flag
      return true;
    } catch (const Error&) {
      return false;
    }
  }
  return true;  // password, binary
}

// ---- References ---------------------------------------------------------------------------------

struct Resolved {
  const json* schema;
  const json* resource;  // where "#..." references inside `schema` resolve
};

// A profile and its documents, as the schema rules and the validator read them.
struct Setup {
  Dialect dialect = Dialect::kDraft07;
  bool format_assertions = true;
  const std::vector<std::string>& subset;  // empty: the whole vocabulary
  const std::string& subset_note;
  const std::string& pattern_flags;
  size_t kept_violations = 1;
  const json* schema = nullptr;      // the main schema
  const json* references = nullptr;  // object: URI -> schema, or nullptr

  Setup(const JsonSchemaProfile& profile, const JsonSchemaDocuments& documents)
      : dialect(profile.dialect),
        format_assertions(profile.format_assertions),
        subset(profile.keywords),
        subset_note(profile.subset_note),
        pattern_flags(profile.pattern_flags),
        kept_violations(profile.kept_violations),
        schema(documents.schema),
        references(documents.references) {}

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

std::optional<Resolved> Setup::Resolve(const std::string& ref, const json* resource) const {
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
    if (document == nullptr && schema != nullptr) document = FindResource(*schema, base, 0);
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
// formats, keywords strict mode calls ignored. Throws JsonSchemaError naming the place.
class SchemaRules {
 public:
  explicit SchemaRules(const Setup& contract) : contract_(contract) {}

  void Check(const json& schema, const json* resource, const std::string& at, int depth) const {
    if (depth > kMaxSchemaDepth) Throw(at, "schema nested deeper than 128 levels");
    if (schema.is_boolean()) return;
    if (!schema.is_object()) Throw(at, "a schema must be an object or a boolean");
    if (IsResource(schema)) resource = &schema;
    const auto& known = Keywords(contract_.dialect);
    const auto& subset = contract_.subset;
    for (const auto& [key, value] : schema.items()) {
      if (!subset.empty() && std::find(subset.begin(), subset.end(), key) == subset.end()) {
        std::string problem = "unsupported keyword '" + key + "'";
        const std::string suggestion = ClosestMatch(key, subset);
        if (!suggestion.empty()) problem += ", did you mean '" + suggestion + "'?";
        Throw(at, problem + " (" + contract_.subset_note + ")");
      }
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
    throw JsonSchemaError(at + ": " + problem);
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

  void Pattern(const std::string& pattern, const std::string& at) const {
    try {
      CompilePattern(pattern, contract_.pattern_flags);
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
      // ajv lib/vocabularies/validation/enum.ts throws on an empty list.
      if (key == "enum" && value.empty()) Throw(at, "enum must have non-empty array");
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

  const Setup& contract_;
};

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
  Validator(const Setup& contract, const json& root)
      : c_(contract), root_(root), tracking_(contract.dialect == Dialect::k2020) {
    in_progress_.insert(&root_);
    Evaluated ignored;
    Context(root_, &root_, nullptr, "", ignored, 0);
    in_progress_.erase(&root_);
  }

  bool Validate(const json& data) {
    violations_.clear();
    violation_count_ = 0;
    Evaluated evaluated;
    return Context(root_, &root_, &data, "", evaluated, 0) && !gave_up_;
  }
  bool gave_up() const { return gave_up_; }
  // AJV's generated code would throw a TypeError on this value (zx-bench records no score).
  bool ajv_throws() const { return ajv_throws_; }
  std::string error() const {
    return violations_.empty() ? "" : violations_.front().at + ": " + violations_.front().problem;
  }
  size_t violation_count() const { return violation_count_; }
  const std::vector<JsonSchemaViolation>& violations() const { return violations_; }

 private:
  struct RefPlan {
    enum class Mode { kInline, kStatic, kDynamic } props = Mode::kInline, items = Mode::kInline;
    Evaluated callee;  // the callee's compile-time result (kStatic)
  };

  bool Fail(const std::string& at, const std::string& what) {
    if (speculative_ > 0) return false;
    ++violation_count_;
    if (violations_.size() < std::max<size_t>(1, c_.kept_violations)) {  // error() reads the first
      violations_.push_back(JsonSchemaViolation{at.empty() ? "/" : at, what});
    }
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
    const auto result = CompilePattern(pattern, c_.pattern_flags)->Match(subject, false);
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
        // The target's own "#..." references resolve in its document, not the caller's.
        const bool ok = (run || inline_ref) ? Context(*target->schema, target->resource, data, at,
                                                      callee, depth + 1)
                                            : true;
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
            if (additional == false) {  // AJV's error is the object's, not the false schema's
              valid = Fail(at, "must NOT have additional properties ('" + Shown(key) + "')");
              continue;
            }
            Evaluated e;
            if (!Context(additional, resource, &value, child(key), e, depth + 1)) valid = false;
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

  const Setup& c_;
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
  std::vector<JsonSchemaViolation> violations_;
  size_t violation_count_ = 0;
};

}  // namespace

std::string JsonPointerToken(std::string_view key) {
  return PointerToken(key);
}

void CheckJsonSchema(const JsonSchemaProfile& profile, const JsonSchemaDocuments& documents,
                     const json& schema, const std::string& where) {
  const Setup setup(profile, documents);
  SchemaRules(setup).Check(schema, &schema, where, 0);
}

class JsonSchemaValidator::Impl {
 public:
  Impl(const JsonSchemaProfile& profile, const JsonSchemaDocuments& documents, const json& root)
      : setup_(profile, documents), validator_(setup_, root) {}
  Validator& validator() { return validator_; }
  const Validator& validator() const { return validator_; }

 private:
  Setup setup_;  // before validator_, which keeps a reference to it
  Validator validator_;
};

JsonSchemaValidator::JsonSchemaValidator(const JsonSchemaProfile& profile,
                                         const JsonSchemaDocuments& documents, const json& root)
    : impl_(std::make_unique<Impl>(profile, documents, root)) {}
JsonSchemaValidator::~JsonSchemaValidator() = default;

bool JsonSchemaValidator::Validate(const json& data) {
  return impl_->validator().Validate(data);
}
bool JsonSchemaValidator::gave_up() const {
  return impl_->validator().gave_up();
}
bool JsonSchemaValidator::ajv_throws() const {
  return impl_->validator().ajv_throws();
}
std::string JsonSchemaValidator::error() const {
  return impl_->validator().error();
}
size_t JsonSchemaValidator::violation_count() const {
  return impl_->validator().violation_count();
}
const std::vector<JsonSchemaViolation>& JsonSchemaValidator::violations() const {
  return impl_->validator().violations();
}

}  // namespace evalrun
