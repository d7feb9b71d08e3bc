#pragma once
// `evalrun suite`: the overnight capability-plus-speed run (DESIGN.md section 3). Selects the
// tasks, opens or resumes a run in the results store, runs every task at a fixed concurrency
// (per endpoint, over one or several endpoints of one model) while recording each request,
// grades, commits one transaction per task, pauses while an endpoint is away, runs the quick
// speed protocol after the tasks (on each endpoint), and writes the report.
#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "core/shard.h"
#include "core/task.h"
#include "graders/grader.h"
#include "plugins/openai_backend.h"
#include "plugins/server_probe.h"
#include "plugins/tool_call_text.h"
#include "results/run_data.h"
#include "tasks/git_source.h"

namespace evalrun {

struct SuiteRunConfig {
  std::string suite_spec;                // SUITE as given
  ResolveOptions resolve;                // --suite-repo
  std::vector<std::string> repo_mirrors; // --repo-mirror URL=PATH (tasks/git_source.h)
  std::string endpoint;                  // base URL, normalised (the first, with several)
  std::string model;                     // "" -> the server's first model
  int concurrency = 1;                   // tasks in flight at once (at `endpoint`)
  // Further endpoints serving the same model (--endpoint repeated; docs/serving.md, "Several
  // endpoints"), in the order given after `endpoint`, each with its own concurrency. Empty: one
  // endpoint, the run as it always was.
  struct MoreEndpoint {
    std::string url;                     // base URL, normalised
    int concurrency = 1;
  };
  std::vector<MoreEndpoint> more_endpoints;
  // Run endpoints whose servers differ (model, build, context, weights) together anyway; the
  // differences are recorded with the run and stated in its report.
  bool allow_mixed_endpoints = false;
  int64_t max_tokens = -1;               // for tasks that set none; -1: none sent
  std::optional<Thinking> thinking;      // overrides the tasks' own setting when given
  std::vector<std::string> filters;      // "dimension=X", "id=GLOB", "difficulty=X", "tag=X"
  int64_t limit = -1;                    // first N selected tasks; -1: all
  std::optional<int64_t> quick;          // N tasks per dimension, seeded sample
  uint64_t seed = 0;                     // for --quick, and the shard split
  // --shard I/N (or EVALRUN_SHARD, or auto/N under Slurm or Kubernetes; core/shard.h): run only
  // this shard's part of the selected plan; none: the whole plan.
  std::optional<ShardSpec> shard;
  std::string db = "evalrun.db";
  std::optional<std::string> resume;     // "" = the latest unfinished suite run
  bool no_speed = false;
  double wait_endpoint_s = 30 * 60;      // how long to wait for an endpoint that went away
  std::map<std::string, std::string> labels;
  std::string out_dir;                   // "" -> evalrun-reports/<run id>
  bool quiet = false;
  bool unsafe_no_sandbox = false;
  // --sandbox-network: tests that need the network (zx-bench projects that install packages,
  // Grader::NeedsNetwork) run on the host's network; without it they are skipped saying so.
  // Recorded in the run's settings.
  bool sandbox_network = false;
  // Agent tasks: where tool calls are read from when a reply has no native tool_calls
  // (--tool-format; plugins/tool_call_text.h). Recorded in the run's settings.
  ToolCallFormat tool_format = ToolCallFormat::kAuto;
  std::optional<ServerKind> server_kind;
  // The LLM judge for judged graders (zx-bench's hallucination_resistance; runner/judge.h):
  // base URL, normalised ("" none: their tasks are skipped), and model ("" the judge server's
  // first). Recorded in the run's settings.
  std::string judge_endpoint;
  std::string judge_model;
  double idle_timeout_s = 120;           // longest silence inside one response
  double connect_timeout_s = 10;
  int max_retries = 3;                   // per task, for environment failures, while reachable
  double retry_backoff_s = 1;            // first backoff; doubles each time
  double probe_interval_s = 2;           // while paused
  double interrupt_grace_s = 5;          // first Ctrl-C: in-flight requests get this long
  int64_t log_every_tasks = 25;          // without a terminal: a line every N tasks ...
  double log_every_s = 60;               // ... or every this many seconds
  bool capture_environment = true;
  std::string command_line;              // for the resume hint
};

// Task selection (also used by tests): filter, then --quick or --limit. Skipped tasks (a
// skip_reason) are kept: they are recorded with their reason. Throws Error for a bad filter
// ("--filter 'dimesion=x': unknown key 'dimesion', did you mean 'dimension'?").
std::vector<const Task*> SelectTasks(const Suite& suite, const SuiteRunConfig& config);

// The shard record of `config.shard` over the whole selected plan `selected` (core/shard.h): what
// settings.shard holds. `config.shard` must be set.
ShardRecord MakeShardRecord(const std::vector<const Task*>& selected,
                            const SuiteRunConfig& config);
// The tasks of `selected` that the split rule gives `config.shard`, in plan order (all of them
// when config.shard is not set).
std::vector<const Task*> ShardOfPlan(const std::vector<const Task*>& selected,
                                     const SuiteRunConfig& config);

// The per-request total deadline: 120 s + prompt tokens / 50 + max_tokens x 1 s (1 token/s is
// slower than any rig evalrun is meant for); unknown max_tokens counts as 32,768.
double RequestDeadline(int64_t prompt_tokens, int64_t max_tokens);

// One task, one request, graded: what `evalrun verify --spot` reruns. No retries and no pauses:
// a request that fails leaves a TaskResult whose final request says why (grade env_error or
// timeout). `context` carries the task's files and the sandbox.
TaskResult RunSingleTask(const Task& task, const SuiteRunConfig& config, const ServerInfo& server,
                         const std::string& model, const GradeContext& context);

// Runs (or resumes) a suite run; returns the exit code (0, 1, 2, 130). `stop` is the first
// Ctrl-C; `log` receives human lines (stderr). Throws Error for configuration problems before
// anything runs.
int RunSuite(const SuiteRunConfig& config, const std::atomic<bool>* stop, std::ostream& log);

}  // namespace evalrun
