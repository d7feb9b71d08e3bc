#include "runner/commands/cli.h"

#include <charconv>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>

#include <CLI/CLI.hpp>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/limits.h"
#include "core/shard.h"
#include "core/terminal_text.h"
#include "core/version.h"
#include "plugins/mock_server.h"
#include "results/bundle.h"
#include "results/report_json.h"
#include "results/run_report.h"
#include "results/speed_report.h"
#include "results/store.h"
#include "runner/speed_protocol.h"
#include "runner/suite_run.h"
#include "runner/commands/grade_commands.h"
#include "runner/commands/compare_commands.h"
#include "runner/commands/merge_commands.h"
#include "runner/commands/task_commands.h"
#include "runner/commands/verify_commands.h"

namespace evalrun {

namespace {

std::atomic<bool> g_stop{false};
std::atomic<int> g_interrupts{0};

extern "C" void OnInterrupt(int) {
  // First Ctrl-C: stop at the next safe point and keep what was measured; second: leave now.
  if (g_interrupts.fetch_add(1) >= 1) std::_Exit(static_cast<int>(ExitCode::kInterrupted));
  g_stop.store(true);
}

void InstallInterruptHandler() {
  struct sigaction action{};
  action.sa_handler = OnInterrupt;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

// The subcommands this build has are the CLI11 app's own table (each Add* function registers
// one); later issues add suite, runs, report, export, verify and compare.
std::vector<std::string> CommandNames(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    names.push_back(sub->get_name());
  }
  return names;
}

std::vector<std::string> OptionNames(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* option : app.get_options()) {
    for (const auto& l : option->get_lnames()) names.push_back("--" + l);
    for (const auto& s : option->get_snames()) names.push_back("-" + s);
  }
  return names;
}

// Unknown arguments left over after parsing a subcommand: a usage error with a hint.
void RejectExtras(const CLI::App& sub) {
  const std::vector<std::string> extras = sub.remaining();
  if (extras.empty()) return;
  const std::string& first = extras.front();
  std::string message = std::string(sub.get_name()) + ": ";
  if (!first.empty() && first[0] == '-') {
    const std::string flag = first.substr(0, first.find('='));
    message += "unknown option '" + flag + "'";
    const std::string hint = ClosestMatch(flag, OptionNames(sub));
    if (!hint.empty()) message += ", did you mean '" + hint + "'?";
  } else {
    message += "unexpected argument '" + first + "'";
  }
  throw Error(message + " (evalrun " + sub.get_name() + " --help lists the options)");
}

std::map<std::string, std::string> ParseLabels(const std::vector<std::string>& labels) {
  std::map<std::string, std::string> out;
  for (const auto& label : labels) {
    const size_t eq = label.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw Error("--label '" + label + "': expected KEY=VALUE, e.g. --label quant=AWQ-4bit");
    }
    const std::string key = label.substr(0, eq);
    if (const auto it = out.find(key); it != out.end()) {
      throw Error("--label '" + label + "': key '" + key + "' is already given (" + key + "=" +
                  it->second + "); give each key once");
    }
    out[key] = label.substr(eq + 1);
  }
  return out;
}

// Range checks for numeric options (docs/limits.md): a usage error naming the flag, the value
// and the range, never a value silently replaced or sent. Only options the user gave are checked
// (sub.count), so the defaults' own sentinels (-1 = none) stay as they are.
std::string RangeText(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  std::ostringstream text;
  text << value;
  return text.str();
}

void RequireRange(const std::string& flag, int64_t value, int64_t min, int64_t max) {
  if (value < min || value > max) {
    throw Error(flag + " " + std::to_string(value) + ": out of range (expected " +
                std::to_string(min) + ".." + std::to_string(max) + ")");
  }
}

constexpr double kMaxTimeoutS = 7 * 24 * 3600.0;  // a week: longer is a typo

void RequireTimeout(const std::string& flag, double value) {
  if (!std::isfinite(value) || !(value > 0) || value > kMaxTimeoutS) {
    throw Error(flag + " " + RangeText(value) +
                ": out of range (expected seconds greater than 0, at most 604800)");
  }
}

// An integer option read as text, so that "-3" and "1e9" reach the range check with their words.
int64_t ParseIntegerOption(const std::string& flag, const std::string& text) {
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) {
    throw Error(flag + " '" + text + "': expected a whole number");
  }
  return value;
}

// Checks early that --out can be written, so a long measurement is never lost to a typo.
void CheckWritable(const std::string& path) {
  if (path.empty()) return;
  std::ofstream probe(path, std::ios::app);
  if (!probe) throw Error("--out " + path + ": cannot write there");
}

void WriteOutput(const std::string& path, const std::string& text) {
  if (path.empty()) {
    std::cout << text << std::flush;
    return;
  }
  if (WriteFileAtomically(path, text)) {
    // Keep the measurement: print it rather than lose it.
    std::cout << text << std::flush;
    throw Error("--out " + path + ": writing failed; the result was printed instead",
                ExitCode::kSomeFailed);
  }
}

struct SpeedOptions {
  SpeedConfig config;
  std::string prompts;
  std::string thinking = "auto";
  std::string format = "md";
  std::string out;
  std::string server;
  std::vector<std::string> labels;
  std::string db;
  bool no_env = false;
  bool quiet = false;
};

void AddSpeed(CLI::App& app, SpeedOptions& o) {
  CLI::App* s = app.add_subcommand(
      "speed", "measure prefill, decode and concurrency speed with a fixed protocol");
  s->allow_extras();
  s->add_option("--endpoint", o.config.endpoint,
                "server base URL, e.g. http://127.0.0.1:8080 (a trailing /v1 is fine)")
      ->required();
  s->add_option("--model", o.config.model, "model name to send (default: the server's first model)");
  s->add_option("--preset", o.config.preset, "quick (default) | llama-bench | uni-bench | full");
  s->add_option("-p,--prompt-tokens", o.config.prompt_lengths,
                "prefill tests: prompt lengths in tokens, comma-separated (e.g. 512,4096)")
      ->delimiter(',');
  s->add_option("-n,--gen-tokens", o.config.gen_tokens, "decode tests: tokens to generate");
  s->add_option("-r,--repetitions", o.config.repetitions,
                "requests per prefill/decode test; rounds per concurrency level");
  s->add_option("-c,--concurrency", o.config.concurrency,
                "concurrency sweep levels, comma-separated (e.g. 1,2,4)")
      ->delimiter(',');
  s->add_option("--prompts", o.prompts, "concurrency sweep prompts: distinct | same | both");
  s->add_option("--thinking", o.thinking,
                "on | off send chat_template_kwargs.enable_thinking; auto sends nothing");
  s->add_option("-o,--format", o.format, "md (default) | json | csv | jsonl");
  s->add_option("--out", o.out, "write the result to FILE instead of stdout");
  s->add_option("--label", o.labels, "KEY=VALUE recorded with the result (repeatable)");
  s->add_option("--server", o.server,
                "skip detection: llama.cpp | vllm | sglang | generic | evalrun-mock");
  s->add_option("--idle-timeout", o.config.idle_timeout_s,
                "seconds of silence inside a response before it is an error (default 60)");
  s->add_option("--db", o.db, "also store the result as a run in this results database");
  s->add_flag("--no-env", o.no_env, "do not probe the client host (CPU, GPUs)");
  s->add_flag("-q,--quiet", o.quiet, "no progress lines on stderr");
}

// Stores a speed result as a run of kind "speed" (evalrun speed --db).
std::string StoreSpeedRun(const std::string& db, const SpeedResult& result, bool interrupted) {
  ResultStore store(db);
  RunInfo info;
  info.id = ResultStore::NewRunId();
  info.kind = "speed";
  info.status = interrupted ? kRunInterrupted : kRunFinished;
  info.evalrun_version = result.evalrun_version;
  info.endpoint = result.endpoint;
  info.model = result.settings.value("model", "");
  info.server = result.server;
  info.settings = result.settings;
  info.labels = result.labels;
  info.environment = result.environment;
  store.CreateRun(info, {});
  store.SaveSpeed(info.id, SpeedResultToJson(result));
  return info.id;
}

int RunSpeedCommand(const CLI::App& sub, SpeedOptions& o) {
  RejectExtras(sub);
  SpeedConfig& c = o.config;
  c.endpoint = NormalizeEndpoint(c.endpoint);
  if (c.endpoint.rfind("http://", 0) != 0 && c.endpoint.rfind("https://", 0) != 0) {
    throw Error("--endpoint '" + c.endpoint + "': expected a URL such as http://127.0.0.1:8080");
  }
  if (!o.prompts.empty()) {
    if (o.prompts == "distinct") c.prompts = PromptsMode::kDistinct;
    else if (o.prompts == "same") c.prompts = PromptsMode::kSame;
    else if (o.prompts == "both") c.prompts = PromptsMode::kBoth;
    else throw Error("--prompts '" + o.prompts + "': expected distinct, same or both");
  }
  const auto thinking = ParseThinking(o.thinking);
  if (!thinking) throw Error("--thinking '" + o.thinking + "': expected on, off or auto");
  c.thinking = *thinking;
  const auto format = ParseSpeedFormat(o.format);
  if (!format) {
    const std::string hint = ClosestMatch(o.format, {"md", "json", "csv", "jsonl"});
    throw Error("-o '" + o.format + "': expected md, json, csv or jsonl" +
                (hint.empty() ? "" : " (did you mean '" + hint + "'?)"));
  }
  if (!o.server.empty()) {
    c.server_kind = ParseServerKind(o.server);
    if (!c.server_kind) {
      throw Error("--server '" + o.server +
                  "': expected llama.cpp, vllm, sglang, generic or evalrun-mock");
    }
  }
  c.labels = ParseLabels(o.labels);
  c.capture_environment = !o.no_env;
  if (sub.count("--gen-tokens") > 0) RequireRange("-n", c.gen_tokens, 2, limits::kMaxTokens);
  if (sub.count("--repetitions") > 0) RequireRange("-r", int64_t{c.repetitions}, 1, 100000);
  for (const int64_t length : c.prompt_lengths) RequireRange("-p", length, 1, limits::kMaxTokens);
  for (const int level : c.concurrency) RequireRange("-c", int64_t{level}, 1, 4096);
  if (sub.count("--idle-timeout") > 0) RequireTimeout("--idle-timeout", c.idle_timeout_s);
  ApplyPreset(c);  // usage errors (bad preset, -n 1) before anything is sent
  CheckWritable(o.out);
  if (!o.db.empty()) ResultStore{o.db};  // a bad database is found before measuring

  InstallInterruptHandler();
  auto log = [&o](const std::string& line) {
    if (!o.quiet) std::cerr << "evalrun: " << line << std::endl;
  };
  const SpeedResult result = RunSpeed(c, log, &g_stop);
  // Streamed (-o json writes its per-event arrays number by number): the result is never held
  // twice over, as a document and as text.
  const auto to_stdout = [](std::string_view piece) {
    std::cout.write(piece.data(), static_cast<std::streamsize>(piece.size()));
  };
  if (o.out.empty()) {
    WriteSpeed(result, *format, to_stdout);
    std::cout << std::flush;
  } else if (const auto failure = WriteFileAtomically(o.out, [&](const TextSink& sink) {
               WriteSpeed(result, *format, sink);
             })) {
    // Keep the measurement: print it rather than lose it.
    WriteSpeed(result, *format, to_stdout);
    std::cout << std::flush;
    throw Error("--out " + o.out + ": writing failed (" + *failure +
                    "); the result was printed instead",
                ExitCode::kSomeFailed);
  }
  if (!o.out.empty() && !o.quiet) std::cerr << "evalrun: wrote " << o.out << std::endl;
  if (!o.db.empty()) {
    const std::string id = StoreSpeedRun(o.db, result, g_stop.load());
    if (!o.quiet) std::cerr << "evalrun: stored as run " << id << " in " << o.db << std::endl;
  }
  if (g_stop.load()) {
    std::cerr << "evalrun: interrupted; the result holds what was measured" << std::endl;
    return static_cast<int>(ExitCode::kInterrupted);
  }
  if (result.errors() > 0) {
    std::cerr << "evalrun: " << result.errors() << " request(s) ended in error (see the result)"
              << std::endl;
    return static_cast<int>(ExitCode::kSomeFailed);
  }
  return 0;
}

struct SuiteOptions {
  SuiteRunConfig config;
  std::vector<std::string> endpoints;  // --endpoint, repeatable
  std::string concurrency;             // --concurrency N or N,N,... (one per endpoint)
  std::string thinking;
  std::string tool_format;
  std::string server;
  std::vector<std::string> labels;
  std::vector<std::string> filters;
  std::string resume;
  std::string wait_endpoint = "30";
  std::string quick_text;  // --quick's optional N as typed ("" = the default 5)
  std::string shard;       // --shard I/N | auto/N | auto
  bool resume_given = false;
};

}  // namespace

double ParseWaitEndpoint(const std::string& text) {
  const Error bad("--wait-endpoint '" + text +
                  "': expected minutes (30, 0.5) or a time with a unit (90s, 45m, 2h)");
  if (text.empty()) throw bad;
  double scale = 60;
  std::string number = text;
  switch (text.back()) {
    case 's': scale = 1; number.pop_back(); break;
    case 'm': scale = 60; number.pop_back(); break;
    case 'h': scale = 3600; number.pop_back(); break;
    default: break;
  }
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(number, &used);
  } catch (const std::exception&) {
    throw bad;
  }
  if (used != number.size() || !std::isfinite(value)) throw bad;
  if (value < 0) throw Error("--wait-endpoint must not be negative");
  if (value * scale > 7 * 24 * 3600) {
    throw Error("--wait-endpoint '" + text + "': out of range (expected at most 7 days: 10080, 168h)");
  }
  return value * scale;
}

std::vector<int> ParseSuiteConcurrency(const std::string& text, size_t endpoints) {
  if (text.empty()) return std::vector<int>(endpoints, 1);
  std::vector<int> values;
  size_t begin = 0;
  while (true) {
    const size_t comma = std::min(text.find(',', begin), text.size());
    const int64_t value = ParseIntegerOption("--concurrency", text.substr(begin, comma - begin));
    RequireRange("--concurrency", value, 1, 4096);
    values.push_back(static_cast<int>(value));
    if (comma == text.size()) break;
    begin = comma + 1;
  }
  if (values.size() == 1) return std::vector<int>(endpoints, values[0]);
  if (values.size() != endpoints) {
    throw Error("--concurrency '" + text + "': " + std::to_string(values.size()) +
                " values for " + std::to_string(endpoints) + " endpoint" +
                (endpoints == 1 ? "" : "s") +
                " (give one value for every endpoint, or one per --endpoint in order)");
  }
  return values;
}

namespace {

void AddSuite(CLI::App& app, SuiteOptions& o) {
  CLI::App* s = app.add_subcommand(
      "suite", "run a task suite against an endpoint: grades, speed per request, one report");
  s->allow_extras();
  s->add_option("SUITE", o.config.suite_spec, "NAME@REV, PATH@REV or PATH")->required();
  s->add_option("--endpoint", o.endpoints,
                "server base URL, e.g. http://127.0.0.1:8080 (a trailing /v1 is fine); "
                "repeatable: several servers of one model share the tasks (docs/serving.md)")
      ->required();
  s->add_option("--model", o.config.model, "model name to send (default: the server's first)");
  s->add_option("--concurrency", o.concurrency,
                "tasks in flight at once per endpoint (default 1: clean per-request speed); "
                "N,N,...: one value per --endpoint, in order")
      ->type_name("N[,N...]");
  s->add_flag("--allow-mixed-endpoints", o.config.allow_mixed_endpoints,
              "run endpoints whose servers differ (model, build, context, weights) together; "
              "the report says so");
  s->add_option("--max-tokens", o.config.max_tokens, "max_tokens for tasks that set none");
  s->add_option("--thinking", o.thinking,
                "on | off | auto: override the tasks' own setting (default: each task's)");
  s->add_option("--filter", o.filters,
                "select tasks: dimension=X,id=GLOB,difficulty=X,tag=X (repeatable)");
  s->add_option("--limit", o.config.limit, "run only the first N selected tasks");
  s->add_option("--quick", o.quick_text,
                "a seeded, stratified sample of N tasks per dimension (default N 5)")
      ->expected(0, 1);
  s->add_option("--seed", o.config.seed, "seed of the --quick sample and the --shard split (default 0)");
  s->add_option("--shard", o.shard,
                "run only shard I of N of the selected plan (docs/sharding.md): I/N, or auto/N "
                "under a Slurm job array or Kubernetes Indexed Job; default $EVALRUN_SHARD")
      ->type_name("I/N");
  s->add_option("--db", o.config.db, "results database (default ./evalrun.db)");
  s->add_option("--resume", o.resume,
                "continue an interrupted run (default: the latest unfinished one)")
      ->expected(0, 1);
  s->add_flag("--no-speed", o.config.no_speed, "skip the speed protocol after the tasks");
  s->add_option("--wait-endpoint", o.wait_endpoint,
                "how long to wait for an endpoint that went away: minutes (30, 0.5) or with a "
                "unit (90s, 45m, 2h); default 30")
      ->type_name("TIME");
  s->add_option("--probe-interval", o.config.probe_interval_s,
                "seconds between readiness probes while the endpoint is away (default 2)");
  s->add_option("--max-retries", o.config.max_retries,
                "retries of a transient failure per request (default 3)");
  s->add_option("--suite-repo", o.config.resolve.suite_repo,
                "use this local clone or mirror for a registered suite name");
  s->add_option("--repo-mirror", o.config.repo_mirrors,
                "URL=PATH: a local clone to use for a repository task's (or suite's) URL "
                "(repeatable; docs/serving.md)");
  s->add_option("--label", o.labels, "KEY=VALUE recorded with the run (repeatable)");
  s->add_option("--out", o.config.out_dir,
                "folder for report.md, report.html, card.svg (default evalrun-reports/RUN_ID)");
  s->add_option("--server", o.server,
                "skip detection: llama.cpp | vllm | sglang | generic | evalrun-mock");
  s->add_option("--idle-timeout", o.config.idle_timeout_s,
                "seconds of silence inside a response before it is an error (default 120)");
  s->add_flag("--unsafe-no-sandbox", o.config.unsafe_no_sandbox,
              "run model code without bubblewrap isolation (recorded with the run)");
  s->add_flag("--sandbox-network", o.config.sandbox_network,
              "let tests that install packages (zx-bench projects whose tests need the network) "
              "reach this machine's network from the sandbox (recorded with the run)");
  s->add_option("--tool-format", o.tool_format,
                "agent tasks: tool calls written as text when the server sends none natively: "
                "auto | qwen_xml | hermes | native (none; default auto)");
  s->add_option("--judge-endpoint", o.config.judge_endpoint,
                "an OpenAI-compatible server that judges zx-bench's hallucination_resistance "
                "answers (without one they are skipped)");
  s->add_option("--judge-model", o.config.judge_model,
                "the judge's model name (default: the judge server's first model)");
  s->add_flag("--no-env", [&o](int64_t) { o.config.capture_environment = false; },
              "do not probe the client host (CPU, GPUs)");
  s->add_flag("-q,--quiet", o.config.quiet, "no progress on stderr");
}

int RunSuiteCommand(const CLI::App& sub, SuiteOptions& o) {
  RejectExtras(sub);
  SuiteRunConfig& c = o.config;
  std::vector<std::string> urls;
  for (const std::string& given : o.endpoints) {
    std::string url = NormalizeEndpoint(given);
    if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0) {
      throw Error("--endpoint '" + url + "': expected a URL such as http://127.0.0.1:8080");
    }
    urls.push_back(std::move(url));
  }
  const std::vector<int> concurrency = ParseSuiteConcurrency(o.concurrency, urls.size());
  c.endpoint = urls.at(0);
  c.concurrency = concurrency[0];
  for (size_t i = 1; i < urls.size(); ++i) c.more_endpoints.push_back({urls[i], concurrency[i]});
  if (!o.thinking.empty()) {
    const auto thinking = ParseThinking(o.thinking);
    if (!thinking) throw Error("--thinking '" + o.thinking + "': expected on, off or auto");
    c.thinking = *thinking;
  }
  if (!o.tool_format.empty()) {
    const auto format = ParseToolCallFormat(o.tool_format);
    if (!format) {
      throw Error("--tool-format '" + o.tool_format +
                  "': expected auto, qwen_xml, hermes or native");
    }
    c.tool_format = *format;
  }
  if (!c.judge_endpoint.empty()) {
    c.judge_endpoint = NormalizeEndpoint(c.judge_endpoint);
    if (c.judge_endpoint.rfind("http://", 0) != 0 && c.judge_endpoint.rfind("https://", 0) != 0) {
      throw Error("--judge-endpoint '" + c.judge_endpoint +
                  "': expected a URL such as http://127.0.0.1:8081");
    }
  }
  if (!o.server.empty()) {
    c.server_kind = ParseServerKind(o.server);
    if (!c.server_kind) {
      throw Error("--server '" + o.server +
                  "': expected llama.cpp, vllm, sglang, generic or evalrun-mock");
    }
  }
  if (sub.count("--quick") > 0) {
    if (o.quick_text.empty()) {
      c.quick = 5;
    } else {
      c.quick = ParseIntegerOption("--quick", o.quick_text);
      RequireRange("--quick", *c.quick, 1, 1000000);
    }
  }
  if (sub.count("--max-tokens") > 0) RequireRange("--max-tokens", c.max_tokens, 1, limits::kMaxTokens);
  if (sub.count("--limit") > 0) RequireRange("--limit", c.limit, 1, int64_t{1} << 40);
  if (sub.count("--idle-timeout") > 0) RequireTimeout("--idle-timeout", c.idle_timeout_s);
  if (sub.count("--resume") > 0) c.resume = o.resume;
  c.wait_endpoint_s = ParseWaitEndpoint(o.wait_endpoint);
  if (c.probe_interval_s <= 0) throw Error("--probe-interval must be more than 0 seconds");
  if (c.max_retries < 0) throw Error("--max-retries must not be negative");
  c.filters = o.filters;
  c.labels = ParseLabels(o.labels);
  c.shard = ResolveShard(sub.count("--shard") > 0 ? std::optional<std::string>(o.shard)
                                                  : std::nullopt,
                         [](const std::string& name) -> std::optional<std::string> {
                           const char* value = std::getenv(name.c_str());
                           if (value == nullptr) return std::nullopt;
                           return std::string(value);
                         });
  InstallInterruptHandler();
  return RunSuite(c, &g_stop, std::cerr);
}

struct RunsOptions {
  std::string db = "evalrun.db";
  std::string report_run;
  std::string report_format = "md";
  std::string report_out;
  std::string report_card;
};

void AddRunCommands(CLI::App& app, RunsOptions& o) {
  CLI::App* runs = app.add_subcommand("runs", "list the runs in a results database");
  runs->allow_extras();
  runs->add_option("--db", o.db, "results database (default ./evalrun.db)");
  CLI::App* report = app.add_subcommand("report", "render the report of a stored run");
  report->allow_extras();
  report->add_option("RUN_ID", o.report_run,
                     "a run id (evalrun runs lists them), or a bundle FILE.evalrun.json")
      ->required();
  report->add_option("--db", o.db, "results database (default ./evalrun.db)");
  report->add_option("-o,--format", o.report_format, "md (default) | html | json");
  report->add_option("--out", o.report_out, "write to FILE instead of stdout");
  report->add_option("--card", o.report_card, "also write the card picture to FILE.svg");
}

void RequireDatabase(const std::string& db) {
  if (!std::ifstream(db)) throw Error(db + ": no results database here (--db names another)");
}

int RunRunsCommand(const RunsOptions& o) {
  RequireDatabase(o.db);
  const ResultStore store(o.db);
  const std::vector<RunInfo> runs = store.ListRuns();
  if (runs.empty()) {
    std::cout << "no runs in " << o.db << "\n";
    return 0;
  }
  std::printf("%-24s %-6s %-11s %-20s %9s  %s\n", "RUN", "KIND", "STATUS", "STARTED", "TASKS",
              "SUITE / MODEL");
  for (const RunInfo& run : runs) {
    const std::string tasks = run.kind == "suite" ? std::to_string(store.FinishedCount(run.id)) +
                                                        "/" + std::to_string(run.planned_tasks)
                                                  : "-";
    std::string what = run.kind == "suite" ? run.suite_spec : std::string("speed");
    if (!run.model.empty()) what += " / " + TerminalText(run.model);
    std::printf("%-24s %-6s %-11s %-20s %9s  %s\n", run.id.c_str(), run.kind.c_str(),
                run.status.c_str(), run.created_at.c_str(), tasks.c_str(), what.c_str());
  }
  return 0;
}

int RunReportCommand(const RunsOptions& o) {
  if (o.report_format != "md" && o.report_format != "html" && o.report_format != "json") {
    const std::string hint = ClosestMatch(o.report_format, {"md", "html", "json"});
    throw Error("-o '" + o.report_format + "': expected md, html or json" +
                (hint.empty() ? "" : " (did you mean '" + hint + "'?)"));
  }
  // A bundle (a path ending in .json, evalrun export) renders with its result hash.
  Bundle bundle;
  if (o.report_run.size() > 5 && o.report_run.ends_with(".json")) {
    bundle = ReadBundle(o.report_run);
    if (ComputeResultHash(bundle.document) != bundle.result_hash) {
      // Someone else's file: its recorded hash is shown only with the warning that it is not
      // the hash of what the file holds.
      std::cerr << "evalrun: warning: " << o.report_run << ": the recorded result hash "
                << TerminalText(bundle.result_hash.substr(0, 16))
                << " does not match the bundle's content (edited after export?); evalrun verify "
                   "names what changed"
                << std::endl;
      bundle.result_hash += " (does not verify)";
    }
  } else {
    RequireDatabase(o.db);
    bundle.run = ResultStore(o.db).LoadRun(o.report_run);
  }
  const RunData& run = bundle.run;
  std::string text;
  if (o.report_format == "md") text = RenderRunMarkdown(run, bundle.result_hash);
  if (o.report_format == "html") text = RenderRunHtml(run, bundle.result_hash);
  if (o.report_format == "json") text = DumpJson(RunScoresToJson(ScoreRun(run))) + "\n";
  CheckWritable(o.report_out);
  WriteOutput(o.report_out, text);
  if (!o.report_card.empty()) {
    CheckWritable(o.report_card);
    if (const auto error = WriteFileAtomically(o.report_card, RenderCardSvg(run, bundle.result_hash))) {
      throw Error("--card " + o.report_card + ": writing failed: " + *error, ExitCode::kSomeFailed);
    }
  }
  return 0;
}

struct MockOptions {
  MockConfig config;
  std::string usage = "separate";
  std::string chunks = "evalrun";
  std::string fault = "none";
  bool ignore_ignore_eos = false;
  bool no_timings = false;
  std::string answers;  // --answers FILE
};

void AddMock(CLI::App& app, MockOptions& o) {
  CLI::App* m = app.add_subcommand(
      "mock-server", "serve a deterministic OpenAI-compatible stand-in for a model server");
  m->allow_extras();
  MockConfig& c = o.config;
  c.port = 8080;
  m->add_option("--port", c.port, "TCP port on 127.0.0.1 (0 picks a free one; default 8080)");
  m->add_option("--host", c.host, "address to listen on (default 127.0.0.1)");
  m->add_option("--model", c.model, "model id it reports (default evalrun-mock)");
  m->add_option("--ttft-ms", c.ttft_ms, "time to first token in ms (default 50)");
  m->add_option("--prefill-tps", c.prefill_tps, "prompt tokens/s added to TTFT (default 0: none)");
  m->add_option("--decode-tps", c.decode_tps, "tokens/s per stream (default 100; 0: no pacing)");
  m->add_option("--tokens-per-event", c.tokens_per_event,
                "tokens per streamed event after the first (speculative decoding; default 1)");
  m->add_option("--reasoning-tokens", c.reasoning_tokens,
                "tokens sent as reasoning_content before the answer (default 0)");
  m->add_option("--answer-tokens", c.answer_tokens,
                "natural answer length when ignore_eos is not set (default 64)");
  m->add_flag("--ignore-ignore-eos", o.ignore_ignore_eos,
              "imitate a server that does not honour ignore_eos");
  m->add_option("--usage", o.usage, "separate (default) | last | none");
  m->add_option("--chunk-layout", o.chunks,
                "streamed events laid out as evalrun (default, short) | llama.cpp | openai | "
                "sglang send them");
  m->add_flag("--no-timings", o.no_timings, "leave out llama.cpp-style timings");
  m->add_option("--slots", c.slots,
                "as a llama.cpp server with N slots: at most N requests processed at once, the "
                "others wait; /props reports total_slots (default 0: no limit, no /props)")
      ->check(CLI::Range(0, 4096));
  m->add_flag("--prompt-cache", c.prompt_cache,
              "as llama.cpp's prompt cache: a repeated prompt reuses all but its last token, "
              "reported in timings (prompt_n, cache_n) and usage cached_tokens");
  m->add_option("--fault", o.fault, "none | 400 | 500 | drop | stall | malformed");
  m->add_option("--fault-on", c.fault_on,
                "chat request numbers (1-based, comma-separated) that get the fault; default all")
      ->delimiter(',');
  m->add_option("--fault-after", c.fault_after_events,
                "events before drop/stall, or the malformed event's number (default 3)");
  m->add_option("--stall-s", c.stall_s, "seconds a stall lasts (default 5)");
  m->add_option("--max-context", c.max_context,
                "silently cut prompts longer than this many tokens (default 0: never)");
  m->add_flag("--hide-context", c.hide_context,
              "do not report --max-context in /v1/models (the cut is then noticed only after)");
  m->add_flag("--strict-context", c.strict_context,
              "with --max-context, as llama.cpp 0.7 does: refuse a longer prompt (HTTP 400 "
              "exceed_context_size_error) and end an answer when prompt plus answer fill the "
              "context (finish_reason length)");
  m->add_option("--outage-after", c.outage_after,
                "after this many chat requests, be away for --outage-s seconds (default -1: "
                "never; docs/serving.md)");
  m->add_option("--outage-s", c.outage_s, "how long the outage lasts, seconds");
  m->add_option("--outage-status", c.outage_status,
                "the status every route answers during the outage (default 503; 429, 502, 504)");
  m->add_option("--outage-message", c.outage_message,
                "the error message of those answers (default \"Loading model\", llama.cpp's)");
  m->add_flag("--outage-refuse", c.outage_refuse,
              "during the outage refuse connections instead of answering");
  m->add_flag("--refuse-streamed-tools", c.refuse_streamed_tools,
              "answer streamed requests with tools HTTP 500 \"Cannot use tools with stream\" "
              "(llama.cpp before mid-2025)");
  m->add_flag("--tools-require-jinja", c.tools_require_jinja,
              "answer requests with tools HTTP 500 \"tools param requires --jinja flag\" "
              "(llama.cpp b4748 without --jinja)");
  m->add_option("--tool-calls-as-text", c.tool_calls_as_text,
                "hermes | qwen_xml: write scripted tool calls into content (a server that "
                "ignores tools)");
  m->add_option("--answers", o.answers,
                "JSON answer table {\"answers\": [{match, content, reasoning, finish_reason}]}: "
                "the first rule whose match is in the last user message decides the reply")
      ->type_name("FILE");
}

int RunMockCommand(const CLI::App& sub, MockOptions& o) {
  RejectExtras(sub);
  MockConfig& c = o.config;
  if (o.usage == "separate") c.usage = MockUsageStyle::kSeparateChunk;
  else if (o.usage == "last") c.usage = MockUsageStyle::kLastChunk;
  else if (o.usage == "none") c.usage = MockUsageStyle::kNone;
  else throw Error("--usage '" + o.usage + "': expected separate, last or none");
  if (o.chunks == "evalrun") c.chunk_layout = MockChunkLayout::kEvalrun;
  else if (o.chunks == "llama.cpp") c.chunk_layout = MockChunkLayout::kLlamaCpp;
  else if (o.chunks == "openai") c.chunk_layout = MockChunkLayout::kOpenAI;
  else if (o.chunks == "sglang") c.chunk_layout = MockChunkLayout::kSglang;
  else throw Error("--chunk-layout '" + o.chunks +
                   "': expected evalrun, llama.cpp, openai or sglang");
  if (o.fault == "none") c.fault = MockFault::kNone;
  else if (o.fault == "500") c.fault = MockFault::kHttp500;
  else if (o.fault == "400") c.fault = MockFault::kHttp400;
  else if (o.fault == "drop") c.fault = MockFault::kDrop;
  else if (o.fault == "stall") c.fault = MockFault::kStall;
  else if (o.fault == "malformed") c.fault = MockFault::kMalformed;
  else throw Error("--fault '" + o.fault + "': expected none, 400, 500, drop, stall or malformed");
  if (c.tokens_per_event < 1) throw Error("--tokens-per-event must be at least 1");
  if (!c.tool_calls_as_text.empty() && c.tool_calls_as_text != "hermes" &&
      c.tool_calls_as_text != "qwen_xml") {
    throw Error("--tool-calls-as-text '" + c.tool_calls_as_text + "': expected hermes or qwen_xml");
  }
  if (c.outage_after >= 0 && c.outage_s <= 0) {
    throw Error("--outage-after needs --outage-s SECONDS (how long the outage lasts)");
  }
  if (c.decode_tps < 0 || c.ttft_ms < 0 || c.prefill_tps < 0) {
    throw Error("--decode-tps, --ttft-ms and --prefill-tps must not be negative");
  }
  c.honor_ignore_eos = !o.ignore_ignore_eos;
  c.timings = !o.no_timings;
  if (!o.answers.empty()) c.answers = LoadMockAnswers(o.answers);  // errors name the file

  InstallInterruptHandler();
  MockServer server(c);
  server.Start();  // binds (a failure is an Error naming the address) and serves on its thread
  std::cout << "evalrun mock-server listening on " << server.base_url() << std::endl;
  while (!g_stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  server.Stop();
  return 0;
}

}  // namespace

std::string NormalizeEndpoint(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  if (url.size() >= 3 && url.compare(url.size() - 3, 3, "/v1") == 0) url.resize(url.size() - 3);
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

int RunCli(int argc, const char* const* argv, const std::string& build_commit) {
  CLI::App app{"evalrun: how good and how fast is your local model, in one result others can "
               "compare and verify",
               "evalrun"};
  app.set_version_flag("--version", std::string("evalrun ") + kVersion +
                                        (build_commit.empty() ? "" : " (commit " + build_commit + ")"));
  app.require_subcommand(1);
  app.footer("Exit codes: 0 done; 1 done but some requests/tasks ended in error; 2 usage or "
             "configuration error; 3 verification failed; 130 interrupted.");
  SpeedOptions speed;
  MockOptions mock;
  TaskCommandOptions tasks;
  AddSpeed(app, speed);
  AddMock(app, mock);
  AddTaskCommands(app, tasks);
  GradeCommandOptions grading;
  AddGradeCommands(app, grading);
  SuiteOptions suite;
  AddSuite(app, suite);
  RunsOptions runs;
  AddRunCommands(app, runs);
  CompareCommandOptions compare;
  AddCompareCommand(app, compare);
  VerifyOptions verify;
  AddVerifyCommands(app, verify);
  MergeOptions merge;
  AddMergeCommand(app, merge);

  try {
    if (argc > 1 && argv[1][0] != '-') {
      const std::string name = argv[1];
      const auto names = CommandNames(app);
      if (std::find(names.begin(), names.end(), name) == names.end()) {
        const std::string hint = ClosestMatch(name, names);
        throw Error("unknown command '" + name + "'" +
                    (hint.empty() ? "" : ", did you mean '" + hint + "'?") +
                    " (evalrun --help lists the commands)");
      }
    }
    try {
      app.parse(argc, argv);
    } catch (const CLI::Success& e) {
      return app.exit(e);  // --help, --version
    } catch (const CLI::ParseError& e) {
      std::string message = e.what();
      if (message.rfind("A subcommand is required", 0) == 0) {
        message = "a command is required (evalrun --help lists them)";
      }
      throw Error(message);
    }
    for (CLI::App* sub : app.get_subcommands()) {
      if (sub->get_name() == "speed") return RunSpeedCommand(*sub, speed);
      if (sub->get_name() == "mock-server") return RunMockCommand(*sub, mock);
      if (sub->get_name() == "suite") return RunSuiteCommand(*sub, suite);
      RejectExtras(*sub);
      if (sub->get_name() == "hash") return RunHashCommand(tasks);
      if (sub->get_name() == "validate") return RunValidateCommand(tasks);
      if (sub->get_name() == "validate-task") return RunValidateTaskCommand(tasks);
      if (sub->get_name() == "fetch") return RunFetchCommand(tasks);
      if (sub->get_name() == "suites") return RunSuitesCommand();
      if (sub->get_name() == "grade") return RunGradeCommand(grading);
      if (sub->get_name() == "graders") return RunGradersCommand();
      if (sub->get_name() == "runs") return RunRunsCommand(runs);
      if (sub->get_name() == "report") return RunReportCommand(runs);
      if (sub->get_name() == "compare") return RunCompareCommand(compare);
      if (sub->get_name() == "export") return RunExportCommand(verify);
      if (sub->get_name() == "verify") return RunVerifyCommand(verify);
      if (sub->get_name() == "merge") return RunMergeCommand(merge);
    }
    throw Error("a command is required (evalrun --help lists them)");
  } catch (const Error& e) {
    std::cerr << "evalrun: error: " << e.what() << std::endl;
    return static_cast<int>(e.code());
  }
}

}  // namespace evalrun
