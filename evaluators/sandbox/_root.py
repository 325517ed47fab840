"""What a candidate's minimal root holds, worked out once in the server.

A candidate does not see the host's ``/``: its mount namespace pivots into a fresh ``tmpfs``
(:mod:`~evoforge.evaluators.sandbox._mounts`) that holds only what running it needs, each
bound read-only at its own path:

- the system's programs and libraries: ``/usr`` and ``/bin``, ``/sbin``, ``/lib*`` (as
  symlinks into ``/usr`` where the host has them so, else bound), for the interpreter,
  ``clang-19``, ``valgrind`` and the shell that evaluators start;
- what the server imports (:func:`~evoforge.evaluators.sandbox._host.python_paths`: the
  interpreter's prefixes, the venv, site-packages, an editable install's source folders), the
  folders of the shared libraries it has loaded (a toolkit under ``/opt``) and what the
  problem declares (``sandbox_visible_paths``), with the symlinks on the way to them;
- a minimal ``/etc`` (:data:`ETC`, each entry with why it is there) and a generated
  ``passwd``/``group`` naming only root, the server's user and the candidates' user;
- its own ``/dev`` (:data:`~evoforge.evaluators.sandbox._mount_plan.DEVICES` that exist),
  ``/proc``, ``/dev/shm``, the workdir and a private ``/tmp``, which share the disk quota
  (one ``tmpfs``; the workdir is a folder of it when it lives under ``/tmp``, else a bind of
  one), so nothing of the host's ``/tmp`` (other archives, the workdir's siblings) shows;
- for a GPU request, what the NVIDIA driver reads (:mod:`~evoforge.evaluators.sandbox._gpu`).

Nothing else exists in it: not ``/home``, ``/root``, ``/srv``, ``/mnt``, ``/opt``, ``/var``,
the host's ``/tmp``, project checkouts (beyond the folders imported from them), other
archives or other problems' folders.
"""

from __future__ import annotations

import grp
import os
import pwd
import sys
from dataclasses import dataclass

SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
"""The system's programs and libraries: bound (or their symlinks copied) where they exist."""

ETC = {
    # The dynamic loader's index: dlopen("libcuda.so.1"), ctypes.util.find_library and every
    # program linked against a library outside the default path find it through this.
    "ld.so.cache": "dlopen by name",
    "ld.so.conf": "the loader's search path (read by tools that resolve libraries)",
    "ld.so.conf.d": "its parts",
    # /usr/bin/cc, c++, python, ... are symlinks through /etc/alternatives on Debian-likes.
    "alternatives": "symlinks of the system's default compilers and interpreters",
    # Time zone for time.localtime and datetime; a symlink into /usr/share/zoneinfo.
    "localtime": "the time zone",
    # "localhost" for candidates that serve on the loopback of their network namespace.
    "hosts": "the name localhost",
    # How glibc looks up users, groups and hosts (files only, given the files above).
    "nsswitch.conf": "where glibc looks names up",
}
"""Entries of ``/etc`` copied into the root (those that exist), each with why."""

NEVER_WHOLE = ("/", "/home", "/root", "/srv", "/mnt", "/media", "/opt", "/var", "/tmp", "/run")
"""Folders never bound whole, even when something asks (they hold other people's data)."""

STAGING_CANDIDATES = ("/tmp", "/mnt", "/media", "/srv", "/opt", "/var", "/home")
"""Where the new root's ``tmpfs`` is first mounted in the child's copy of the host's tree (a
folder that exists and is not the workdir; the host never sees it)."""


@dataclass(frozen=True)
class RootLayout:
    """What the minimal root holds besides the devices, ``/proc`` and the quota.

    Attributes:
        binds: ``(real path, is_dir)`` bound read-only at the same path, parents first.
        links: ``(path, target)`` symlinks made in the root (the host's, copied).
        files: ``(path, content)`` small files written in the root (``passwd``, ``group``).
        dirs: folders made empty in the root (mount points besides the binds').
        skipped: paths asked for and left out: ``/`` or a top folder of people's data
            (:data:`NEVER_WHOLE`, a ``sys.path`` entry of a script run from ``/tmp``, say), or
            one that holds the workdir (it would show the workdir's siblings).
    """

    binds: tuple[tuple[str, bool], ...]
    links: tuple[tuple[str, str], ...]
    files: tuple[tuple[str, bytes], ...]
    dirs: tuple[str, ...]
    skipped: tuple[str, ...] = ()

    def visible(self) -> list[str]:
        """The bound paths, for reports (``/usr`` first, then the rest by name)."""
        return [path for path, _ in self.binds]


def staging_point(workdir: str) -> str:
    """A folder to mount the new root's ``tmpfs`` on before the pivot (not the workdir, which
    must stay reachable to be bound in when it has no quota)."""
    for path in STAGING_CANDIDATES:
        if os.path.isdir(path) and not os.path.islink(path) and path != workdir:
            return path
    raise OSError("no folder to build the candidates' root on (/tmp, /mnt, ... are missing)")


def plan_root(
    workdir: str,
    keep: tuple[str, ...],
    extra_binds: tuple[str, ...] = (),
    owner: tuple[int, int] | None = None,
) -> RootLayout:
    """The root for candidates working in ``workdir`` that read ``keep`` (paths as given).

    Args:
        workdir: the candidates' working directory (made, not bound, unless it has no quota).
        keep: what candidates read besides the system (imports, libraries, declared data).
        extra_binds: more paths bound whole (the GPU's ``/sys``), read-only.
        owner: the candidates' ``(uid, gid)``, named in the generated ``passwd``.
    """
    binds: dict[str, bool] = {}
    links: dict[str, str] = {}
    for top in SYSTEM:
        if os.path.islink(top):
            links[top] = os.readlink(top)
        elif os.path.isdir(top):
            binds[top] = True
    for name in ETC:
        path = os.path.join("/etc", name)
        if os.path.islink(path):
            links[path] = os.readlink(path)
        elif os.path.exists(path):
            binds[path] = os.path.isdir(path)
    given = [*keep, *extra_binds, sys.prefix, sys.base_prefix, sys.executable, workdir]
    for path in given:
        links.update(_links_on_the_way(path))
    real_workdir = os.path.realpath(workdir)
    skipped = []
    for path in (*keep, *extra_binds):
        real = os.path.realpath(path)
        if not os.path.exists(real) or _under_any(real, ["/proc", "/dev"]):
            continue
        if real in NEVER_WHOLE or _contains(real, real_workdir):
            skipped.append(real)  # would show the host's data, or the workdir's siblings
            continue
        binds.setdefault(real, os.path.isdir(real))
    outer = _outermost(binds)
    kept = tuple(
        (path, binds[path])
        for path in sorted(outer, key=lambda p: (p.count("/"), p))
        if not _contains(real_workdir, path)  # the workdir is the run's, not the host's
    )
    bound = [path for path, _ in kept]
    kept_links = tuple(
        (path, target)
        for path, target in sorted(links.items())
        if not _under_any(path, bound) and path not in binds
    )
    files = (("/etc/passwd", _passwd(owner)), ("/etc/group", _group(owner)))
    return RootLayout(kept, kept_links, files, ("/etc",), tuple(sorted(set(skipped))))


def _links_on_the_way(path: str) -> dict[str, str]:
    """The symlinks met on the way to ``path`` (``/work -> /data/work``, a venv's
    ``lib64 -> lib``), so the path as given resolves in the root as on the host."""
    found: dict[str, str] = {}
    current = "/"
    parts = [p for p in os.path.abspath(path).split("/") if p]
    for _ in range(40):  # a bound on symlink hops, as the kernel has
        if not parts:
            break
        current = os.path.join(current, parts.pop(0))
        if os.path.islink(current):
            target = os.readlink(current)
            found[current] = target
            resolved = os.path.normpath(os.path.join(os.path.dirname(current), target))
            parts = [p for p in resolved.split("/") if p] + parts
            current = "/"
    return found


def _passwd(owner: tuple[int, int] | None) -> bytes:
    """``passwd`` lines of root, the server's user and the candidates' (getpass, ``~`` and
    tools that look their own user up need theirs; nobody else's is any of their business)."""
    lines = {0: "root:x:0:0:root:/root:/bin/sh"}
    for uid in {os.geteuid(), *(owner[:1] if owner else ())}:
        try:
            entry = pwd.getpwuid(uid)
        except KeyError:
            continue
        lines[uid] = f"{entry.pw_name}:x:{uid}:{entry.pw_gid}::/nonexistent:/usr/sbin/nologin"
    return "".join(line + "\n" for _, line in sorted(lines.items())).encode()


def _group(owner: tuple[int, int] | None) -> bytes:
    lines = {0: "root:x:0:"}
    for gid in {os.getegid(), *(owner[1:] if owner else ())}:
        try:
            lines[gid] = f"{grp.getgrgid(gid).gr_name}:x:{gid}:"
        except KeyError:
            continue
    return "".join(line + "\n" for _, line in sorted(lines.items())).encode()


def _outermost(paths: dict[str, bool]) -> list[str]:
    return [p for p in paths if not any(o != p and _contains(o, p) for o in paths)]


def _under_any(path: str, folders: list[str]) -> bool:
    return any(folder != path and _contains(folder, path) for folder in folders)


def _contains(outer: str, inner: str) -> bool:
    return inner == outer or inner.startswith(outer.rstrip("/") + "/")
