// SPDX-License-Identifier: GPL-2.0-only
/* Flame graphs: merging, limits, folded lines, and SVG facts a browser relies on. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "client/flame.h"
#include "common/utf8.h"
#include "tests/unit/check.h"

#define ADD(f, w, ...)                                                     \
	flame_add((f), (const char *const[]){ __VA_ARGS__ },              \
		  sizeof((const char *const[]){ __VA_ARGS__ }) / sizeof(char *), (w))

static char *folded(const struct flame *f)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	if (!out || flame_write_folded(f, out) != 0) {
		if (out)
			fclose(out);
		free(buf);
		return NULL;
	}
	fclose(out);
	return buf;
}

static char *svg(const struct flame *f, const char *title, const char *subtitle,
		 unsigned width)
{
	struct flame_svg_opts o = { .title = title, .subtitle = subtitle, .width = width };
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	if (!out || flame_write_svg(f, &o, out) != 0) {
		if (out)
			fclose(out);
		free(buf);
		return NULL;
	}
	fclose(out);
	return buf;
}

/* Not by strstr: ASan's reads all of s on each call, quadratic here. */
static size_t count(const char *s, const char *what)
{
	size_t n = 0, len = strlen(what);

	for (; s && *s; s++)
		if (*s == *what && strncmp(s, what, len) == 0) {
			n++;
			s += len - 1;
		}
	return n;
}

/* The <g> whose title is the (escaped) name, as a copy from <g up to
 * </g>; NULL if none. */
static char *frame(const char *doc, const char *escaped_name)
{
	char key[512];
	const char *t, *g, *end;

	snprintf(key, sizeof(key), "\"><title>%s (", escaped_name);
	t = strstr(doc, key);
	if (!t || !(end = strstr(t, "</g>")) || strstr(t + 1, key))
		return NULL;	/* absent, unterminated or not unique */
	for (g = t; g > doc && strncmp(g, "<g ", 3) != 0; g--)
		;
	return strndup(g, (size_t)(end - g));
}

/* Whether what is in the markup, before the script (whose text names
 * attributes and says "not drawn"). */
static bool in_markup(const char *doc, const char *what)
{
	const char *hit = strstr(doc, what), *script = strstr(doc, "<script");

	return hit && (!script || hit < script);
}

/* A number attribute of the frame's <g> (data-at, data-us), or -1. */
static double g_attr(const char *g, const char *attr)
{
	char key[32];
	const char *a;
	double v;

	snprintf(key, sizeof(key), " %s=\"", attr);
	if (!g || !(a = strstr(g, key)) || a > strchr(g, '>') ||
	    sscanf(a + strlen(key), "%lf", &v) != 1)
		return -1;
	return v;
}

/* A number attribute of the frame's <rect>, or -1. */
static double rect_attr(const char *g, const char *attr)
{
	char key[32];
	const char *r = g ? strstr(g, "<rect ") : NULL, *a;
	double v;

	snprintf(key, sizeof(key), " %s=\"", attr);
	if (!r || !(a = strstr(r, key)) || sscanf(a + strlen(key), "%lf", &v) != 1)
		return -1;
	return v;
}

/* The frame's <text> content, or NULL when it has none. */
static char *text_of(const char *g)
{
	const char *t = g ? strstr(g, "<text ") : NULL, *end;

	if (!t || !(t = strchr(t, '>')) || !(end = strstr(t, "</text>")))
		return NULL;
	return strndup(t + 1, (size_t)(end - t - 1));
}

static bool near(double a, double b)
{
	return a - b < 0.01 && b - a < 0.01;
}

/*
 * Strict enough for what flame.c writes: every tag closed in order,
 * attribute values quoted with no '<' or raw '"', '&' only in one of the
 * five predefined entities, no '<' or '>' loose in text but in a CDATA
 * section, no control bytes but '\n', and the whole document valid UTF-8.
 */
static bool well_formed(const char *s)
{
	const char *stack[128];
	size_t depth = 0, len = strlen(s);
	char *copy = malloc(len + 1);
	bool ok;

	if (!copy)
		return false;
	pgoff_utf8_clean(s, len, copy);
	ok = strcmp(copy, s) == 0;
	free(copy);
	if (!ok || strncmp(s, "<?xml ", 6) != 0 || !(s = strstr(s, "?>\n")))
		return false;
	for (s += 3; *s;) {
		if (strncmp(s, "<![CDATA[", 9) == 0) {	/* the script */
			const char *end = strstr(s + 9, "]]>");

			if (!end)
				return false;
			for (s += 9; s < end; s++)
				if ((unsigned char)*s < 0x20 && *s != '\n')
					return false;
			s = end + 3;
			continue;
		}
		if ((unsigned char)*s < 0x20 && *s != '\n')
			return false;
		if (*s == '&') {
			static const char *const ents[] = { "&amp;", "&lt;", "&gt;", "&quot;", "&apos;" };
			size_t i;

			for (i = 0; i < 5 && strncmp(s, ents[i], strlen(ents[i])); i++)
				;
			if (i == 5)
				return false;
			s += strlen(ents[i]);
		} else if (*s == '>') {
			return false;
		} else if (*s != '<') {
			s++;
		} else if (s[1] == '/') {
			size_t n = strspn(s + 2, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ");

			if (!depth || s[2 + n] != '>' || strncmp(stack[--depth], s + 2, n) ||
			    strspn(stack[depth], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") != n)
				return false;
			s += 3 + n;
		} else {
			const char *name = s + 1;
			size_t n = strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ");

			if (!n)
				return false;
			s = name + n;
			for (;;) {	/* attributes */
				size_t an;

				if (*s == '>' || (s[0] == '/' && s[1] == '>'))
					break;
				if (*s != ' ')
					return false;
				s++;
				an = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-:");
				if (!an || s[an] != '=' || s[an + 1] != '"')
					return false;
				for (s += an + 2; *s != '"'; s++)
					if (!*s || *s == '<' || (unsigned char)*s < 0x20)
						return false;
				s++;
			}
			if (*s == '>') {
				if (depth == sizeof(stack) / sizeof(stack[0]))
					return false;
				stack[depth++] = name;
				s++;
			} else {
				s += 2;
			}
		}
	}
	return depth == 0;
}

static void test_merge_and_total(void)
{
	struct flame *f = flame_new();
	char *out;

	CHECK(f);
	CHECK(flame_total(f) == 0);
	CHECK(ADD(f, 10, "a", "b", "c") == 0);
	CHECK(ADD(f, 5, "a", "b", "c") == 0);
	CHECK(ADD(f, 7, "a", "b", "d") == 0);
	CHECK(ADD(f, 3, "a") == 0);
	CHECK(ADD(f, 1, "x") == 0);
	CHECK(ADD(f, 0, "y") == 0);		/* weight 0 adds nothing */
	CHECK(flame_total(f) == 26);
	out = folded(f);
	CHECK_STR(out, "a 3\na;b;c 15\na;b;d 7\nx 1\n");
	free(out);
	flame_free(f);
}

/* Bytewise on the whole path: "a-x" sorts between "a" and "a;b". */
static void test_folded_sorted(void)
{
	struct flame *f = flame_new();
	char *out;

	CHECK(f);
	CHECK(ADD(f, 1, "a", "b") == 0);
	CHECK(ADD(f, 9, "B") == 0);
	CHECK(ADD(f, 2, "a-x") == 0);
	CHECK(ADD(f, 4, "a") == 0);
	CHECK(ADD(f, 8, "a", "a") == 0);
	out = folded(f);
	CHECK_STR(out, "B 9\na 4\na-x 2\na;a 8\na;b 1\n");
	free(out);
	flame_free(f);
}

/* The format has no escape; what it cannot carry becomes '_', and what is
 * not UTF-8 '?'. */
static void test_folded_replaces_separators(void)
{
	struct flame *f = flame_new();
	char *out;

	CHECK(f);
	CHECK(ADD(f, 5, "x;y", "line\nbreak", "tab\there", "sp ace", "\x1b[0m\r\x7f") == 0);
	CHECK(ADD(f, 1, "p;q") == 0);
	CHECK(ADD(f, 2, "p_q") == 0);		/* now the same path: one line */
	CHECK(ADD(f, 4, "caf\xe9", "SYS\xc0\xbeLL", "ok\xc3\xa9") == 0);	/* LATIN1, overlong */
	out = folded(f);
	CHECK_STR(out, "caf?;SYS??LL;ok\xc3\xa9 4\np_q 3\nx_y;line_break;tab_here;sp ace;_[0m__ 5\n");
	free(out);
	flame_free(f);
}

/* C1 controls (CSI as U+009B), a lone 0x9b byte and an overlong form
 * are '?' in folded output and the SVG as in every pgoffctl table. */
static void test_folded_has_no_c1_controls(void)
{
	struct flame *f = flame_new();
	char *out;

	CHECK(f);
	CHECK(ADD(f, 3, "c1\xc2\x9b" "2J", "lone\x9b" "1m", "nel\xc2\x85", "ov\xc0\x9b") == 0);
	out = folded(f);
	CHECK_STR(out, "c1?2J;lone?1m;nel?;ov?? 3\n");
	free(out);
	out = svg(f, NULL, NULL, 0);	/* the SVG's names too */
	CHECK(out && well_formed(out));
	CHECK_CONTAINS(out, "<title>c1?2J (");
	CHECK_CONTAINS(out, "<title>nel? (");
	free(out);
	flame_free(f);
}

static void test_saturates(void)
{
	struct flame *f = flame_new();
	char *out, *doc;

	CHECK(f);
	CHECK(ADD(f, UINT64_MAX - 1, "a") == 0);
	CHECK(ADD(f, 5, "a") == 0);
	CHECK(ADD(f, 3, "b") == 0);
	CHECK(flame_total(f) == UINT64_MAX);
	out = folded(f);
	CHECK_STR(out, "a 18446744073709551615\nb 3\n");
	free(out);
	/* children of a saturated total still fit in the "all" frame */
	doc = svg(f, NULL, NULL, 0);
	CHECK(doc && well_formed(doc));
	out = frame(doc, "a");
	CHECK(out && rect_attr(out, "x") + rect_attr(out, "width") <= 1190.0 + 1e-9);
	free(out);
	free(doc);
	flame_free(f);

	/* a parent saturated by its first child leaves no room for a second */
	f = flame_new();
	CHECK(f);
	CHECK(ADD(f, UINT64_MAX - 10, "r", "a") == 0);
	CHECK(ADD(f, UINT64_MAX / 2, "r", "b") == 0);
	doc = svg(f, NULL, NULL, 0);
	CHECK(doc && well_formed(doc) && !strstr(doc, "<title>b ("));
	for (const char *r = strstr(doc, "<g data-us="); r; r = strstr(r + 1, "<g data-us="))
		CHECK(rect_attr(r, "x") + rect_attr(r, "width") <= 1190.0 + 1e-9);
	free(doc);
	flame_free(f);
}

static void test_invalid(void)
{
	struct flame *f = flame_new();
	const char *deep[FLAME_MAX_DEPTH + 1];
	char *out;

	CHECK(f);
	for (size_t i = 0; i <= FLAME_MAX_DEPTH; i++)
		deep[i] = "d";
	CHECK(flame_add(f, deep, 0, 1) == -EINVAL);
	CHECK(flame_add(f, deep, FLAME_MAX_DEPTH + 1, 1) == -EINVAL);
	CHECK(flame_add(f, NULL, 1, 1) == -EINVAL);
	CHECK(flame_add(NULL, deep, 1, 1) == -EINVAL);
	CHECK(ADD(f, 1, "a", NULL, "c") == -EINVAL);
	CHECK(ADD(f, 1, "a", "", "c") == -EINVAL);
	CHECK(ADD(f, 0, "") == -EINVAL);	/* checked even when it adds nothing */
	CHECK(flame_total(f) == 0);
	out = folded(f);
	CHECK_STR(out, "");
	free(out);
	CHECK(flame_add(f, deep, FLAME_MAX_DEPTH, 1) == 0);
	CHECK(flame_total(f) == 1);
	flame_free(f);
}

/* The real limit; a path that needs more nodes than are left adds nothing. */
static void test_too_many_nodes(void)
{
	struct flame *f = flame_new();
	char name[32];
	const char *p = name;
	char *out;

	CHECK(f);
	for (int i = 0; i < FLAME_MAX_NODES - 1; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		CHECK(flame_add(f, &p, 1, 1) == 0);
	}
	CHECK(ADD(f, 1, "f0", "new1", "new2") == -E2BIG);
	CHECK(flame_total(f) == FLAME_MAX_NODES - 1);
	CHECK(ADD(f, 1, "f0", "new1") == 0);		/* node 200000 */
	CHECK(ADD(f, 1, "f0", "new1") == 0);		/* no new node */
	CHECK(ADD(f, 1, "z") == -E2BIG);
	CHECK(flame_total(f) == FLAME_MAX_NODES + 1);
	out = folded(f);
	CHECK(out && !strstr(out, "new2") && !strstr(out, "\nz "));
	CHECK(strstr(out, "\nf0;new1 2\n"));
	CHECK(count(out, "\n") == FLAME_MAX_NODES);
	free(out);
	flame_free(f);
}

static struct flame *small_tree(void)
{
	struct flame *f = flame_new();

	if (!f || ADD(f, 50000, "Lock:transactionid", "schedule") ||
	    ADD(f, 50000, "Lock:transactionid") || ADD(f, 100000, "(run queue)") ||
	    ADD(f, 300000, "IO:DataFileRead", "io_schedule", "schedule")) {
		flame_free(f);
		return NULL;
	}
	return f;
}

static void test_svg_frames(void)
{
	struct flame *f = small_tree();
	char *doc;

	CHECK(f && ADD(f, 0, "zero") == 0);	/* no frame, not even an omitted one */
	doc = svg(f, "T", NULL, 0);
	CHECK(doc);
	CHECK(well_formed(doc));
	/* all, 3 roots, schedule under Lock, io_schedule, schedule under it */
	CHECK(count(doc, "<g data-us=") == 7);
	CHECK(count(doc, "</g>") == 7 + 2);	/* and the controls', all frames' */
	CHECK(count(doc, "<title>") == 7);
	CHECK(count(doc, "<rect ") == 7 + 1);	/* and the background */
	CHECK(strstr(doc, "<title>all (0.500 s, 100.00%)</title>"));
	CHECK(strstr(doc, "<title>Lock:transactionid (0.100 s, 20.00%)</title>"));
	CHECK(strstr(doc, "<title>io_schedule (0.300 s, 60.00%)</title>"));
	CHECK(!in_markup(doc, "not drawn") && !strstr(doc, "zero"));
	free(doc);
	flame_free(f);
}

/* Seconds and percentages are rounded, not cut. */
static void test_svg_title_numbers(void)
{
	struct flame *f = flame_new();
	char *doc;

	CHECK(f);
	CHECK(ADD(f, 1500, "a") == 0);
	CHECK(ADD(f, 998500, "b") == 0);
	CHECK(ADD(f, 2000000, "c") == 0);
	doc = svg(f, NULL, NULL, 0);
	CHECK(doc);
	CHECK(strstr(doc, "<title>a (0.002 s, 0.05%)</title>"));
	CHECK(strstr(doc, "<title>b (0.999 s, 33.28%)</title>"));
	CHECK(strstr(doc, "<title>c (2.000 s, 66.67%)</title>"));
	CHECK(strstr(doc, "<title>all (3.000 s, 100.00%)</title>"));
	free(doc);
	flame_free(f);
}

static void test_svg_geometry(void)
{
	struct flame *f = small_tree();
	char *doc = svg(f, NULL, NULL, 0), *all, *lock, *sched, *rq, *io;
	double lx;

	CHECK(doc);
	all = frame(doc, "all");
	lock = frame(doc, "Lock:transactionid");
	/* "schedule" twice: the one under Lock:transactionid by its time */
	sched = strstr(doc, "<title>schedule (0.050 s");
	while (sched && sched > doc && strncmp(sched, "<g ", 3) != 0)
		sched--;
	sched = sched ? strndup(sched, 400) : NULL;
	rq = frame(doc, "(run queue)");
	io = frame(doc, "IO:DataFileRead");
	CHECK(all && lock && sched && rq && io);
	CHECK(near(rect_attr(all, "x"), 10) && near(rect_attr(all, "width"), 1180));
	/* roots left to right by name: "(run queue)", "IO:...", "Lock:..." */
	CHECK(near(rect_attr(rq, "x"), 10) && near(rect_attr(rq, "width"), 236));
	CHECK(near(rect_attr(io, "x"), 246) && near(rect_attr(io, "width"), 708));
	lx = rect_attr(lock, "x");
	CHECK(near(lx, 954) && near(rect_attr(lock, "width"), 236));
	/* half the weight, half the width, at the parent's left edge */
	CHECK(near(rect_attr(sched, "width"), rect_attr(lock, "width") / 2));
	CHECK(near(rect_attr(sched, "x"), lx));
	/* the script's exact weights; every frame is where the script puts
	 * it (after its previous sibling), so none says where it starts */
	CHECK(g_attr(all, "data-us") == 500000 && g_attr(rq, "data-us") == 100000);
	CHECK(g_attr(io, "data-us") == 300000 && g_attr(lock, "data-us") == 100000);
	CHECK(g_attr(sched, "data-us") == 50000 && !in_markup(doc, "data-at"));
	/* the root is at the bottom: each level 16 px higher */
	CHECK(near(rect_attr(lock, "y"), rect_attr(all, "y") - 16));
	CHECK(near(rect_attr(sched, "y"), rect_attr(lock, "y") - 16));
	CHECK(near(rect_attr(all, "y") + 16 + 30, 54 + 4 * 16 + 30));
	CHECK(strstr(doc, "height=\"148\""));	/* 20 px more under "all": details */
	free(all);
	free(lock);
	free(sched);
	free(rq);
	free(io);
	free(doc);

	doc = svg(f, NULL, NULL, 600);
	all = frame(doc, "all");
	CHECK(all && near(rect_attr(all, "width"), 580));
	free(all);
	free(doc);
	flame_free(f);
}

static void test_svg_colours(void)
{
	struct flame *f = small_tree();
	const char *blue[] = { "Lock:transactionid", "(run queue)", "IO:DataFileRead" };
	const char *warm[] = { "io_schedule", "Lockless" };
	char *doc, *again;

	CHECK(f && ADD(f, 10000, "Lockless") == 0);
	doc = svg(f, NULL, NULL, 0);
	CHECK(doc);
	for (size_t i = 0; i < 5; i++) {
		const char *name = i < 3 ? blue[i] : warm[i - 3];
		char *g = frame(doc, name);
		const char *fill = g ? strstr(g, "fill=\"#") : NULL;
		unsigned r, gr, b;

		CHECK(fill && sscanf(fill, "fill=\"#%2x%2x%2x\"", &r, &gr, &b) == 3);
		if (i < 3)
			CHECK(b >= 190 && r <= 140 && gr <= 140);
		else
			CHECK(r >= 205 && b <= 55);
		free(g);
	}
	again = svg(f, NULL, NULL, 0);
	CHECK_STR(again, doc);
	free(again);
	free(doc);
	flame_free(f);
}

/* The same samples in another order give the same bytes. */
static void test_deterministic(void)
{
	struct flame *a = flame_new(), *b = flame_new();
	const char *names[] = { "zeta", "alpha", "Lock:tuple", "mu", "beta" };
	char *sa, *sb, *fa, *fb;

	CHECK(a && b);
	for (int i = 0; i < 25; i++) {
		CHECK(ADD(a, (uint64_t)i + 1, names[i % 5], names[(i / 5) % 5]) == 0);
		CHECK(ADD(b, (uint64_t)(24 - i) + 1, names[(24 - i) % 5],
			  names[((24 - i) / 5) % 5]) == 0);
	}
	sa = svg(a, "t", "s", 0);
	sb = svg(b, "t", "s", 0);
	fa = folded(a);
	fb = folded(b);
	CHECK(sa && fa);
	CHECK_STR(sb, sa);
	CHECK_STR(fb, fa);
	free(sa);
	free(sb);
	free(fa);
	free(fb);
	flame_free(a);
	flame_free(b);
}

static void test_svg_omitted(void)
{
	struct flame *f = flame_new();
	char *doc, *big;

	CHECK(f);
	CHECK(ADD(f, 1000000000, "big") == 0);
	CHECK(ADD(f, 1, "tiny", "tinier") == 0);
	doc = svg(f, NULL, NULL, 0);
	CHECK(doc && well_formed(doc));
	CHECK(count(doc, "<g data-us=") == 2);
	CHECK(!strstr(doc, "tiny"));
	CHECK(strstr(doc, ">2 frames narrower than 0.1 px not drawn</text>"));
	/* the weight stays: "all" and "big" differ by it */
	CHECK(strstr(doc, "<title>all (1000.000 s, 100.00%)</title>"));
	big = frame(doc, "big");
	CHECK(big && near(rect_attr(big, "width"), 1180));
	free(big);
	free(doc);
	doc = svg(f, NULL, "sub&", 0);
	CHECK(doc && strstr(doc, ">sub&amp; (2 frames narrower than 0.1 px not drawn)</text>"));
	free(doc);
	flame_free(f);

	/* a frame not drawn before drawn ones: they say where they start,
	 * in microseconds, for the script; the first ones need not */
	f = flame_new();
	CHECK(f);
	CHECK(ADD(f, 1000000000, "r", "a") == 0);
	CHECK(ADD(f, 3, "r", "b") == 0);		/* not drawn */
	CHECK(ADD(f, 1000000000, "r", "c") == 0);
	CHECK(ADD(f, 1000000000, "r", "d") == 0);
	doc = svg(f, NULL, NULL, 0);
	CHECK(doc && well_formed(doc) && count(doc, "data-at=\"") == 1);
	big = frame(doc, "c");
	CHECK(big && g_attr(big, "data-at") == 1000000003 && g_attr(big, "data-us") == 1000000000);
	free(big);
	big = frame(doc, "d");
	CHECK(big && g_attr(big, "data-at") == -1);	/* right after c */
	free(big);
	big = frame(doc, "a");
	CHECK(big && g_attr(big, "data-at") == -1);
	free(big);
	free(doc);
	flame_free(f);
}

static void test_svg_escapes(void)
{
	struct flame *f = flame_new();
	char *doc, *g;

	CHECK(f);
	CHECK(ADD(f, 1, "a<b&\"c'", "]]></svg><script>x</script>") == 0);
	doc = svg(f, "T&<>", "S\"'", 0);
	CHECK(doc && well_formed(doc));
	CHECK(strstr(doc, ">T&amp;&lt;&gt;</text>"));
	CHECK(strstr(doc, ">S&quot;&apos;</text>"));
	g = frame(doc, "a&lt;b&amp;&quot;c&apos;");
	CHECK(g && strstr(g, ">a&lt;b&amp;&quot;c&apos;</text>"));
	CHECK(strstr(doc, "<title>]]&gt;&lt;/svg&gt;&lt;script&gt;x&lt;/script&gt; ("));
	/* the name's script is text; the writer's, one, the last element */
	CHECK(!strstr(doc, "a<b") && count(doc, "<script") == 1 && count(doc, "</svg>") == 1);
	CHECK(strstr(doc, "]]></script>\n</svg>\n") &&
	      strlen(strstr(doc, "]]></script>\n</svg>\n")) == strlen("]]></script>\n</svg>\n"));
	free(g);
	free(doc);
	flame_free(f);
}

static void test_svg_utf8_and_controls(void)
{
	struct flame *f = flame_new();
	char *doc;

	CHECK(f);
	CHECK(ADD(f, 1, "bad\xff\xc3(", "ctl\x01\x1b\n", "nc\xef\xbf\xbe", "ok\xc3\xa9") == 0);
	CHECK(ADD(f, 1, "caf\xe9") == 0);	/* LATIN1 */
	doc = svg(f, "\xc0\xaf", NULL, 0);
	CHECK(doc && well_formed(doc));		/* includes: valid UTF-8 */
	CHECK(strstr(doc, "<title>bad?" "?( ("));
	CHECK(strstr(doc, "<title>ctl??? ("));
	CHECK(strstr(doc, "<title>nc??? ("));
	CHECK(strstr(doc, "<title>ok\xc3\xa9 ("));
	CHECK(strstr(doc, "<title>caf? ("));
	CHECK(strstr(doc, ">?" "?</text>"));
	for (const char *p = doc; *p; p++)	/* the script's too */
		CHECK((unsigned char)*p >= 0x20 || *p == '\n');
	free(doc);
	flame_free(f);
}

/* 165 characters fit in 1180 px: longer names keep 163 and "..";
 * a cut never splits a character; under 3 characters, no text. */
static void test_svg_text_cut(void)
{
	struct flame *f = flame_new();
	char ascii[201], utf[401], want[401];
	char *doc, *g, *t;

	CHECK(f);
	memset(ascii, 'x', 200);
	ascii[200] = '\0';
	for (int i = 0; i < 200; i++)
		memcpy(utf + 2 * i, "\xc3\xa9", 2);
	utf[400] = '\0';
	CHECK(ADD(f, 10000, ascii) == 0);
	CHECK(ADD(f, 10000, "short", utf) == 0);
	CHECK(ADD(f, 1, "narrow") == 0);	/* 0.06 px: not drawn */
	CHECK(ADD(f, 100, "n") == 0);		/* 5.87 px: drawn, no text */
	doc = svg(f, NULL, NULL, 0);
	CHECK(doc && well_formed(doc));

	/* ascii is 587.0 px wide: (587.0 - 6) / 7.08 = 82 characters */
	g = frame(doc, ascii);
	t = text_of(g);
	free(g);
	memset(want, 'x', 80);
	strcpy(want + 80, "..");
	CHECK_STR(t, want);
	free(t);

	g = frame(doc, utf);
	t = text_of(g);
	free(g);
	for (int i = 0; i < 80; i++)
		memcpy(want + 2 * i, "\xc3\xa9", 2);
	strcpy(want + 160, "..");
	CHECK_STR(t, want);
	free(t);

	g = frame(doc, "short");
	t = text_of(g);
	free(g);
	CHECK_STR(t, "short");
	free(t);

	g = frame(doc, "n");
	CHECK(g && rect_attr(g, "width") > 5 && !strstr(g, "<text"));
	free(g);
	free(doc);
	flame_free(f);
}

/*
 * What the script needs, once: the controls, hidden until it runs, then
 * all frames in one group, each followed by its descendants, then the
 * script, which loads nothing (no URL but the SVG namespace's name).
 */
static void test_svg_script(void)
{
	struct flame *f = small_tree();
	const char *ids[] = { "controls", "reset", "search", "details", "matched", "frames" };
	char *doc = svg(f, NULL, NULL, 0), *io, *sched;
	const char *script, *frames;

	CHECK(doc && well_formed(doc));
	CHECK(count(doc, "<script") == 1 && count(doc, "<![CDATA[") == 1 && count(doc, "]]>") == 1);
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		char key[40];

		snprintf(key, sizeof(key), " id=\"%s\"", ids[i]);
		CHECK(count(doc, key) == 1);
	}
	CHECK(count(doc, ">Reset zoom</text>") == 1 && count(doc, ">Search</text>") == 1);
	CHECK(strstr(doc, "<g id=\"controls\" display=\"none\">"));
	script = strstr(doc, "<script");
	frames = strstr(doc, "<g id=\"frames\">\n");
	CHECK(script && frames && frames < script && strstr(doc, "id=\"controls\"") < frames);
	/* nothing between the frames' group and the script but frames */
	CHECK(strstr(frames, "</g>\n<script") == strstr(frames, "\n</g>\n") + 1);
	/* pre-order: IO:DataFileRead, then its io_schedule, then Lock:... */
	io = strstr(doc, "<title>IO:DataFileRead (");
	sched = strstr(doc, "<title>io_schedule (");
	CHECK(io && sched && io < sched && sched < strstr(doc, "<title>Lock:transactionid ("));
	/* self-contained: the namespace is the only URL; no link, no import */
	CHECK(count(doc, "://") == 1 && count(doc, "xmlns=\"http://www.w3.org/2000/svg\"") == 1);
	CHECK(!strstr(doc, "href") && !strstr(doc, "@import") && !strstr(doc, "fetch(") &&
	      count(doc, "url(") == 1 && strstr(doc, "fill=\"url(#bg)\""));
	/* the script searches with a regular expression, and says so */
	CHECK(strstr(script, "new RegExp(") && strstr(script, "a regular expression"));
	CHECK(strstr(script, "'Matched: '") && strstr(script, "ctrlKey"));
	free(doc);

	/* a bigger graph: still one script */
	CHECK(ADD(f, 5, "a", "b", "c") == 0 && ADD(f, 7, "d") == 0);
	doc = svg(f, "t", "s", 0);
	CHECK(doc && well_formed(doc) && count(doc, "<script") == 1);
	free(doc);
	flame_free(f);
}

static void test_svg_empty(void)
{
	struct flame *f = flame_new();
	char *doc;

	CHECK(f);
	CHECK(ADD(f, 0, "nothing") == 0);
	doc = svg(f, "Empty", NULL, 0);
	CHECK(doc && well_formed(doc));
	CHECK(strstr(doc, ">no off-CPU time recorded</text>"));
	CHECK(strstr(doc, ">Empty</text>"));
	CHECK(count(doc, "<g") == 0 && !strstr(doc, "<script"));	/* nothing to click */
	CHECK(strlen(doc) > 7 && strcmp(doc + strlen(doc) - 7, "</svg>\n") == 0);
	free(doc);
	flame_free(f);
}

static void test_svg_bad_width(void)
{
	struct flame *f = small_tree();
	struct flame_svg_opts o = { .width = 50 };
	FILE *out = fopen("/dev/null", "w");

	CHECK(f && out);
	CHECK(flame_write_svg(f, &o, out) == -EINVAL);
	o.width = 200;
	CHECK(flame_write_svg(f, &o, out) == 0);
	CHECK(flame_write_svg(f, NULL, out) == 0);
	fclose(out);
	flame_free(f);
}

static void test_write_error(void)
{
	struct flame *f = small_tree(), *empty = flame_new();
	FILE *out = fopen("/dev/full", "w");

	CHECK(f && empty && out);
	CHECK(flame_write_folded(f, out) == -EIO);
	clearerr(out);
	CHECK(flame_write_svg(f, NULL, out) == -EIO);
	clearerr(out);
	CHECK(flame_write_svg(empty, NULL, out) == -EIO);
	fclose(out);
	flame_free(f);
	flame_free(empty);
}

/* An extra, emitted only where xmllint exists: a real parser agrees. */
static void test_xmllint(void)
{
	struct flame *f = flame_new();
	char path[] = "/tmp/test_flame_XXXXXX", cmd[64];
	char *doc;
	FILE *out;
	int fd;

	CHECK(f);
	CHECK(ADD(f, 7, "a<b&\"c'", "bad\xff\x01", "Lock:x") == 0);
	CHECK(ADD(f, 3, "(no PostgreSQL wait)", "\xef\xbf\xbf") == 0);
	doc = svg(f, "]]>&", "<!--", 0);
	CHECK(doc);
	fd = mkstemp(path);
	CHECK(fd >= 0);
	out = fdopen(fd, "w");
	CHECK(out);
	fputs(doc, out);
	fclose(out);
	free(doc);
	flame_free(f);
	snprintf(cmd, sizeof(cmd), "xmllint --noout %s", path);
	fd = system(cmd);
	unlink(path);
	CHECK(fd == 0);
}

static double since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/* Not a test: sizes and times, printed as TAP comments, never asserted. */
static void bench(void)
{
	struct flame *f = flame_new();
	static char names[20][8][16];
	uint64_t seed = 42;
	struct timespec t0;
	char *buf = NULL;
	size_t len = 0;
	FILE *out;
	double t_add, t_svg, t_fold;
	int err = 0;

	if (!f)
		return;
	for (int d = 0; d < 20; d++)
		for (int k = 0; k < 8; k++)
			snprintf(names[d][k], sizeof(names[d][k]), "func_%d_%d", d, k);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < 10000; i++) {
		const char *path[20];

		/* random, the first levels from 2 names, the rest from 8: the
		 * folded line count below says how many paths are distinct */
		for (int d = 0; d < 20; d++) {
			seed = seed * 6364136223846793005u + 1442695040888963407u;
			path[d] = names[d][(seed >> 33) % (d < 4 ? 2 : 8)];
		}
		seed = seed * 6364136223846793005u + 1442695040888963407u;
		err = flame_add(f, path, 20, 1 + (seed >> 33) % 100000);
		if (err)
			break;
	}
	t_add = since(&t0);
	out = open_memstream(&buf, &len);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!err && out)
		err = flame_write_svg(f, NULL, out);
	if (out)
		fclose(out);
	t_svg = since(&t0);
	printf("# bench: 10000 paths of depth 20 (err %d): add %.1f ms; svg %zu bytes, "
	       "%zu frames drawn, %s, %.1f ms\n", err, t_add, len, count(buf, "<g data-us="),
	       strstr(buf ? buf : "", "not drawn") ? "some not drawn" : "all drawn", t_svg);
	free(buf);
	buf = NULL;
	out = open_memstream(&buf, &len);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!err && out)
		err = flame_write_folded(f, out);
	if (out)
		fclose(out);
	t_fold = since(&t0);
	printf("# bench: folded %zu bytes, %zu lines, %.1f ms (err %d)\n", len,
	       count(buf, "\n"), t_fold, err);
	free(buf);
	flame_free(f);
}

int main(void)
{
	RUN(test_merge_and_total);
	RUN(test_folded_sorted);
	RUN(test_folded_replaces_separators);
	RUN(test_folded_has_no_c1_controls);
	RUN(test_saturates);
	RUN(test_invalid);
	RUN(test_too_many_nodes);
	RUN(test_svg_frames);
	RUN(test_svg_title_numbers);
	RUN(test_svg_geometry);
	RUN(test_svg_colours);
	RUN(test_deterministic);
	RUN(test_svg_omitted);
	RUN(test_svg_escapes);
	RUN(test_svg_utf8_and_controls);
	RUN(test_svg_text_cut);
	RUN(test_svg_script);
	RUN(test_svg_empty);
	RUN(test_svg_bad_width);
	RUN(test_write_error);
	if (system("command -v xmllint >/dev/null 2>&1") == 0)
		RUN(test_xmllint);
	bench();
	return CHECK_DONE();
}
