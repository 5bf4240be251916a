// SPDX-License-Identifier: GPL-2.0-only
/* flame.c - off-CPU flame graphs: folded stacks and an interactive SVG; see flame.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "client/flame.h"
#include "common/utf8.h"

/*
 * The tree is an array of nodes; node 0 is "all", the parent of every
 * root frame, and is not counted against FLAME_MAX_NODES. A node is found
 * by (parent, name) in an open-addressing hash table of node indexes
 * (0 marks an empty slot: node 0 is never looked up).
 */
struct flame_node {
	char *name;		/* NULL for node 0 */
	uint64_t total;		/* its own weight and its descendants' */
	uint64_t self;		/* weight of samples whose leaf it is */
	uint32_t parent;
	uint32_t hash;		/* of (parent, name) */
	uint32_t depth;		/* 0 for "all", 1 for a root frame */
};

struct flame {
	struct flame_node *nodes;
	size_t nnodes, cap;	/* nnodes counts node 0 */
	uint32_t *slots;
	size_t nslots;		/* a power of two, at least twice nnodes */
};

/*
 * Weights saturate at UINT64_MAX rather than wrap: 2^64 us is 584,000
 * years, so only a hostile or broken caller gets there, and a wrapped sum
 * would draw a parent narrower than its children. The SVG also clamps
 * children to their parent's extent, which saturation can break.
 */
static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint32_t fnv1a(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static uint32_t key_hash(uint32_t parent, const char *name)
{
	return fnv1a(name) ^ (parent * 2654435761u);
}

struct flame *flame_new(void)
{
	struct flame *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->cap = 64;
	f->nslots = 128;
	f->nodes = calloc(f->cap, sizeof(*f->nodes));
	f->slots = calloc(f->nslots, sizeof(*f->slots));
	if (!f->nodes || !f->slots) {
		flame_free(f);
		return NULL;
	}
	f->nnodes = 1;		/* "all" */
	return f;
}

void flame_free(struct flame *f)
{
	if (!f)
		return;
	for (size_t i = 0; f->nodes && i < f->nnodes; i++)
		free(f->nodes[i].name);
	free(f->nodes);
	free(f->slots);
	free(f);
}

uint64_t flame_total(const struct flame *f)
{
	return f ? f->nodes[0].total : 0;
}

static uint32_t lookup(const struct flame *f, uint32_t parent, const char *name)
{
	uint32_t h = key_hash(parent, name);
	size_t mask = f->nslots - 1;

	for (size_t i = h & mask; f->slots[i]; i = (i + 1) & mask) {
		const struct flame_node *n = &f->nodes[f->slots[i]];

		if (n->hash == h && n->parent == parent && strcmp(n->name, name) == 0)
			return f->slots[i];
	}
	return 0;
}

static void slot_insert(uint32_t *slots, size_t nslots, uint32_t hash, uint32_t idx)
{
	size_t mask = nslots - 1, i = hash & mask;

	while (slots[i])
		i = (i + 1) & mask;
	slots[i] = idx;
}

/* Room for want nodes in all; the tree's contents are unchanged either way. */
static int reserve(struct flame *f, size_t want)
{
	if (want > f->cap) {
		size_t cap = f->cap;
		struct flame_node *nodes;

		while (cap < want)
			cap *= 2;
		nodes = realloc(f->nodes, cap * sizeof(*nodes));
		if (!nodes)
			return -ENOMEM;
		f->nodes = nodes;
		f->cap = cap;
	}
	if (want * 2 > f->nslots) {
		size_t nslots = f->nslots;
		uint32_t *slots;

		while (want * 2 > nslots)
			nslots *= 2;
		slots = calloc(nslots, sizeof(*slots));
		if (!slots)
			return -ENOMEM;
		for (size_t i = 1; i < f->nnodes; i++)
			slot_insert(slots, nslots, f->nodes[i].hash, (uint32_t)i);
		free(f->slots);
		f->slots = slots;
		f->nslots = nslots;
	}
	return 0;
}

int flame_add(struct flame *f, const char *const *frames, size_t n, uint64_t weight)
{
	char *names[FLAME_MAX_DEPTH];
	uint32_t cur = 0;
	size_t matched, need;
	int err;

	if (!f || !frames || n == 0 || n > FLAME_MAX_DEPTH)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!frames[i] || !frames[i][0])
			return -EINVAL;
	if (weight == 0)
		return 0;

	/* the part of the path that exists already, then what it lacks:
	 * everything that can fail happens before the tree changes */
	for (matched = 0; matched < n; matched++) {
		uint32_t idx = lookup(f, cur, frames[matched]);

		if (!idx)
			break;
		cur = idx;
	}
	need = n - matched;
	if (f->nnodes - 1 + need > FLAME_MAX_NODES)
		return -E2BIG;
	err = reserve(f, f->nnodes + need);
	if (err)
		return err;
	for (size_t i = 0; i < need; i++) {
		names[i] = strdup(frames[matched + i]);
		if (!names[i]) {
			while (i > 0)
				free(names[--i]);
			return -ENOMEM;
		}
	}
	for (size_t i = 0; i < need; i++) {
		struct flame_node *nd = &f->nodes[f->nnodes];

		nd->name = names[i];
		nd->total = nd->self = 0;
		nd->parent = cur;
		nd->hash = key_hash(cur, names[i]);
		nd->depth = (uint32_t)(matched + i + 1);
		cur = (uint32_t)f->nnodes++;
		slot_insert(f->slots, f->nslots, nd->hash, cur);
	}

	f->nodes[cur].self = sat_add(f->nodes[cur].self, weight);
	for (uint32_t i = cur;; i = f->nodes[i].parent) {
		f->nodes[i].total = sat_add(f->nodes[i].total, weight);
		if (i == 0)
			break;
	}
	return 0;
}

static int finish(FILE *out)
{
	if (fflush(out) != 0 || ferror(out))
		return -EIO;
	return 0;
}

/* ---- folded stacks ---- */

struct folded_line {
	char *path;
	uint64_t weight;
};

static int cmp_line(const void *a, const void *b)
{
	return strcmp(((const struct folded_line *)a)->path,
		      ((const struct folded_line *)b)->path);
}

/* ';' separates frames, the last ' ' the count, a newline the sample. */
static char folded_byte(unsigned char c)
{
	return c == ';' || c < 0x20 || c == 0x7f ? '_' : (char)c;
}

/*
 * "root;...;name" for node idx (not 0), made safe for the format and for
 * tools that read it as UTF-8: ill-formed UTF-8 becomes
 * '?' as everywhere in pgoff, then separators '_'. NULL on ENOMEM.
 */
static char *folded_path(const struct flame *f, uint32_t idx)
{
	uint32_t chain[FLAME_MAX_DEPTH];
	size_t len = 0, pos = 0, depth = 0;
	char *p;

	for (uint32_t i = idx; i; i = f->nodes[i].parent) {
		chain[depth++] = i;
		len += strlen(f->nodes[i].name) + 1;
	}
	p = malloc(len);
	if (!p)
		return NULL;
	while (depth > 0) {
		const char *s = f->nodes[chain[--depth]].name;
		size_t n = strlen(s);

		/* separators first ('_'), then what no terminal may get
		 * ('?': C1 controls, bad UTF-8), never longer than s */
		for (size_t k = 0; k < n; k++)
			p[pos + k] = folded_byte((unsigned char)s[k]);
		p[pos + n] = '\0';
		n = pgoff_utf8_cell(p + pos, p + pos, n + 1, NULL);
		pos += n;
		p[pos++] = depth ? ';' : '\0';
	}
	return p;
}

int flame_write_folded(const struct flame *f, FILE *out)
{
	struct folded_line *lines;
	size_t n = 0;
	int err = 0;

	if (!f || !out)
		return -EINVAL;
	lines = calloc(f->nnodes, sizeof(*lines));
	if (!lines)
		return -ENOMEM;
	for (uint32_t i = 1; i < f->nnodes; i++) {
		if (!f->nodes[i].self)
			continue;
		lines[n].path = folded_path(f, i);
		if (!lines[n].path) {
			err = -ENOMEM;
			goto cleanup;
		}
		lines[n++].weight = f->nodes[i].self;
	}
	qsort(lines, n, sizeof(*lines), cmp_line);
	for (size_t i = 0; i < n; i++) {
		uint64_t w = lines[i].weight;

		/* names that differed only in replaced bytes are one path now */
		while (i + 1 < n && strcmp(lines[i].path, lines[i + 1].path) == 0)
			w = sat_add(w, lines[++i].weight);
		fprintf(out, "%s %" PRIu64 "\n", lines[i].path, w);
	}
	err = finish(out);
cleanup:
	for (size_t i = 0; i < n; i++)
		free(lines[i].path);
	free(lines);
	return err;
}

/* ---- SVG ---- */

/*
 * Layout after flamegraph.pl: the root at the bottom (not an icicle),
 * 16 px rows, 12 px Verdana whose characters are taken as 0.59 em wide
 * to cut text, 10 px side margins. The "all" frame is grey: it is no
 * frame of a sample.
 */
#define SVG_XPAD	10
#define SVG_YPAD_TOP	54	/* title and subtitle */
#define SVG_YPAD_BOTTOM	30	/* the hovered frame's details, the search's share */
#define SVG_FRAME_H	16
#define SVG_FONT	12
#define SVG_CHAR_W	(SVG_FONT * 0.59)	/* CHAR_W in the script too */
#define SVG_MIN_W	0.1	/* px: narrower frames are not drawn */
#define SVG_MIN_WIDTH	200
#define SVG_MAX_WIDTH	100000

struct child {
	const char *name;
	uint32_t idx;
};

struct svg {
	const struct flame *f;
	FILE *out;
	struct child *kids;	/* children grouped by parent, sorted by name */
	size_t *first;		/* node i's children: kids[first[i]..first[i + 1]) */
	double full;		/* px spanned by "all" */
	unsigned width, height, max_depth;
	size_t drawn;
	char *buf;		/* cleaned text */
	size_t cap;
};

static int cmp_child(const void *a, const void *b)
{
	return strcmp(((const struct child *)a)->name, ((const struct child *)b)->name);
}

/* Children lists by a counting sort on the parent, then names sorted. */
static int sort_children(struct svg *s)
{
	const struct flame *f = s->f;
	size_t *fill;

	s->first = calloc(f->nnodes + 1, sizeof(*s->first));
	s->kids = calloc(f->nnodes, sizeof(*s->kids));
	fill = calloc(f->nnodes, sizeof(*fill));
	if (!s->first || !s->kids || !fill) {
		free(fill);
		return -ENOMEM;
	}
	for (size_t i = 1; i < f->nnodes; i++)
		s->first[f->nodes[i].parent + 1]++;
	for (size_t i = 0; i < f->nnodes; i++)
		s->first[i + 1] += s->first[i];
	for (uint32_t i = 1; i < f->nnodes; i++) {
		uint32_t p = f->nodes[i].parent;
		struct child *c = &s->kids[s->first[p] + fill[p]++];

		c->name = f->nodes[i].name;
		c->idx = i;
	}
	for (size_t i = 0; i < f->nnodes; i++)
		qsort(s->kids + s->first[i], s->first[i + 1] - s->first[i],
		      sizeof(*s->kids), cmp_child);
	free(fill);
	return 0;
}

/* Rounded to a whole number, for v >= 0 (no libm). */
static long long round_pos(double v)
{
	return v > 0 ? (long long)(v + 0.5) : 0;
}

/* Fixed point with two decimals, whatever LC_NUMERIC says. */
static const char *fx(char *buf, size_t len, double v)
{
	long long c = round_pos(v * 100);

	snprintf(buf, len, "%lld.%02lld", c / 100, c % 100);
	return buf;
}

/*
 * s into s->buf as text XML accepts: what pgoff_utf8_cell replaces
 * (invalid UTF-8, C0 and C1 controls) and the non-characters
 * U+FFFE/U+FFFF become '?' (XML 1.0 has no way to write those). Returns the length, or -ENOMEM.
 */
static long clean(struct svg *s, const char *in)
{
	size_t len = strlen(in), n;
	unsigned char *p;

	if (len + 1 > s->cap) {
		char *b = realloc(s->buf, len + 1);

		if (!b)
			return -ENOMEM;
		s->buf = b;
		s->cap = len + 1;
	}
	n = pgoff_utf8_cell(in, s->buf, len + 1, NULL);
	p = (unsigned char *)s->buf;
	for (size_t i = 0; i < n; i++) {
		if (p[i] == 0xef && i + 2 < n && p[i + 1] == 0xbf &&
			   (p[i + 2] == 0xbe || p[i + 2] == 0xbf)) {
			p[i] = p[i + 1] = p[i + 2] = '?';
			i += 2;
		}
	}
	return (long)n;
}

/* n bytes of cleaned text, with &<>"' as entities. */
static void put_escaped(FILE *out, const char *t, size_t n)
{
	size_t run = 0;

	for (size_t i = 0; i < n; i++) {
		const char *ent;

		switch (t[i]) {
		case '&': ent = "&amp;"; break;
		case '<': ent = "&lt;"; break;
		case '>': ent = "&gt;"; break;
		case '"': ent = "&quot;"; break;
		case '\'': ent = "&apos;"; break;
		default: continue;
		}
		fwrite(t + run, 1, i - run, out);
		fputs(ent, out);
		run = i + 1;
	}
	fwrite(t + run, 1, n - run, out);
}

static int put_text(struct svg *s, const char *in)
{
	long n = clean(s, in);

	if (n < 0)
		return (int)n;
	put_escaped(s->out, s->buf, (size_t)n);
	return 0;
}

static bool is_pg_wait(const char *name)
{
	static const char *const types[] = {
		"Lock:", "LWLock:", "IO:", "IPC:", "Client:", "Timeout:",
		"Activity:", "BufferPin:", "Extension:", "InjectionPoint:",
	};

	if (strcmp(name, "(no PostgreSQL wait)") == 0 || strcmp(name, "(run queue)") == 0)
		return true;
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (strncmp(name, types[i], strlen(types[i])) == 0)
			return true;
	return false;
}

/* flamegraph.pl's "hot" palette, and its "io" blues for PostgreSQL waits. */
static void colour(const char *name, char *buf, size_t len)
{
	uint32_t h;
	unsigned v1, v2, v3;

	if (!name) {
		snprintf(buf, len, "#c8c8c8");
		return;
	}
	h = fnv1a(name);
	v1 = h & 0xff;
	v2 = (h >> 8) & 0xff;
	v3 = (h >> 16) & 0xff;
	if (is_pg_wait(name))
		snprintf(buf, len, "#%02x%02x%02x", 80 + 60 * v1 / 255,
			 80 + 60 * v1 / 255, 190 + 55 * v2 / 255);
	else
		snprintf(buf, len, "#%02x%02x%02x", 205 + 50 * v3 / 255,
			 230 * v1 / 255, 55 * v2 / 255);
}

/* "N.NNN s, P.PP%" of weight w in total. */
static void put_share(FILE *out, uint64_t w, uint64_t total)
{
	uint64_t ms = w / 1000 + (w % 1000 >= 500);
	long long hundredths = round_pos(100.0 * 100.0 * (double)w / (double)total);

	fprintf(out, "%" PRIu64 ".%03" PRIu64 " s, %lld.%02lld%%", ms / 1000,
		ms % 1000, hundredths / 100, hundredths % 100);
}

/*
 * One frame: a <g> with its weight in microseconds (data-us), exact where
 * the px are rounded, for the script to zoom and search. Its left edge
 * in microseconds from the left of "all" is where the script finds it
 * (its previous sibling's right edge, or its parent's left edge) unless
 * a sibling too narrow to draw came between: then data-at says where.
 */
static int draw_frame(struct svg *s, uint32_t idx, double x, double w, uint64_t at,
		      bool write_at)
{
	const struct flame_node *nd = &s->f->nodes[idx];
	const char *name = nd->name ? nd->name : "all";
	unsigned y = s->height - SVG_YPAD_BOTTOM - (nd->depth + 1) * SVG_FRAME_H;
	char bx[32], bw[32], col[32];
	long n;
	int chars;

	n = clean(s, name);
	if (n < 0)
		return (int)n;
	fprintf(s->out, "<g data-us=\"%" PRIu64 "\"", nd->total);
	if (write_at)
		fprintf(s->out, " data-at=\"%" PRIu64 "\"", at);
	fputs("><title>", s->out);
	put_escaped(s->out, s->buf, (size_t)n);
	fputs(" (", s->out);
	put_share(s->out, nd->total, s->f->nodes[0].total);
	colour(nd->name, col, sizeof(col));
	fprintf(s->out, ")</title><rect x=\"%s\" y=\"%u\" width=\"%s\" height=\"%d\" fill=\"%s\"/>",
		fx(bx, sizeof(bx), x), y, fx(bw, sizeof(bw), w), SVG_FRAME_H - 1, col);

	/* as many characters as fit, the last two ".." when cut; none under 3 */
	chars = (int)((w - 6) / SVG_CHAR_W);
	if (chars >= 3) {
		size_t cut = (size_t)n, count = 0;
		bool dots = false;

		for (size_t i = 0; i < (size_t)n; i++) {
			if (((unsigned char)s->buf[i] & 0xc0) == 0x80)
				continue;
			if (count == (size_t)chars - 2)
				cut = i;
			if (++count > (size_t)chars) {
				dots = true;
				break;
			}
		}
		if (!dots)
			cut = (size_t)n;
		fprintf(s->out, "<text x=\"%s\" y=\"%u\">", fx(bx, sizeof(bx), x + 3),
			y + SVG_FRAME_H - 5);
		put_escaped(s->out, s->buf, cut);
		fputs(dots ? "..</text>" : "</text>", s->out);
	}
	fputs("</g>\n", s->out);
	return 0;
}

/*
 * Node idx at x, w px wide (at microseconds from the left), then its
 * children left to right: the script relies on this order (a frame's
 * descendants follow it). With write false, only counts what is drawn
 * and how deep, for the SVG's height.
 */
static int frames(struct svg *s, uint32_t idx, double x, double w, uint64_t at,
		  bool write_at, bool write)
{
	const struct flame_node *nd = &s->f->nodes[idx];
	double total = (double)s->f->nodes[0].total;
	uint64_t cum = 0, next = at;	/* where the script puts the next child */
	int err;

	s->drawn++;
	if (nd->depth > s->max_depth)
		s->max_depth = nd->depth;
	if (write) {
		err = draw_frame(s, idx, x, w, at, write_at);
		if (err)
			return err;
	}
	for (size_t k = s->first[idx]; k < s->first[idx + 1]; k++) {
		const struct flame_node *c = &s->f->nodes[s->kids[k].idx];
		double cx = x + s->full * ((double)cum / total);
		double cw = s->full * ((double)c->total / total);
		uint64_t cat = sat_add(at, cum);

		cum = sat_add(cum, c->total);
		if (cx + cw > x + w)	/* only after saturation */
			cw = x + w - cx;
		if (cw < SVG_MIN_W)
			continue;	/* its weight stays in the parent */
		err = frames(s, s->kids[k].idx, cx, cw, cat, cat != next, write);
		if (err)
			return err;
		next = sat_add(cat, c->total);
	}
	return 0;
}

static int svg_head(struct svg *s, const struct flame_svg_opts *o, size_t omitted)
{
	const char *title = o && o->title ? o->title : "Off-CPU Time Flame Graph";
	const char *sub = o ? o->subtitle : NULL;
	int err;

	fprintf(s->out,
		"<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%u\" "
		"height=\"%u\" viewBox=\"0 0 %u %u\">\n"
		"<defs><linearGradient id=\"bg\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">"
		"<stop stop-color=\"#eeeeee\" offset=\"5%%\"/>"
		"<stop stop-color=\"#eeeeb0\" offset=\"95%%\"/></linearGradient></defs>\n"
		"<style>text{font-family:Verdana,sans-serif;font-size:%dpx;fill:#000}"
		".c{text-anchor:middle}.t{font-size:17px}.r{text-anchor:end}"
		"#frames g,.b{cursor:pointer}.b{fill:#2050a0}.off{opacity:.4}"
		"#frames .m rect{fill:#e040e0}#frames .a{opacity:.6}</style>\n"
		"<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" fill=\"url(#bg)\"/>\n"
		"<text class=\"c t\" x=\"%u\" y=\"24\">",
		s->width, s->height, s->width, s->height, SVG_FONT, s->width,
		s->height, s->width / 2);
	err = put_text(s, title);
	if (err)
		return err;
	fputs("</text>\n", s->out);
	if (!sub && !omitted)
		return 0;
	fprintf(s->out, "<text class=\"c\" x=\"%u\" y=\"42\">", s->width / 2);
	if (sub) {
		err = put_text(s, sub);
		if (err)
			return err;
	}
	if (omitted)
		fprintf(s->out, "%s%zu frame%s narrower than 0.1 px not drawn%s",
			sub ? " (" : "", omitted, omitted == 1 ? "" : "s", sub ? ")" : "");
	fputs("</text>\n", s->out);
	return 0;
}

/*
 * The script, written once after the frames: click a frame to zoom to it
 * (the root or Reset zoom undoes it), Search or Ctrl-F highlights the
 * frames a regular expression matches and gives their share of the total,
 * hovering gives a frame's time and share. It reads only what the frames
 * carry (title, rect, data-at, data-us, in the order frames() writes
 * them), fetches nothing, and sets names as text, never as markup. In a
 * CDATA section, readable as it is; it has no "]]>".
 */
static const char svg_script[] =
	"(function () {\n"
	"'use strict';\n"
	"var CHAR_W = 7.08; /* px a character is taken to be wide, as the writer's */\n"
	"var box = document.getElementById('frames'), F = [], open = [];\n"
	"var g, f, t, r;\n"
	"\n"
	"/* Frames in document order: each one's descendants follow it; a frame's\n"
	" * parent is the nearest one before it that is lower (greater y). */\n"
	"for (g = box.firstElementChild; g; g = g.nextElementSibling) {\n"
	"  t = g.firstElementChild;\n"
	"  r = t.nextElementSibling;\n"
	"  f = {\n"
	"    g: g, r: r, l: r.nextElementSibling, i: F.length, end: 0,\n"
	"    name: t.textContent.replace(/ \\([^()]*\\)$/, ''),\n"
	"    us: Number(g.getAttribute('data-us')),\n"
	"    y: Number(r.getAttribute('y')),\n"
	"    x0: r.getAttribute('x'), w0: r.getAttribute('width')\n"
	"  };\n"
	"  f.l0 = f.l ? f.l.textContent : '';\n"
	"  f.lx0 = f.l ? f.l.getAttribute('x') : '';\n"
	"  while (open.length && open[open.length - 1].y <= f.y)\n"
	"    open.pop().end = F.length;\n"
	"  f.up = open.length ? open[open.length - 1] : null;\n"
	"  /* its left edge in microseconds: after its previous sibling, or at\n"
	"   * its parent's left, unless data-at says (a sibling not drawn) */\n"
	"  f.at = g.hasAttribute('data-at') ? Number(g.getAttribute('data-at')) :\n"
	"    f.up ? f.up.next : 0;\n"
	"  f.next = f.at;\n"
	"  if (f.up)\n"
	"    f.up.next = f.at + f.us;\n"
	"  open.push(f);\n"
	"  g.pgoffFrame = f;\n"
	"  F.push(f);\n"
	"}\n"
	"while (open.length)\n"
	"  open.pop().end = F.length;\n"
	"\n"
	"var all = F[0], pad = Number(all.x0), full = Number(all.w0);\n"
	"var reset = document.getElementById('reset');\n"
	"var details = document.getElementById('details');\n"
	"var matched = document.getElementById('matched');\n"
	"var pattern = '', zooms = 0;\n"
	"document.getElementById('controls').removeAttribute('display');\n"
	"\n"
	"function frameOf(el) {\n"
	"  while (el && el.parentNode !== box)\n"
	"    el = el.parentNode;\n"
	"  return el ? el.pgoffFrame : null;\n"
	"}\n"
	"\n"
	"/* The name, cut with \"..\" to what fits in w px (none under 3 characters). */\n"
	"function label(f, x, w) {\n"
	"  var n = Math.floor((w - 6) / CHAR_W), c = Array.from(f.name);\n"
	"\n"
	"  if (!f.l) {\n"
	"    if (n < 3)\n"
	"      return;\n"
	"    f.l = document.createElementNS(box.namespaceURI, 'text');\n"
	"    f.l.setAttribute('y', f.y + Number(f.r.getAttribute('height')) - 4);\n"
	"    f.g.appendChild(f.l);\n"
	"  }\n"
	"  f.l.setAttribute('x', (x + 3).toFixed(2));\n"
	"  f.l.textContent = n < 3 ? '' : c.length > n ? c.slice(0, n - 2).join('') + '..' : f.name;\n"
	"}\n"
	"\n"
	"function place(f, x, w, dim) {\n"
	"  f.g.removeAttribute('display');\n"
	"  f.g.classList.toggle('a', dim);\n"
	"  f.r.setAttribute('x', x.toFixed(2));\n"
	"  f.r.setAttribute('width', w.toFixed(2));\n"
	"  label(f, x, w);\n"
	"}\n"
	"\n"
	"function unzoom() {\n"
	"  for (var i = 0, f; i < F.length; i++) {\n"
	"    f = F[i];\n"
	"    f.g.removeAttribute('display');\n"
	"    f.g.classList.remove('a');\n"
	"    f.r.setAttribute('x', f.x0);\n"
	"    f.r.setAttribute('width', f.w0);\n"
	"    if (f.l) {\n"
	"      f.l.setAttribute('x', f.lx0);\n"
	"      f.l.textContent = f.l0;\n"
	"    }\n"
	"  }\n"
	"  reset.classList.add('off');\n"
	"}\n"
	"\n"
	"/* z fills the width, its descendants in proportion; its ancestors stay,\n"
	" * full width and dimmed; the rest is hidden. */\n"
	"function zoom(z) {\n"
	"  var k = full / z.us, mark = ++zooms, i, f, x, w;\n"
	"\n"
	"  if (z === all)\n"
	"    return unzoom();\n"
	"  for (f = z.up; f; f = f.up)\n"
	"    f.mark = mark;\n"
	"  for (i = 0; i < F.length; i++) {\n"
	"    f = F[i];\n"
	"    x = pad + (f.at - z.at) * k;\n"
	"    w = Math.min(f.us * k, pad + full - x); /* saturated sums */\n"
	"    if (i >= z.i && i < z.end && w >= 0.1)\n"
	"      place(f, x, w, false);\n"
	"    else if (f.mark === mark)\n"
	"      place(f, pad, full, true);\n"
	"    else\n"
	"      f.g.setAttribute('display', 'none');\n"
	"  }\n"
	"  reset.classList.remove('off');\n"
	"}\n"
	"\n"
	"/* Frames whose name p (a regular expression) matches are highlighted;\n"
	" * the share counts a matched frame under a matched frame once. */\n"
	"function search(p) {\n"
	"  var re = null, sum = 0, until = 0, i, f, hit;\n"
	"\n"
	"  try {\n"
	"    re = p ? new RegExp(p) : null;\n"
	"  } catch (e) {\n"
	"    matched.textContent = 'Not a regular expression: ' + p;\n"
	"    return;\n"
	"  }\n"
	"  for (i = 1; i < F.length; i++) {\n"
	"    f = F[i];\n"
	"    hit = re !== null && re.test(f.name);\n"
	"    f.g.classList.toggle('m', hit);\n"
	"    if (hit && i >= until) {\n"
	"      sum += f.us;\n"
	"      until = f.end;\n"
	"    }\n"
	"  }\n"
	"  pattern = p;\n"
	"  matched.textContent = re ? 'Matched: ' + (100 * sum / all.us).toFixed(1) + ' %' : '';\n"
	"}\n"
	"\n"
	"function ask() {\n"
	"  var p = window.prompt('Search frame names: a regular expression ' +\n"
	"    '(JavaScript, case-sensitive; a word matches anywhere in a name). ' +\n"
	"    'Empty clears.', pattern);\n"
	"\n"
	"  if (p !== null)\n"
	"    search(p);\n"
	"}\n"
	"\n"
	"box.addEventListener('click', function (e) {\n"
	"  var z = frameOf(e.target);\n"
	"\n"
	"  if (z)\n"
	"    zoom(z);\n"
	"});\n"
	"box.addEventListener('mouseover', function (e) {\n"
	"  var h = frameOf(e.target);\n"
	"\n"
	"  if (h)\n"
	"    details.textContent = h.name + ' (' + (h.us / 1e6).toFixed(3) + ' s, ' +\n"
	"      (100 * h.us / all.us).toFixed(2) + '%)';\n"
	"});\n"
	"box.addEventListener('mouseout', function () {\n"
	"  details.textContent = '';\n"
	"});\n"
	"reset.addEventListener('click', unzoom);\n"
	"document.getElementById('search').addEventListener('click', ask);\n"
	"window.addEventListener('keydown', function (e) {\n"
	"  if ((e.ctrlKey || e.metaKey) && (e.key === 'f' || e.key === 'F')) {\n"
	"    e.preventDefault();\n"
	"    ask();\n"
	"  } else if (e.key === 'Escape') {\n"
	"    search('');\n"
	"  }\n"
	"});\n"
	"})();\n";

/*
 * The script's controls: Reset zoom and Search on the title's line, the
 * hovered frame's details and the search's share under the graph. They
 * are hidden until the script shows them: where scripts do not run (an
 * <img>), no control that does nothing.
 */
static void svg_controls(struct svg *s)
{
	unsigned bottom = s->height - 10, right = s->width - SVG_XPAD;

	fprintf(s->out,
		"<g id=\"controls\" display=\"none\">\n"
		"<text id=\"reset\" class=\"b off\" x=\"%d\" y=\"24\">Reset zoom</text>\n"
		"<text id=\"search\" class=\"b r\" x=\"%u\" y=\"24\">Search</text>\n"
		"<text id=\"details\" x=\"%d\" y=\"%u\"></text>\n"
		"<text id=\"matched\" class=\"r\" x=\"%u\" y=\"%u\"></text>\n"
		"</g>\n", SVG_XPAD, right, SVG_XPAD, bottom, right, bottom);
}

int flame_write_svg(const struct flame *f, const struct flame_svg_opts *o, FILE *out)
{
	struct svg s = { .f = f, .out = out };
	int err;

	if (!f || !out)
		return -EINVAL;
	s.width = o && o->width ? o->width : FLAME_SVG_WIDTH;
	if (s.width < SVG_MIN_WIDTH || s.width > SVG_MAX_WIDTH)
		return -EINVAL;
	s.full = s.width - 2 * SVG_XPAD;

	if (f->nodes[0].total == 0) {
		s.height = SVG_YPAD_TOP + 2 * SVG_FRAME_H + SVG_YPAD_BOTTOM;
		err = svg_head(&s, o, 0);
		if (err)
			goto cleanup;
		fprintf(out, "<text class=\"c\" x=\"%u\" y=\"%u\">no off-CPU time recorded</text>\n",
			s.width / 2, SVG_YPAD_TOP + SVG_FRAME_H);
		fputs("</svg>\n", out);
		err = finish(out);
		goto cleanup;
	}

	err = sort_children(&s);
	if (err)
		goto cleanup;
	frames(&s, 0, SVG_XPAD, s.full, 0, false, false);	/* cannot fail */
	s.height = SVG_YPAD_TOP + (s.max_depth + 1) * SVG_FRAME_H + SVG_YPAD_BOTTOM;
	err = svg_head(&s, o, f->nnodes - s.drawn);
	if (err)
		goto cleanup;
	s.drawn = 0;
	svg_controls(&s);
	fputs("<g id=\"frames\">\n", out);
	err = frames(&s, 0, SVG_XPAD, s.full, 0, false, true);
	if (err)
		goto cleanup;
	fputs("</g>\n<script type=\"text/ecmascript\"><![CDATA[\n", out);
	fputs(svg_script, out);
	fputs("]]></script>\n</svg>\n", out);
	err = finish(out);
cleanup:
	free(s.kids);
	free(s.first);
	free(s.buf);
	return err;
}
