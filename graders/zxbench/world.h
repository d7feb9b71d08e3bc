#pragma once
// zx-bench's execution worlds, the data and the scoring (FORMAT.md "Execution worlds"): an
// entry's requirements.executionWorld parsed once (WorldConfig), one tool call as recorded
// (WorldEvent), a finished episode and its stored record (WorldEpisode), and the scoring of an
// episode exactly as zx-bench scores it. The runtime that makes the events (World, a Python
// driver in the sandbox) is runner/agent/world_runtime.h, above this.
//
// Sources (suncityldp/zx-bench): packages/core/src/execution/worldLoop.ts and
// evaluators/worldTrace.ts at 8e0adf68 (the bank commit), evaluators/worldCheckpoints.ts at
// 0dafc912 (the only stored version), execution/toolWorld.ts (the copy in
// Little-Star888/zx-bench at a5f6a19f; suncityldp's own is not in the store).
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/grade.h"

namespace evalrun::zx {

// Key order matters where zx-bench prints JSON to the model (the tool list, tool results), so
// the world keeps JSON in insertion order, as JavaScript objects do.
using ordered_json = nlohmann::ordered_json;

struct WorldTool {
  std::string name;
  std::string description;     // "" when absent
  ordered_json required_args;  // requiredArgs, {} when absent
  ordered_json spec;           // the tool object verbatim (the driver reads kind, path, script)
};

struct WorldConfig {
  std::string entry_id;
  ordered_json raw;            // requirements.executionWorld verbatim: the checks read it
  ordered_json initial_state;  // an object
  std::vector<WorldTool> tools;
  int max_turns = 1;
  std::vector<std::optional<std::string>> user_script;  // userScript[i]; nullopt: not a string
};

// Whether the entry carries requirements.executionWorld (agent_trace, tool_call_trace and
// canary_authority entries that run in a world).
bool HasExecutionWorld(const nlohmann::json& entry);

// Parses and checks requirements.executionWorld of a bank entry. Throws Error
// "<entry id>: requirements.executionWorld.<member>: <problem>" for what zx-bench could not run
// (no tools array, duplicate tool names (toolWorld.ts create), a tool without a name, a
// checkpointRubric whose weights do not add to 100 (worldCheckpoints.ts L8-9), ...).
WorldConfig ParseWorldConfig(const ordered_json& entry);

// One tool call as zx-bench records it (toolWorld.ts WorldEvent) plus what it cost evalrun.
struct WorldEvent {
  int ordinal = 0;
  std::string tool;
  ordered_json args;  // as the model wrote them
  bool ok = false;
  ordered_json result;  // the tool's result when ok, else {"error": <error>}
  // Set when zx-bench's Docker world would have thrown (the script ran out of time or memory,
  // the runner died): evalrun records it as a failed call and carries on (docs/zx-bench.md).
  std::string infrastructure_error;
  // Milliseconds on the steady clock: the whole call; waiting in it for the episode's sandboxed
  // driver to be ready (the first call, and the call after one that killed it: the driver was
  // launched earlier and booted meanwhile; 0 otherwise); the
  // exchange with the driver (with WorldLimits::process_per_call, the whole Sandbox::Run:
  // sandbox and python start included); and the tool's own Python (as the driver timed it).
  // overhead = total - script: start-up, state load and store, recording.
  double total_ms = 0;
  double start_ms = 0;
  double sandbox_ms = 0;
  double script_ms = 0;
  double overhead_ms() const { return total_ms - script_ms; }
};

nlohmann::json ToJson(const WorldEvent& event);

// A finished episode as zx-bench's WorldTrace holds it, for scoring.
struct WorldEpisode {
  ordered_json initial_state;
  ordered_json final_state;
  std::vector<WorldEvent> events;
  bool has_turns = false;          // trace.turns non-empty: the final message comes from the
  std::string last_assistant_raw;  // last turn's raw reply,
  int last_turn_calls = 0;         // which made this many calls
  std::string final_message;       // used when there are no turns
  std::vector<std::string> turn_errors;
  std::string termination_reason;  // "" = absent (a stored completed trace)
  std::string last_finish_reason;  // the last model reply's finish_reason
  double elapsed_ms = 0;
  double hard_timeout_ms = 1'200'000;
  bool answer_first_requested = false;
};

// A finished episode as an agent task stores it for grading (the task's output; `evalrun verify`
// re-grades it): {"schema_version": 1, "kind": "world_episode", "termination_reason",
// "turn_errors", "has_turns", "last_assistant_raw", "last_turn_calls", "final_message",
// "last_finish_reason", "elapsed_ms", "hard_timeout_ms", "answer_first_requested",
// "final_state", "events": [ToJson(WorldEvent)]}. The initial state is the world's and is not
// stored. Objects come back with sorted keys (nlohmann::json); scoring does not depend on key
// order (keys are compared as sets), only evidence text that prints an object does.
nlohmann::json EpisodeToJson(const WorldEpisode& episode);
// Reads EpisodeToJson's document. Throws Error "episode record: '<member>' <problem>"
// ("episode record: 'events[2].ok' must be a boolean, not a string") for anything malformed.
WorldEpisode EpisodeFromJson(const nlohmann::json& record, const ordered_json& initial_state);

// worldLoop.ts extractWorldFinalMessage: the reply from the first `SAY` line on (fenced blocks
// kept verbatim), or with answer_first an `ANSWER:` reply that calls no tool; "" when none.
std::string ExtractWorldFinalMessage(std::string_view text, bool answer_first = false);

// "<grader>@<graderVersion>" of a bank entry, the evaluator zx-bench would pick for it.
std::string WorldEvaluatorName(const nlohmann::json& entry);

// Scores an episode as worldTrace.ts evaluateWorldTrace does (with worldCheckpoints.ts when the
// world has a checkpointRubric). `evaluator` names the reproduced evaluator for the evidence
// ("tool_call_trace@tool_trace_v5"). A rubric that zx-bench would reject (it throws) gives
// kEnvError with zx-bench's error code in the reason.
Grade ScoreWorldEpisode(const WorldConfig& config, const WorldEpisode& episode,
                        std::string_view evaluator);

}  // namespace evalrun::zx
