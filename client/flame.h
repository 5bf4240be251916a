/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * flame.h - off-CPU flame graphs: a tree of frames weighted by off-CPU
 * time, written as Brendan Gregg's folded stacks or as an interactive SVG.
 *
 * Pure logic: no I/O except to the FILE * a writer is given. Functions
 * return 0 or -errno. Frame names are treated as hostile bytes: they are
 * copied on add and made safe only when written (each format its own way).
 */
#ifndef PGOFF_FLAME_H
#define PGOFF_FLAME_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define FLAME_MAX_DEPTH 64		/* frames in one sample */
#define FLAME_MAX_NODES 200000		/* distinct nodes (path prefixes) in a tree */
#define FLAME_SVG_WIDTH 1200		/* px, when flame_svg_opts.width is 0 */

struct flame;

/* An empty tree, or NULL on ENOMEM. */
struct flame *flame_new(void);
/* NULL-safe. */
void flame_free(struct flame *f);

/*
 * Add one sample: frames[0] is the root (outermost, e.g. the PostgreSQL
 * wait event "Lock:transactionid"), frames[n - 1] the leaf (innermost
 * kernel function); weight in microseconds of off-CPU time. Frames are
 * copied; identical paths merge (weights sum, saturating at UINT64_MAX).
 * A sample of weight 0 is checked and then adds nothing.
 * Returns 0; -EINVAL for n == 0, n > FLAME_MAX_DEPTH or a NULL or empty
 * frame; -E2BIG if the path needs nodes past FLAME_MAX_NODES (the caller
 * reports it); -ENOMEM. On error the tree is unchanged.
 */
int flame_add(struct flame *f, const char *const *frames, size_t n, uint64_t weight);
/* Sum of all weights (saturating at UINT64_MAX). */
uint64_t flame_total(const struct flame *f);

/*
 * Folded stacks, one line per distinct full path with its own weight:
 * "root;child;leaf 1234\n", sorted bytewise by path. ';', whitespace
 * other than ' ' and control bytes in a frame become '_' (the format has
 * no escape), C1 control characters and bytes of ill-formed UTF-8 '?'
 * (pgoff_utf8_cell: the output is UTF-8 a terminal shows as it is);
 * paths that become equal that way are merged into one line.
 * Returns 0, -ENOMEM, or -EIO if out reports an error.
 */
int flame_write_folded(const struct flame *f, FILE *out);

struct flame_svg_opts {
	const char *title;	/* NULL: "Off-CPU Time Flame Graph" */
	const char *subtitle;	/* NULL: none (the omitted-frames note may still appear) */
	unsigned width;		/* px; 0: FLAME_SVG_WIDTH; else 200..100000 */
};

/*
 * A self-contained interactive SVG: inline CSS and one inline script,
 * nothing fetched, so it works opened from a file and draws the same,
 * without its controls, where scripts do not run (an <img>). The root is
 * at the bottom, under it one "all" frame spanning the full width less
 * 10 px margins; children are sorted by name; widths are proportional to
 * weight. Frames narrower than 0.1 px are not drawn (their weight stays
 * in the parent; zooming does not bring them back) and their number is
 * given in the subtitle. Each drawn frame is one <g data-us="WEIGHT">
 * (with data-at="MICROSECONDS FROM THE LEFT" after a sibling not drawn),
 * with a <title>NAME (N.NNN s, P.PP%)</title>, a <rect> and, when at
 * least 3 characters fit, a <text> cut with "..". Frames named after a
 * PostgreSQL wait ("Lock:...", "LWLock:...", "(no PostgreSQL wait)", ...)
 * are blue-ish, the rest a warm colour hashed from the name. The script:
 * clicking a frame zooms to it (it fills the width, its descendants
 * rescale, its ancestors stay, dimmed), "Reset zoom" or clicking "all"
 * undoes it; "Search" or Ctrl-F highlights the frames whose name a
 * regular expression (JavaScript's) matches and shows "Matched: P.P %"
 * of the total, a frame under a matched one counted once; Escape clears
 * it; hovering shows a frame's name, time and share under the graph.
 * Names, title and subtitle are XML-escaped; invalid UTF-8 and control
 * characters (C0 and C1) become '?'. An empty tree gives a valid SVG that
 * says so, with no script. o may be NULL. Returns 0, -EINVAL for a width
 * out of range, -ENOMEM, or -EIO if out reports an error.
 */
int flame_write_svg(const struct flame *f, const struct flame_svg_opts *o, FILE *out);

#endif
