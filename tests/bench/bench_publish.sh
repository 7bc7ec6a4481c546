#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Publishing benchmark: >1,000 functions to the test apiserver on loopback; publish time and
# requests, republish time after a kubelet-style wipe. Prints a table (tests/apiserver/bench_publish.py).
set -eu
: "${DRALET:?set DRALET to the dralet binary}"
cd "$(dirname "$0")/../.."
exec /usr/bin/python3 tests/apiserver/bench_publish.py
