"""Hostile candidates and the filesystem: writes, tricks and escapes outside the workdir all
fail, and nothing outside it changes (harness: ``hostile.py``)."""

from __future__ import annotations

import errno
import os

import pytest

from evoforge.evaluators import Status
from tests.evaluators.conftest import (
    dedent,
)

# --- the filesystem ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "target",
    ["tmp", "var-tmp", "project", "server-home", "etc", "test-tmp", "canary-folder", "problem"],
)
def test_writes_outside_the_workdir_fail(roomy, outside, target):
    path = str(roomy.folder / outside.name) if target == "problem" else outside.targets[target]
    source = f"def main():\n    open({path!r}, 'w').write('x')\n    return 1\n"
    with outside:  # checks that nothing outside changed
        result = roomy.run(source)
    assert not os.path.lexists(path)
    if target == "tmp":  # the candidate's /tmp is its own: the write lands there, not here
        assert result.status is Status.OK, result.artifacts
        return
    if path.startswith("/tmp/") and result.status is Status.OK:
        # Its folder exists in the candidate's own /tmp too (a checkout under /tmp holds what
        # the server imports: their mount points are made there): the write landed in the
        # candidate's tmpfs, and `outside` checked that the host's folder did not change.
        return
    assert result.status is Status.RUNTIME_ERROR, result.artifacts
    # What the minimal root holds is read-only; the rest (the host's /tmp, /var) is not there.
    refusals = ("Read-only file system", "No such file")
    assert any(refusal in result.artifacts["error"] for refusal in refusals), result.artifacts


TRICKS = {
    "symlink-out": """
        import os
        def main():
            os.symlink(TARGET, "link")
            open("link", "w").write("x")
    """,
    "rename-out": """
        import os
        def main():
            open("here", "w").write("x")
            os.rename("here", TARGET)
    """,
    "hardlink-canary": """
        import os
        def main():
            os.link(CANARY, "mine")
            open("mine", "a").write("x")
    """,
    "append-canary": "def main():\n    open(CANARY, 'a').write('x')\n",
    "chmod-canary": "import os\ndef main():\n    os.chmod(CANARY, 0o777)\n",
    "delete-canary": "import os\ndef main():\n    os.unlink(CANARY)\n",
    "touch-canary": "import os\ndef main():\n    os.utime(CANARY, (0, 0))\n",
    "mkdir-etc": "import os\ndef main():\n    os.mkdir(TARGET.replace('/usr/', '/etc/'))\n",
}


@pytest.mark.parametrize("trick", TRICKS)
def test_tricks_to_write_outside_fail(roomy, outside, trick):
    source = (
        dedent(TRICKS[trick])  # (the candidate's /tmp is its own: aim at the read-only root)
        .replace("TARGET", repr(outside.targets["tmp"].replace("/tmp/", "/usr/")))
        .replace("CANARY", repr(str(outside.canary)))
    )
    with outside:
        result = roomy.run(source)
    assert result.status is Status.RUNTIME_ERROR, result.artifacts
    assert any(  # the canary is not in the candidate's root at all; the rest is read-only
        why in result.artifacts["error"]
        for why in ("Read-only file system", "Invalid cross-device link", "No such file")
    ), result.artifacts["error"]


def test_dev_shm_is_private_to_the_run(roomy, outside):
    source = f"""
        import os
        def main():
            open("/dev/shm/{outside.name}", "w").write("x")
            return sorted(os.listdir("/dev/shm"))
    """
    with outside:
        first, second = roomy.run(source), roomy.run(source)
    assert first.status is second.status is Status.OK, first.artifacts
    assert first.metrics["echo"] == second.metrics["echo"] == [outside.name]  # fresh each run
    assert not os.path.exists(f"/dev/shm/{outside.name}")


ESCAPES = {
    # Each returns 0 when it got out, else why not (an errno); the candidate then writes to a
    # target outside and lists the hidden folder.
    "mount-remount-rw": """
        import subprocess
        def escape(libc):
            done = subprocess.run(["mount", "-o", "remount,rw", "/"], capture_output=True)
            return done.returncode
    """,
    "umount-hidden-folder": """
        def escape(libc):
            return 0 if libc.umount2(FOLDER.encode(), 2) == 0 else ctypes.get_errno()
    """,
    "mount-setattr-rw": """
        class Attr(ctypes.Structure):
            _fields_ = [(n, ctypes.c_uint64) for n in ("set", "clr", "prop", "userns")]
        def escape(libc):
            attr = Attr(0, 1 | 4, 0, 0)  # clear read-only and nodev, everywhere
            ok = libc.syscall(442, -100, b"/", 0x8000, ctypes.byref(attr), 32) == 0
            return 0 if ok else ctypes.get_errno()
    """,
    "user-namespace": """
        def escape(libc):  # all capabilities, in a namespace of one's own
            if libc.unshare(0x10000000 | 0x20000) != 0:
                return ctypes.get_errno()
            for flags in (0x20 | 0x1000, 0x20):  # remount "/" rw, as a bind and as itself
                if libc.mount(None, b"/", None, ctypes.c_ulong(flags), None) == 0:
                    return 0
            if libc.umount2(FOLDER.encode(), 2) == 0:
                return 0
            return ctypes.get_errno()
    """,
    "bind-the-folders-parent-bare": """
        def escape(libc):  # a bind without submounts would show what the cover hides
            if libc.unshare(0x10000000 | 0x20000) != 0:
                return ctypes.get_errno()
            os.mkdir("peek")
            parent, name = os.path.split(FOLDER)
            if libc.mount(parent.encode(), b"peek", None, ctypes.c_ulong(0x1000), None) == 0:
                return 0 if os.listdir(os.path.join("peek", name)) else -1
            return ctypes.get_errno()
    """,
}
ESCAPE_MAIN = """
import ctypes, os
ESCAPE
def main():
    libc = ctypes.CDLL(None, use_errno=True)
    escaped = escape(libc)
    try:
        open(TARGET, "w").write("x")
        wrote = 0
    except OSError as exc:
        wrote = exc.errno
    return {"escape": escaped, "write": wrote}
"""


@pytest.mark.parametrize("escape", ESCAPES)
def test_remounting_or_unmounting_fails(roomy, outside, escape):
    source = (
        ESCAPE_MAIN.replace("ESCAPE", dedent(ESCAPES[escape]))
        .replace("TARGET", repr(f"/etc/{outside.name}"))
        .replace("FOLDER", repr("/usr"))
    )
    with outside:
        result = roomy.run(source)
    assert result.status is Status.OK, result.artifacts
    outcome = result.metrics["echo"]
    assert outcome["escape"] != 0
    assert outcome["write"] == errno.EROFS  # the root's /etc is read-only
    assert not os.path.lexists(f"/etc/{outside.name}")


def test_deleting_its_own_workdir_harms_no_later_candidate(roomy, outside):
    deletes = f"""
        import os, shutil
        def main():
            open("mine", "w").write("x")
            here = os.getcwd()
            os.chdir("/")
            errors = []
            for path in ({str(roomy.folder)!r}, {str(outside.tmp_canaries)!r}, "/usr/bin"):
                try:
                    shutil.rmtree(path)
                except OSError as exc:
                    errors.append(exc.errno)
            shutil.rmtree(here)  # its own: allowed, and gone with it
            return {{"errors": errors, "left": os.path.exists(here)}}
    """
    after = """
        import os
        def main():
            found = os.listdir(".")
            open("mine", "w").write("x")
            return {"found": found}
    """
    with outside:
        deleted, fine, fine_again = roomy.run(deletes), roomy.run(after), roomy.run(after)
    assert deleted.status is Status.OK, deleted.artifacts
    # The problem and the canaries are not in its root; the system is read-only.
    errors = [errno.ENOENT, errno.ENOENT, errno.EROFS]
    assert deleted.metrics["echo"] == {"errors": errors, "left": False}
    assert fine.status is fine_again.status is Status.OK
    assert fine.metrics["echo"] == fine_again.metrics["echo"] == {"found": []}
