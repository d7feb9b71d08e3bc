#include "runner/commands/grade_commands.h"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>

#include "core/error.h"
#include "graders/grader.h"
#include "plugins/sandbox.h"
#include "runner/suite_loader.h"

namespace evalrun {

void AddGradeCommands(CLI::App& app, GradeCommandOptions& o) {
  CLI::App* grade = app.add_subcommand("grade", "grade one saved output of one task");
  grade->allow_extras();
  grade->add_option("SUITE", o.suite, "NAME@REV, PATH@REV or PATH")->required();
  grade->add_option("--task", o.task_id, "the task's id")->required();
  grade->add_option("--output", o.output_file,
                    "the model's output: plain text, or JSON {content, reasoning, finish_reason}")
      ->required();
  grade->add_option("-o,--format", o.format, "text (default) | json");
  grade->add_option("--suite-repo", o.suite_repo,
                    "use this local clone or mirror for a registered suite name");
  grade->add_flag("--unsafe-no-sandbox", o.unsafe_no_sandbox,
                  "run code tests without bubblewrap (limits only): only if you accept the risk");
  grade->add_flag("--sandbox-network", o.sandbox_network,
                  "let tests that install packages reach this machine's network from the sandbox");
  app.add_subcommand("graders", "list graders with a one-line description each")->allow_extras();
}

namespace {

Output ReadOutput(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("--output " + path + ": cannot read it");
  std::ostringstream bytes;
  bytes << in.rdbuf();
  const std::string text = bytes.str();
  Output output;
  output.finish_reason = "stop";
  const auto json = nlohmann::json::parse(text, nullptr, false);
  if (json.is_object() && json.contains("content")) {
    // A recorded output: the answer and reasoning channels apart, and how it ended.
    output.content = json.value("content", "");
    output.reasoning = json.value("reasoning", "");
    output.finish_reason = json.value("finish_reason", "stop");
  } else {
    output.content = text;
  }
  return output;
}

}  // namespace

int RunGradeCommand(const GradeCommandOptions& o) {
  if (o.format != "text" && o.format != "json") {
    throw Error("-o '" + o.format + "': expected text or json");
  }
  ResolveOptions options;
  options.suite_repo = o.suite_repo;
  const LoadedSuite loaded = LoadSuite(o.suite, options);
  const Task* task = nullptr;
  std::vector<std::string> ids;
  for (const Task& t : loaded.suite.tasks) {
    ids.push_back(t.id);
    if (t.id == o.task_id) task = &t;
  }
  if (!task) {
    const std::string hint = ClosestMatch(o.task_id, ids);
    throw Error("suite " + loaded.suite.name + " has no task '" + o.task_id + "'" +
                (hint.empty() ? "" : ", did you mean '" + hint + "'?"));
  }
  const Output output = ReadOutput(o.output_file);
  const std::unique_ptr<Sandbox> sandbox =
      o.unsafe_no_sandbox ? MakeUnsafeSandbox() : MakeBubblewrapSandbox();
  GradeContext context;
  context.read_file = [&loaded](const std::string& path) { return loaded.ReadTaskFile(path); };
  context.sandbox = sandbox.get();
  context.unsafe_no_sandbox = o.unsafe_no_sandbox;
  context.network = o.sandbox_network;
  const Grade grade = GradeOutput(*task, output, context);
  if (o.format == "json") {
    nlohmann::json j = ToJson(grade);
    j["task"] = task->id;
    j["task_hash"] = task->hash;
    if (o.unsafe_no_sandbox) j["unsafe_no_sandbox"] = true;
    if (o.sandbox_network) j["sandbox_network"] = true;
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    std::printf("%s  %s  score %.3f  %s  %s\n", task->id.c_str(),
                grade.status == GradeStatus::kGraded ? (grade.passed ? "pass" : "fail")
                                                     : GradeStatusName(grade.status),
                grade.score, grade.grader_version.c_str(), grade.reason.c_str());
  }
  const bool graded = grade.status != GradeStatus::kSkipped && grade.status != GradeStatus::kEnvError;
  return graded ? 0 : static_cast<int>(ExitCode::kSomeFailed);
}

int RunGradersCommand() {
  for (const Grader* g : GraderRegistry::Builtin().All()) {
    std::printf("%-28s %-4s %.*s\n", std::string(g->name()).c_str(),
                std::string(g->version()).c_str(), static_cast<int>(g->description().size()),
                g->description().data());
  }
  return 0;
}

}  // namespace evalrun
