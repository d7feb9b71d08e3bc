#include "plugins/zxbench_importer.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/canonical_json.h"
#include "core/error.h"
#include "core/sha256.h"

namespace evalrun {
namespace {

using nlohmann::json;

// zx-bench's HASH_FIELDS (packages/core/src/contracts/canonicalize.ts at bank 1.60.0), in its
// order. Banks from before about 920 entries hashed a shorter list and do not reproduce.
// clang-format off
constexpr std::array<const char*, 35> kHashFields = {
    "id", "dimension", "category", "difficulty", "language", "locale", "status", "tier",
    "promptTemplate", "sourceCode", "functionName", "expectedVerdict", "grader", "graderVersion",
    "scoring", "hiddenTests", "publicTests", "requirements", "schema", "constraints",
    "bugInvariants", "acceptablePatches", "unacceptablePatches", "outOfScope", "judgeHint",
    "responseMode", "outputPolicy", "answerFirst", "maxAnswerTokens", "maxReasoningTokens",
    "environmentImage", "seed", "goldSource", "goldVerifiedAt", "reviewStatus"};
// clang-format on

// The refusal for banks hashed another way names the first bank this importer was checked on.
constexpr const char* kSupportedBanks =
    "evalrun supports banks from about 920 entries on (bank 1.60.0, commit 8e0adf68)";

// ---- zx-bench's rendering: JSON.stringify of an object rebuilt with sorted keys ----

// ---- goldVerifiedAt ----

bool ReadDigits(std::string_view text, std::size_t& pos, int count, int& value) {
  if (pos + static_cast<std::size_t>(count) > text.size()) return false;
  value = 0;
  for (int i = 0; i < count; ++i) {
    const char c = text[pos++];
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  return true;
}

// Howard Hinnant's days_from_civil / civil_from_days (proleptic Gregorian, day 0 = 1970-01-01).
std::int64_t DaysFromCivil(std::int64_t y, int m, int d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const std::int64_t yoe = y - era * 400;
  const std::int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const std::int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

void CivilFromDays(std::int64_t z, std::int64_t& y, int& m, int& d) {
  z += 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const std::int64_t doe = z - era * 146097;
  const std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const std::int64_t mp = (5 * doy + 2) / 153;
  d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  y = yoe + era * 400 + (m <= 2);
}

// ---- where each entry sits in the file ----

struct EntryOffsets {
  std::size_t begin = 0;                     // the entry's first byte
  std::size_t hash_key = std::string::npos;  // its top-level "scenarioHash" key, if any
};

// One pass over text that nlohmann has already accepted as a JSON array: the offset of each
// element and of each object element's top-level "scenarioHash" key (written without escapes,
// as JSON.stringify writes it).
std::vector<EntryOffsets> ScanEntries(std::string_view text) {
  static constexpr std::string_view kHashKey = "\"scenarioHash\"";
  std::vector<EntryOffsets> entries;
  int depth = 0;
  bool in_string = false;
  bool awaiting_entry = false;  // depth 1, after '[' or ','
  bool entry_is_object = false;
  bool expecting_key = false;  // depth 2 inside an object entry, after '{' or ','
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (depth == 1 && awaiting_entry && c != ']') {
      entries.push_back({i, std::string::npos});
      awaiting_entry = false;
      entry_is_object = c == '{';
    }
    switch (c) {
      case '"':
        if (depth == 2 && expecting_key && text.substr(i, kHashKey.size()) == kHashKey) {
          entries.back().hash_key = i;
        }
        expecting_key = false;
        in_string = true;
        break;
      case '{':
      case '[':
        ++depth;
        if (depth == 1) awaiting_entry = true;
        if (depth == 2) expecting_key = entry_is_object;
        break;
      case '}':
      case ']':
        --depth;
        break;
      case ',':
        if (depth == 1) awaiting_entry = true;
        if (depth == 2) expecting_key = entry_is_object;
        break;
      default:
        break;
    }
  }
  return entries;
}

// 1-based line and byte column of increasing offsets, in one pass.
class LineCounter {
 public:
  explicit LineCounter(std::string_view text) : text_(text) {}
  SourceLocation At(const std::string& file, std::size_t offset) {
    for (; pos_ < offset && pos_ < text_.size(); ++pos_) {
      if (text_[pos_] == '\n') {
        ++line_;
        line_start_ = pos_ + 1;
      }
    }
    return {file, line_, static_cast<int>(offset - line_start_) + 1};
  }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
  std::size_t line_start_ = 0;
  int line_ = 1;
};

// ---- mapping onto evalrun's task model ----

const json* Field(const json& entry, const char* name) {
  const auto it = entry.find(name);
  return it == entry.end() || it->is_null() ? nullptr : &*it;
}

std::string StringField(const json& entry, const char* name) {
  const json* value = Field(entry, name);
  return value != nullptr && value->is_string() ? value->get<std::string>() : std::string();
}

// packages/core/src/scoring.ts: DIMENSION_WEIGHTS.
const std::map<std::string, double>& DimensionWeights() {
  // clang-format off
  static const std::map<std::string, double> kWeights = {
      {"program", 0.17}, {"reasoning_math", 0.12}, {"hallucination_resistance", 0.12},
      {"instruction_following", 0.12}, {"safety_authority", 0.10}, {"agent_workflow", 0.08},
      {"tool_cli_workflow", 0.07}, {"data_extraction", 0.07}, {"cli_deep_tasks", 0.07},
      {"structured_output", 0.05}, {"agent_loop", 0.03}};
  // clang-format on
  return kWeights;
}

// scoring.ts: LONG_TASK_WEIGHT replaces the difficulty weight of long_task_* categories, and
// ATTACK_WEIGHTS multiply by requirements.attackLevel ("L1".."L4").
constexpr double kLongTaskWeight = 3.0;

double AttackWeight(const json& entry) {
  const json* requirements = Field(entry, "requirements");
  if (requirements == nullptr || !requirements->is_object()) return 1.0;
  const json* level = Field(*requirements, "attackLevel");
  if (level == nullptr || !level->is_string()) return 1.0;
  const auto& text = level->get_ref<const std::string&>();
  if (text == "L1") return 1.0;
  if (text == "L2") return 1.2;
  if (text == "L3") return 1.5;
  if (text == "L4") return 2.0;
  return 1.0;  // zx-bench ignores other values
}

bool HasWorld(const json& entry) {
  const json* requirements = Field(entry, "requirements");
  return requirements != nullptr && requirements->is_object() &&
         Field(*requirements, "executionWorld") != nullptr;
}

// Why an entry cannot run here ("" when it can). docs/zx-bench.md lists the cases.
std::string SkipReason(const json& entry) {
  const json* status = Field(entry, "status");
  if (status == nullptr) return "no status: only valid entries run officially";
  if (!status->is_string() || status->get_ref<const std::string&>() != "valid") {
    const std::string text = status->is_string() ? status->get<std::string>() : status->dump();
    return "status '" + text + "': only valid entries run officially";
  }
  const json* grader_value = Field(entry, "grader");
  if (grader_value == nullptr || !grader_value->is_string()) return "entry has no grader";
  const std::string grader = grader_value->get<std::string>();

  static const std::vector<std::string> kFromEntry = {"exact_answer_line", "json_atomic_fields",
                                                      "instruction_checklist",
                                                      "structured_contract", "code_repair",
                                                      "schema_compliance", "cli_command",
                                                      "project_repair",
                                                      "hallucination_resistance"};
  static const std::vector<std::string> kWorlds = {"agent_trace", "tool_call_trace",
                                                   "canary_authority"};
  // hallucination_resistance needs a judge too: the run skips it when none is given
  // (MarkJudgedTasks); ultra_proof_part's rubric path is not reproduced (docs/zx-bench.md).
  static const std::vector<std::string> kJudge = {"ultra_proof_part"};
  const auto in = [&](const std::vector<std::string>& names) {
    return std::find(names.begin(), names.end(), grader) != names.end();
  };

  std::string reason;
  if (in(kFromEntry)) {
    // runnable (code_repair, cli_command and project_repair also need the sandbox and a runtime
    // or a stand-in for the entry's image, hallucination_resistance a judge: their graders
    // decide)
  } else if (in(kWorlds)) {
    // canary_authority without a world is graded from the reply alone
    // (zxbench:canary_authority_text); the traces need their world.
    if (!HasWorld(entry) && grader != "canary_authority") {
      reason = "grader '" + grader +
               "' without requirements.executionWorld (a declarative trace) is not supported";
    }
  } else if (grader == "agent_loop_trace") {
    // zx-bench's loop runs whenever requirements.agentLoop is there; evalrun runs its engine
    // in process (docs/zx-bench.md).
    const json* requirements = Field(entry, "requirements");
    const json* loop = requirements != nullptr && requirements->is_object()
                           ? Field(*requirements, "agentLoop")
                           : nullptr;
    if (loop == nullptr || !loop->is_object()) {
      reason = "grader 'agent_loop_trace' without requirements.agentLoop (no loop to run)";
    }
  } else if (in(kJudge)) {
    reason = "needs a judge model (zx-bench grades '" + grader + "' with an LLM judge)";
  } else if (grader == "ultra_batch_part" || grader.rfind("challenge_", 0) == 0) {
    reason = "gold answer lives outside the bank (separate source pack)";
  } else {
    reason = "grader '" + grader + "' is not known to evalrun";
  }
  if (reason.empty()) {
    const json* prompt = Field(entry, "promptTemplate");
    if (prompt == nullptr) {
      reason = "entry has no promptTemplate";
    } else if (!prompt->is_string()) {
      reason = "promptTemplate is not a string";
    }
  }
  return reason;
}

std::string EntryName(const std::string& file_label, const std::string& id, std::size_t index) {
  return file_label + ": entry '" + id + "' (index " + std::to_string(index) + ")";
}

std::optional<std::int64_t> TokenCount(const json& entry, const char* name) {
  const json* value = Field(entry, name);
  if (value == nullptr || !value->is_number()) return std::nullopt;
  // A positive whole number of tokens; anything else is left to the run's settings.
  const double d = value->get<double>();
  if (!(d >= 1 && d <= 1e9) || d != static_cast<double>(static_cast<std::int64_t>(d))) {
    return std::nullopt;
  }
  return static_cast<std::int64_t>(d);
}

Task MapEntry(json&& entry, const std::string& file_label, std::size_t index,
              std::string full_hash) {
  Task task;
  task.format = "zxbench";
  task.id = entry["id"].get<std::string>();
  const std::string name = EntryName(file_label, task.id, index);

  const json* dimension = Field(entry, "dimension");
  if (dimension == nullptr || !dimension->is_string() || dimension->get<std::string>().empty()) {
    throw Error(name + " has no dimension");
  }
  task.dimension = dimension->get<std::string>();
  // scoring.ts DIMENSION_ALIASES: older names aggregate under their current one.
  if (task.dimension == "code_repair" || task.dimension == "codeRepair") task.dimension = "program";

  const json* difficulty = Field(entry, "difficulty");
  if (difficulty != nullptr &&
      !(difficulty->is_string() && difficulty->get<std::string>().empty())) {
    const std::string text =
        difficulty->is_string() ? difficulty->get<std::string>() : difficulty->dump();
    if (DifficultyWeight(text) == 0.0) {
      throw Error(name + ": difficulty '" + text +
                  "' is not one of easy, medium, hard, adversarial");
    }
    task.difficulty = text;
  }  // missing, null or "" -> "medium", as zx-bench's scoring reads it

  task.weight = AttackWeight(entry);
  if (StringField(entry, "category").rfind("long_task", 0) == 0) {
    task.weight *= kLongTaskWeight / DifficultyWeight(task.difficulty);
  }

  const json* prompt = Field(entry, "promptTemplate");
  if (prompt != nullptr && prompt->is_string()) {
    task.messages = json::array({{{"role", "user"}, {"content", *prompt}}});
  }
  if (const auto answer = TokenCount(entry, "maxAnswerTokens")) {
    task.generation["max_tokens"] = *answer + TokenCount(entry, "maxReasoningTokens").value_or(0);
  }

  const std::string grader = StringField(entry, "grader");
  // A canary_authority entry without an execution world is scored from the reply, by its own
  // grader (the world graders grade an episode record).
  const bool declarative_canary = grader == "canary_authority" && !HasWorld(entry);
  // A cli_command entry with an interactive shell investigation is scored from the loop's
  // trace, by its own grader (runner/agent/zx_shell_loop.h runs the loop).
  const json* requirements = Field(entry, "requirements");
  const bool shell = grader == "cli_command" && requirements != nullptr &&
                     requirements->is_object() && Field(*requirements, "executionShell") != nullptr;
  task.grader = {{"type", declarative_canary ? std::string("zxbench:canary_authority_text")
                          : shell            ? std::string("zxbench:cli_shell")
                                             : "zxbench:" + grader}};
  if (const json* version = Field(entry, "graderVersion")) task.grader["grader_version"] = *version;
  task.declared_hash = entry["scenarioHash"].get<std::string>();
  task.grader["entry_hash"] = task.declared_hash;

  if (const json* tags = Field(entry, "tags"); tags != nullptr && tags->is_array()) {
    for (const json& tag : *tags) {
      if (tag.is_string()) task.tags.push_back(tag.get<std::string>());
    }
  }
  task.skip_reason = SkipReason(entry);
  task.hash = std::move(full_hash);
  task.raw = std::move(entry);
  return task;
}

}  // namespace

std::string ZxNormalizeGoldVerifiedAt(const std::string& value) {
  const std::string_view t = value;
  std::size_t p = 0;
  int year = 0, month = 1, day = 1, hour = 0, minute = 0, second = 0, millis = 0;
  int offset_minutes = 0;
  if (!ReadDigits(t, p, 4, year)) return value;
  if (p < t.size() && t[p] == '-') {
    ++p;
    if (!ReadDigits(t, p, 2, month)) return value;
    if (p < t.size() && t[p] == '-') {
      ++p;
      if (!ReadDigits(t, p, 2, day)) return value;
    }
  }
  if (p < t.size()) {  // a time, which must carry an offset to mean one instant
    if (t[p++] != 'T') return value;
    if (!ReadDigits(t, p, 2, hour) || p >= t.size() || t[p++] != ':' ||
        !ReadDigits(t, p, 2, minute)) {
      return value;
    }
    if (p < t.size() && t[p] == ':') {
      ++p;
      if (!ReadDigits(t, p, 2, second)) return value;
      if (p < t.size() && t[p] == '.') {
        ++p;
        int digits = 0;
        for (; p < t.size() && t[p] >= '0' && t[p] <= '9'; ++p, ++digits) {
          if (digits < 3) millis = millis * 10 + (t[p] - '0');
        }
        if (digits == 0) return value;
        for (; digits < 3; ++digits) millis *= 10;
      }
    }
    if (p >= t.size()) return value;  // local time: not reproducible
    if (t[p] == 'Z') {
      ++p;
    } else if (t[p] == '+' || t[p] == '-') {
      const int sign = t[p++] == '-' ? -1 : 1;
      int offset_hours = 0, offset_mins = 0;
      if (!ReadDigits(t, p, 2, offset_hours) || p >= t.size() || t[p++] != ':' ||
          !ReadDigits(t, p, 2, offset_mins) || offset_hours > 23 || offset_mins > 59) {
        return value;
      }
      offset_minutes = sign * (offset_hours * 60 + offset_mins);
    } else {
      return value;
    }
    if (p != t.size()) return value;
  }
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 24 || minute > 59 || second > 59 ||
      (hour == 24 && (minute != 0 || second != 0 || millis != 0))) {
    return value;
  }
  constexpr std::int64_t kDayMs = 86400000;
  const std::int64_t ms = (DaysFromCivil(year, month, 1) + day - 1) * kDayMs +
                          ((hour * 60 + minute - offset_minutes) * 60 + second) * 1000LL + millis;
  std::int64_t days = ms / kDayMs;
  std::int64_t in_day = ms % kDayMs;
  if (in_day < 0) {
    in_day += kDayMs;
    --days;
  }
  std::int64_t y = 0;
  int m = 0, d = 0;
  CivilFromDays(days, y, m, d);
  const auto ms_of_day = static_cast<int>(in_day);
  char year_text[16];
  // Date.prototype.toISOString writes years outside 0..9999 as ±YYYYYY.
  if (y >= 0 && y <= 9999) {
    std::snprintf(year_text, sizeof year_text, "%04lld", static_cast<long long>(y));
  } else {
    std::snprintf(year_text, sizeof year_text, "%c%06lld", y < 0 ? '-' : '+',
                  static_cast<long long>(y < 0 ? -y : y));
  }
  char rest[32];
  std::snprintf(rest, sizeof rest, "-%02d-%02dT%02d:%02d:%02d.%03dZ", m, d, ms_of_day / 3600000,
                ms_of_day / 60000 % 60, ms_of_day / 1000 % 60, ms_of_day % 1000);
  return std::string(year_text) + rest;
}

std::string ZxCanonicalScenario(const nlohmann::json& entry) {
  std::string out;
  out.reserve(4096);
  out.push_back('{');
  bool first = true;
  for (const char* field : kHashFields) {
    if (!first) out.push_back(',');
    first = false;
    out.push_back('"');
    out += field;  // plain ASCII names: nothing to escape
    out += "\":";
    const json* value = entry.is_object() ? Field(entry, field) : nullptr;
    if (value == nullptr) {
      out += "null";  // absent and null are the same to zx-bench
    } else if (value->is_string() && std::string_view(field) == "goldVerifiedAt") {
      out += CanonicalJson(json(ZxNormalizeGoldVerifiedAt(value->get<std::string>())));
    } else {
      out += CanonicalJson(*value, KeyOrder::kJavaScript);
    }
  }
  out.push_back('}');
  return out;
}

std::string ZxScenarioHash(const nlohmann::json& entry) {
  return Sha256Hex(ZxCanonicalScenario(entry)).substr(0, 16);
}

Suite ImportZxBench(std::string_view bank_json, const std::string& file_label) {
  json bank;
  try {
    bank = json::parse(bank_json.begin(), bank_json.end());
  } catch (const json::parse_error& e) {
    std::string message = e.what();
    // Drop nlohmann's "[json.exception.parse_error.101] " tag; keep its line and column.
    if (const auto close = message.find("] ");
        message.rfind("[json.exception", 0) == 0 && close != std::string::npos) {
      message.erase(0, close + 2);
    }
    throw Error(file_label + ": not JSON (byte " + std::to_string(e.byte) + "): " + message);
  } catch (const json::out_of_range& e) {  // a number JSON allows but a double cannot hold: 1e999
    std::string message = e.what();
    if (const auto close = message.find("] "); close != std::string::npos) message.erase(0, close + 2);
    throw Error(file_label + ": not JSON: " + message);
  }
  if (!bank.is_array()) {
    throw Error(file_label + ": not a JSON array (found " + std::string(bank.type_name()) +
                "); a zx-bench bank is an array of entries");
  }
  if (bank.empty()) throw Error(file_label + ": the bank holds no entries");

  const std::size_t count = bank.size();
  std::unordered_map<std::string, std::size_t> first_index;
  first_index.reserve(count * 2);
  std::vector<std::string> full_hashes(count);
  std::vector<std::size_t> mismatches;
  for (std::size_t i = 0; i < count; ++i) {
    const json& entry = bank[i];
    const std::string at_index = file_label + ": entry at index " + std::to_string(i);
    if (!entry.is_object()) throw Error(at_index + " is not a JSON object");
    const json* id = Field(entry, "id");
    if (id == nullptr || !id->is_string() || id->get_ref<const std::string&>().empty()) {
      throw Error(at_index + " has no id");
    }
    const std::string& id_text = id->get_ref<const std::string&>();
    const auto [it, inserted] = first_index.emplace(id_text, i);
    if (!inserted) {
      throw Error(EntryName(file_label, id_text, i) + " repeats the id of index " +
                  std::to_string(it->second));
    }
    const json* stored = Field(entry, "scenarioHash");
    if (stored == nullptr || !stored->is_string()) {
      throw Error(EntryName(file_label, id_text, i) + " has no scenarioHash");
    }
    full_hashes[i] = Sha256Hex(ZxCanonicalScenario(entry));
    if (full_hashes[i].substr(0, 16) != stored->get_ref<const std::string&>()) {
      mismatches.push_back(i);
    }
  }
  if (mismatches.size() * 2 > count) {
    throw Error(file_label + ": this bank version's scenarioHash cannot be reproduced (" +
                std::to_string(mismatches.size()) + " of " + std::to_string(count) +
                " entries differ): " + kSupportedBanks);
  }
  if (!mismatches.empty()) {
    const std::size_t i = mismatches.front();
    throw Error(EntryName(file_label, bank[i]["id"].get<std::string>(), i) + ": scenarioHash is " +
                bank[i]["scenarioHash"].get<std::string>() + " but its content hashes to " +
                full_hashes[i].substr(0, 16));
  }

  const std::vector<EntryOffsets> offsets = ScanEntries(bank_json);
  LineCounter lines(bank_json);
  Suite suite;
  suite.name = "zx-bench";
  suite.format = "zxbench";
  suite.dimension_weights = DimensionWeights();
  suite.tasks.reserve(count);
  std::size_t runnable = 0;
  for (std::size_t i = 0; i < count; ++i) {
    Task task = MapEntry(std::move(bank[i]), file_label, i, std::move(full_hashes[i]));
    if (i < offsets.size()) {  // always, for text nlohmann accepted; guarded all the same
      task.location = lines.At(file_label, offsets[i].begin);
      if (offsets[i].hash_key != std::string::npos) {
        task.hash_location = lines.At(file_label, offsets[i].hash_key);
      }
    } else {
      task.location = {file_label, 0, 0};
    }
    // The entry in the bank's key order where zx-bench shows it as JSON: a world's tools, and
    // the requirements a judge is shown (JSON.stringify keeps insertion order).
    const json* requirements = Field(task.raw, "requirements");
    const bool shown_as_json =
        (requirements != nullptr && requirements->is_object() &&
         Field(*requirements, "executionWorld") != nullptr) ||
        StringField(task.raw, "grader") == "hallucination_resistance";
    if (shown_as_json && i < offsets.size()) {
      // The entry's own bytes, up to where the next entry (or the array's end) starts.
      const std::size_t begin = offsets[i].begin;
      std::size_t end = i + 1 < offsets.size() ? offsets[i + 1].begin : bank_json.rfind(']');
      while (end > begin && bank_json[end - 1] != '}') --end;
      task.raw_ordered = nlohmann::ordered_json::parse(bank_json.substr(begin, end - begin));
    }
    if (task.skip_reason.empty()) ++runnable;
    suite.tasks.push_back(std::move(task));
  }
  suite.description = "zx-bench question bank (" + file_label + "): " + std::to_string(count) +
                      " entries, " + std::to_string(runnable) + " runnable here, " +
                      std::to_string(count - runnable) + " skipped";
  return suite;
}

}  // namespace evalrun
