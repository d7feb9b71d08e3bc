#pragma once
// zx-bench's Go contract for code_repair, requirements.isolatedGoJson (isolated-go-json-v1, and
// v2 for the race-counter, fan-in and first-http adapters, built and run with -race): one Go
// program per case, the model's code between the harness's imports and its main, whose main
// prints one JSON array with a value per call; the host checks each against its predicate.
// Written for evalrun from the behaviour of zx-bench's isolatedGoJson.ts
// (bboysky/ajubyte-model-lab at 22bb91d1; docs/upstream/zx-bench-isolated-go_java.md): the same
// adapters call the same functions with the same arguments and print the same text.
#include <string>

#include <nlohmann/json.hpp>

#include "plugins/sandbox.h"

namespace evalrun::zx {

// validIsolatedGoJsonContract: the adapter list and each adapter's argument rules, v2 exactly
// for the advanced adapters, an entry point /^[A-Za-z_][A-Za-z0-9_.]*$/, 1-100 cases with
// unique string ids (empty allowed), 1-100 calls each, one predicate per call.
bool ValidGoJsonContract(const nlohmann::json& c);

// Whether the contract is v2: -race, 512 MB, 256 pids, a 256 MB /tmp in zx-bench (v1: 384 MB,
// 96, 128 MB).
bool GoContractAdvanced(const nlohmann::json& c);

// zx-bench's timeoutMs per container, the build included: fan-in 12 s, first-http and
// race-counter 30 s, the v1 adapters 10 s.
double GoContractSeconds(const nlohmann::json& c);

// main.go for one case's calls (all valid for the contract's adapter): package main, the
// harness's imports and blank references, the patch verbatim, the adapter's helper, and a main
// that runs every call and encodes the values as one JSON array.
std::string GoProgramSource(const std::string& patch, const nlohmann::json& contract,
                            const nlohmann::json& calls);

// Why Go contracts cannot run on this host, naming the package to install ("" when they can):
// go, and gcc for a v2 (-race) contract.
std::string GoUnavailable(const nlohmann::json& contract);

// zx-bench's `go run [-race] main.go` for one case (build_only: `go build [-race] -o /tmp/app
// main.go`, its compile step), in two sandbox runs so that the model's program never sees the
// build cache: the build, with the build cache all Go builds share (kept under the user's cache
// directory and warmed once per process by a build of the harness's imports, so that the
// case's time is not spent compiling the standard library as it is in zx-bench's fresh
// containers); then the program, in a fresh sandbox, in what is left of the case's time. The
// result is the build's when it failed (or build_only), else the program's; wall_seconds covers
// both. With Go 1.22 or later the model's code is compiled as Go 1.21, zx-bench's version
// (one variable per loop, not per iteration). A build cache that cannot be set up is
// reported as a run that never started ("evalrun sandbox: ...").
SandboxResult RunGoProgram(const Sandbox& sandbox, const std::string& source,
                           const nlohmann::json& contract, bool build_only);

// `go env GOVERSION` as the sandbox saw it ("go1.19.8"), "" before the first RunGoProgram.
std::string GoVersion();

}  // namespace evalrun::zx
