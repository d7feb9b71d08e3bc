#pragma once
// For the tests of zx-bench graders that run code in the sandbox (cli_command, project_repair):
// bubblewrap made once, and a grade that is checked to be the right skip where the entry cannot
// run on this host. Header-only: each such test already links the graders and the sandbox.
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "graders/grader.h"
#include "plugins/sandbox.h"
#include "tests/support/catch.h"

namespace evalrun::testing {

// What an Alpine stand-in's evidence adds to its userland where the host's netcat-openbsd stands
// in for BusyBox's nc (scripts/install-deps.sh installs it).
inline std::string AlpineNc() {
  return FindSandboxProgram("nc.openbsd").empty() ? "" : "; nc is the host's netcat-openbsd";
}

inline const Sandbox& Bubblewrap() {
  static const std::unique_ptr<Sandbox> sandbox = MakeBubblewrapSandbox();
  return *sandbox;
}

// `grader`'s grade of `text` for `entry` in bubblewrap. Where bubblewrap or what the entry needs
// is missing here, checks that the grade is a skip giving that reason, warns, and returns
// nullopt.
inline std::optional<Grade> GradeWhereRunnable(const Grader& grader, const nlohmann::json& entry,
                                               const std::string& text) {
  Answer answer;
  answer.text = text;
  GradeContext context;
  context.sandbox = &Bubblewrap();
  Grade grade = grader.Run(entry, answer, context);
  if (auto why = Bubblewrap().Unavailable()) {
    CHECK(grade.status == GradeStatus::kSkipped);
    CHECK(grade.reason == *why);
    WARN("bubblewrap unavailable, " << grader.name() << " not tested: " << *why);
    return std::nullopt;
  }
  if (const std::string why = grader.Unrunnable(entry); !why.empty()) {
    CHECK(grade.status == GradeStatus::kSkipped);
    CHECK(grade.reason == why);
    WARN(entry["id"].get<std::string>() << " cannot run here: " << why);
    return std::nullopt;
  }
  return grade;
}

inline int ZxScore(const Grade& grade) { return grade.evidence.at("zx_score").get<int>(); }

}  // namespace evalrun::testing
