// SPDX-License-Identifier: GPL-2.0-only
/* log_limit.c - per-uid limits on lines about users; see log_limit.h. */
#include "broker/serve/log_limit.h"
#include "common/log.h"

static void summary(const struct log_limit *l, struct log_limit_uid *u)
{
	if (u->held)
		log_warnx("%s uid %u: suppressed %llu similar lines (more "
			  "than %d a second)", l->about ? l->about : "client",
			  (unsigned int)u->uid, (unsigned long long)u->held,
			  LOG_LIMIT_PER_S);
	u->held = 0;
}

/* uid's entry; a free one, or the one least recently counted, if new. */
static struct log_limit_uid *entry(struct log_limit *l, uid_t uid)
{
	struct log_limit_uid *oldest = &l->u[0];

	for (int i = 0; i < LOG_LIMIT_UIDS; i++) {
		struct log_limit_uid *u = &l->u[i];

		if (u->used && u->uid == uid)
			return u;
		if (!u->used || (oldest->used && u->second < oldest->second))
			oldest = u;
	}
	if (oldest->used)
		summary(l, oldest);
	oldest->used = true;
	oldest->uid = uid;
	oldest->second = INT64_MIN;
	oldest->lines = 0;
	oldest->held = 0;
	return oldest;
}

bool log_limit_allow(struct log_limit *l, uid_t uid, int64_t now)
{
	struct log_limit_uid *u = entry(l, uid);

	if (u->second != now) {
		summary(l, u);
		u->second = now;
		u->lines = 0;
	}
	if (u->lines < LOG_LIMIT_PER_S) {
		u->lines++;
		return true;
	}
	u->held++;
	return false;
}

void log_limit_flush(struct log_limit *l, int64_t now)
{
	for (int i = 0; i < LOG_LIMIT_UIDS; i++)
		if (l->u[i].used && l->u[i].second != now)
			summary(l, &l->u[i]);
}
