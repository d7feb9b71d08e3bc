// zx-bench's interactive shell investigation (graders/zxbench/cli_shell.h): the configuration,
// the protocol and the score, written from Little-Star888/zx-bench's execution/shellLoop.ts at
// a5f6a19 and the executionShell branch of suncityldp/zx-bench's evaluators/cliCommand.ts at
// 8e0adf68 (cli_command_v6; the branch is the same in v5). docs/upstream/zx-bench-execution-shell.md
// has the notes; docs/zx-bench.md says where evalrun differs.
#include "graders/zxbench/cli_shell.h"

#include <algorithm>
#include <memory>

#include "core/error.h"
#include "graders/framework/grader.h"
#include "graders/zxbench/common.h"
#include "graders/zxbench/factories.h"
#include "graders/zxbench/image_stand_in.h"
#include "graders/zxbench/workspace_files.h"

namespace evalrun::zx {
namespace {

using json = nlohmann::json;

constexpr std::string_view kName = "zxbench:cli_shell";
constexpr std::string_view kVersion = "1";
constexpr std::string_view kZxEvaluator = "cli_command_v6 executionShell";

const json& Shell(const json& entry) { return Member(Member(entry, "requirements"), "executionShell"); }

int Clamp(const json& v, int fallback, int low, int high) {
  const double x = v.is_number() ? v.get<double>() : fallback;
  return static_cast<int>(std::max<double>(low, std::min<double>(x, high)));
}

// /^NAME\s*/ (with `at_least_one`, \s+): the rest of the line after the prefix and its white
// space, or nullopt when the line does not start so.
std::optional<std::string_view> AfterPrefix(std::string_view line, std::string_view prefix,
                                            bool at_least_one) {
  if (line.substr(0, prefix.size()) != prefix) return std::nullopt;
  const size_t after = SkipJsSpaces(line, prefix.size());
  if (at_least_one && after == prefix.size()) return std::nullopt;
  return line.substr(after);
}

}  // namespace

bool HasExecutionShell(const json& entry) { return Shell(entry).is_object(); }

ShellConfig ParseShellConfig(const json& entry) {
  const json& shell = Shell(entry);
  if (!shell.is_object()) throw Error("requirements.executionShell: expected an object");
  ShellConfig c;
  const json& files = Member(shell, "files");
  if (!files.is_null()) {
    if (!files.is_array()) throw Error("requirements.executionShell.files: expected an array");
    for (size_t i = 0; i < files.size(); ++i) {
      const json& f = files[i];
      const std::string where = "requirements.executionShell.files[" + std::to_string(i) + "]";
      if (!Member(f, "path").is_string() || !Member(f, "content").is_string()) {
        throw Error(where + ": expected {path, content} strings");
      }
      if (!SafeWorkspacePath(f["path"].get<std::string>())) {
        throw Error("Invalid workspace path: " + f["path"].get<std::string>());
      }
    }
    c.files = files;
  }
  const json& answer = Member(shell, "answer");
  if (!answer.is_string() && !answer.is_number()) {
    throw Error("requirements.executionShell.answer: expected a string or a number");
  }
  c.answer = std::string(js::JsTrim(js::JsToString(js::ordered_json::parse(answer.dump()))));
  // A missing maxTurns is NaN in zx-bench: no turn runs.
  const json& turns = Member(shell, "maxTurns");
  c.max_turns = turns.is_number() ? Clamp(turns, 0, 1, 10) : 0;
  const json& image = Member(shell, "image");
  if (image.is_string()) c.image = image.get<std::string>();
  const json& min_commands = Member(shell, "minCommands");
  if (min_commands.is_number()) c.min_commands = static_cast<int>(min_commands.get<double>());
  c.max_commands_per_turn = Clamp(Member(shell, "maxCommandsPerTurn"), 4, 1, 8);
  const json& setup = Member(shell, "setupCommands");
  if (!setup.is_null()) {
    if (!setup.is_array() ||
        !std::all_of(setup.begin(), setup.end(), [](const json& s) { return s.is_string(); })) {
      throw Error("requirements.executionShell.setupCommands: expected an array of strings");
    }
    for (const json& s : setup) c.setup_commands.push_back(s.get<std::string>());
  }
  return c;
}

std::string ShellSystemPrompt(const ShellConfig& config) {
  return "你在隔离的 Linux 工作区调查用户的问题。需要查看环境时，每行输出 SHELL <命令>。\n"
         "每轮最多 " + std::to_string(config.max_commands_per_turn) +
         " 条命令。命令会真实执行，下一轮会收到原始 stdout、stderr 和退出码。\n"
         "调查完成后单独输出一行 ANSWER: <答案>。不要声称没有执行过的检查已经完成。";
}

ShellReply ParseShellReply(std::string_view raw) {
  ShellReply reply;
  bool answered = false;
  for (std::string_view line : JsSplit(raw, '\n')) {
    if (const auto rest = AfterPrefix(line, "SHELL", true)) {
      const std::string_view command = js::JsTrim(*rest);
      if (!command.empty()) reply.commands.emplace_back(command);
    }
    if (!answered) {
      if (const auto rest = AfterPrefix(line, "ANSWER:", false)) {
        reply.answer = std::string(js::JsTrim(*rest));
        answered = true;
      }
    }
  }
  return reply;
}

std::string ShellTranscriptEntry(int turn, const std::string& command,
                                 const std::optional<int>& exit_code,
                                 const std::string& stdout_text, const std::string& stderr_text) {
  return "[第 " + std::to_string(turn) + " 轮命令] " + command + "\n[退出码] " +
         (exit_code ? std::to_string(*exit_code) : std::string("null")) + "\n[stdout]\n" +
         stdout_text + "\n[stderr]\n" + stderr_text;
}

Grade ScoreShellTrace(const ShellConfig& config, const js::ordered_json& trace) {
  if (!trace.is_object()) {
    return StatusGrade(GradeStatus::kEnvError, "SHELL_TRACE_MISSING",
                       {{"evidence", json::array({"SHELL_TRACE_MISSING"})}});
  }
  const js::ordered_json& answer_value = Member(trace, "answer");
  const std::string answer = answer_value.is_string() ? answer_value.get<std::string>() : "";
  const std::string trimmed(js::JsTrim(answer));
  const js::ordered_json& events = Member(trace, "events");
  const size_t commands = events.is_array() ? events.size() : 0;
  bool fed_back = false;
  bool limit_hit = false;
  if (events.is_array()) {
    for (const js::ordered_json& e : events) {
      const js::ordered_json& out = Member(e, "stdout");
      if (Member(e, "exitCode") == 0 && out.is_string() && !js::JsTrim(out.get<std::string>()).empty()) {
        fed_back = true;
      }
      if (Member(e, "timedOut") == true || Member(e, "outputLimitExceeded") == true) {
        limit_hit = true;
      }
    }
  }
  std::vector<std::string> errors;
  const js::ordered_json& error_list = Member(trace, "errors");
  if (error_list.is_array()) {
    for (const js::ordered_json& e : error_list) errors.push_back(js::JsToString(e));
  }
  std::string joined;
  for (size_t i = 0; i < errors.size(); ++i) joined += (i ? "; " : "") + errors[i];

  const bool answer_ok = trimmed == config.answer;
  const bool explored =
      static_cast<double>(commands) >= static_cast<double>(config.min_commands) && fed_back;
  const bool protocol_ok = errors.empty() && !limit_hit;
  const int passes = answer_ok + explored + protocol_ok;
  const int score = trimmed.empty() ? 0 : js::JsRound(passes / 3.0 * 100);
  const auto criterion = [](const char* id, const char* description, bool pass,
                            const std::string& evidence) {
    return json{{"id", id},           {"description", description}, {"critical", true},
                {"source", "verified"}, {"status", pass ? "pass" : "fail"},
                {"evidence", evidence}};
  };
  json evidence = {
      {"criteria",
       json::array({criterion("shell_answer", "调查结论正确", answer_ok, "answer=" + answer),
                    criterion("shell_exploration", "自主执行命令并获得环境反馈", explored,
                              "commands=" + std::to_string(commands)),
                    criterion("shell_protocol", "命令执行无预算或协议错误", protocol_ok,
                              joined.empty() ? "none" : joined)})},
      {"evidence", json::array({"Docker shell investigation: " + std::to_string(commands) +
                                " commands, answer=" + answer})},
      {"expected", config.answer},
      {"termination", js::JsToString(Member(trace, "terminationReason"))}};
  if (score < 30) evidence["human_review_required"] = true;
  std::string reason = std::to_string(passes) + " of 3 criteria (answer " +
                       (answer_ok ? "right" : "wrong") + ", exploration " +
                       (explored ? "done" : "not done") + ", protocol " +
                       (protocol_ok ? "clean" : "broken") + ")";
  if (trimmed.empty()) reason = "no answer (" + js::JsToString(Member(trace, "terminationReason")) + ")";
  return ZxGrade(score, std::move(evidence), std::move(reason), kZxEvaluator);
}

namespace {

class ZxCliShellGrader final : public Grader {
 public:
  std::string_view name() const override { return kName; }
  std::string_view version() const override { return kVersion; }
  std::string_view description() const override {
    return "zx-bench cli_command with executionShell: the shell investigation's trace (the "
           "commands the model ran in /workspace, their results, its answer) on the answer, "
           "the exploration and the protocol";
  }
  bool grades_episode() const override { return true; }
  void CheckSpec(const json&, const SourceLocation&) const override {}

  std::string Unrunnable(const json& spec) const override {
    try {
      const ShellConfig config = ParseShellConfig(spec);
      return StandInUnavailable(StandInFor(config.image));
    } catch (const Error& e) {
      return std::string("zx-bench cannot run this entry: ") + e.what();
    }
  }

  Grade Run(const json& spec, const Answer& answer, const GradeContext&) const override {
    ShellConfig config;
    try {
      config = ParseShellConfig(spec);
    } catch (const Error& e) {
      return StatusGrade(GradeStatus::kSkipped,
                         std::string("zx-bench cannot run this entry: ") + e.what());
    }
    const js::ordered_json trace = js::ordered_json::parse(answer.text, nullptr, false);
    return ScoreShellTrace(config, trace.is_discarded() ? js::ordered_json() : trace);
  }
};

}  // namespace
}  // namespace evalrun::zx

namespace evalrun {
std::unique_ptr<Grader> MakeZxCliShellGrader() { return std::make_unique<zx::ZxCliShellGrader>(); }
}  // namespace evalrun
