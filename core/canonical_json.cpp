#include "core/canonical_json.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <system_error>

#include "core/error.h"
#include "core/js_value.h"

namespace evalrun {
namespace {

// 2^53: the largest magnitude up to which every integer is exactly a JavaScript Number.
constexpr std::uint64_t kMaxSafeMagnitude = std::uint64_t{1} << 53;

// Decodes UTF-8 into UTF-16 code units (appended to `out` when it is not null). Throws Error on
// malformed UTF-8 (overlong forms, encoded surrogates, beyond U+10FFFF, truncated sequences):
// nlohmann's parser never produces such strings, but values built in code might, and
// JSON.stringify has no byte-exact rendering for them.
void DecodeUtf8(std::string_view text, std::u16string* out) {
  const auto fail = [&](std::size_t at) {
    throw Error("canonical JSON: invalid UTF-8 at byte " + std::to_string(at) +
                " of a string; only valid UTF-8 can be hashed");
  };
  std::size_t i = 0;
  while (i < text.size()) {
    const auto lead = static_cast<unsigned char>(text[i]);
    char32_t cp = 0;
    std::size_t length = 0;
    char32_t min = 0;
    if (lead < 0x80) {
      cp = lead;
      length = 1;
    } else if ((lead & 0xE0) == 0xC0) {
      cp = lead & 0x1F;
      length = 2;
      min = 0x80;
    } else if ((lead & 0xF0) == 0xE0) {
      cp = lead & 0x0F;
      length = 3;
      min = 0x800;
    } else if ((lead & 0xF8) == 0xF0) {
      cp = lead & 0x07;
      length = 4;
      min = 0x10000;
    } else {
      fail(i);
    }
    if (i + length > text.size()) fail(i);
    for (std::size_t j = 1; j < length; ++j) {
      const auto next = static_cast<unsigned char>(text[i + j]);
      if ((next & 0xC0) != 0x80) fail(i);
      cp = (cp << 6) | (next & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) fail(i);
    if (out != nullptr) {
      if (cp >= 0x10000) {
        cp -= 0x10000;
        out->push_back(static_cast<char16_t>(0xD800 + (cp >> 10)));
        out->push_back(static_cast<char16_t>(0xDC00 + (cp & 0x3FF)));
      } else {
        out->push_back(static_cast<char16_t>(cp));
      }
    }
    i += length;
  }
}


void AppendValue(const nlohmann::json& value, KeyOrder order, std::string& out);

// ECMAScript array index: "0", or digits without a leading zero, at most 2^32 - 2.
bool IsArrayIndex(const std::string& key, std::uint32_t* index) {
  if (key.empty() || key.size() > 10 || (key.size() > 1 && key[0] == '0')) return false;
  std::uint64_t value = 0;
  for (const char c : key) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<std::uint64_t>(c - '0');
  }
  if (value > 4294967294u) return false;
  *index = static_cast<std::uint32_t>(value);
  return true;
}

void AppendObject(const nlohmann::json& object, KeyOrder order, std::string& out) {
  // nlohmann keeps keys in byte order, which differs from UTF-16 order once a key holds
  // U+E000..U+FFFF next to a supplementary-plane character; sort explicitly.
  struct Member {
    std::u16string sort_key;
    const std::string* key;
    const nlohmann::json* value;
    bool is_index = false;
    std::uint32_t index = 0;
  };
  std::vector<Member> members;
  members.reserve(object.size());
  for (const auto& [key, member_value] : object.items()) {
    Member m{{}, &key, &member_value};
    DecodeUtf8(key, &m.sort_key);
    if (order == KeyOrder::kJavaScript) m.is_index = IsArrayIndex(key, &m.index);
    members.push_back(std::move(m));
  }
  std::sort(members.begin(), members.end(), [](const Member& a, const Member& b) {
    if (a.is_index != b.is_index) return a.is_index;
    if (a.is_index) return a.index < b.index;
    return a.sort_key < b.sort_key;
  });
  out.push_back('{');
  bool first = true;
  for (const auto& m : members) {
    if (!first) out.push_back(',');
    first = false;
    AppendJsonString(*m.key, out);
    out.push_back(':');
    AppendValue(*m.value, order, out);
  }
  out.push_back('}');
}

void AppendValue(const nlohmann::json& value, KeyOrder order, std::string& out) {
  using Type = nlohmann::json::value_t;
  switch (value.type()) {
    case Type::null:
      out += "null";
      return;
    case Type::boolean:
      out += value.get<bool>() ? "true" : "false";
      return;
    case Type::string:
      AppendJsonString(value.get_ref<const std::string&>(), out);
      return;
    case Type::number_integer: {
      const auto v = value.get<std::int64_t>();
      const std::uint64_t magnitude =
          v < 0 ? std::uint64_t{0} - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
      out +=
          magnitude <= kMaxSafeMagnitude ? std::to_string(v) : EcmaNumber(static_cast<double>(v));
      return;
    }
    case Type::number_unsigned: {
      const auto v = value.get<std::uint64_t>();
      out += v <= kMaxSafeMagnitude ? std::to_string(v) : EcmaNumber(static_cast<double>(v));
      return;
    }
    case Type::number_float:
      out += EcmaNumber(value.get<double>());
      return;
    case Type::array: {
      out.push_back('[');
      bool first = true;
      for (const auto& element : value) {
        if (!first) out.push_back(',');
        first = false;
        AppendValue(element, order, out);
      }
      out.push_back(']');
      return;
    }
    case Type::object:
      AppendObject(value, order, out);
      return;
    case Type::binary:
      throw Error("canonical JSON: binary values have no JSON rendering");
    case Type::discarded:  // what json::parse(text, nullptr, false) returns for bad text
      throw Error("canonical JSON: a discarded value (failed parse) has no JSON rendering");
  }
  throw Error("canonical JSON: unknown value type");
}

}  // namespace

std::string EcmaNumber(double value) {
  if (std::isnan(value)) throw Error("canonical JSON: NaN has no JSON rendering");
  if (std::isinf(value)) throw Error("canonical JSON: Infinity has no JSON rendering");
  return js::JsNumberString(value);  // ECMA-262 Number::toString, shared with the zx-bench code
}

std::string CanonicalJson(const nlohmann::json& value, KeyOrder order) {
  std::string out;
  AppendValue(value, order, out);
  return out;
}

std::string CanonicalObjectInOrder(
    const std::vector<std::pair<std::string, const nlohmann::json*>>& fields, KeyOrder order) {
  std::string out = "{";
  bool first = true;
  for (const auto& [key, value] : fields) {
    if (!first) out.push_back(',');
    first = false;
    AppendJsonString(key, out);
    out.push_back(':');
    if (value == nullptr) {
      out += "null";
    } else {
      AppendValue(*value, order, out);
    }
  }
  out.push_back('}');
  return out;
}

// JSON.stringify's QuoteJSONString for a string without lone surrogates.
void AppendJsonString(std::string_view text, std::string& out) {
  DecodeUtf8(text, nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += "\\u00";
          out.push_back(kHex[(c >> 4) & 0xF]);
          out.push_back(kHex[c & 0xF]);
        } else {
          out.push_back(c);
        }
    }
  }
  out.push_back('"');
}

}  // namespace evalrun
