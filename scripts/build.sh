#!/usr/bin/env bash
# Configures and builds evalrun into ./build (Release with debug info). Extra arguments go to
# cmake's configure step, e.g. scripts/build.sh -DEVALRUN_WERROR=ON.
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache (installed by scripts/install-deps.sh) makes a rebuild of unchanged files nearly free.
launcher=()
command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" "$@" >/dev/null
cmake --build build -j "$(nproc)"
