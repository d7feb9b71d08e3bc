#pragma once
// The `evalrun` command line (DESIGN.md section 4): subcommands, flags, exit codes. Messages go
// to stderr as "evalrun: error: ..."; run-fatal errors are caught here, once.
#include <iosfwd>
#include <string>
#include <vector>

namespace evalrun {

// Runs the command line and returns the process exit code. `build_commit` is the git commit the
// program was built from, for --version ("" leaves it out).
int RunCli(int argc, const char* const* argv, const std::string& build_commit = "");

// Normalises an endpoint: no trailing slash, no trailing "/v1" (evalrun adds the paths itself).
std::string NormalizeEndpoint(std::string url);

// --wait-endpoint's value in seconds: a bare number is minutes ("30", "0.5"), or a number with
// a unit: "90s", "45m", "2h". Throws Error("--wait-endpoint '5x': expected minutes (30, 0.5)
// or a time with a unit (90s, 45m, 2h)") otherwise, and for a negative time.
double ParseWaitEndpoint(const std::string& text);

// `evalrun suite --concurrency`'s value for `endpoints` endpoints: "" is 1 for each, one number
// is that for each, "2,1,1" one per --endpoint in order. Throws Error for a value that is not a
// whole number in 1..4096 ("--concurrency 0: out of range (expected 1..4096)") and for another
// count ("--concurrency '2,1': 2 values for 3 endpoints (give one value for every endpoint, or
// one per --endpoint in order)").
std::vector<int> ParseSuiteConcurrency(const std::string& text, size_t endpoints);

}  // namespace evalrun
