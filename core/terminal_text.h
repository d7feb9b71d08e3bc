#pragma once
// Text that came from outside (a server's model id, version string or error body; a bundle's
// labels) made safe to print on a terminal or in a report: control characters (C0, DEL, C1 —
// NUL, newline, ESC sequences), Unicode bidirectional overrides and isolates (U+202A-U+202E,
// U+2066-U+2069, which reorder what the reader sees) and bytes that are not UTF-8 are written as
// visible escapes ("\x00", "\n", "\u202e"). Everything else, non-ASCII letters included, is kept.
#include <string>
#include <string_view>

namespace evalrun {

std::string TerminalText(std::string_view text);

}  // namespace evalrun
