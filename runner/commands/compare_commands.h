#pragma once
// `evalrun compare A B`: how run B differs from run A (results/compare.h), where A and B are run
// ids in a results database, DB:RUN_ID (a run in another database: two nights on two machines
// compare without exporting first), or bundle files (evalrun export).
#include <cstdint>
#include <string>

#include "results/compare.h"

namespace CLI {
class App;
}

namespace evalrun {

struct CompareCommandOptions {
  std::string a;  // run id or bundle path
  std::string b;
  std::string db = "evalrun.db";
  std::string db_b;           // B's database; "" = db
  std::string format = "md";  // md | json
  std::string out;            // "" = stdout
  uint64_t seed = kCompareDefaultSeed;
};

void AddCompareCommand(CLI::App& app, CompareCommandOptions& options);

// 0 when the comparison was written. Throws Error (exit 2) for an unknown run id, an unreadable
// bundle, a bad -o, or two runs that share no scored task.
int RunCompareCommand(const CompareCommandOptions& options);

}  // namespace evalrun
