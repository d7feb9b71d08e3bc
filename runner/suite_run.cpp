// Why one file (1.7k lines): the run's shared state (the cursor, the tasks handed back between
// endpoints, each endpoint's pause, the retry budget, the store's lock order) is one state
// machine; its pieces that stand alone are already outside (runner/request_failure classifies
// failures, runner/prompt_builder builds requests, plugins/server_identity compares endpoints,
// results/store records).
//
// The suite run. Threads: one worker per concurrency slot of each endpoint, each with its own
// StreamingClient (so a worker grading or storing never delays another's timestamps), and the
// caller's thread, which watches for Ctrl-C and draws progress. Workers take tasks from one
// shared cursor; the store serialises their commits.
#include "runner/suite_run.h"

#include <fnmatch.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
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
#include "plugins/sandbox.h"
#include "plugins/env_probe.h"
#include "plugins/http_client.h"
#include "plugins/server_identity.h"
#include "results/run_report.h"
#include "results/speed_report.h"
#include "results/store.h"
#include "runner/agent/agent_task.h"
#include "runner/judge.h"
#include "runner/request_failure.h"
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

// "5,120"
std::string WithCommas(int64_t n) {
  const std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out = n < 0 ? "-" : "";
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// Any HTTP answer at all from /v1/models (a server that is loading answers too).
bool EndpointAnswers(const std::string& endpoint, double timeout_s) {
  HttpRequest ping;
  ping.method = "GET";
  ping.url = endpoint + "/v1/models";
  ping.connect_timeout_s = timeout_s;
  ping.total_timeout_s = timeout_s + 2;
  return Fetch(ping).status != 0;
}

// Where readiness is asked: the server's own /health where it has one (llama.cpp answers 503
// there while it loads a model, vLLM and SGLang while they start), else /v1/models.
std::string ReadinessPath(ServerKind kind) {
  return kind == ServerKind::kGeneric ? "/v1/models" : "/health";
}

// The endpoint is ready for requests: its readiness path answers 2xx.
bool EndpointReady(const std::string& endpoint, ServerKind kind, double timeout_s) {
  HttpRequest ping;
  ping.method = "GET";
  ping.url = endpoint + ReadinessPath(kind);
  ping.connect_timeout_s = timeout_s;
  ping.total_timeout_s = timeout_s + 2;
  HttpResponse r = Fetch(ping);
  if ((r.status == 404 || r.status == 405) && kind != ServerKind::kGeneric) {
    ping.url = endpoint + "/v1/models";  // no /health after all
    r = Fetch(ping);
  }
  return r.status >= 200 && r.status < 300;
}

// One line for a failed request: "http_error: HTTP 503: Loading model".
std::string FailureText(const RequestRecord& r) {
  return std::string(OutcomeName(r.outcome)) +
         (r.error_message.empty() ? "" : ": " + r.error_message);
}

// The text of a chat's messages, joined: what /tokenize counts as a lower bound of the prompt
// (the chat template's own tokens come on top).
std::string MessagesText(const json& messages) {
  std::string text;
  for (const json& m : messages) {
    if (!m.is_object() || !m.contains("content")) continue;
    const json& c = m["content"];
    if (c.is_string()) {
      text += c.get<std::string>() + "\n";
    } else if (c.is_array()) {
      for (const json& part : c) {
        if (part.is_object() && part.contains("text") && part["text"].is_string()) {
          text += part["text"].get<std::string>() + "\n";
        }
      }
    }
  }
  return text;
}

// A streamed-only figure is never invented for a non-streamed answer: it arrived all at once,
// so its first-token times are unknown (e2e, token counts and the server's timings stay).
void MarkNonStreamed(RequestRecord& r) {
  r.first_ns = -1;
  r.first_content_ns = -1;
  r.first_tool_call_ns = -1;
  r.label += "+nostream";
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

json SettingsJson(const SuiteRunConfig& c, const Suite& suite, const std::string& model,
                  const std::optional<JudgeEndpoint>& judge) {
  // Several endpoints: their concurrency in endpoint order (a resume gives as many).
  json concurrency = c.concurrency;
  if (!c.more_endpoints.empty()) {
    concurrency = json::array({c.concurrency});
    for (const SuiteRunConfig::MoreEndpoint& more : c.more_endpoints) {
      concurrency.push_back(more.concurrency);
    }
  }
  json settings = {{"suite", c.suite_spec},
          {"suite_commit", suite.commit},
          {"suite_tree", suite.tree},
          {"filter", c.filters},
          {"limit", c.limit},
          {"quick", c.quick ? json(*c.quick) : json()},
          {"seed", c.seed},
          {"concurrency", concurrency},
          {"max_tokens", c.max_tokens},
          {"thinking", c.thinking ? json(ThinkingName(*c.thinking)) : json("task")},
          {"model", model},
          {"unsafe_no_sandbox", c.unsafe_no_sandbox},
          {"tool_format", ToolCallFormatName(c.tool_format)}};
  // Only runs with a judge carry the key, so runs without one resume as before.
  if (judge) settings["judge"] = JudgeSettings(*judge);
  // Likewise only runs that let tests reach the network carry this one.
  if (c.sandbox_network) settings["sandbox_network"] = true;
  if (!suite.pinned()) {
    // Where an unpinned suite was read from, made absolute: export and verify run from another
    // folder find it there (the spelling in "suite" is relative to the run's folder).
    std::error_code error;
    const fs::path spec = ParseSuiteSpec(c.suite_spec).name_or_path;
    const fs::path dir = fs::weakly_canonical(fs::absolute(spec, error), error);
    if (!error) settings["suite_dir"] = dir.string();
  }
  return settings;
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

// One endpoint of the run as connected at the start: where, what it is, what model name it is
// sent, how many tasks it takes at once.
struct RunEndpoint {
  std::string url;
  ServerInfo server;
  std::string model;
  int concurrency = 1;
};

// Shared state of one run's workers. One worker per (endpoint, slot); workers take tasks from
// one shared plan, so a faster endpoint takes more of them, and an agent episode, run by one
// worker, stays on one endpoint (its prompt cache). With one endpoint an endpoint that is away
// pauses the whole run and each request waits to be sent again; with several, it pauses only its
// own workers: their tasks go back to the plan, with the requests sent so far, and the other
// endpoints take them (docs/serving.md, "Several endpoints").
class Scheduler {
 public:
  Scheduler(const SuiteRunConfig& config, const LoadedSuite& loaded, ResultStore& store,
            std::string run_id, std::vector<const Task*> todo,
            const std::vector<RunEndpoint>& endpoints, const Sandbox& sandbox,
            Progress& progress, const std::optional<JudgeEndpoint>& judge)
      : config_(config), loaded_(loaded), store_(store), run_id_(std::move(run_id)),
        todo_(std::move(todo)), endpoints_(endpoints), sandbox_(sandbox), progress_(progress),
        judge_(judge) {
    for (size_t e = 0; e < endpoints.size(); ++e) {
      away_.push_back(std::make_unique<Away>());
      for (int i = 0; i < endpoints[e].concurrency; ++i) {
        workers_.push_back(Worker{e, std::make_unique<StreamingClient>(4), false});
      }
    }
  }

  // Runs until every task is done, the run is stopped, or every endpoint stayed away too long.
  void Run(const std::atomic<bool>* stop) {
    const TimePoint t_start = Clock::now();
    std::vector<std::thread> threads;
    active_workers_.store(static_cast<int>(workers_.size()));  // before any worker can finish
    for (size_t i = 0; i < workers_.size(); ++i) {
      threads.emplace_back([this, i] { Work(workers_[i]); });
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
        for (auto& worker : workers_) worker.client->CancelAll();
      }
      std::unique_lock lock(wait_mutex_);
      wake_.wait_for(lock, std::chrono::milliseconds(50));
    }
    for (auto& t : threads) t.join();
    wall_ns_ = NanosBetween(t_start, Clock::now());
  }

  bool interrupted() const { return stopping_.load() && !store_failed_.load(); }
  // The first error a worker met (a store write that failed), "" when none did.
  std::string store_error() const {
    std::lock_guard lock(stats_mutex_);
    return store_error_;
  }
  // Every endpoint stayed away past --wait-endpoint (with one endpoint: it did).
  bool endpoint_gone() const { return all_gone_.load(); }
  int64_t env_errors() const { return env_errors_.load(); }
  // evalrun's own share of the workers' time: not waiting for the model, not sleeping.
  double OwnTimeFraction() const {
    const double total = static_cast<double>(wall_ns_) * static_cast<double>(workers_.size());
    return total > 0 ? static_cast<double>(own_ns_.load()) / total : 0;
  }
  // The part of OwnTimeFraction spent running agent tasks' tools.
  double ToolsTimeFraction() const {
    const double total = static_cast<double>(wall_ns_) * static_cast<double>(workers_.size());
    return total > 0 ? static_cast<double>(tools_ns_.load()) / total : 0;
  }
  bool aborted() const { return aborted_.load(); }
  std::string abort_message() {
    std::lock_guard lock(early_mutex_);
    return early_message_;
  }
  bool refused_streamed_tools() const { return no_streamed_tools_.load(); }
  std::vector<double> CommitMs() const {
    std::lock_guard lock(stats_mutex_);
    return commit_ms_;
  }
  // Whether endpoint `e` stayed away past --wait-endpoint.
  bool gone(size_t e) const { return away_[e]->gone.load(); }

 private:
  struct Worker {
    size_t endpoint;                          // index into endpoints_
    std::unique_ptr<StreamingClient> client;  // this worker's alone: no shared timestamps
    bool hand_back;                           // its task goes back to the plan (its endpoint
                                              // went away; several endpoints only)
  };
  // An endpoint's pause (several workers share it).
  struct Away {
    std::mutex mutex;
    std::atomic<bool> paused{false};
    std::atomic<bool> gone{false};  // away past --wait-endpoint: its workers have left
    TimePoint since{};              // under mutex: the first unavailable answer of this pause
    TimePoint start{};              // under mutex: when the pause began
  };
  // A task a worker holds: from the plan, or handed back with the requests sent for it so far.
  struct Claim {
    const Task* task = nullptr;
    std::vector<RequestRecord> requests;
    int attempts = 0;
  };

  bool several() const { return endpoints_.size() > 1; }

  void Work(Worker& worker) {
    Away& away = *away_[worker.endpoint];
    while (!stopping_.load() && !all_gone_.load() && !aborted_.load()) {
      if (several() && away.paused.load()) {
        // This endpoint is away: its workers take nothing until it is back.
        int64_t slept_ns = 0;
        if (!WaitUntilBack(worker.endpoint, std::nullopt, slept_ns)) break;
        continue;
      }
      std::optional<Claim> claim = Take(away);
      if (!claim) break;
      if (!claim->task) continue;  // none now; another worker's may come back
      try {
        RunTask(*claim, worker);
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
        worker.hand_back = false;
        Release(std::nullopt);
        wake_.notify_all();
        break;
      }
      if (worker.hand_back) {
        worker.hand_back = false;
        Release(std::move(*claim));
      } else {
        Release(std::nullopt);
      }
    }
    --active_workers_;
    wake_.notify_all();
    queue_wake_.notify_all();
  }

  // The next task: one handed back first, else the plan's next. nullopt: nothing is left for
  // this worker (the plan is done and no task is held elsewhere, or the run stops); a Claim
  // without a task: nothing now, but a task held by another worker may come back (several
  // endpoints), so ask again.
  std::optional<Claim> Take(const Away& away) {
    std::unique_lock lock(queue_mutex_);
    if (!handed_back_.empty()) {
      Claim claim = std::move(handed_back_.front());
      handed_back_.pop_front();
      ++held_;
      return claim;
    }
    if (next_ < todo_.size()) {
      ++held_;
      return Claim{todo_[next_++], {}, 0};
    }
    if (!several() || held_ == 0) return std::nullopt;
    queue_wake_.wait_for(lock, std::chrono::milliseconds(100));
    if (stopping_.load() || all_gone_.load() || aborted_.load() || away.gone.load()) {
      return std::nullopt;
    }
    return Claim{};
  }

  // The worker is done with its task: committed or dropped (nullopt; an unfinished task starts
  // over on --resume), or handed back for another endpoint.
  void Release(std::optional<Claim> back) {
    {
      std::lock_guard lock(queue_mutex_);
      --held_;
      if (back) handed_back_.push_back(std::move(*back));
    }
    queue_wake_.notify_all();
  }

  // Sleeps up to `seconds`, waking early when the run stops (or `endpoint` is given up on).
  // Returns false when stopped.
  bool Sleep(double seconds, int64_t& slept_ns, std::optional<size_t> endpoint = std::nullopt) {
    const TimePoint t0 = Clock::now();
    const auto over = [this, endpoint] {
      return stopping_.load() || all_gone_.load() || (endpoint && away_[*endpoint]->gone.load());
    };
    std::unique_lock lock(wait_mutex_);
    wake_.wait_for(lock, std::chrono::duration<double>(seconds), over);
    slept_ns += NanosBetween(t0, Clock::now());
    return !over();
  }

  // Blocks while another worker holds the endpoint paused (it is away), so that no new request
  // is sent into an endpoint known to be away. False when the run stopped meanwhile.
  bool WaitWhilePaused(size_t endpoint, int64_t& slept_ns) {
    const Away& away = *away_[endpoint];
    if (!away.paused.load()) return !stopping_.load() && !all_gone_.load();
    const TimePoint t0 = Clock::now();
    std::unique_lock lock(wait_mutex_);
    while (away.paused.load() && !stopping_.load() && !all_gone_.load()) {
      wake_.wait_for(lock, std::chrono::milliseconds(100));
    }
    slept_ns += NanosBetween(t0, Clock::now());
    return !stopping_.load() && !all_gone_.load();
  }

  // The endpoint is unavailable (`what` says how, since `since`): pauses its work (one worker
  // logs it). With one endpoint that is the whole run.
  void Pause(size_t endpoint, const std::string& what, bool refused, TimePoint since) {
    Away& away = *away_[endpoint];
    {
      std::lock_guard lock(away.mutex);
      if (away.paused.load()) return;
      away.paused.store(true);
      away.start = Clock::now();
      away.since = since;
    }
    // Logged after the lock: no lock is held across the store's or the terminal's I/O.
    const std::string message =
        "endpoint " + endpoints_[endpoint].url +
        (refused ? " is unreachable" : " is unavailable (" + what + ")") +
        (several() ? ": pausing its work, waiting up to " : ": pausing, waiting up to ") +
        Seconds(config_.wait_endpoint_s) + " for it to come back" +
        (several() ? "; the other endpoints take its tasks" : "");
    store_.AddEvent(run_id_, "pause", message);
    progress_.Say("evalrun: " + message);
  }

  // Probes the paused endpoint every --probe-interval until it is ready (2xx), and resumes its
  // work. The wait counts from `since` (default: the pause's first unavailable answer), so a
  // server whose /health is fine while its chat route keeps answering 503 still ends after
  // --wait-endpoint. False
  // when the endpoint did not come back in time (its workers leave; with no endpoint left the
  // run stops) or the run was stopped.
  bool WaitUntilBack(size_t endpoint, std::optional<TimePoint> since_given, int64_t& slept_ns) {
    Away& away = *away_[endpoint];
    const RunEndpoint& ep = endpoints_[endpoint];
    TimePoint since;
    if (since_given) {
      since = *since_given;
    } else {
      std::lock_guard lock(away.mutex);
      since = away.since;
    }
    while (away.paused.load()) {
      if (NanosToSeconds(NanosBetween(since, Clock::now())) >= config_.wait_endpoint_s) {
        GiveUp(endpoint);
        return false;
      }
      if (!Sleep(config_.probe_interval_s, slept_ns, endpoint)) return false;
      if (EndpointReady(ep.url, ep.server.kind, std::min(3.0, config_.connect_timeout_s))) break;
    }
    std::optional<double> paused_s;  // set by the worker that ends the pause
    {
      std::lock_guard lock(away.mutex);
      if (away.paused.load()) {
        away.paused.store(false);
        paused_s = NanosToSeconds(NanosBetween(away.start, Clock::now()));
      }
    }
    if (paused_s) {
      const std::string message =
          several() ? "endpoint " + ep.url + " is back after " + Seconds(*paused_s) +
                          ": resuming its work"
                    : "endpoint is back after " + Seconds(*paused_s) + ": resuming";
      store_.AddEvent(run_id_, "resume", message);
      progress_.Say("evalrun: " + message);
      wake_.notify_all();
    }
    return !stopping_.load() && !all_gone_.load();
  }

  // The endpoint stayed away past --wait-endpoint: its workers leave; the run stops when no
  // endpoint is left.
  void GiveUp(size_t endpoint) {
    Away& away = *away_[endpoint];
    if (away.gone.exchange(true)) return;
    bool all = true;
    for (const auto& a : away_) all = all && a->gone.load();
    const std::string within = " did not come back within " + Seconds(config_.wait_endpoint_s);
    const std::string message =
        !several() ? "endpoint" + within + ": stopping the run"
        : all      ? "endpoint " + endpoints_[endpoint].url + within +
                    ": no endpoint is left, stopping the run"
                   : "endpoint " + endpoints_[endpoint].url + within +
                    ": the other endpoints take its tasks";
    store_.AddEvent(run_id_, "pause", message);
    progress_.Say("evalrun: " + message);
    if (all) all_gone_.store(true);
    wake_.notify_all();
    queue_wake_.notify_all();
  }

  // One endpoint: the request waits for it (Pause, then WaitUntilBack), its wait counted from
  // its own first unavailable answer. False when it did not come back in time or the run was
  // stopped.
  bool WaitForEndpoint(size_t endpoint, const std::string& what, bool refused, TimePoint since,
                       int64_t& slept_ns) {
    Pause(endpoint, what, refused, since);
    return WaitUntilBack(endpoint, since, slept_ns);
  }

  // The early stop (docs/serving.md): when the first kEarlyStopTasks tasks this invocation
  // finished all failed with one and the same permanent error, the run stops with the cause and
  // its fix instead of marking every task.
  void NoteTaskEnd(const TaskResult& result, FailureKind failure) {
    if (result.grade.status == GradeStatus::kSkipped) return;
    std::lock_guard lock(early_mutex_);
    if (early_decided_) return;
    const RequestRecord* last = result.requests.empty() ? nullptr : &result.requests.back();
    if (failure != FailureKind::kPermanent || last == nullptr) {
      early_decided_ = true;  // something worked (or failed otherwise): no early stop
      return;
    }
    const std::string text = "HTTP " + std::to_string(last->http_status) + " " +
                             last->error_message;
    if (early_count_ > 0 && text != early_text_) {
      early_decided_ = true;
      return;
    }
    early_text_ = text;
    // A run of fewer tasks (the shipped agent suite has 2) stops when all of them failed so:
    // the same message then names the cause and the fix instead of only counting env errors.
    const int needed = static_cast<int>(
        std::min<size_t>(static_cast<size_t>(kEarlyStopTasks), std::max<size_t>(1, todo_.size())));
    if (++early_count_ < needed) return;
    early_decided_ = true;
    std::string fix = PermanentErrorFix(last->error_message, last->http_status);
    const std::string which =
        needed == kEarlyStopTasks ? "its first " + std::to_string(kEarlyStopTasks) + " tasks all"
        : needed == 1             ? "its only task"
                                  : "all " + std::to_string(needed) + " of its tasks";
    early_message_ = "stopping the run: " + which +
                     " failed with the same server error, which will not change with "
                     "time: " + FailureText(*last) + ". " +
                     (fix.empty() ? "Check the server's settings and the request evalrun sends"
                                  : "Fix: " + fix) +
                     "; then start a new run, or --resume this one (its failed tasks are run "
                     "again)";
    aborted_.store(true);
    wake_.notify_all();
  }

  // Runs the claimed task on the worker's endpoint and commits it; leaves it uncommitted when the
  // run stops (it starts over on --resume) or the endpoint went away (worker.hand_back: it goes
  // back to the plan with its requests so far, which the commit keeps before the later ones).
  void RunTask(Claim& claim, Worker& worker) {
    const Task& task = *claim.task;
    const RunEndpoint& ep = endpoints_[worker.endpoint];
    const TimePoint t_start = Clock::now();
    TaskResult result;
    result.requests = std::move(claim.requests);
    result.attempts = claim.attempts;
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

    const ChatRequest chat = TaskChat(task, config_, ep.model);
    if (IsAgentTask(task)) {
      RunAgent(task, chat, worker, result, t_start);
      HandBackIfAway(claim, worker, result);
      return;
    }
    // The context check before: a prompt that cannot fit is not sent (the server would cut it
    // or refuse it); its numbers are the grade's reason. The count is the messages' bare text
    // through the server's tokenizer: a lower bound (the chat template adds its own tokens).
    ChatRequest sent = chat;
    int64_t prompt_tokens = -1;
    if (ep.server.has_tokenize) {
      prompt_tokens = CountTokens(ep.server, MessagesText(chat.messages), Fetch).value_or(-1);
    }
    if (prompt_tokens > 0 && ep.server.context > 0) {
      const int64_t room = ep.server.context - prompt_tokens;
      const std::string per_slot =
          ep.server.kind == ServerKind::kLlamaCpp ? " per slot (llama-server --ctx-size)"
                                                : "";
      if (room > 0 && chat.max_tokens > room && room * 2 >= chat.max_tokens) {
        // Most of the answer's room is there: send it with max_tokens lowered, and say so.
        sent.max_tokens = room;
        store_.AddEvent(run_id_, "context",
                        "task '" + task.id + "': max_tokens lowered from " +
                            WithCommas(chat.max_tokens) + " to " + WithCommas(room) +
                            " to fit the server's context of " + WithCommas(ep.server.context) +
                            " tokens" + per_slot + " (the prompt is at least " +
                            WithCommas(prompt_tokens) + " tokens)");
      } else if (room <= 0 || (chat.max_tokens > 0 && chat.max_tokens > room)) {
        result.grade.status = GradeStatus::kSkipped;
        result.grade.grader = task.grader.value("type", "");
        result.grade.grader_version = task.grader_version;
        result.grade.reason =
            "does not fit the server's context: the prompt is at least " +
            WithCommas(prompt_tokens) + " tokens" +
            (chat.max_tokens > 0 ? " plus max_tokens " + WithCommas(chat.max_tokens)
                                 : std::string()) +
            ", the context is " + WithCommas(ep.server.context) + " tokens" + per_slot;
        Commit(result, t_start, 0, 0);
        return;
      }
    }
    const json body = BuildChatBody(sent, ep.server);
    const double deadline = RequestDeadline(prompt_tokens, sent.max_tokens);
    int64_t model_ns = 0;
    int64_t slept_ns = 0;
    int64_t judge_ns = 0;  // waiting for the judge: neither the model's time nor evalrun's own
    const FailureKind failure = Send(task, body, sent.max_tokens, prompt_tokens, deadline, worker,
                                     result, model_ns, slept_ns);
    if (failure == FailureKind::kCancelled) {
      // Not committed: an unfinished task starts over on --resume, or on another endpoint.
      own_ns_ += NanosBetween(t_start, Clock::now()) - model_ns - slept_ns;
      HandBackIfAway(claim, worker, result);
      return;
    }

    const RequestRecord& last = result.requests.back();
    result.output = last.content;
    result.reasoning = last.reasoning;
    result.finish_reason = last.finish_reason;
    // The context check after: fewer prompt tokens reported than the bare text has means the
    // server cut the prompt (llama.cpp before b5000 does so silently); the answer is to
    // something else than the task, so it is not graded.
    const bool cut = failure == FailureKind::kNone && prompt_tokens > 0 &&
                     last.usage.prompt_tokens >= 0 && last.usage.prompt_tokens < prompt_tokens;
    // And an answer the server ended because prompt plus answer filled its context (llama.cpp
    // 0.7 stops there with finish_reason "length", whatever max_tokens said) was cut by the
    // server, not by the task's budget: the chat template's tokens are not in the count before,
    // so a prompt that seemed to fit, or max_tokens lowered to the room, can still run out.
    const bool context_full =
        failure == FailureKind::kNone && !cut && ep.server.context > 0 &&
        last.finish_reason == "length" && last.usage.prompt_tokens >= 0 &&
        last.usage.completion_tokens >= 0 &&
        last.usage.prompt_tokens + last.usage.completion_tokens >= ep.server.context &&
        (sent.max_tokens <= 0 || last.usage.completion_tokens < sent.max_tokens);
    if (failure == FailureKind::kNone && !cut && !context_full) {
      const Output output{last.content, last.reasoning, last.finish_reason};
      GradeContext context = GradeContextFor();
      if (AskJudgeFor(task, output, last, result, judge_ns)) {
        context.judge = &result.transcript["judge"];
      }
      result.grade = GradeOutput(task, output, context);
    } else if (cut) {
      result.grade.grader = task.grader.value("type", "");
      result.grade.grader_version = task.grader_version;
      result.grade.status = GradeStatus::kEnvError;
      result.grade.reason = "the server cut the prompt: " + WithCommas(last.usage.prompt_tokens) +
                            " of " + WithCommas(prompt_tokens) + " tokens" +
                            (ep.server.context > 0
                                 ? " (its context is " + WithCommas(ep.server.context) + " tokens)"
                                 : std::string());
      ++env_errors_;
    } else if (context_full) {
      result.grade.grader = task.grader.value("type", "");
      result.grade.grader_version = task.grader_version;
      result.grade.status = GradeStatus::kEnvError;
      result.grade.reason =
          "the server's context ran out: the prompt took " +
          WithCommas(last.usage.prompt_tokens) + " tokens and the answer " +
          WithCommas(last.usage.completion_tokens) +
          (sent.max_tokens > 0 ? " of max_tokens " + WithCommas(sent.max_tokens)
                               : std::string()) +
          ", the context is " + WithCommas(ep.server.context) + " tokens" +
          (ep.server.kind == ServerKind::kLlamaCpp ? " per slot (llama-server --ctx-size)"
                                                 : std::string());
      ++env_errors_;
    } else {
      result.grade.grader = task.grader.value("type", "");
      result.grade.grader_version = task.grader_version;
      const std::string what = FailureText(last);
      if (failure == FailureKind::kTimeout) {
        result.grade.status = GradeStatus::kTimeout;
        result.grade.reason = "the request timed out (" + what + ")";
      } else {
        result.grade.status = GradeStatus::kEnvError;
        result.grade.reason = (failure == FailureKind::kPermanent
                                   ? "the server refused the request: "
                                   : "the endpoint failed: ") + what;
        ++env_errors_;
      }
    }
    Commit(result, t_start, model_ns, slept_ns + judge_ns);
    NoteTaskEnd(result, cut || context_full ? FailureKind::kNone : failure);
  }

  // Judged tasks (runner/judge.h): asks the run's judge about the answer and keeps the exchange
  // in the task's transcript ({"judge": record}). False when the task's grader needs no judge,
  // the run has none, or the answer is none the grader would score (empty, reasoning only).
  bool AskJudgeFor(const Task& task, const Output& output, const RequestRecord& last,
                   TaskResult& result, int64_t& judge_ns) {
    if (!judge_) return false;
    const Grader* grader = GraderRegistry::Builtin().Find(task.grader.value("type", ""));
    if (grader == nullptr || grader->NeedsJudge().empty()) return false;
    const Answer answer = ExtractAnswer(output);
    if (answer.unclosed_think || answer.empty()) return false;
    const TimePoint t0 = Clock::now();
    const CandidateInfo candidate{last.finish_reason, last.usage.completion_tokens,
                                  last.max_tokens};
    json record = AskJudge(*judge_, *grader, task, answer, candidate);
    judge_ns += NanosBetween(t0, Clock::now());
    if (record.is_null()) return false;
    result.transcript = {{"judge", std::move(record)}};
    return true;
  }

  // One agent episode (runner/agent/agent_task.h): every turn goes through Send, so turns get the
  // same retries and pauses as single requests and are all recorded in result.requests. An
  // interrupted episode is not committed (it starts over on --resume); a turn that failed for
  // environment reasons makes the task env_error, as a failed single request does.
  void RunAgent(const Task& task, const ChatRequest& chat, Worker& worker, TaskResult& result,
                TimePoint t_start) {
    const RunEndpoint& ep = endpoints_[worker.endpoint];
    int64_t model_ns = 0;
    int64_t slept_ns = 0;
    FailureKind stopped = FailureKind::kNone;
    const AgentSend send = [&](const ChatRequest& request, double remaining_s) {
      if (stopped != FailureKind::kNone) {
        RequestRecord none;
        none.outcome = RequestOutcome::kCancelled;
        return none;
      }
      const json body = BuildChatBody(request, ep.server);
      const double deadline =
          std::max(1.0, std::min(remaining_s, RequestDeadline(-1, request.max_tokens)));
      const size_t sent_before = result.requests.size();
      const FailureKind failure = Send(task, body, request.max_tokens, -1, deadline, worker,
                                       result, model_ns, slept_ns);
      if (failure == FailureKind::kCancelled || failure == FailureKind::kPermanent ||
          failure == FailureKind::kTransient || failure == FailureKind::kUnavailable) {
        stopped = failure;
      }
      if (result.requests.size() == sent_before) {  // stopped (or handed back) before sending
        RequestRecord none;
        none.outcome = RequestOutcome::kCancelled;
        return none;
      }
      return result.requests.back();
    };
    AgentTaskOptions options;
    options.text_format = config_.tool_format;
    options.abandoned = [&stopped] { return stopped != FailureKind::kNone; };
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
    if (stopped == FailureKind::kCancelled) {
      own_ns_ += NanosBetween(t_start, Clock::now()) - model_ns - slept_ns;
      return;
    }
    result.output = std::move(outcome.output);
    result.reasoning = std::move(outcome.reasoning);
    result.finish_reason = std::move(outcome.finish_reason);
    result.transcript = std::move(outcome.transcript);
    result.grade = std::move(outcome.grade);
    if (stopped != FailureKind::kNone) {
      const RequestRecord& last = result.requests.back();
      result.grade.status = GradeStatus::kEnvError;
      result.grade.score = 0;
      result.grade.passed = false;
      result.grade.reason = (stopped == FailureKind::kPermanent
                                 ? "the server refused the request: "
                                 : "the endpoint failed: ") + FailureText(last);
      ++env_errors_;
    }
    Commit(result, t_start, model_ns, slept_ns);
    NoteTaskEnd(result, stopped);
  }

  // A task left because its endpoint went away goes back with the requests sent for it, so that
  // its record keeps every attempt (several endpoints only; Work hands the claim back).
  void HandBackIfAway(Claim& claim, const Worker& worker, TaskResult& result) {
    if (!worker.hand_back) return;
    claim.requests = std::move(result.requests);
    claim.attempts = result.attempts;
  }

  GradeContext GradeContextFor() const {
    GradeContext context;
    context.read_file = [this](const std::string& path) { return loaded_.ReadTaskFile(path); };
    context.sandbox = &sandbox_;
    context.unsafe_no_sandbox = config_.unsafe_no_sandbox;
    context.network = config_.sandbox_network;
    return context;
  }

  // Sends one request for `task` to the worker's endpoint (docs/serving.md): waits while the run
  // is paused; with one endpoint, an unavailable endpoint pauses the whole run and the request
  // is sent again when it is back (no retry used up); with several, it pauses that endpoint's
  // work and the task is handed back (worker.hand_back, kCancelled) for another endpoint. A
  // transient failure is retried with backoff, --max-retries times; a permanent one ends at
  // once. A server that refuses streamed tool calls is noted once for the run, and this and
  // every later request with tools goes non-streamed. Every attempt is appended to
  // result.requests. Returns how the last attempt ended (kCancelled when the run stopped
  // meanwhile or the task is handed back).
  FailureKind Send(const Task& task, json body, int64_t max_tokens, int64_t prompt_tokens,
                   double deadline, Worker& worker, TaskResult& result, int64_t& model_ns,
                   int64_t& slept_ns) {
    const RunEndpoint& ep = endpoints_[worker.endpoint];
    StreamingClient& client = *worker.client;
    int retries_left = config_.max_retries;
    double backoff = config_.retry_backoff_s;
    int idle_timeouts = 0;
    std::optional<TimePoint> unavailable_since;
    const bool has_tools = body.contains("tools");
    FailureKind failure = FailureKind::kNone;
    while (true) {
      if (several() && away_[worker.endpoint]->paused.load()) {
        worker.hand_back = true;  // not sent into an endpoint known to be away
        failure = FailureKind::kCancelled;
        break;
      }
      if (!WaitWhilePaused(worker.endpoint, slept_ns)) {
        failure = FailureKind::kCancelled;
        break;
      }
      const bool streamed = !(has_tools && no_streamed_tools_.load());
      if (!streamed) {
        body["stream"] = false;
        body.erase("stream_options");
      }
      RequestRecord record;
      record.label = task.id + "#" + std::to_string(result.requests.size());
      record.endpoint = ep.url;
      record.max_tokens = max_tokens;
      record.prompt_tokens_sent = prompt_tokens;
      ChatStreamReader reader(record);
      const TimePoint t0 = Clock::now();
      client.Add(MakeChatHttpRequest(ep.url, body, config_.idle_timeout_s, deadline), &reader);
      client.Run();
      model_ns += NanosBetween(t0, Clock::now());
      failure = ClassifyFailure(record, idle_timeouts);
      if (record.outcome == RequestOutcome::kIdleTimeout) ++idle_timeouts;
      if (!streamed && record.ok()) MarkNonStreamed(record);
      result.requests.push_back(std::move(record));
      if (failure == FailureKind::kNone || failure == FailureKind::kTimeout ||
          failure == FailureKind::kCancelled) {
        break;
      }
      if (stopping_.load()) {
        failure = FailureKind::kCancelled;
        break;
      }
      const RequestRecord& last = result.requests.back();
      const std::string what = FailureText(last);
      if (failure == FailureKind::kPermanent) {
        if (streamed && has_tools && RefusesStreamedTools(last.error_message)) {
          if (!no_streamed_tools_.exchange(true)) {
            const std::string message =
                "the server refuses streamed tool calls (" + what +
                "): requests with tools are sent non-streamed from now on (their TTFT is not "
                "measured)";
            store_.AddEvent(run_id_, "server", message);
            progress_.Say("evalrun: " + message);
          }
          ++result.attempts;
          continue;  // at once, non-streamed: no retry used
        }
        break;
      }
      if (failure == FailureKind::kUnavailable) {
        if (!unavailable_since) unavailable_since = Clock::now();
        const bool refused = last.outcome == RequestOutcome::kConnectFailed;
        if (several()) {
          Pause(worker.endpoint, what, refused, *unavailable_since);
          ++result.attempts;
          worker.hand_back = true;
          failure = FailureKind::kCancelled;
          break;
        }
        if (!WaitForEndpoint(worker.endpoint, what, refused, *unavailable_since, slept_ns)) {
          failure = FailureKind::kCancelled;
          break;
        }
        ++result.attempts;
        continue;
      }
      // Transient.
      unavailable_since.reset();
      if (retries_left-- <= 0) {
        // Out of retries: a request that last went silent is a timeout, as verify expects.
        if (last.outcome == RequestOutcome::kIdleTimeout) failure = FailureKind::kTimeout;
        break;
      }
      store_.AddEvent(run_id_, "retry", "task '" + task.id + "': " + what + "; retrying in " +
                                            Seconds(backoff));
      if (!Sleep(backoff, slept_ns)) {
        failure = FailureKind::kCancelled;
        break;
      }
      backoff *= 2;
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
  const std::vector<RunEndpoint>& endpoints_;
  const Sandbox& sandbox_;
  Progress& progress_;
  const std::optional<JudgeEndpoint>& judge_;
  std::vector<Worker> workers_;
  std::vector<std::unique_ptr<Away>> away_;  // per endpoint

  std::mutex queue_mutex_;
  std::condition_variable queue_wake_;
  size_t next_ = 0;                // under queue_mutex_: the plan's next task
  std::deque<Claim> handed_back_;  // under queue_mutex_
  int64_t held_ = 0;               // under queue_mutex_: tasks workers hold now
  std::atomic<int> active_workers_{0};
  std::atomic<bool> stopping_{false};
  std::atomic<bool> store_failed_{false};
  std::string store_error_;  // guarded by stats_mutex_
  std::atomic<bool> cancelled_{false};
  std::atomic<bool> all_gone_{false};
  std::atomic<int64_t> env_errors_{0};
  std::atomic<int64_t> own_ns_{0};
  std::atomic<int64_t> tools_ns_{0};  // agent tools' share of own_ns_
  int64_t wall_ns_ = 0;

  std::mutex wait_mutex_;
  std::condition_variable wake_;
  std::atomic<bool> no_streamed_tools_{false};  // the server refused a streamed request with tools
  std::atomic<bool> aborted_{false};            // the early stop
  static constexpr int kEarlyStopTasks = 3;
  std::mutex early_mutex_;
  bool early_decided_ = false;  // under early_mutex_, as are the three below
  int early_count_ = 0;
  std::string early_text_;
  std::string early_message_;
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

// A word of a shell command: as it is when it holds only characters no shell treats specially,
// else in single quotes.
std::string ShellWord(const std::string& word) {
  const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
           std::string_view("_-./:=@,+%").find(c) != std::string_view::npos;
  });
  if (plain) return word;
  std::string quoted = "'";
  for (const char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// "2,1,1": the endpoints' concurrency in order, as --concurrency takes it.
std::string ConcurrencyList(const SuiteRunConfig& c) {
  std::string list = std::to_string(c.concurrency);
  for (const SuiteRunConfig::MoreEndpoint& more : c.more_endpoints) {
    list += "," + std::to_string(more.concurrency);
  }
  return list;
}

// The command that resumes this run: every setting --resume must find equal (SettingsJson) when
// it was not the default, and what the run was told about its endpoint, speed and output, so a
// user can paste it after a crash or a stop.
std::string ResumeCommand(const SuiteRunConfig& c, const std::string& run_id) {
  std::vector<std::string> words = {"evalrun", "suite", c.suite_spec, "--endpoint", c.endpoint,
                                    "--db",    c.db,    "--resume",   run_id};
  const auto add = [&words](std::string flag, std::string value) {
    words.push_back(std::move(flag));
    if (!value.empty()) words.push_back(std::move(value));
  };
  if (!c.resolve.suite_repo.empty()) add("--suite-repo", c.resolve.suite_repo);
  for (const std::string& mirror : c.repo_mirrors) add("--repo-mirror", mirror);
  for (const SuiteRunConfig::MoreEndpoint& more : c.more_endpoints) add("--endpoint", more.url);
  if (c.allow_mixed_endpoints) add("--allow-mixed-endpoints", "");
  if (!c.model.empty()) add("--model", c.model);
  const bool all_one =
      c.concurrency == 1 &&
      std::all_of(c.more_endpoints.begin(), c.more_endpoints.end(),
                  [](const SuiteRunConfig::MoreEndpoint& more) { return more.concurrency == 1; });
  if (!all_one) add("--concurrency", ConcurrencyList(c));
  if (c.max_tokens >= 0) add("--max-tokens", std::to_string(c.max_tokens));
  if (c.thinking) add("--thinking", ThinkingName(*c.thinking));
  for (const std::string& filter : c.filters) add("--filter", filter);
  if (c.limit >= 0) add("--limit", std::to_string(c.limit));
  if (c.quick) add("--quick", std::to_string(*c.quick));
  if (c.seed != 0) add("--seed", std::to_string(c.seed));
  if (c.shard) add("--shard", ShardText(*c.shard));
  if (c.tool_format != ToolCallFormat::kAuto) {
    add("--tool-format", ToolCallFormatName(c.tool_format));
  }
  if (c.unsafe_no_sandbox) add("--unsafe-no-sandbox", "");
  if (c.sandbox_network) add("--sandbox-network", "");
  if (c.server_kind) add("--server", ServerKindName(*c.server_kind));
  if (c.no_speed) add("--no-speed", "");
  if (!c.out_dir.empty()) add("--out", c.out_dir);
  std::string command;
  for (const std::string& word : words) command += (command.empty() ? "" : " ") + ShellWord(word);
  return command;
}

// Asks `url` what it is and waits until it is ready: a server that answers but is not ready
// (llama.cpp loading its model: 503 on /health and /v1/models) is waited for, up to
// --wait-endpoint, and then asked again. nullopt when Ctrl-C came meanwhile. Throws Error when
// it cannot be reached (exit 2) or did not become ready in time (exit 1).
std::optional<ServerInfo> ConnectEndpoint(const std::string& url, const SuiteRunConfig& config,
                                          const std::atomic<bool>* stop, std::ostream& log) {
  ServerInfo server = DetectServer(url, Fetch, config.server_kind);
  if (!EndpointAnswers(url, config.connect_timeout_s)) {
    throw Error("cannot reach the endpoint " + url +
                " (is the server running? evalrun mock-server starts a stand-in)");
  }
  if (!EndpointReady(url, server.kind, config.connect_timeout_s)) {
    if (!config.quiet) {
      log << "evalrun: endpoint " << url << " answers but is not ready (loading?): "
          << "waiting up to " << Seconds(config.wait_endpoint_s) << std::endl;
    }
    const TimePoint t0 = Clock::now();
    while (!EndpointReady(url, server.kind, config.connect_timeout_s)) {
      if (stop && stop->load()) return std::nullopt;
      if (NanosToSeconds(NanosBetween(t0, Clock::now())) >= config.wait_endpoint_s) {
        throw Error("the endpoint " + url + " did not become ready within " +
                        Seconds(config.wait_endpoint_s) + " (its " + ReadinessPath(server.kind) +
                        " is not 2xx)",
                    ExitCode::kSomeFailed);
      }
      std::this_thread::sleep_for(std::chrono::duration<double>(config.probe_interval_s));
    }
    server = DetectServer(url, Fetch, config.server_kind);
  }
  return server;
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

ShardRecord MakeShardRecord(const std::vector<const Task*>& selected,
                            const SuiteRunConfig& config) {
  ShardRecord record;
  record.shard = config.shard.value_or(ShardSpec{});
  record.seed = config.seed;
  for (const Task* task : selected) record.plan.push_back({task->id, task->hash, task->dimension});
  record.plan_hash = PlanHash(record.plan);
  return record;
}

std::vector<const Task*> ShardOfPlan(const std::vector<const Task*>& selected,
                                     const SuiteRunConfig& config) {
  if (!config.shard) return selected;
  const ShardRecord record = MakeShardRecord(selected, config);
  const std::vector<int64_t> shards = AssignShards(record.plan, config.shard->count, config.seed);
  std::vector<const Task*> part;
  for (size_t i = 0; i < selected.size(); ++i) {
    if (shards[i] == config.shard->index) part.push_back(selected[i]);
  }
  return part;
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
  record.endpoint = config.endpoint;
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
  const FailureKind failure = ClassifyFailure(record, 1);
  if (failure == FailureKind::kNone) {
    result.grade = GradeOutput(task, Output{record.content, record.reasoning, record.finish_reason},
                               context);
  } else {
    result.grade.grader = task.grader.value("type", "");
    result.grade.grader_version = task.grader_version;
    result.grade.status =
        failure == FailureKind::kTimeout ? GradeStatus::kTimeout : GradeStatus::kEnvError;
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
  SetRepoMirrors(ParseRepoMirrors(config.repo_mirrors));
  if (config.quick && *config.quick < 1) throw Error("--quick must be at least 1 task per dimension");
  LoadedSuite loaded = LoadSuite(config.suite_spec, config.resolve);
  // Judged tasks (zx-bench's hallucination_resistance) run only with a judge; without one they
  // are skipped, saying how to give one.
  std::optional<JudgeEndpoint> judge;
  if (config.judge_endpoint.empty()) {
    if (!config.judge_model.empty()) throw Error("--judge-model is only used with --judge-endpoint");
    MarkJudgedTasks(loaded.suite);
  } else {
    judge = ConnectJudge(config.judge_endpoint, config.judge_model);
  }
  // Tests that install packages need the network, which the sandbox opens only when asked.
  if (!config.sandbox_network) MarkNetworkTasks(loaded.suite);
  const Suite& suite = loaded.suite;

  ResultStore store(config.db);
  std::vector<RunEndpoint> endpoints;
  endpoints.push_back({config.endpoint, {}, "", config.concurrency});
  for (const SuiteRunConfig::MoreEndpoint& more : config.more_endpoints) {
    for (const RunEndpoint& given : endpoints) {
      if (given.url == more.url) throw Error("--endpoint " + more.url + " is given twice");
    }
    if (more.concurrency < 1) throw Error("--concurrency must be at least 1");
    endpoints.push_back({more.url, {}, "", more.concurrency});
  }
  for (RunEndpoint& endpoint : endpoints) {
    std::optional<ServerInfo> server = ConnectEndpoint(endpoint.url, config, stop, log);
    if (!server) return static_cast<int>(ExitCode::kInterrupted);
    endpoint.server = std::move(*server);
    endpoint.model = config.model.empty() ? endpoint.server.model : config.model;
  }
  // Several endpoints must serve one model (docs/serving.md, "Several endpoints"): a grade must
  // not depend on where a task happened to go.
  std::vector<std::string> mixed;
  for (size_t i = 1; i < endpoints.size(); ++i) {
    const std::string difference =
        IdentityDifference(endpoints[0].server, endpoints[i].server, endpoints[0].url);
    if (difference.empty()) continue;
    if (!config.allow_mixed_endpoints) {
      throw Error("--endpoint " + endpoints[i].url + " does not serve what " + endpoints[0].url +
                  " serves: " + difference +
                  "; give --allow-mixed-endpoints to run them together anyway (the report then "
                  "says so)");
    }
    mixed.push_back(endpoints[i].url + ": " + difference);
  }
  const ServerInfo& server = endpoints[0].server;
  const std::string& model = endpoints[0].model;
  json settings = SettingsJson(config, suite, model, judge);
  // A shard records the whole selected plan and its split (core/shard.h), so its bundle can be
  // merged with the other shards' and a missing one named task by task.
  std::vector<const Task*> selected;  // the whole selected plan, before sharding
  if (config.shard) {
    selected = SelectTasks(suite, config);
    settings["shard"] = ShardRecordToJson(MakeShardRecord(selected, config));
  }

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
    // The suite is matched by what it resolved to (repository made absolute, commit, tree), not
    // by how it was spelled: `r/suite@C` run from r's parent and `/abs/r/suite@C` are one suite.
    // An unpinned suite is matched by its tasks (ids and hashes, below).
    json now_settings = settings;
    json run_settings = run->settings;
    for (const char* key : {"suite", "suite_dir"}) {
      now_settings.erase(key);
      if (run_settings.is_object()) run_settings.erase(key);
    }
    if (suite.pinned() || !run->suite_commit.empty()) {
      const std::string resolved_now = suite.repo + ":" + suite.path + "@" + suite.commit;
      const std::string resolved_run =
          run->suite_repo + ":" + run->suite_path + "@" + run->suite_commit;
      if (resolved_now != resolved_run || suite.tree != run->suite_tree) {
        throw Error("--resume " + run_id + ": the suite is not the run's: " + config.suite_spec +
                    " resolves to " + resolved_now + ", the run's was " + resolved_run);
      }
    }
    // The shard first, in words: the settings' difference would print the recorded plan.
    std::optional<ShardSpec> run_shard;
    const json run_shard_json =
        run_settings.is_object() ? run_settings.value("shard", json()) : json();
    if (!run_shard_json.is_null()) {
      try {
        run_shard = ShardRecordFromJson(run_shard_json, "settings.shard").shard;
      } catch (const Error&) {
        run_shard = ShardSpec{-1, 0};  // unreadable: never equal to a shard given now
      }
    }
    if (run_shard != config.shard) {
      if (!run_shard) {
        throw Error("--resume " + run_id + ": the run is not a shard; resume it without --shard "
                    "(and without EVALRUN_SHARD)");
      }
      const std::string was = ShardText(*run_shard);
      if (!config.shard) {
        throw Error("--resume " + run_id + ": the run is shard " + was + "; give --shard " + was +
                    " to resume it");
      }
      throw Error("--resume " + run_id + ": the run is shard " + was + ", not " +
                  ShardText(*config.shard) + " (give --shard " + was +
                  ", or start a new run for shard " + ShardText(*config.shard) + ")");
    }
    if (run_shard && run_shard_json.value("plan_hash", "") !=
                         settings["shard"]["plan_hash"].get<std::string>()) {
      throw Error("--resume " + run_id + ": the selected plan is not the run's: its hash is " +
                  settings["shard"]["plan_hash"].get<std::string>().substr(0, 16) +
                  ", the run's " + run_shard_json.value("plan_hash", "").substr(0, 16) +
                  " (the suite, --filter, --limit, --quick or --seed changed)");
    }
    const std::string difference = SettingsDifference(now_settings, run_settings);
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
    const size_t again = store.EnvErrorTaskIds(run_id).size();
    store.AddEvent(run_id, "resume",
                   "resumed: " + std::to_string(store.FinishedCount(run_id) -
                                                static_cast<int64_t>(again)) +
                       " of " + std::to_string(plan.size()) + " tasks done" +
                       (again > 0 ? ", " + std::to_string(again) +
                                        " that ended env_error are run again"
                                  : std::string()));
    if (again > 0 && !config.quiet) {
      log << "evalrun: resume: " << again << " task" << (again == 1 ? "" : "s")
          << " that ended env_error " << (again == 1 ? "is" : "are")
          << " run again (the earlier attempts' requests stay in the record)" << std::endl;
    }
  } else {
    plan = config.shard ? ShardOfPlan(selected, config) : SelectTasks(suite, config);
    if (plan.empty() && config.shard && !selected.empty()) {
      throw Error("shard " + ShardText(*config.shard) + " has no task: the selected plan has " +
                  std::to_string(selected.size()) + " task" + (selected.size() == 1 ? "" : "s") +
                  ", so use at most " + std::to_string(selected.size()) + " shard" +
                  (selected.size() == 1 ? "" : "s"));
    }
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
    if (endpoints.size() > 1) {
      // Every endpoint as it was at the start, and how they differ when --allow-mixed-endpoints
      // let them run together (docs/bundle-format.md, run.server).
      json all = json::array();
      for (const RunEndpoint& endpoint : endpoints) {
        all.push_back({{"endpoint", endpoint.url},
                       {"concurrency", endpoint.concurrency},
                       {"model", endpoint.model},
                       {"server", ServerInfoToJson(endpoint.server)}});
      }
      info.server["endpoints"] = std::move(all);
      if (!mixed.empty()) info.server["mixed_endpoints"] = mixed;
    }
    info.settings = settings;
    info.labels = config.labels;
    if (config.capture_environment) info.environment = CaptureEnvironment();
    std::vector<PlannedTask> planned;
    for (const Task* task : plan) planned.push_back({task->id, task->hash});
    store.LockRun(info.id);
    store.CreateRun(info, planned);
    run_id = info.id;
  }

  // Finished: graded (or skipped, timed out...) tasks; env_error tasks are run again on resume.
  std::set<std::string> finished = store.FinishedTaskIds(run_id);
  if (config.resume) {
    for (const std::string& id : store.EnvErrorTaskIds(run_id)) finished.erase(id);
  }
  std::vector<const Task*> todo;
  for (const Task* task : plan) {
    if (!finished.count(task->id)) todo.push_back(task);
  }
  if (!config.quiet) {
    log << "evalrun: run " << run_id << ": " << suite.name << " ("
        << (suite.pinned() ? suite.commit.substr(0, 12) : "unpinned") << "), "
        << (config.shard ? "shard " + ShardText(*config.shard) + ": " + std::to_string(plan.size()) +
                               " of " + std::to_string(selected.size()) + " tasks"
                         : std::to_string(plan.size()) + " tasks")
        << ", " << todo.size() << " to do, "
        << (endpoints.size() > 1 ? std::to_string(endpoints.size()) + " endpoints, concurrency " +
                                       ConcurrencyList(config)
                                 : "concurrency " + std::to_string(config.concurrency))
        << ", "
        << ServerKindName(server.kind) << (model.empty() ? "" : " " + TerminalText(model))
        << std::endl;
  }

  const std::unique_ptr<Sandbox> sandbox =
      config.unsafe_no_sandbox ? MakeUnsafeSandbox() : MakeBubblewrapSandbox();
  Progress progress(config, log, static_cast<int64_t>(plan.size()),
                    static_cast<int64_t>(finished.size()));
  if (!mixed.empty()) {
    for (const std::string& difference : mixed) {
      const std::string message = "mixed endpoints (--allow-mixed-endpoints): " + difference;
      store.AddEvent(run_id, "server", message);
      if (!config.quiet) log << "evalrun: " << message << std::endl;
    }
  }
  Scheduler scheduler(config, loaded, store, run_id, todo, endpoints, *sandbox, progress, judge);
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

  if (scheduler.aborted()) {
    const std::string message = scheduler.abort_message();
    store.SetStatus(run_id, kRunInterrupted);
    store.AddEvent(run_id, "interrupt", message);
    log << "evalrun: " << message << "\n"
        << "evalrun: " << store.FinishedCount(run_id) << " of " << plan.size()
        << " tasks are saved; resume with:\n  " << ResumeCommand(config, run_id) << std::endl;
    return static_cast<int>(ExitCode::kSomeFailed);
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
    // The speed protocol measures each endpoint alone, one after the other (docs/serving.md):
    // the first measured endpoint's result is the run's speed, the others' go under its
    // "other_endpoints", each naming its endpoint.
    const bool several = endpoints.size() > 1;
    if (!config.quiet) {
      log << "evalrun: tasks done; running the speed protocol (quick)"
          << (several ? " on each of the " + std::to_string(endpoints.size()) +
                            " endpoints, one at a time"
                      : std::string())
          << std::endl;
    }
    const auto speed_log = [&](const std::string& line) {
      if (!config.quiet) log << "  " << line << std::endl;
    };
    json measured = json::array();
    for (size_t index = 0; index < endpoints.size(); ++index) {
      const RunEndpoint& endpoint = endpoints[index];
      const std::string on = several ? " on " + endpoint.url : std::string();
      if (scheduler.gone(index)) {
        const std::string message = "speed protocol failed" + on +
                                    ": the endpoint went away during the run and did not "
                                    "come back";
        store.AddEvent(run_id, "speed", message);
        log << "evalrun: " << message << std::endl;
        continue;
      }
      if (several && !config.quiet) log << "evalrun: speed protocol" << on << std::endl;
      SpeedConfig speed;
      speed.endpoint = endpoint.url;
      speed.model = endpoint.model;
      speed.preset = "quick";
      speed.server_kind = endpoint.server.kind;
      speed.labels = config.labels;
      speed.capture_environment = false;
      if (config.thinking) speed.thinking = *config.thinking;
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
        measured.push_back(SpeedResultToJson(result));
        store.AddEvent(run_id, "speed", "speed protocol (quick)" + on + ": " +
                                            std::to_string(result.tests.size()) + " tests");
      } catch (const Error& e) {
        store.AddEvent(run_id, "speed", "speed protocol failed" + on + ": " + e.what());
        log << "evalrun: speed protocol failed" << on << ": " << e.what() << std::endl;
      }
    }
    if (!measured.empty()) {
      json speed = std::move(measured[0]);
      if (measured.size() > 1) {
        speed["other_endpoints"] = json::array();
        for (size_t i = 1; i < measured.size(); ++i) {
          speed["other_endpoints"].push_back(std::move(measured[i]));
        }
      }
      store.SaveSpeed(run_id, speed);
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
