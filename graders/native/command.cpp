// command: an external checker program, JSON in on stdin, JSON out on stdout (DESIGN.md section
// 8; the protocol is documented in docs/sandbox.md "The command grader").
//
// Spec: {type: command, command: [argv...], timeout_s?: seconds (default 10), files?: [task
//        files]}.
// The checker always runs in the sandbox: it comes with the suite, and a suite may come from
// anyone's repository. Its working copy holds the files named in `files` and every argv element
// that is a task file (read through GradeContext::read_file), at their paths inside the suite, so
// ["python3", "files/check.py"] works. The checker reads
//   {"output": <answer text>, "reasoning": <reasoning>, "spec": <this grader spec>}
// and writes one JSON object: {"score": 0..1, "passed": bool, "reason": "..."} ("reason"
// optional). A checker that fails (non-zero exit, no or malformed JSON, out of time) is an
// env_error: the checker's fault, never the model's.
#include "core/error.h"
#include "graders/native/factories.h"
#include "plugins/sandbox.h"

namespace evalrun {
namespace {

constexpr size_t kEvidenceTail = 2000;

Grade EnvError(std::string reason, const SandboxResult* result) {
  Grade grade;
  grade.status = GradeStatus::kEnvError;
  grade.reason = std::move(reason);
  if (result != nullptr) {
    grade.evidence["exit_code"] = result->exit_code;
    grade.evidence["stdout_tail"] = OutputTail(result->stdout_text, kEvidenceTail);
    grade.evidence["stderr_tail"] = OutputTail(result->stderr_text, kEvidenceTail);
  }
  return grade;
}

class CommandGrader : public Grader {
 public:
  std::string_view name() const override { return "command"; }
  std::string_view version() const override { return "1"; }
  std::string_view description() const override {
    return "an external checker program in the sandbox: JSON on stdin, JSON score on stdout";
  }

  void CheckSpec(const nlohmann::json& spec, const SourceLocation& where) const override {
    const std::string at = where.ToString() + ": command: ";
    if (!spec.is_object()) throw Error(at + "the grader spec must be a mapping");
    if (!spec.contains("command") || !spec["command"].is_array() || spec["command"].empty()) {
      throw Error(at +
                  "'command' is required: the checker's argv as a list, "
                  "e.g. [python3, files/check.py]");
    }
    for (const auto& arg : spec["command"]) {
      if (!arg.is_string()) throw Error(at + "'command' must be a list of strings");
    }
    if (spec.contains("timeout_s") &&
        (!spec["timeout_s"].is_number() || spec["timeout_s"].get<double>() <= 0 ||
         spec["timeout_s"].get<double>() > 600)) {
      throw Error(at + "'timeout_s' must be a number of seconds in (0, 600]");
    }
    if (spec.contains("files")) {
      bool ok = spec["files"].is_array();
      if (ok) {
        for (const auto& f : spec["files"]) ok = ok && f.is_string();
      }
      if (!ok) throw Error(at + "'files' must be a list of task file paths");
    }
  }

  Grade Run(const nlohmann::json& spec, const Answer& answer,
            const GradeContext& context) const override {
    if (!spec.is_object() || !spec.contains("command") || !spec["command"].is_array() ||
        spec["command"].empty()) {
      return EnvError("command: the spec needs 'command'", nullptr);
    }
    SandboxRun run;
    for (const auto& arg : spec["command"]) {
      if (!arg.is_string()) return EnvError("command: 'command' must be strings", nullptr);
      run.argv.push_back(arg.get<std::string>());
    }
    const Sandbox* sandbox = context.sandbox;
    if (sandbox == nullptr && context.unsafe_no_sandbox) sandbox = UnsafeFallback();
    if (sandbox == nullptr) {
      Grade grade;
      grade.status = GradeStatus::kSkipped;
      grade.reason =
          "no sandbox to run the checker in (install bubblewrap, or accept the risk "
          "with --unsafe-no-sandbox)";
      return grade;
    }
    if (auto why = sandbox->Unavailable()) {
      Grade grade;
      grade.status = GradeStatus::kSkipped;
      grade.reason = *why;
      return grade;
    }
    if (context.read_file) {
      std::vector<std::string> wanted(run.argv.begin() + 1, run.argv.end());
      if (spec.contains("files") && spec["files"].is_array()) {
        for (const auto& f : spec["files"]) {
          if (f.is_string()) wanted.push_back(f.get<std::string>());
        }
      }
      for (const auto& path : wanted) {
        if (path.empty() || path[0] == '-' || path[0] == '/') continue;
        if (auto bytes = context.read_file(path)) run.files[path] = std::move(*bytes);
      }
    }
    const double timeout = spec.value("timeout_s", 10.0);
    run.limits.wall_seconds = timeout;
    run.limits.cpu_seconds = timeout;
    const nlohmann::json input = {
        {"output", answer.text}, {"reasoning", answer.reasoning}, {"spec", spec}};
    // Invalid UTF-8 in the model's output becomes U+FFFD rather than a throw.
    run.stdin_text = input.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";

    const SandboxResult result = sandbox->Run(run);
    if (result.timed_out) {
      return EnvError(
          "the checker ran out of time (" + std::to_string(static_cast<int>(timeout)) + " s)",
          &result);
    }
    if (result.exit_code != 0) {
      std::string first = result.stderr_text.substr(0, result.stderr_text.find('\n'));
      return EnvError("the checker failed with exit code " + std::to_string(result.exit_code) +
                          (first.empty() ? "" : ": " + OutputTail(first, 200)),
                      &result);
    }
    const nlohmann::json reply = nlohmann::json::parse(result.stdout_text, nullptr, false);
    if (reply.is_discarded() || !reply.is_object()) {
      return EnvError(
          "the checker's output is not a JSON object (expected "
          "{\"score\": 0..1, \"passed\": true|false, \"reason\": \"...\"})",
          &result);
    }
    if (!reply.contains("score") || !reply["score"].is_number() ||
        !(reply["score"].get<double>() >= 0 && reply["score"].get<double>() <= 1)) {
      return EnvError("the checker's 'score' must be a number in [0, 1]", &result);
    }
    if (!reply.contains("passed") || !reply["passed"].is_boolean()) {
      return EnvError("the checker's 'passed' must be true or false", &result);
    }
    if (reply.contains("reason") && !reply["reason"].is_string()) {
      return EnvError("the checker's 'reason' must be a string", &result);
    }
    Grade grade;
    grade.score = reply["score"].get<double>();
    grade.passed = reply["passed"].get<bool>();
    grade.reason = OutputTail(reply.value("reason", grade.passed ? "passed" : "failed"), 500);
    grade.evidence["checker"] = reply;
    grade.evidence["sandbox"] = sandbox->Describe();
    grade.evidence["wall_seconds"] = result.wall_seconds;
    return grade;
  }

 private:
  static const Sandbox* UnsafeFallback() {
    static const std::unique_ptr<Sandbox> unsafe = MakeUnsafeSandbox();
    return unsafe.get();
  }
};

}  // namespace

std::unique_ptr<Grader> MakeCommandGrader() {
  return std::make_unique<CommandGrader>();
}

}  // namespace evalrun
