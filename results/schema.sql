-- evalrun's results store (DESIGN.md section 10): one sqlite file, WAL mode, default
-- ./evalrun.db. This file is the schema: it is compiled into evalrun (results/CMakeLists.txt) and
-- run on a new database; `PRAGMA user_version` holds the schema version below. Older versions
-- are upgraded in place, one additive step at a time (version 2 added task_results.transcript,
-- version 3 requests.endpoint, each with a default); any other version is refused with a message
-- naming both versions, never altered.
--
-- Units: *_ns are nanoseconds, *_s seconds, *_at UTC ISO 8601 text ("2026-11-29T23:15:00Z"),
-- tokens are the server's token counts (-1 = not reported), scores are in [0, 1].
-- JSON columns hold compact JSON text.
--
-- One transaction per finished task (task_results + its requests), so a run killed at any point
-- loses at most the tasks that were in flight; those start over on --resume.

PRAGMA user_version = 3;

-- One row per run of `evalrun suite` or `evalrun speed --db`.
CREATE TABLE runs (
  id                TEXT PRIMARY KEY,    -- "r20261129-231500-3f2a": sortable by start time
  kind              TEXT NOT NULL,       -- 'suite' | 'speed'
  status            TEXT NOT NULL,       -- 'running' (or killed while running) | 'interrupted'
                                         -- (Ctrl-C, resumable) | 'finished'
  created_at        TEXT NOT NULL,       -- when the run started
  updated_at        TEXT NOT NULL,       -- last change of status
  evalrun_version   TEXT NOT NULL,
  suite_name        TEXT NOT NULL,       -- '' for a speed run
  suite_spec        TEXT NOT NULL,       -- as given: 'zx-bench@8e0adf6', 'tasks/smoke'
  suite_format      TEXT NOT NULL,       -- 'evalrun' | 'zxbench' | ''
  suite_repo        TEXT NOT NULL,       -- repository path or URL; '' for a bare path
  suite_path        TEXT NOT NULL,       -- folder or file inside it (or on disk)
  suite_commit      TEXT NOT NULL,       -- full commit id; '' = unpinned
  suite_tree        TEXT NOT NULL,       -- full tree id of that commit; '' = unpinned
  dimension_weights TEXT NOT NULL,       -- JSON {dimension: weight}; {} = equal weights
  endpoint          TEXT NOT NULL,       -- base URL
  model             TEXT NOT NULL,       -- model id as served
  server            TEXT NOT NULL,       -- JSON: server kind, version, build, context size
  settings          TEXT NOT NULL,       -- JSON: everything --resume must match (concurrency,
                                         -- max_tokens, thinking, filter, limit, quick, seed ...)
  labels            TEXT NOT NULL,       -- JSON {key: value} from --label
  environment       TEXT NOT NULL,       -- JSON: GPUs, driver, CPU, OS (environment probe)
  planned_tasks     INTEGER NOT NULL     -- tasks selected for the run (rows of run_tasks)
);

-- The plan: the tasks a suite run set out to do, in dispatch order. Fixed when the run starts.
CREATE TABLE run_tasks (
  run_id    TEXT NOT NULL REFERENCES runs(id),
  position  INTEGER NOT NULL,            -- 0-based dispatch order
  task_id   TEXT NOT NULL,
  task_hash TEXT NOT NULL,               -- full SHA-256 hex of the task (docs/task-format.md)
  PRIMARY KEY (run_id, task_id)
) WITHOUT ROWID;

-- One row per finished task: the primary key makes a second grade for a task impossible.
CREATE TABLE task_results (
  run_id         TEXT NOT NULL REFERENCES runs(id),
  task_id        TEXT NOT NULL,
  task_hash      TEXT NOT NULL,          -- full SHA-256 hex, as planned
  dimension      TEXT NOT NULL,
  difficulty     TEXT NOT NULL,
  weight         REAL NOT NULL,          -- difficulty weight x task weight, within the dimension
  task_group     TEXT NOT NULL,          -- zx-bench source question of a migrated instance; ''
  category       TEXT NOT NULL,          -- zx-bench category; '' for evalrun tasks
  status         TEXT NOT NULL,          -- grade status: graded | no_answer | budget_exhausted |
                                         -- timeout | model_error | env_error | skipped
  score          REAL NOT NULL,          -- [0, 1]
  passed         INTEGER NOT NULL,       -- 0 | 1
  reason         TEXT NOT NULL,          -- one line
  evidence       TEXT NOT NULL,          -- JSON: what the grader compared
  grader         TEXT NOT NULL,          -- grader name
  grader_version TEXT NOT NULL,
  output         TEXT NOT NULL,          -- the answer channel of the final request
  reasoning      TEXT NOT NULL,          -- reasoning_content / reasoning, kept apart
  finish_reason  TEXT NOT NULL,          -- 'stop', 'length', ... ('' if none arrived)
  transcript     TEXT NOT NULL DEFAULT 'null', -- JSON: an agent task's every turn (messages,
                                         -- replies, tool calls and results, timing); the output
                                         -- is then the episode record its grader reads
                                         -- (docs/agent.md). A judged task's {"judge": record}:
                                         -- the LLM judge's exchange (docs/bundle-format.md).
                                         -- null for other single-request tasks
  attempts       INTEGER NOT NULL,       -- requests retried after environment failures
  wall_s         REAL NOT NULL,          -- first request sent -> grade, seconds
  finished_at_ns INTEGER NOT NULL,       -- UTC wall clock, ns since the Unix epoch
  PRIMARY KEY (run_id, task_id)
) WITHOUT ROWID;

-- Every request sent for a task (retries included), in order. Times are ns since t_send on the
-- steady clock, stamped when bytes arrived, before parsing (docs/metrics.md); -1 = never.
CREATE TABLE requests (
  run_id             TEXT NOT NULL,
  task_id            TEXT NOT NULL,
  seq                INTEGER NOT NULL,     -- 0-based order within the task
  label              TEXT NOT NULL,
  t_send_ns          INTEGER NOT NULL,     -- steady clock of the machine that ran it, ns: only
                                           -- differences between requests of one run mean much
  queue_ns           INTEGER NOT NULL,     -- waiting in the client before t_send
  first_ns           INTEGER NOT NULL,     -- first event with text (content or reasoning)
  first_content_ns   INTEGER NOT NULL,     -- first event with content
  last_ns            INTEGER NOT NULL,     -- last event with text
  end_ns             INTEGER NOT NULL,     -- end of the stream
  text_event_ns      TEXT NOT NULL,        -- JSON array: arrival of every text event, ns
  events             INTEGER NOT NULL,     -- data events read
  http_status        INTEGER NOT NULL,     -- 0 when no response
  outcome            TEXT NOT NULL,        -- ok | connect_failed | http_error | stream_error |
                                           -- dropped | idle_timeout | total_timeout |
                                           -- malformed | cancelled
  error_message      TEXT NOT NULL,
  prompt_tokens_sent INTEGER NOT NULL,     -- what evalrun meant to send, -1 unknown
  max_tokens         INTEGER NOT NULL,     -- -1 = not sent
  finish_reason      TEXT NOT NULL,
  model              TEXT NOT NULL,        -- as echoed by the server
  system_fingerprint TEXT NOT NULL,
  prompt_tokens      INTEGER NOT NULL,     -- usage, tokens; -1 = not reported
  completion_tokens  INTEGER NOT NULL,
  cached_tokens      INTEGER NOT NULL,
  reasoning_tokens   INTEGER NOT NULL,
  usage_reported     INTEGER NOT NULL,     -- 0: token counts are estimates (text events)
  usage_raw          TEXT NOT NULL,        -- JSON: the usage object as sent, or null
  timings            TEXT NOT NULL,        -- JSON: {timings: llama.cpp's, meta_info: SGLang's}
  content_bytes      INTEGER NOT NULL,     -- size of this request's answer text, bytes
  reasoning_bytes    INTEGER NOT NULL,     -- size of its reasoning text, bytes
  endpoint           TEXT NOT NULL DEFAULT '', -- base URL it was sent to (a run over several
                                           -- endpoints, docs/serving.md); '' = the run's
                                           -- endpoint (rows written before version 3)
  PRIMARY KEY (run_id, task_id, seq)
) WITHOUT ROWID;

-- The speed protocol's results: `evalrun speed --db`, or the quick preset after a suite run.
CREATE TABLE speed_results (
  run_id  TEXT NOT NULL REFERENCES runs(id),
  seq     INTEGER NOT NULL,               -- 0-based, in the order they ran
  result  TEXT NOT NULL,                  -- JSON: the speed result with every request record
                                          -- (docs/metrics.md; `evalrun speed -o json`)
  PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;

-- The run's log: starts, pauses while the endpoint was away, retries, interrupts, resumes.
CREATE TABLE events (
  run_id  TEXT NOT NULL REFERENCES runs(id),
  seq     INTEGER NOT NULL,               -- 0-based order within the run
  at      TEXT NOT NULL,                  -- UTC ISO 8601
  kind    TEXT NOT NULL,                  -- start | pause | resume | retry | interrupt | speed |
                                          -- finish
  message TEXT NOT NULL,
  PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
