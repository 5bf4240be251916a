#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Generate broker/pg/pg_wait_names_data.c from PostgreSQL's own sources.

For each major version it reads the files that define the numbers
PostgreSQL publishes in wait_event_info and the names pg_stat_activity
shows for them, from one of:

  --ref MAJOR=REF     a branch or tag of a PostgreSQL git repository
                      (git show REF:path, no checkout; the default for
                      every major is REL_<major>_STABLE);
  --tree MAJOR=DIR    an unpacked source tree.  One that dpkg-source -x
                      unpacked (it has debian/changelog) must still sit
                      next to its .dsc and .orig tarball: the output names
                      the package, its version and the tarball's sha256
                      (checked against the .dsc), and says whether
                      Debian's patches change any file read;
  --headers MAJOR=DEB a postgresql-server-dev-MAJOR .deb, for a release
                      whose source package cannot be had: its headers
                      (src/include as installed, with the
                      utils/wait_event_types.h its build generated) give
                      every part they hold, the major's --ref the rest
                      (src/backend, wait_event_names.txt), and the output
                      says which file came from where.

What is read:

  - the classes: the PG_WAIT_* defines, and the names
    pgstat_get_wait_event_type() returns;
  - how each class turns an id into a name: the switch of
    pgstat_get_wait_event() (a tranche id, a lock tag type, an enum
    position, one fixed name, or a name registered at run time);
  - enum classes: the WaitEvent* enums and the pgstat_get_wait_*()
    switches (13-16), or wait_event_names.txt as
    generate-wait_event_types.pl turns it into enums (17 and later:
    each section sorted case-insensitively, then its ABI_compatibility
    part in file order), or (--headers) the enums that script wrote;
  - LWLocks: lwlocknames.txt (13-16) or the PG_LWLOCK lines of
    lwlocklist.h (17 and later) for the individually named locks, and
    the builtin tranches from enum BuiltinTrancheIds (lwlock.h) named by
    BuiltinTrancheNames[] (lwlock.c), or from the PG_LWLOCKTRANCHE lines
    of lwlocklist.h (19);
  - lock tags: enum LockTagType and LockTagTypeNames[].

Minor releases only ever append events.  The first minor release that
has each event is found by reading every release of the major's git
branch (--ref, also for --tree and --headers): its REL_<major>_<minor>
tags when the repository has them, else the commits of the branch's
first-parent history whose subject is "Stamp M.N." (the commit a release
tag points to).  For a major read from a tree or a package, the branch's
release of the same version must give the same events; events the
branch appends after that release are kept, marked with the minor that
brings them; events the branch does not have yet get the first minor
the package proves has them.

The output depends only on what the refs, trees and packages hold (paths
appear by their last component), so a rerun gives the same bytes.

Usage:
  gen_pg_wait_names.py --git-dir PATH [--ref MAJOR=REF ...]
      [--tree MAJOR=DIR ...] [--headers MAJOR=DEB ...] [-o FILE]

Reproducing broker/pg/pg_wait_names_data.c (make pg-wait-names, see the
Makefile, with PGSRC=the git repository and PGDEB=a directory for
Debian's packages; nothing of it is committed).  The majors this
project's servers run come from Debian (bullseye 13, bookworm 15,
trixie 17, sid 18, experimental 19); 14 and 16, in no suite, from git.
With a throwaway apt configuration that has deb-src (and, for the two
.debs, deb) lines for those suites and for trixie-security:

  cd $PGDEB
  apt-get -o Dir::Etc::sourcelist=$PGDEB/sources.list \
      -o Dir::Etc::sourceparts=- -o Dir::State::Lists=$PGDEB/lists update
  apt-get (same options) source --download-only \
      postgresql-13=13.16-0+deb11u1 postgresql-15=15.18-0+deb12u1 \
      postgresql-18=18.6-3
  for d in *.dsc; do dpkg-source -x "$d"; done
  apt-get (same options) download \
      postgresql-server-dev-17=17.12-0+deb13u1 \
      postgresql-server-dev-19=19~rc1-1

The source packages postgresql-17 17.12-0+deb13u1 and postgresql-19
19~rc1-1 are in the indexes but their files were not on the archive
(404) when the tables were made: hence --headers for 17 and 19.  Once
they can be had, unpack them and give --tree instead.
"""

import argparse
import hashlib
import io
import os
import re
import subprocess
import sys
import tarfile
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


class GitTree:
    """One commit of a PostgreSQL git repository, read with git."""

    origin = "git"

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

    def label(self):
        return self.commit[:12]

    def has(self, path):
        return self.read(path, missing_ok=True) is not None

    def read(self, path, missing_ok=False):
        if path not in self._files:
            r = self._git("show", "%s:%s" % (self.commit, path), check=False)
            self._files[path] = (r.stdout.decode("utf-8", "replace")
                                 if r.returncode == 0 else None)
        if self._files[path] is None and not missing_ok:
            raise SourceError("%s: no %s" % (self.label(), path))
        return self._files[path]

    def grep(self, pattern, under):
        """Paths under `under` with a line matching `pattern`."""
        r = self._git("grep", "-l", "-E", pattern, self.commit, "--", under,
                      check=False)
        return sorted(p.split(":", 1)[1] for p in
                      r.stdout.decode().splitlines())

    def find(self, pattern, under):
        return one_path(self, pattern, under, self.grep(pattern, under))

    def version(self):
        return version_of(self)

    def origin_of(self, path):
        return self.origin


def one_path(tree, pattern, under, paths):
    """The one file under `under` with a line matching `pattern`."""
    if len(paths) != 1:
        raise SourceError("%s: %d files under %s match /%s/: %s" %
                          (tree.label(), len(paths), under, pattern, paths))
    return paths[0]


def grep_dir(root, rel_under, pattern):
    """Relative paths of the files under root/rel_under with a line
    matching `pattern` (as git grep -E would find them)."""
    rx = re.compile(pattern)
    out = []
    top = os.path.join(root, rel_under)
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames.sort()
        for name in sorted(filenames):
            full = os.path.join(dirpath, name)
            if os.path.islink(full) or not os.path.isfile(full):
                continue
            with open(full, "rb") as f:
                text = f.read().decode("utf-8", "replace")
            if any(rx.search(line) for line in text.splitlines()):
                out.append(os.path.relpath(full, root).replace(os.sep, "/"))
    return sorted(out)


class DirTree:
    """An unpacked PostgreSQL source tree (a directory)."""

    origin = "tree"

    def __init__(self, root):
        self.root = root
        self._files = {}

    def label(self):
        return os.path.basename(os.path.normpath(self.root))

    def has(self, path):
        return self.read(path, missing_ok=True) is not None

    def read(self, path, missing_ok=False):
        if path not in self._files:
            full = os.path.join(self.root, path)
            text = None
            if os.path.isfile(full):
                with open(full, "rb") as f:
                    text = f.read().decode("utf-8", "replace")
            self._files[path] = text
        if self._files[path] is None and not missing_ok:
            raise SourceError("%s: no %s" % (self.label(), path))
        return self._files[path]

    def find(self, pattern, under):
        return one_path(self, pattern, under,
                        grep_dir(self.root, under, pattern))

    def version(self):
        return version_of(self)

    def origin_of(self, path):
        return self.origin


INCLUDE = "src/include/"


class HeaderOverlay:
    """A major's server headers as a postgresql-server-dev package installs
    them (src/include, with the headers its build generated), over a git
    commit of the branch, which gives what the headers do not hold
    (src/backend, wait_event_names.txt).  For a release whose source
    package cannot be had: the parts read from the headers are exactly
    that release's, the others the branch's."""

    origin = "package"
    generated_enums = "src/include/utils/wait_event_types.h"

    def __init__(self, headers, name, base):
        self.headers = headers      # {path under src/include: text}
        self.name = name
        self.base = base

    def label(self):
        return "%s over %s" % (self.name, self.base.label())

    def _mine(self, path):
        return path.startswith(INCLUDE) and \
            path[len(INCLUDE):] in self.headers

    def has(self, path):
        return self.read(path, missing_ok=True) is not None

    def read(self, path, missing_ok=False):
        if self._mine(path):
            return self.headers[path[len(INCLUDE):]]
        return self.base.read(path, missing_ok)

    def find(self, pattern, under):
        under = under.rstrip("/") + "/"
        if not under.startswith(INCLUDE):
            return self.base.find(pattern, under.rstrip("/"))
        rx = re.compile(pattern)
        mine = sorted(INCLUDE + p for p, text in self.headers.items()
                      if (INCLUDE + p).startswith(under) and
                      any(rx.search(line) for line in text.splitlines()))
        # a header the package does not install is the branch's
        theirs = [p for p in self.base.grep(pattern, under.rstrip("/"))
                  if not self._mine(p)]
        return one_path(self, pattern, under, sorted(mine + theirs))

    def version(self):
        # configure's version, then Debian's --with-extra-version
        m = re.search(r'^#define\s+PG_VERSION\s+'
                      r'"(\d+(?:\.\d+|(?:beta|rc)\d+|devel))[ "]',
                      self.read(INCLUDE + "pg_config.h"), re.M)
        if not m:
            raise SourceError("%s: no PG_VERSION in pg_config.h" %
                              self.label())
        return m.group(1)

    def origin_of(self, path):
        return self.origin if self._mine(path) else self.base.origin


# ---- Debian packages ----

def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def debian_version_parts(version):
    """'1:19~rc1-1' -> ('19~rc1-1', '19~rc1'): without epoch, upstream."""
    noepoch = version.split(":", 1)[-1]
    upstream = noepoch.rsplit("-", 1)[0] if "-" in noepoch else noepoch
    return noepoch, upstream


def debian_source(root):
    """The Debian source package an unpacked tree (dpkg-source -x) comes
    from, checked against the .dsc and .orig tarball next to it; None for
    a tree without debian/changelog."""
    path = os.path.join(root, "debian", "changelog")
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as f:
        first = f.readline()
    m = re.match(r"^(\S+) \(([^)\s]+)\) ([^;]+);", first)
    if not m:
        raise SourceError("%s: cannot parse %r" % (path, first))
    pkg, version, dist = m.group(1), m.group(2), m.group(3).strip()
    noepoch, upstream = debian_version_parts(version)
    parent = os.path.dirname(os.path.abspath(root))
    dsc = "%s_%s.dsc" % (pkg, noepoch)
    if not os.path.isfile(os.path.join(parent, dsc)):
        raise SourceError("%s: no %s next to it (keep the tree where "
                          "dpkg-source -x unpacked it)" % (root, dsc))
    with open(os.path.join(parent, dsc), encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"^Checksums-Sha256:\n((?: .*\n)+)", text, re.M)
    if not m:
        raise SourceError("%s: no Checksums-Sha256" % dsc)
    sums = dict((n, h) for h, _, n in
                (line.split() for line in m.group(1).splitlines()))
    origs = [n for n in sums if re.fullmatch(
        re.escape("%s_%s.orig.tar." % (pkg, upstream)) + r"\w+", n)]
    if len(origs) != 1:
        raise SourceError("%s: %d .orig tarballs: %s" % (dsc, len(origs),
                                                         origs))
    orig = origs[0]
    tarball = os.path.join(parent, orig)
    if not os.path.isfile(tarball):
        raise SourceError("no %s next to %s" % (orig, dsc))
    digest = sha256_file(tarball)
    if digest != sums[orig]:
        raise SourceError("%s: sha256 %s, %s says %s" % (orig, digest, dsc,
                                                         sums[orig]))
    return {"package": pkg, "version": version, "distribution": dist,
            "upstream": upstream, "dsc": dsc, "orig": orig,
            "sha256": digest, "tarball": tarball}


def orig_differences(tarball, tree, paths):
    """The paths whose content in the tree (Debian's patches applied)
    differs from the .orig tarball's."""
    want = set(paths)
    seen = {}
    with tarfile.open(tarball, "r|*") as tf:
        for member in tf:
            rel = member.name.split("/", 1)[-1]
            if rel in want and member.isfile():
                seen[rel] = tf.extractfile(member).read().decode(
                    "utf-8", "replace")
    return sorted(p for p in want if seen.get(p) != tree.read(p))


def ar_members(path):
    """{name: bytes} of an ar archive (a .deb)."""
    out = {}
    with open(path, "rb") as f:
        if f.read(8) != b"!<arch>\n":
            raise SourceError("%s is not a .deb (ar archive)" % path)
        while True:
            head = f.read(60)
            if not head:
                break
            if len(head) != 60 or head[58:60] != b"`\n":
                raise SourceError("%s: bad ar member header" % path)
            name = head[:16].decode().strip().rstrip("/")
            size = int(head[48:58].decode().strip())
            out[name] = f.read(size)
            if size % 2:
                f.read(1)
    return out


def debian_headers(path, major):
    """A postgresql-server-dev .deb: its control fields, sha256 and the
    server headers it installs, {path under src/include: text}."""
    members = ar_members(path)
    control = data = None
    for name, blob in members.items():
        if name.startswith("control.tar"):
            with tarfile.open(fileobj=io.BytesIO(blob), mode="r:*") as tf:
                for m in tf:
                    if m.name.lstrip("./") == "control":
                        control = tf.extractfile(m).read().decode()
        elif name.startswith("data.tar"):
            data = blob
    if control is None or data is None:
        raise SourceError("%s: no control or data member" % path)
    fields = dict(re.findall(r"^(\w[\w-]*):\s*(.*)$", control, re.M))
    prefix = "usr/include/postgresql/%d/server/" % major
    headers = {}
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tf:
        for m in tf:
            name = m.name[2:] if m.name.startswith("./") else m.name
            if name.startswith(prefix) and m.isfile():
                headers[name[len(prefix):]] = tf.extractfile(m).read() \
                    .decode("utf-8", "replace")
    if not headers:
        raise SourceError("%s: no %s" % (path, prefix))
    source = fields.get("Source", fields["Package"]).split()
    return {"package": fields["Package"], "version": fields["Version"],
            "architecture": fields["Architecture"],
            "source": source[0],
            "source_version": (source[1].strip("()") if len(source) > 1
                               else fields["Version"]),
            "deb": os.path.basename(path), "sha256": sha256_file(path),
            "headers": headers}


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
    return values, names, cfile, path


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


def enum_events_generated(tree, path, define):
    """17+, from the header generate-wait_event_types.pl wrote at build
    time (utils/wait_event_types.h): the enum that starts at `define`."""
    text = strip_comments(tree.read(path))
    for m in re.finditer(r"typedef\s+enum\s*\{([^}]*)\}\s*\w+\s*;", text):
        members = [x.strip() for x in m.group(1).split(",") if x.strip()]
        first = re.fullmatch(r"WAIT_EVENT_\w+\s*=\s*(\w+)", members[0])
        if not first or first.group(1) != define:
            continue
        names = []
        for i, x in enumerate(members):
            mm = re.fullmatch(r"WAIT_EVENT_(\w+)" +
                              (r"\s*=\s*\w+" if i == 0 else ""), x)
            if not mm:
                raise SourceError("%s: enum member %r" % (path, x))
            names.append(mm.group(1))
        return [(i, camel(n)) for i, n in enumerate(names)]
    raise SourceError("%s: no enum starting at %s" % (path, define))


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
    values, type_names, cfile, hfile = wait_classes(tree)
    actions = class_actions(tree, cfile)
    files = {cfile, hfile}
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
            gen = getattr(tree, "generated_enums", None)
            if gen and tree.has(gen):
                cls["events"] = enum_events_generated(tree, gen, define)
                files.add(gen)
            elif has_txt:
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


def key_names(tables, keys):
    """"Type:Name" of event keys, in table order."""
    names = event_keys(tables)
    return ["%s:%s" % (tables[c]["type"], names[(c, i)])
            for c, i in sorted(keys)]


def rev_parse(git_dir, ref):
    r = subprocess.run(["git", "--git-dir", git_dir, "rev-parse", "--verify",
                        ref + "^{commit}"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    if r.returncode != 0:
        raise SourceError("no ref %s in %s" % (ref, git_dir))
    return r.stdout.decode().strip()


def check_major(major, version, what):
    if not version.startswith("%d." % major) and \
            not re.match(r"%d(beta|rc|devel)" % major, version):
        raise SourceError("%s is version %s, not %d" % (what, version, major))


def read_history(git_dir, major, ref):
    """The branch tip's tables and the events of each of its releases."""
    tip = rev_parse(git_dir, ref)
    tree = GitTree(git_dir, tip)
    version = tree.version()
    check_major(major, version, ref)
    tables, files = read_tables(tree)
    rels, how = releases(git_dir, major, ref, tip)
    read = []
    for minor, commit in rels:
        rt = GitTree(git_dir, commit)
        if rt.version() != "%d.%d" % (major, minor):
            raise SourceError("release %d.%d at %s says %s" %
                              (major, minor, commit, rt.version()))
        read.append((minor, commit, event_keys(read_tables(rt)[0])))
    return {"ref": ref, "commit": tip, "tree": tree, "version": version,
            "tables": tables, "files": files, "releases": rels, "how": how,
            "last": rels[-1][0] if rels else None, "read": read}


def since_from_releases(major, keys, read, what):
    """First minor of each key among the releases read, and the case-only
    renames: every event of a release must be in `keys` by id."""
    since, renamed = {}, {}
    for minor, commit, rkeys in read:
        for k, n in rkeys.items():
            if k not in keys:
                raise SourceError("%d.%d: class %#x id %d (%s) is gone in %s"
                                  % (major, minor, k[0], k[1], n, what))
            if keys[k] != n:
                # Only the case of a name has ever changed in a minor
                # release (CommitTSBuffer, MultixactMemberSLRU); the C
                # side compares names case-insensitively and relies on it.
                if keys[k].lower() != n.lower():
                    raise SourceError("%d.%d: class %#x id %d is %s, %s in "
                                      "%s" % (major, minor, k[0], k[1], n,
                                              keys[k], what))
                renamed[(k, n)] = minor     # the last release with n
            since.setdefault(k, minor)
    return since, renamed


def appended_only(major, older, newer, what_old, what_new):
    """Minor releases only append: every event of `older` is in `newer`
    under the same id (the same name but for case)."""
    for k, n in older.items():
        if k not in newer or newer[k].lower() != n.lower():
            raise SourceError("%d: class %#x id %d is %s in %s, %s in %s" %
                              (major, k[0], k[1], n, what_old,
                               newer.get(k, "nothing"), what_new))


def table_differences(old, new):
    """What differs from tables `old` to tables `new`, one line a class:
    names only in one of them, and how many others changed id."""
    out = []
    for cid in sorted(set(old) | set(new)):
        a = dict((n, i) for i, n in old.get(cid, {"events": []})["events"])
        b = dict((n, i) for i, n in new.get(cid, {"events": []})["events"])
        t = (new.get(cid) or old.get(cid))["type"]
        parts = []
        gone = [n for n in sorted(a, key=a.get) if n not in b]
        added = [n for n in sorted(b, key=b.get) if n not in a]
        moved = [n for n in a if n in b and a[n] != b[n]]
        if gone:
            parts.append("gone " + ", ".join(
                "%s (id %d)" % (n, a[n]) for n in gone))
        if added:
            parts.append("new " + ", ".join(
                "%s (id %d)" % (n, b[n]) for n in added))
        if moved:
            parts.append("%d other ids moved (%s %d -> %d, ...)" % (
                len(moved), moved[0], a[moved[0]], b[moved[0]]) if
                len(moved) > 1 else "%s id %d -> %d" % (
                    moved[0], a[moved[0]], b[moved[0]]))
        if parts:
            out.append("%s: %s" % (t, "; ".join(parts)))
    return out


def generate_git(git_dir, major, ref):
    h = read_history(git_dir, major, ref)
    keys = event_keys(h["tables"])
    since, renamed = since_from_releases(major, keys, h["read"], ref)
    # Not in any release yet: from the next minor (0 before the first).
    for k in keys:
        since.setdefault(k, 0 if h["last"] is None else h["last"] + 1)
    return {"major": major, "kind": "git", "ref": ref, "commit": h["commit"],
            "version": h["version"], "tables": h["tables"],
            "files": h["files"], "since": since, "releases": h["releases"],
            "how": h["how"], "last": h["last"],
            "renamed": sorted((k[0], k[1], n, until)
                              for (k, n), until in renamed.items()),
            "undocumented": txt_crosscheck(h["tree"], h["tables"]),
            "source": "%s %s (commit %s)" % (ref, h["version"], h["commit"])}


def generate_tree(git_dir, major, ref, tree, prov):
    """A major read from an unpacked tree or a package's headers; the
    git branch gives each event's first minor release, and the events
    later releases of the branch append."""
    version = tree.version()
    check_major(major, version, tree.label())
    upstream = prov.get("upstream")
    if upstream is not None and upstream.replace("~", "") != version:
        raise SourceError("%s: Debian's upstream version %s, the tree's %s"
                          % (tree.label(), upstream, version))
    tables, files = read_tables(tree)
    keys = event_keys(tables)
    h = read_history(git_dir, major, ref)
    tip_keys = event_keys(h["tables"])
    last = h["last"]
    m = re.fullmatch(r"%d\.(\d+)" % major, version)
    tree_minor = int(m.group(1)) if m else None
    notes = []
    extra = {}
    if tree_minor is None:
        # A pre-release: nothing released to track, nor to append to.
        if h["read"]:
            raise SourceError("%s is %s, before %d.%d of %s" %
                              (tree.label(), version, major, h["read"][0][0],
                               ref))
        since, renamed = dict((k, 0) for k in keys), {}
    else:
        older = [r for r in h["read"] if r[0] <= tree_minor]
        since, renamed = since_from_releases(major, keys, older,
                                             tree.label())
        for minor, commit, rkeys in older:
            if minor == tree_minor:
                if rkeys != keys:
                    raise SourceError("%s differs from %d.%d of %s (%s)" %
                                      (tree.label(), major, minor, ref,
                                       commit))
                notes.append("%d.%d of %s (commit %s) has the same events"
                             % (major, minor, ref, commit))
        if last is None or tree_minor > last:
            # The branch read ends before this release: its tip (after
            # its last release) must hold nothing this release lacks.
            appended_only(major, tip_keys, keys, "%s at %s" %
                          (ref, h["commit"][:12]), tree.label())
            after = 0 if last is None else last + 1
            from_tip = [k for k in keys if k not in since and k in tip_keys]
            not_in_git = [k for k in keys if k not in since and
                          k not in tip_keys]
            for k in from_tip:
                since[k] = after
            for k in not_in_git:
                since[k] = tree_minor
            if from_tip:
                notes.append("in %s after %s and here, so from %d.%d: %s" % (
                    ref, "its last release %d.%d" % (major, last)
                    if last is not None else "no release", major, after,
                    " ".join(key_names(tables, from_tip))))
            if not_in_git:
                notes.append("not in %s, so from %d.%d (the first release "
                             "known to have them): %s" % (
                                 ref, major, tree_minor,
                                 " ".join(key_names(tables, not_in_git))))
        else:
            # Later releases of the branch, then its tip: what they append.
            later = [(minor, rkeys) for minor, _, rkeys in h["read"]
                     if minor > tree_minor] + [(last + 1, tip_keys)]
            for minor, rkeys in later:
                appended_only(major, keys, rkeys, tree.label(),
                              "%d.%d" % (major, minor))
                for k, n in rkeys.items():
                    if k not in keys and k not in extra:
                        extra[k] = (n, minor)
    # A pre-release need not only append to the one before: say how the
    # branch read differs (any other difference is an error above).
    differences = (table_differences(h["tables"], tables)
                   if tree_minor is None else [])
    if extra:
        tables = dict((cid, dict(t)) for cid, t in tables.items())
        for (cid, i), (n, minor) in sorted(extra.items()):
            if cid not in tables:
                raise SourceError("%d: class %#x only in %s" % (major, cid,
                                                                ref))
            tables[cid]["events"] = sorted(tables[cid]["events"] + [(i, n)])
            since[(cid, i)] = minor
        notes.append("not in %s, appended by %s after it: %s" % (
            version, ref, " ".join("%s (from %d.%d%s)" % (
                key_names(tables, [k])[0], major, minor,
                "" if minor <= last else ", unreleased in what was read")
                for k, (n, minor) in sorted(extra.items()))))
    undocumented = (txt_crosscheck(tree, tables) if tree.origin_of(TXT) ==
                    tree.origin else [])
    if prov["kind"] == "debian-source":
        diff = orig_differences(prov["tarball"], tree, files)
        prov["patched"] = diff
        source = "Debian %s %s (upstream %s, .orig sha256 %s)" % (
            prov["package"], prov["version"], version, prov["sha256"])
    elif prov["kind"] == "debian-headers":
        source = ("Debian %s %s headers (upstream %s, .deb sha256 %s) and "
                  "%s commit %s" % (prov["package"], prov["version"],
                                    version, prov["sha256"], ref,
                                    h["commit"]))
    else:
        source = "source tree %s %s" % (tree.label(), version)
    return {"major": major, "kind": prov["kind"], "prov": prov, "ref": ref,
            "commit": h["commit"], "version": version,
            "git_version": h["version"], "tables": tables, "files": files,
            "origins": dict((f, tree.origin_of(f)) for f in files),
            "since": since, "releases": h["releases"], "how": h["how"],
            "last": last, "renamed": sorted((k[0], k[1], n, until)
                                            for (k, n), until in
                                            renamed.items()),
            "undocumented": undocumented, "notes": notes,
            "differences": differences, "source": source}


# ---- output ----

def c_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def wrapped(w, text, first=" *     ", rest=" *     "):
    for i, line in enumerate(textwrap.wrap(text, 72, break_on_hyphens=False,
                                           break_long_words=False)):
        w("%s%s\n" % (first if i == 0 else rest, line))


def emit_provenance(w, m):
    maj, prov = m["major"], m.get("prov")
    if m["kind"] == "git":
        w(" * %d: %s at %s, version %s\n" % (maj, m["ref"], m["commit"],
                                             m["version"]))
    elif m["kind"] == "debian-source":
        wrapped(w, "%d: Debian source package %s %s (changelog: %s), "
                "upstream %s: %s sha256 %s" % (
                    maj, prov["package"], prov["version"],
                    prov["distribution"], m["version"], prov["orig"],
                    prov["sha256"]), " * ")
        wrapped(w, "tables: that tree, unpacked by dpkg-source -x; %s" % (
            "the files read are as in the .orig tarball (no Debian patch "
            "touches them)" if not prov["patched"] else
            "changed by Debian's patches: " + " ".join(prov["patched"])))
    elif m["kind"] == "debian-headers":
        wrapped(w, "%d: Debian binary package %s %s (source %s %s), "
                "upstream %s: %s sha256 %s" % (
                    maj, prov["package"], prov["version"], prov["source"],
                    prov["source_version"], m["version"], prov["deb"],
                    prov["sha256"]), " * ")
        wrapped(w, "tables: its server headers give %s; %s at %s "
                "(version %s) gives %s" % (
                    " ".join(f for f in m["files"]
                             if m["origins"][f] != "git"),
                    m["ref"], m["commit"], m["git_version"],
                    " ".join(f for f in m["files"]
                             if m["origins"][f] == "git")))
    else:
        wrapped(w, "%d: %s" % (maj, m["source"]), " * ")
    if m["kind"] != "git":
        wrapped(w, "first minors: %s at %s, version %s" % (
            m["ref"], m["commit"], m["git_version"]))
    rels = ", ".join("%d.%d" % (maj, n) for n, _ in m["releases"]) or "none"
    wrapped(w, "releases read (%s): %s" % (m["how"], rels))
    for note in m.get("notes", []):
        wrapped(w, note)
    if m.get("differences"):
        wrapped(w, "from %s to this release: %s" % (m["ref"], "; ".join(
            m["differences"])))
    if m["kind"] != "debian-headers":
        wrapped(w, "files: " + " ".join(m["files"]))
    for cid, i, n, until in m["renamed"]:
        w(" *     class 0x%02x id %d was spelled %s up to %d.%d\n" %
          (cid, i, n, maj, until))
    if m["undocumented"]:
        w(" *     in wait_event_names.txt, not in the code: %s\n" %
          " ".join(m["undocumented"]))


def emit(majors, arguments, out):
    w = out.write
    w("/* SPDX-License-Identifier: GPL-2.0-only */\n")
    w("/*\n * pg_wait_names_data.c - PostgreSQL's wait event names, per major"
      " version.\n *\n * Generated by %s from PostgreSQL's own\n * sources;"
      " do not edit. Rerun: make pg-wait-names (see the Makefile),\n * which"
      " runs it with (directories and files by their last component):\n *\n"
      % GENERATOR)
    for a in arguments:
        w(" *   %s\n" % a)
    w(" *\n * Per major: where its tables come from, the git releases whose"
      " events\n * give each event's first minor (the second number of an"
      " entry).\n *\n")
    for m in majors:
        emit_provenance(w, m)
    w(" */\n#include \"broker/pg/pg_wait_names_data.h\"\n")
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
        w("\t  .source = %s,\n" % c_str(m["source"]))
        w("\t  .last_minor = %d,\n" % (-1 if m["last"] is None else m["last"]))
        w("\t  .classes = classes_%d, .nclasses = %d },\n" %
          (m["major"], len(m["tables"])))
    w("};\n\nconst unsigned int pg_wait_nmajor_defs = %d;\n" % len(majors))


def major_path(arg, what):
    k, sep, v = arg.partition("=")
    if not sep or not re.fullmatch(r"\d+", k) or not v:
        raise SourceError("%s %s: want MAJOR=VALUE" % (what, arg))
    return int(k), v


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--git-dir", required=True,
                    help="a PostgreSQL git repository (bare is fine)")
    ap.add_argument("--ref", action="append", default=[],
                    metavar="MAJOR=REF", help="branch or tag of one major")
    ap.add_argument("--tree", action="append", default=[],
                    metavar="MAJOR=DIR",
                    help="read that major from an unpacked source tree "
                    "(dpkg-source -x, next to its .dsc and .orig tarball)")
    ap.add_argument("--headers", action="append", default=[],
                    metavar="MAJOR=DEB",
                    help="read that major's headers from a "
                    "postgresql-server-dev .deb, the rest from its --ref")
    ap.add_argument("-o", "--output", default="-")
    args = ap.parse_args()
    try:
        refs = dict((m, "REL_%d_STABLE" % m) for m in MAJORS)
        explicit = {}
        for r in args.ref:
            k, v = major_path(r, "--ref")
            refs[k] = explicit[k] = v
        trees = {}
        for opt, kind in ((args.tree, "tree"), (args.headers, "headers")):
            for r in opt:
                k, v = major_path(r, "--" + kind)
                if k in trees:
                    raise SourceError("%d given twice (--tree/--headers)" % k)
                trees[k] = (kind, v)
                refs.setdefault(k, "REL_%d_STABLE" % k)
        arguments = []
        majors = []
        for maj in sorted(refs):
            ref = refs[maj]
            if maj not in trees:
                arguments.append("--ref %d=%s" % (maj, ref))
                majors.append(generate_git(args.git_dir, maj, ref))
                continue
            kind, path = trees[maj]
            name = os.path.basename(os.path.normpath(path))
            arguments.append("--%s %d=%s%s" % (kind, maj, name,
                                                " --ref %d=%s" % (maj, ref)
                                                if maj in explicit else ""))
            if kind == "tree":
                tree = DirTree(path)
                prov = debian_source(path)
                if prov is None:
                    prov = {"kind": "tree"}
                else:
                    prov["kind"] = "debian-source"
            else:
                prov = debian_headers(path, maj)
                prov["kind"] = "debian-headers"
                _, prov["upstream"] = debian_version_parts(
                    prov["source_version"])
                tree = HeaderOverlay(prov.pop("headers"), name,
                                     GitTree(args.git_dir,
                                             rev_parse(args.git_dir, ref)))
            majors.append(generate_tree(args.git_dir, maj, ref, tree, prov))
    except SourceError as e:
        sys.stderr.write("gen_pg_wait_names: %s\n" % e)
        return 1
    for m in majors:
        for u in m["undocumented"]:
            sys.stderr.write("gen_pg_wait_names: %d: %s documented, not in "
                             "the code\n" % (m["major"], u))
    if args.output == "-":
        emit(majors, arguments, sys.stdout)
    else:
        with open(args.output + ".tmp", "w") as f:
            emit(majors, arguments, f)
        os.replace(args.output + ".tmp", args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
