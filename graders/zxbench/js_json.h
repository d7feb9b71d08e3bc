#pragma once
// JSON as JavaScript's JSON.parse reads it, and the JavaScript value semantics zx-bench's graders
// compare with (String.prototype.length, Node's util.isDeepStrictEqual, ToBoolean).
//
// The reader keeps what nlohmann's parser would change: -0 stays -0, numbers beyond double range
// become ±Infinity or ±0, lone surrogate escapes are kept (as WTF-8), the last of duplicate keys
// wins. Every number is a double, as in JavaScript (integers within 2^53 are stored as integers,
// only so that they print as written). Nesting deeper than kMaxJsJsonDepth is refused.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace evalrun::zx {

constexpr int kMaxJsJsonDepth = 512;  // deeper JSON is refused before it is built

// The whole of `text` as one JSON value, or nullopt with *error set to the first problem and
// its byte position ("unexpected token at position 3").
std::optional<nlohmann::json> ParseJsJson(std::string_view text, std::string* error);
// The same with objects in insertion order (nlohmann::ordered_json, as core/js_value.h handles
// values): what Object.keys and JSON.stringify see. A duplicate key keeps its first place and
// takes the last value, as in JavaScript.
std::optional<nlohmann::ordered_json> ParseJsJsonOrdered(std::string_view text,
                                                         std::string* error);

// String.prototype.length: UTF-16 code units of well-formed UTF-8 (WTF-8 surrogates count 1).
size_t Utf16Length(std::string_view s);

// Node's util.isDeepStrictEqual for JSON values: numbers by Object.is (0 and -0 differ).
bool DeepStrictEqual(const nlohmann::json& a, const nlohmann::json& b);

// JavaScript's ToBoolean.
bool Truthy(const nlohmann::json& v);

}  // namespace evalrun::zx
