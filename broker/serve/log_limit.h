/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * log_limit.h - lines about a user's doings, at most LOG_LIMIT_PER_S a
 * second per uid: any local user can connect, and a group member can send
 * requests, as fast as they like, and start processes named postgres; the
 * journal must not fill with their lines. The lines held back are counted
 * and told in one line once their second is over.
 */
#ifndef PGOFF_LOG_LIMIT_H
#define PGOFF_LOG_LIMIT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define LOG_LIMIT_PER_S	10	/* lines a second about one uid */
#define LOG_LIMIT_UIDS	64	/* uids followed at once; the oldest goes */

struct log_limit_uid {
	uid_t uid;
	bool used;
	int64_t second;		/* the second lines are counted in */
	unsigned int lines;	/* written in it */
	uint64_t held;		/* held back since the last summary */
};

struct log_limit {
	struct log_limit_uid u[LOG_LIMIT_UIDS];
	const char *about;	/* in the summary: "<about> uid U"; "client" if NULL */
};

/*
 * Whether a line about uid may be written now (now: whole seconds of
 * any steady clock). Before the first line of a new second, a summary of
 * what was held back is written ("client uid U: suppressed N similar
 * lines"). O(LOG_LIMIT_UIDS).
 */
bool log_limit_allow(struct log_limit *l, uid_t uid, int64_t now);
/* Once a second: the summaries of seconds that are over. */
void log_limit_flush(struct log_limit *l, int64_t now);

#endif
