// SPDX-License-Identifier: GPL-2.0-only
/* usdt_rate.c - usdt-max-rate as pgoffd shows it; see usdt_rate.h. */
#include <inttypes.h>
#include <bpf/bpf.h>
#include "broker/kernel/usdt_rate.h"
#include "common/log.h"
#include "common/units.h"

bool usdt_rate_get(int fd, uint32_t cluster, struct pgoff_usdt_rate *r)
{
	return bpf_map_lookup_elem(fd, &cluster, r) == 0;
}

static struct usdt_rate_seen *seen_of(struct usdt_rate_watch *w,
				      uint32_t cluster)
{
	for (size_t i = 0; i < w->n; i++)
		if (w->seen[i].cluster == cluster)
			return &w->seen[i];
	if (w->n == PGOFF_USDT_RATES)	/* full: one goes (the map, an LRU,
					 * has let one go too) */
		w->seen[0] = w->seen[--w->n];
	w->seen[w->n] = (struct usdt_rate_seen){ .cluster = cluster };
	return &w->seen[w->n++];
}

void usdt_rate_tick(struct usdt_rate_watch *w, int fd, uint64_t now,
		    uint64_t max_rate, uint64_t quiet_ns,
		    usdt_rate_name_fn name, void *ctx)
{
	uint32_t key, next;
	bool first = true;
	char quiet[16];

	pgoff_format_duration(quiet_ns, quiet, sizeof(quiet));

	while (bpf_map_get_next_key(fd, first ? NULL : &key, &next) == 0) {
		struct pgoff_usdt_rate r;
		struct usdt_rate_seen *s;
		bool paused;

		first = false;
		key = next;
		if (!usdt_rate_get(fd, key, &r))
			continue;
		s = seen_of(w, key);
		paused = usdt_rate_paused(&r, now, max_rate);
		if (paused && (!s->paused || r.pauses != s->pauses))
			log_warnx("cluster %s: %" PRIu64 " LWLock waits in a "
				  "second, over usdt-max-rate %" PRIu64 ": its "
				  "LWLock wait probes are not read until %s "
				  "pass with no second over it (usdt-quiet; "
				  "those episodes have inferred bounds)",
				  name(ctx, key), (uint64_t)r.last_over_hits,
				  max_rate, quiet);
		else if (!paused && s->paused)
			log_info("cluster %s: its LWLock wait probes are read "
				 "again (%s)", name(ctx, key), max_rate ?
				 "usdt-quiet passed" : "usdt-max-rate 0");
		s->paused = paused;
		s->pauses = r.pauses;
	}
}

size_t usdt_rate_paused_count(int fd, uint64_t now, uint64_t max_rate)
{
	uint32_t key, next;
	bool first = true;
	size_t n = 0;

	while (bpf_map_get_next_key(fd, first ? NULL : &key, &next) == 0) {
		struct pgoff_usdt_rate r;

		first = false;
		key = next;
		n += usdt_rate_get(fd, key, &r) &&
		     usdt_rate_paused(&r, now, max_rate);
	}
	return n;
}

json_object *usdt_rate_json(int fd, uint32_t cluster, uint64_t now,
			    uint64_t max_rate)
{
	struct pgoff_usdt_rate r;
	json_object *o;
	bool paused;

	if (!usdt_rate_get(fd, cluster, &r))
		return NULL;
	paused = usdt_rate_paused(&r, now, max_rate);
	o = json_object_new_object();
	json_object_object_add(o, "paused", json_object_new_boolean(paused));
	if (paused)
		json_object_object_add(o, "paused_for_s", json_object_new_int64(
			(int64_t)((r.paused_until_ns - now + 999999999ULL) /
				  1000000000ULL)));
	json_object_object_add(o, "pauses",
			       json_object_new_int64((int64_t)r.pauses));
	json_object_object_add(o, "last_over_per_second",
			       json_object_new_int64((int64_t)r.last_over_hits));
	return o;
}
