// The suite run. Threads: one worker per concurrency slot, each with its own StreamingClient
// (so a worker grading or storing never delays another's timestamps), and the caller's thread,
// which watches for Ctrl-C and draws progress. Workers take tasks from one shared cursor; the
// store serialises their commits.
#include "runner/suite_run.h"

#include <fnmatch.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>

#include "core/clock.h"
#include "core/error.h"
#include "core/metrics.h"
#include "core/sha256.h"
#include "core/stats.h"
#include "core/terminal_text.h"
#include "core/version.h"
#include "graders/grader.h"
#include "graders/sandbox.h"
#include "plugins/env_probe.h"
#include "plugins/http_client.h"
#include "results/run_report.h"
#include "results/speed_report.h"
#include "results/store.h"
#include "runner/agent_task.h"
#include "runner/speed_protocol.h"
#include "runner/suite_loader.h"

namespace evalrun {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

const std::vector<std::string> kFilterKeys = {"dimension", "id", "difficulty", "tag"};

int64_t WallNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string Seconds(double s) {
  char text[32];
  if (s < 120) {
    std::snprintf(text, sizeof text, "%.0f s", s);
  } else if (s < 7200) {
    std::snprintf(text, sizeof text, "%.0f min", s / 60);
  } else {
    std::snprintf(text, sizeof text, "%.1f h", s / 3600);
  }
  return text;
}

// What went wrong with a request, for the retry decision.
enum class Failure { kNone, kRetryable, kTimeout, kFatal, kCancelled };

Failure Classify(const RequestRecord& r) {
  switch (r.outcome) {
    case RequestOutcome::kOk: return Failure::kNone;
    case RequestOutcome::kConnectFailed:
    case RequestOutcome::kDropped:
    case RequestOutcome::kStreamError: return Failure::kRetryable;
    case RequestOutcome::kHttpError:
      return r.http_status >= 500 || r.http_status == 429 ? Failure::kRetryable : Failure::kFatal;
    case RequestOutcome::kIdleTimeout:
    case RequestOutcome::kTotalTimeout: return Failure::kTimeout;
    case RequestOutcome::kMalformed: return Failure::kFatal;
    case RequestOutcome::kCancelled: return Failure::kCancelled;
  }
  return Failure::kFatal;
}

bool EndpointAnswers(const std::string& endpoint, double timeout_s) {
  HttpRequest ping;
  ping.method = "GET";
  ping.url = endpoint + "/v1/models";
  ping.connect_timeout_s = timeout_s;
  ping.total_timeout_s = timeout_s + 2;
  return Fetch(ping).status != 0;
}

// The JSON value of a task's thinking setting, as the backend's enum.
Thinking TaskThinking(const Task& task, const SuiteRunConfig& config) {
  if (config.thinking) return *config.thinking;
  const json& value = task.generation.contains("thinking") ? task.generation["thinking"] : json();
  if (value.is_string()) {
    if (auto parsed = ParseThinking(value.get<std::string>())) return *parsed;
  }
  return Thinking::kAuto;
}

ChatRequest TaskChat(const Task& task, const SuiteRunConfig& config, const std::string& model) {
  ChatRequest chat;
  chat.model = model;
  chat.messages = task.messages;
  const json& g = task.generation;
  chat.max_tokens = g.contains("max_tokens") && g["max_tokens"].is_number_integer()
                        ? g["max_tokens"].get<int64_t>()
                        : config.max_tokens;
  if (g.contains("temperature") && g["temperature"].is_number()) {
    chat.temperature = g["temperature"].get<double>();
  }
  if (g.contains("top_p") && g["top_p"].is_number()) chat.top_p = g["top_p"].get<double>();
  if (g.contains("seed") && g["seed"].is_number_integer()) chat.seed = g["seed"].get<int64_t>();
  if (g.contains("stop") && g["stop"].is_array()) {
    for (const auto& s : g["stop"]) {
      if (s.is_string()) chat.stop.push_back(s.get<std::string>());
    }
  }
  chat.thinking = TaskThinking(task, config);
  return chat;
}

// The sum over the suite's task hashes, sorted: names the suite's content for --quick.
std::string SuiteHash(const Suite& suite) {
  std::vector<std::string> hashes;
  for (const Task& t : suite.tasks) hashes.push_back(t.hash);
  std::sort(hashes.begin(), hashes.end());
  std::string all;
  for (const auto& h : hashes) all += h + "\n";
  return Sha256Hex(all);
}

json SettingsJson(const SuiteRunConfig& c, const Suite& suite, const std::string& model) {
  return {{"suite", c.suite_spec},
          {"suite_commit", suite.commit},
          {"suite_tree", suite.tree},
          {"filter", c.filters},
          {"limit", c.limit},
          {"quick", c.quick ? json(*c.quick) : json()},
          {"seed", c.seed},
          {"concurrency", c.concurrency},
          {"max_tokens", c.max_tokens},
          {"thinking", c.thinking ? json(ThinkingName(*c.thinking)) : json("task")},
          {"model", model},
          {"unsafe_no_sandbox", c.unsafe_no_sandbox},
          {"tool_format", ToolCallFormatName(c.tool_format)}};
}

std::string ShortValue(const json& v) {
  std::string text = v.dump();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

// "concurrency 4 (run: 1), thinking \"on\" (run: \"off\")", or "" when equal.
std::string SettingsDifference(const json& now, const json& stored) {
  std::string out;
  std::set<std::string> keys;
  for (const auto& [k, v] : now.items()) keys.insert(k);
  if (stored.is_object()) {
    for (const auto& [k, v] : stored.items()) keys.insert(k);
  }
  for (const auto& key : keys) {
    const json a = now.contains(key) ? now[key] : json();
    const json b = stored.is_object() && stored.contains(key) ? stored[key] : json();
    if (a == b) continue;
    if (!out.empty()) out += ", ";
    out += key + " " + ShortValue(a) + " (run: " + ShortValue(b) + ")";
  }
  return out;
}

// The status line / log lines.
class Progress {
 public:
  Progress(const SuiteRunConfig& config, std::ostream& log, int64_t total, int64_t done_before)
      : config_(config), log_(log), total_(total), done_(done_before), start_done_(done_before),
        terminal_(isatty(STDERR_FILENO) == 1 && !config.quiet), t_start_(Clock::now()),
        t_last_log_(t_start_) {}

  void TaskDone(const TaskResult& r) {
    std::lock_guard lock(mutex_);
    ++done_;
    if (r.grade.status == GradeStatus::kEnvError) ++errors_;
    if (r.grade.status != GradeStatus::kSkipped && r.grade.status != GradeStatus::kEnvError) {
      ++graded_;
      if (r.grade.passed) ++passed_;
    }
    if (!r.requests.empty()) {
      const RequestMetrics m = ComputeMetrics(r.requests.back());
      if (m.decode_tps) decode_tps_ = *m.decode_tps;
    }
    if (config_.quiet) return;
    if (terminal_) {
      Draw();
    } else if ((done_ - start_done_) % std::max<int64_t>(1, config_.log_every_tasks) == 0 ||
               NanosToSeconds(NanosBetween(t_last_log_, Clock::now())) >= config_.log_every_s) {
      log_ << Line() << std::endl;
      t_last_log_ = Clock::now();
    }
  }

  // A line for the log that does not tear the status line.
  void Say(const std::string& line) {
    std::lock_guard lock(mutex_);
    if (terminal_) log_ << "\r\033[K";
    log_ << line << std::endl;
    if (terminal_) Draw();
  }

  void Finish() {
    std::lock_guard lock(mutex_);
    if (terminal_) log_ << "\r\033[K" << Line() << std::endl;
  }

 private:
  void Draw() { log_ << "\r\033[K" << Line() << std::flush; }

  std::string Line() const {
    char text[256];
    const double elapsed = NanosToSeconds(NanosBetween(t_start_, Clock::now()));
    const int64_t finished_now = done_ - start_done_;
    std::string eta = "-";
    if (finished_now > 0 && done_ < total_) {
      eta = Seconds(elapsed / static_cast<double>(finished_now) *
                    static_cast<double>(total_ - done_));
    }
    std::snprintf(text, sizeof text, "[%lld/%lld] pass %s | decode %s tok/s | errors %lld | ETA %s",
                  static_cast<long long>(done_), static_cast<long long>(total_),
                  graded_ > 0 ? (std::to_string(100 * passed_ / graded_) + "%").c_str() : "-",
                  decode_tps_ > 0 ? std::to_string(static_cast<int>(std::lround(decode_tps_))).c_str()
                                  : "-",
                  static_cast<long long>(errors_), eta.c_str());
    return text;
  }

  const SuiteRunConfig& config_;
  std::ostream& log_;
  std::mutex mutex_;
  int64_t total_;
  int64_t done_;
  int64_t start_done_;
  int64_t graded_ = 0, passed_ = 0, errors_ = 0;
  double decode_tps_ = 0;
  bool terminal_;
  TimePoint t_start_;
  TimePoint t_last_log_;
};

// Shared state of one run's workers.
class Scheduler {
 public:
  Scheduler(const SuiteRunConfig& config, const LoadedSuite& loaded, ResultStore& store,
            std::string run_id, std::vector<const Task*> todo, const ServerInfo& server,
            std::string model, const Sandbox& sandbox, Progress& progress)
      : config_(config), loaded_(loaded), store_(store), run_id_(std::move(run_id)),
        todo_(std::move(todo)), server_(server), model_(std::move(model)), sandbox_(sandbox),
        progress_(progress) {
    clients_.reserve(static_cast<size_t>(config.concurrency));
    for (int i = 0; i < config.concurrency; ++i) {
      clients_.push_back(std::make_unique<StreamingClient>(4));
    }
  }

  // Runs until every task is done, the run is stopped, or the endpoint stayed away too long.
  void Run(const std::atomic<bool>* stop) {
    const TimePoint t_start = Clock::now();
    std::vector<std::thread> workers;
    active_workers_.store(config_.concurrency);  // before any worker can finish
    for (int i = 0; i < config_.concurrency; ++i) {
      workers.emplace_back([this, i] { Work(i); });
    }
    // The caller's thread watches for Ctrl-C: stop dispatching, give in-flight requests the
    // grace period, then cancel them.
    std::optional<TimePoint> stop_seen;
    while (active_workers_.load() > 0) {
      if (stop && stop->load() && !stop_seen) {
        stop_seen = Clock::now();
        stopping_.store(true);
        progress_.Say("evalrun: interrupted: finishing in-flight tasks (up to " +
                      Seconds(config_.interrupt_grace_s) + "; Ctrl-C again stops at once)");
        wake_.notify_all();
      }
      if (stop_seen && !cancelled_.load() &&
          NanosToSeconds(NanosBetween(*stop_seen, Clock::now())) >= config_.interrupt_grace_s) {
        cancelled_.store(true);
        for (auto& client : clients_) client->CancelAll();
      }
      std::unique_lock lock(wait_mutex_);
      wake_.wait_for(lock, std::chrono::milliseconds(50));
    }
    for (auto& w : workers) w.join();
    wall_ns_ = NanosBetween(t_start, Clock::now());
  }

  bool interrupted() const { return stopping_.load() && !store_failed_.load(); }
  // The first error a worker met (a store write that failed), "" when none did.
  std::string store_error() const {
    std::lock_guard lock(stats_mutex_);
    return store_error_;
  }
  bool endpoint_gone() const { return endpoint_gone_.load(); }
  int64_t env_errors() const { return env_errors_.load(); }
  // evalrun's own share of the workers' time: not waiting for the model, not sleeping.
  double OwnTimeFraction() const {
    const double total = static_cast<double>(wall_ns_) * config_.concurrency;
    return total > 0 ? static_cast<double>(own_ns_.load()) / total : 0;
  }
  // The part of OwnTimeFraction spent running agent tasks' tools.
  double ToolsTimeFraction() const {
    const double total = static_cast<double>(wall_ns_) * config_.concurrency;
    return total > 0 ? static_cast<double>(tools_ns_.load()) / total : 0;
  }
  std::vector<double> CommitMs() const {
    std::lock_guard lock(stats_mutex_);
    return commit_ms_;
  }

 private:
  void Work(int slot) {
    StreamingClient& client = *clients_[static_cast<size_t>(slot)];
    while (!stopping_.load() && !endpoint_gone_.load()) {
      const size_t index = next_.fetch_add(1);
      if (index >= todo_.size()) break;
      try {
        RunTask(*todo_[index], client);
      } catch (const Error& e) {
        // A store write failed (disk full, read-only, locked): the run stops dispatching and
        // RunSuite ends it with the message, exit 1; tasks committed so far are intact and
        // --resume redoes this one. An exception must not leave a worker thread (abort).
        {
          std::lock_guard lock(stats_mutex_);
          if (store_error_.empty()) store_error_ = e.what();
        }
        store_failed_.store(true);
        stopping_.store(true);
        wake_.notify_all();
        break;
      }
    }
    --active_workers_;
    wake_.notify_all();
  }

  // Sleeps up to `seconds`, waking early when the run stops. Returns false when stopped.
  bool Sleep(double seconds, int64_t& slept_ns) {
    const TimePoint t0 = Clock::now();
    std::unique_lock lock(wait_mutex_);
    wake_.wait_for(lock, std::chrono::duration<double>(seconds),
                   [this] { return stopping_.load() || endpoint_gone_.load(); });
    slept_ns += NanosBetween(t0, Clock::now());
    return !stopping_.load() && !endpoint_gone_.load();
  }

  // Waits while the endpoint is away (one worker logs the pause, all wait). False when it did
  // not come back within --wait-endpoint or the run was stopped.
  bool WaitForEndpoint(int64_t& slept_ns) {
    {
      std::lock_guard lock(pause_mutex_);
      if (!paused_) {
        paused_ = true;
        pause_start_ = Clock::now();
        const std::string message = "endpoint " + config_.endpoint +
                                    " is unreachable: pausing, waiting up to " +
                                    Seconds(config_.wait_endpoint_s) + " for it to come back";
        store_.AddEvent(run_id_, "pause", message);
        progress_.Say("evalrun: " + message);
      }
    }
    while (true) {
      if (EndpointAnswers(config_.endpoint, std::min(3.0, config_.connect_timeout_s))) break;
      double waited;
      {
        std::lock_guard lock(pause_mutex_);
        waited = NanosToSeconds(NanosBetween(pause_start_, Clock::now()));
      }
      if (waited >= config_.wait_endpoint_s) {
        if (!endpoint_gone_.exchange(true)) {
          const std::string message = "endpoint did not come back within " +
                                      Seconds(config_.wait_endpoint_s) + ": stopping the run";
          store_.AddEvent(run_id_, "pause", message);
          progress_.Say("evalrun: " + message);
          wake_.notify_all();
        }
        return false;
      }
      if (!Sleep(config_.probe_interval_s, slept_ns)) return false;
    }
    std::lock_guard lock(pause_mutex_);
    if (paused_) {
      paused_ = false;
      const std::string message =
          "endpoint is back after " +
          Seconds(NanosToSeconds(NanosBetween(pause_start_, Clock::now()))) + ": resuming";
      store_.AddEvent(run_id_, "resume", message);
      progress_.Say("evalrun: " + message);
    }
    return true;
  }

  void RunTask(const Task& task, StreamingClient& client) {
    const TimePoint t_start = Clock::now();
    TaskResult result;
    result.task_id = task.id;
    result.task_hash = task.hash;
    result.dimension = task.dimension;
    result.difficulty = task.difficulty;
    result.weight = DifficultyWeight(task.difficulty) * task.weight;
    if (task.format == "zxbench") {
      const json& source = task.raw.contains("benchmarkSource") ? task.raw["benchmarkSource"]
                                                                 : json();
      if (source.is_object() && source.contains("id") && source["id"].is_string()) {
        result.group = source["id"].get<std::string>();
      }
      if (task.raw.contains("category") && task.raw["category"].is_string()) {
        result.category = task.raw["category"].get<std::string>();
      }
    }

    if (!task.skip_reason.empty()) {
      result.grade.status = GradeStatus::kSkipped;
      result.grade.reason = task.skip_reason;
      result.grade.grader = task.grader.value("type", "");
      Commit(result, t_start, 0, 0);
      return;
    }

    const ChatRequest chat = TaskChat(task, config_, model_);
    if (IsAgentTask(task)) {
      RunAgent(task, chat, client, result, t_start);
      return;
    }
    const json body = BuildChatBody(chat, server_);
    const double deadline = RequestDeadline(-1, chat.max_tokens);
    int64_t model_ns = 0;
    int64_t slept_ns = 0;
    const Failure failure =
        Send(task, body, chat.max_tokens, deadline, client, result, model_ns, slept_ns);
    if (failure == Failure::kCancelled) {
      // Not committed: an unfinished task starts over on --resume.
      own_ns_ += NanosBetween(t_start, Clock::now()) - model_ns - slept_ns;
      return;
    }

    const RequestRecord& last = result.requests.back();
    result.output = last.content;
    result.reasoning = last.reasoning;
    result.finish_reason = last.finish_reason;
    if (failure == Failure::kNone) {
      const Output output{last.content, last.reasoning, last.finish_reason};
      result.grade = GradeOutput(task, output, GradeContextFor());
    } else {
      result.grade.grader = task.grader.value("type", "");
      result.grade.grader_version = task.grader_version;
      const std::string what = std::string(OutcomeName(last.outcome)) +
                               (last.error_message.empty() ? "" : ": " + last.error_message);
      if (failure == Failure::kTimeout) {
        result.grade.status = GradeStatus::kTimeout;
        result.grade.reason = "the request timed out (" + what + ")";
      } else {
        result.grade.status = GradeStatus::kEnvError;
        result.grade.reason = "the endpoint failed: " + what;
        ++env_errors_;
      }
    }
    Commit(result, t_start, model_ns, slept_ns);
  }

  // One agent episode (runner/agent_task.h): every turn goes through Send, so turns get the
  // same retries and pauses as single requests and are all recorded in result.requests. An
  // interrupted episode is not committed (it starts over on --resume); a turn that failed for
  // environment reasons makes the task env_error, as a failed single request does.
  void RunAgent(const Task& task, const ChatRequest& chat, StreamingClient& client,
                TaskResult& result, TimePoint t_start) {
    int64_t model_ns = 0;
    int64_t slept_ns = 0;
    Failure stopped = Failure::kNone;
    const AgentSend send = [&](const ChatRequest& request, double remaining_s) {
      if (stopped != Failure::kNone) {
        RequestRecord none;
        none.outcome = RequestOutcome::kCancelled;
        return none;
      }
      const json body = BuildChatBody(request, server_);
      const double deadline =
          std::max(1.0, std::min(remaining_s, RequestDeadline(-1, request.max_tokens)));
      const Failure failure =
          Send(task, body, request.max_tokens, deadline, client, result, model_ns, slept_ns);
      if (failure == Failure::kCancelled || failure == Failure::kFatal) stopped = failure;
      return result.requests.back();
    };
    AgentTaskOptions options;
    options.text_format = config_.tool_format;
    options.abandoned = [&stopped] { return stopped != Failure::kNone; };
    AgentTaskOutcome outcome = RunAgentTask(task, chat, send, GradeContextFor(), options);
    // The agent's tools (sandboxed commands, world scripts) run on evalrun's side: counted apart
    // so the overhead line can say how much of evalrun's time they were.
    if (outcome.transcript.is_object() && outcome.transcript.contains("turns")) {
      double tools_ms = 0;
      for (const json& turn : outcome.transcript["turns"]) {
        if (turn.contains("tools_ms") && turn["tools_ms"].is_number()) {
          tools_ms += turn["tools_ms"].get<double>();
        }
      }
      tools_ns_ += static_cast<int64_t>(tools_ms * 1e6);
    }
    if (stopped == Failure::kCancelled) {
      own_ns_ += NanosBetween(t_start, Clock::now()) - model_ns - slept_ns;
      return;
    }
    result.output = std::move(outcome.output);
    result.reasoning = std::move(outcome.reasoning);
    result.finish_reason = std::move(outcome.finish_reason);
    result.transcript = std::move(outcome.transcript);
    result.grade = std::move(outcome.grade);
    if (stopped == Failure::kFatal) {
      const RequestRecord& last = result.requests.back();
      result.grade.status = GradeStatus::kEnvError;
      result.grade.score = 0;
      result.grade.passed = false;
      result.grade.reason = "the endpoint failed: " + std::string(OutcomeName(last.outcome)) +
                            (last.error_message.empty() ? "" : ": " + last.error_message);
      ++env_errors_;
    }
    Commit(result, t_start, model_ns, slept_ns);
  }

  GradeContext GradeContextFor() const {
    GradeContext context;
    context.read_file = [this](const std::string& path) { return loaded_.ReadTaskFile(path); };
    context.sandbox = &sandbox_;
    context.unsafe_no_sandbox = config_.unsafe_no_sandbox;
    return context;
  }

  // Sends one request for `task`, retrying environment failures with backoff and waiting
  // while the endpoint is away; every attempt is appended to result.requests. Returns how the
  // last attempt ended (kCancelled when the run stopped meanwhile).
  Failure Send(const Task& task, const json& body, int64_t max_tokens, double deadline,
               StreamingClient& client, TaskResult& result, int64_t& model_ns,
               int64_t& slept_ns) {
    int retries_left = config_.max_retries;
    double backoff = config_.retry_backoff_s;
    Failure failure = Failure::kNone;
    while (true) {
      RequestRecord record;
      record.label = task.id + "#" + std::to_string(result.requests.size());
      record.max_tokens = max_tokens;
      ChatStreamReader reader(record);
      const TimePoint t0 = Clock::now();
      client.Add(MakeChatHttpRequest(config_.endpoint, body, config_.idle_timeout_s, deadline),
                 &reader);
      client.Run();
      model_ns += NanosBetween(t0, Clock::now());
      failure = Classify(record);
      result.requests.push_back(std::move(record));
      if (failure != Failure::kRetryable) break;
      if (stopping_.load()) {
        failure = Failure::kCancelled;
        break;
      }
      const RequestRecord& last = result.requests.back();
      const std::string what = std::string(OutcomeName(last.outcome)) +
                               (last.error_message.empty() ? "" : ": " + last.error_message);
      if (last.outcome == RequestOutcome::kConnectFailed ||
          !EndpointAnswers(config_.endpoint, std::min(3.0, config_.connect_timeout_s))) {
        // The endpoint is away: wait for it; the wait does not use up the task's retries.
        if (!WaitForEndpoint(slept_ns)) {
          failure = Failure::kCancelled;
          break;
        }
      } else if (retries_left-- > 0) {
        store_.AddEvent(run_id_, "retry", "task '" + task.id + "': " + what + "; retrying in " +
                                              Seconds(backoff));
        if (!Sleep(backoff, slept_ns)) {
          failure = Failure::kCancelled;
          break;
        }
        backoff *= 2;
      } else {
        failure = Failure::kFatal;
        break;
      }
      ++result.attempts;
    }
    return failure;
  }

  void Commit(TaskResult& result, TimePoint t_start, int64_t model_ns, int64_t slept_ns) {
    result.wall_s = NanosToSeconds(NanosBetween(t_start, Clock::now()));
    result.finished_at_ns = WallNowNs();
    const TimePoint t0 = Clock::now();
    store_.CommitTask(run_id_, result);
    const TimePoint t1 = Clock::now();
    {
      std::lock_guard lock(stats_mutex_);
      commit_ms_.push_back(NanosToMs(NanosBetween(t0, t1)));
    }
    own_ns_ += NanosBetween(t_start, t1) - model_ns - slept_ns;
    progress_.TaskDone(result);
  }

  const SuiteRunConfig& config_;
  const LoadedSuite& loaded_;
  ResultStore& store_;
  const std::string run_id_;
  const std::vector<const Task*> todo_;
  const ServerInfo& server_;
  const std::string model_;
  const Sandbox& sandbox_;
  Progress& progress_;
  std::vector<std::unique_ptr<StreamingClient>> clients_;

  std::atomic<size_t> next_{0};
  std::atomic<int> active_workers_{0};
  std::atomic<bool> stopping_{false};
  std::atomic<bool> store_failed_{false};
  std::string store_error_;  // guarded by stats_mutex_
  std::atomic<bool> cancelled_{false};
  std::atomic<bool> endpoint_gone_{false};
  std::atomic<int64_t> env_errors_{0};
  std::atomic<int64_t> own_ns_{0};
  std::atomic<int64_t> tools_ns_{0};  // agent tools' share of own_ns_
  int64_t wall_ns_ = 0;

  std::mutex wait_mutex_;
  std::condition_variable wake_;
  std::mutex pause_mutex_;
  bool paused_ = false;
  TimePoint pause_start_{};
  mutable std::mutex stats_mutex_;
  std::vector<double> commit_ms_;
};

// "score 71.3 (95% CI 60.2-82.4), 17/24 passed; 26 tasks: 24 scored, 2 skipped, 0 env errors"
std::string SummaryLine(const RunScores& s) {
  char text[256];
  if (s.has_score) {
    std::snprintf(text, sizeof text, "score %.1f (95%% CI %.1f-%.1f), %lld/%lld passed; ",
                  s.overall, s.overall_ci95.low, s.overall_ci95.high,
                  static_cast<long long>(s.passed), static_cast<long long>(s.scored_tasks));
  } else {
    std::snprintf(text, sizeof text, "no score (nothing was graded); ");
  }
  const Coverage& c = s.coverage;
  return text + std::to_string(c.planned) + " tasks: " + std::to_string(c.scored) + " scored, " +
         std::to_string(c.skipped) + " skipped, " + std::to_string(c.env_errors) + " env errors";
}

std::string ResumeCommand(const SuiteRunConfig& c, const std::string& run_id) {
  std::string command = "evalrun suite " + c.suite_spec + " --endpoint " + c.endpoint +
                        " --db " + c.db + " --resume " + run_id;
  if (!c.resolve.suite_repo.empty()) command += " --suite-repo " + c.resolve.suite_repo;
  return command;
}

}  // namespace

std::vector<const Task*> SelectTasks(const Suite& suite, const SuiteRunConfig& config) {
  std::map<std::string, std::vector<std::string>> filters;
  for (const auto& filter : config.filters) {
    size_t begin = 0;
    while (begin <= filter.size()) {
      const size_t comma = std::min(filter.find(',', begin), filter.size());
      const std::string part = filter.substr(begin, comma - begin);
      begin = comma + 1;
      if (part.empty()) continue;
      const size_t eq = part.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == part.size()) {
        throw Error("--filter '" + filter + "': '" + part +
                    "' is not KEY=VALUE (keys: dimension, id, difficulty, tag)");
      }
      const std::string key = part.substr(0, eq);
      if (std::find(kFilterKeys.begin(), kFilterKeys.end(), key) == kFilterKeys.end()) {
        const std::string hint = ClosestMatch(key, kFilterKeys);
        throw Error("--filter '" + filter + "': unknown key '" + key + "'" +
                    (hint.empty() ? "" : ", did you mean '" + hint + "'?") +
                    " (keys: dimension, id, difficulty, tag)");
      }
      filters[key].push_back(part.substr(eq + 1));
    }
  }
  auto matches = [&](const Task& task) {
    for (const auto& [key, values] : filters) {
      bool any = false;
      for (const auto& value : values) {
        if (key == "dimension") any = any || task.dimension == value;
        if (key == "difficulty") any = any || task.difficulty == value;
        if (key == "id") any = any || fnmatch(value.c_str(), task.id.c_str(), 0) == 0;
        if (key == "tag") {
          any = any || std::find(task.tags.begin(), task.tags.end(), value) != task.tags.end();
        }
      }
      if (!any) return false;
    }
    return true;
  };
  std::vector<const Task*> selected;
  for (const Task& task : suite.tasks) {
    if (matches(task)) selected.push_back(&task);
  }
  if (config.quick) {
    // A seeded, stratified sample: in each dimension, the N runnable tasks whose
    // SHA-256(suite hash, seed, task hash) sort first. The same suite and seed give the same ids.
    const std::string suite_hash = SuiteHash(suite);
    std::map<std::string, std::vector<std::pair<std::string, const Task*>>> by_dimension;
    for (const Task* task : selected) {
      if (!task->skip_reason.empty()) continue;
      const std::string key =
          Sha256Hex(suite_hash + ":" + std::to_string(config.seed) + ":" + task->hash);
      by_dimension[task->dimension].emplace_back(key, task);
    }
    std::set<const Task*> chosen;
    for (auto& [dimension, tasks] : by_dimension) {
      std::sort(tasks.begin(), tasks.end());
      for (size_t i = 0; i < tasks.size() && static_cast<int64_t>(i) < *config.quick; ++i) {
        chosen.insert(tasks[i].second);
      }
    }
    std::vector<const Task*> sample;
    for (const Task* task : selected) {
      if (chosen.count(task)) sample.push_back(task);
    }
    selected = std::move(sample);
  }
  if (config.limit >= 0 && static_cast<int64_t>(selected.size()) > config.limit) {
    selected.resize(static_cast<size_t>(config.limit));
  }
  return selected;
}

TaskResult RunSingleTask(const Task& task, const SuiteRunConfig& config, const ServerInfo& server,
                         const std::string& model, const GradeContext& context) {
  TaskResult result;
  result.task_id = task.id;
  result.task_hash = task.hash;
  result.dimension = task.dimension;
  result.difficulty = task.difficulty;
  result.weight = DifficultyWeight(task.difficulty) * task.weight;
  const TimePoint t_start = Clock::now();
  const ChatRequest chat = TaskChat(task, config, model);
  RequestRecord record;
  record.label = task.id + "#spot";
  record.max_tokens = chat.max_tokens;
  {
    ChatStreamReader reader(record);
    StreamingClient client(1);
    client.Add(MakeChatHttpRequest(config.endpoint, BuildChatBody(chat, server),
                                   config.idle_timeout_s, RequestDeadline(-1, chat.max_tokens)),
               &reader);
    client.Run();
  }
  result.output = record.content;
  result.reasoning = record.reasoning;
  result.finish_reason = record.finish_reason;
  const Failure failure = Classify(record);
  if (failure == Failure::kNone) {
    result.grade = GradeOutput(task, Output{record.content, record.reasoning, record.finish_reason},
                               context);
  } else {
    result.grade.grader = task.grader.value("type", "");
    result.grade.grader_version = task.grader_version;
    result.grade.status =
        failure == Failure::kTimeout ? GradeStatus::kTimeout : GradeStatus::kEnvError;
    result.grade.reason = std::string("the request ended ") + OutcomeName(record.outcome) +
                          (record.error_message.empty() ? "" : ": " + record.error_message);
  }
  result.requests.push_back(std::move(record));
  result.wall_s = NanosToSeconds(NanosBetween(t_start, Clock::now()));
  return result;
}

double RequestDeadline(int64_t prompt_tokens, int64_t max_tokens) {
  const double prompt = static_cast<double>(std::max<int64_t>(0, prompt_tokens));
  const double tokens = static_cast<double>(max_tokens > 0 ? max_tokens : 32768);
  return 120.0 + prompt / 50.0 + tokens;
}

int RunSuite(const SuiteRunConfig& config, const std::atomic<bool>* stop, std::ostream& log) {
  if (config.concurrency < 1) throw Error("--concurrency must be at least 1");
  if (config.quick && *config.quick < 1) throw Error("--quick must be at least 1 task per dimension");
  const LoadedSuite loaded = LoadSuite(config.suite_spec, config.resolve);
  const Suite& suite = loaded.suite;

  ResultStore store(config.db);
  ServerInfo server = DetectServer(config.endpoint, Fetch, config.server_kind);
  if (!EndpointAnswers(config.endpoint, config.connect_timeout_s)) {
    throw Error("cannot reach the endpoint " + config.endpoint +
                " (is the server running? evalrun mock-server starts a stand-in)");
  }
  const std::string model = config.model.empty() ? server.model : config.model;
  const json settings = SettingsJson(config, suite, model);

  std::map<std::string, const Task*> by_id;
  for (const Task& task : suite.tasks) by_id[task.id] = &task;

  std::string run_id;
  std::vector<const Task*> plan;
  if (config.resume) {
    run_id = *config.resume;
    if (run_id.empty()) {
      for (const RunInfo& run : store.ListRuns()) {
        if (run.kind == "suite" && run.status != kRunFinished) {
          run_id = run.id;
          break;
        }
      }
      if (run_id.empty()) throw Error(config.db + ": no unfinished suite run to resume");
    }
    const std::optional<RunInfo> run = store.FindRun(run_id);
    if (!run) throw Error(config.db + ": no run " + run_id + " (evalrun runs lists them)");
    if (run->kind != "suite") throw Error("run " + run_id + " is a " + run->kind + " run");
    const std::string difference = SettingsDifference(settings, run->settings);
    if (!difference.empty()) {
      throw Error("--resume " + run_id + ": settings differ from the run's: " + difference);
    }
    for (const PlannedTask& planned : store.Plan(run_id)) {
      const auto it = by_id.find(planned.task_id);
      if (it == by_id.end()) {
        throw Error("--resume " + run_id + ": task '" + planned.task_id +
                    "' of the run is not in the suite any more");
      }
      if (it->second->hash != planned.task_hash) {
        throw Error("--resume " + run_id + ": task '" + planned.task_id +
                    "' changed since the run started (hash " + planned.task_hash.substr(0, 16) +
                    ", now " + it->second->ShortHash() + ")");
      }
      plan.push_back(it->second);
    }
    store.LockRun(run_id);
    store.SetStatus(run_id, kRunRunning);
    store.AddEvent(run_id, "resume", "resumed: " + std::to_string(store.FinishedCount(run_id)) +
                                         " of " + std::to_string(plan.size()) + " tasks done");
  } else {
    plan = SelectTasks(suite, config);
    if (plan.empty()) throw Error("no task matches the selection (--filter/--limit/--quick)");
    RunInfo info;
    info.id = ResultStore::NewRunId();
    info.kind = "suite";
    info.evalrun_version = kVersion;
    info.suite_name = suite.name;
    info.suite_spec = config.suite_spec;
    info.suite_format = suite.format;
    info.suite_repo = suite.repo;
    info.suite_path = suite.path;
    info.suite_commit = suite.commit;
    info.suite_tree = suite.tree;
    info.dimension_weights = suite.dimension_weights;
    info.endpoint = config.endpoint;
    info.model = model;
    info.server = ServerInfoToJson(server);
    info.settings = settings;
    info.labels = config.labels;
    if (config.capture_environment) info.environment = CaptureEnvironment();
    std::vector<PlannedTask> planned;
    for (const Task* task : plan) planned.push_back({task->id, task->hash});
    store.LockRun(info.id);
    store.CreateRun(info, planned);
    run_id = info.id;
  }

  const std::set<std::string> finished = store.FinishedTaskIds(run_id);
  std::vector<const Task*> todo;
  for (const Task* task : plan) {
    if (!finished.count(task->id)) todo.push_back(task);
  }
  if (!config.quiet) {
    log << "evalrun: run " << run_id << ": " << suite.name << " ("
        << (suite.pinned() ? suite.commit.substr(0, 12) : "unpinned") << "), " << plan.size()
        << " tasks, " << todo.size() << " to do, concurrency " << config.concurrency << ", "
        << ServerKindName(server.kind) << (model.empty() ? "" : " " + TerminalText(model))
        << std::endl;
  }

  const std::unique_ptr<Sandbox> sandbox =
      config.unsafe_no_sandbox ? MakeUnsafeSandbox() : MakeBubblewrapSandbox();
  Progress progress(config, log, static_cast<int64_t>(plan.size()),
                    static_cast<int64_t>(finished.size()));
  Scheduler scheduler(config, loaded, store, run_id, todo, server, model, *sandbox, progress);
  scheduler.Run(stop);
  progress.Finish();
  if (const std::string error = scheduler.store_error(); !error.empty()) {
    throw Error(error + "\n  " + std::to_string(store.FinishedCount(run_id)) + " of " +
                    std::to_string(plan.size()) + " tasks are saved; resume with:\n  " +
                    ResumeCommand(config, run_id),
                ExitCode::kSomeFailed);
  }

  if (!todo.empty()) {
    const std::vector<double> commits = scheduler.CommitMs();
    if (!commits.empty()) {
      const Summary s = Summarize(commits);
      char line[300];
      const double tools = scheduler.ToolsTimeFraction();
      char tools_part[80] = "";
      if (tools > 0) {
        std::snprintf(tools_part, sizeof tools_part, ", of which agent tools %.2f%%", 100 * tools);
      }
      std::snprintf(line, sizeof line,
                    "client overhead: %.2f%% of worker time outside the model (scheduling, "
                    "grading, storing%s); task commit median %.3f ms, p99 %.3f ms",
                    100 * scheduler.OwnTimeFraction(), tools_part, s.median, s.p99);
      store.AddEvent(run_id, "stats", line);
      if (!config.quiet) log << "evalrun: " << line << std::endl;
    }
  }

  if (scheduler.interrupted() || scheduler.endpoint_gone()) {
    store.SetStatus(run_id, kRunInterrupted);
    store.AddEvent(run_id, "interrupt",
                   scheduler.endpoint_gone() ? "stopped: the endpoint went away" : "Ctrl-C");
    log << "evalrun: " << store.FinishedCount(run_id) << " of " << plan.size()
        << " tasks are saved; resume with:\n  " << ResumeCommand(config, run_id) << std::endl;
    return scheduler.endpoint_gone() ? static_cast<int>(ExitCode::kSomeFailed)
                                     : static_cast<int>(ExitCode::kInterrupted);
  }

  RunData data = store.LoadRun(run_id);
  if (!config.no_speed && data.speed.is_null()) {
    if (!config.quiet) log << "evalrun: tasks done; running the speed protocol (quick)" << std::endl;
    SpeedConfig speed;
    speed.endpoint = config.endpoint;
    speed.model = model;
    speed.preset = "quick";
    speed.server_kind = server.kind;
    speed.labels = config.labels;
    speed.capture_environment = false;
    if (config.thinking) speed.thinking = *config.thinking;
    const auto speed_log = [&](const std::string& line) {
      if (!config.quiet) log << "  " << line << std::endl;
    };
    try {
      SpeedResult result = RunSpeed(speed, speed_log, stop);
      result.environment = data.info.environment;
      if (stop && stop->load()) {
        store.SetStatus(run_id, kRunInterrupted);
        store.AddEvent(run_id, "interrupt", "Ctrl-C during the speed protocol");
        log << "evalrun: interrupted during the speed protocol; the tasks are saved; resume "
               "with:\n  "
            << ResumeCommand(config, run_id) << std::endl;
        return static_cast<int>(ExitCode::kInterrupted);
      }
      store.SaveSpeed(run_id, SpeedResultToJson(result));
      store.AddEvent(run_id, "speed", "speed protocol (quick): " +
                                          std::to_string(result.tests.size()) + " tests");
    } catch (const Error& e) {
      store.AddEvent(run_id, "speed", std::string("speed protocol failed: ") + e.what());
      log << "evalrun: speed protocol failed: " << e.what() << std::endl;
    }
  }
  store.SetStatus(run_id, kRunFinished);
  store.AddEvent(run_id, "finish", "all " + std::to_string(plan.size()) + " tasks done");

  data = store.LoadRun(run_id);
  const std::string out_dir =
      config.out_dir.empty() ? (fs::path("evalrun-reports") / run_id).string() : config.out_dir;
  WriteReportFiles(data, out_dir);
  const RunScores scores = ScoreRun(data);
  if (!config.quiet) {
    log << "evalrun: run " << run_id << " finished: " << SummaryLine(scores) << "\n"
        << "evalrun: report: " << (fs::path(out_dir) / "report.md").string() << ", "
        << (fs::path(out_dir) / "report.html").string() << ", "
        << (fs::path(out_dir) / "card.svg").string() << std::endl;
  }
  int64_t env_errors = 0;
  for (const TaskResult& r : data.tasks) env_errors += r.grade.status == GradeStatus::kEnvError;
  return env_errors > 0 ? static_cast<int>(ExitCode::kSomeFailed) : static_cast<int>(ExitCode::kOk);
}

}  // namespace evalrun
