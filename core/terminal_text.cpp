#include "core/terminal_text.h"

#include <cstdint>
#include <cstdio>

namespace evalrun {
namespace {

void Hex(std::string& out, unsigned char byte) {
  char buffer[5];
  std::snprintf(buffer, sizeof buffer, "\\x%02x", byte);
  out += buffer;
}

// The length of the valid UTF-8 sequence at text[i] and its code point, or 0.
size_t Utf8At(std::string_view text, size_t i, uint32_t* cp) {
  const auto c = static_cast<unsigned char>(text[i]);
  size_t length = 0;
  uint32_t min = 0;
  if (c >= 0xC2 && c <= 0xDF) length = 2, min = 0x80, *cp = c & 0x1F;
  else if (c >= 0xE0 && c <= 0xEF) length = 3, min = 0x800, *cp = c & 0x0F;
  else if (c >= 0xF0 && c <= 0xF4) length = 4, min = 0x10000, *cp = c & 0x07;
  else return 0;
  if (i + length > text.size()) return 0;
  for (size_t k = 1; k < length; ++k) {
    const auto b = static_cast<unsigned char>(text[i + k]);
    if ((b & 0xC0) != 0x80) return 0;
    *cp = (*cp << 6) | (b & 0x3F);
  }
  if (*cp < min || *cp > 0x10FFFF || (*cp >= 0xD800 && *cp <= 0xDFFF)) return 0;
  return length;
}

}  // namespace

std::string TerminalText(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (c == '\n') out += "\\n";
      else if (c == '\r') out += "\\r";
      else if (c == '\t') out += "\\t";
      else if (c < 0x20 || c == 0x7F) Hex(out, c);
      else out += static_cast<char>(c);
      ++i;
      continue;
    }
    uint32_t cp = 0;
    const size_t length = Utf8At(text, i, &cp);
    if (length == 0) {
      Hex(out, c);
      ++i;
      continue;
    }
    const bool hidden = (cp >= 0x80 && cp <= 0x9F) || (cp >= 0x202A && cp <= 0x202E) ||
                        (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200E || cp == 0x200F ||
                        cp == 0x061C;
    if (hidden) {
      char buffer[12];
      std::snprintf(buffer, sizeof buffer, "\\u%04x", static_cast<unsigned>(cp));
      out += buffer;
    } else {
      out.append(text.substr(i, length));
    }
    i += length;
  }
  return out;
}

}  // namespace evalrun
