#pragma once
// `evalrun export` and `evalrun verify` (DESIGN.md section 10, issue 7 items 1-2; the format is
// docs/bundle-format.md). Export writes a stored run as a bundle with each planned task's data
// for offline re-grading; verify checks a bundle offline, each check reported on its own line.
// `--spot` (rerunning tasks against an endpoint) is not here.
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/bundle.h"
#include "results/store.h"
#include "runner/judge.h"
#include "tasks/git_source.h"

namespace CLI {
class App;
}

namespace evalrun {

class Sandbox;

struct VerifyOptions {
  std::string db = "evalrun.db";
  std::string export_run;   // export RUN_ID
  std::string export_out;   // export --out FILE
  std::string bundle;       // verify BUNDLE
  std::string suite_repo;   // --suite-repo (both commands)
  std::string expect_hash;  // verify --expect-hash HEX
  int spot = 0;             // verify --spot N
  std::string endpoint;     // verify --endpoint URL (with --spot)
  int64_t seed = -1;        // verify --seed: which tasks --spot picks (-1: a random seed)
  std::vector<std::string> repo_mirrors;  // --repo-mirror URL=PATH (export, verify)
  bool fetch = false;       // verify --fetch: may clone/fetch repositories missing here
  bool rejudge = false;     // verify --rejudge: ask --judge-endpoint again
  bool sandbox_network = false;  // verify --sandbox-network: tests that install packages rerun
  std::string judge_endpoint;
  std::string judge_model;
};

// verify's exit code when no check proves a mismatch but some grades could not be recomputed on
// this machine (docs/bundle-format.md); 3 (ExitCode::kVerifyFailed) stays for mismatches.
inline constexpr int kVerifyNotCheckedExit = 4;

void AddVerifyCommands(CLI::App& app, VerifyOptions& options);
// Writes the bundle; prints "evalrun: wrote FILE (result hash H)" on stderr. Exit 0. Throws
// Error (exit 2) for an unknown run, an unreadable database or an unwritable --out.
int RunExportCommand(const VerifyOptions& options);
// Prints one line per check on stdout; returns 0 when every check passes, 3 (kVerifyFailed)
// when any proves a mismatch, 4 (kVerifyNotCheckedExit) when none does but some grades could not be
// recomputed on this machine (a repository it cannot reach, no sandbox, no python3/node).
// Never uses the network unless --fetch (repositories) or --spot (the endpoint) says so.
// Throws Error (exit 2) when the bundle cannot be read (naming the member).
int RunVerifyCommand(const VerifyOptions& options);

// The bundle document of a stored run, with the data of every planned task whose suite could be
// loaded (at the run's commit; `resolve.suite_repo` for a registered name) and whose hash there
// equals the planned hash. `note` receives why task data is missing, if it is.
nlohmann::json ExportBundle(const ResultStore& store, const std::string& run_id,
                            const ResolveOptions& resolve, std::string* note);

// One check of `evalrun verify`.
struct VerifyCheck {
  enum class State { kOk, kFailed, kNotChecked };
  std::string name;     // "hash", "tasks", "grades", "figures", "suite", "pinned"
  State state = State::kOk;
  std::string summary;  // one line: what was checked, or what failed
  std::vector<std::string> details;  // each disagreement (or task not rechecked), named
  size_t not_checked = 0;  // grades this machine could not recompute (exit 4 when no failure)
};

struct VerifyConfig {
  std::string suite_repo;           // --suite-repo: "" = none given
  std::string expect_hash;          // --expect-hash: "" = none given
  const Sandbox* sandbox = nullptr; // for code graders; null: such tasks are not rechecked
  int spot = 0;                     // --spot N: rerun N random tasks against `endpoint`
  std::string endpoint;             // normalised base URL
  uint64_t seed = 0;                // picks the --spot tasks
  // --rejudge: every judged task's recorded judge requests sent again to this judge, the new
  // verdict's grade compared with the recorded one. Null: the verdicts are taken as recorded.
  std::optional<JudgeEndpoint> rejudge;
  // --sandbox-network: tests that install packages rerun on the host's network, as the run's did
  // when it had --sandbox-network (Grader::NeedsNetwork). Without it they are not checked here.
  bool sandbox_network = false;
};

// Runs every check on a bundle read by ReadBundle. Never throws for what the bundle holds.
std::vector<VerifyCheck> VerifyBundle(const Bundle& bundle, const VerifyConfig& config);

// The report: "<name>: ok (...)" / "<name>: FAILED: ..." / "<name>: not checked (...)", each
// followed by its details indented, then "verify: ok" or "verify: FAILED (<names>)".
std::string RenderVerifyReport(const std::vector<VerifyCheck>& checks);

}  // namespace evalrun
