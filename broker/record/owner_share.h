/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * owner_share.h - the flight record shared between cluster owners: any
 * local user may run a cluster that pgoffd traces, and one whose
 * clusters flood it with waits must not push another owner's stored
 * week out of record-max-size.
 *
 * What each owner (a postmaster's uid) has in the record is kept as runs
 * of seqs with the bytes they take on disk, forgotten as retention
 * removes them. A batch (up to 50 ms of every owner's events) is
 * compressed as one, so its bytes are shared by what each owner's lines
 * of it take compressed alone (the cost function: the store's), so that
 * an owner whose lines compress badly pays for it.
 * With N owners in the record, an owner's event is refused (counted)
 * once its part would pass 1/N of the cap, unless the segment retention
 * removes next holds none of the others' events: then what goes to make
 * room is its own oldest. One owner alone is never refused.
 */
#ifndef PGOFF_OWNER_SHARE_H
#define PGOFF_OWNER_SHARE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <json-c/json.h>

/* Owners kept apart; the events of any more are counted as one, under
 * OWNER_SHARE_OTHER (one per local user: the cap is far above a host's). */
#define OWNER_SHARE_MAX_OWNERS	1024u
#define OWNER_SHARE_OTHER	UINT32_MAX
/* Events whose cluster is not known (still being probed). */
#define OWNER_SHARE_UNKNOWN	(UINT32_MAX - 1)
/* A run of an owner's seqs ends at this many bytes, so that retention
 * forgets at about a segment's grain. */
#define OWNER_SHARE_RUN_BYTES	(256u << 10)

struct owner_share;

/* What the record holds now, as the recorder reads it from the store. */
struct owner_share_record {
	uint64_t cap;			/* the events' store's bytes at most */
	/* the last seq in the segment retention removes next; 0: none (one
	 * segment, the one written, is never removed) */
	uint64_t next_removed_last_seq;
};

int owner_share_new(struct owner_share **out);
void owner_share_free(struct owner_share *s);

/* What lines (len bytes, one after another) take on disk compressed as a
 * batch is, or -errno. With it (NULL: none, the default), a batch that
 * holds several owners' events is shared by what each owner's lines take
 * alone; else, and for a batch of one owner, by the lines' length. */
typedef ssize_t (*owner_share_cost_fn)(void *ctx, const void *lines,
				       size_t len);
void owner_share_set_cost_fn(struct owner_share *s, owner_share_cost_fn fn,
			     void *ctx);

/*
 * Whether an event of owner uid, seq (rising), its line (len bytes; kept
 * until written, to weigh its batch; NULL: weighed by length), may be
 * stored; counted either way. Until the store writes it (its bytes then
 * told by owner_share_written), it counts as len at the owner's last
 * batch's ratio of bytes on disk to bytes of line.
 */
bool owner_share_admit(struct owner_share *s,
		       const struct owner_share_record *rec, uint32_t uid,
		       uint64_t seq, const char *line, uint64_t len);
/* The store did not take the event of seq (it stopped): not pending. */
void owner_share_not_taken(struct owner_share *s, uint64_t seq);
/* The events admitted up to last_seq took bytes on disk (0: dropped),
 * shared among their owners by their lines' bytes. */
void owner_share_written(struct owner_share *s, uint64_t last_seq,
			 uint64_t bytes);
/* Retention removed every seq below first_seq: runs wholly below it are
 * forgotten. */
void owner_share_forget(struct owner_share *s, uint64_t first_seq);
/* The bytes on disk of every run. */
uint64_t owner_share_bytes(const struct owner_share *s);
/* Events refused, in all, since start. */
uint64_t owner_share_refused(const struct owner_share *s);
/* Whether runs changed since the last save. */
bool owner_share_dirty(const struct owner_share *s);

/*
 * The runs, as text (a version line, then "uid first last bytes" a run),
 * into dirfd's name through name.new and a rename; 0 or -errno.
 * owner_share_load reads them back at start; a file that does not parse
 * whole is left out (the log says so: its events count for no owner).
 */
int owner_share_save(struct owner_share *s, int dirfd, const char *name);
int owner_share_load(struct owner_share *s, int dirfd, const char *name);

/* The history reply's "owners": each owner's uid, bytes (on disk, its
 * part of each batch), share (1/N of the cap), events stored and
 * refused, and its last batch's bytes on disk per line byte. */
json_object *owner_share_report(const struct owner_share *s,
				const struct owner_share_record *rec);

#endif
