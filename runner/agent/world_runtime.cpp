// The world runtime (runner/agent/world_runtime.h): one episode's tool calls run by a Python
// driver in the sandbox, with toolWorld.ts's semantics (T = execution/toolWorld.ts, Little-Star888
// copy at a5f6a19f).
#include "runner/agent/world_runtime.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/clock.h"
#include "core/error.h"
#include "core/js_value.h"

namespace evalrun::zx {

using js::JsStringify;
using js::NumberOf;
using json = nlohmann::json;

namespace {

// ---- The driver -------------------------------------------------------------------------------

// Runs calls inside the sandbox with toolWorld.ts's semantics (T L28-148: argument checks,
// path templates, the six tool kinds, exceptions roll back, tool_error commits), on a stdout the
// tool's code cannot reach (its own prints go to stderr). Two ways:
//   evalrun_world.py            one call: the request as JSON on stdin; writes
//                               "EVALRUN-WORLD <report>" and, when the state is committed,
//                               "EVALRUN-STATE <state>" (WorldLimits::process_per_call).
//   evalrun_world.py --serve S  a session (SandboxSession): one request per stdin line, one reply
//                               line each, "<report>" or "<report>\t<state>" (JSON never holds
//                               a raw tab or newline); "{}" is the start handshake, answered
//                               {"ready":true}. Each call may use S more CPU seconds
//                               (RLIMIT_CPU's soft limit, moved before each call).
// The request carries everything (tools, state, history, tool, args), so a restarted session
// answers exactly as the first; the tool's code runs in a fresh scope every call.
constexpr const char* kDriver = R"PY(import json, os, sys, time
_out = os.fdopen(os.dup(1), "w", encoding="utf-8")
os.dup2(2, 1)
_serve = len(sys.argv) > 2 and sys.argv[1] == "--serve"
if _serve:
    import resource
    _in = os.fdopen(os.dup(0), "rb")
    _null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(_null, 0)
    os.close(_null)
    _cpu_per_call = float(sys.argv[2])
_kinds = {"string": str, "number": (int, float), "boolean": bool, "object": dict,
          "array": list, "any": object}
state = None
history = None

def _parts(template, args):
    parts = []
    for piece in template.split("/"):
        if piece.startswith("{") and piece.endswith("}"):
            value = args.get(piece[1:-1])
            if not isinstance(value, (str, int)):
                raise ValueError("path argument missing or invalid")
            parts.append(str(value))
        else:
            parts.append(piece)
    if not parts or any(not p or p in (".", "..") for p in parts):
        raise ValueError("invalid state path")
    return parts

def _get(parts):
    node = state
    for p in parts:
        if not isinstance(node, dict) or p not in node:
            return None
        node = node[p]
    return node

def _slot(parts):
    node = state
    for p in parts[:-1]:
        if not isinstance(node.get(p), dict):
            node[p] = {}
        node = node[p]
    return node, parts[-1]

def _call(_req):
    global state, history
    state = _req["state"]
    history = _req["history"]
    _specs = _req["tools"]
    _call_args = _req["args"]
    _history_ok = False
    _error = None
    _state_text = None
    _script_s = 0.0
    try:
        tool = next((t for t in _specs if t["name"] == _req["tool"]), None)
        if tool is None:
            raise ValueError("TOOL_NOT_ALLOWED")
        args = _call_args
        if not isinstance(args, dict):
            raise ValueError("INVALID_ARGS")
        for key, kind in tool.get("requiredArgs", {}).items():
            if key not in args or not isinstance(args[key], _kinds[kind]) or (
                    kind == "number" and isinstance(args[key], bool)):
                raise ValueError("INVALID_ARG_" + key)
        if any(key not in tool.get("requiredArgs", {}) for key in args):
            raise ValueError("UNKNOWN_ARG")
        prior = tool.get("requirePriorCall")
        if prior and not any(h["tool"] == prior["tool"]
                             and (h.get("ok") or h.get("error") in prior.get("allowedErrors", []))
                             and all(h["args"].get(k) == args.get(k)
                                     for k in prior.get("sameArgs", []))
                             for h in history):
            raise ValueError("PRIOR_CALL_REQUIRED")
        cond = tool.get("requireArgEqualsState")
        if cond and args.get(cond["arg"]) != _get(_parts(cond["path"], args)):
            raise ValueError("DEPENDENCY_NOT_SATISFIED")
        path = _parts(tool["path"], args)
        current = _get(path)
        kind = tool["kind"]
        tool_error = None
        if kind == "script":
            scope = {"state": state, "args": args, "history": history, "result": None,
                     "tool_error": None}
            _t0 = time.perf_counter()
            try:
                exec(compile(tool["script"], "<trusted-business-tool>", "exec"), scope)
            finally:
                _script_s = time.perf_counter() - _t0
            result = scope["result"]
            tool_error = scope["tool_error"]
        elif kind == "read":
            search = tool.get("searchKeyArg")
            if search:
                query = args.get(search)
                if not isinstance(query, str) or not isinstance(current, dict):
                    raise ValueError("INVALID_SEARCH")
                hits = [k for k in current if k.lower() in query.lower()]
                current = current[max(hits, key=len)] if hits else None
            if current is None:
                raise ValueError("NOT_FOUND")
            result = current
            if tool.get("saveResultAs"):
                target, key = _slot(_parts(tool["saveResultAs"], args))
                target[key] = current
        elif kind == "set":
            if tool.get("onlyIfMissing") and current is not None:
                raise ValueError("ALREADY_EXISTS")
            value = args.get(tool.get("valueArg"))
            if value is None:
                raise ValueError("VALUE_MISSING")
            target, key = _slot(path)
            target[key] = value
            result = value
        elif kind == "replace":
            patch = args.get(tool.get("valueArg"))
            if (not isinstance(patch, dict) or not isinstance(patch.get("old"), str)
                    or not isinstance(patch.get("new"), str)):
                raise ValueError("INVALID_PATCH")
            if current != patch["old"]:
                raise ValueError("PATCH_PRECONDITION_FAILED")
            target, key = _slot(path)
            target[key] = patch["new"]
            result = patch["new"]
        elif kind == "append":
            target, key = _slot(path)
            if key not in target:
                target[key] = []
            if not isinstance(target[key], list):
                raise ValueError("NOT_A_LIST")
            value = args.get(tool["valueArg"]) if tool.get("valueArg") else args
            if value is None:
                raise ValueError("VALUE_MISSING")
            target[key].append(value)
            result = value
        elif kind == "delete":
            target, key = _slot(path)
            if key not in target:
                raise ValueError("NOT_FOUND")
            result = target.pop(key)
        else:
            raise ValueError("INVALID_TOOL_KIND")
        _state_text = json.dumps(state, ensure_ascii=False)
        _history_ok = tool_error is None
        _error = tool_error
        _report = json.dumps({"ok": _history_ok, "result": result, "error": tool_error},
                             ensure_ascii=False)
    except Exception as e:
        _error = str(e)
        _report = json.dumps({"ok": False, "error": str(e)}, ensure_ascii=False)
    _meta = json.loads(_report)
    _meta["history_ok"] = _history_ok
    _meta["history_error"] = _error
    _meta["script_ms"] = _script_s * 1000.0
    return json.dumps(_meta, ensure_ascii=False), _state_text

def _limit_cpu():
    try:
        used = resource.getrusage(resource.RUSAGE_SELF)
        soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
        want = int(used.ru_utime + used.ru_stime + _cpu_per_call + 0.999)
        if hard != resource.RLIM_INFINITY:
            want = min(want, hard)
        resource.setrlimit(resource.RLIMIT_CPU, (want, hard))
    except Exception:
        pass

if not _serve:
    _meta_text, _state_text = _call(json.loads(sys.stdin.buffer.read().decode("utf-8")))
    _out.write("EVALRUN-WORLD " + _meta_text + "\n")
    if _state_text is not None:
        _out.write("EVALRUN-STATE " + _state_text + "\n")
    _out.flush()
    os._exit(0)
while True:
    _line = _in.readline()
    if not _line:
        break
    _req = json.loads(_line.decode("utf-8"))
    if "tool" not in _req:
        _out.write('{"ready":true}\n')
        _out.flush()
        continue
    _limit_cpu()
    _meta_text, _state_text = _call(_req)
    try:
        sys.stdout.flush()
    except Exception:
        pass
    _out.write(_meta_text + ("" if _state_text is None else "\t" + _state_text) + "\n")
    _out.flush()
os._exit(0)
)PY";

std::optional<std::string_view> ReportLine(std::string_view out, std::string_view prefix) {
  size_t at = 0;
  while (at < out.size()) {
    const size_t nl = out.find('\n', at);
    const std::string_view line =
        out.substr(at, nl == std::string_view::npos ? std::string_view::npos : nl - at);
    if (line.substr(0, prefix.size()) == prefix) return line.substr(prefix.size());
    if (nl == std::string_view::npos) break;
    at = nl + 1;
  }
  return std::nullopt;
}

double MsSince(TimePoint t0) {
  return NanosToMs(NanosBetween(t0, Clock::now()));
}

}  // namespace

std::optional<std::string> WorldUnavailable(const Sandbox* sandbox) {
  if (sandbox == nullptr) {
    return "no sandbox to run the world's tools in (install bubblewrap)";
  }
  if (auto why = sandbox->Unavailable()) return why;
  if (FindSandboxProgram("python3").empty()) {
    return "python3 is not installed (the world's tools are Python scripts)";
  }
  return std::nullopt;
}

// What one run of the driver gave back: its report and committed state when it answered, and
// otherwise how it ended.
struct World::DriverOutput {
  std::optional<std::string> meta_line;   // the report (JSON), when one came back
  std::optional<std::string> state_line;  // the committed state (JSON)
  bool timed_out = false;
  bool out_of_memory = false;
  int exit_code = -1;
  std::string stderr_text;
};

World::World(const WorldConfig& config, const Sandbox& sandbox, WorldLimits limits)
    : config_(config), sandbox_(sandbox), limits_(limits), state_(config.initial_state) {
  tools_ = ordered_json::array();
  for (const auto& tool : config.tools) tools_.push_back(tool.spec);
  if (!limits_.process_per_call) Launch();
}

World::~World() = default;

void World::Launch() {
  SandboxRun run;
  run.argv = {"python3",          "-I", "-S", "-B", "evalrun_world.py", "--serve",
              std::to_string(limits_.sandbox.cpu_seconds)};
  run.files["evalrun_world.py"] = kDriver;
  run.limits = limits_.sandbox;
  run.limits.cpu_seconds = limits_.session_cpu_seconds;
  run.limits.session_seconds = limits_.session_seconds;
  session_ = sandbox_.Start(run);
  ready_ = false;
  if (!session_) sessions_unsupported_ = true;
}

World::DriverOutput World::RunProcess(const std::string& request, WorldEvent& event) {
  SandboxRun run;
  run.argv = {"python3", "-I", "-S", "-B", "evalrun_world.py"};
  run.files["evalrun_world.py"] = kDriver;
  run.stdin_text = request;
  run.limits = limits_.sandbox;
  const TimePoint t_run = Clock::now();
  const SandboxResult result = sandbox_.Run(run);
  event.sandbox_ms = MsSince(t_run);
  DriverOutput out;
  out.timed_out = result.timed_out;
  out.out_of_memory = result.out_of_memory;
  out.exit_code = result.exit_code;
  out.stderr_text = result.stderr_text;
  if (!result.timed_out) {
    if (auto meta = ReportLine(result.stdout_text, "EVALRUN-WORLD ")) out.meta_line = *meta;
    if (auto state = ReportLine(result.stdout_text, "EVALRUN-STATE ")) out.state_line = *state;
  }
  return out;
}

World::DriverOutput World::RunSession(const std::string& request, WorldEvent& event) {
  DriverOutput out;
  auto failed = [&](const SandboxExchange& x) {
    out.timed_out = x.timed_out;
    out.out_of_memory = x.out_of_memory;
    out.exit_code = x.exit_code;
    out.stderr_text = x.stderr_text;
    if (x.reply_too_long) out.stderr_text += "\nevalrun: the driver's reply passed the output cap";
    // The session was killed with everything it started; the next one boots while the model
    // takes its next turn.
    Launch();
    return out;
  };
  const TimePoint t_start = Clock::now();
  if (!session_ || (ready_ && !session_->alive())) Launch();
  if (sessions_unsupported_) return RunProcess(request, event);
  if (!ready_) {
    // The handshake: python3 has booted and the driver is listening.
    const SandboxExchange hello = session_->Exchange("{}");
    event.start_ms = MsSince(t_start);
    if (!hello.ok || hello.reply != R"({"ready":true})") return failed(hello);
    ready_ = true;
  }
  const TimePoint t_run = Clock::now();
  const SandboxExchange reply = session_->Exchange(request);
  event.sandbox_ms = MsSince(t_run);
  if (!reply.ok) return failed(reply);
  const size_t tab = reply.reply.find('\t');
  out.meta_line = reply.reply.substr(0, tab);
  if (tab != std::string::npos) out.state_line = reply.reply.substr(tab + 1);
  out.stderr_text = reply.stderr_text;
  return out;
}

const WorldEvent& World::Call(const std::string& tool, const ordered_json& args) {
  const TimePoint t0 = Clock::now();
  WorldEvent event;
  event.ordinal = static_cast<int>(events_.size());
  event.tool = tool;
  event.args = args;

  // The request as zx-bench's Docker world sees its files: JSON.stringify of state and history.
  // One line: JSON.stringify writes no raw newline.
  std::string request = "{\"tools\":" + JsStringify(tools_) + ",\"state\":" + JsStringify(state_) +
                        ",\"history\":" + JsStringify(history_) +
                        ",\"tool\":" + JsStringify(ordered_json(tool)) +
                        ",\"args\":" + JsStringify(args) + "}";
  const DriverOutput result = limits_.process_per_call || sessions_unsupported_
                                  ? RunProcess(request, event)
                                  : RunSession(request, event);

  ordered_json meta;
  bool parsed = false;
  if (result.meta_line && !result.timed_out) {
    meta = ordered_json::parse(*result.meta_line, nullptr, false);
    parsed = meta.is_object() && meta.contains("ok") && meta["ok"].is_boolean();
  }
  ordered_json new_state;
  bool committed = false;
  if (parsed) {
    if (result.state_line) {
      new_state = ordered_json::parse(*result.state_line, nullptr, false);
      committed = !new_state.is_discarded();
      // NaN/Infinity in the state: zx-bench's JSON.parse of the state file would throw.
      parsed = committed;
    }
  }
  ordered_json error;
  if (!parsed) {
    // T L166-168: zx-bench throws "Tool world execution failed" and loses the episode; evalrun
    // records a failed call with the reason and keeps the state as it was.
    std::string code;
    if (result.timed_out) {
      code = "TOOL_TIMEOUT";
      event.infrastructure_error =
          "the tool ran past the sandbox's wall-clock limit and was killed";
    } else if (result.out_of_memory) {
      code = "TOOL_OUT_OF_MEMORY";
      event.infrastructure_error = "the tool ran out of memory in the sandbox";
    } else {
      code = "TOOL_RUNNER_FAILED";
      event.infrastructure_error = "the tool runner produced no result (exit code " +
                                   std::to_string(result.exit_code) +
                                   "): " + OutputTail(result.stderr_text, 400);
    }
    event.ok = false;
    error = code;
    event.result = {{"error", code}};
    history_.push_back({{"tool", tool}, {"args", args}, {"ok", false}, {"error", code}});
  } else {
    event.ok = meta["ok"].get<bool>();
    error = meta.contains("error") ? meta["error"] : ordered_json();
    // T L170-171: result when ok, else {error}.
    event.result = event.ok ? (meta.contains("result") ? meta["result"] : ordered_json())
                            : ordered_json{{"error", error}};
    if (committed) state_ = std::move(new_state);
    if (meta.contains("script_ms") && meta["script_ms"].is_number()) {
      event.script_ms = NumberOf(meta["script_ms"]);
    }
    history_.push_back(
        {{"tool", tool},
         {"args", args},
         {"ok", meta.value("history_ok", false)},
         {"error", meta.contains("history_error") ? meta["history_error"] : ordered_json()}});
  }
  events_.push_back(std::move(event));
  events_.back().total_ms = MsSince(t0);
  return events_.back();
}

}  // namespace evalrun::zx
