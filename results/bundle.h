#pragma once
// Bundles (DESIGN.md section 10, docs/bundle-format.md): one run as one canonical JSON document
// that anyone can check offline. `result_hash` is the SHA-256 of the canonical rendering
// (core/canonical_json.h) of the document without its `result_hash` member.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/run_data.h"
#include "results/store.h"

namespace evalrun {

inline constexpr int kBundleFormatVersion = 1;

// A bundle as read back.
struct Bundle {
  RunData run;                     // the run, its finished tasks (with requests), speed, events
  std::vector<PlannedTask> plan;   // every planned task with its full hash, in plan order
  std::string result_hash;         // as written in the document (64 lowercase hex)
  nlohmann::json document;         // the parsed document, as read
};

// The bundle document of a stored run (its plan included), `result_hash` set.
nlohmann::json MakeBundle(const RunData& run, const std::vector<PlannedTask>& plan);

// Sets `document`'s "part_hashes" and "result_hash" from its other members (replacing them).
// Throws Error for a non-finite number.
void SealBundle(nlohmann::json& document);

// SHA-256 hex of the canonical rendering of `document` without its "result_hash" member.
std::string ComputeResultHash(const nlohmann::json& document);

// Reads a bundle file. Checks its shape only (format version, required members and their
// types), not its hash or figures; throws Error naming the file and the member that is wrong
// ("result.evalrun.json: tasks[3].grade.score: expected a number").
Bundle ReadBundle(const std::string& path);
// ReadBundle of bytes already read; `path` names them in errors. Refuses JSON nested deeper than
// limits::kJsonDepth before parsing it (docs/limits.md).
Bundle ParseBundle(std::string_view text, const std::string& path);

// ---- additions (issue 7 export/verify) ------------------------------------------------------

// MakeBundle with each planned task's data for offline re-grading, by task id: placed verbatim
// (invalid UTF-8 replaced) as suite.tasks[i].task (null for a task without data). The runner
// builds it (runner/commands/verify_commands.cpp: the task's hashed fields and file contents, or the
// zx-bench bank entry). Throws Error naming the member for a non-finite number.
nlohmann::json MakeBundle(const RunData& run, const std::vector<PlannedTask>& plan,
                          const std::map<std::string, nlohmann::json>& task_data);

// The invalid-UTF-8 rule (docs/bundle-format.md): a text member holds valid UTF-8; when the
// bytes are not valid UTF-8 it holds them with each invalid sequence replaced by U+FFFD, and a
// sibling "<key>_base64" holds the exact bytes (RFC 4648 base64).
void PutBundleText(nlohmann::json& object, const std::string& key, std::string_view bytes);
// The exact bytes of a text member. Throws Error "<where>.<key>: ..." when it is missing, not a
// string, or disagrees with its "<key>_base64" sibling.
std::string BundleText(const nlohmann::json& object, const std::string& key,
                       const std::string& where);
// `bytes` with every invalid UTF-8 sequence replaced by U+FFFD (valid input is returned as is).
std::string ValidUtf8(std::string_view bytes);
// `value` with every string (keys included) made valid UTF-8 by ValidUtf8.
nlohmann::json ValidUtf8Json(const nlohmann::json& value);

// The parts of a document whose SHA-256 no longer matches its "part_hashes" entry (member paths
// such as "run.labels" or "tasks[3] (task 't003')"), so a broken result hash can name what was
// changed; {"part_hashes"} itself when that member is missing or malformed.
std::vector<std::string> ChangedBundleParts(const nlohmann::json& document);

}  // namespace evalrun
