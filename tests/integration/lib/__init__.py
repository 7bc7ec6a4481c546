# SPDX-License-Identifier: Apache-2.0
"""Shared helpers for dralet's integration tests (run with /usr/bin/python3)."""
