// The graders of world episodes (graders/zxbench/world.h): zx-bench's three world graders
// (zxbench:tool_call_trace, zxbench:agent_trace, zxbench:canary_authority; spec = the bank entry,
// whose requirements.executionWorld is the world) and evalrun's native `world` grader (spec
// {type: world}; the world is the task's agent.world mapping, in zx-bench's executionWorld
// shape). All four grade an episode record (EpisodeToJson) that the agent run stored as the
// task's output, so a stored run re-grades without running anything: parse the record, parse the
// world, ScoreWorldEpisode. The spec reaches them as nlohmann::json (sorted keys); the world is
// converted to ordered_json, and scoring compares object keys as sets, so key order changes no
// score.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "graders/zxbench/factories.h"
#include "graders/zxbench/common.h"
#include "graders/zxbench/world.h"

namespace evalrun {
namespace {

using json = nlohmann::json;
using zx::ordered_json;

constexpr std::string_view kVersion = "1";
constexpr const char* kNativeEvaluator = "world/1";

Grade EnvError(std::string reason) {
  Grade grade;
  grade.status = GradeStatus::kEnvError;
  grade.reason = std::move(reason);
  grade.evidence = json::object();
  return grade;
}

// Parses the stored episode and scores it; every failure is a kEnvError naming what is wrong
// (the record is evalrun's own output: a malformed one means the run or the store is broken).
Grade ScoreRecord(const zx::WorldConfig& config, const std::string& text,
                  std::string_view evaluator) {
  const json record = json::parse(text, nullptr, false);
  if (record.is_discarded()) {
    return EnvError("the output is not an episode record: not JSON (" +
                    std::to_string(text.size()) + " bytes)");
  }
  zx::WorldEpisode episode;
  try {
    episode = zx::EpisodeFromJson(record, config.initial_state);
  } catch (const Error& e) {
    return EnvError(std::string("the output is not a usable episode record: ") + e.what());
  }
  return zx::ScoreWorldEpisode(config, episode, evaluator);
}

// zxbench:<grader>: the spec is the bank entry.
class ZxWorldGrader final : public Grader {
 public:
  ZxWorldGrader(std::string name, std::string description)
      : name_(std::move(name)), description_(std::move(description)) {}

  std::string_view name() const override { return name_; }
  std::string_view version() const override { return kVersion; }
  std::string_view description() const override { return description_; }
  bool grades_episode() const override { return true; }

  void CheckSpec(const json& spec, const SourceLocation& where) const override {
    const std::string prefix = where.ToString() + ": " + name_ + ": ";
    if (!spec.is_object()) {
      throw Error(prefix + "the spec must be the zx-bench entry (a JSON object)");
    }
    try {
      zx::ParseWorldConfig(ordered_json::parse(spec.dump()));
    } catch (const Error& e) {
      throw Error(prefix + e.what());
    }
  }

  Grade Run(const json& spec, const Answer& answer, const GradeContext&) const override {
    zx::WorldConfig config;
    try {
      config = zx::ParseWorldConfig(ordered_json::parse(spec.dump()));
    } catch (const Error& e) {
      return EnvError(e.what());
    }
    return ScoreRecord(config, answer.text, zx::WorldEvaluatorName(spec));
  }

 private:
  std::string name_;
  std::string description_;
};

// `world`: the spec is {type: world}; the world is agent.world.
class NativeWorldGrader final : public Grader {
 public:
  std::string_view name() const override { return "world"; }
  std::string_view version() const override { return kVersion; }
  std::string_view description() const override {
    return "an agent world task's episode (tool calls, final state, final reply) scored against "
           "agent.world's checks, as zx-bench scores execution worlds";
  }
  bool grades_episode() const override { return true; }

  void CheckSpec(const json& spec, const SourceLocation& where) const override {
    CheckSpecKeys(spec, where, "world", {});
  }

  void CheckAgent(const json& agent, const SourceLocation& where) const override {
    const std::string at = where.ToString() + ": ";
    if (!agent.is_object() || agent.value("kind", "") != "world") {
      throw Error(at + "grader 'world' grades a world task: the task needs agent.kind: world");
    }
    const std::vector<std::string> keys = {"kind", "world", "max_turns", "wall_s"};
    for (const auto& [key, value] : agent.items()) {
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
        const std::string best = ClosestMatch(key, keys);
        throw Error(at + "agent." + key + ": unknown key" +
                    (best.empty() ? "" : ", did you mean '" + best + "'?") +
                    " (a world task has kind, world, max_turns, wall_s)");
      }
    }
    if (agent.contains("max_turns") &&
        (!agent["max_turns"].is_number_integer() || agent["max_turns"].get<int64_t>() < 1)) {
      throw Error(at + "agent.max_turns: expected a whole number of turns, at least 1");
    }
    if (agent.contains("wall_s") &&
        (!agent["wall_s"].is_number() || !(agent["wall_s"].get<double>() > 0))) {
      throw Error(at + "agent.wall_s: expected a number of seconds above 0");
    }
    if (!agent.contains("world") || !agent["world"].is_object()) {
      throw Error(at + "agent.world: the world (zx-bench's executionWorld shape) is missing");
    }
    zx::WorldConfig config;
    std::string problem = Parse(agent, config);
    if (!problem.empty()) throw Error(at + problem);
  }

  Grade Run(const json&, const Answer& answer, const GradeContext& context) const override {
    if (context.agent == nullptr || !context.agent->is_object() ||
        !context.agent->contains("world")) {
      return EnvError("the world grader needs the task's agent.world (the world the episode ran "
                      "in); this task has none");
    }
    zx::WorldConfig config;
    if (std::string problem = Parse(*context.agent, config); !problem.empty()) {
      return EnvError(problem);
    }
    return ScoreRecord(config, answer.text, kNativeEvaluator);
  }

 private:
  // ParseWorldConfig of agent.world; "" or the problem, named from agent.world.
  static std::string Parse(const json& agent, zx::WorldConfig& config) {
    ordered_json entry = {{"id", "agent"}};
    entry["requirements"]["executionWorld"] = ordered_json::parse(agent["world"].dump());
    try {
      config = zx::ParseWorldConfig(entry);
    } catch (const Error& e) {
      // "agent: requirements.executionWorld.tools: ..." reads better as "agent.world.tools: ...".
      std::string message = e.what();
      const std::string from = "agent: requirements.executionWorld";
      if (message.rfind(from, 0) == 0) message = "agent.world" + message.substr(from.size());
      return message;
    }
    return "";
  }
};

}  // namespace

std::unique_ptr<Grader> MakeZxToolCallTraceGrader() {
  return std::make_unique<ZxWorldGrader>(
      "zxbench:tool_call_trace",
      "zx-bench tool_call_trace: an execution-world episode scored as worldTrace.ts scores it");
}

std::unique_ptr<Grader> MakeZxAgentTraceGrader() {
  return std::make_unique<ZxWorldGrader>(
      "zxbench:agent_trace",
      "zx-bench agent_trace: an execution-world episode scored as worldTrace.ts scores it");
}

std::unique_ptr<Grader> MakeZxCanaryAuthorityGrader() {
  return std::make_unique<ZxWorldGrader>(
      "zxbench:canary_authority",
      "zx-bench canary_authority: an execution-world episode scored as worldTrace.ts scores it");
}

std::unique_ptr<Grader> MakeWorldGrader() { return std::make_unique<NativeWorldGrader>(); }

}  // namespace evalrun
