#pragma once
// Environment capture for every JSON result (DESIGN.md section 7): the client host (CPU, cores,
// RAM, OS, kernel) and its GPUs from nvidia-smi / rocm-smi when those exist. What is seen is the
// *client host*: a remote endpoint's GPUs cannot be probed from here, and the record says so.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace evalrun {

struct CommandResult {
  int exit_code = 0;       // the exit status; 128 + N when killed by signal N (as in sh)
  std::string out;         // stdout (stderr is discarded)
  bool timed_out = false;  // killed (with its process group) after timeout_s; `out` holds what
                           // arrived before that
};

// Runs argv[0] found on PATH with the given arguments, capturing stdout, killing it after
// timeout_s. nullopt when the program does not exist or cannot be started. The seam for tests
// is PATH itself (a fake nvidia-smi in a fixture folder), so tests exercise the real runner too.
// The child gets stdin and stderr on /dev/null and its own process group; on timeout the whole
// group gets SIGKILL. Returns once the child has exited, even if a grandchild still holds the
// pipe open. Never throws; safe to call from several threads.
std::optional<CommandResult> RunCommand(const std::vector<std::string>& argv,
                                        double timeout_s = 10);

using CommandRunner =
    std::function<std::optional<CommandResult>(const std::vector<std::string>& argv)>;

// {"cpu_model", "cpu_cores", "cpu_physical_cores", "ram_bytes", "os", "kernel", "arch",
// "hostname"} from /proc, /etc/os-release and uname; cpu_cores is the logical CPU count
// (std::thread::hardware_concurrency), cpu_physical_cores the distinct (physical id, core id)
// pairs of /proc/cpuinfo. What cannot be read is null.
nlohmann::json ProbeHost();

// {"present": false} when nvidia-smi is absent; otherwise {"present": true, "gpus": [{"index",
// "name", "uuid", "driver_version", "cuda_version", "memory_total_mib", "memory_used_mib",
// "power_limit_w", "clocks_sm_mhz", "clocks_max_sm_mhz", "clocks_mem_mhz", "pcie_gen_current",
// "pcie_gen_max", "pcie_width_current", "pcie_width_max", ...}], "topology": "<nvidia-smi topo -m
// text>"}. Fields nvidia-smi reports as "[N/A]" or "[Not Supported]" are null. Also "count"
// (GPUs listed), "cuda_version" (from the nvidia-smi banner; null if not found) and
// "topology_links" ({"GPU0": {"GPU1": "NV4", "NIC0": "PHB"}, ...}, parsed from the matrix) when
// the matrix parses. When nvidia-smi exists but fails (no driver, no devices, timeout):
// {"present": true, "error": "<first line of its output>", "exit_code": N}.
nlohmann::json ProbeNvidia(const CommandRunner& run);
// The same for rocm-smi: {"present": false} or {"present": true, "count", "driver_version",
// "gpus": [{"index", "name", "model", "vendor", "sku", "gfx_version", "memory_total_bytes",
// "memory_used_bytes", "memory_total_mib", "memory_used_mib"}], "raw": {...}} from
// `rocm-smi --showproductname --showmeminfo vram --showdriverversion --json`; failures as above.
nlohmann::json ProbeRocm(const CommandRunner& run);

// The environment block of a result: {"scope": "client host", "host": ProbeHost(),
// "nvidia": ProbeNvidia(RunCommand), "rocm": ProbeRocm(RunCommand)}.
nlohmann::json CaptureEnvironment();

}  // namespace evalrun
