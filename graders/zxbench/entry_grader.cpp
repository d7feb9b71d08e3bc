// The frame of zx-bench's container-layout graders (graders/zxbench/entry_grader.h).
#include "graders/zxbench/entry_grader.h"

#include <exception>

#include "core/error.h"
#include "graders/zxbench/common.h"
#include "plugins/sandbox.h"

namespace evalrun::zx {

void EntryGrader::CheckSpec(const nlohmann::json& spec, const SourceLocation& where) const {
  const std::string prefix = where.ToString() + ": " + std::string(name_) + ": ";
  if (!spec.is_object()) {
    throw Error(prefix + "the spec must be the zx-bench entry (a JSON object)");
  }
  const nlohmann::json& requirements = Member(spec, "requirements");
  if (!requirements.is_null() && !requirements.is_object()) {
    throw Error(prefix + "'requirements' must be an object (" + std::string(requirements_hint_) +
                ")");
  }
}

std::string EntryGrader::Unrunnable(const nlohmann::json& spec) const {
  return spec.is_object() ? UnrunnableEntry(spec) : std::string();
}

Grade EntryGrader::Run(const nlohmann::json& spec, const Answer& answer,
                       const GradeContext& context) const {
  try {
    return Evaluate(spec, answer, context);
  } catch (const std::exception& e) {  // not reachable by any output; kept so Run never throws
    std::string_view short_name = name_;
    if (const size_t colon = short_name.find(':'); colon != std::string_view::npos) {
      short_name.remove_prefix(colon + 1);
    }
    return StatusGrade(GradeStatus::kEnvError,
                       std::string(short_name) + " grader failed: " + e.what());
  }
}

const Sandbox* WorkspaceSandbox(const GradeContext& context, std::string_view what, Grade* skip) {
  const Sandbox* sandbox = context.sandbox;
  if (sandbox == nullptr || !sandbox->relocates()) {
    *skip = StatusGrade(GradeStatus::kSkipped,
                        std::string(what) +
                            " run at /workspace, which needs the bubblewrap sandbox (install "
                            "bubblewrap; --unsafe-no-sandbox cannot stand in)");
    return nullptr;
  }
  if (auto why = sandbox->Unavailable()) {
    *skip = StatusGrade(GradeStatus::kSkipped, *why);
    return nullptr;
  }
  return sandbox;
}

}  // namespace evalrun::zx
