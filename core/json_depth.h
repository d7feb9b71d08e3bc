#pragma once
// How deep a JSON text nests, found by one scan before nlohmann sees it: nlohmann's parser keeps
// its own stack, but dump(), comparison and every walk over a parsed document recurse, so a
// 20,000-deep array in a bundle or a server body would overflow the C stack later. Strings are
// skipped (brackets inside them do not count); the text need not be valid JSON.
#include <cstddef>
#include <optional>
#include <string_view>

namespace evalrun {

// The byte offset of the first '[' or '{' that opens nesting level max_depth + 1, or nullopt when
// the text nests at most max_depth levels.
std::optional<size_t> JsonDepthExceeded(std::string_view text, int max_depth);

}  // namespace evalrun
