// Grading throughput (issue 4, "Performance"): 10,000 answer_line outputs and 10,000
// json_fields outputs, each set through GradeOutput (extraction, status rules, the grader).
// Goal: each set under one second. Prints one line per set; exits 1 when a goal is missed.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "graders/grader.h"

namespace {

struct Figure {
  double seconds = 0;
  int passed = 0;
};

Figure Time(const evalrun::Task& task, const std::vector<evalrun::Output>& outputs) {
  const auto start = std::chrono::steady_clock::now();
  Figure figure;
  for (const evalrun::Output& output : outputs) {
    figure.passed += evalrun::GradeOutput(task, output, {}).passed ? 1 : 0;
  }
  figure.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return figure;
}

void Print(const char* name, size_t count, const Figure& f) {
  std::printf("%-12s %6zu outputs  %8.3f ms  %8.2f us/output  %6d passed  goal < 1 s: %s\n", name,
              count, f.seconds * 1e3, f.seconds * 1e6 / static_cast<double>(count), f.passed,
              f.seconds < 1.0 ? "ok" : "MISSED");
}

}  // namespace

int main() {
  constexpr int kCount = 10'000;
  // Outputs shaped like a reasoning model's: a paragraph of working, a think block, the answer.
  const std::string working =
      "Let me work through this step by step. First we compute the subtotal, then the tax, "
      "and finally we round to the nearest whole number as the question asks.\n";

  evalrun::Task answer_task;
  answer_task.id = "math";
  answer_task.grader = {{"type", "answer_line"}, {"answer", 1234.5}, {"unit", "km"}};
  std::vector<evalrun::Output> answer_outputs;
  for (int i = 0; i < kCount; ++i) {
    const std::string value = i % 2 == 0 ? "1,234.50" : std::to_string(1000 + i);
    answer_outputs.push_back(
        {"<think>" + working + "</think>\n" + working + working + "**ANSWER:** " + value + " km",
         "", "stop"});
  }

  evalrun::Task json_task;
  json_task.id = "extract";
  json_task.grader = {{"type", "json_fields"},
                      {"fields",
                       {{"order_id", 4471},
                        {"customer", "Maria Chen"},
                        {"date", "2024-03-14"},
                        {"quantity", 3},
                        {"unit_price", 12.5}}}};
  std::vector<evalrun::Output> json_outputs;
  for (int i = 0; i < kCount; ++i) {
    const std::string id = i % 2 == 0 ? "4471" : std::to_string(i);
    json_outputs.push_back({"Here is the order:\n```json\n{\"order_id\": " + id +
                                ", \"customer\": \"Maria Chen\", \"date\": \"2024-03-14\", "
                                "\"quantity\": 3, \"unit_price\": 12.50}\n```\n",
                            "", "stop"});
  }

  // Regex patterns are compiled once and cached (graders/native/regex.cpp); this set shows the cost of
  // a match with the limits set up per call.
  evalrun::Task regex_task;
  regex_task.id = "follow";
  regex_task.grader = {{"type", "regex"}, {"pattern", "\\n-- end\\s*$"}};
  std::vector<evalrun::Output> regex_outputs;
  for (int i = 0; i < kCount; ++i) {
    regex_outputs.push_back({working + (i % 2 == 0 ? "\n-- end" : "\n-- fin"), "", "stop"});
  }

  const Figure answer_figure = Time(answer_task, answer_outputs);
  const Figure json_figure = Time(json_task, json_outputs);
  Print("answer_line", answer_outputs.size(), answer_figure);
  Print("json_fields", json_outputs.size(), json_figure);
  Print("regex", regex_outputs.size(), Time(regex_task, regex_outputs));
  return answer_figure.seconds < 1.0 && json_figure.seconds < 1.0 ? 0 : 1;
}
