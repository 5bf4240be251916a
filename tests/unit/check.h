/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * check.h - the smallest unit-test harness that can fail.
 *
 * Each test is a void function; CHECK() records the first failing
 * condition and returns from the test. RUN() prints one TAP-style line
 * ("ok - name" / "not ok - name") that tests/run.sh counts.
 * A test binary's exit status is non-zero when any test failed.
 */
#ifndef PGOFF_TESTS_CHECK_H
#define PGOFF_TESTS_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_failed_tests;
static int check_current_failed;

#define CHECK(cond)                                                        \
	do {                                                               \
		if (!(cond)) {                                             \
			fprintf(stderr, "%s:%d: CHECK(%s) failed\n",       \
				__FILE__, __LINE__, #cond);                \
			check_current_failed = 1;                          \
			return;                                            \
		}                                                          \
	} while (0)

#define CHECK_STR(got, want)                                               \
	do {                                                               \
		const char *check_got_ = (got), *check_want_ = (want);     \
		if (!check_got_ || strcmp(check_got_, check_want_) != 0) { \
			fprintf(stderr, "%s:%d: got \"%s\", want \"%s\"\n",  \
				__FILE__, __LINE__,                        \
				check_got_ ? check_got_ : "(null)",        \
				check_want_);                              \
			check_current_failed = 1;                          \
			return;                                            \
		}                                                          \
	} while (0)

/* haystack contains needle; on failure, both are shown. */
#define CHECK_CONTAINS(haystack, needle)                                   \
	do {                                                               \
		const char *check_h_ = (haystack), *check_n_ = (needle);   \
		if (!check_h_ || !strstr(check_h_, check_n_)) {            \
			fprintf(stderr, "%s:%d: \"%s\" not in:\n%s\n",      \
				__FILE__, __LINE__, check_n_,              \
				check_h_ ? check_h_ : "(null)");           \
			check_current_failed = 1;                          \
			return;                                            \
		}                                                          \
	} while (0)

#define RUN(test)                                                          \
	do {                                                               \
		check_current_failed = 0;                                  \
		test();                                                    \
		printf("%s - %s\n", check_current_failed ? "not ok" : "ok", \
		       #test);                                             \
		check_failed_tests += check_current_failed;                \
	} while (0)

#define CHECK_DONE() (check_failed_tests ? 1 : 0)

#endif
