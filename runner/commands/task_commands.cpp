#include "runner/commands/task_commands.h"

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>

#include <CLI/CLI.hpp>

#include "core/error.h"
#include "graders/grader.h"
#include "graders/native/repo_tests.h"
#include "plugins/sandbox.h"
#include "runner/suite_loader.h"
#include "tasks/git_source.h"
#include "tasks/repo_workspace.h"
#include "tasks/shipped_suites.h"
#include "tasks/task_yaml.h"

namespace evalrun {

void AddTaskCommands(CLI::App& app, TaskCommandOptions& o) {
  CLI::App* hash = app.add_subcommand("hash", "compute task hashes; --write puts them into the YAML");
  hash->allow_extras();
  hash->add_option("FILE", o.hash_files, "suite.yaml or task YAML files")->required();
  hash->add_flag("--write", o.hash_write,
                 "insert or update each task's hash: line in place (comments and layout kept)");

  CLI::App* validate =
      app.add_subcommand("validate", "load a suite, check its schema and every hash, print counts");
  validate->allow_extras();
  validate->add_option("SUITE", o.validate_suite, "NAME@REV, PATH@REV or PATH")->required();
  validate->add_option("--judge-endpoint", o.validate_judge_endpoint,
                       "count judged tasks as runnable (a run with --judge-endpoint URL runs "
                       "them; the judge is not asked here)");
  validate->add_flag("--sandbox-network", o.validate_sandbox_network,
                     "count tasks whose tests install packages as runnable (a run with "
                     "--sandbox-network runs them)");
  validate->add_option("--suite-repo", o.suite_repo,
                       "use this local clone or mirror for a registered suite name");

  CLI::App* validate_task = app.add_subcommand(
      "validate-task",
      "check a repository task: fail_to_pass tests fail at the base, all pass with the gold patch");
  validate_task->allow_extras();
  validate_task->add_option("SUITE", o.validate_task_suite, "NAME@REV, PATH@REV or PATH")
      ->required();
  validate_task->add_option("--task", o.validate_task_id, "the task id")->required();
  validate_task->add_option("--suite-repo", o.suite_repo,
                            "use this local clone or mirror for a registered suite name");
  validate_task->add_option("--repo-mirror", o.repo_mirrors,
                            "URL=PATH: a local clone to use for a repository task's URL "
                            "(repeatable; docs/serving.md)");

  CLI::App* fetch = app.add_subcommand(
      "fetch", "clone every repository a suite's tasks need into the cache, verify their commits");
  fetch->allow_extras();
  fetch->add_option("SUITE", o.fetch_suite, "NAME@REV, PATH@REV or PATH")->required();
  fetch->add_option("--suite-repo", o.suite_repo,
                    "use this local clone or mirror for a registered suite name");

  app.add_subcommand("suites", "list known suite names and where they resolve")->allow_extras();
}

int RunHashCommand(const TaskCommandOptions& o) {
  const std::vector<HashLine> lines = HashFiles(o.hash_files, o.hash_write, NativeGraderVersions());
  int changed = 0;
  for (const HashLine& line : lines) {
    std::cout << line.hash << "  " << line.task_id << "  " << line.file
              << (line.changed ? "  (written)" : "") << "\n";
    changed += line.changed ? 1 : 0;
  }
  if (o.hash_write) {
    std::cerr << "evalrun: " << changed << " of " << lines.size() << " hash lines written"
              << std::endl;
  }
  return 0;
}

namespace {

void PrintCounts(const char* heading, const std::map<std::string, int>& counts) {
  size_t width = std::string(heading).size();
  for (const auto& [name, n] : counts) width = std::max(width, name.size());
  std::printf("  %-*s  tasks\n", static_cast<int>(width), heading);
  for (const auto& [name, n] : counts) {
    std::printf("  %-*s  %5d\n", static_cast<int>(width), name.c_str(), n);
  }
}

}  // namespace

int RunValidateCommand(const TaskCommandOptions& o) {
  ResolveOptions options;
  options.suite_repo = o.suite_repo;
  Suite suite = LoadSuite(o.validate_suite, options).suite;
  // The same skips a run makes: judged tasks need --judge-endpoint.
  if (o.validate_judge_endpoint.empty()) MarkJudgedTasks(suite);
  if (!o.validate_sandbox_network) MarkNetworkTasks(suite);
  std::map<std::string, int> by_dimension, by_grader, skipped;
  for (const Task& task : suite.tasks) {
    ++by_dimension[task.dimension];
    ++by_grader[task.grader.value("type", std::string("(none)"))];
    if (!task.skip_reason.empty()) ++skipped[task.skip_reason];
  }
  std::printf("suite %s (%s): %zu tasks, every hash verified\n", suite.name.c_str(),
              suite.pinned() ? ("commit " + suite.commit + ", tree " + suite.tree).c_str()
                             : "unpinned: read from disk",
              suite.tasks.size());
  PrintCounts("dimension", by_dimension);
  PrintCounts("grader", by_grader);
  int skipped_total = 0;
  for (const auto& [reason, n] : skipped) skipped_total += n;
  std::printf("runnable here: %zu, skipped: %d\n", suite.tasks.size() - skipped_total,
              skipped_total);
  if (!skipped.empty()) PrintCounts("skipped because", skipped);
  return 0;
}

namespace {

// "a, b and 2 more" of the tests in `statuses` whose status is (want_pass ? not passed : passed).
std::string Offenders(const std::map<std::string, std::string>& statuses, bool want_pass) {
  std::string out;
  int shown = 0, total = 0;
  for (const auto& [name, status] : statuses) {
    if ((status == "passed") == want_pass) continue;
    ++total;
    if (shown < 5) {
      out += (out.empty() ? "" : ", ") + name + " (" + status + ")";
      ++shown;
    }
  }
  if (total > shown) out += " and " + std::to_string(total - shown) + " more";
  return out;
}

// Prints one check's line; returns whether it held.
bool Check(const char* stage, const char* group, const std::map<std::string, std::string>& statuses,
           bool want_pass) {
  const std::string offenders = Offenders(statuses, want_pass);
  const char* expected = want_pass ? "pass" : "fail";
  if (offenders.empty()) {
    std::printf("ok   %s: %zu %s test%s %s\n", stage, statuses.size(), group,
                statuses.size() == 1 ? "" : "s", expected);
    return true;
  }
  std::printf("FAIL %s: %s tests must %s: %s\n", stage, group, expected, offenders.c_str());
  return false;
}

}  // namespace

int RunValidateTaskCommand(const TaskCommandOptions& o) {
  SetRepoMirrors(ParseRepoMirrors(o.repo_mirrors));
  ResolveOptions options;
  options.suite_repo = o.suite_repo;
  const LoadedSuite loaded = LoadSuite(o.validate_task_suite, options);
  const Task* found = nullptr;
  std::vector<std::string> ids;
  for (const Task& task : loaded.suite.tasks) {
    ids.push_back(task.id);
    if (task.id == o.validate_task_id) found = &task;
  }
  if (found == nullptr) {
    const std::string best = ClosestMatch(o.validate_task_id, ids);
    throw Error("no task '" + o.validate_task_id + "' in " + o.validate_task_suite +
                (best.empty() ? "" : ", did you mean '" + best + "'?"));
  }
  if (!found->agent.is_object() || found->agent.value("kind", "") != "repo") {
    throw Error("task '" + found->id + "' is not a repository task (agent.kind: repo)");
  }
  const std::unique_ptr<Sandbox> sandbox = MakeBubblewrapSandbox();
  if (auto why = sandbox->Unavailable()) {
    throw Error("validate-task runs the tests in the sandbox: " + *why);
  }
  const RepoTask task = ParseRepoTask(found->agent);
  const ReadSuiteFile read_file = [&loaded](const std::string& path) {
    return loaded.ReadTaskFile(path);
  };
  std::printf("task %s: %zu fail_to_pass, %zu pass_to_pass, test_cmd: %s\n", found->id.c_str(),
              task.fail_to_pass.size(), task.pass_to_pass.size(), task.test_cmd.c_str());
  bool valid = true;
  // One stage: a fresh workspace, `patch` applied, the tests run; prints its lines.
  const auto stage = [&](const char* name, const std::string& patch, bool f2p_pass) {
    const std::unique_ptr<RepoWorkspace> workspace = RepoWorkspace::Create(task, read_file);
    if (const std::string why = workspace->Apply(patch); !why.empty()) {
      std::printf("FAIL %s: the gold patch does not apply: %s\n", name, why.c_str());
      valid = false;
      return;
    }
    const RepoTestRun run = RunRepoTests(task, *workspace, read_file, *sandbox);
    if (!run.invalid.empty() || run.timed_out) {
      std::printf("FAIL %s: invalid run: %s\n%s\n", name,
                  run.timed_out ? "the tests ran out of time" : run.invalid.c_str(),
                  OutputTail(run.log, 2000).c_str());
      valid = false;
      return;
    }
    valid = Check(name, "fail_to_pass", run.fail_to_pass, f2p_pass) && valid;
    valid = Check(name, "pass_to_pass", run.pass_to_pass, true) && valid;
  };
  stage("base", "", false);
  if (task.gold_patch.empty()) {
    std::printf("FAIL gold: the task has no gold_patch to check against\n");
    valid = false;
  } else {
    const std::optional<std::string> gold = read_file(task.gold_patch);
    if (!gold) {
      std::printf("FAIL gold: cannot read %s\n", task.gold_patch.c_str());
      valid = false;
    } else {
      stage("gold", *gold, true);
    }
  }
  std::printf(valid ? "task %s is valid\n" : "task %s is NOT valid\n", found->id.c_str());
  return valid ? 0 : 3;
}

namespace {

// Bytes in the files under `dir` (a cache folder); 0 when it cannot be read.
uintmax_t FolderBytes(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code error;
  uintmax_t total = 0;
  for (fs::recursive_directory_iterator it(dir, error), end; !error && it != end;
       it.increment(error)) {
    if (it->is_regular_file(error)) total += it->file_size(error);
  }
  return total;
}

std::string MiB(uintmax_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return text;
}

}  // namespace

int RunFetchCommand(const TaskCommandOptions& o) {
  ResolveOptions options;
  options.suite_repo = o.suite_repo;
  const LoadedSuite loaded = LoadSuite(o.fetch_suite, options);
  // The tasks of each repository, in the order the suite first names the repository.
  std::vector<std::string> urls;
  std::map<std::string, std::vector<std::pair<std::string, RepoTask>>> by_url;
  for (const Task& task : loaded.suite.tasks) {
    if (!task.agent.is_object() || task.agent.value("kind", "") != "repo") continue;
    RepoTask repo = ParseRepoTask(task.agent);
    if (repo.url.empty()) continue;  // a folder of the suite: nothing to fetch
    if (by_url.find(repo.url) == by_url.end()) urls.push_back(repo.url);
    by_url[repo.url].emplace_back(task.id, std::move(repo));
  }
  if (urls.empty()) {
    std::printf("suite %s needs no repositories (no task has agent.repo.url)\n",
                loaded.suite.name.c_str());
    return 0;
  }
  bool all_ok = true;
  size_t verified = 0, tasks = 0;
  uintmax_t total = 0;
  for (const std::string& url : urls) {
    std::string dir;
    std::string unreachable;  // why the first clone or fetch failed: not retried for each task
    for (const auto& [id, repo] : by_url[url]) {
      ++tasks;
      if (!unreachable.empty()) {
        std::printf("FAIL %s: %s\n", id.c_str(), unreachable.c_str());
        all_ok = false;
        continue;
      }
      try {
        // Fetches only when the commit is not cached yet (a commit id never moves).
        dir = EnsureCachedClone(url, repo.base_commit);
        const std::unique_ptr<GitTreeFiles> commit = OpenRevision(dir, repo.base_commit, url);
        if (commit->commit() != repo.base_commit) {
          std::printf("FAIL %s: %s is not a commit in %s\n", id.c_str(), repo.base_commit.c_str(),
                      url.c_str());
          all_ok = false;
        } else if (commit->tree() != repo.base_tree) {
          std::printf("FAIL %s: commit %s has tree %s, the task says %s\n", id.c_str(),
                      repo.base_commit.substr(0, 12).c_str(), commit->tree().c_str(),
                      repo.base_tree.c_str());
          all_ok = false;
        } else {
          std::printf("ok   %s: commit %s has tree %s\n", id.c_str(),
                      repo.base_commit.substr(0, 12).c_str(), repo.base_tree.substr(0, 12).c_str());
          ++verified;
        }
      } catch (const Error& e) {
        std::printf("FAIL %s: %s\n", id.c_str(), e.what());
        if (dir.empty()) unreachable = e.what();
        all_ok = false;
      }
    }
    if (!dir.empty()) {
      const uintmax_t bytes = FolderBytes(dir);
      total += bytes;
      std::printf("     %s -> %s (%s)\n", url.c_str(), dir.c_str(), MiB(bytes).c_str());
    }
  }
  std::printf("%zu repositor%s, %zu of %zu tasks verified, %s in the cache\n", urls.size(),
              urls.size() == 1 ? "y" : "ies", verified, tasks, MiB(total).c_str());
  return all_ok ? 0 : 3;
}

int RunSuitesCommand() {
  for (const std::string& name : ShippedSuiteNames()) {
    std::printf("%-16s %-8s %s  (shipped)\n", name.c_str(), "evalrun", ShippedSuitePath(name).c_str());
  }
  for (const RegistryEntry& e : LoadRegistry()) {
    std::printf("%-16s %-8s %s%s%s  (%s)\n", e.name.c_str(), e.format.c_str(), e.url.c_str(),
                e.path.empty() ? "" : " : ", e.path.c_str(), e.origin.c_str());
  }
  std::printf("\nSUITE is NAME@REV (a registered name above at a commit, branch or tag), a shipped "
              "NAME, PATH@REV (a folder in a git repository, read from that commit) or PATH (read "
              "from disk, unpinned).\n");
  return 0;
}

}  // namespace evalrun
