/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pg_wait_names.c - PostgreSQL wait_event_info -> pg_stat_activity names.
 *
 * The tables are generated from each major's sources
 * (pg_wait_names_data.c, tools/gen_pg_wait_names.py), with the rule
 * pgstat_get_wait_event() of that major applies to each class
 * (pg_wait_names_data.h).  Where PostgreSQL would print a placeholder
 * ("???", "unknown wait event", "<unassigned:N>" for an unused individual
 * LWLock number in 13-16) or a name only the server knows, these
 * functions return NULL so that the caller shows the raw id instead.
 *
 * A table holds the events of the release read (the Debian package this
 * project's servers run, or the newest commit of a branch) and those
 * later commits of its branch append; minor releases only append, so an
 * older minor release of the same major never has an id with another
 * meaning (the generator checks every release).
 */
#include <stddef.h>
#include <stdint.h>
#include <strings.h>

#include "broker/pg/pg_wait_names.h"
#include "broker/pg/pg_wait_names_data.h"

static const struct pg_wait_major_def *major_def(int pg_major)
{
	for (unsigned int i = 0; i < pg_wait_nmajor_defs; i++)
		if (pg_wait_major_defs[i].major == pg_major)
			return &pg_wait_major_defs[i];
	return NULL;
}

static const struct pg_wait_class_def *
class_def(const struct pg_wait_major_def *m, int pg_class)
{
	for (unsigned int i = 0; m && i < m->nclasses; i++)
		if (m->classes[i].class_id == pg_class)
			return &m->classes[i];
	return NULL;
}

static const struct pg_wait_event_def *
event_by_id(const struct pg_wait_class_def *c, uint16_t id)
{
	unsigned int lo = 0, hi = c->nevents;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (c->events[mid].id == id)
			return &c->events[mid];
		if (c->events[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* The table's event for this wait_event_info, by the class's rule. */
static const struct pg_wait_event_def *
event_of(const struct pg_wait_class_def *c, uint32_t info)
{
	switch (c->kind) {
	case PG_WAIT_KIND_TRANCHE:
	case PG_WAIT_KIND_LOCKTAG:
		/* PostgreSQL looks at the low 16 bits only */
		return event_by_id(c, (uint16_t)(info & 0xFFFFu));
	case PG_WAIT_KIND_ENUM:
	case PG_WAIT_KIND_CUSTOM:
		/* compared as a whole: bits 16..23 set match no member */
		if (info & 0x00FF0000u)
			return NULL;
		return event_by_id(c, (uint16_t)(info & 0xFFFFu));
	case PG_WAIT_KIND_SINGLE:
		return c->nevents ? &c->events[0] : NULL;
	default:
		return NULL;
	}
}

int pg_wait_first_user_tranche(int pg_major)
{
	const struct pg_wait_class_def *c = class_def(major_def(pg_major),
						      PG_CLASS_LWLOCK);

	return c && c->kind == PG_WAIT_KIND_TRANCHE ? c->first_user_defined : -1;
}

int pg_wait_names_known_major(int pg_major)
{
	return major_def(pg_major) != NULL;
}

const char *pg_wait_names_source(int pg_major)
{
	const struct pg_wait_major_def *m = major_def(pg_major);

	return m ? m->source : NULL;
}

const char *pg_wait_event_type(int pg_major, uint32_t wait_event_info)
{
	const struct pg_wait_class_def *c;

	if (wait_event_info == 0)
		return NULL;
	c = class_def(major_def(pg_major), (int)(wait_event_info >> 24));
	return c ? c->type_name : NULL;
}

const char *pg_wait_event_name(int pg_major, uint32_t wait_event_info)
{
	const struct pg_wait_class_def *c;
	const struct pg_wait_event_def *e;

	if (wait_event_info == 0)
		return NULL;
	c = class_def(major_def(pg_major), (int)(wait_event_info >> 24));
	if (!c)
		return NULL;
	e = event_of(c, wait_event_info);
	if (e)
		return e->name;
	if (c->kind == PG_WAIT_KIND_TRANCHE &&
	    (wait_event_info & 0xFFFFu) >= c->first_user_defined)
		return c->user_defined_name;	/* a tranche of an extension */
	return NULL;
}

int pg_wait_event_since_minor(int pg_major, uint32_t wait_event_info)
{
	const struct pg_wait_class_def *c;
	const struct pg_wait_event_def *e;

	if (wait_event_info == 0)
		return -1;
	c = class_def(major_def(pg_major), (int)(wait_event_info >> 24));
	e = c ? event_of(c, wait_event_info) : NULL;
	return e ? e->since_minor : -1;
}

/* ---- names -> classes and events, for filters ---- */

int pg_wait_class_parse(const char *type_name)
{
	for (unsigned int i = 0; i < pg_wait_nmajor_defs; i++) {
		const struct pg_wait_major_def *m = &pg_wait_major_defs[i];

		for (unsigned int j = 0; j < m->nclasses; j++)
			if (strcasecmp(type_name, m->classes[j].type_name) == 0)
				return m->classes[j].class_id;
	}
	return -1;
}

const char *pg_wait_class_name(int pg_class)
{
	for (unsigned int i = 0; i < pg_wait_nmajor_defs; i++) {
		const struct pg_wait_class_def *c =
			class_def(&pg_wait_major_defs[i], pg_class);

		if (c)
			return c->type_name;
	}
	return NULL;
}

/* One major's spelling of an event name of a class, or NULL. */
static const char *event_find(const struct pg_wait_class_def *c,
			      const char *name)
{
	for (unsigned int i = 0; i < c->nevents; i++)
		if (strcasecmp(c->events[i].name, name) == 0)
			return c->events[i].name;
	if (c->kind == PG_WAIT_KIND_TRANCHE && c->user_defined_name &&
	    strcasecmp(c->user_defined_name, name) == 0)
		return c->user_defined_name;
	return NULL;
}

const char *pg_wait_event_spelling(int pg_class, const char *name)
{
	for (unsigned int i = 0; i < pg_wait_nmajor_defs; i++) {
		const struct pg_wait_class_def *c =
			class_def(&pg_wait_major_defs[i], pg_class);
		const char *found = c ? event_find(c, name) : NULL;

		if (found)
			return found;
	}
	return NULL;
}
