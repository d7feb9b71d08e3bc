#pragma once
// zx-bench's two Node contracts for code_repair, requirements.isolatedJavascriptJson
// (isolated-javascript-json-v1) and requirements.isolatedTypescriptJson
// (isolated-typescript-json-v1): their validity rules, the candidate module each builds from the
// patch, and the drivers evalrun runs in the sandbox, written for evalrun from the behaviour of
// zx-bench's isolatedJavascriptJson.ts and isolatedTypescriptJson.ts (bboysky/ajubyte-model-lab
// at 22bb91d1, the packages/core tree of zx-bench's official scorer 4.14.0). Each adapter is a
// fixed scenario keyed by the call's first element; the expected values never enter the sandbox.
// The rules every adapter contract shares (observation JSON, predicates, the cases' shape) live
// here too and serve the SQL, Java and C# contracts.
#include <functional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace evalrun::zx {

// isJson: finite numbers other than -0, plain values, at most 32 levels below `v`.
bool IsJsonValue(const nlohmann::json& v, int depth = 0);

// validObservationJson for parsed JSON: IsJsonValue, at most 10,000 values in all (containers
// included) and at most 262,144 bytes as JSON.stringify writes it.
bool IsObservationJson(const nlohmann::json& v);

// validJsonValuePredicate: {"equals": V} or {"all": [{path, equals} | {path, approx: {value,
// absoluteTolerance, inclusive}}, ...]}, each with exactly its keys.
bool ValidPredicate(const nlohmann::json& p);

// isDeepStrictEqual for JSON values as JavaScript holds them (every number a double).
bool JsonDeepEqual(const nlohmann::json& a, const nlohmann::json& b);

// matchesJsonValuePredicate: isDeepStrictEqual on the parsed values; a path walks own
// properties as JavaScript does (a number key on an object is its decimal text, "length" of an
// array is its length).
bool PredicateHolds(const nlohmann::json& predicate, const nlohmann::json& value);

// /^[A-Za-z_][A-Za-z0-9_]*$/, and with dots /^[A-Za-z_][A-Za-z0-9_.]*$/ (Java's and C#'s).
bool IsIdentifier(const nlohmann::json& v, bool dots = false);

// The cases of an adapter contract (every kind shares the shape): 1..max cases, each an object
// with a unique string id (non-empty when `ids_required`), 1..max calls (arrays of observation
// JSON that `valid_call` accepts) and `expected`, one predicate per call.
bool ValidAdapterCases(const nlohmann::json& cases, size_t max, bool ids_required,
                       const std::function<bool(const nlohmann::json&)>& valid_call);

// validIsolatedJavascriptJsonContract / validIsolatedTypescriptJsonContract.
bool ValidJavascriptJsonContract(const nlohmann::json& c);
bool ValidTypescriptJsonContract(const nlohmann::json& c);

// candidate.mjs for an isolatedJavascriptJson contract: the patch and the export line the driver
// imports (zxEntry, and zxSecondary for the query-string adapter).
std::string JavascriptJsonCandidate(const std::string& patch, const nlohmann::json& contract);

// The names the TypeScript module exports for the driver: the entry point, or api-result's
// three functions.
std::string TypescriptJsonExports(const nlohmann::json& contract);

// driver.mjs of each contract. Both read input.json ({"adapter", "calls"}), import
// ./candidate.mjs, and write JSON.stringify of one value per call to stdout, nothing else.
extern const std::string_view kJavascriptJsonDriver;
extern const std::string_view kTypescriptJsonDriver;

// transpile.cjs: turns candidate.ts into the JavaScript module on stdout, as zx-bench's Node 22
// `--experimental-strip-types` would load it: `export` dropped before function/class/type/
// interface, `export {names};` appended (names in exports.txt), the syntax Node's strip-only
// mode refuses refused with its message, then TypeScript's transpileModule (types erased,
// nothing down-levelled). Exits 1 with the message on stderr when the module cannot load.
extern const std::string_view kTypescriptTranspiler;

// Where Debian's node-typescript package puts the compiler that kTypescriptTranspiler loads.
extern const std::string_view kTypescriptModule;

}  // namespace evalrun::zx
