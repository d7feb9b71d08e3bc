#include "results/speed_report.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/metrics.h"
#include "results/report_text.h"

// Numbers: markdown through fmt's "{:.Nf}", csv through fmt's "{}" (shortest representation that
// reads back to the same double), json and jsonl through nlohmann. None of them consults the
// locale, so a German desktop still writes "1234.5" (STYLE.md 8).

namespace evalrun {
namespace {

using report_text::Child;
using report_text::Fixed;
using report_text::GpuCounts;
using report_text::Join;
using report_text::JsonText;
using report_text::kAbsent;
using report_text::MdText;
using report_text::PrefillCell;

using json = nlohmann::json;
using ordered_json = nlohmann::ordered_json;

// The format registry (STYLE.md 6).
struct FormatEntry {
  std::string_view name;
  SpeedFormat format;
};
constexpr std::array<FormatEntry, 4> kFormats = {{
    {"md", SpeedFormat::kMarkdown},
    {"json", SpeedFormat::kJson},
    {"csv", SpeedFormat::kCsv},
    {"jsonl", SpeedFormat::kJsonl},
}};

// The metric columns of csv and jsonl, in this order whatever the data holds, so that files from
// different runs share one header.
constexpr std::array<std::string_view, 16> kFlatMetrics = {
    "ttft_ms",           "ttfo_ms",           "e2e_ms",         "prefill_tps",
    "decode_tps",        "tpot_ms",           "itl_ms",         "tokens_per_chunk",
    "aggregate_tps",     "uni_aggregate_tps", "uni_decode_tps", "server_prefill_tps",
    "server_decode_tps", "draft_acceptance",  "prompt_tokens",  "completion_tokens",
};
constexpr std::array<std::string_view, 7> kFlatStats = {"count", "mean", "median", "min",
                                                        "max",   "p90",  "p99"};

// ---- small helpers shared by the formatters -------------------------------------------------

// Text from a server may be invalid UTF-8. nlohmann's replace handler is the project's one UTF-8
// validator: a round trip through it replaces every invalid byte with U+FFFD.
std::string ValidUtf8(std::string_view text) {
  if (std::all_of(text.begin(), text.end(), [](char c) { return (c & 0x80) == 0; })) {
    return std::string(text);
  }
  const std::string quoted =
      json(std::string(text)).dump(-1, ' ', false, json::error_handler_t::replace);
  return json::parse(quoted).get<std::string>();
}

const Summary* FindMetric(const SpeedTest& test, std::string_view name) {
  const auto it = test.metrics.find(std::string(name));
  if (it == test.metrics.end() || it->second.count == 0) return nullptr;
  return &it->second;
}

std::optional<double> MetricMedian(const SpeedTest& test, std::string_view name) {
  const Summary* s = FindMetric(test, name);
  return s != nullptr ? std::optional<double>(s->median) : std::nullopt;
}

std::optional<double> MetricMean(const SpeedTest& test, std::string_view name) {
  const Summary* s = FindMetric(test, name);
  return s != nullptr ? std::optional<double>(s->mean) : std::nullopt;
}

int64_t MetricCount(const SpeedTest& test, std::string_view name) {
  const Summary* s = FindMetric(test, name);
  return s != nullptr ? s->count : 0;
}

std::string ServerModel(const SpeedResult& result) {
  return JsonText(result.server, "model");
}

// "sglang 0.5.2", "llama.cpp b6000", "" when neither is known.
std::string ServerBuild(const SpeedResult& result) {
  std::vector<std::string> parts;
  for (const char* key : {"kind", "build"}) {
    if (std::string text = JsonText(result.server, key); !text.empty()) parts.push_back(text);
  }
  return Join(parts, " ");
}

// ---- markdown ------------------------------------------------------------------------------

// Columns a terminal gives a code point: 2 for East Asian wide and fullwidth characters, 0 for
// combining marks, 1 otherwise. Only pads the raw text; a forum renders the table either way.
int CodePointWidth(char32_t cp) {
  if (cp >= 0x0300 && cp <= 0x036F) return 0;
  constexpr std::array<std::pair<char32_t, char32_t>, 14> kWide = {{
      {0x1100, 0x115F},
      {0x2E80, 0x303E},
      {0x3041, 0x33FF},
      {0x3400, 0x4DBF},
      {0x4E00, 0x9FFF},
      {0xA000, 0xA4CF},
      {0xAC00, 0xD7A3},
      {0xF900, 0xFAFF},
      {0xFE30, 0xFE4F},
      {0xFF00, 0xFF60},
      {0xFFE0, 0xFFE6},
      {0x1F300, 0x1F64F},
      {0x1F900, 0x1F9FF},
      {0x20000, 0x3FFFD},
  }};
  for (const auto& [lo, hi] : kWide) {
    if (cp >= lo && cp <= hi) return 2;
  }
  return 1;
}

// Display width of valid UTF-8 (callers pass text through ValidUtf8 first).
int DisplayWidth(std::string_view text) {
  int width = 0;
  for (size_t i = 0; i < text.size();) {
    const auto lead = static_cast<unsigned char>(text[i]);
    const size_t length = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
    char32_t cp = length == 1   ? lead
                  : length == 2 ? (lead & 0x1F)
                  : length == 3 ? (lead & 0x0F)
                                : (lead & 0x07);
    for (size_t k = 1; k < length && i + k < text.size(); ++k) {
      cp = (cp << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
    }
    width += CodePointWidth(cp);
    i += length;
  }
  return width;
}

// Text shown verbatim as inline code (endpoint, labels). Inside a code span nothing is escaped,
// so a backtick in the text needs the double-backtick form.
std::string MdCode(std::string_view raw) {
  std::string text = ValidUtf8(raw);
  for (char& c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) c = ' ';
  }
  if (text.find('`') == std::string::npos) return "`" + text + "`";
  return "`` " + text + " ``";
}

enum class Align { kLeft, kRight };
struct MdColumn {
  std::string header;
  Align align;
};

// A GitHub-flavoured markdown table with its columns padded to one width, like llama-bench's,
// so the raw text reads as a table in a terminal too. Cells are raw text; this escapes them.
std::string MdTable(const std::vector<MdColumn>& columns,
                    const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::vector<std::string>> cells;
  std::vector<int> widths(columns.size(), 3);
  auto measure = [&widths](const std::vector<std::string>& row) {
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], DisplayWidth(row[c]));
  };
  std::vector<std::string> header;
  header.reserve(columns.size());
  for (const auto& column : columns) header.push_back(MdText(column.header));
  measure(header);
  for (const auto& row : rows) {
    std::vector<std::string> escaped;
    for (const auto& cell : row) escaped.push_back(MdText(cell));
    escaped.resize(columns.size());
    measure(escaped);
    cells.push_back(std::move(escaped));
  }
  auto line = [&](const std::vector<std::string>& row) {
    std::string out = "|";
    for (size_t c = 0; c < columns.size(); ++c) {
      const std::string pad(static_cast<size_t>(widths[c] - DisplayWidth(row[c])), ' ');
      out += ' ';
      out += columns[c].align == Align::kLeft ? row[c] + pad : pad + row[c];
      out += " |";
    }
    return out + "\n";
  };
  std::string out = line(header);
  out += "|";
  for (size_t c = 0; c < columns.size(); ++c) {
    const auto width = static_cast<size_t>(widths[c]);
    out += columns[c].align == Align::kLeft ? " " + std::string(width, '-') + " |"
                                            : " " + std::string(width - 1, '-') + ": |";
  }
  out += "\n";
  for (const auto& row : cells) out += line(row);
  return out;
}

// "## evalrun speed — <model> · <server kind> <build>", leaving out what the server did not say.
std::string MdTitle(const SpeedResult& result) {
  std::vector<std::string> parts;
  if (std::string model = ServerModel(result); !model.empty()) parts.push_back(MdText(model));
  if (std::string build = ServerBuild(result); !build.empty()) parts.push_back(MdText(build));
  return "## evalrun speed" + (parts.empty() ? std::string() : " — " + Join(parts, " · "));
}

// "2× NVIDIA GeForce RTX 3090 (client host)": the GPUs seen by the environment probe, counted
// by name in order of first appearance. They are the client host's, which is the server's only
// when the endpoint is local; the scope says so.
std::string GpuSummary(const json& environment) {
  const std::vector<std::pair<std::string, int>> counts = GpuCounts(environment);
  std::vector<std::string> parts;
  for (const auto& [name, count] : counts)
    parts.push_back(fmt::format("{}× {}", count, MdText(name)));
  std::string scope = JsonText(environment, "scope");
  if (scope.empty()) scope = "client host";
  return (parts.empty() ? std::string("none seen") : Join(parts, " + ")) + " (" + MdText(scope) +
         ")";
}

// settings.thinking as sent: "off", "on", "default" (or a boolean); "—" when not recorded.
std::string ThinkingText(const json& settings) {
  const json* thinking = Child(settings, "thinking");
  if (thinking == nullptr || thinking->is_null()) return std::string(kAbsent);
  if (thinking->is_boolean()) return thinking->get<bool>() ? "on" : "off";
  if (thinking->is_string()) return MdText(thinking->get<std::string>());
  return MdText(DumpJson(*thinking, -1));
}

std::string MdInfoLine(const SpeedResult& result) {
  std::vector<std::string> parts;
  parts.push_back("endpoint: " +
                  (result.endpoint.empty() ? std::string(kAbsent) : MdCode(result.endpoint)));
  parts.push_back("preset: " +
                  (result.preset.empty() ? std::string(kAbsent) : MdText(result.preset)));
  parts.push_back("thinking: " + ThinkingText(result.settings));
  if (!result.labels.empty()) {
    std::vector<std::string> labels;
    for (const auto& [key, value] : result.labels) labels.push_back(MdCode(key + "=" + value));
    parts.push_back("labels: " + Join(labels, " "));
  }
  parts.push_back("GPUs: " + GpuSummary(result.environment));
  return Join(parts, " · ");
}

// Test notes and errors as list items, each prefixed by its test's name.
std::string MdNotes(const SpeedResult& result) {
  std::vector<std::string> items;
  for (const auto& test : result.tests) {
    for (const auto& note : test.notes) items.push_back(test.name + ": " + note);
    if (test.errors > 0) {
      items.push_back(
          fmt::format("{}: {} of {} requests failed", test.name, test.errors, test.records.size()));
    }
    for (const auto& message : test.error_messages) items.push_back(test.name + ": " + message);
  }
  if (items.empty()) return "";
  std::string out = "### Notes\n\n";
  for (const auto& item : items) out += "- " + MdText(item) + "\n";
  return out + "\n";
}

std::string MdRunLine(const SpeedResult& result) {
  std::vector<std::string> parts;
  parts.push_back("evalrun" + (result.evalrun_version.empty()
                                   ? std::string()
                                   : " " + MdText(result.evalrun_version)));
  if (!result.started_at.empty()) parts.push_back("started " + MdText(result.started_at));
  parts.push_back(fmt::format("{:.1f} s", result.duration_s));
  return Join(parts, " · ");
}

// "512", "512 @ d4096", or the prompt set ("code") for fixed prompts.
std::string PromptCell(const SpeedTest& test) {
  std::string cell = test.prompt_tokens > 0 ? std::to_string(test.prompt_tokens)
                     : test.prompts.empty() ? std::string(kAbsent)
                                            : test.prompts;
  if (test.depth_tokens > 0) cell += " @ d" + std::to_string(test.depth_tokens);
  return cell;
}

std::string MdGenericBody(const SpeedResult& result) {
  if (result.tests.empty()) return "No tests ran.\n\n";
  const std::vector<MdColumn> columns = {
      {"test", Align::kLeft},        {"prompt", Align::kRight},    {"gen", Align::kRight},
      {"conc", Align::kRight},       {"TTFT ms", Align::kRight},   {"queue ms", Align::kRight},
      {"prefill t/s", Align::kRight}, {"decode t/s", Align::kRight}, {"tok/chunk", Align::kRight},
      {"aggregate t/s", Align::kRight}, {"errors", Align::kRight},
  };
  std::vector<std::vector<std::string>> rows;
  for (const auto& test : result.tests) {
    rows.push_back({
        test.name,
        PromptCell(test),
        test.max_tokens > 0 ? std::to_string(test.max_tokens) : std::string(kAbsent),
        std::to_string(test.concurrency),
        Fixed(MetricMedian(test, "ttft_ms"), 1),
        Fixed(MetricMedian(test, "queue_ms"), 1),
        test.ttft_includes_queue
            ? std::string("queued")
            : PrefillCell(MetricMedian(test, "prefill_tps"), MetricMedian(test, "cached_tokens"),
                          MetricMedian(test, "prompt_tokens")),
        Fixed(MetricMedian(test, "decode_tps"), 1),
        Fixed(MetricMedian(test, "tokens_per_chunk"), 2),
        Fixed(MetricMedian(test, "aggregate_tps"), 1),
        std::to_string(test.errors),
    });
  }
  return MdTable(columns, rows) + "\n";
}

constexpr std::string_view kGenericFooter =
    "Medians over requests; aggregate t/s is the median over rounds of "
    "Σ(completion_tokens − 1) / (max t_last − min t_first) across the concurrent requests. "
    "decode t/s = (completion_tokens − 1) / (t_last − t_first); "
    "prefill t/s = the prompt tokens the server processed (llama.cpp timings.prompt_n, else "
    "prompt_tokens − cached_tokens) / TTFT, \"cached N of M\" where the prompt cache served "
    "most of the prompt, \"queued\" where TTFT holds the wait for a slot; "
    "tok/chunk = completion_tokens / text events. "
    "TTFT includes queueing and network; queue ms = TTFT − the server's timings.prompt_ms, where "
    "it reports one.";

// llama-bench's layout: | model | server | test | t/s | with "mean ± stddev".
bool FitsLlamaBench(const SpeedResult& result) {
  return !result.tests.empty() &&
         std::all_of(result.tests.begin(), result.tests.end(),
                     [](const SpeedTest& t) { return t.kind == "prefill" || t.kind == "decode"; });
}

std::string MdLlamaBenchBody(const SpeedResult& result) {
  const std::vector<MdColumn> columns = {{"model", Align::kLeft},
                                         {"server", Align::kLeft},
                                         {"test", Align::kRight},
                                         {"t/s", Align::kRight}};
  const std::string model = ServerModel(result);
  const std::string server = ServerBuild(result);
  std::vector<std::vector<std::string>> rows;
  for (const auto& test : result.tests) {
    const Summary* s = FindMetric(test, test.kind == "prefill" ? "prefill_tps" : "decode_tps");
    rows.push_back(
        {model.empty() ? std::string(kAbsent) : model,
         server.empty() ? std::string(kAbsent) : server, test.name,
         s != nullptr ? fmt::format("{:.2f} ± {:.2f}", s->mean, s->stddev) : std::string(kAbsent)});
  }
  return MdTable(columns, rows) + "\n";
}

constexpr std::string_view kLlamaBenchFooter =
    "t/s: mean ± sample standard deviation over the successful requests, as llama-bench reports "
    "it. pp: (prompt_tokens − cached_tokens) / TTFT, measured by the client through the server, "
    "so it includes HTTP, queueing and tokenization; "
    "tg: (completion_tokens − 1) / (t_last − t_first).";

// uni_bench v1 (shared/uni-bench/PROTOCOL.md): scenarios in the script's order, with the labels
// its output prints.
struct UniScenario {
  std::string_view name;
  std::string_view label;
};
constexpr std::array<UniScenario, 4> kUniScenarios = {{
    {"code", "代码生成"},
    {"en_tech", "英文技术论述"},
    {"cn_chat", "中文常规对话"},
    {"cn_essay", "中文散文"},
}};

bool FitsUniBench(const SpeedResult& result) {
  return !result.tests.empty() &&
         std::all_of(result.tests.begin(), result.tests.end(), [](const SpeedTest& t) {
           return t.kind == "uni_single" || t.kind == "uni_pair";
         });
}

const SpeedTest* FindUniTest(const SpeedResult& result, std::string_view kind,
                             std::string_view prompts) {
  for (const auto& test : result.tests) {
    if (test.kind == kind && test.prompts == prompts) return &test;
  }
  return nullptr;
}

// Means, not medians: the community script averages over successful rounds, and these numbers
// are meant to sit next to its posts.
std::string MdUniBenchBody(const SpeedResult& result) {
  std::string out;
  std::vector<std::vector<std::string>> single;
  std::vector<std::vector<std::string>> pair;
  for (const auto& test : result.tests) {
    if (test.kind == "uni_single") {
      const auto scenario =
          std::find_if(kUniScenarios.begin(), kUniScenarios.end(),
                       [&test](const UniScenario& s) { return s.name == test.prompts; });
      const std::optional<double> ttft_ms = MetricMean(test, "ttft_ms");
      single.push_back({
          test.prompts.empty() ? test.name : test.prompts,
          scenario != kUniScenarios.end() ? std::string(scenario->label) : std::string(kAbsent),
          Fixed(MetricMean(test, "uni_decode_tps"), 1),
          Fixed(ttft_ms ? std::optional<double>(*ttft_ms / 1000.0) : std::nullopt, 3),
          Fixed(MetricMean(test, "tokens_per_chunk"), 2),
          std::to_string(MetricCount(test, "uni_decode_tps")),
          std::to_string(test.errors),
      });
    } else {
      pair.push_back({
          test.prompts.empty() ? test.name : test.prompts,
          Fixed(MetricMean(test, "uni_aggregate_tps"), 1),
          std::to_string(MetricCount(test, "uni_aggregate_tps")),
          std::to_string(test.errors),
      });
    }
  }
  if (!single.empty()) {
    out += "### Single stream\n\n";
    out += MdTable({{"scenario", Align::kLeft},
                    {"label", Align::kLeft},
                    {"decode t/s", Align::kRight},
                    {"TTFT s", Align::kRight},
                    {"tok/chunk", Align::kRight},
                    {"n", Align::kRight},
                    {"errors", Align::kRight}},
                   single);
    out += "\n";
  }
  if (!pair.empty()) {
    out += "### 2-way concurrency, code prompt\n\n";
    out += MdTable({{"prompts", Align::kLeft},
                    {"aggregate decode t/s", Align::kRight},
                    {"n", Align::kRight},
                    {"errors", Align::kRight}},
                   pair);
    out += "\n";
  }
  // One row in the layout of the table the community posts its numbers in.
  std::vector<std::string> row = {"this run"};
  for (const auto& scenario : kUniScenarios) {
    const SpeedTest* test = FindUniTest(result, "uni_single", scenario.name);
    row.push_back(test != nullptr ? Fixed(MetricMean(*test, "uni_decode_tps"), 1)
                                  : std::string(kAbsent));
  }
  for (const char* prompts : {"same", "different"}) {
    const SpeedTest* test = FindUniTest(result, "uni_pair", prompts);
    row.push_back(test != nullptr ? Fixed(MetricMean(*test, "uni_aggregate_tps"), 1)
                                  : std::string(kAbsent));
  }
  out += "As a row of the community's comparison table:\n\n";
  out += MdTable({{"setup", Align::kLeft},
                  {"code", Align::kRight},
                  {"en_tech", Align::kRight},
                  {"cn_chat", Align::kRight},
                  {"cn_essay", Align::kRight},
                  {"2-way same", Align::kRight},
                  {"2-way different", Align::kRight}},
                 {row});
  return out + "\n";
}

constexpr std::string_view kUniBenchFooter =
    "uni_bench v1 formulas; means over successful rounds, as the community script averages them. "
    "decode = (comp − 1) / (total − TTFT), total = when the stream ended; "
    "TTFT = first chunk with content or reasoning, in seconds, including queueing and network; "
    "tok/chunk = comp / chunks with text; "
    "2-way aggregate = Σ(comp − 1) / max(total − TTFT) over the two requests of a round, "
    "kept only when both succeeded; comp = the server's usage.completion_tokens.";

std::string RenderMarkdown(const SpeedResult& result) {
  std::string out = MdTitle(result) + "\n\n" + MdInfoLine(result) + "\n\n";
  std::string_view footer = kGenericFooter;
  if (result.preset == "llama-bench" && FitsLlamaBench(result)) {
    out += MdLlamaBenchBody(result);
    footer = kLlamaBenchFooter;
  } else if (result.preset == "uni-bench" && FitsUniBench(result)) {
    out += MdUniBenchBody(result);
    footer = kUniBenchFooter;
  } else {
    out += MdGenericBody(result);
  }
  out += MdNotes(result);
  out += std::string(footer) + "\n\n" + MdRunLine(result) + "\n";
  return out;
}

// ---- csv and jsonl -------------------------------------------------------------------------

// One test as a flat row; csv and jsonl both render it, so they cannot disagree. Keys are the
// same for every test (null where a metric is absent), so the csv header comes from any row.
ordered_json FlatRow(const SpeedResult& result, const SpeedTest& test) {
  ordered_json row;
  row["name"] = test.name;
  row["kind"] = test.kind;
  row["prompts"] = test.prompts;
  row["prompt_tokens"] = test.prompt_tokens;
  row["depth_tokens"] = test.depth_tokens;
  row["max_tokens"] = test.max_tokens;
  row["concurrency"] = test.concurrency;
  row["rounds"] = test.rounds;
  row["requests"] = static_cast<int64_t>(test.records.size());
  row["errors"] = test.errors;
  for (const std::string_view metric : kFlatMetrics) {
    const Summary* s = FindMetric(test, metric);
    for (const std::string_view stat : kFlatStats) {
      const std::string key = fmt::format("{}_{}", metric, stat);
      if (s == nullptr) {
        row[key] = nullptr;
      } else if (stat == "count") {
        row[key] = s->count;
      } else {
        row[key] = stat == "mean"     ? s->mean
                   : stat == "median" ? s->median
                   : stat == "min"    ? s->min
                   : stat == "max"    ? s->max
                   : stat == "p90"    ? s->p90
                                      : s->p99;
      }
    }
  }
  // Context, so rows from several runs can be put in one sheet (as llama-bench's csv does).
  row["error_messages"] = test.error_messages;
  row["notes"] = test.notes;
  row["labels"] = result.labels;
  row["preset"] = result.preset;
  row["model"] = ServerModel(result);
  row["server"] = ServerBuild(result);
  row["evalrun_version"] = result.evalrun_version;
  row["started_at"] = result.started_at;
  return row;
}

// RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled. The one
// escaping function for csv.
std::string CsvEscape(std::string_view raw) {
  std::string text = ValidUtf8(raw);
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

// A flat value as csv text, before escaping: numbers in the shortest form that reads back to the
// same double, lists joined with "; ", labels as "key=value; ...", null as "".
std::string CsvText(const ordered_json& value) {
  switch (value.type()) {
    case ordered_json::value_t::string:
      return value.get<std::string>();
    case ordered_json::value_t::boolean:
      return value.get<bool>() ? "true" : "false";
    case ordered_json::value_t::number_integer:
      return fmt::format("{}", value.get<int64_t>());
    case ordered_json::value_t::number_unsigned:
      return fmt::format("{}", value.get<uint64_t>());
    case ordered_json::value_t::number_float: {
      const double v = value.get<double>();
      return std::isfinite(v) ? fmt::format("{}", v) : std::string();
    }
    case ordered_json::value_t::array: {
      std::vector<std::string> parts;
      for (const auto& item : value) parts.push_back(CsvText(item));
      return Join(parts, "; ");
    }
    case ordered_json::value_t::object: {
      std::vector<std::string> parts;
      for (const auto& [key, item] : value.items()) parts.push_back(key + "=" + CsvText(item));
      return Join(parts, "; ");
    }
    default:
      return "";
  }
}

std::string RenderCsv(const SpeedResult& result) {
  std::vector<std::string> header;
  const ordered_json keys = FlatRow(result, SpeedTest{});
  for (auto it = keys.begin(); it != keys.end(); ++it) header.push_back(CsvEscape(it.key()));
  std::string out = Join(header, ",") + "\n";
  for (const auto& test : result.tests) {
    const ordered_json row = FlatRow(result, test);
    std::vector<std::string> cells;
    for (const auto& value : row) cells.push_back(CsvEscape(CsvText(value)));
    out += Join(cells, ",") + "\n";
  }
  return out;
}

std::string RenderJsonl(const SpeedResult& result) {
  std::string out;
  for (const auto& test : result.tests) {
    ordered_json line = {{"schema_version", kSpeedSchemaVersion}};
    const ordered_json row = FlatRow(result, test);
    for (auto it = row.begin(); it != row.end(); ++it) line[it.key()] = it.value();
    out += line.dump(-1, ' ', false, ordered_json::error_handler_t::replace) + "\n";
  }
  return out;
}

// ---- json ----------------------------------------------------------------------------------

// Send offsets are relative to the round's first send, so concurrent requests line up.
std::map<int, TimePoint> RoundStarts(const SpeedTest& test) {
  std::map<int, TimePoint> round_start;
  for (size_t i = 0; i < test.records.size() && i < test.record_round.size(); ++i) {
    const auto [it, inserted] = round_start.emplace(test.record_round[i], test.records[i].t_send);
    if (!inserted) it->second = std::min(it->second, test.records[i].t_send);
  }
  return round_start;
}

// Record i of a test as JSON, with its "round"; without its text events' times when
// `with_event_times` is false.
json TestRecordJson(const SpeedTest& test, size_t i, std::map<int, TimePoint>& round_start,
                    bool with_event_times) {
  const RequestRecord& record = test.records[i];
  const bool has_round = i < test.record_round.size();
  json j = RecordToJson(record, has_round ? round_start[test.record_round[i]] : record.t_send,
                        false, with_event_times);
  j["round"] = has_round ? json(test.record_round[i]) : json(nullptr);
  return j;
}

// Everything of a test but its metrics and records.
json TestHeadJson(const SpeedTest& test) {
  return {
      {"name", test.name},
      {"kind", test.kind},
      {"prompts", test.prompts},
      {"prompt_tokens", test.prompt_tokens},
      {"depth_tokens", test.depth_tokens},
      {"max_tokens", test.max_tokens},
      {"concurrency", test.concurrency},
      {"rounds", test.rounds},
      {"requests", static_cast<int64_t>(test.records.size())},
      {"errors", test.errors},
      {"error_messages", test.error_messages},
      {"cache_hits", test.cache_hits},
      {"ttft_includes_queue", test.ttft_includes_queue},
      {"notes", test.notes},
  };
}

json TestToJson(const SpeedTest& test) {
  json metrics = json::object();
  for (const auto& [name, summary] : test.metrics) metrics[name] = ToJson(summary);
  std::map<int, TimePoint> round_start = RoundStarts(test);
  json records = json::array();
  for (size_t i = 0; i < test.records.size(); ++i) {
    records.push_back(TestRecordJson(test, i, round_start, true));
  }
  json j = TestHeadJson(test);
  j["metrics"] = std::move(metrics);
  j["records"] = std::move(records);
  return j;
}

// Everything of the result but its tests.
json SpeedHeadJson(const SpeedResult& result) {
  return {
      {"schema_version", kSpeedSchemaVersion},
      {"kind", "evalrun.speed"},
      {"metrics_version", kMetricsVersion},
      {"evalrun_version", result.evalrun_version},
      {"started_at", result.started_at},
      {"duration_s", result.duration_s},
      {"endpoint", result.endpoint},
      {"preset", result.preset},
      {"server", result.server},
      {"settings", result.settings},
      {"calibration", result.calibration},
      {"labels", result.labels},
      {"environment", result.environment},
      {"errors", result.errors()},
  };
}

// Output in 64 KB pieces: the per-event numbers are formatted into one buffer, never into a
// string per number.
class JsonStream {
 public:
  explicit JsonStream(const std::function<void(std::string_view)>& sink) : sink_(sink) {
    buffer_.reserve(kPiece + 512);
  }
  ~JsonStream() { Flush(); }
  JsonStream(const JsonStream&) = delete;
  JsonStream& operator=(const JsonStream&) = delete;

  void Put(std::string_view text) {
    buffer_ += text;
    if (buffer_.size() >= kPiece) Flush();
  }
  // A small object without its closing brace, so members can follow (`object` is non-empty).
  void Open(const json& object) {
    std::string text = DumpJson(object, -1);
    text.pop_back();
    Put(text);
  }
  void Numbers(const std::vector<int64_t>& values) {
    Put("[");
    char number[32];
    for (size_t i = 0; i < values.size(); ++i) {
      if (i > 0) buffer_ += ',';
      buffer_.append(number, std::to_chars(number, number + sizeof number, values[i]).ptr);
      if (buffer_.size() >= kPiece) Flush();
    }
    Put("]");
  }
  // Doubles that read back as the same doubles (the exact decimal of whole nanoseconds in
  // milliseconds, else the shortest text), ".0" on integral values (so they read back as
  // floating point), null for what JSON cannot hold.
  void Numbers(const std::vector<double>& values) {
    Put("[");
    for (size_t i = 0; i < values.size(); ++i) {
      if (i > 0) buffer_ += ',';
      AppendDouble(values[i]);
      if (buffer_.size() >= kPiece) Flush();
    }
    Put("]");
  }
  void Flush() {
    if (buffer_.empty()) return;
    sink_(buffer_);
    buffer_.clear();
  }

 private:
  static constexpr size_t kPiece = 64 * 1024;

  void AppendDouble(double v) {
    if (!std::isfinite(v)) {
      buffer_ += "null";
      return;
    }
    // Event gaps are whole nanoseconds in milliseconds (ns / 1e6, correctly rounded): their
    // exact decimal reads back as the same double (a correctly rounded parse of the same real
    // number), and writing it skips the shortest-digits search.
    if (std::fabs(v) < 1e9) {
      const long long ns = std::llround(v * 1e6);
      if (static_cast<double>(ns) / 1e6 == v) return AppendMillis(ns);
    }
    char number[40];
    char* end = std::to_chars(number, number + sizeof number, v).ptr;
    const std::string_view text(number, static_cast<size_t>(end - number));
    buffer_ += text;
    if (text.find_first_of(".eE") == std::string_view::npos) buffer_ += ".0";
  }

  // ns / 1e6 as an exact decimal: "12.3456", "-0.5", "3.0".
  void AppendMillis(long long ns) {
    if (ns < 0) {
      buffer_ += '-';
      ns = -ns;
    }
    char number[32];
    buffer_.append(number, std::to_chars(number, number + sizeof number, ns / 1'000'000).ptr);
    long long fraction = ns % 1'000'000;
    if (fraction == 0) {
      buffer_ += ".0";
      return;
    }
    char digits[6];
    for (int i = 5; i >= 0; --i) {
      digits[i] = static_cast<char>('0' + fraction % 10);
      fraction /= 10;
    }
    int length = 6;
    while (digits[length - 1] == '0') --length;
    buffer_ += '.';
    buffer_.append(digits, static_cast<size_t>(length));
  }

  const std::function<void(std::string_view)>& sink_;
  std::string buffer_;
};

void WriteSummary(JsonStream& out, const Summary& s) {
  out.Open(ToJson(s, false));
  out.Put(",\"samples\":");
  out.Numbers(s.samples);
  out.Put("}");
}

void WriteTest(JsonStream& out, const SpeedTest& test) {
  out.Open(TestHeadJson(test));
  out.Put(",\"metrics\":{");
  bool first = true;
  for (const auto& [name, summary] : test.metrics) {
    out.Put(first ? "\n" : ",\n");
    first = false;
    out.Put(DumpJson(json(name), -1));
    out.Put(":");
    WriteSummary(out, summary);
  }
  out.Put("},\"records\":[");
  std::map<int, TimePoint> round_start = RoundStarts(test);
  for (size_t i = 0; i < test.records.size(); ++i) {
    out.Put(i == 0 ? "\n" : ",\n");
    out.Open(TestRecordJson(test, i, round_start, false));
    out.Put(",\"text_event_ns\":");
    out.Numbers(test.records[i].text_event_ns);
    out.Put("}");
  }
  out.Put("]}");
}

}  // namespace

std::optional<SpeedFormat> ParseSpeedFormat(std::string_view name) {
  for (const auto& entry : kFormats) {
    if (entry.name == name) return entry.format;
  }
  return std::nullopt;
}

std::vector<std::string_view> SpeedFormatNames() {
  std::vector<std::string_view> names;
  names.reserve(kFormats.size());
  for (const auto& entry : kFormats) names.push_back(entry.name);
  return names;
}

json SpeedResultToJson(const SpeedResult& result) {
  json tests = json::array();
  for (const auto& test : result.tests) tests.push_back(TestToJson(test));
  json j = SpeedHeadJson(result);
  j["tests"] = std::move(tests);
  return j;
}

void WriteSpeedJson(const SpeedResult& result, const std::function<void(std::string_view)>& sink) {
  JsonStream out(sink);
  out.Open(SpeedHeadJson(result));
  out.Put(",\"tests\":[");
  for (size_t i = 0; i < result.tests.size(); ++i) {
    out.Put(i == 0 ? "\n" : ",\n");
    WriteTest(out, result.tests[i]);
  }
  out.Put("]}\n");
}

void WriteSpeed(const SpeedResult& result, SpeedFormat format,
                const std::function<void(std::string_view)>& sink) {
  if (format == SpeedFormat::kJson) return WriteSpeedJson(result, sink);
  sink(RenderSpeed(result, format));
}

std::string DumpJson(const nlohmann::json& json, int indent) {
  return json.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string RenderSpeed(const SpeedResult& result, SpeedFormat format) {
  switch (format) {
    case SpeedFormat::kMarkdown:
      return RenderMarkdown(result);
    case SpeedFormat::kJson: {  // the streamed writer's text: one json output, not two
      std::string text;
      WriteSpeedJson(result, [&text](std::string_view piece) { text += piece; });
      return text;
    }
    case SpeedFormat::kCsv:
      return RenderCsv(result);
    case SpeedFormat::kJsonl:
      return RenderJsonl(result);
  }
  return "";
}

}  // namespace evalrun
