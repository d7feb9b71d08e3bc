#include "runner/commands/compare_commands.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/terminal_text.h"
#include "results/bundle.h"
#include "results/speed_report.h"
#include "results/store.h"

namespace evalrun {

void AddCompareCommand(CLI::App& app, CompareCommandOptions& o) {
  CLI::App* compare = app.add_subcommand(
      "compare", "compare two runs: score differences with paired intervals, speed ratios, setup");
  compare->allow_extras();
  compare->add_option("A", o.a,
                      "the baseline: a run id (evalrun runs lists them), DB:RUN_ID for a run in "
                      "another database, or a bundle file")
      ->required();
  compare->add_option("B", o.b, "the run compared with A: a run id, DB:RUN_ID or a bundle file")
      ->required();
  compare->add_option("--db", o.db, "results database for run ids (default ./evalrun.db)");
  compare->add_option("--db-b", o.db_b, "results database for B's run id (default: --db)");
  compare->add_option("-o,--format", o.format, "md (default) | json");
  compare->add_option("--out", o.out, "write to FILE instead of stdout");
  compare->add_option(
      "--seed", o.seed,
      "seed of the bootstrap resampling (default " + std::to_string(kCompareDefaultSeed) + ")");
}

namespace {

// A bundle is named by a path: an existing file, or anything ending in ".json" (so that a
// mistyped bundle path is reported as an unreadable bundle, not as an unknown run id).
bool IsBundlePath(const std::string& arg) {
  std::error_code error;
  if (std::filesystem::is_regular_file(arg, error)) return true;
  return arg.size() >= 5 && arg.compare(arg.size() - 5, 5, ".json") == 0;
}

// A run id in a database: "RUN_ID" (in `db`) or "DB:RUN_ID". Run ids hold no ':', so the last
// one splits the two.
struct RunRef {
  std::string db;
  std::string id;
};
RunRef ParseRunRef(const std::string& arg, const std::string& db) {
  const size_t colon = arg.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == arg.size()) return {db, arg};
  return {arg.substr(0, colon), arg.substr(colon + 1)};
}

// The databases opened so far, by path: A and B in one database share it.
using Stores = std::map<std::string, std::unique_ptr<ResultStore>>;

RunData LoadSide(const std::string& arg, const std::string& db, Stores& stores) {
  if (IsBundlePath(arg)) {
    Bundle bundle = ReadBundle(arg);
    if (ComputeResultHash(bundle.document) != bundle.result_hash) {
      std::cerr << "evalrun: warning: " << arg << ": the recorded result hash "
                << TerminalText(bundle.result_hash.substr(0, 16))
                << " does not match the bundle's content (edited after export?); evalrun verify "
                   "names what changed"
                << std::endl;
    }
    return std::move(bundle.run);
  }
  const RunRef ref = ParseRunRef(arg, db);
  auto& store = stores[ref.db];
  if (!store) {
    if (!std::ifstream(ref.db)) {
      throw Error("'" + arg + "' is neither a bundle file nor a run id in " + ref.db + " (" +
                  ref.db + ": no results database here; --db, --db-b or DB:RUN_ID names another)");
    }
    store = std::make_unique<ResultStore>(ref.db);
  }
  if (!store->FindRun(ref.id)) {
    std::vector<std::string> ids;
    for (const RunInfo& run : store->ListRuns()) ids.push_back(run.id);
    const std::string hint = ClosestMatch(ref.id, ids);
    throw Error(ref.db + ": no run '" + ref.id + "'" +
                (hint.empty() ? "" : ", did you mean '" + hint + "'?") +
                " (evalrun runs lists them; a bundle is given by its file path)");
  }
  return store->LoadRun(ref.id);
}

std::string SuiteName(const RunInfo& info) {
  std::string name = !info.suite_name.empty() ? info.suite_name : info.suite_spec;
  if (name.empty()) name = info.kind == "speed" ? "(a speed run)" : "(no suite)";
  if (!info.suite_commit.empty()) name += "@" + info.suite_commit.substr(0, 12);
  return name;
}

// Why two runs have nothing to compare, naming the likeliest cause.
std::string NothingShared(const CompareCommandOptions& o, const RunData& a, const RunData& b,
                          const Comparison& c) {
  const std::string runs = "runs " + o.a + " and " + o.b;
  const std::string name_a = !a.info.suite_name.empty() ? a.info.suite_name : a.info.suite_spec;
  const std::string name_b = !b.info.suite_name.empty() ? b.info.suite_name : b.info.suite_spec;
  if (name_a != name_b) {
    return runs + " share no task: A ran " + SuiteName(a.info) + ", B ran " + SuiteName(b.info) +
           " (tasks are matched by id and task hash)";
  }
  if (c.hash_differs > 0) {
    return runs + " share no scored task: " + std::to_string(c.hash_differs) +
           " task(s) with the same id have a different task hash (the suite changed between " +
           SuiteName(a.info) + " and " + SuiteName(b.info) + ")";
  }
  return runs + " share no scored task (A finished " + std::to_string(a.tasks.size()) +
         ", B finished " + std::to_string(b.tasks.size()) +
         "; a task counts when both runs scored it: not skipped, no environment error)";
}

}  // namespace

int RunCompareCommand(const CompareCommandOptions& o) {
  if (o.format != "md" && o.format != "json") {
    const std::string hint = ClosestMatch(o.format, {"md", "json"});
    throw Error("-o '" + o.format + "': expected md or json" +
                (hint.empty() ? "" : " (did you mean '" + hint + "'?)"));
  }
  Stores stores;
  const RunData a = LoadSide(o.a, o.db, stores);
  const RunData b = LoadSide(o.b, o.db_b.empty() ? o.db : o.db_b, stores);
  const Comparison comparison = CompareRuns(a, b, o.seed);
  if (comparison.shared_tasks == 0) throw Error(NothingShared(o, a, b, comparison));

  const std::string text = o.format == "json" ? DumpJson(ComparisonToJson(comparison)) + "\n"
                                              : RenderComparison(comparison);
  if (o.out.empty()) {
    std::cout << text << std::flush;
    return 0;
  }
  if (const auto error = WriteFileAtomically(o.out, text)) {
    throw Error("--out " + o.out + ": cannot write there: " + *error);
  }
  return 0;
}

}  // namespace evalrun
