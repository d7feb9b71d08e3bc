#pragma once
// The frame of the zx-bench graders that read a whole bank entry and run its code in a
// container's layout (cli_command, project_repair): the spec check every such entry gets, the
// load-time skip, a Run that never throws, and the sandbox they need (bubblewrap, which places
// the working copy at /workspace).
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "graders/framework/grader.h"

namespace evalrun::zx {

class EntryGrader : public Grader {
 public:
  // `name` "zxbench:<grader>"; `requirements_hint` says what requirements holds, for the error.
  EntryGrader(std::string_view name, std::string_view requirements_hint)
      : name_(name), requirements_hint_(requirements_hint) {}
  std::string_view name() const override { return name_; }
  // The spec is the entry: an object whose requirements, when set, is an object.
  void CheckSpec(const nlohmann::json& spec, const SourceLocation& where) const override;
  std::string Unrunnable(const nlohmann::json& spec) const override;
  // Evaluate, with anything it throws (no output can make it) as an environment error.
  Grade Run(const nlohmann::json& spec, const Answer& answer,
            const GradeContext& context) const final;

 protected:
  // Why the entry cannot be graded here whatever the answer ("" when it can).
  virtual std::string UnrunnableEntry(const nlohmann::json& entry) const = 0;
  virtual Grade Evaluate(const nlohmann::json& entry, const Answer& answer,
                         const GradeContext& context) const = 0;

 private:
  std::string_view name_;
  std::string_view requirements_hint_;
};

// The context's sandbox when it can place the working copy at /workspace (bubblewrap, usable
// here); otherwise nullptr, and *skip is the kSkipped grade saying why (`what`: "cli_command
// scripts").
const Sandbox* WorkspaceSandbox(const GradeContext& context, std::string_view what, Grade* skip);

}  // namespace evalrun::zx
