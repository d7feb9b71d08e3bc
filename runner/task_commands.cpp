#include "runner/task_commands.h"

#include <cstdio>
#include <iostream>
#include <map>

#include <CLI/CLI.hpp>

#include "core/error.h"
#include "graders/grader.h"
#include "runner/suite_loader.h"
#include "tasks/git_source.h"
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
  validate->add_option("--suite-repo", o.suite_repo,
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
  const Suite suite = LoadSuite(o.validate_suite, options).suite;
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

int RunSuitesCommand() {
  for (const RegistryEntry& e : LoadRegistry()) {
    std::printf("%-16s %-8s %s%s%s  (%s)\n", e.name.c_str(), e.format.c_str(), e.url.c_str(),
                e.path.empty() ? "" : " : ", e.path.c_str(), e.origin.c_str());
  }
  std::printf("\nSUITE is NAME@REV (a name above at a commit, branch or tag), PATH@REV (a folder in "
              "a git repository, read from that commit) or PATH (read from disk, unpinned).\n");
  return 0;
}

}  // namespace evalrun
