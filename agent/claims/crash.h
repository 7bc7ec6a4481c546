/* SPDX-License-Identifier: Apache-2.0 */
/*
 * TEST-ONLY crash seam for the crash tests (tests/integration/test_crash*.py).
 *
 * DRALET_CRASH_AT=<point>[:<n>] in the daemon's environment, read once by
 * claims_crash_init() at start, makes the n-th arrival (default the first)
 * at claims_crash_point(<point>) kill the process with SIGKILL, exactly as
 * an OOM kill or a node-level kill would. Points (docs/claims.md):
 *   prepare-started       configs valid, nothing written, no hardware touched
 *   prepare-undo-recorded a backend's undo state is on disk (PrepareStarted),
 *                         the change it describes not made yet
 *   prepare-device        a device's backend prepare returned
 *   prepare-cdi-written   the CDI spec is written, the entry not completed
 *   prepare-completed     PrepareCompleted is on disk, no answer sent
 *   unprepare-started     UnprepareStarted is on disk
 *   unprepare-devices     the backends' unprepare returned
 *   unprepare-cdi-removed the CDI spec is gone, the entry still there
 * DRALET_PAUSE_AT=<point>:<ms> makes the first arrival at <point> sleep
 * <ms> milliseconds instead (logged), e.g. to update a rolling update's
 * DaemonSet while a prepare is in flight (the e2e suite).
 * Without the variables (production) a point costs one load and a compare.
 */
#ifndef DRALET_CLAIMS_CRASH_H
#define DRALET_CLAIMS_CRASH_H

void claims_crash_init(void);
void claims_crash_point(const char *point);

#endif
