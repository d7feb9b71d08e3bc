#pragma once
// Canonical JSON (RFC 8785 style) and JavaScript's JSON.stringify, byte-exact: the renderings that
// task hashes, zx-bench's scenarioHash and result hashes are computed over.
//
// Rules: no whitespace; object keys sorted by UTF-16 code units, recursively (arrays keep their
// order); strings escape only `"`, `\`, and control characters below U+0020 (\b \f \n \r \t where
// they apply, otherwise lowercase \u00xx); non-ASCII, `/`, U+2028/2029 are written raw; numbers in
// ECMAScript's Number::toString form (shortest round-trip digits; `1.0` -> `1`, `-0` -> `0`,
// exponent only at >= 1e21 or < 1e-6, written `1e+21`, `1e-7`). Integers beyond 2^53 are written
// as the double JavaScript would hold. NaN and infinities cannot occur in JSON input and throw.
// Every function here throws evalrun::Error on NaN/infinity, binary or discarded values, and
// strings (keys included) that are not valid UTF-8.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace evalrun {

// How object keys are ordered.
enum class KeyOrder {
  kUtf16,       // RFC 8785: by UTF-16 code units
  kJavaScript,  // what JSON.stringify prints for an object built by inserting keys in UTF-16
                // order, as zx-bench's canonicalize.ts does: keys that are array indices ("0",
                // "9", "10"; no leading zero, below 2^32 - 1) come first in numeric order, then
                // the rest in UTF-16 order
};

// The canonical rendering of `value`, keys ordered at every level.
std::string CanonicalJson(const nlohmann::json& value, KeyOrder order = KeyOrder::kUtf16);

// An object whose top-level keys keep the given order (zx-bench's scenarioHash field list),
// values rendered canonically; a null pointer renders as `null`.
std::string CanonicalObjectInOrder(
    const std::vector<std::pair<std::string, const nlohmann::json*>>& fields,
    KeyOrder order = KeyOrder::kUtf16);

// ECMAScript Number::toString of a double.
// Appends `text` as JSON.stringify quotes it: `"`, `\\`, \b \f \n \r \t escaped, other control
// characters as \u00xx, everything else (non-ASCII included) as is. Throws Error for text that
// is not valid UTF-8.
void AppendJsonString(std::string_view text, std::string& out);

std::string EcmaNumber(double value);

}  // namespace evalrun
