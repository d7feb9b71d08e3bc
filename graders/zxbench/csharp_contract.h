#pragma once
// zx-bench's C# contract for code_repair, requirements.isolatedCsharpJson
// (isolated-csharp-json-v1/v2): as Java's (java_contract.h), a driver generated per case prints
// one JSON value per call. zx-bench builds it with the .NET 8 SDK (isolatedCsharpJson.ts at
// 22bb91d1); Debian has no .NET, so evalrun builds with Mono's C# compiler (mcs, C# 6 and a few
// later features) and runs it with mono: a repair written in later C# (nullable annotations,
// records, switch expressions, target-typed new ...) does not compile here though it does there.
// The two v2 adapters need what Mono lacks (report-sync-context: .NET's HttpClient and
// synchronization-context behaviour; header-span: Span<T>): those entries are skipped.
#include <string>

#include <nlohmann/json.hpp>

namespace evalrun::zx {

// validIsolatedCsharpJsonContract: the seven adapters and their argument rules, v2 exactly for
// report-sync-context and header-span, an entry point /^[A-Za-z_][A-Za-z0-9_.]*$/, 1-100 cases
// with unique non-empty ids, 1-100 calls each, one predicate per call.
bool ValidCsharpJsonContract(const nlohmann::json& c);

bool CsharpContractAdvanced(const nlohmann::json& c);

// Why evalrun cannot run this contract's adapter on Mono ("" when it can).
std::string CsharpAdapterUnsupported(const nlohmann::json& c);

// Candidate.cs: zx-bench's using lines, then the trimmed patch, wrapped in
// `public static class Candidate { ... }` for counter-delegates, decimal-round and decimal-sum.
std::string CsharpCandidateSource(const std::string& patch, const nlohmann::json& contract);

// Driver.cs for one case's calls, in C# that mcs compiles, with a JSON writer standing in for
// System.Text.Json (the values are ints, booleans, strings, arrays of them and null).
std::string CsharpDriverSource(const nlohmann::json& contract, const nlohmann::json& calls);

}  // namespace evalrun::zx
