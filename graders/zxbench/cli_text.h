#pragma once
// How zx-bench's cli_command reads a reply (packages/core/src/evaluators/cliCommand.ts,
// cli_command_v6): the submitted script of an executionCases entry, the primary command and the
// keyword axes of the others. Text as JavaScript sees it (core/js_value.h); each function is
// linear in the reply's size.
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace evalrun::zx {

// extractSubmittedScript: the body of the last match of
// /```(?:bash|sh|shell)?\s*\n([\s\S]*?)```/gi, trimmed; else the whole reply, trimmed.
std::string ExtractSubmittedScript(std::string_view reply);

// extractPrimaryCommand: the last (or, with `prefer_first`, the first) fenced block of
// bash/sh/shell/zsh/fish or none that holds an executable line; without one, the last executable
// line of an inline `code` span or of the plain text outside fences. "" when there is none.
std::string ExtractPrimaryCommand(std::string_view reply, bool prefer_first);

// The keyword path (v4, coverage-aware): format_valid (.10; 60 when truncated), command_usage
// (.35), flag_accuracy (.20), pipeline_usage (.15), target_accuracy (.10), safety_compliance
// (.10), each only when its requirement list is set; score = round(sum / measured weight).
struct CliKeywordScore {
  bool configured = false;  // some content requirement is set (else zx-bench cannot score it)
  int score = 0;
  nlohmann::json axes = nlohmann::json::object();
  nlohmann::json evidence = nlohmann::json::array();
};
CliKeywordScore ScoreCliKeywords(const nlohmann::json& requirements, std::string_view reply,
                                 bool prefer_first, bool truncated);

}  // namespace evalrun::zx
