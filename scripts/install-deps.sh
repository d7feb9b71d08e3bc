#!/usr/bin/env bash
# Installs everything evalrun needs to build and test on Debian 12 or 13 (and Ubuntu 22.04/24.04:
# the same package names), from the distribution's own packages.
# python3-yaml parses zx-bench's YAML answers (structured_contract) in the sandbox; node-typescript
# turns zx-bench's TypeScript repairs (code_repair) into JavaScript there; default-jdk-headless
# compiles and runs its Java repairs and Java projects (project_repair), mono-mcs with Mono's
# System.Net.Http its C# ones, golang-go (with gcc, for -race) its Go repairs and projects;
# busybox stands in for the Alpine images its shell tasks (cli_command) and projects run in;
# rustc and cargo for the rust:1-alpine image of its Rust projects, and Debian's crate sources of
# tokio, tokio-util and anyhow (librust-*-dev) for the crates one of them downloads (they serve as
# cargo's offline source), netcat-openbsd for the `nc -z` Alpine's BusyBox has and Debian's lacks;
# postgresql for the
# postgres:15 image of its SQL project, whose tests start a server;
# python3-requests for the package a Python project's tests would download (evalrun's sandbox
# has no network).
# clang and libclang-rt-dev (libFuzzer's runtime) are for scripts/fuzz.sh: Debian 12 gives clang
# 14, Debian 13 clang 19, both through these same metapackage names.
# Safe to run again; needs root (or sudo).
set -euo pipefail

packages=(
  build-essential cmake pkg-config git ca-certificates curl python3
  libcurl4-openssl-dev libyaml-cpp-dev nlohmann-json3-dev libgit2-dev libsqlite3-dev
  catch2 libcli11-dev libfmt-dev libssl-dev libpcre2-dev bubblewrap ccache
  python3-yaml node-typescript default-jdk-headless
  mono-mcs mono-runtime libmono-system-net-http4.0-cil golang-go gcc busybox
  rustc cargo librust-tokio-dev librust-tokio-util-dev librust-anyhow-dev netcat-openbsd
  postgresql python3-requests
  chromium
  clang libclang-rt-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# The code_tests grader runs JavaScript with node; take Debian's only when none is on PATH.
command -v node >/dev/null 2>&1 || missing+=(nodejs)
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present (and node)"
  exit 0
fi

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "install-deps: installed ${missing[*]}"
