#include "runner/speed_protocol.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <memory>
#include <random>
#include <thread>

#include "core/error.h"
#include "core/metrics.h"
#include "core/terminal_text.h"
#include "core/version.h"
#include "plugins/env_probe.h"
#include "plugins/http_client.h"
#include "runner/prompt_builder.h"
#include "runner/uni_bench_prompts.h"

namespace evalrun {

void ApplyPreset(SpeedConfig& c) {
  auto set_lengths = [&c](std::vector<int64_t> p) {
    if (c.prompt_lengths.empty()) c.prompt_lengths = std::move(p);
  };
  auto set_gen = [&c](int64_t n) {
    if (c.gen_tokens < 0) c.gen_tokens = n;
  };
  auto set_reps = [&c](int r) {
    if (c.repetitions < 0) c.repetitions = r;
  };
  auto set_conc = [&c](std::vector<int> v) {
    if (c.concurrency.empty()) c.concurrency = std::move(v);
  };
  if (c.preset == "quick") {
    set_lengths({512, 4096});
    set_gen(128);
    set_reps(3);
    set_conc({1, 2, 4});
  } else if (c.preset == "llama-bench") {
    set_lengths({512});
    set_gen(128);
    set_reps(5);
  } else if (c.preset == "uni-bench") {
    set_gen(uni_bench::kMaxTokens);
    set_reps(uni_bench::kRounds);
  } else if (c.preset == "full") {
    set_lengths({512, 1024, 2048, 4096, 8192, 16384, 32768});
    set_gen(128);
    set_reps(3);
    set_conc({1, 2, 4, 8, 16});
    if (c.depths.empty()) c.depths = {4096, 16384};
  } else {
    std::vector<std::string> names(std::begin(kSpeedPresets), std::end(kSpeedPresets));
    const std::string hint = ClosestMatch(c.preset, names);
    throw Error("unknown preset '" + c.preset + "'" +
                (hint.empty() ? "" : ", did you mean '" + hint + "'?") +
                " (presets: quick, llama-bench, uni-bench, full)");
  }
  if (!c.prompts) c.prompts = PromptsMode::kBoth;
  for (int conc : c.concurrency) {
    if (conc < 1 || conc > 4096) {
      throw Error("-c: concurrency " + std::to_string(conc) + " is outside 1..4096");
    }
  }
  for (int64_t p : c.prompt_lengths) {
    if (p < 1) throw Error("-p: prompt length " + std::to_string(p) + " must be at least 1");
  }
  if (c.gen_tokens < 2) throw Error("-n: " + std::to_string(c.gen_tokens) + " must be at least 2 (decode speed needs two tokens)");
  if (c.repetitions < 1) throw Error("-r: " + std::to_string(c.repetitions) + " must be at least 1");
}

namespace {

const char* PromptsName(PromptsMode m) {
  switch (m) {
    case PromptsMode::kDistinct: return "distinct";
    case PromptsMode::kSame: return "same";
    case PromptsMode::kBoth: return "both";
  }
  return "both";
}

std::string RandomNonce() {
  std::random_device device;
  char text[16];
  std::snprintf(text, sizeof text, "%08x", device());
  return text;
}


// One request of a test: what to send and what evalrun meant by it.
struct PlannedRequest {
  ChatRequest chat;
  int64_t prompt_tokens_sent = -1;
};

// Runs a protocol against one endpoint with one event loop.
class SpeedRunner {
 public:
  SpeedRunner(const SpeedConfig& config, ServerInfo server, const std::atomic<bool>* stop)
      : config_(config), server_(std::move(server)), stop_(stop) {}

  bool stopped() const { return stop_ && stop_->load(); }

  // Runs `rounds` rounds of `concurrency` simultaneous requests made by `plan(round, slot)`.
  void RunRounds(SpeedTest& test, const std::function<PlannedRequest(int, int)>& plan) {
    WarmConnections(test.concurrency);
    for (int round = 0; round < test.rounds && !stopped(); ++round) {
      std::vector<std::unique_ptr<RequestRecord>> records;
      std::vector<std::unique_ptr<ChatStreamReader>> readers;
      for (int slot = 0; slot < test.concurrency; ++slot) {
        PlannedRequest planned = plan(round, slot);
        auto record = std::make_unique<RequestRecord>();
        record->label = test.name + "#" + std::to_string(round) + "." + std::to_string(slot);
        record->prompt_tokens_sent = planned.prompt_tokens_sent;
        record->max_tokens = planned.chat.max_tokens;
        auto reader = std::make_unique<ChatStreamReader>(*record);
        const nlohmann::json body = BuildChatBody(planned.chat, server_);
        client_.Add(MakeChatHttpRequest(config_.endpoint, body, config_.idle_timeout_s,
                                        TotalTimeout(planned)),
                    reader.get());
        records.push_back(std::move(record));
        readers.push_back(std::move(reader));
      }
      RunClient();
      for (auto& r : records) {
        test.records.push_back(std::move(*r));
        test.record_round.push_back(round);
      }
    }
  }

  const ServerInfo& server() const { return server_; }

  // One blocking probe for calibration: usage.prompt_tokens of a chat with this content.
  std::optional<int64_t> ProbePromptTokens(const std::string& content) {
    ChatRequest chat;
    chat.model = config_.model;
    chat.messages = nlohmann::json::array({{{"role", "user"}, {"content", content}}});
    chat.max_tokens = 1;
    chat.temperature = 0;
    chat.thinking = config_.thinking;
    chat.cache_prompt = false;
    chat.stream = false;
    HttpRequest http = MakeChatHttpRequest(config_.endpoint, BuildChatBody(chat, server_),
                                           config_.idle_timeout_s, 300);
    const HttpResponse response = Fetch(http);
    if (response.status != 200) return std::nullopt;
    const auto json = nlohmann::json::parse(response.body, nullptr, false);
    if (!json.is_object() || !json.contains("usage")) return std::nullopt;
    const auto& usage = json["usage"];
    if (!usage.contains("prompt_tokens") || !usage["prompt_tokens"].is_number()) return std::nullopt;
    return usage["prompt_tokens"].get<int64_t>();
  }

 private:
  // A deadline derived from the request, never a fixed cloud-style timeout: prefill at 50
  // tokens/s and decode at 1 token/s are slower than any rig evalrun is meant for.
  double TotalTimeout(const PlannedRequest& p) const {
    const double prompt = static_cast<double>(std::max<int64_t>(0, p.prompt_tokens_sent));
    return 120.0 + prompt / 50.0 + static_cast<double>(std::max<int64_t>(0, p.chat.max_tokens));
  }

  // Opens `count` kept-alive connections before a test (concurrent GET /v1/models), so that no
  // request's TTFT includes a TCP handshake: the figure is the server's, not the socket's.
  void WarmConnections(int count) {
    if (count <= warm_connections_) return;
    struct Discard : StreamSink {
      void OnSent(TimePoint) override {}
      void OnResponseStart(int, std::string_view) override {}
      bool OnBytes(std::string_view, TimePoint) override { return true; }
      void OnDone(const TransferResult&) override {}
    };
    std::vector<Discard> sinks(static_cast<size_t>(count));
    for (auto& sink : sinks) {
      HttpRequest get;
      get.method = "GET";
      get.url = config_.endpoint + "/v1/models";
      get.connect_timeout_s = config_.connect_timeout_s;
      get.idle_timeout_s = config_.idle_timeout_s;
      get.total_timeout_s = config_.idle_timeout_s;
      client_.Add(std::move(get), &sink);
    }
    RunClient();
    warm_connections_ = count;
  }

  void RunClient() {
    // The stop flag is polled from a helper thread so that a Ctrl-C cancels a long round.
    std::atomic<bool> done{false};
    std::thread watcher;
    if (stop_) {
      watcher = std::thread([this, &done] {
        while (!done.load()) {
          if (stop_->load()) {
            client_.CancelAll();
            return;
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
      });
    }
    client_.Run();
    done.store(true);
    if (watcher.joinable()) watcher.join();
  }

  const SpeedConfig& config_;
  ServerInfo server_;
  const std::atomic<bool>* stop_;
  StreamingClient client_;
  int warm_connections_ = 0;
};

std::string Fixed(double v, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, v);
  return text;
}

// One human line per finished test, for the log.
std::string Describe(const SpeedTest& t) {
  std::string line = t.name + ": " + std::to_string(t.records.size() - t.errors) + "/" +
                     std::to_string(t.records.size()) + " ok";
  auto add = [&](const char* metric, const char* label, const char* unit, int decimals) {
    auto it = t.metrics.find(metric);
    if (it != t.metrics.end()) {
      line += std::string(", ") + label + " " + Fixed(it->second.median, decimals) + unit;
    }
  };
  add("ttft_ms", "TTFT", " ms", 1);
  if (t.kind == "prefill") add("prefill_tps", "prefill", " t/s", 1);
  if (t.kind != "prefill") add("decode_tps", "decode", " t/s", 1);
  if (t.kind == "uni_single") add("uni_decode_tps", "uni decode", " t/s", 1);
  add("tokens_per_chunk", "tok/chunk", "", 2);
  add("aggregate_tps", "aggregate", " t/s", 1);
  if (t.errors > 0 && !t.error_messages.empty()) line += " — " + t.error_messages.front();
  return line;
}

// Notes the user must read next to the numbers: the server ignored ignore_eos, cut prompts.
void AddNotes(SpeedTest& test, const ServerInfo& server, bool ignore_eos_sent) {
  int64_t short_count = 0, worst = -1;
  int64_t truncated = 0, truncated_got = -1, truncated_sent = -1;
  for (const auto& r : test.records) {
    if (!r.ok()) continue;
    if (ignore_eos_sent && r.max_tokens > 0 && r.completion_tokens() < r.max_tokens) {
      ++short_count;
      if (worst < 0 || r.completion_tokens() < worst) worst = r.completion_tokens();
    }
    if (r.prompt_tokens_sent > 0 && r.usage.prompt_tokens >= 0 &&
        static_cast<double>(r.usage.prompt_tokens) < 0.9 * static_cast<double>(r.prompt_tokens_sent)) {
      ++truncated;
      truncated_got = r.usage.prompt_tokens;
      truncated_sent = r.prompt_tokens_sent;
    }
  }
  if (short_count > 0) {
    test.notes.push_back(std::to_string(short_count) + " of " + std::to_string(test.records.size()) +
                         " requests stopped early (fewest: " + std::to_string(worst) + " of " +
                         std::to_string(test.max_tokens) +
                         " tokens): the server did not honour ignore_eos; decode figures cover "
                         "the tokens it sent");
  }
  if (truncated > 0) {
    std::string note = std::to_string(truncated) + " prompts came back with far fewer prompt "
                       "tokens than sent (" + std::to_string(truncated_got) + " of " +
                       std::to_string(truncated_sent) + "): the server cut the prompt";
    if (server.context > 0) note += " (its context is " + std::to_string(server.context) + ")";
    note += "; prefill figures use the server's count";
    test.notes.push_back(note);
  }
  if (test.cache_hits > 0) {
    std::vector<double> cached, prompt;  // of the hits
    for (const auto& r : test.records) {
      if (!r.ok()) continue;
      const RequestMetrics m = ComputeMetrics(r);
      if (!m.cache_hit) continue;
      cached.push_back(*m.cached_tokens);
      prompt.push_back(static_cast<double>(m.prompt_tokens));
    }
    test.notes.push_back(
        std::to_string(test.cache_hits) + " of " +
        std::to_string(test.records.size() - static_cast<size_t>(test.errors)) +
        " requests were prompt-cache hits (cached " +
        std::to_string(std::llround(Summarize(cached).median)) + " of " +
        std::to_string(std::llround(Summarize(prompt).median)) +
        " prompt tokens, median): the server did not process their prompts, so they have no "
        "prefill rate");
  }
  if (test.concurrency > 1) {
    const bool measured = test.metrics.count("queue_ms") > 0;
    const std::string split = measured ? "; queue ms (TTFT less the server's own prompt time) "
                                         "shows the wait"
                                       : "";
    if (server.slots > 0 && test.concurrency > server.slots) {
      test.ttft_includes_queue = true;
      test.notes.push_back("TTFT includes waiting for a slot: " +
                           std::to_string(test.concurrency) +
                           " concurrent requests on a server with " +
                           std::to_string(server.slots) + " slot" +
                           (server.slots == 1 ? "" : "s") + split +
                           "; no prefill rate is shown for it");
    } else if (server.slots <= 0) {
      test.notes.push_back("TTFT may include waiting for a slot: the server does not say how "
                           "many requests it serves at once" + split);
    }
  }
}

nlohmann::json UserMessage(const std::string& content) {
  return nlohmann::json::array({{{"role", "user"}, {"content", content}}});
}

}  // namespace

SpeedResult RunSpeed(const SpeedConfig& config_in, const std::function<void(const std::string&)>& log,
                     const std::atomic<bool>* stop) {
  SpeedConfig config = config_in;
  ApplyPreset(config);
  const TimePoint t_start = Clock::now();
  SpeedResult result;
  result.evalrun_version = kVersion;
  result.started_at = UtcNowIso();
  result.endpoint = config.endpoint;
  result.preset = config.preset;
  result.labels = config.labels;

  ServerInfo server = DetectServer(config.endpoint, Fetch, config.server_kind);
  if (config.model.empty()) config.model = server.model;
  {
    // Nothing can run against an endpoint that answers nothing at all.
    HttpRequest ping;
    ping.method = "GET";
    ping.url = config.endpoint + "/v1/models";
    ping.total_timeout_s = config.connect_timeout_s + 5;
    ping.connect_timeout_s = config.connect_timeout_s;
    const HttpResponse r = Fetch(ping);
    if (r.status == 0) {
      throw Error("cannot reach the endpoint " + config.endpoint + ": " + r.error +
                  " (is the server running? evalrun mock-server starts a stand-in)");
    }
  }
  log("server: " + std::string(ServerKindName(server.kind)) +
      (server.build.empty() ? "" : " " + TerminalText(server.build)) +
      (config.model.empty() ? "" : ", model " + TerminalText(config.model)));

  result.settings = {
      {"preset", config.preset},
      {"prompt_lengths", config.prompt_lengths},
      {"gen_tokens", config.gen_tokens},
      {"repetitions", config.repetitions},
      {"concurrency", config.concurrency},
      {"prompts", PromptsName(*config.prompts)},
      {"depths", config.depths},
      {"thinking", ThinkingName(config.thinking)},
      {"short_prompt_tokens", config.short_prompt_tokens},
      {"temperature", 0},
      {"idle_timeout_s", config.idle_timeout_s},
      {"model", config.model},
      {"warmup", config.warmup},
      {"ignore_eos_sent", server.understands_ignore_eos},
      {"cache_prompt_sent", server.understands_cache_prompt},
  };
  if (config.capture_environment) result.environment = CaptureEnvironment();
  result.environment["labels"] = config.labels;

  SpeedRunner runner(config, server, stop);
  auto base_chat = [&](const std::string& content, int64_t max_tokens) {
    ChatRequest chat;
    chat.model = config.model;
    chat.messages = UserMessage(content);
    chat.max_tokens = max_tokens;
    chat.temperature = 0;
    chat.thinking = config.thinking;
    return chat;
  };

  if (config.warmup && !runner.stopped()) {
    SpeedTest warm;
    warm.name = "warmup";
    warm.rounds = 1;
    runner.RunRounds(warm, [&](int, int) {
      return PlannedRequest{base_chat("Say hello.", 8), -1};
    });
  }

  const std::string nonce = RandomNonce();
  PromptBuilder prompts(
      server, Fetch, [&runner](const std::string& text) { return runner.ProbePromptTokens(text); },
      nonce);
  const bool needs_calibration = config.preset != "uni-bench" || !config.prompt_lengths.empty();
  if (needs_calibration && !runner.stopped()) prompts.Calibrate();
  int64_t prompt_index = 0;

  auto finish = [&](SpeedTest& test, bool ignore_eos_sent) {
    SummarizeTest(test);
    AddNotes(test, server, ignore_eos_sent);
    log(Describe(test));
    result.tests.push_back(std::move(test));
  };
  auto too_long = [&](int64_t tokens, const std::string& name) {
    if (server.context > 0 && tokens + config.gen_tokens > server.context) {
      log(name + ": skipped, longer than the server's context (" + std::to_string(server.context) + ")");
      return true;
    }
    return false;
  };
  const bool ignore_eos = server.understands_ignore_eos;

  if (config.preset == "uni-bench") {
    for (const auto& scenario : uni_bench::kScenarios) {
      if (runner.stopped()) break;
      SpeedTest test;
      test.name = std::string("uni:") + scenario.name;
      test.kind = "uni_single";
      test.prompts = scenario.name;
      test.max_tokens = config.gen_tokens;
      test.rounds = config.repetitions;
      runner.RunRounds(test, [&](int, int) {
        return PlannedRequest{base_chat(scenario.prompt, config.gen_tokens), -1};
      });
      finish(test, false);
    }
    struct Pair {
      const char* name;
      const char* second;
    };
    for (const Pair& pair : {Pair{"same", uni_bench::kCode}, Pair{"different", uni_bench::kCodeB}}) {
      if (runner.stopped()) break;
      SpeedTest test;
      test.name = std::string("uni:2way-") + pair.name;
      test.kind = "uni_pair";
      test.prompts = pair.name;
      test.max_tokens = config.gen_tokens;
      test.concurrency = 2;
      test.rounds = config.repetitions;
      runner.RunRounds(test, [&](int, int slot) {
        return PlannedRequest{base_chat(slot == 0 ? uni_bench::kCode : pair.second, config.gen_tokens), -1};
      });
      finish(test, false);
    }
  }

  // Prefill: max_tokens 1, a unique prefix per request, cache_prompt false where understood.
  for (int64_t p : config.prompt_lengths) {
    if (runner.stopped()) break;
    SpeedTest test;
    test.name = "pp" + std::to_string(p);
    test.kind = "prefill";
    test.prompts = "distinct";
    test.prompt_tokens = p;
    test.max_tokens = 1;
    test.rounds = config.repetitions;
    if (too_long(p, test.name)) continue;
    runner.RunRounds(test, [&](int, int) {
      ChatRequest chat = base_chat(prompts.Build(p, prompt_index++), 1);
      chat.cache_prompt = false;
      return PlannedRequest{chat, p};
    });
    finish(test, false);
  }

  // Decode: ignore_eos and a fixed max_tokens, from a short prompt, and at depth.
  if (config.preset != "uni-bench") {
    std::vector<int64_t> depths = {0};
    depths.insert(depths.end(), config.depths.begin(), config.depths.end());
    for (int64_t depth : depths) {
      if (runner.stopped()) break;
      SpeedTest test;
      test.name = "tg" + std::to_string(config.gen_tokens) +
                  (depth > 0 ? "@d" + std::to_string(depth) : "");
      test.kind = "decode";
      test.prompts = "distinct";
      const int64_t prompt_tokens = depth > 0 ? depth : config.short_prompt_tokens;
      test.prompt_tokens = prompt_tokens;
      test.depth_tokens = depth;
      test.max_tokens = config.gen_tokens;
      test.rounds = config.repetitions;
      if (too_long(prompt_tokens, test.name)) continue;
      runner.RunRounds(test, [&](int, int) {
        ChatRequest chat = base_chat(prompts.Build(prompt_tokens, prompt_index++), config.gen_tokens);
        chat.ignore_eos = true;
        chat.cache_prompt = false;
        return PlannedRequest{chat, prompt_tokens};
      });
      finish(test, ignore_eos);
    }
  }

  // The concurrency sweep: distinct prompts (no cache) and the same prompt (prefix cache hit).
  std::vector<PromptsMode> modes;
  if (*config.prompts != PromptsMode::kSame) modes.push_back(PromptsMode::kDistinct);
  if (*config.prompts != PromptsMode::kDistinct) modes.push_back(PromptsMode::kSame);
  for (int conc : config.concurrency) {
    for (PromptsMode mode : modes) {
      if (runner.stopped()) break;
      SpeedTest test;
      test.name = "c" + std::to_string(conc) + "-" + PromptsName(mode);
      test.kind = "concurrency";
      test.prompts = PromptsName(mode);
      test.prompt_tokens = config.short_prompt_tokens;
      test.max_tokens = config.gen_tokens;
      test.concurrency = conc;
      test.rounds = config.repetitions;
      const std::string shared =
          mode == PromptsMode::kSame ? prompts.BuildShared(config.short_prompt_tokens) : "";
      runner.RunRounds(test, [&](int, int) {
        ChatRequest chat = base_chat(
            mode == PromptsMode::kSame ? shared : prompts.Build(config.short_prompt_tokens, prompt_index++),
            config.gen_tokens);
        chat.ignore_eos = true;
        return PlannedRequest{chat, config.short_prompt_tokens};
      });
      finish(test, ignore_eos);
    }
  }

  result.server = ServerInfoToJson(runner.server());
  result.calibration = prompts.calibration();
  result.duration_s = NanosToSeconds(NanosBetween(t_start, Clock::now()));
  return result;
}

}  // namespace evalrun
