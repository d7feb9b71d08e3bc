// repo_tests: grades a repository coding episode by the repository's own tests (DESIGN.md
// section 9; docs/task-format.md "Repository coding tasks", docs/graders.md).
//
// Spec: {type: repo_tests} (no other keys); everything else is the task's `agent` mapping.
// The answer is the episode record, verbatim: {"diff": "<unified patch>", "termination_reason":
// ..., "submitted": bool}. A fresh workspace at the base gets the diff applied (a diff that does
// not apply: graded, score 0, with the reason), the protected paths restored, the hidden tests
// copied in; `setup` and `test_cmd` run in the sandbox. Resolved (score 1, passed) only when
// every fail_to_pass and every pass_to_pass test passes. An invalid run (RepoTestRun::invalid)
// is env_error, a test run out of time is timeout (score 0), no sandbox is skipped.
#include "graders/native/repo_tests.h"

#include <algorithm>

#include "core/error.h"
#include "graders/native/factories.h"

namespace evalrun {

namespace {

constexpr size_t kLogTail = 4000;

std::string StatusOf(const TestLogResult& tests, const std::string& name) {
  const auto it = tests.tests.find(name);
  return it == tests.tests.end() ? "missing" : TestStatusName(it->second);
}

// Runs one command in the workspace; the log interleaves stdout and stderr.
SandboxResult RunIn(const RepoWorkspace& workspace, const Sandbox& sandbox,
                    const std::string& command, double wall_s) {
  SandboxRun run;
  run.argv = {"bash", "-c", "exec 2>&1\n" + command};
  run.workspace = workspace.path();
  run.read_only = {".git"};
  run.limits.wall_seconds = wall_s;
  run.limits.cpu_seconds = wall_s;
  run.limits.memory_bytes = 2L << 30;
  run.limits.max_file_bytes = 64L << 20;
  return sandbox.Run(run);
}

// The sandbox itself failed (it reports with exit 127 and "evalrun sandbox: ..."), as opposed to
// the command.
bool SandboxFailed(const SandboxResult& result) {
  return result.exit_code == 127 && result.stderr_text.rfind("evalrun sandbox: ", 0) == 0;
}

}  // namespace

bool RepoTestRun::AllPass(const std::map<std::string, std::string>& statuses) const {
  return std::all_of(statuses.begin(), statuses.end(),
                     [](const auto& entry) { return entry.second == "passed"; });
}

RepoTestRun RunRepoTests(const RepoTask& task, RepoWorkspace& workspace,
                         const ReadSuiteFile& read_file, const Sandbox& sandbox) {
  RepoTestRun out;
  try {
    for (const std::string& path : task.protected_paths) workspace.Restore(path);
    for (const RepoHiddenTest& hidden : task.hidden_tests) workspace.Restore(hidden.to);
  } catch (const Error& e) {
    out.invalid = std::string("cannot restore the protected paths: ") + e.what();
    return out;
  }
  for (const RepoHiddenTest& hidden : task.hidden_tests) {
    const std::optional<std::string> bytes = read_file(hidden.from);
    if (!bytes) {
      out.invalid = "the hidden test '" + hidden.from + "' cannot be read from the suite";
      out.infrastructure = true;
      return out;
    }
    try {
      workspace.WriteFile(hidden.to, *bytes);
    } catch (const Error& e) {
      // The agent's diff made a folder on the way a file or a link: the run cannot be set up.
      out.invalid = std::string("cannot copy in the hidden test: ") + e.what();
      return out;
    }
  }
  if (!task.setup.empty()) {
    const SandboxResult setup = RunIn(workspace, sandbox, task.setup, task.limits.wall_s);
    if (setup.timed_out || setup.exit_code != 0) {
      out.timed_out = setup.timed_out;
      out.log = setup.stdout_text + setup.stderr_text;
      out.infrastructure = SandboxFailed(setup);
      out.invalid = setup.timed_out ? "setup ran out of time"
                                    : "setup failed with exit code " + std::to_string(setup.exit_code);
      return out;
    }
  }
  const SandboxResult result = RunIn(workspace, sandbox, task.test_cmd, task.limits.wall_s);
  out.exit_code = result.exit_code;
  out.timed_out = result.timed_out;
  out.log = result.stdout_text + result.stderr_text;
  if (SandboxFailed(result)) {
    out.invalid = "the sandbox could not run '" + task.test_cmd + "': " + result.stderr_text;
    out.infrastructure = true;
    return out;
  }
  const LogParser parser = ParseLogParserName(task.log_parser).value_or(LogParser::kExitCode);
  out.tests = ParseTestLog(out.log, parser, result.exit_code);
  for (const std::string& name : task.fail_to_pass) out.fail_to_pass[name] = StatusOf(out.tests, name);
  for (const std::string& name : task.pass_to_pass) out.pass_to_pass[name] = StatusOf(out.tests, name);
  if (!out.timed_out) {
    if (out.tests.tests.empty()) {
      out.invalid = "no test results in the log of '" + task.test_cmd + "' (exit code " +
                    std::to_string(result.exit_code) + ", log parser " + task.log_parser + ")";
    } else if (result.exit_code != 0 && out.tests.failed == 0 && out.tests.errors == 0) {
      out.invalid = "'" + task.test_cmd + "' exited with code " +
                    std::to_string(result.exit_code) + " but no test failed";
    }
  }
  return out;
}

nlohmann::json RepoTestEvidence(const RepoTestRun& run) {
  return {{"fail_to_pass", run.fail_to_pass},
          {"pass_to_pass", run.pass_to_pass},
          {"exit_code", run.exit_code},
          {"timed_out", run.timed_out},
          {"counts",
           {{"passed", run.tests.passed},
            {"failed", run.tests.failed},
            {"errors", run.tests.errors},
            {"skipped", run.tests.skipped}}},
          {"log_tail", OutputTail(run.log, kLogTail)}};
}

namespace {

class RepoTestsGrader : public Grader {
 public:
  std::string_view name() const override { return "repo_tests"; }
  std::string_view version() const override { return "1"; }
  std::string_view description() const override {
    return "a repository task's diff, graded by its fail-to-pass and pass-to-pass tests in the "
           "sandbox";
  }
  bool grades_episode() const override { return true; }

  void CheckAgent(const nlohmann::json& agent, const SourceLocation& where) const override {
    // The loader checked the repository mapping itself (tasks/task_yaml.cpp).
    if (!agent.is_object() || agent.value("kind", "") != "repo") {
      throw Error(where.ToString() +
                  ": grader 'repo_tests' grades a repository task: the task needs agent.kind: repo");
    }
  }

  void CheckSpec(const nlohmann::json& spec, const SourceLocation& where) const override {
    CheckSpecKeys(spec, where, "repo_tests", {});
  }

  Grade Run(const nlohmann::json& /*spec*/, const Answer& answer,
            const GradeContext& context) const override {
    Grade grade;
    if (context.agent == nullptr || !context.agent->is_object() ||
        context.agent->value("kind", "") != "repo") {
      grade.status = GradeStatus::kEnvError;
      grade.reason = "repo_tests grades repository tasks only (agent.kind: repo)";
      return grade;
    }
    const Sandbox* sandbox = context.sandbox;
    if (sandbox == nullptr && context.unsafe_no_sandbox) sandbox = UnsafeFallback();
    if (sandbox == nullptr) {
      grade.status = GradeStatus::kSkipped;
      grade.reason = "no sandbox to run the repository's tests in (install bubblewrap, or accept "
                     "the risk with --unsafe-no-sandbox)";
      return grade;
    }
    if (auto why = sandbox->Unavailable()) {
      grade.status = GradeStatus::kSkipped;
      grade.reason = *why;
      return grade;
    }
    if (!context.read_file) {
      grade.status = GradeStatus::kSkipped;
      grade.reason = "the suite's files (repository, hidden tests) are not available";
      return grade;
    }
    const nlohmann::json episode = nlohmann::json::parse(answer.text, nullptr, false);
    if (!episode.is_object() || !episode.contains("diff") || !episode["diff"].is_string()) {
      grade.status = GradeStatus::kEnvError;
      grade.reason = "the episode record is not a JSON object with a 'diff' string";
      return grade;
    }
    const std::string diff = episode["diff"].get<std::string>();
    grade.evidence["submitted"] = episode.value("submitted", false);
    grade.evidence["termination_reason"] = episode.value("termination_reason", "");
    grade.evidence["diff_bytes"] = diff.size();
    grade.evidence["sandbox"] = sandbox->Describe();
    // The upstream fix a task was built from, so the report can link the task to it.
    if (const auto it = context.agent->find("upstream");
        it != context.agent->end() && it->is_string()) {
      grade.evidence["upstream"] = *it;
    }
    try {
      const RepoTask task = ParseRepoTask(*context.agent);
      const std::unique_ptr<RepoWorkspace> workspace = RepoWorkspace::Create(task, context.read_file);
      if (const std::string why = workspace->Apply(diff); !why.empty()) {
        grade.status = GradeStatus::kGraded;
        grade.reason = "not resolved: " + why;
        grade.evidence["diff_applied"] = false;
        return grade;
      }
      grade.evidence["diff_applied"] = true;
      const RepoTestRun run = RunRepoTests(task, *workspace, context.read_file, *sandbox);
      grade.evidence.update(RepoTestEvidence(run));
      if (!run.invalid.empty()) {
        // After the agent's diff, a run that says nothing is the change's doing (code that exits
        // at import, tests folder replaced): not resolved. Only evalrun's own failures are
        // env_error, left out of the score.
        grade.status = run.infrastructure ? GradeStatus::kEnvError : GradeStatus::kGraded;
        grade.reason = (run.infrastructure ? "invalid run: " : "not resolved: invalid run: ") +
                       run.invalid;
        return grade;
      }
      if (run.timed_out) {
        grade.status = GradeStatus::kTimeout;
        grade.reason = "the tests ran out of time (" +
                       std::to_string(static_cast<int>(task.limits.wall_s)) + " s)";
        return grade;
      }
      const bool f2p = run.AllPass(run.fail_to_pass);
      const bool p2p = run.AllPass(run.pass_to_pass);
      grade.passed = f2p && p2p;
      grade.score = grade.passed ? 1 : 0;
      grade.reason = grade.passed ? "resolved: every fail_to_pass and pass_to_pass test passes"
                                  : "not resolved: " + Failing(run);
    } catch (const Error& e) {
      grade = Grade{};
      grade.status = GradeStatus::kEnvError;
      grade.reason = std::string("cannot set up the repository: ") + e.what();
    }
    return grade;
  }

 private:
  // "fail_to_pass tests.x.T.test_a failed; pass_to_pass tests.y.T.test_b missing" (first five).
  static std::string Failing(const RepoTestRun& run) {
    std::string out;
    int shown = 0, total = 0;
    for (const auto* group : {&run.fail_to_pass, &run.pass_to_pass}) {
      const char* label = group == &run.fail_to_pass ? "fail_to_pass " : "pass_to_pass ";
      for (const auto& [name, status] : *group) {
        if (status == "passed") continue;
        ++total;
        if (shown < 5) {
          out += (out.empty() ? "" : "; ") + std::string(label) + name + " " + status;
          ++shown;
        }
      }
    }
    if (total > shown) out += "; and " + std::to_string(total - shown) + " more";
    return out;
  }

  static const Sandbox* UnsafeFallback() {
    static const std::unique_ptr<Sandbox> unsafe = MakeUnsafeSandbox();
    return unsafe.get();
  }
};

}  // namespace

std::unique_ptr<Grader> MakeRepoTestsGrader() { return std::make_unique<RepoTestsGrader>(); }

}  // namespace evalrun
