#include "runner/commands/merge_commands.h"

#include <iostream>

#include <CLI/CLI.hpp>

#include "core/atomic_file.h"
#include "core/canonical_json.h"
#include "core/error.h"
#include "results/bundle.h"
#include "results/bundle_merge.h"

namespace evalrun {

void AddMergeCommand(CLI::App& app, MergeOptions& o) {
  CLI::App* m = app.add_subcommand(
      "merge", "join the bundles of a run's shards (suite --shard I/N) into one bundle");
  m->allow_extras();
  m->add_option("BUNDLES", o.bundles, "every shard's bundle (evalrun export), in any order")
      ->required();
  m->add_option("--out", o.out, "the merged bundle to write, e.g. all.evalrun.json")->required();
}

int RunMergeCommand(const MergeOptions& o) {
  std::vector<MergePart> parts;
  parts.reserve(o.bundles.size());
  for (const std::string& path : o.bundles) parts.push_back({path, ReadBundle(path)});
  const nlohmann::json document = MergeBundles(parts);
  const std::string text = CanonicalJson(document) + "\n";
  if (const auto error = WriteFileAtomically(o.out, text)) {
    throw Error("--out " + o.out + ": cannot write there: " + *error);
  }
  std::cerr << "evalrun: merged " << parts.size() << " shards ("
            << document["run"]["planned_tasks"].get<int64_t>() << " tasks) into " << o.out
            << " (result hash " << document["result_hash"].get<std::string>() << ")"
            << std::endl;
  return 0;
}

}  // namespace evalrun
