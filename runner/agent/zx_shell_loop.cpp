// zx-bench's interactive shell investigation (runner/agent/zx_shell_loop.h): shellLoop.ts's
// runShellLoop step for step, DockerSession's container stood in for by one sandboxed working
// copy at /workspace. Where evalrun differs is in docs/zx-bench.md ("cli_command").
#include "runner/agent/zx_shell_loop.h"

#include <algorithm>
#include <cmath>

#include "core/clock.h"
#include "core/speed_result.h"
#include "graders/zxbench/image_stand_in.h"
#include "graders/zxbench/workspace_files.h"

namespace evalrun::zx {
namespace {

using json = nlohmann::json;

constexpr double kCommandSeconds = 30;     // DockerSession.exec: at most 30 s a command
constexpr size_t kOutputBytes = 262'144;   // maxOutputBytes: stdout and stderr together
constexpr const char* kWorkspace = "/workspace";

// One command as it ran (shellLoop.ts ShellEvent).
struct Event {
  int turn = 0;
  std::string command;
  std::string stdout_text;
  std::string stderr_text;
  std::optional<int> exit_code;  // nullopt: killed (time or output limit)
  bool timed_out = false;
  bool output_limit_exceeded = false;
};

// DockerSession: the working copy, the stand-in, and the budget every command runs under.
class Session {
 public:
  Session(const Sandbox& sandbox, const ImageStandIn& stand_in, std::string workspace,
          double budget_s)
      : sandbox_(sandbox),
        stand_in_(stand_in),
        workspace_(std::move(workspace)),
        budget_s_(budget_s),
        started_(Clock::now()) {}

  double remaining() const {
    return budget_s_ - NanosToMs(NanosBetween(started_, Clock::now())) / 1000.0;
  }

  // The command as `sh -lc` in /workspace, under min(what is left, 30 s). nullopt when the
  // session's budget is spent (zx-bench throws there: the evaluation fails).
  std::optional<Event> Exec(const std::string& command) {
    const double left = remaining();
    if (left <= 0) return std::nullopt;
    const bool node = std::find(stand_in_.runtimes.begin(), stand_in_.runtimes.end(), "node") !=
                      stand_in_.runtimes.end();
    SandboxRun run;
    run.workspace = workspace_;
    run.work_path = kWorkspace;
    run.argv = StandInShell(stand_in_, command,
                            node ? std::vector<std::string>{"NODE_OPTIONS=--max-old-space-size=256"}
                                 : std::vector<std::string>{});
    const double wall = std::min(left, kCommandSeconds);
    run.limits.wall_seconds = wall;
    run.limits.cpu_seconds = wall;
    // The container's 256 MB are resident memory; this is address space, which node reserves
    // far more of than it uses.
    run.limits.memory_bytes = node ? 4L << 30 : 1L << 30;
    run.limits.max_processes = 64;
    run.limits.max_file_bytes = 64L << 20;  // the container's /workspace is a 64 MB tmpfs
    run.limits.max_output_bytes = kOutputBytes + 1;
    const SandboxResult r = sandbox_.Run(run);
    Event e;
    e.command = command;
    e.stdout_text = r.stdout_text;
    e.stderr_text = r.stderr_text;
    e.timed_out = r.timed_out;
    // One byte count over both streams: the first 256 KiB are kept, stdout first.
    if (e.stdout_text.size() + e.stderr_text.size() > kOutputBytes) {
      e.output_limit_exceeded = true;
      e.stdout_text.resize(std::min(e.stdout_text.size(), kOutputBytes));
      e.stderr_text.resize(std::min(e.stderr_text.size(), kOutputBytes - e.stdout_text.size()));
    }
    if (!e.timed_out && !e.output_limit_exceeded) e.exit_code = r.exit_code;
    e.stdout_text = js::ToWellFormedUtf8(e.stdout_text);
    e.stderr_text = js::ToWellFormedUtf8(e.stderr_text);
    return e;
  }

 private:
  const Sandbox& sandbox_;
  const ImageStandIn& stand_in_;
  std::string workspace_;
  double budget_s_;
  TimePoint started_;
};

js::ordered_json EventToJson(const Event& e) {
  return {{"turn", e.turn},
          {"command", e.command},
          {"stdout", e.stdout_text},
          {"stderr", e.stderr_text},
          {"exitCode", e.exit_code ? js::ordered_json(*e.exit_code) : js::ordered_json()},
          {"timedOut", e.timed_out},
          {"outputLimitExceeded", e.output_limit_exceeded}};
}

Grade Failed(GradeStatus status, std::string reason) {
  Grade g;
  g.status = status;
  g.reason = std::move(reason);
  return g;
}

}  // namespace

ShellLoopRun RunShellLoopEpisode(const ShellConfig& config, std::string_view task,
                                 const ModelTurn& model, const Sandbox& sandbox,
                                 double hard_timeout_s) {
  ShellLoopRun out;
  const std::string system = ShellSystemPrompt(config);
  json& transcript = out.transcript;
  transcript = {{"schema_version", 1}, {"system", system}, {"turns", json::array()}};
  const TimePoint t_episode = Clock::now();
  double model_ms_total = 0;

  const ImageStandIn stand_in = StandInFor(config.image);
  if (std::string why = StandInUnavailable(stand_in); !why.empty()) {
    out.failed = Failed(GradeStatus::kSkipped, why);
    return out;
  }
  if (auto why = sandbox.Unavailable()) {
    out.failed = Failed(GradeStatus::kSkipped, "no sandbox for zx-bench's shell loop: " + *why);
    return out;
  }
  ScratchDirectory dir;
  if (dir.path().empty()) {
    out.failed = Failed(GradeStatus::kEnvError, "cannot make the working copy");
    return out;
  }
  if (std::string error = SeedWorkspaceFiles(dir.path(), config.files); !error.empty()) {
    out.failed = Failed(GradeStatus::kEnvError, error);
    return out;
  }
  // The session's budget counts from before the setup, the loop's from after it.
  Session session(sandbox, stand_in, dir.path(), hard_timeout_s);
  for (const std::string& command : config.setup_commands) {
    const std::optional<Event> e = session.Exec(command);
    if (!e || !e->exit_code || *e->exit_code != 0) {
      out.failed = Failed(GradeStatus::kEnvError,
                          "Shell fixture setup failed: " +
                              (e ? e->stderr_text.substr(0, 500)
                                 : std::string("Docker session time budget exhausted")));
      return out;
    }
  }

  const TimePoint started = Clock::now();
  const auto elapsed_s = [&started] { return NanosToMs(NanosBetween(started, Clock::now())) / 1000.0; };
  js::ordered_json turns = js::ordered_json::array();
  js::ordered_json events = js::ordered_json::array();
  std::vector<std::string> log;  // the transcript the model is shown, one entry per command
  std::vector<std::string> errors;
  std::string answer;
  std::string reason = "turn_limit";

  for (int turn = 1; turn <= config.max_turns; ++turn) {
    const double remaining = hard_timeout_s - elapsed_s();
    if (remaining <= 0) {
      errors.push_back("SHELL_TOTAL_TIMEOUT");
      reason = "timeout";
      break;
    }
    std::string user(task);
    for (const std::string& entry : log) user += "\n\n" + entry;
    const json messages = json::array(
        {{{"role", "system"}, {"content", system}}, {{"role", "user"}, {"content", user}}});
    const TimePoint t_model = Clock::now();
    TurnReply reply = model(messages, remaining);
    const double model_ms = NanosToMs(NanosBetween(t_model, Clock::now()));
    model_ms_total += model_ms;
    json record = {{"turn", turn}, {"messages", messages}, {"model_ms", model_ms}};
    if (reply.record.t_send != TimePoint{}) {
      record["request"] = RecordToJson(reply.record, reply.record.t_send, false);
    }
    if (reply.error) {
      record["error"] = reply.error_message;
      transcript["turns"].push_back(record);
      const bool timed_out = reply.timed_out || LooksLikeTimeout(reply.error_message);
      if (turn == 1 && !timed_out) {  // zx-bench rethrows: the evaluation fails
        out.failed = Failed(GradeStatus::kEnvError,
                            "the first request failed: " + reply.error_message +
                                " (zx-bench does not score the episode)");
        return out;
      }
      errors.push_back("TURN_" + std::to_string(turn) + "_MODEL_ERROR: Error: " +
                       reply.error_message);
      reason = timed_out ? "timeout" : "model_error";
      break;
    }
    out.last_reasoning = reply.reasoning;
    out.last_finish_reason = reply.finish_reason;
    const std::string& raw = reply.content;
    record["assistant_raw"] = raw;
    record["reasoning"] = reply.reasoning;
    record["finish_reason"] = reply.finish_reason;
    js::ordered_json turn_record = {{"turn", turn},
                                    {"assistantRaw", raw},
                                    {"events", js::ordered_json::array()},
                                    {"finishReason", reply.finish_reason}};
    if (reply.finish_reason == "length") {
      transcript["turns"].push_back(record);
      turns.push_back(std::move(turn_record));
      errors.push_back("TURN_" + std::to_string(turn) + "_OUTPUT_TRUNCATED");
      reason = "truncated";
      break;
    }
    const ShellReply parsed = ParseShellReply(raw);
    if (static_cast<int>(parsed.commands.size()) > config.max_commands_per_turn) {
      transcript["turns"].push_back(record);
      turns.push_back(std::move(turn_record));
      errors.push_back("TURN_" + std::to_string(turn) + "_TOO_MANY_COMMANDS");
      reason = "protocol_error";
      break;
    }
    const TimePoint t_tools = Clock::now();
    json commands = json::array();
    bool limit = false;
    for (const std::string& command : parsed.commands) {
      std::optional<Event> e = session.Exec(command);
      if (!e) {  // DockerSession throws: the evaluation fails
        out.failed = Failed(GradeStatus::kEnvError, "Docker session time budget exhausted");
        return out;
      }
      e->turn = turn;
      log.push_back(ShellTranscriptEntry(turn, e->command, e->exit_code, e->stdout_text,
                                         e->stderr_text));
      js::ordered_json event = EventToJson(*e);
      commands.push_back(json::parse(event.dump()));
      turn_record["events"].push_back(event);
      events.push_back(std::move(event));
      if (e->timed_out || e->output_limit_exceeded) {
        errors.push_back("TURN_" + std::to_string(turn) + "_EXECUTION_LIMIT");
        limit = true;
        break;  // the session is closed: the turn's other commands do not run
      }
    }
    record["commands"] = std::move(commands);
    record["tools_ms"] = NanosToMs(NanosBetween(t_tools, Clock::now()));
    transcript["turns"].push_back(record);
    turns.push_back(std::move(turn_record));
    answer = parsed.answer;
    if (limit) {
      reason = "protocol_error";
      break;
    }
    if (!answer.empty()) {
      reason = "completed";
      break;
    }
    if (parsed.commands.empty()) {
      reason = "no_action";
      break;
    }
  }
  if (reason == "turn_limit") errors.push_back("SHELL_TURN_LIMIT");

  const double wall_ms = NanosToMs(NanosBetween(t_episode, Clock::now()));
  out.trace = {{"imageId", "evalrun stand-in for " + config.image},
               {"turns", std::move(turns)},
               {"events", std::move(events)},
               {"answer", answer},
               {"errors", errors},
               {"elapsedMs", std::llround(elapsed_s() * 1000)},
               {"terminationReason", reason},
               {"hardTimeoutMs", std::llround(hard_timeout_s * 1000)}};
  transcript["errors"] = errors;
  transcript["wall_ms"] = wall_ms;
  transcript["model_ms"] = model_ms_total;
  transcript["outside_model_ms"] = wall_ms - model_ms_total;
  return out;
}

}  // namespace evalrun::zx
