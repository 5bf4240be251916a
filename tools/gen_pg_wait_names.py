#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Generate broker/pg_wait_names_data.c from PostgreSQL's own sources.

For each major version it reads, straight out of a PostgreSQL git
repository (git show REF:path, no checkout), the files that define the
numbers PostgreSQL publishes in wait_event_info and the names
pg_stat_activity shows for them:

  - the classes: the PG_WAIT_* defines, and the names
    pgstat_get_wait_event_type() returns;
  - how each class turns an id into a name: the switch of
    pgstat_get_wait_event() (a tranche id, a lock tag type, an enum
    position, one fixed name, or a name registered at run time);
  - enum classes: the WaitEvent* enums and the pgstat_get_wait_*()
    switches (13-16), or wait_event_names.txt as
    generate-wait_event_types.pl turns it into enums (17 and later:
    each section sorted case-insensitively, then its ABI_compatibility
    part in file order);
  - LWLocks: lwlocknames.txt (13-16) or the PG_LWLOCK lines of
    lwlocklist.h (17 and later) for the individually named locks, and
    the builtin tranches from enum BuiltinTrancheIds (lwlock.h) named by
    BuiltinTrancheNames[] (lwlock.c), or from the PG_LWLOCKTRANCHE lines
    of lwlocklist.h (19);
  - lock tags: enum LockTagType and LockTagTypeNames[].

Minor releases only ever append events.  The first minor release that
has each event is found by reading every release of the branch: its
REL_<major>_<minor> tags when the repository has them, else the commits
of the branch's first-parent history whose subject is "Stamp M.N."
(the commit a release tag points to).

Usage:
  gen_pg_wait_names.py --git-dir PATH [--ref MAJOR=REF ...] [-o FILE]

Default refs are REL_<major>_STABLE for 13..19.  The output depends on
the repository's content only, so a rerun gives the same bytes.
"""

import argparse
import os
import re
import subprocess
import sys
import textwrap

MAJORS = list(range(13, 20))
GENERATOR = "tools/gen_pg_wait_names.py"

# pgstat_get_wait_event() actions, as the C side calls them.
KIND_TRANCHE = "PG_WAIT_KIND_TRANCHE"
KIND_LOCKTAG = "PG_WAIT_KIND_LOCKTAG"
KIND_ENUM = "PG_WAIT_KIND_ENUM"
KIND_SINGLE = "PG_WAIT_KIND_SINGLE"
KIND_CUSTOM = "PG_WAIT_KIND_CUSTOM"


class SourceError(Exception):
    pass


class Tree:
    """One commit of the PostgreSQL repository, read with git."""

    def __init__(self, git_dir, commit):
        self.git_dir = git_dir
        self.commit = commit
        self._files = {}

    def _git(self, *args, check=True):
        r = subprocess.run(["git", "--git-dir", self.git_dir] + list(args),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if check and r.returncode != 0:
            raise SourceError("git %s: %s" % (" ".join(args),
                                              r.stderr.decode().strip()))
        return r

    def has(self, path):
        return self.read(path, missing_ok=True) is not None

    def read(self, path, missing_ok=False):
        if path not in self._files:
            r = self._git("show", "%s:%s" % (self.commit, path), check=False)
            self._files[path] = (r.stdout.decode("utf-8", "replace")
                                 if r.returncode == 0 else None)
        if self._files[path] is None and not missing_ok:
            raise SourceError("%s: no %s" % (self.commit[:12], path))
        return self._files[path]

    def find(self, pattern, under):
        """The one file under `under` with a line matching `pattern`."""
        r = self._git("grep", "-l", "-E", pattern, self.commit, "--", under,
                      check=False)
        paths = sorted(p.split(":", 1)[1] for p in
                       r.stdout.decode().splitlines())
        if len(paths) != 1:
            raise SourceError("%s: %d files under %s match /%s/: %s" %
                              (self.commit[:12], len(paths), under, pattern,
                               paths))
        return paths[0]


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def c_function(text, name):
    """Body of a C function defined at the start of a line."""
    m = re.search(r"^%s\s*\([^)]*\)\s*\{" % re.escape(name), text, re.M)
    if not m:
        raise SourceError("no function %s" % name)
    depth, i = 1, m.end()
    while depth:
        c = text[i]
        depth += c == "{"
        depth -= c == "}"
        i += 1
    return text[m.end():i - 1]


def version_of(tree):
    """The version string configure.ac (and meson.build) were stamped with."""
    versions = []
    ac = tree.read("configure.ac", missing_ok=True) or tree.read("configure.in")
    m = re.search(r"AC_INIT\(\[PostgreSQL\],\s*\[([^\]]+)\]", ac)
    if not m:
        raise SourceError("no AC_INIT version")
    versions.append(m.group(1))
    meson = tree.read("meson.build", missing_ok=True)
    # 13's later releases carry an empty meson.build (not a meson build).
    if meson is not None and "project(" in meson:
        m = re.search(r"^\s*version:\s*'([^']+)'", meson, re.M)
        if not m:
            raise SourceError("no version in meson.build")
        versions.append(m.group(1))
    if len(set(versions)) != 1:
        raise SourceError("configure.ac and meson.build disagree: %s" %
                          versions)
    return versions[0]


# ---- wait classes ----

def wait_classes(tree):
    """{PG_WAIT_X: class byte} and {PG_WAIT_X: type name}."""
    path = tree.find(r"define PG_WAIT_LWLOCK\s", "src/include")
    values = {}
    for m in re.finditer(r"#define\s+(PG_WAIT_\w+)\s+0x([0-9A-Fa-f]+)U?",
                         tree.read(path)):
        v = int(m.group(2), 16)
        if v & 0x00FFFFFF:
            raise SourceError("%s is not a class: %#x" % (m.group(1), v))
        values[m.group(1)] = v >> 24
    cfile = tree.find(r"^pgstat_get_wait_event_type\(", "src/backend")
    body = strip_comments(c_function(tree.read(cfile),
                                     "pgstat_get_wait_event_type"))
    names = {}
    for m in re.finditer(r"case\s+(PG_WAIT_\w+)\s*:\s*event_type\s*=\s*"
                         r"\"([^\"]+)\"", body):
        names[m.group(1)] = m.group(2)
    if not names or set(names) - set(values):
        raise SourceError("class names %s vs defines %s" % (names, values))
    return values, names, cfile


def class_actions(tree, cfile):
    """What pgstat_get_wait_event() does for each class: {PG_WAIT_X: (kind, arg)}."""
    body = strip_comments(c_function(tree.read(cfile), "pgstat_get_wait_event"))
    actions = {}
    pending = []
    for m in re.finditer(r"case\s+(PG_WAIT_\w+)\s*:|default\s*:|"
                         r"event_name\s*=\s*([^;]+);", body):
        if m.group(1):
            pending.append(m.group(1))
            continue
        if m.group(0).startswith("default"):
            pending = []
            continue
        expr = m.group(2).strip()
        if not pending:
            continue
        if expr.startswith("GetLWLockIdentifier("):
            action = (KIND_TRANCHE, None)
        elif expr.startswith("GetLockNameFromTagType("):
            action = (KIND_LOCKTAG, None)
        elif re.match(r"GetWaitEvent\w*Identifier\(", expr):
            action = (KIND_CUSTOM, None)
        elif re.match(r"pgstat_get_wait_(\w+)\(", expr):
            action = (KIND_ENUM, re.match(r"pgstat_get_wait_(\w+)\(",
                                          expr).group(1))
        elif re.match(r'"[^"]+"$', expr):
            action = (KIND_SINGLE, expr.strip('"'))
        else:
            raise SourceError("pgstat_get_wait_event: unknown action %s" % expr)
        for c in pending:
            actions[c] = action
        pending = []
    return actions


# ---- enum classes ----

def eval_enum_expr(expr, env):
    expr = expr.strip()
    m = re.fullmatch(r"(\w+)(?:\s*([-+])\s*(\d+))?", expr)
    if not m:
        raise SourceError("enum value %r" % expr)
    base = m.group(1)
    if re.fullmatch(r"\d+", base):
        v = int(base)
    elif base in env:
        v = env[base]
    else:
        raise SourceError("enum value %r: %s unknown" % (expr, base))
    if m.group(2):
        v = v + int(m.group(3)) if m.group(2) == "+" else v - int(m.group(3))
    return v


def enum_members(body, env):
    """[(name, value)] of a C enum body (comments already stripped)."""
    out, prev = [], -1
    for item in body.split(","):
        item = item.strip()
        if not item:
            continue
        if "=" in item:
            name, expr = item.split("=", 1)
            name = name.strip()
            value = eval_enum_expr(expr, env)
        else:
            name, value = item, prev + 1
        if not re.fullmatch(r"\w+", name):
            raise SourceError("enum member %r" % name)
        env[name] = value
        out.append((name, value))
        prev = value
    return out


def typedef_enum(text, typename):
    m = re.search(r"typedef\s+enum(?:\s+\w+)?\s*\{([^}]*)\}\s*%s\s*;" %
                  re.escape(typename), strip_comments(text))
    if not m:
        raise SourceError("no enum %s" % typename)
    return m.group(1)


def enum_events_c(tree, cfile, suffix, class_defines):
    """13-16: the enum behind pgstat_get_wait_<suffix>() and its names."""
    text = tree.read(cfile)
    m = re.search(r"^pgstat_get_wait_%s\((\w+)\s+\w+\)" % suffix, text, re.M)
    if not m:
        raise SourceError("no pgstat_get_wait_%s" % suffix)
    typename = m.group(1)
    hfile = tree.find(r"^\}\s*%s;" % typename, "src/include")
    env = dict((k, v << 24) for k, v in class_defines.items())
    members = enum_members(typedef_enum(tree.read(hfile), typename), env)
    body = strip_comments(c_function(text, "pgstat_get_wait_%s" % suffix))
    names = {}
    for cm in re.finditer(r"case\s+(\w+)\s*:\s*event_name\s*=\s*\"([^\"]+)\"",
                          body):
        names[cm.group(1)] = cm.group(2)
    events = []
    for name, value in members:
        if name not in names:
            raise SourceError("%s: %s has no name" % (typename, name))
        events.append((value & 0xFFFF, names[name]))
    if len(names) != len(members):
        raise SourceError("%s: names for unknown members" % typename)
    return events, [hfile, cfile]


TXT = "src/backend/utils/activity/wait_event_names.txt"


def txt_sections(tree):
    """wait_event_names.txt: {section: (sorted part, ABI part)} of names."""
    sections = {}
    cur = None
    for line in tree.read(TXT).splitlines():
        if line.startswith("#") or not line.strip():
            continue
        m = re.match(r"^Section: ClassName(.*)", line)
        if m:
            cur = re.sub(r"^.*- ", "", line)
            sections[cur] = ([], [])
            abi = False
            continue
        if line == "ABI_compatibility:":
            abi = True
            continue
        if cur is None:
            raise SourceError("%s: line before any section" % TXT)
        m = re.match(r"^(\w+)\t+(\"\w.*\.\")$", line)
        if not m:
            raise SourceError("%s: cannot parse %r" % (TXT, line))
        sections[cur][1 if abi else 0].append(m.group(1))
    return sections


def camel(name):
    """generate-wait_event_types.pl: WAL_RECEIVER_MAIN -> WalReceiverMain."""
    return "".join(p[:1] + p[1:].lower() for p in name.split("_"))


def enum_events_txt(tree, section):
    """17+: enum positions as generate-wait_event_types.pl assigns them."""
    sorted_part, abi_part = txt_sections(tree)[section]
    # Perl's sort is stable and compares uc() strings; so is this.
    names = sorted(sorted_part, key=lambda s: s.upper()) + abi_part
    return [(i, camel(n)) for i, n in enumerate(names)]


def txt_section_for(tree, suffix):
    for s in txt_sections(tree):
        if s.startswith("WaitEvent") and s[len("WaitEvent"):].lower() == suffix:
            return s
    raise SourceError("%s: no section for pgstat_get_wait_%s" % (TXT, suffix))


# ---- LWLocks ----

def lwlock_events(tree):
    """[(tranche id, name)], NUM_INDIVIDUAL_LWLOCKS, first user-defined id,
    whether an unknown user-defined tranche shows as "extension", files."""
    files = []
    individual = {}
    tranche_defs = []       # PG_LWLOCKTRANCHE(id, name), 19 and later
    lwlist = "src/include/storage/lwlocklist.h"
    if tree.has(lwlist):
        text = strip_comments(tree.read(lwlist))
        for m in re.finditer(r"^PG_LWLOCK\((\d+),\s*(\w+)\)", text, re.M):
            individual[int(m.group(1))] = m.group(2)
        for m in re.finditer(r"^PG_LWLOCKTRANCHE\((\w+),\s*(\w+)\)", text,
                             re.M):
            tranche_defs.append(m.groups())
        files.append(lwlist)
    else:
        path = "src/backend/storage/lmgr/lwlocknames.txt"
        for line in tree.read(path).splitlines():
            if line.startswith("#") or not line.strip():
                continue
            m = re.fullmatch(r"(\w+)Lock\s+(\d+)", line.strip())
            if not m:
                raise SourceError("%s: %r" % (path, line))
            individual[int(m.group(2))] = m.group(1)
        files.append(path)
    num_individual = max(individual) + 1

    hpath = "src/include/storage/lwlock.h"
    body = typedef_enum(tree.read(hpath), "BuiltinTrancheIds")
    lines = []
    for line in body.splitlines():
        if line.strip().startswith('#include "storage/lwlocklist.h"'):
            lines += ["LWTRANCHE_%s," % t for t, _ in tranche_defs]
        elif not line.strip().startswith("#"):
            lines.append(line)
    env = {"NUM_INDIVIDUAL_LWLOCKS": num_individual}
    members = dict(enum_members("\n".join(lines), env))
    first_user = members["LWTRANCHE_FIRST_USER_DEFINED"]
    files.append(hpath)

    cpath = "src/backend/storage/lmgr/lwlock.c"
    ctext = tree.read(cpath)
    files.append(cpath)
    getname = strip_comments(c_function(ctext, "GetLWTrancheName"))
    m = re.search(r"BuiltinTrancheNames\[([^\]]+)\]", getname)
    # 13-16 index the array by trancheId - NUM_INDIVIDUAL_LWLOCKS.
    if not m:
        raise SourceError("GetLWTrancheName: no BuiltinTrancheNames[]")
    idx = m.group(1).replace(" ", "")
    if idx == "trancheId-NUM_INDIVIDUAL_LWLOCKS":
        base = num_individual
    elif idx == "trancheId":
        base = 0
    else:
        raise SourceError("GetLWTrancheName: BuiltinTrancheNames[%s]" % idx)
    user_extension = '"extension"' in getname

    arr = re.search(r"BuiltinTrancheNames\[\]\s*=\s*\{(.*?)\n\};", ctext, re.S)
    if not arr:
        raise SourceError("lwlock.c: no BuiltinTrancheNames[]")
    names = {}
    positional = []
    defines = {}
    for line in strip_comments(arr.group(1)).splitlines():
        s = line.strip()
        md = re.match(r"#define\s+(PG_LWLOCK\w*)\(", s)
        if md:
            defines[md.group(1)] = True
            continue
        if s.startswith('#include "storage/lwlocklist.h"'):
            if "PG_LWLOCK" in defines:
                names.update(individual)
            if "PG_LWLOCKTRANCHE" in defines:
                for t, n in tranche_defs:
                    names[members["LWTRANCHE_" + t]] = n
            continue
        if s.startswith("#"):
            continue
        for mm in re.finditer(r"\[(\w+)\]\s*=\s*\"([^\"]*)\"", s):
            names[members[mm.group(1)]] = mm.group(2)
        if not re.search(r"\[\w+\]\s*=", s):
            positional += re.findall(r"\"([^\"]*)\"", s)
    for i, n in enumerate(positional):
        names[base + i] = n
    if base:        # 13-16: individual locks come from lwlocknames.c
        names.update(individual)
    tranche_ids = [v for k, v in members.items()
                   if k != "LWTRANCHE_FIRST_USER_DEFINED" and v >= num_individual]
    for v in tranche_ids:
        if v not in names:
            raise SourceError("builtin tranche %d has no name" % v)
    if max(names) >= first_user:
        raise SourceError("tranche names past LWTRANCHE_FIRST_USER_DEFINED")
    events = sorted(names.items())
    return events, num_individual, first_user, user_extension, files


# ---- lock tags ----

def locktag_events(tree):
    hpath = tree.find(r"typedef enum LockTagType", "src/include")
    members = enum_members(typedef_enum(tree.read(hpath), "LockTagType"), {})
    cpath = tree.find(r"LockTagTypeNames\[\] = \{", "src/backend")
    m = re.search(r"LockTagTypeNames\[\]\s*=\s*\{(.*?)\};",
                  strip_comments(tree.read(cpath)), re.S)
    names = re.findall(r"\"([^\"]*)\"", m.group(1))
    if len(names) != len(members) or \
            [v for _, v in members] != list(range(len(members))):
        raise SourceError("LockTagType has %d members, LockTagTypeNames %d" %
                          (len(members), len(names)))
    return list(enumerate(names)), [hpath, cpath]


# ---- one tree ----

def read_tables(tree):
    """{class byte: dict(kind, type, events=[(id, name)], ...)}, files."""
    values, type_names, cfile = wait_classes(tree)
    actions = class_actions(tree, cfile)
    files = {cfile}
    has_txt = tree.has(TXT)
    out = {}
    for define, (kind, arg) in actions.items():
        cls = {"kind": kind, "type": type_names[define], "define": define}
        if kind == KIND_TRANCHE:
            ev, nind, first, ext, f = lwlock_events(tree)
            cls.update(events=ev, num_individual=nind, first_user=first,
                       user_extension=ext)
            files.update(f)
        elif kind == KIND_LOCKTAG:
            cls["events"], f = locktag_events(tree)
            files.update(f)
        elif kind == KIND_ENUM:
            if has_txt:
                cls["events"] = enum_events_txt(tree, txt_section_for(tree, arg))
                files.add(TXT)
            else:
                cls["events"], f = enum_events_c(tree, cfile, arg, values)
                files.update(f)
        elif kind == KIND_SINGLE:
            cls["events"] = [(0, arg)]
        elif kind == KIND_CUSTOM:
            # Built-in ids of a custom class: its section of the list
            # (Extension: id 0); every other id is registered at run time.
            sect = "WaitEvent" + type_names[define]
            secs = txt_sections(tree)
            names = (sorted(secs[sect][0], key=lambda s: s.upper()) +
                     secs[sect][1]) if sect in secs else []
            cls["events"] = [(i, camel(n)) for i, n in enumerate(names)]
            files.add(TXT)
        out[values[define]] = cls
    return out, sorted(files)


def txt_crosscheck(tree, tables):
    """Names wait_event_names.txt documents (pg_wait_events shows them) that
    the code-derived tables lack, per type."""
    if not tree.has(TXT):
        return []
    missing = []
    secs = txt_sections(tree)
    for cls in tables.values():
        sect = "WaitEvent" + cls["type"]
        if sect not in secs:
            continue
        documented = secs[sect][0] + secs[sect][1]
        if cls["kind"] not in (KIND_TRANCHE, KIND_LOCKTAG):
            documented = [camel(n) for n in documented]
        have = set(n for _, n in cls["events"])
        missing += ["%s:%s" % (cls["type"], n) for n in documented
                    if n not in have]
    return missing


# ---- releases ----

def releases(git_dir, major, ref, tip):
    """[(minor, commit)] of the branch's releases, and how they were found."""
    r = subprocess.run(["git", "--git-dir", git_dir, "for-each-ref",
                        "--format=%(refname:short) %(objectname)^{commit}",
                        "refs/tags/REL_%d_*" % major],
                       stdout=subprocess.PIPE, check=True)
    tags = []
    for line in r.stdout.decode().splitlines():
        name, obj = line.split()
        m = re.fullmatch(r"REL_%d_(\d+)" % major, name)
        if m:
            c = subprocess.run(["git", "--git-dir", git_dir, "rev-parse",
                                obj], stdout=subprocess.PIPE, check=True)
            tags.append((int(m.group(1)), c.stdout.decode().strip()))
    if tags:
        return sorted(tags), "REL_%d_N tags" % major
    r = subprocess.run(["git", "--git-dir", git_dir, "log", "--first-parent",
                        "--format=%H %s", tip], stdout=subprocess.PIPE,
                       check=True)
    stamps = {}
    for line in r.stdout.decode().splitlines():
        commit, subject = line.split(" ", 1)
        m = re.fullmatch(r"Stamp %d\.(\d+)\.?" % major, subject.strip())
        if m and int(m.group(1)) not in stamps:
            stamps[int(m.group(1))] = commit
    return sorted(stamps.items()), "\"Stamp %d.N\" commits of %s" % (major, ref)


def event_keys(tables):
    return dict(((c, i), n) for c, t in tables.items() for i, n in t["events"])


def generate_major(git_dir, major, ref):
    r = subprocess.run(["git", "--git-dir", git_dir, "rev-parse", "--verify",
                        ref + "^{commit}"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    if r.returncode != 0:
        raise SourceError("no ref %s in %s" % (ref, git_dir))
    tip = r.stdout.decode().strip()
    tree = Tree(git_dir, tip)
    version = version_of(tree)
    if not version.startswith("%d." % major) and \
            not re.match(r"%d(beta|rc|devel)" % major, version):
        raise SourceError("%s is version %s, not %d" % (ref, version, major))
    tables, files = read_tables(tree)
    tip_keys = event_keys(tables)
    since = {}
    renamed = {}
    rels, how = releases(git_dir, major, ref, tip)
    last = None
    for minor, commit in rels:
        rt = Tree(git_dir, commit)
        if version_of(rt) != "%d.%d" % (major, minor):
            raise SourceError("release %d.%d at %s says %s" %
                              (major, minor, commit, version_of(rt)))
        keys = event_keys(read_tables(rt)[0])
        for k, n in keys.items():
            if k not in tip_keys:
                raise SourceError("%d.%d: class %#x id %d (%s) is gone at %s"
                                  % (major, minor, k[0], k[1], n, ref))
            if tip_keys[k] != n:
                # Only the case of a name has ever changed in a minor
                # release (CommitTSBuffer, MultixactMemberSLRU); the C
                # side compares names case-insensitively and relies on it.
                if tip_keys[k].lower() != n.lower():
                    raise SourceError("%d.%d: class %#x id %d is %s, %s at "
                                      "%s" % (major, minor, k[0], k[1], n,
                                              tip_keys[k], ref))
                renamed[(k, n)] = minor     # the last release with n
            since.setdefault(k, minor)
        last = minor
    # Not in any release yet: from the next minor (0 before the first).
    for k in tip_keys:
        since.setdefault(k, 0 if last is None else last + 1)
    return {"major": major, "ref": ref, "commit": tip, "version": version,
            "tables": tables, "files": files, "since": since,
            "releases": rels, "how": how, "last": last,
            "renamed": sorted((k[0], k[1], n, until)
                              for (k, n), until in renamed.items()),
            "undocumented": txt_crosscheck(tree, tables)}


# ---- output ----

def c_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def emit(majors, out):
    w = out.write
    w("/* SPDX-License-Identifier: GPL-2.0-only */\n")
    w("/*\n * pg_wait_names_data.c - PostgreSQL's wait event names, per major"
      " version.\n *\n * Generated by %s from PostgreSQL's own\n * sources;"
      " do not edit. Rerun: make pg-wait-names PGSRC=/path/to/postgres.git"
      "\n *\n * Per major: the ref and commit read, its version, the releases"
      " whose\n * events give each event's first minor (the second number of"
      " an entry).\n *\n" % GENERATOR)
    for m in majors:
        w(" * %d: %s at %s, version %s\n" % (m["major"], m["ref"], m["commit"],
                                             m["version"]))
        rels = ", ".join("%d.%d" % (m["major"], n)
                         for n, _ in m["releases"]) or "none"
        for line in textwrap.wrap("releases read (%s): %s" % (m["how"], rels),
                                  72):
            w(" *     %s\n" % line)
        for line in textwrap.wrap("files: " + " ".join(m["files"]), 72):
            w(" *     %s\n" % line)
        for cid, i, n, until in m["renamed"]:
            w(" *     class 0x%02x id %d was spelled %s up to %d.%d\n" %
              (cid, i, n, m["major"], until))
        if m["undocumented"]:
            w(" *     in wait_event_names.txt, not in the code: %s\n" %
              " ".join(m["undocumented"]))
    w(" */\n#include \"broker/pg_wait_names_data.h\"\n")
    for m in majors:
        maj = m["major"]
        for cid in sorted(m["tables"]):
            t = m["tables"][cid]
            w("\n/* %d %s (%s): %s */\n" % (maj, t["type"], t["define"],
                                            t["kind"]))
            w("static const struct pg_wait_event_def ev_%d_%02x[] = {\n" %
              (maj, cid))
            for i, n in t["events"]:
                w("\t{ %d, %d, %s },\n" % (i, m["since"][(cid, i)], c_str(n)))
            w("};\n")
        w("\nstatic const struct pg_wait_class_def classes_%d[] = {\n" % maj)
        for cid in sorted(m["tables"]):
            t = m["tables"][cid]
            w("\t{ .class_id = 0x%02x, .kind = %s, .type_name = %s,\n" %
              (cid, t["kind"], c_str(t["type"])))
            if t["kind"] == KIND_TRANCHE:
                w("\t  .num_individual = %d, .first_user_defined = %d,\n" %
                  (t["num_individual"], t["first_user"]))
                w("\t  .user_defined_name = %s,\n" %
                  (c_str("extension") if t["user_extension"] else "NULL"))
            w("\t  .events = ev_%d_%02x, .nevents = %d },\n" %
              (maj, cid, len(t["events"])))
        w("};\n")
    w("\nconst struct pg_wait_major_def pg_wait_major_defs[] = {\n")
    for m in majors:
        w("\t{ .major = %d, .ref = %s, .version = %s,\n" %
          (m["major"], c_str(m["ref"]), c_str(m["version"])))
        w("\t  .commit = %s,\n" % c_str(m["commit"]))
        w("\t  .source = %s,\n" % c_str("%s %s (commit %s)" % (
            m["ref"], m["version"], m["commit"])))
        w("\t  .last_minor = %d,\n" % (-1 if m["last"] is None else m["last"]))
        w("\t  .classes = classes_%d, .nclasses = %d },\n" %
          (m["major"], len(m["tables"])))
    w("};\n\nconst unsigned int pg_wait_nmajor_defs = %d;\n" % len(majors))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--git-dir", required=True,
                    help="a PostgreSQL git repository (bare is fine)")
    ap.add_argument("--ref", action="append", default=[],
                    metavar="MAJOR=REF", help="branch or tag of one major")
    ap.add_argument("-o", "--output", default="-")
    args = ap.parse_args()
    refs = dict((m, "REL_%d_STABLE" % m) for m in MAJORS)
    for r in args.ref:
        k, v = r.split("=", 1)
        refs[int(k)] = v
    try:
        majors = [generate_major(args.git_dir, m, refs[m]) for m in
                  sorted(refs)]
    except SourceError as e:
        sys.stderr.write("gen_pg_wait_names: %s\n" % e)
        return 1
    for m in majors:
        for u in m["undocumented"]:
            sys.stderr.write("gen_pg_wait_names: %d: %s documented, not in "
                             "the code\n" % (m["major"], u))
    if args.output == "-":
        emit(majors, sys.stdout)
    else:
        with open(args.output + ".tmp", "w") as f:
            emit(majors, f)
        os.replace(args.output + ".tmp", args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
