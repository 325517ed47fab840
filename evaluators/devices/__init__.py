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

from evoforge.base.lazy import lazy_exports

if TYPE_CHECKING:
    from evoforge.evaluators.devices._fingerprint import cpu_fingerprint
    from evoforge.evaluators.devices._inventory import (
        KINDS,
        LOCK_DIR_ENV,
        Device,
        DeviceBusyError,
        DeviceError,
        DeviceSlots,
        Inventory,
        default_lock_dir,
        fingerprint,
        inventory,
        neuron_toolchain,
    )

# name -> the module that defines it
_EXPORTS = {
    "cpu_fingerprint": "evoforge.evaluators.devices._fingerprint",
    "KINDS": "evoforge.evaluators.devices._inventory",
    "LOCK_DIR_ENV": "evoforge.evaluators.devices._inventory",
    "Device": "evoforge.evaluators.devices._inventory",
    "DeviceBusyError": "evoforge.evaluators.devices._inventory",
    "DeviceError": "evoforge.evaluators.devices._inventory",
    "DeviceSlots": "evoforge.evaluators.devices._inventory",
    "Inventory": "evoforge.evaluators.devices._inventory",
    "default_lock_dir": "evoforge.evaluators.devices._inventory",
    "fingerprint": "evoforge.evaluators.devices._inventory",
    "inventory": "evoforge.evaluators.devices._inventory",
    "neuron_toolchain": "evoforge.evaluators.devices._inventory",
}

__all__ = [
    # what the host has
    "KINDS",
    "Device",
    "Inventory",
    "inventory",
    "neuron_toolchain",
    # fingerprints stored with results
    "cpu_fingerprint",
    "fingerprint",
    # exclusive use
    "LOCK_DIR_ENV",
    "DeviceBusyError",
    "DeviceError",
    "DeviceSlots",
    "default_lock_dir",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
