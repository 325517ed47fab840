"""Section sizes of an ELF object, read directly (no ``llvm-size`` process per measurement)."""

from __future__ import annotations

import struct
from pathlib import Path


def text_bytes(path: str | Path) -> int:
    """Bytes of executable code: the sizes of ``.text`` and ``.text.*`` sections summed.

    Raises:
        ValueError: not a 64-bit little-endian ELF file.
    """
    data = Path(path).read_bytes()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError(f"{path} is not a 64-bit little-endian ELF file")
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names_offset = sections[shstrndx][4]
    total = 0
    for name_at, _type, _flags, _addr, _offset, size in sections:
        end = data.index(b"\0", names_offset + name_at)
        name = data[names_offset + name_at : end].decode()
        if name == ".text" or name.startswith(".text."):
            total += size
    return total
