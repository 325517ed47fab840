"""Device inventory, fingerprints, exclusive device slots and ``evoforge devices``."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path

import pytest
from click.testing import CliRunner

from evoforge.evaluators.devices import (
    Device,
    DeviceBusyError,
    DeviceError,
    DeviceSlots,
    _inventory as _devices,
    fingerprint,
    inventory,
)

CPU = Device("cpu", 0, "test cpu")
GPUS = (Device("cuda", 0, "gpu a", {"uuid": "GPU-aaa"}), Device("cuda", 1, "gpu b"))


@pytest.fixture
def fresh_inventory():
    """Detect afresh (the test changes what is visible) and forget it afterwards."""
    yield lambda: inventory(refresh=True)
    _devices._cached = None  # the next caller detects the real host again


def test_inventory_on_this_host_has_the_cpu_and_says_why_no_cuda(fresh_inventory, monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setattr(_devices, "NVIDIA_PROC_DIR", "/nonexistent/nvidia/gpus")
    found = fresh_inventory()
    (cpu,) = found.of_kind("cpu")
    assert cpu.name == fingerprint()["cpu"] and found.cpu_cores >= 1
    assert found.of_kind("cuda") == ()
    assert "nvidia-smi not found" in found.why_none("cuda")
    assert found.why_none("cpu") == ""
    for kind in ("tpu", "jax-gpu", "metal", "neuron"):
        assert found.why_none(kind), kind
    with pytest.raises(ValueError, match="unknown device kind"):
        found.of_kind("gpu")


def test_inventory_is_cached_and_never_imports_heavy_libraries():
    code = (
        "import sys\nfrom evoforge.evaluators.devices._inventory import inventory\n"
        "assert inventory() is inventory()\n"
        "print(sorted(m for m in ('torch', 'jax', 'triton', 'Metal') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


FAKE_SMI = """\
#!/bin/sh
case "$1" in
  --query-gpu=*compute_cap*)
    echo "0, GPU-1111, NVIDIA H100 80GB HBM3, 550.54.15, 81559, 00000000:19:00.0, 9.0"
    echo "1, GPU-2222, NVIDIA H100 80GB HBM3, 550.54.15, 81559, 00000000:3B:00.0, 9.0" ;;
  "") echo "| NVIDIA-SMI 550.54.15   Driver Version: 550.54.15   CUDA Version: 12.4 |" ;;
  *) exit 9 ;;
esac
"""


def test_cuda_gpus_are_read_from_nvidia_smi(fresh_inventory, tmp_path, monkeypatch):
    smi = tmp_path / "nvidia-smi"
    smi.write_text(FAKE_SMI)
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-2222")
    (gpu,) = fresh_inventory().of_kind("cuda")  # only the visible one
    assert (gpu.index, gpu.name) == (1, "NVIDIA H100 80GB HBM3")
    assert gpu.details == {
        "uuid": "GPU-2222",
        "driver": "550.54.15",
        "memory": "81559 MiB",
        "pci_bus_id": "00000000:3B:00.0",
        "compute_capability": "9.0",
        "cuda_driver_api": "12.4",
    }
    fp = fingerprint(gpu)
    assert fp["device_name"] == "NVIDIA H100 80GB HBM3"
    assert fp["device_driver"] == "550.54.15"
    assert fp["device_compute_capability"] == "9.0"


def test_failing_nvidia_smi_is_reported(fresh_inventory, tmp_path, monkeypatch):
    smi = tmp_path / "nvidia-smi"
    smi.write_text("#!/bin/sh\necho 'NVIDIA-SMI has failed: no driver' >&2\nexit 9\n")
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(_devices, "NVIDIA_PROC_DIR", str(tmp_path / "absent"))
    why = fresh_inventory().why_none("cuda")
    assert "exited with 9: NVIDIA-SMI has failed" in why


def test_cuda_gpus_fall_back_to_the_drivers_proc_files(fresh_inventory, tmp_path, monkeypatch):
    gpus = tmp_path / "driver" / "nvidia" / "gpus"
    (gpus / "0000:19:00.0").mkdir(parents=True)
    (gpus / "0000:19:00.0" / "information").write_text(
        "Model: \t\t NVIDIA A100-SXM4-40GB\nGPU UUID: \t GPU-abcd\n"
    )
    (gpus.parent / "version").write_text("NVRM version: NVIDIA UNIX Kernel Module  535.104.05\n")
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setattr(_devices, "NVIDIA_PROC_DIR", str(gpus))
    (gpu,) = fresh_inventory().of_kind("cuda")
    assert gpu.name == "NVIDIA A100-SXM4-40GB"
    assert gpu.details["uuid"] == "GPU-abcd" and gpu.details["driver"] == "535.104.05"


def _installed_version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def test_fingerprint_has_cpu_device_and_library_versions():
    fp = fingerprint(CPU)
    assert {"hostname", "platform", "cpu", "python"} <= set(fp)
    assert (fp["device_kind"], fp["device_index"], fp["device_name"]) == ("cpu", "0", "test cpu")
    assert fp["numpy"]  # a core dependency
    for library in ("jax", "jaxlib"):  # the jax extra: its version when installed, else no key
        assert fp.get(library) == _installed_version(library)
    assert "neuronx-cc" not in fp  # not installed: left out, not made up
    fp["cpu"] = "changed"
    assert fingerprint()["cpu"] != "changed"


def test_placeholder_neuron_compiler_is_not_a_toolchain():
    assert _devices.neuron_toolchain() == ""


# --- DeviceSlots within one process ------------------------------------------------------------


def test_claims_are_exclusive_and_served_first_come_first_served(tmp_path):
    async def go() -> list[str]:
        slots = DeviceSlots([CPU], lock_dir=tmp_path)
        order: list[str] = []
        release = asyncio.Event()

        async def holder() -> None:
            async with slots.claim("cpu"):
                order.append("holder")
                await release.wait()

        async def waiter(name: str) -> None:
            async with slots.claim("cpu") as device:
                assert device == CPU
                order.append(name)

        first = asyncio.create_task(holder())
        await asyncio.sleep(0)  # let the holder take the device
        waiters = [asyncio.create_task(waiter(n)) for n in ("w1", "w2", "w3")]
        await asyncio.sleep(0)
        assert order == ["holder"]  # everyone else waits
        release.set()
        await asyncio.gather(first, *waiters)
        return order

    assert asyncio.run(go()) == ["holder", "w1", "w2", "w3"]


def test_two_devices_serve_two_claims_at_once(tmp_path):
    async def go() -> set[int]:
        slots = DeviceSlots(GPUS, lock_dir=tmp_path)
        async with slots.claim("cuda") as a, slots.claim("cuda") as b:
            with pytest.raises(DeviceBusyError, match="every 'cuda' device stayed in use"):
                async with slots.claim("cuda", timeout_s=0):
                    pass
            return {a.index, b.index}

    assert asyncio.run(go()) == {0, 1}


def test_a_cancelled_waiter_does_not_lose_the_device(tmp_path):
    async def go() -> Device:
        slots = DeviceSlots([CPU], lock_dir=tmp_path)
        async with slots.claim("cpu"):
            waiter = asyncio.create_task(slots.claim("cpu").__aenter__())
            await asyncio.sleep(0)
            waiter.cancel()
            with pytest.raises(asyncio.CancelledError):
                await waiter
        async with slots.claim("cpu", timeout_s=0) as device:
            return device

    assert asyncio.run(go()) == CPU


def test_unknown_kind_is_a_clear_error(tmp_path):
    async def go() -> None:
        async with DeviceSlots([CPU], lock_dir=tmp_path).claim("tpu"):
            pass

    with pytest.raises(DeviceError, match=r"no 'tpu' device to claim \(these slots hold cpu x1\)"):
        asyncio.run(go())


# --- DeviceSlots across processes --------------------------------------------------------------

HOLDER = """
import asyncio, sys
from pathlib import Path
from evoforge.evaluators.devices import Device, DeviceSlots

async def main():
    slots = DeviceSlots([Device("cpu", 0, "test cpu")], lock_dir=Path(sys.argv[1]))
    async with slots.claim("cpu"):
        print("held", flush=True)
        await asyncio.to_thread(sys.stdin.readline)
    print("released", flush=True)

asyncio.run(main())
"""


def test_a_device_held_by_another_process_waits_until_it_is_released(tmp_path):
    root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": root}
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(HOLDER), str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert holder.stdout.readline() == "held\n"

        async def go() -> str:
            slots = DeviceSlots([CPU], lock_dir=tmp_path)
            with pytest.raises(DeviceBusyError):
                async with slots.claim("cpu", timeout_s=0):
                    pass
            waiting = asyncio.create_task(_claim_and_report(slots))
            await asyncio.sleep(0)
            assert not waiting.done()
            holder.stdin.write("go\n")
            holder.stdin.flush()
            return await asyncio.wait_for(waiting, 30)

        assert asyncio.run(go()) == "got cpu 0"
        assert holder.stdout.readline() == "released\n"
    finally:
        holder.kill()
        holder.wait()


async def _claim_and_report(slots: DeviceSlots) -> str:
    async with slots.claim("cpu") as device:
        return f"got {device.kind} {device.index}"


def test_a_timed_out_cross_process_wait_leaves_no_lock_behind(tmp_path):
    """The thread blocked in flock gets the lock after the claim gave up: it must let go."""
    root = str(Path(__file__).resolve().parents[2])
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(HOLDER), str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": root},
    )
    try:
        assert holder.stdout.readline() == "held\n"

        async def go() -> Device:
            slots = DeviceSlots([CPU], lock_dir=tmp_path)
            with pytest.raises(DeviceBusyError):
                async with slots.claim("cpu", timeout_s=0.2):
                    pass
            holder.stdin.write("go\n")
            holder.stdin.flush()
            assert await asyncio.to_thread(holder.stdout.readline) == "released\n"
            async with slots.claim("cpu", timeout_s=30) as device:
                return device

        assert asyncio.run(go()) == CPU
    finally:
        holder.kill()
        holder.wait()


# --- CLI ---------------------------------------------------------------------------------------


def test_devices_command_lists_the_inventory():
    from evoforge.evolve.cli import cli
    from evoforge.plugins import load_plugins, pm

    load_plugins()
    pm.hook.register_commands(cli=cli)
    text = CliRunner().invoke(cli, ["devices"])
    assert text.exit_code == 0, text.output
    assert "cpu      #0" in text.output and "cuda     none:" in text.output
    data = json.loads(CliRunner().invoke(cli, ["devices", "--json"]).output)
    assert data["devices"][0]["kind"] == "cpu" and "cuda" in data["notes"]
    assert data["fingerprint"]["python"]
