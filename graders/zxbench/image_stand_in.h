#pragma once
// What stands in for the Docker images zx-bench runs shell tasks and project tests in
// (docs/zx-bench.md, "cli_command" and "project_repair"): the host's programs inside the
// bubblewrap sandbox, arranged as the image arranges its own.
//   Alpine images (python:3.12-alpine, node:20-alpine, node:22-alpine, bash:5): BusyBox's sh
//     and applets alone on PATH (Debian's busybox), the image's own runtime from the host
//     (python3, node, bash), and the few coreutils Alpine's BusyBox has and Debian's build
//     lacks; nothing else.
//   golang:1.22-alpine: BusyBox and the host's go (Debian 12 has 1.19, Debian 13 1.24), with the
//     image's Go settings (GOTOOLCHAIN=local, and CGO_ENABLED=0 as Go 1.22 chooses without a C
//     compiler); the build cache is the image's default under HOME, so each run starts cold as
//     each container does.
//   rust:1-alpine: BusyBox, the host's cargo and rustc, and cc, ld and as as rustc's linker
//     (Debian 12 has Rust 1.63, Debian 13 1.85; the image, the newest).
//   maven:3.9-eclipse-temurin-17-alpine: BusyBox, the host's java and javac and bash, the JVM
//     held to the container's 512 MB and one processor (JAVA_TOOL_OPTIONS); no mvn.
//   gcc:13 (Debian bookworm's userland): the host's own programs: dash as sh, bash, coreutils,
//     git, python3, gcc, g++, make; less those the image lacks and scripts probe for to pick a
//     path (valgrind, clang, clang-tidy, clang-format, cppcheck, gdb).
//   postgres:15 (Debian bookworm's userland too): the same host programs with the host's
//     PostgreSQL server programs first on PATH (/usr/lib/postgresql/N/bin: Debian 12 has 15,
//     Debian 13 17), /tmp on disk for the database's files and a writable /var/run/postgresql
//     for the server's socket, as the image has.
// Thread-safe.
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace evalrun {

class Sandbox;  // plugins/sandbox.h

namespace zx {

struct ImageStandIn {
  enum class Kind { kNone, kAlpine, kDebian };
  Kind kind = Kind::kNone;
  std::string image;
  // What must be installed, each with the Debian package that has it.
  std::vector<std::pair<std::string, std::string>> programs;
  // The image's own runtime, linked onto the Alpine PATH (python3, node, bash, go).
  std::vector<std::string> runtimes;
  // The image's own environment ("NAME=value"), set before the command.
  std::vector<std::string> env;
  // Host directories put first on PATH (Debian kind), searched first for `programs` too.
  std::vector<std::string> path_dirs;
  // Directories the image lets its user write outside the workspace (SandboxRun::writable_dirs).
  std::vector<std::string> writable_dirs;
};

// The stand-in for `image`; kind kNone for an image evalrun has none for.
ImageStandIn StandInFor(const std::string& image);

// Why the stand-in cannot run here ("" when it can): no stand-in for the image, or a program
// the host lacks (naming its Debian package).
std::string StandInUnavailable(const ImageStandIn& stand_in);

// argv running `command` as the image's `sh -c` would, with `env` ("NAME=value") added to the
// sandbox's environment.
std::vector<std::string> StandInShell(const ImageStandIn& stand_in, const std::string& command,
                                      const std::vector<std::string>& env = {});

// For a grade's evidence: the userland and each program's version ("Python 3.11.2"), asked
// once per program through `sandbox`.
nlohmann::json StandInEvidence(const Sandbox& sandbox, const ImageStandIn& stand_in);

}  // namespace zx
}  // namespace evalrun
