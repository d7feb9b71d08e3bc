#pragma once
// Merged bundles (docs/sharding.md, docs/bundle-format.md "Merged bundles"): the bundles of the
// shards of one plan (`evalrun suite --shard I/N`, then `evalrun export`) joined into one bundle
// that reads, reports and verifies like the bundle of an unsharded run, and that keeps each part
// whole: `parts[i].document` is part i's document without its task records and planned tasks
// (those are the merged bundle's own, by id), so each part's result hash recomputes from the
// merged bundle alone.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/bundle.h"

namespace evalrun {

// One bundle to merge, and the name errors give it (its path as given).
struct MergePart {
  std::string name;
  Bundle bundle;
};

// The merged bundle of the shards `parts` (any order), `result_hash` set. Deterministic: the same
// parts give the same document. Throws Error naming the part and the reason when the parts do not
// make one plan: a part whose own hash does not verify, a part that is not a finished shard, a
// different shard count, suite commit, plan hash, evalrun version, model or settings (the shard
// aside), a shard given twice (naming the tasks they share), a part whose tasks are not the
// rule's, and missing shards (naming their tasks).
nlohmann::json MergeBundles(const std::vector<MergePart>& parts);

// Whether `document` is a merged bundle (it has a "parts" member).
bool IsMergedBundle(const nlohmann::json& document);

// Part i's document rebuilt from a merged bundle: parts[i].document with its planned tasks and
// task records taken from the merged bundle by id. Throws Error naming the member when the part
// or a task it lists is missing.
nlohmann::json MergedPartDocument(const nlohmann::json& document, size_t i);

// What `evalrun verify` checks of a merged bundle beyond an ordinary one, one line per problem
// (empty when sound): each part's document recomputes to its recorded result hash and part
// hashes; the parts are the shards 0..N-1 of one plan under one rule, each holding exactly the
// tasks the rule gives it; the merged plan is that plan; every planned task has exactly one
// record, from the part that planned it. `summary` receives one line on what was checked.
std::vector<std::string> MergedBundleProblems(const nlohmann::json& document,
                                              std::string* summary);

// What `evalrun verify` checks of a shard's own bundle: its recorded plan hashes to its plan
// hash, and its planned tasks are the ones the rule gives its shard. Empty when sound or when the
// bundle is not a shard's; `summary` as above ("" for a bundle that is not a shard's).
std::vector<std::string> ShardBundleProblems(const nlohmann::json& document, std::string* summary);

}  // namespace evalrun
