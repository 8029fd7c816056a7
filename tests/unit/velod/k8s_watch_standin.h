/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The stand-in for velod/k8s_watch.c that the watch-set tests link
 * (k8s_watch_standin.c): no thread and no HTTP, only the callbacks each
 * watch was given, for the test to call as the watch thread would.
 */
#ifndef VELO_TESTS_K8S_WATCH_STANDIN_H
#define VELO_TESTS_K8S_WATCH_STANDIN_H

#include "k8s/k8s_watch.h"

#define STANDIN_WATCHES 4

/* The watches started, in order; watch i's fd is 100 + i, its stats say 10 + i events. */
extern struct k8s_watch standin_watches[STANDIN_WATCHES];
extern unsigned standin_started, standin_stopped;
/* How often watch i's fd was made readable (k8s_watch_wake): the set woke velod's loop. */
extern unsigned standin_wakes[STANDIN_WATCHES];
/* The start that fails (ENOENT, as without libcurl); STANDIN_WATCHES: none. */
extern unsigned standin_fail_at;

/* Forgets every watch: before each test's set starts. */
void standin_reset(void);

#endif
