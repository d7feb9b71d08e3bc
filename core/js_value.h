#pragma once
// JavaScript's view of values and text, in one place: what zx-bench's TypeScript does to the
// JSON and strings it handles, reproduced so that evalrun scores and prints exactly as it does.
// Text: UTF-8 decoded the WHATWG way (ill-formed sequences become U+FFFD), lone surrogates kept as
// JSON.parse keeps them (WTF-8), JavaScript's whitespace and trim, Math.round. Values: numbers
// printed as Number.prototype.toString, String(v), JSON.stringify's key order, `===`, truthiness,
// util.isDeepStrictEqual, property paths. Values are nlohmann::ordered_json: insertion order, as
// JavaScript objects keep it. Used by the zx-bench graders, the world runtime and canonical JSON
// (core/canonical_json.h prints numbers with JsNumberString).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace evalrun::js {

using ordered_json = nlohmann::ordered_json;

// ---- Text ---------------------------------------------------------------------------------------

// Decodes one code point at `i` of well-formed UTF-8 and advances `i`.
char32_t NextCodePoint(std::string_view s, size_t& i);
// Appends `cp` as UTF-8 (a lone surrogate as its 3-byte form, WTF-8, as JSON.parse keeps it).
void AppendUtf8(std::string& out, char32_t cp);
// Every ill-formed UTF-8 sequence (maximal subpart) replaced by U+FFFD, as TextDecoder does.
std::string ToWellFormedUtf8(std::string_view in);
// JavaScript's WhiteSpace and LineTerminator: what `\s` matches and String.prototype.trim strips.
bool IsJsSpace(char32_t c);
std::string_view JsTrim(std::string_view s);
// Math.round for the non-negative scores zx-bench computes (halves round up).
int JsRound(double x);

// ---- Values -------------------------------------------------------------------------------------

bool IsNumber(const ordered_json& v);
double NumberOf(const ordered_json& v);  // a number's value as a double
// Number.prototype.toString (ECMA-262 Number::toString, radix 10): 5230.0 -> "5230",
// 1e21 -> "1e+21", NaN -> "NaN", -0 -> "0".
std::string JsNumberString(double x);
std::string JsNumberOf(const ordered_json& v);  // JsNumberString of a JSON number
// A canonical array index ("0", "17"; not "01", "-1"), as JavaScript orders object keys.
std::optional<uint64_t> ArrayIndex(const std::string& key);
// Object.entries in JavaScript's order: array-index keys ascending, then the others as
// inserted (what Object.keys, Object.values and for...in see). Empty for a non-object.
std::vector<std::pair<const std::string*, const ordered_json*>> ObjectEntries(
    const ordered_json& object);
// JSON.stringify of a string, and of a value, appended to `out` (see JsStringify).
void AppendJsString(std::string& out, std::string_view text);
void AppendJs(std::string& out, const ordered_json& v);
// JSON.stringify of a value: insertion order with integer-like keys first, JavaScript number
// formatting (5230.0 -> 5230), no escaping of non-ASCII. What zx-bench shows the model.
std::string JsStringify(const ordered_json& value);
// String(v) for a JSON value.
std::string JsToString(const ordered_json& v);
// util.isDeepStrictEqual on JSON values; nullptr is `undefined`. Numbers compare by value with
// Object.is (0 and -0 differ), object keys as sets.
bool DeepEqual(const ordered_json* a, const ordered_json* b);
// `===` on primitive values (strings, numbers, booleans, null).
bool StrictEquals(const ordered_json* a, const ordered_json* b);
bool Truthy(const ordered_json& v);  // Boolean(v)
// value[key] for a truthy object or array; nullopt is undefined.
std::optional<ordered_json> Property(const ordered_json& value, const std::string& key);
// path.split('/').reduce((value, key) => value && typeof value === 'object' ? value[key] :
// undefined, root) (zx-bench worldTrace.ts getPath). A falsy value (0, "", false, null) is
// carried to the end.
std::optional<ordered_json> GetPath(const ordered_json& root, const std::string& path);
bool SafeInteger(const ordered_json* v);  // Number.isSafeInteger

}  // namespace evalrun::js
