"""Devices: what accelerators this host has, their fingerprints, and exclusive slots to use them.

:func:`inventory` lists the host's CPU, CUDA GPUs, TPUs, Metal and Neuron devices without
importing torch or jax; :func:`fingerprint` (and :func:`cpu_fingerprint`) is what is stored with
every result; :class:`DeviceSlots` hands out a device to one evaluation at a time, within a
process and across processes. The built-in plugin adds the ``evoforge devices`` command.

Names are imported on first use (:mod:`evoforge.base.lazy`): loading the built-in plugin that
adds ``evoforge devices`` (every command does) probes nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evoforge.base.lazy import lazy_package

if TYPE_CHECKING:
    from evoforge.evaluators.devices._fingerprint import (
        cpu_fingerprint as cpu_fingerprint,
        fingerprint as fingerprint,
    )
    from evoforge.evaluators.devices._inventory import (
        KINDS as KINDS,
        Device as Device,
        Inventory as Inventory,
        inventory as inventory,
        neuron_toolchain as neuron_toolchain,
    )
    from evoforge.evaluators.devices._slots import (
        LOCK_DIR_ENV as LOCK_DIR_ENV,
        DeviceBusyError as DeviceBusyError,
        DeviceError as DeviceError,
        DeviceSlots as DeviceSlots,
        default_lock_dir as default_lock_dir,
    )

__getattr__, __dir__, __all__ = lazy_package(__name__)
