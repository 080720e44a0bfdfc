#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/run.sh: every benchmark, in order (`make bench`).  Results go to
# bench/results/.  Add later benchmarks below.
set -euo pipefail
cd "$(dirname "$0")/.."

bash bench/engine-vs-fio.sh "$@"
