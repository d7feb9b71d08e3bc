#pragma once
// `evalrun merge` (docs/sharding.md, issue 19 item 3): the bundles of the shards of one plan
// joined into one bundle (results/bundle_merge.h) that verifies like any other.
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace evalrun {

struct MergeOptions {
  std::vector<std::string> bundles;  // the shards' bundles, any order
  std::string out;                   // --out FILE
};

void AddMergeCommand(CLI::App& app, MergeOptions& options);
// Writes the merged bundle; prints "evalrun: merged N shards (M tasks) into FILE (result hash
// H)" on stderr. Exit 0. Throws Error (exit 2) naming the part and the reason when the parts do
// not make one plan (a missing shard, with its tasks; an overlap; another commit or model ...),
// or when a bundle cannot be read or --out cannot be written.
int RunMergeCommand(const MergeOptions& options);

}  // namespace evalrun
