#pragma once
// zx-bench's Java contract for code_repair, requirements.isolatedJavaJson
// (isolated-java-json-v1, and v2 for the five concurrency/resource adapters): the harness is a
// Java program generated per case, one statement group per call, whose main prints one JSON
// value per call; the host checks each against its predicate. Written for evalrun from the
// behaviour of zx-bench's isolatedJavaJson.ts (bboysky/ajubyte-model-lab at 22bb91d1): the same
// adapters call the same methods with the same arguments and print the same text.
#include <string>

#include <nlohmann/json.hpp>

namespace evalrun::zx {

// validIsolatedJavaJsonContract: the adapter list and each adapter's argument rules, v2 exactly
// for the advanced adapters, an entry point /^[A-Za-z_][A-Za-z0-9_.]*$/, 1-100 cases with
// unique non-empty ids, 1-100 calls each, one predicate per call.
bool ValidJavaJsonContract(const nlohmann::json& c);

// Whether the contract is v2 (512 MB, 192 pids, 25 s in zx-bench; v1: 384 MB, 64, 8 s).
bool JavaContractAdvanced(const nlohmann::json& c);

// Candidate.java: two imports, then the trimmed patch with `public` taken off top-level
// class/interface/enum keywords, wrapped in `class Candidate { ... }` unless the adapter wants
// the candidate's own classes (money-equality, cache-compute, singleton-publication,
// squares-stress, schema-cache-lifecycle).
std::string JavaCandidateSource(const std::string& patch, const nlohmann::json& contract);

// Driver.java for one case's calls (all valid for the contract's adapter).
std::string JavaDriverSource(const nlohmann::json& contract, const nlohmann::json& calls);

}  // namespace evalrun::zx
