#!/usr/bin/env bash
# All set-up and the whole test suite on a fresh Debian 12 machine: install the packages, build,
# run every test (the [slow] ones included) through CTest. Arguments go to cmake's configure step
# (scripts/build.sh), e.g. scripts/test.sh -DEVALRUN_WERROR=ON.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh "$@"
ctest --test-dir build --output-on-failure -j "$(nproc)"
