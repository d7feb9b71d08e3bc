// zx-bench's isolatedGoJson contract (go_contract.h). Each adapter below turns one call's JSON
// arguments into Go statements adding one value to main's output, as zx-bench's generator does:
// literals are written from the (already validated) arguments, so nothing the model wrote
// reaches the harness's own text, and the expected values never do.
#include "graders/zxbench/go_contract.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>

#include <unistd.h>

#include "core/js_value.h"
#include "graders/zxbench/common.h"
#include "graders/zxbench/js_json.h"
#include "graders/zxbench/node_contracts.h"

namespace evalrun::zx {

using nlohmann::json;

namespace {

constexpr std::array<std::string_view, 4> kBasic = {"goroutine-print", "copy-prefix-alias",
                                                    "error-wrap", "atoi-result"};
constexpr std::array<std::string_view, 3> kAdvanced = {"race-counter", "fan-in", "first-http"};

template <size_t N>
bool In(const std::array<std::string_view, N>& set, const json& v) {
  return v.is_string() &&
         std::find(set.begin(), set.end(), v.get_ref<const std::string&>()) != set.end();
}

// int(v, min, max): Number.isInteger and within the range (-1e6..1e6 unless told).
bool Int(const json& v, double low = -1e6, double high = 1e6) {
  return IsIntegral(v) && v.get<double>() >= low && v.get<double>() <= high;
}

bool Str(const json& v, size_t max) {
  return v.is_string() && Utf16Length(v.get_ref<const std::string&>()) <= max;
}

// validCall: each adapter's argument shape.
bool ValidCall(const std::string& adapter, const json& a) {
  const size_t n = a.size();
  if (adapter == "goroutine-print") return n == 1 && Int(a[0], 0, 1000);
  if (adapter == "copy-prefix-alias") {
    return n == 4 && a[0].is_array() && a[0].size() <= 1000 &&
           std::all_of(a[0].begin(), a[0].end(), [](const json& x) { return Int(x); }) &&
           Int(a[1], 0, static_cast<double>(a[0].size())) &&
           OneOf(a[2], {"independent", "length"}) && Int(a[3]);
  }
  if (adapter == "error-wrap") return n == 1 && Str(a[0], 128);
  if (adapter == "atoi-result")
    return n == 2 && Str(a[0], 128) && OneOf(a[1], {"value", "hasError"});
  if (adapter == "race-counter") return n == 2 && Int(a[0], 1, 2000) && Int(a[1], 1, 1000);
  if (adapter == "fan-in") {
    return n == 4 && Int(a[0], 0, 64) && Int(a[1], 0, 2048) && a[2].is_boolean() &&
           OneOf(a[3], {"values", "stats"});
  }
  return adapter == "first-http" && n == 4 &&
         OneOf(a[0], {"fastest", "leak", "allfail", "canceled"}) && Int(a[1], 1, 200) &&
         Int(a[2], 0, 500) && Int(a[3], 0, 500);
}

// JSON.stringify of a string, as the harness writes Go string literals: a lone surrogate comes
// out as \udxxx, which Go rejects (the build fails, as in zx-bench).
std::string Quoted(const json& v) {
  std::string out;
  js::AppendJsString(out, v.get_ref<const std::string&>());
  return out;
}

// `${x}` of a validated number or boolean.
std::string Text(const json& v) {
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  return js::JsNumberString(v.get<double>());
}

// The statements for call `index` (call()); e is the entry point as written in the contract.
std::string CallSource(const std::string& adapter, const std::string& e, const json& a,
                       size_t index) {
  const std::string i = std::to_string(index);
  if (adapter == "goroutine-print") {
    return "ch" + i + ":=make(chan int," + Text(a[0]) + ");" + e + "(" + Text(a[0]) + ",ch" + i +
           ");v" + i + ":=[]int{};for n:=range ch" + i + "{v" + i + "=append(v" + i +
           ",n)};sort.Ints(v" + i + ");add(v" + i + ")";
  }
  if (adapter == "copy-prefix-alias") {
    std::string ints;
    for (const json& x : a[0]) ints += (ints.empty() ? "" : ",") + Text(x);
    std::string out =
        "o" + i + ":=[]int{" + ints + "};c" + i + ":=" + e + "(o" + i + "," + Text(a[1]) + ");";
    if (a[2] == "independent" && a[1].get<double>() > 0) {
      return out + "c" + i + "[0]=" + Text(a[3]) + ";add(o" + i + "[0]==" + Text(a[0][0]) + ")";
    }
    return out + "add(len(c" + i + "))";
  }
  if (adapter == "error-wrap") return "add(errors.Is(" + e + "(" + Quoted(a[0]) + "),ErrNotFound))";
  if (adapter == "atoi-result") {
    if (a[1] == "value") return "v" + i + ",_ := " + e + "(" + Quoted(a[0]) + ");add(v" + i + ")";
    return "_,er" + i + ":=" + e + "(" + Quoted(a[0]) + ");add(er" + i + "!=nil)";
  }
  if (adapter == "race-counter") {  // the entry point is not called: Counter is
    return "c" + i + ":=&Counter{};start" + i + ":=make(chan struct{});var wg" + i +
           " sync.WaitGroup;for j:=0;j<" + Text(a[0]) + ";j++{wg" + i +
           ".Add(1);go func(){defer wg" + i + ".Done();<-start" + i + ";for k:=0;k<" + Text(a[1]) +
           ";k++{c" + i + ".Inc()}}()};close(start" + i + ");wg" + i + ".Wait();add(c" + i +
           ".Get())";
  }
  if (adapter == "fan-in") {  // runFanIn calls FanIn by name
    return "add(runFanIn(" + Text(a[0]) + "," + Text(a[1]) + "," + Text(a[2]) + "," + Quoted(a[3]) +
           "))";
  }
  return "add(runFirst(" + Quoted(a[0]) + "," + Text(a[1]) + "," + Text(a[2]) + "," + Text(a[3]) +
         "))";
}

// fetch for error-wrap: ErrNotFound for "missing", nil otherwise.
constexpr const char* kFetchHelper =
    "func fetch(id string) error {if id==\"missing\" {return ErrNotFound};return nil}";

// runFanIn: n unbuffered channels (after a nil one when withNil), channel j fed j*per ..
// j*per+per-1 and closed; what FanIn yields, sorted; "values" returns it, otherwise
// [count, distinct values, int64 sum].
constexpr const char* kFanInHelper = R"GO(func runFanIn(n, per int, withNil bool, mode string) any {
	chs := make([]<-chan int, 0, n+1)
	if withNil {
		chs = append(chs, nil)
	}
	for i := 0; i < n; i++ {
		ch := make(chan int)
		chs = append(chs, ch)
		go func(c chan int, base int) {
			for j := 0; j < per; j++ {
				c <- base + j
			}
			close(c)
		}(ch, i*per)
	}
	got := []int{}
	for v := range FanIn(chs) {
		got = append(got, v)
	}
	sort.Ints(got)
	if mode == "values" {
		return got
	}
	seen := map[int]bool{}
	sum := int64(0)
	for _, v := range got {
		seen[v] = true
		sum += int64(v)
	}
	return []any{len(got), len(seen), sum}
})GO";

// testServer and runFirst: "allfail" waits 2 s for First on a closed port; "canceled" calls it
// with a cancelled context and reports [result, under a second]; "fastest" races a slow (d1 ms)
// and a fast (d2 ms) local server; "leak" calls First `it` times and checks the goroutine count
// came back within 15 of where it was.
constexpr const char* kFirstHelper = R"GO(func testServer(delay int, body string) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(time.Duration(delay) * time.Millisecond)
		_, _ = io.WriteString(w, body)
	}))
}
func runFirst(action string, it, d1, d2 int) any {
	if action == "allfail" {
		done := make(chan string, 1)
		go func() { done <- First(context.Background(), "http://127.0.0.1:1") }()
		select {
		case v := <-done:
			return v
		case <-time.After(2 * time.Second):
			return "TIMEOUT"
		}
	}
	if action == "canceled" {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		start := time.Now()
		v := First(ctx, "http://127.0.0.1:1")
		return []any{v, time.Since(start) < time.Second}
	}
	a := testServer(d1, "slow")
	defer a.Close()
	b := testServer(d2, "fast")
	defer b.Close()
	if action == "fastest" {
		return First(context.Background(), a.URL, b.URL)
	}
	First(context.Background(), a.URL)
	time.Sleep(100 * time.Millisecond)
	base := runtime.NumGoroutine()
	for i := 0; i < it; i++ {
		if First(context.Background(), b.URL, b.URL) != "fast" {
			return false
		}
	}
	time.Sleep(500 * time.Millisecond)
	return runtime.NumGoroutine() <= base+15
})GO";

// ---- Building and running -----------------------------------------------------------------------

// A program that imports everything the harness imports: built once per process (with and
// without -race) so that the standard library is in the build cache before any case's clock.
constexpr const char* kWarmUpProgram = R"GO(package main
import("encoding/json";"os";"sort";"sync";"errors";"fmt";"context";"io";"net/http";"net/http/httptest";"runtime";"time")
var _=sync.NewCond
var _=fmt.Errorf
var _=errors.New
var _=sort.Ints
var _=context.Background
var _=io.ReadAll
var _=http.Get
var _=httptest.NewServer
var _=runtime.NumGoroutine
var _=time.Sleep
func main(){json.NewEncoder(os.Stdout).Encode([]any{})}
)GO";

std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (const char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The build cache every Go build of this process shares, and what the warm-up learnt.
struct BuildCache {
  std::mutex mutex;
  bool located = false;
  std::string path;  // host directory ("" when none could be made: `error` says why)
  std::string error;
  std::unique_ptr<ScratchDirectory> fallback;  // when the user's cache directory is unusable
  std::string version;                         // go env GOVERSION
  bool warmed[2] = {false, false};             // [race]
  std::string warm_error[2];
};

BuildCache& Cache() {
  static BuildCache cache;
  return cache;
}

// $XDG_CACHE_HOME/evalrun/go-build, else ~/.cache/evalrun/go-build; as root (whose sandbox
// user cannot enter /root) /var/cache/evalrun/go-build, handed to the sandbox user; else a
// directory of this process under /tmp (removed when it ends).
void Locate(BuildCache& cache) {
  if (cache.located) return;
  cache.located = true;
  namespace fs = std::filesystem;
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  fs::path base;
  if (geteuid() == 0) {
    base = "/var/cache";
  } else if (xdg != nullptr && xdg[0] == '/') {
    base = xdg;
  } else if (home != nullptr && home[0] == '/') {
    base = fs::path(home) / ".cache";
  }
  if (!base.empty()) {
    std::error_code ec;
    const fs::path dir = base / "evalrun" / "go-build";
    fs::create_directories(dir, ec);
    if (!ec && fs::is_directory(dir, ec)) {
      cache.path = dir.string();
      return;
    }
  }
  cache.fallback = std::make_unique<ScratchDirectory>();
  cache.path = cache.fallback->path();
  if (cache.path.empty()) cache.error = "cannot create a directory for Go's build cache";
}

// The environment of zx-bench's container for the go command, the cache where this sandbox
// shows it; nothing from the host's own Go settings.
std::string GoEnvironment(const Sandbox& sandbox, const SandboxRun& run) {
  const std::string cache = sandbox.relocates() ? run.cache_path : run.cache;
  return "GOCACHE=" + ShellQuote(cache) +
         " GOPATH=/tmp/gopath GOMAXPROCS=1 GOFLAGS= GOENV=off GOTOOLCHAIN=local GOPROXY=off "
         "GOTELEMETRY=off ";
}

// go1.X's X, 0 when unreadable.
int MinorVersion(const std::string& version) {
  if (version.rfind("go1.", 0) != 0) return 0;
  return std::atoi(version.c_str() + 4);
}

// Build flags: -race for v2, the language held at Go 1.21 on later toolchains, one build job
// (zx-bench's container has one CPU).
std::string BuildFlags(bool race, const std::string& version) {
  std::string flags = "-p 1";
  if (race) flags += " -race";
  if (MinorVersion(version) >= 22) flags += " -gcflags=-lang=go1.21";
  return flags;
}

SandboxResult NotStarted(const std::string& why) {
  SandboxResult r;
  r.exit_code = 127;
  r.stderr_text = "evalrun sandbox: " + why;
  return r;
}

// The cache, warmed for `race`; on failure the error (a run that never started).
std::optional<SandboxResult> PrepareCache(const Sandbox& sandbox, bool race, std::string* path,
                                          std::string* version) {
  BuildCache& cache = Cache();
  std::lock_guard<std::mutex> lock(cache.mutex);
  Locate(cache);
  if (!cache.error.empty()) return NotStarted(cache.error);
  *path = cache.path;
  if (!cache.warmed[race]) {
    SandboxRun warm;
    warm.files["main.go"] = kWarmUpProgram;
    warm.cache = cache.path;
    warm.argv = {"sh", "-c",
                 GoEnvironment(sandbox, warm) + "go env GOVERSION && " +
                     GoEnvironment(sandbox, warm) + "go build " + (race ? "-race " : "") +
                     "-o warm main.go"};
    warm.limits.wall_seconds = 600;
    warm.limits.cpu_seconds = 600;
    warm.limits.memory_bytes = 8L << 30;
    warm.limits.max_processes = 512;
    warm.limits.max_file_bytes = 512L << 20;
    const SandboxResult r = sandbox.Run(warm);
    if (r.exit_code != 0 || r.timed_out) {
      cache.warm_error[race] =
          "Go's build cache could not be warmed (go build" + std::string(race ? " -race" : "") +
          " of the harness's imports, exit " + std::to_string(r.exit_code) +
          (r.timed_out ? ", timed out" : "") + "): " + OutputTail(r.stderr_text, 300);
    } else {
      cache.version = std::string(js::JsTrim(r.stdout_text));
    }
    cache.warmed[race] = true;
  }
  if (!cache.warm_error[race].empty()) return NotStarted(cache.warm_error[race]);
  *version = cache.version;
  return std::nullopt;
}

}  // namespace

bool ValidGoJsonContract(const json& c) {
  if (!c.is_object()) return false;
  const json& protocol = Member(c, "protocol");
  const json& adapter = Member(c, "adapter");
  if (!OneOf(protocol, {"isolated-go-json-v1", "isolated-go-json-v2"}) ||
      !(In(kBasic, adapter) || In(kAdvanced, adapter)) ||
      (protocol == "isolated-go-json-v2") != In(kAdvanced, adapter) ||
      !IsIdentifier(Member(c, "entrypoint"), /*dots=*/true)) {
    return false;
  }
  const std::string name = adapter.get<std::string>();
  return ValidAdapterCases(Member(c, "cases"), 100, /*ids_required=*/false,
                           [&](const json& args) { return ValidCall(name, args); });
}

bool GoContractAdvanced(const json& c) {
  return Member(c, "protocol") == "isolated-go-json-v2";
}

double GoContractSeconds(const json& c) {
  const json& adapter = Member(c, "adapter");
  if (adapter == "fan-in") return 12;
  if (adapter == "first-http" || GoContractAdvanced(c)) return 30;
  return 10;
}

std::string GoProgramSource(const std::string& patch, const json& contract, const json& calls) {
  const std::string adapter = contract["adapter"].get<std::string>();
  const bool http = adapter == "first-http";
  std::string out =
      "package main\nimport(\"encoding/json\";\"os\";\"sort\";\"sync\";\"errors\";\"fmt\"";
  if (http) out += ";\"context\";\"io\";\"net/http\";\"net/http/httptest\";\"runtime\";\"time\"";
  out += ")\nvar _=sync.NewCond\nvar _=fmt.Errorf\nvar _=errors.New\nvar _=sort.Ints";
  if (http) {
    out +=
        "\nvar _=context.Background\nvar _=io.ReadAll\nvar _=http.Get\nvar _=httptest.NewServer"
        "\nvar _=runtime.NumGoroutine\nvar _=time.Sleep";
  }
  out += "\n" + patch + "\n";
  if (adapter == "error-wrap") out += kFetchHelper;
  if (adapter == "fan-in") out += kFanInHelper;
  if (http) out += kFirstHelper;
  out += "\nfunc main(){out:=[]any{};add:=func(v any){out=append(out,v)};";
  const std::string entrypoint = contract["entrypoint"].get<std::string>();
  for (size_t i = 0; i < calls.size(); ++i) {
    if (i > 0) out += ';';
    out += CallSource(adapter, entrypoint, calls[i], i);
  }
  out += ";json.NewEncoder(os.Stdout).Encode(out)}\n";
  return out;
}

std::string GoUnavailable(const json& contract) {
  if (FindSandboxProgram("go").empty())
    return "go is not installed (install Debian's golang-go package)";
  if (GoContractAdvanced(contract) && FindSandboxProgram("gcc").empty()) {
    return "gcc is not installed (go build -race needs cgo; install Debian's gcc package)";
  }
  return {};
}

std::string GoVersion() {
  BuildCache& cache = Cache();
  std::lock_guard<std::mutex> lock(cache.mutex);
  return cache.version;
}

SandboxResult RunGoProgram(const Sandbox& sandbox, const std::string& source, const json& contract,
                           bool build_only) {
  const bool race = GoContractAdvanced(contract);
  std::string cache;
  std::string version;
  if (auto failed = PrepareCache(sandbox, race, &cache, &version)) return *failed;

  // zx-bench's container: the case's timeout plus the 5 s its runner allows the docker CLI;
  // v1 384 MB, 96 pids, a 128 MB /tmp; v2 512 MB, 256 pids, 256 MB. Memory is address space
  // here, which Go reserves well beyond what it uses: the go command and a v1 program get 8 GiB;
  // a -race program (ThreadSanitizer maps terabytes of shadow) is not held by it at all.
  const double seconds = GoContractSeconds(contract) + 5;
  SandboxLimits limits;
  limits.wall_seconds = seconds;
  limits.cpu_seconds = seconds;
  limits.memory_bytes = 8L << 30;
  limits.max_processes = race ? 256 : 96;
  limits.max_file_bytes = race ? 256L << 20 : 128L << 20;
  limits.max_output_bytes = 64 * 1024 + 1;

  ScratchDirectory workspace;
  if (workspace.path().empty()) return NotStarted("cannot create a temporary directory");
  SandboxRun build;
  build.workspace = workspace.path();
  build.files["main.go"] = source;
  build.cache = cache;
  build.argv = {"sh", "-c",
                GoEnvironment(sandbox, build) + "exec go build " + BuildFlags(race, version) +
                    " -o app main.go"};
  build.limits = limits;
  SandboxResult built = sandbox.Run(build);
  if (build_only || built.exit_code != 0 || built.timed_out) return built;

  SandboxRun program;
  program.workspace = workspace.path();
  program.argv = {"env", "GOMAXPROCS=1", "./app"};
  program.limits = limits;
  program.limits.wall_seconds = std::max(0.5, seconds - built.wall_seconds);
  program.limits.cpu_seconds = program.limits.wall_seconds;
  if (race) program.limits.memory_bytes = 1L << 46;
  SandboxResult ran = sandbox.Run(program);
  ran.wall_seconds += built.wall_seconds;
  return ran;
}

}  // namespace evalrun::zx
