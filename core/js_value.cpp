// JavaScript's values and text (core/js_value.h).
#include "core/js_value.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "core/canonical_json.h"

namespace evalrun::js {

using json = nlohmann::json;

// ---- Text ---------------------------------------------------------------------------------------

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

// ---- Values -------------------------------------------------------------------------------------

bool IsNumber(const ordered_json& v) {
  return v.is_number();
}
double NumberOf(const ordered_json& v) {
  return v.get<double>();
}

// Number.prototype.toString (ECMA-262 Number::toString, radix 10).
std::string JsNumberString(double x) {
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x > 0 ? "Infinity" : "-Infinity";
  if (x == 0) return "0";
  std::string sign = x < 0 ? "-" : "";
  char buffer[64];
  auto [end, ec] =
      std::to_chars(buffer, buffer + sizeof buffer, std::fabs(x), std::chars_format::scientific);
  (void)ec;
  const std::string sci(buffer, end);  // d[.ddd]e[+-]XX, the shortest round-trip digits
  const size_t e = sci.find('e');
  std::string digits = sci.substr(0, e);
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  const int exponent = std::stoi(sci.substr(e + 1));
  const int k = static_cast<int>(digits.size());
  const int n = exponent + 1;
  std::string out;
  if (k <= n && n <= 21) {
    out = digits + std::string(static_cast<size_t>(n - k), '0');
  } else if (0 < n && n <= 21) {
    out = digits.substr(0, static_cast<size_t>(n)) + "." + digits.substr(static_cast<size_t>(n));
  } else if (-6 < n && n <= 0) {
    out = "0." + std::string(static_cast<size_t>(-n), '0') + digits;
  } else {
    const int shown = n - 1;
    out = digits.substr(0, 1);
    if (k > 1) out += "." + digits.substr(1);
    out += std::string("e") + (shown < 0 ? "-" : "+") + std::to_string(std::abs(shown));
  }
  return sign + out;
}

std::string JsNumberOf(const ordered_json& v) {
  if (v.is_number_integer() || v.is_number_unsigned()) {
    // Exact below 2^53; above, JavaScript holds the nearest double.
    const double d = v.get<double>();
    if (std::fabs(d) < 9007199254740992.0) return v.dump();
    return JsNumberString(d);
  }
  return JsNumberString(v.get<double>());
}

// A canonical array index ("0", "17"; not "01", "-1"), as JavaScript orders object keys.
std::optional<uint64_t> ArrayIndex(const std::string& key) {
  if (key.empty() || key.size() > 10) return std::nullopt;
  if (key.size() > 1 && key[0] == '0') return std::nullopt;
  uint64_t value = 0;
  for (char c : key) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  if (value >= 4294967295ULL) return std::nullopt;
  return value;
}

std::vector<std::pair<const std::string*, const ordered_json*>> ObjectEntries(
    const ordered_json& object) {
  std::vector<std::pair<const std::string*, const ordered_json*>> named;
  if (!object.is_object()) return named;
  std::vector<std::pair<uint64_t, std::pair<const std::string*, const ordered_json*>>> indexed;
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (auto index = ArrayIndex(it.key())) {
      indexed.push_back({*index, {&it.key(), &it.value()}});
    } else {
      named.emplace_back(&it.key(), &it.value());
    }
  }
  std::sort(indexed.begin(), indexed.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::pair<const std::string*, const ordered_json*>> out;
  out.reserve(indexed.size() + named.size());
  for (const auto& [index, entry] : indexed) out.push_back(entry);
  out.insert(out.end(), named.begin(), named.end());
  return out;
}

void AppendJsString(std::string& out, std::string_view text) {
  AppendJsonString(ToWellFormedUtf8(text), out);  // lone surrogates first become U+FFFD
}

void AppendJs(std::string& out, const ordered_json& v) {
  switch (v.type()) {
    case ordered_json::value_t::null:
      out += "null";
      return;
    case ordered_json::value_t::boolean:
      out += v.get<bool>() ? "true" : "false";
      return;
    case ordered_json::value_t::number_integer:
    case ordered_json::value_t::number_unsigned:
    case ordered_json::value_t::number_float: {
      const double d = v.get<double>();
      out += std::isfinite(d) ? JsNumberOf(v) : "null";
      return;
    }
    case ordered_json::value_t::string:
      AppendJsString(out, v.get_ref<const std::string&>());
      return;
    case ordered_json::value_t::array: {
      out += '[';
      bool first = true;
      for (const auto& item : v) {
        if (!first) out += ',';
        first = false;
        AppendJs(out, item);
      }
      out += ']';
      return;
    }
    case ordered_json::value_t::object: {
      // Integer-like keys first, ascending; then the others in insertion order.
      std::vector<std::pair<uint64_t, const std::string*>> indexed;
      std::vector<const std::string*> named;
      for (auto it = v.begin(); it != v.end(); ++it) {
        if (auto index = ArrayIndex(it.key())) {
          indexed.emplace_back(*index, &it.key());
        } else {
          named.push_back(&it.key());
        }
      }
      std::sort(indexed.begin(), indexed.end());
      out += '{';
      bool first = true;
      auto member = [&](const std::string& key) {
        if (!first) out += ',';
        first = false;
        AppendJsString(out, key);
        out += ':';
        AppendJs(out, v.at(key));
      };
      for (const auto& [index, key] : indexed) member(*key);
      for (const std::string* key : named) member(*key);
      out += '}';
      return;
    }
    default:
      out += "null";
      return;  // binary, discarded: never produced here
  }
}

// String(v) for a JSON value.
std::string JsToString(const ordered_json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "null";
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number()) return JsNumberOf(v);
  if (v.is_array()) {
    std::string out;
    bool first = true;
    for (const auto& item : v) {
      if (!first) out += ',';
      first = false;
      if (!item.is_null()) out += JsToString(item);
    }
    return out;
  }
  return "[object Object]";
}

// util.isDeepStrictEqual on JSON values; nullptr is `undefined`. Numbers compare by value with
// Object.is (0 and -0 differ), object keys as sets.
bool DeepEqual(const ordered_json* a, const ordered_json* b) {
  if (a == nullptr || b == nullptr) return a == b;
  if (IsNumber(*a) || IsNumber(*b)) {
    if (!IsNumber(*a) || !IsNumber(*b)) return false;
    const double x = NumberOf(*a), y = NumberOf(*b);
    return x == y && std::signbit(x) == std::signbit(y);
  }
  if (a->type() != b->type()) return false;
  if (a->is_array()) {
    if (a->size() != b->size()) return false;
    for (size_t i = 0; i < a->size(); ++i) {
      if (!DeepEqual(&(*a)[i], &(*b)[i])) return false;
    }
    return true;
  }
  if (a->is_object()) {
    if (a->size() != b->size()) return false;
    for (auto it = a->begin(); it != a->end(); ++it) {
      auto other = b->find(it.key());
      if (other == b->end() || !DeepEqual(&it.value(), &*other)) return false;
    }
    return true;
  }
  return *a == *b;
}

// `===` on the primitive values tool errors are (strings, numbers, booleans, null).
bool StrictEquals(const ordered_json* a, const ordered_json* b) {
  if (a == nullptr || b == nullptr) return a == b;
  if (IsNumber(*a) && IsNumber(*b)) return NumberOf(*a) == NumberOf(*b);
  if (a->is_structured() || b->is_structured()) return false;  // identity: never equal here
  return a->type() == b->type() && *a == *b;
}

bool Truthy(const ordered_json& v) {
  if (v.is_null()) return false;
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number()) return NumberOf(v) != 0;
  if (v.is_string()) return !v.get_ref<const std::string&>().empty();
  return true;
}

// value[key] for a truthy object or array; nullopt is undefined.
std::optional<ordered_json> Property(const ordered_json& value, const std::string& key) {
  if (value.is_object()) {
    auto it = value.find(key);
    if (it == value.end()) return std::nullopt;
    return *it;
  }
  if (value.is_array()) {
    if (key == "length") return ordered_json(value.size());
    if (auto index = ArrayIndex(key); index && *index < value.size()) return value[*index];
  }
  return std::nullopt;
}

// W L7-10 getPath: path.split('/').reduce((value, key) => value && typeof value === 'object'
// ? value[key] : undefined, root). A falsy value (0, "", false, null) is carried to the end.
std::optional<ordered_json> GetPath(const ordered_json& root, const std::string& path) {
  std::optional<ordered_json> value = root;
  size_t start = 0;
  while (true) {
    const size_t slash = path.find('/', start);
    const std::string key =
        path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (value && Truthy(*value)) {
      value = value->is_structured() ? Property(*value, key) : std::nullopt;
    }
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return value;
}

bool SafeInteger(const ordered_json* v) {
  if (v == nullptr || !IsNumber(*v)) return false;
  const double d = NumberOf(*v);
  return std::isfinite(d) && std::floor(d) == d && std::fabs(d) <= 9007199254740991.0;
}

std::string JsStringify(const ordered_json& value) {
  std::string out;
  AppendJs(out, value);
  return out;
}

}  // namespace evalrun::js
