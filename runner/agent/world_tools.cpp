// A World as AgentTools (runner/agent/world_tools.h).
#include "runner/agent/world_tools.h"

#include <utility>

#include "core/js_value.h"

namespace evalrun {

using zx::ordered_json;

nlohmann::json WorldToolParameters(const zx::WorldTool& tool) {
  nlohmann::json properties = nlohmann::json::object();
  nlohmann::json required = nlohmann::json::array();
  for (auto it = tool.required_args.begin(); it != tool.required_args.end(); ++it) {
    const std::string kind = it.value().is_string() ? it.value().get<std::string>() : "";
    nlohmann::json schema = nlohmann::json::object();
    if (kind == "string" || kind == "number" || kind == "boolean" || kind == "object" ||
        kind == "array") {
      schema["type"] = kind;
    }
    properties[it.key()] = std::move(schema);
    required.push_back(it.key());  // requiredArgs order, as the world lists them
  }
  return {{"type", "object"},
          {"properties", std::move(properties)},
          {"required", std::move(required)},
          {"additionalProperties", false}};
}

WorldTools::WorldTools(const zx::WorldConfig& config, const Sandbox& sandbox,
                       zx::WorldLimits limits)
    : config_(config), world_(config, sandbox, limits) {}

nlohmann::json WorldTools::Schemas() const {
  nlohmann::json tools = nlohmann::json::array();
  for (const auto& tool : config_.tools) {
    nlohmann::json function = {{"name", tool.name}};
    if (!tool.description.empty()) function["description"] = tool.description;
    function["parameters"] = WorldToolParameters(tool);
    tools.push_back({{"type", "function"}, {"function", std::move(function)}});
  }
  return tools;
}

ToolOutcome WorldTools::Execute(const std::string& name, const nlohmann::json& arguments) {
  // The model's object as the world keeps it (ordered, as JavaScript would).
  const ordered_json args = ordered_json::parse(arguments.dump());
  const zx::WorldEvent& event = world_.Call(name, args);
  ToolOutcome outcome;
  outcome.ok = event.ok;
  bool known = false;
  for (const auto& tool : config_.tools) known = known || tool.name == name;
  if (known) {
    outcome.observation = js::JsStringify(event.result);
  } else {
    ordered_json shown = event.result;
    shown["available_tools"] = ordered_json::array();
    for (const auto& tool : config_.tools) shown["available_tools"].push_back(tool.name);
    outcome.observation = js::JsStringify(shown);
  }
  outcome.record = zx::ToJson(event);
  outcome.elapsed_ms = event.total_ms;
  return outcome;
}

zx::WorldEpisode WorldEpisodeOf(const WorldTools& tools, const AgentLoopResult& result,
                                double wall_budget_s) {
  const zx::World& world = tools.world();
  zx::WorldEpisode episode;
  episode.initial_state = tools.config().initial_state;
  episode.final_state = world.state();
  episode.events = world.events();
  episode.has_turns = false;
  episode.final_message = result.final_message;
  episode.termination_reason = result.termination_reason;
  const std::pair<const char*, const char*> errors[] = {{"timeout", "WORLD_TOTAL_TIMEOUT"},
                                                        {"turn_limit", "WORLD_TURN_LIMIT"},
                                                        {"truncated", "OUTPUT_TRUNCATED"},
                                                        {"protocol_error", "PROTOCOL_ERROR"},
                                                        {"model_error", "MODEL_ERROR"}};
  for (const auto& [reason, error] : errors) {
    if (result.termination_reason == reason) episode.turn_errors.push_back(error);
  }
  if (!result.requests.empty()) episode.last_finish_reason = result.requests.back().finish_reason;
  episode.elapsed_ms = result.wall_ms;
  episode.hard_timeout_ms = wall_budget_s * 1000;
  return episode;
}

}  // namespace evalrun
