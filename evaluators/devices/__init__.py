"""Devices: what accelerators this host has, their fingerprints, and exclusive slots to use them.

:func:`inventory` lists the host's CPU, CUDA GPUs, TPUs, Metal and Neuron devices without
importing torch or jax; :func:`fingerprint` (and :func:`cpu_fingerprint`) is what is stored with
every result; :class:`DeviceSlots` hands out a device to one evaluation at a time, within a
process and across processes. The built-in plugin adds the ``evoforge devices`` command.
"""

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
