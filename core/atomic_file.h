#pragma once
// Writes a whole file so that readers see either the old content or the new, never a part: the
// text goes to a temporary file in the same folder, is flushed to disk, and is renamed over
// `path`. A kill -9, a full disk or a crash mid-write leaves the previous file intact (and at
// worst a stray "<name>.tmp-<pid>-<n>" beside it). Used for every file evalrun writes for the
// user: export bundles, reports, cards, --out.
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace evalrun {

// nullopt on success; otherwise the system's words for what failed ("No space left on device").
std::optional<std::string> WriteFileAtomically(const std::string& path, std::string_view text);

// The same for text made piece by piece, never held whole: `produce` hands each piece to the
// writer it is given. After a failed write the rest is discarded and the failure returned.
using TextSink = std::function<void(std::string_view)>;
std::optional<std::string> WriteFileAtomically(
    const std::string& path, const std::function<void(const TextSink&)>& produce);

}  // namespace evalrun
