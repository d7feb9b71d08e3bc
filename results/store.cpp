// The sqlite results store. Statements are prepared once per connection and reused; every
// public call holds the mutex for its statements only.
#include "results/store.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <random>
#include <string_view>
#include <thread>
#include <utility>

#include "core/clock.h"
#include "core/error.h"
#include "results/schema_sql.h"  // generated from results/schema.sql: kSchemaSql

namespace evalrun {
namespace {

using nlohmann::json;

std::string Dump(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

json ParseJsonColumn(const std::string& text) {
  if (text.empty()) return nullptr;
  return json::parse(text, nullptr, /*allow_exceptions=*/false);
}

// A failed statement or exec as the user should read it. Write failures (disk full, read-only,
// locked by another process, I/O) end a run with exit 1 — what was committed stays intact and
// resumable — and say what to do; anything else is a bad database.
[[noreturn]] void ThrowStoreError(sqlite3* db, int rc, const std::string& message) {
  const char* name = sqlite3_db_filename(db, "main");
  const std::string path = name && *name ? name : "results store";
  switch (rc & 0xff) {
    case SQLITE_FULL:
      throw Error(path + ": cannot write the results database: " + message +
                      " (free space, then --resume: every finished task is saved)",
                  ExitCode::kSomeFailed);
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_CANTOPEN:
      throw Error(path + ": cannot write the results database: " + message +
                      " (check the permissions of the file and its folder, or pass another --db)",
                  ExitCode::kSomeFailed);
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      throw Error(path + ": the results database stayed locked by another process: " + message,
                  ExitCode::kSomeFailed);
    case SQLITE_IOERR:
      throw Error(path + ": cannot write the results database: " + message,
                  ExitCode::kSomeFailed);
    default:
      throw Error("results store: " + message);
  }
}

// One prepared statement; reset after each use.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql) : db_(db) {
    if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr) != SQLITE_OK) {
      throw Error(std::string("results store: cannot prepare statement: ") + sqlite3_errmsg(db));
    }
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& Bind(int i, const std::string& text) {
    sqlite3_bind_text(stmt_, i, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Statement& Bind(int i, const char* text) { return Bind(i, std::string(text)); }
  Statement& Bind(int i, int64_t value) {
    sqlite3_bind_int64(stmt_, i, value);
    return *this;
  }
  Statement& Bind(int i, int value) { return Bind(i, static_cast<int64_t>(value)); }
  Statement& Bind(int i, bool value) { return Bind(i, static_cast<int64_t>(value ? 1 : 0)); }
  Statement& Bind(int i, double value) {
    sqlite3_bind_double(stmt_, i, value);
    return *this;
  }

  // Steps once: true when a row is available.
  bool Step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    const std::string message = sqlite3_errmsg(db_);
    const int extended = sqlite3_extended_errcode(db_);
    Reset();
    if (extended == SQLITE_CONSTRAINT_PRIMARYKEY) throw ConstraintError(message);
    ThrowStoreError(db_, rc, message);
  }
  void Run() {
    Step();
    Reset();
  }
  void Reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }

  std::string Text(int column) const {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
    return text ? std::string(text, static_cast<size_t>(sqlite3_column_bytes(stmt_, column))) : "";
  }
  int64_t Int(int column) const { return sqlite3_column_int64(stmt_, column); }
  double Real(int column) const { return sqlite3_column_double(stmt_, column); }

  struct ConstraintError : Error {
    using Error::Error;
  };

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

// Resets a statement when the scope ends, whatever happens.
struct ResetOnExit {
  Statement& statement;
  ~ResetOnExit() { statement.Reset(); }
};

constexpr const char* kRunColumns =
    "id, kind, status, created_at, updated_at, evalrun_version, suite_name, suite_spec, "
    "suite_format, suite_repo, suite_path, suite_commit, suite_tree, dimension_weights, endpoint, "
    "model, server, settings, labels, environment, planned_tasks";

RunInfo ReadRun(const Statement& s) {
  RunInfo info;
  info.id = s.Text(0);
  info.kind = s.Text(1);
  info.status = s.Text(2);
  info.created_at = s.Text(3);
  info.updated_at = s.Text(4);
  info.evalrun_version = s.Text(5);
  info.suite_name = s.Text(6);
  info.suite_spec = s.Text(7);
  info.suite_format = s.Text(8);
  info.suite_repo = s.Text(9);
  info.suite_path = s.Text(10);
  info.suite_commit = s.Text(11);
  info.suite_tree = s.Text(12);
  const json weights = ParseJsonColumn(s.Text(13));
  if (weights.is_object()) {
    for (const auto& [k, v] : weights.items()) {
      if (v.is_number()) info.dimension_weights[k] = v.get<double>();
    }
  }
  info.endpoint = s.Text(14);
  info.model = s.Text(15);
  info.server = ParseJsonColumn(s.Text(16));
  info.settings = ParseJsonColumn(s.Text(17));
  const json labels = ParseJsonColumn(s.Text(18));
  if (labels.is_object()) {
    for (const auto& [k, v] : labels.items()) {
      if (v.is_string()) info.labels[k] = v.get<std::string>();
    }
  }
  info.environment = ParseJsonColumn(s.Text(19));
  info.planned_tasks = s.Int(20);
  return info;
}

json TimingsJson(const ServerTimings& timings) {
  return {{"timings", timings.raw_timings}, {"meta_info", timings.raw_meta_info}};
}


std::string EventArray(const std::vector<int64_t>& values) {
  std::string out;
  out.reserve(values.size() * 10 + 2);
  out += '[';
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(values[i]);
  }
  out += ']';
  return out;
}

}  // namespace

void ReadServerTimings(const json& stored, ServerTimings& timings) {
  if (!stored.is_object()) return;
  timings.raw_timings = stored.value("timings", json());
  timings.raw_meta_info = stored.value("meta_info", json());
  auto number = [](const json& object, const char* key) -> std::optional<double> {
    if (!object.is_object()) return std::nullopt;
    const auto it = object.find(key);
    if (it == object.end() || !it->is_number()) return std::nullopt;
    return it->get<double>();
  };
  const json& t = timings.raw_timings;
  timings.prompt_n = number(t, "prompt_n");
  timings.prompt_ms = number(t, "prompt_ms");
  timings.prompt_per_second = number(t, "prompt_per_second");
  timings.predicted_n = number(t, "predicted_n");
  timings.predicted_ms = number(t, "predicted_ms");
  timings.predicted_per_second = number(t, "predicted_per_second");
  timings.draft_n = number(t, "draft_n");
  timings.draft_n_accepted = number(t, "draft_n_accepted");
  timings.spec_accept_length = number(timings.raw_meta_info, "spec_accept_length");
}

struct ResultStore::Impl {
  std::string path;
  sqlite3* db = nullptr;
  int lock_fd = -1;  // LockRun's open file description on the database file
  mutable std::mutex mutex;
  std::unique_ptr<Statement> insert_result, insert_request, insert_event, next_event, in_plan;

  ~Impl() {
    insert_result.reset();
    insert_request.reset();
    insert_event.reset();
    next_event.reset();
    in_plan.reset();
    if (db) sqlite3_close_v2(db);
    if (lock_fd >= 0) close(lock_fd);
  }

  void Exec(const char* sql) const {
    char* message = nullptr;
    if (const int rc = sqlite3_exec(db, sql, nullptr, nullptr, &message); rc != SQLITE_OK) {
      const std::string text = message ? message : sqlite3_errmsg(db);
      sqlite3_free(message);
      switch (rc & 0xff) {
        case SQLITE_FULL:
        case SQLITE_READONLY:
        case SQLITE_PERM:
        case SQLITE_BUSY:
        case SQLITE_LOCKED:
        case SQLITE_IOERR: ThrowStoreError(db, rc, text);
        default: throw Error(path + ": " + text);
      }
    }
  }

  int64_t Scalar(const char* sql) const {
    Statement s(db, sql);
    return s.Step() ? s.Int(0) : 0;
  }

  // Upgrades a database of schema `from` (1 or 2) to kStoreSchemaVersion in place, in one
  // transaction. Throws Error "<path>: cannot upgrade the results database from schema 1 to 3:
  // <why>".
  void UpgradeSchema(int64_t from) const {
    const std::string failed = path + ": cannot upgrade the results database from schema " +
                               std::to_string(from) + " to " +
                               std::to_string(kStoreSchemaVersion) + ": ";
    try {
      Exec("BEGIN IMMEDIATE");
    } catch (const Error& e) {
      throw Error(failed + e.what());
    }
    try {
      // Another evalrun may have upgraded it while this one waited for the lock.
      const int64_t now = Scalar("PRAGMA user_version");
      if (now <= 1) {
        Exec("ALTER TABLE task_results ADD COLUMN transcript TEXT NOT NULL DEFAULT 'null'");
      }
      if (now <= 2) Exec("ALTER TABLE requests ADD COLUMN endpoint TEXT NOT NULL DEFAULT ''");
      if (now < kStoreSchemaVersion) {
        Exec(("PRAGMA user_version = " + std::to_string(kStoreSchemaVersion)).c_str());
      }
      Exec("COMMIT");
    } catch (const Error& e) {
      Exec("ROLLBACK");
      throw Error(failed + e.what());
    }
  }

  void AddEventLocked(const std::string& run_id, const std::string& kind,
                      const std::string& message) {
    int64_t seq = 0;
    {
      ResetOnExit reset{*next_event};
      next_event->Bind(1, run_id);
      if (next_event->Step()) seq = next_event->Int(0);
    }
    insert_event->Bind(1, run_id).Bind(2, seq).Bind(3, UtcNowIso()).Bind(4, kind).Bind(5, message);
    insert_event->Run();
  }
};

ResultStore::ResultStore(const std::string& path) : impl_(std::make_unique<Impl>()) {
  impl_->path = path;
  if (sqlite3_open_v2(path.c_str(), &impl_->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                      nullptr) != SQLITE_OK) {
    const std::string message = impl_->db ? sqlite3_errmsg(impl_->db) : "out of memory";
    throw Error(path + ": cannot open the results database: " + message);
  }
  sqlite3_busy_timeout(impl_->db, 10000);
  if (const char* pages = std::getenv("EVALRUN_TEST_DB_MAX_PAGES")) {
    // Tests only (docs/limits.md): a database that cannot grow past N pages fails its writes
    // with SQLITE_FULL exactly like a full disk, without needing a small filesystem or root.
    impl_->Exec(("PRAGMA max_page_count = " + std::to_string(std::atoll(pages))).c_str());
  }
  if (sqlite3_db_readonly(impl_->db, "main") == 1) {
    throw Error(path + ": the results database is read-only (check the permissions of the file "
                       "and its folder, or pass another --db)", ExitCode::kSomeFailed);
  }
  // Switching a new file to WAL needs it alone for a moment, and sqlite answers SQLITE_BUSY at
  // once (no busy handler) when another connection is opening it too: two first runs on one new
  // file retry here for up to 10 s instead of failing.
  for (int attempt = 0;; ++attempt) {
    try {
      impl_->Exec("PRAGMA journal_mode=WAL");
      break;
    } catch (const Error& e) {
      const bool busy = std::string_view(e.what()).find("locked") != std::string_view::npos;
      if (busy && attempt < 200) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        continue;
      }
      if (e.code() == ExitCode::kSomeFailed) throw;  // read-only, full or locked: said above
      throw Error(path + ": not a results database (" + e.what() + ")");
    }
  }
  impl_->Exec("PRAGMA synchronous=NORMAL");
  impl_->Exec("PRAGMA foreign_keys=ON");
  int64_t version = impl_->Scalar("PRAGMA user_version");
  if (version == 0) {
    impl_->Exec("BEGIN IMMEDIATE");
    try {
      // Two first runs on one new file both saw version 0; the second got the write lock after
      // the first committed the schema, so it looks again under the lock.
      version = impl_->Scalar("PRAGMA user_version");
      if (version == 0) {
        if (impl_->Scalar("SELECT count(*) FROM sqlite_master") != 0) {
          throw Error(path + ": not an evalrun results database (it has tables but no evalrun "
                             "schema version)");
        }
        impl_->Exec(kSchemaSql);
        version = kStoreSchemaVersion;
      }
      impl_->Exec("COMMIT");
    } catch (...) {
      sqlite3_exec(impl_->db, "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
  }
  if (version == 0 || version == kStoreSchemaVersion) {
    // created above, or current
  } else if (version >= 1 && version < kStoreSchemaVersion) {
    // Every step so far is additive (a column with a default), so older rows read as before.
    impl_->UpgradeSchema(version);
  } else if (version != kStoreSchemaVersion) {
    throw Error(path + ": results database schema version " + std::to_string(version) +
                ", this evalrun reads version " + std::to_string(kStoreSchemaVersion));
  }
  sqlite3* db = impl_->db;
  impl_->insert_result = std::make_unique<Statement>(
      db,
      "INSERT INTO task_results (run_id, task_id, task_hash, dimension, difficulty, weight, "
      "task_group, category, status, score, passed, reason, evidence, grader, grader_version, "
      "output, reasoning, finish_reason, attempts, wall_s, finished_at_ns, transcript) VALUES "
      "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, "
      "?20, ?21, ?22)");
  impl_->insert_request = std::make_unique<Statement>(
      db,
      "INSERT INTO requests (run_id, task_id, seq, label, t_send_ns, queue_ns, first_ns, "
      "first_content_ns, last_ns, end_ns, text_event_ns, events, http_status, outcome, "
      "error_message, prompt_tokens_sent, max_tokens, finish_reason, model, system_fingerprint, "
      "prompt_tokens, completion_tokens, cached_tokens, reasoning_tokens, usage_reported, "
      "usage_raw, timings, content_bytes, reasoning_bytes, endpoint) VALUES (?1, ?2, ?3, ?4, "
      "?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, "
      "?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30)");
  impl_->insert_event = std::make_unique<Statement>(
      db, "INSERT INTO events (run_id, seq, at, kind, message) VALUES (?1, ?2, ?3, ?4, ?5)");
  impl_->next_event = std::make_unique<Statement>(
      db, "SELECT coalesce(max(seq) + 1, 0) FROM events WHERE run_id = ?1");
  impl_->in_plan = std::make_unique<Statement>(
      db, "SELECT task_hash FROM run_tasks WHERE run_id = ?1 AND task_id = ?2");
}

ResultStore::~ResultStore() = default;

const std::string& ResultStore::path() const { return impl_->path; }

std::string ResultStore::NewRunId() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  std::random_device device;
  char suffix[8];
  std::snprintf(suffix, sizeof suffix, "%04x", static_cast<unsigned>(device() & 0xffff));
  return std::string("r") + stamp + "-" + suffix;
}

void ResultStore::CreateRun(const RunInfo& info, const std::vector<PlannedTask>& plan) {
  std::lock_guard lock(impl_->mutex);
  impl_->Exec("BEGIN IMMEDIATE");
  try {
    json weights = json::object();
    for (const auto& [k, v] : info.dimension_weights) weights[k] = v;
    json labels = json::object();
    for (const auto& [k, v] : info.labels) labels[k] = v;
    Statement run(impl_->db,
                  (std::string("INSERT INTO runs (") + kRunColumns +
                   ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, "
                   "?16, ?17, ?18, ?19, ?20, ?21)")
                      .c_str());
    const std::string now = info.created_at.empty() ? UtcNowIso() : info.created_at;
    run.Bind(1, info.id).Bind(2, info.kind).Bind(3, info.status).Bind(4, now).Bind(5, now);
    run.Bind(6, info.evalrun_version).Bind(7, info.suite_name).Bind(8, info.suite_spec);
    run.Bind(9, info.suite_format).Bind(10, info.suite_repo).Bind(11, info.suite_path);
    run.Bind(12, info.suite_commit).Bind(13, info.suite_tree).Bind(14, Dump(weights));
    run.Bind(15, info.endpoint).Bind(16, info.model).Bind(17, Dump(info.server));
    run.Bind(18, Dump(info.settings)).Bind(19, Dump(labels)).Bind(20, Dump(info.environment));
    run.Bind(21, static_cast<int64_t>(plan.size()));
    try {
      run.Run();
    } catch (const Statement::ConstraintError&) {
      throw Error(impl_->path + ": a run with id " + info.id + " already exists");
    }
    Statement task(impl_->db,
                   "INSERT INTO run_tasks (run_id, position, task_id, task_hash) VALUES (?1, ?2, "
                   "?3, ?4)");
    for (size_t i = 0; i < plan.size(); ++i) {
      task.Bind(1, info.id).Bind(2, static_cast<int64_t>(i)).Bind(3, plan[i].task_id);
      task.Bind(4, plan[i].task_hash);
      try {
        task.Run();
      } catch (const Statement::ConstraintError&) {
        throw Error("run " + info.id + ": task '" + plan[i].task_id + "' planned twice");
      }
    }
    impl_->AddEventLocked(info.id, "start",
                          "planned " + std::to_string(plan.size()) + " tasks");
    impl_->Exec("COMMIT");
  } catch (...) {
    sqlite3_exec(impl_->db, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

// One byte per run, far past anything sqlite locks (its lock bytes sit at 1 GiB): an open file
// description lock (F_OFD_SETLK) belongs to this process's descriptor alone, so sqlite closing
// its own descriptors never releases it, and the kernel releases it when the process dies —
// kill -9 included — so a crashed run is resumable at once, with no stale lock to clear.
void ResultStore::LockRun(const std::string& run_id) {
  std::lock_guard lock(impl_->mutex);
  if (impl_->lock_fd < 0) {
    impl_->lock_fd = open(impl_->path.c_str(), O_RDWR | O_CLOEXEC);
    if (impl_->lock_fd < 0) {
      throw Error(impl_->path + ": cannot open the results database to lock run " + run_id,
                  ExitCode::kSomeFailed);
    }
  }
  uint64_t hash = 1469598103934665603ull;  // FNV-1a: a stable byte for the run id
  for (const char c : run_id) hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  struct flock range {};
  range.l_type = F_WRLCK;
  range.l_whence = SEEK_SET;
  range.l_start = static_cast<off_t>((int64_t{1} << 40) + static_cast<int64_t>(hash >> 34));
  range.l_len = 1;
  if (fcntl(impl_->lock_fd, F_OFD_SETLK, &range) != 0) {
    throw Error(impl_->path + ": run " + run_id +
                " is being run by another evalrun process right now; wait for it to finish or "
                "stop it (Ctrl-C), then --resume " + run_id);
  }
}

void ResultStore::SetStatus(const std::string& run_id, const std::string& status) {
  std::lock_guard lock(impl_->mutex);
  Statement s(impl_->db, "UPDATE runs SET status = ?1, updated_at = ?2 WHERE id = ?3");
  s.Bind(1, status).Bind(2, UtcNowIso()).Bind(3, run_id);
  s.Run();
}

void ResultStore::AddEvent(const std::string& run_id, const std::string& kind,
                           const std::string& message) {
  std::lock_guard lock(impl_->mutex);
  impl_->AddEventLocked(run_id, kind, message);
}

void ResultStore::CommitTask(const std::string& run_id, const TaskResult& r) {
  std::lock_guard lock(impl_->mutex);
  {
    ResetOnExit reset{*impl_->in_plan};
    impl_->in_plan->Bind(1, run_id).Bind(2, r.task_id);
    if (!impl_->in_plan->Step()) {
      throw Error("run " + run_id + ": task '" + r.task_id + "' is not in the run's plan");
    }
  }
  impl_->Exec("BEGIN IMMEDIATE");
  try {
    // A task that ended env_error is run again by --resume: its old row gives way, and its
    // requests stay, numbered before the new attempt's, so the record keeps every attempt.
    int64_t seq_base = 0;
    {
      Statement old(impl_->db,
                    "SELECT status FROM task_results WHERE run_id = ?1 AND task_id = ?2");
      old.Bind(1, run_id).Bind(2, r.task_id);
      if (old.Step() && old.Text(0) == GradeStatusName(GradeStatus::kEnvError)) {
        Statement next(impl_->db,
                       "SELECT coalesce(max(seq) + 1, 0) FROM requests WHERE run_id = ?1 AND "
                       "task_id = ?2");
        next.Bind(1, run_id).Bind(2, r.task_id);
        if (next.Step()) seq_base = next.Int(0);
        Statement drop(impl_->db, "DELETE FROM task_results WHERE run_id = ?1 AND task_id = ?2");
        drop.Bind(1, run_id).Bind(2, r.task_id);
        drop.Run();
      }
    }
    Statement& t = *impl_->insert_result;
    t.Bind(1, run_id).Bind(2, r.task_id).Bind(3, r.task_hash).Bind(4, r.dimension);
    t.Bind(5, r.difficulty).Bind(6, r.weight).Bind(7, r.group).Bind(8, r.category);
    t.Bind(9, GradeStatusName(r.grade.status)).Bind(10, r.grade.score).Bind(11, r.grade.passed);
    t.Bind(12, r.grade.reason).Bind(13, Dump(r.grade.evidence)).Bind(14, r.grade.grader);
    t.Bind(15, r.grade.grader_version).Bind(16, r.output).Bind(17, r.reasoning);
    t.Bind(18, r.finish_reason).Bind(19, r.attempts).Bind(20, r.wall_s);
    t.Bind(21, r.finished_at_ns).Bind(22, Dump(r.transcript));
    try {
      t.Run();
    } catch (const Statement::ConstraintError&) {
      throw Error("task '" + r.task_id + "' of run " + run_id + " is already graded");
    }
    Statement& q = *impl_->insert_request;
    for (size_t i = 0; i < r.requests.size(); ++i) {
      const RequestRecord& rec = r.requests[i];
      q.Bind(1, run_id).Bind(2, r.task_id).Bind(3, seq_base + static_cast<int64_t>(i));
      q.Bind(4, rec.label);
      q.Bind(5, static_cast<int64_t>(rec.t_send.time_since_epoch().count()));
      q.Bind(6, rec.queue_ns).Bind(7, rec.first_ns).Bind(8, rec.first_content_ns);
      q.Bind(9, rec.last_ns).Bind(10, rec.end_ns).Bind(11, EventArray(rec.text_event_ns));
      q.Bind(12, rec.events).Bind(13, rec.http_status).Bind(14, OutcomeName(rec.outcome));
      q.Bind(15, rec.error_message).Bind(16, rec.prompt_tokens_sent).Bind(17, rec.max_tokens);
      q.Bind(18, rec.finish_reason).Bind(19, rec.model).Bind(20, rec.system_fingerprint);
      q.Bind(21, rec.usage.prompt_tokens).Bind(22, rec.usage.completion_tokens);
      q.Bind(23, rec.usage.cached_tokens).Bind(24, rec.usage.reasoning_tokens);
      q.Bind(25, rec.usage_reported).Bind(26, Dump(rec.usage.raw));
      q.Bind(27, Dump(TimingsJson(rec.timings)));
      q.Bind(28, static_cast<int64_t>(rec.content.size()));
      q.Bind(29, static_cast<int64_t>(rec.reasoning.size())).Bind(30, rec.endpoint);
      q.Run();
    }
    impl_->Exec("COMMIT");
  } catch (...) {
    sqlite3_exec(impl_->db, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

void ResultStore::SaveSpeed(const std::string& run_id, const json& speed_result) {
  std::lock_guard lock(impl_->mutex);
  Statement s(impl_->db,
              "INSERT INTO speed_results (run_id, seq, result) VALUES (?1, (SELECT coalesce(max(seq) "
              "+ 1, 0) FROM speed_results WHERE run_id = ?1), ?2)");
  s.Bind(1, run_id).Bind(2, Dump(speed_result));
  s.Run();
}

std::vector<RunInfo> ResultStore::ListRuns() const {
  std::lock_guard lock(impl_->mutex);
  Statement s(impl_->db, (std::string("SELECT ") + kRunColumns +
                          " FROM runs ORDER BY created_at DESC, id DESC")
                             .c_str());
  std::vector<RunInfo> runs;
  while (s.Step()) runs.push_back(ReadRun(s));
  return runs;
}

std::optional<RunInfo> ResultStore::FindRun(const std::string& run_id) const {
  std::lock_guard lock(impl_->mutex);
  Statement s(impl_->db,
              (std::string("SELECT ") + kRunColumns + " FROM runs WHERE id = ?1").c_str());
  s.Bind(1, run_id);
  if (!s.Step()) return std::nullopt;
  return ReadRun(s);
}

std::vector<PlannedTask> ResultStore::Plan(const std::string& run_id) const {
  std::lock_guard lock(impl_->mutex);
  Statement s(impl_->db,
              "SELECT task_id, task_hash FROM run_tasks WHERE run_id = ?1 ORDER BY position");
  s.Bind(1, run_id);
  std::vector<PlannedTask> plan;
  while (s.Step()) plan.push_back({s.Text(0), s.Text(1)});
  return plan;
}

std::set<std::string> ResultStore::EnvErrorTaskIds(const std::string& run_id) const {
  std::lock_guard lock(impl_->mutex);
  Statement s(impl_->db, "SELECT task_id FROM task_results WHERE run_id = ?1 AND status = ?2");
  s.Bind(1, run_id).Bind(2, GradeStatusName(GradeStatus::kEnvError));
  std::set<std::string> ids;
  while (s.Step()) ids.insert(s.Text(0));
  return ids;
}

std::set<std::string> ResultStore::FinishedTaskIds(const std::string& run_id) const {
  std::lock_guard lock(impl_->mutex);
  Statement s(impl_->db, "SELECT task_id FROM task_results WHERE run_id = ?1");
  s.Bind(1, run_id);
  std::set<std::string> ids;
  while (s.Step()) ids.insert(s.Text(0));
  return ids;
}

int64_t ResultStore::FinishedCount(const std::string& run_id) const {
  std::lock_guard lock(impl_->mutex);
  Statement s(impl_->db, "SELECT count(*) FROM task_results WHERE run_id = ?1");
  s.Bind(1, run_id);
  return s.Step() ? s.Int(0) : 0;
}

RunData ResultStore::LoadRun(const std::string& run_id) const {
  std::optional<RunInfo> info = FindRun(run_id);
  if (!info) throw Error(impl_->path + ": no run " + run_id + " (evalrun runs lists them)");
  std::lock_guard lock(impl_->mutex);
  RunData data;
  data.info = std::move(*info);

  Statement t(impl_->db,
              "SELECT task_id, task_hash, dimension, difficulty, weight, task_group, category, "
              "status, score, passed, reason, evidence, grader, grader_version, output, "
              "reasoning, finish_reason, attempts, wall_s, finished_at_ns, transcript FROM task_results "
              "WHERE run_id = ?1 ORDER BY finished_at_ns, task_id");
  t.Bind(1, run_id);
  std::map<std::string, size_t> index;
  while (t.Step()) {
    TaskResult r;
    r.task_id = t.Text(0);
    r.task_hash = t.Text(1);
    r.dimension = t.Text(2);
    r.difficulty = t.Text(3);
    r.weight = t.Real(4);
    r.group = t.Text(5);
    r.category = t.Text(6);
    r.grade.status = ParseGradeStatus(t.Text(7)).value_or(GradeStatus::kEnvError);
    r.grade.score = t.Real(8);
    r.grade.passed = t.Int(9) != 0;
    r.grade.reason = t.Text(10);
    r.grade.evidence = ParseJsonColumn(t.Text(11));
    r.grade.grader = t.Text(12);
    r.grade.grader_version = t.Text(13);
    r.output = t.Text(14);
    r.reasoning = t.Text(15);
    r.finish_reason = t.Text(16);
    r.attempts = static_cast<int>(t.Int(17));
    r.wall_s = t.Real(18);
    r.finished_at_ns = t.Int(19);
    r.transcript = ParseJsonColumn(t.Text(20));
    index[r.task_id] = data.tasks.size();
    data.tasks.push_back(std::move(r));
  }

  Statement q(impl_->db,
              "SELECT task_id, label, t_send_ns, queue_ns, first_ns, first_content_ns, last_ns, "
              "end_ns, text_event_ns, events, http_status, outcome, error_message, "
              "prompt_tokens_sent, max_tokens, finish_reason, model, system_fingerprint, "
              "prompt_tokens, completion_tokens, cached_tokens, reasoning_tokens, "
              "usage_reported, usage_raw, timings, endpoint FROM requests WHERE run_id = ?1 "
              "ORDER BY "
              "task_id, seq");
  q.Bind(1, run_id);
  while (q.Step()) {
    const auto it = index.find(q.Text(0));
    if (it == index.end()) continue;
    RequestRecord rec;
    rec.label = q.Text(1);
    rec.t_send = TimePoint(std::chrono::nanoseconds(q.Int(2)));
    rec.queue_ns = q.Int(3);
    rec.first_ns = q.Int(4);
    rec.first_content_ns = q.Int(5);
    rec.last_ns = q.Int(6);
    rec.end_ns = q.Int(7);
    const json events = ParseJsonColumn(q.Text(8));
    if (events.is_array()) {
      rec.text_event_ns.reserve(events.size());
      for (const auto& v : events) rec.text_event_ns.push_back(v.get<int64_t>());
    }
    rec.events = q.Int(9);
    rec.http_status = static_cast<int>(q.Int(10));
    rec.outcome = ParseOutcome(q.Text(11)).value_or(RequestOutcome::kMalformed);
    rec.error_message = q.Text(12);
    rec.prompt_tokens_sent = q.Int(13);
    rec.max_tokens = q.Int(14);
    rec.finish_reason = q.Text(15);
    rec.model = q.Text(16);
    rec.system_fingerprint = q.Text(17);
    rec.usage.prompt_tokens = q.Int(18);
    rec.usage.completion_tokens = q.Int(19);
    rec.usage.cached_tokens = q.Int(20);
    rec.usage.reasoning_tokens = q.Int(21);
    rec.usage_reported = q.Int(22) != 0;
    rec.usage.raw = ParseJsonColumn(q.Text(23));
    ReadServerTimings(ParseJsonColumn(q.Text(24)), rec.timings);
    rec.endpoint = q.Text(25);
    if (rec.endpoint.empty()) rec.endpoint = data.info.endpoint;  // written before version 3
    data.tasks[it->second].requests.push_back(std::move(rec));
  }
  // The final request's text is the task's output; earlier requests' texts are not kept.
  for (TaskResult& r : data.tasks) {
    if (!r.requests.empty()) {
      r.requests.back().content = r.output;
      r.requests.back().reasoning = r.reasoning;
    }
  }

  Statement sp(impl_->db,
               "SELECT result FROM speed_results WHERE run_id = ?1 ORDER BY seq DESC LIMIT 1");
  sp.Bind(1, run_id);
  if (sp.Step()) data.speed = ParseJsonColumn(sp.Text(0));

  Statement ev(impl_->db, "SELECT at, kind, message FROM events WHERE run_id = ?1 ORDER BY seq");
  ev.Bind(1, run_id);
  while (ev.Step()) data.events.push_back({ev.Text(0), ev.Text(1), ev.Text(2)});
  return data;
}

std::string ResultStore::IntegrityCheck() const {
  std::lock_guard lock(impl_->mutex);
  Statement s(impl_->db, "PRAGMA integrity_check");
  std::string out;
  while (s.Step()) {
    if (!out.empty()) out += "; ";
    out += s.Text(0);
  }
  return out;
}

}  // namespace evalrun
