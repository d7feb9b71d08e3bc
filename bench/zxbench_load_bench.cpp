// How long loading and verifying a full-size zx-bench bank takes (issue 3, Performance: under
// half a second for 920 entries, about 4.6 MB).
//
// The bank is built from the seven real entries of tests/fixtures/zx-bench/fixtures.json,
// replicated round-robin with distinct ids ("<id>~<n>"), serialised as zx-bench writes its bank
// (JSON.stringify(bank, null, 1): one-space indentation, UTF-8 text). The fixtures average
// about 3 KB that way, the real bank 5 KB (its execution worlds are larger), so to reach the
// real size each replica's promptTemplate is lengthened with copies of itself; each replica's
// scenarioHash is then recomputed so that it verifies. Both banks are timed: the replicas as they
// are, and the full-size one. ImportZxBench (parse, every scenarioHash recomputed over its
// canonical rendering, mapping onto tasks) is timed on steady_clock, several runs each.
//
//   zxbench_load_bench [--fixtures FILE] [--entries N] [--mb SIZE] [--runs N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "plugins/zxbench_importer.h"

namespace {

#ifndef EVALRUN_SOURCE_DIR
#define EVALRUN_SOURCE_DIR "."
#endif

struct Options {
  std::string fixtures = EVALRUN_SOURCE_DIR "/tests/fixtures/zx-bench/fixtures.json";
  int entries = 920;       // the bank at 8e0adf68
  double megabytes = 4.6;  // its size
  int runs = 7;
};

constexpr double kGoalSeconds = 0.5;
bool g_goal_missed = false;

Options ParseOptions(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--fixtures" && has_value) {
      options.fixtures = argv[++i];
    } else if (arg == "--entries" && has_value) {
      options.entries = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--mb" && has_value) {
      options.megabytes = std::atof(argv[++i]);
    } else if (arg == "--runs" && has_value) {
      options.runs = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(
          stderr,
          "usage: zxbench_load_bench [--fixtures FILE] [--entries N] [--mb SIZE] [--runs N]\n");
      std::exit(2);
    }
  }
  return options;
}

nlohmann::json ReadFixtures(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw evalrun::Error("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str());
}

// `entries` replicas of the fixtures; with `target_bytes` > 0, prompts lengthened to reach it.
std::string BuildBank(const nlohmann::json& fixtures, int entries, std::size_t target_bytes) {
  nlohmann::json bank = nlohmann::json::array();
  for (int n = 0; n < entries; ++n) {
    nlohmann::json entry = fixtures[static_cast<std::size_t>(n) % fixtures.size()];
    entry["id"] = entry["id"].get<std::string>() + "~" + std::to_string(n);
    bank.push_back(std::move(entry));
  }
  const std::size_t base_bytes = bank.dump(1).size() + 1;
  if (target_bytes > base_bytes) {
    const std::size_t extra = (target_bytes - base_bytes) / static_cast<std::size_t>(entries);
    for (nlohmann::json& entry : bank) {
      const std::string original = entry["promptTemplate"].get<std::string>();
      const std::string escaped = nlohmann::json(original).dump();  // as it is written out
      std::string prompt = original;
      // Whole copies, stopping at the one that would overshoot more than it falls short.
      for (std::size_t added = 0; added + escaped.size() / 2 < extra; added += escaped.size()) {
        prompt += "\n" + original;
      }
      entry["promptTemplate"] = prompt;
    }
  }
  for (nlohmann::json& entry : bank) entry["scenarioHash"] = evalrun::ZxScenarioHash(entry);
  return bank.dump(1) + "\n";  // ensure_ascii off: UTF-8 text, as zx-bench writes it
}

void TimeImport(const std::string& what, const std::string& bank, int runs) {
  std::printf("%s: %.2f MB\n", what.c_str(), static_cast<double>(bank.size()) / 1e6);
  std::vector<double> seconds;
  std::size_t tasks = 0;
  for (int run = 0; run < runs; ++run) {
    const auto start = std::chrono::steady_clock::now();
    const evalrun::Suite suite = evalrun::ImportZxBench(bank, evalrun::kZxBenchBankPath);
    const auto stop = std::chrono::steady_clock::now();
    tasks = suite.tasks.size();
    seconds.push_back(std::chrono::duration<double>(stop - start).count());
  }
  double parse_min = 1e9;  // nlohmann's parse alone, for where the time goes
  for (int run = 0; run < runs; ++run) {
    const auto start = std::chrono::steady_clock::now();
    const nlohmann::json parsed = nlohmann::json::parse(bank);
    const auto stop = std::chrono::steady_clock::now();
    parse_min = std::min(parse_min, std::chrono::duration<double>(stop - start).count());
  }
  std::sort(seconds.begin(), seconds.end());
  const std::size_t n = seconds.size();
  const double median = n % 2 == 1 ? seconds[n / 2] : (seconds[n / 2 - 1] + seconds[n / 2]) / 2;
  std::printf(
      "  ImportZxBench (parse, verify %zu hashes, map): min %.3f s, median %.3f s, "
      "max %.3f s over %zu runs; goal < %.1f s: %s\n",
      tasks, seconds.front(), median, seconds.back(), n, kGoalSeconds,
      median < kGoalSeconds ? "met" : "NOT met");
  std::printf("  of which nlohmann::json::parse alone: min %.3f s\n", parse_min);
  if (median >= kGoalSeconds) g_goal_missed = true;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = ParseOptions(argc, argv);
  try {
    const nlohmann::json fixtures = ReadFixtures(options.fixtures);
    std::printf("%d entries replicated from the %zu entries of %s\n", options.entries,
                fixtures.size(), options.fixtures.c_str());
    TimeImport("fixture-sized replicas", BuildBank(fixtures, options.entries, 0), options.runs);
    const auto target = static_cast<std::size_t>(options.megabytes * 1e6);
    TimeImport("full-size bank (prompts lengthened)", BuildBank(fixtures, options.entries, target),
               options.runs);
    return g_goal_missed ? 1 : 0;
  } catch (const evalrun::Error& e) {
    std::fprintf(stderr, "zxbench_load_bench: error: %s\n", e.what());
    return 2;
  }
}
