#include "runner/suite_loader.h"

#include "core/error.h"
#include "graders/grader.h"
#include "plugins/zxbench_importer.h"
#include "tasks/task_yaml.h"

namespace evalrun {

std::optional<std::string> LoadedSuite::ReadTaskFile(const std::string& path) const {
  if (!files) return std::nullopt;
  return files->Read(root.empty() ? path : root + "/" + path);
}

LoadedSuite LoadSuite(const std::string& spec, const ResolveOptions& options) {
  ResolvedSuite resolved = ResolveSuite(spec, options);
  Suite suite;
  if (resolved.format == "zxbench") {
    // The bank is one file: the path itself, or data/scenarios/benchmark.json below the folder.
    std::string bank = resolved.path;
    std::optional<std::string> bytes = resolved.files->Read(bank);
    if (!bytes) {
      bank = bank.empty() ? kZxBenchBankPath : bank + "/" + kZxBenchBankPath;
      bytes = resolved.files->Read(bank);
    }
    if (!bytes) {
      throw Error(resolved.files->Describe() + ": no zx-bench bank at '" + bank + "'");
    }
    suite = ImportZxBench(*bytes, resolved.files->Describe() + ":" + bank);
    // Entries zx-bench can grade deterministically but evalrun has no grader for yet are
    // reported as skipped with that reason, never silently dropped or passed.
    for (Task& task : suite.tasks) {
      const std::string type = task.grader.value("type", "");
      if (task.skip_reason.empty() && GraderRegistry::Builtin().Find(type) == nullptr) {
        task.skip_reason = "evalrun has no grader for " + type + " yet";
      }
    }
  } else if (resolved.format == "evalrun") {
    suite = LoadEvalrunSuite(*resolved.files, resolved.path, NativeGraderVersions());
  } else {
    throw Error("suite '" + spec + "': unknown format '" + resolved.format +
                "' (formats: evalrun, zxbench)");
  }
  suite.spec = spec;
  suite.repo = resolved.repo;
  suite.path = resolved.path;
  suite.commit = resolved.commit;
  suite.tree = resolved.tree;
  CheckGraderSpecs(suite);  // configuration errors surface at load, naming the task
  MarkUnrunnableTasks(suite);  // what no answer could be graded for here: skipped, not asked
  LoadedSuite loaded;
  loaded.suite = std::move(suite);
  loaded.root = resolved.format == "evalrun" ? resolved.path : "";
  loaded.files = std::move(resolved.files);
  return loaded;
}

}  // namespace evalrun
