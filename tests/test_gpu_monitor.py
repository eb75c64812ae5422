"""gemmreg.instruments.gpu_monitor through a fake NVML, and its judgements on recorded and constructed traces.

No GPU and no timing: the fake below mimics the pynvml calls and constants the
module uses (test_fake_matches_real_pynvml keeps it honest against the real
binding), including NVMLError for refused fields.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
from collections import Counter
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from gemmreg.instruments import gpu_monitor as gm
from gemmreg.instruments.gpu_trace import Reading

FIXTURES = Path(__file__).parent / "fixtures" / "nvml"

NOT_SUPPORTED = 3
NO_PERMISSION = 4
UNKNOWN = 999


class FakeNVMLError(Exception):
    """Like pynvml.NVMLError: carries the NVML return code in ``value``."""

    def __init__(self, value: int) -> None:
        super().__init__(value)
        self.value = value

    def __str__(self) -> str:
        return {NOT_SUPPORTED: "Not Supported", NO_PERMISSION: "Insufficient Permissions"}.get(
            self.value, f"NVML error {self.value}"
        )


class FakeDevice:
    def __init__(self, uuid: str, **state: Any) -> None:
        self.uuid = uuid
        self.sm, self.mem, self.graphics = 1470, 3201, 1470
        self.max_sm, self.apps_sm, self.default_apps_sm = 1980, 1980, 1980
        self.power_mw, self.temperature, self.reasons = 690_500, 65, 0x4
        self.violations = {0: 41_000_000_000, 1: 0, 3: 0, 5: 0}
        self.compute: list[Any] = []
        self.graphics_procs: list[Any] = []
        self.freqs = "nvclock=1470, nvclockmin=345, nvclockmax=1980, nvclockeditable=0"
        self.refuse: dict[str, int] = {}
        self.__dict__.update(state)


def proc(pid: int, used: int | None) -> SimpleNamespace:
    return SimpleNamespace(pid=pid, usedGpuMemory=used)


class FakeNVML:
    """The pynvml functions and constants gpu_monitor uses, over a list of FakeDevices."""

    NVMLError = FakeNVMLError
    NVML_ERROR_NOT_SUPPORTED = NOT_SUPPORTED
    NVML_ERROR_NO_PERMISSION = NO_PERMISSION
    NVML_ERROR_FUNCTION_NOT_FOUND = 13
    NVML_CLOCK_GRAPHICS, NVML_CLOCK_SM, NVML_CLOCK_MEM = 0, 1, 2
    NVML_TEMPERATURE_GPU = 0
    NVML_TEMPERATURE_THRESHOLD_SLOWDOWN = 1
    NVML_PERF_POLICY_POWER = 0
    NVML_PERF_POLICY_THERMAL = 1
    NVML_PERF_POLICY_BOARD_LIMIT = 3
    NVML_PERF_POLICY_RELIABILITY = 5

    def __init__(self, devices: list[FakeDevice], init_error: int | None = None) -> None:
        self.devices = devices
        self.init_error = init_error
        self.calls: Counter[str] = Counter()
        self.process_names = {123: "python", 456: "train.py"}

    def _ask(self, name: str, device: FakeDevice, value: Any) -> Any:
        self.calls[name] += 1
        if name in device.refuse:
            raise FakeNVMLError(device.refuse[name])
        return value

    def nvmlInit(self) -> None:
        self.calls["nvmlInit"] += 1
        if self.init_error is not None:
            raise FakeNVMLError(self.init_error)

    def nvmlShutdown(self) -> None:
        self.calls["nvmlShutdown"] += 1

    def nvmlDeviceGetCount(self) -> int:
        return len(self.devices)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> FakeDevice:
        return self.devices[index]

    def nvmlDeviceGetUUID(self, d: FakeDevice) -> str:
        return self._ask("nvmlDeviceGetUUID", d, d.uuid)

    def nvmlDeviceGetName(self, d: FakeDevice) -> str:
        return self._ask("nvmlDeviceGetName", d, "NVIDIA H200")

    def nvmlDeviceGetSerial(self, d: FakeDevice) -> str:
        return self._ask("nvmlDeviceGetSerial", d, "1653724061382")

    def nvmlDeviceGetPciInfo(self, d: FakeDevice) -> SimpleNamespace:
        return self._ask("nvmlDeviceGetPciInfo", d, SimpleNamespace(busId=b"00000000:00:06.0"))

    def nvmlSystemGetDriverVersion(self) -> str:
        return "580.159.04"

    def nvmlSystemGetNVMLVersion(self) -> str:
        return "13.580.159.04"

    def nvmlSystemGetProcessName(self, pid: int) -> str:
        if pid not in self.process_names:
            raise FakeNVMLError(NO_PERMISSION)
        return self.process_names[pid]

    def nvmlDeviceGetPersistenceMode(self, d: FakeDevice) -> int:
        return self._ask("nvmlDeviceGetPersistenceMode", d, 1)

    def nvmlDeviceGetComputeMode(self, d: FakeDevice) -> int:
        return self._ask("nvmlDeviceGetComputeMode", d, 0)

    def nvmlDeviceGetMigMode(self, d: FakeDevice) -> list[int]:
        return self._ask("nvmlDeviceGetMigMode", d, [0, 0])

    def nvmlDeviceGetPerformanceState(self, d: FakeDevice) -> int:
        return self._ask("nvmlDeviceGetPerformanceState", d, 0)

    def nvmlDeviceGetClockInfo(self, d: FakeDevice, kind: int) -> int:
        return self._ask("nvmlDeviceGetClockInfo", d, [d.graphics, d.sm, d.mem][kind])

    def nvmlDeviceGetMaxClockInfo(self, d: FakeDevice, kind: int) -> int:
        return self._ask("nvmlDeviceGetMaxClockInfo", d, [d.max_sm, d.max_sm, 3201][kind])

    def nvmlDeviceGetApplicationsClock(self, d: FakeDevice, kind: int) -> int:
        return self._ask("nvmlDeviceGetApplicationsClock", d, [d.apps_sm, d.apps_sm, 3201][kind])

    def nvmlDeviceGetDefaultApplicationsClock(self, d: FakeDevice, kind: int) -> int:
        value = [d.default_apps_sm, d.default_apps_sm, 3201][kind]
        return self._ask("nvmlDeviceGetDefaultApplicationsClock", d, value)

    def nvmlDeviceGetCurrentClockFreqs(self, d: FakeDevice) -> str:
        return self._ask("nvmlDeviceGetCurrentClockFreqs", d, d.freqs)

    def nvmlDeviceGetPowerUsage(self, d: FakeDevice) -> int:
        return self._ask("nvmlDeviceGetPowerUsage", d, d.power_mw)

    def nvmlDeviceGetPowerManagementLimit(self, d: FakeDevice) -> int:
        return self._ask("nvmlDeviceGetPowerManagementLimit", d, 700_000)

    def nvmlDeviceGetEnforcedPowerLimit(self, d: FakeDevice) -> int:
        return self._ask("nvmlDeviceGetEnforcedPowerLimit", d, 700_000)

    def nvmlDeviceGetPowerManagementDefaultLimit(self, d: FakeDevice) -> int:
        return self._ask("nvmlDeviceGetPowerManagementDefaultLimit", d, 700_000)

    def nvmlDeviceGetTemperature(self, d: FakeDevice, sensor: int) -> int:
        return self._ask("nvmlDeviceGetTemperature", d, d.temperature)

    def nvmlDeviceGetTemperatureThreshold(self, d: FakeDevice, kind: int) -> int:
        return self._ask("nvmlDeviceGetTemperatureThreshold", d, 89)

    def nvmlDeviceGetCurrentClocksEventReasons(self, d: FakeDevice) -> int:
        return self._ask("nvmlDeviceGetCurrentClocksEventReasons", d, d.reasons)

    def nvmlDeviceGetCurrentClocksThrottleReasons(self, d: FakeDevice) -> int:
        return self._ask("nvmlDeviceGetCurrentClocksThrottleReasons", d, d.reasons)

    def nvmlDeviceGetSupportedClocksEventReasons(self, d: FakeDevice) -> int:
        return self._ask("nvmlDeviceGetSupportedClocksEventReasons", d, 0x1FF)

    def nvmlDeviceGetViolationStatus(self, d: FakeDevice, policy: int) -> SimpleNamespace:
        if policy not in d.violations:
            raise FakeNVMLError(NOT_SUPPORTED)
        status = SimpleNamespace(referenceTime=0, violationTime=d.violations[policy])
        return self._ask(f"violation:{policy}", d, status)

    def nvmlDeviceGetComputeRunningProcesses(self, d: FakeDevice) -> list[Any]:
        return self._ask("nvmlDeviceGetComputeRunningProcesses", d, d.compute)

    def nvmlDeviceGetGraphicsRunningProcesses(self, d: FakeDevice) -> list[Any]:
        return self._ask("nvmlDeviceGetGraphicsRunningProcesses", d, d.graphics_procs)

    def nvmlDeviceGetMPSComputeRunningProcesses(self, d: FakeDevice) -> list[Any]:
        return self._ask("nvmlDeviceGetMPSComputeRunningProcesses", d, [])


UUIDS = [
    "GPU-aaaaaaaa-0000-0000-0000-000000000000",
    "GPU-bbbbbbbb-0000-0000-0000-000000000000",
    "GPU-cccccccc-0000-0000-0000-000000000000",
]


def open_fake(
    devices: list[FakeDevice] | None = None, index: int = 0, torch_uuid: str | None = None
) -> tuple[gm.Monitor, FakeNVML]:
    nvml = FakeNVML(devices or [FakeDevice(UUIDS[0])])
    monitor, why = gm.open_monitor(index, nvml, device_uuid=lambda i: torch_uuid)
    assert monitor is not None, why
    return monitor, nvml


def load_round(name: str) -> list[Reading]:
    data = json.loads((FIXTURES / name).read_text())
    return [Reading.from_dict(r) for r in data["readings"]]


def load_recorded(name: str) -> list[Reading]:
    return [Reading.from_dict(r) for r in json.loads((FIXTURES / "recorded" / name).read_text())]


# --- reason bits -----------------------------------------------------------------


def test_reason_bits_decode_to_sorted_names() -> None:
    assert gm.decode_reasons(0) == ()
    assert gm.decode_reasons(0x4) == ("sw_power_cap",)
    assert gm.decode_reasons(0x4 | 0x40 | 0x8) == (
        "hw_slowdown",
        "hw_thermal_slowdown",
        "sw_power_cap",
    )
    assert gm.decode_reasons(0x1 | 0x800) == ("gpu_idle", "unknown_0x800")


def test_every_reason_is_either_dropping_or_recorded() -> None:
    names = {name for name, _, _ in gm.REASON_BITS}
    assert names == gm.THROTTLE_DROP_REASONS | gm.RECORDED_REASONS
    assert not gm.THROTTLE_DROP_REASONS & gm.RECORDED_REASONS
    assert "sw_power_cap" in gm.RECORDED_REASONS
    assert {"hw_slowdown", "hw_thermal_slowdown", "sw_thermal_slowdown"} <= gm.THROTTLE_DROP_REASONS


def test_fake_matches_real_pynvml() -> None:
    """The fake's names and the reason bits are the real binding's, so passing
    here means the module asks the real pynvml for things that exist."""
    pynvml = pytest.importorskip("pynvml")
    for name, suffix, bit in gm.REASON_BITS:
        assert getattr(pynvml, f"nvmlClocksThrottleReason{suffix}") == bit, name
    for name in dir(FakeNVML):
        if name.startswith(("nvml", "NVML")) and name != "NVMLError":
            assert hasattr(pynvml, name), name
            if name.startswith("NVML_"):
                assert getattr(pynvml, name) == getattr(FakeNVML, name), name
    for policy in gm.READ_VIOLATIONS.values():
        assert hasattr(pynvml, policy), policy
    assert issubclass(pynvml.NVMLError, Exception)


# --- reading -----------------------------------------------------------------------


def test_reading_takes_every_field() -> None:
    monitor, _ = open_fake()
    reading = monitor.read()
    assert (reading.sm_mhz, reading.mem_mhz, reading.temperature_c) == (1470, 3201, 65)
    assert reading.power_w == pytest.approx(690.5)
    assert reading.reasons == ("sw_power_cap",)
    assert reading.violations_ns == {
        "power": 41_000_000_000,
        "thermal": 0,
        "board_limit": 0,
        "reliability": 0,
    }
    assert reading.unreadable == ()


def test_refused_fields_become_none_and_unsupported_ones_are_not_asked_again() -> None:
    device = FakeDevice(
        UUIDS[0],
        refuse={"nvmlDeviceGetPowerUsage": NOT_SUPPORTED, "nvmlDeviceGetTemperature": UNKNOWN},
        violations={0: 5, 1: 0},  # board limit and reliability not supported
    )
    monitor, nvml = open_fake([device])
    first, second = monitor.read(), monitor.read()
    for reading in (first, second):
        assert reading.power_w is None and reading.temperature_c is None
        assert reading.sm_mhz == 1470 and reading.reasons == ("sw_power_cap",)
        assert reading.violations_ns == {"power": 5, "thermal": 0}
        assert set(reading.unreadable) == {
            "power_w",
            "temperature_c",
            "violation:board_limit",
            "violation:reliability",
        }
    assert nvml.calls["nvmlDeviceGetPowerUsage"] == 1  # not supported: asked once
    assert nvml.calls["nvmlDeviceGetTemperature"] == 2  # a passing error: asked again
    assert monitor.refused["power_w"] == "FakeNVMLError: Not Supported"
    assert "refused_while_sampling" in monitor.device_record()


def test_old_binding_reads_reasons_through_the_throttle_name() -> None:
    nvml = FakeNVML([FakeDevice(UUIDS[0])])
    nvml.nvmlDeviceGetCurrentClocksEventReasons = None  # type: ignore[assignment,method-assign]
    assert gm.Monitor(nvml, nvml.devices[0], 0, "test").read().reasons == ("sw_power_cap",)
    assert nvml.calls["nvmlDeviceGetCurrentClocksThrottleReasons"] == 1


def test_reading_round_trips_through_json() -> None:
    monitor, _ = open_fake([FakeDevice(UUIDS[0], refuse={"nvmlDeviceGetPowerUsage": UNKNOWN})])
    reading = monitor.read()
    again = Reading.from_dict(json.loads(json.dumps(reading.to_dict())))
    assert again == reading
    assert again.unreadable == ("power_w",)


# --- finding the device ------------------------------------------------------------


def three_devices() -> list[FakeDevice]:
    return [FakeDevice(uuid, sm=1000 + i) for i, uuid in enumerate(UUIDS)]


def test_uuid_picks_the_right_device_among_several() -> None:
    monitor, _ = open_fake(three_devices(), index=0, torch_uuid=UUIDS[2][4:])
    assert monitor.nvml_index == 2 and monitor.read().sm_mhz == 1002
    assert monitor.matched_by == f"uuid {UUIDS[2]}"


def test_uuid_wins_over_renumbering(monkeypatch: pytest.MonkeyPatch) -> None:
    """With CUDA_VISIBLE_DEVICES=2,0 torch's device 1 is NVML's device 0."""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,0")
    monitor, _ = open_fake(three_devices(), index=1, torch_uuid=UUIDS[0][4:].upper())
    assert monitor.nvml_index == 0


@pytest.mark.parametrize(
    ("visible", "torch_index", "nvml_index"),
    [(None, 1, 1), ("2,0", 0, 2), ("2,0", 1, 0), ("GPU-bbbb", 0, 1), (" 1 , 2", 1, 2)],
)
def test_without_a_uuid_the_index_is_read_through_cuda_visible_devices(
    monkeypatch: pytest.MonkeyPatch, visible: str | None, torch_index: int, nvml_index: int
) -> None:
    if visible is None:
        monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    else:
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    monitor, _ = open_fake(three_devices(), index=torch_index, torch_uuid=None)
    assert monitor.nvml_index == nvml_index
    assert monitor.read().sm_mhz == 1000 + nvml_index


@pytest.mark.parametrize(
    ("visible", "torch_index", "torch_uuid", "words"),
    [
        (
            None,
            0,
            "dddddddd-0000-0000-0000-000000000000",
            "no NVML device has torch device 0's UUID",
        ),
        ("0", 1, None, "not in CUDA_VISIBLE_DEVICES"),
        ("GPU-", 0, None, "cannot match CUDA_VISIBLE_DEVICES entry"),
        ("MIG-1234", 0, None, "cannot match CUDA_VISIBLE_DEVICES entry"),
    ],
)
def test_a_device_that_cannot_be_matched_is_refused_not_guessed(
    monkeypatch: pytest.MonkeyPatch,
    visible: str | None,
    torch_index: int,
    torch_uuid: str | None,
    words: str,
) -> None:
    if visible is None:
        monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    else:
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    nvml = FakeNVML(three_devices())
    monitor, why = gm.open_monitor(torch_index, nvml, device_uuid=lambda i: torch_uuid)
    assert monitor is None and words in why
    assert nvml.calls["nvmlShutdown"] == nvml.calls["nvmlInit"] == 1


def test_open_monitor_without_pynvml_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import pynvml now raises ImportError
    monitor, why = gm.open_monitor(0)
    assert monitor is None and "nvidia-ml-py" in why and "pip install" in why


def test_open_monitor_on_rocm_says_nvml_is_nvidia_only(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    monkeypatch.setattr(torch.version, "hip", "6.2.0", raising=False)
    assert gm.open_monitor(0, FakeNVML(three_devices())) == (None, gm.ROCM)


def test_open_monitor_when_nvml_cannot_start() -> None:
    nvml = FakeNVML([], init_error=9)  # NVML_ERROR_DRIVER_NOT_LOADED
    monitor, why = gm.open_monitor(0, nvml, device_uuid=lambda i: None)
    assert monitor is None and why.startswith("NVML could not start: ") and "9" in why


def test_close_shuts_nvml_down_once() -> None:
    monitor, nvml = open_fake()
    monitor.close()
    monitor.close()
    assert nvml.calls["nvmlShutdown"] == 1


# --- rounds ------------------------------------------------------------------------


def test_a_steady_power_capped_round_is_kept() -> None:
    readings = load_round("power_capped_round.json")
    assert all("sw_power_cap" in r.reasons for r in readings)
    assert readings[-1].violations_ns["power"] > readings[0].violations_ns["power"]
    assert gm.round_drop_reason(readings) is None


def test_a_round_with_hw_thermal_slowdown_in_one_reading_is_dropped() -> None:
    why = gm.round_drop_reason(load_round("hw_thermal_round.json"))
    assert why is not None and why.startswith("hw_")
    assert "reading 3 of 6" in why


def test_an_advancing_thermal_counter_drops_the_round() -> None:
    readings = load_round("thermal_counter_round.json")
    assert not any(set(r.reasons) & gm.THROTTLE_DROP_REASONS for r in readings)
    assert gm.round_drop_reason(readings) == "thermal violation counter advanced by 3.2 ms"
    assert gm.round_drop_reason(readings[:3]) is None  # before the advance


def test_a_quiet_round_is_kept() -> None:
    assert gm.round_drop_reason(load_round("quiet_round.json")) is None


def test_an_unknown_reason_bit_drops_the_round() -> None:
    quiet = load_round("quiet_round.json")
    odd = Reading.from_dict({**quiet[2].to_dict(), "reasons": list(gm.decode_reasons(0x800))})
    assert gm.round_drop_reason([*quiet[:2], odd]) == "unknown_0x800 active (reading 3 of 3)"


def test_recorded_h200_bf16_rounds_are_all_kept() -> None:
    """On the real power-capped H200 no round of six readings is dropped."""
    readings = load_recorded("bf16_8192_soaked.json")
    rounds = [readings[i : i + 6] for i in range(0, len(readings), 6)]
    assert len(rounds) > 10
    assert [gm.round_drop_reason(r) for r in rounds] == [None] * len(rounds)


# --- heat soak ---------------------------------------------------------------------


def ramp_then_flat() -> list[Reading]:
    """1100 -> 1980 MHz over 6 s, then 1980 for 6 s, a reading every 0.1 s."""
    readings = []
    for i in range(121):
        t = i * 0.1
        sm = round(1100 + 880 * min(t, 6.0) / 6.0)
        readings.append(
            Reading(t_s=t, sm_mhz=sm, mem_mhz=3201, power_w=300.0, temperature_c=50, reasons=())
        )
    return readings


def test_a_ramp_is_not_steady_until_it_flattens() -> None:
    readings = ramp_then_flat()
    verdicts = [gm.clock_steady(readings[: i + 1]) for i in range(len(readings))]
    first_steady = verdicts.index(True)
    assert readings[first_steady].t_s > 6.0  # never during the ramp
    assert readings[first_steady].t_s <= 6.0 + gm.STEADY_WINDOW_S + 0.05  # once a window is flat
    assert all(verdicts[first_steady:])


def test_the_window_must_pass_before_anything_is_steady() -> None:
    flat = [r for r in ramp_then_flat() if r.t_s >= 6.0]
    assert not gm.clock_steady(flat[:10])
    assert not gm.clock_steady([])


def test_a_scattered_power_capped_clock_is_steady() -> None:
    """The recorded H200 clock scatters reading to reading more than the tolerance,
    yet its level holds; the criterion compares medians, so it is steady."""
    readings = load_recorded("bf16_8192_soaked.json")
    clocks = [r.sm_mhz for r in readings if r.sm_mhz is not None]
    median = statistics.median(clocks)
    assert max(abs(c - median) for c in clocks) > gm.STEADY_TOLERANCE * median
    assert gm.clock_steady(readings)


def test_recorded_heatup_settles_after_the_first_window() -> None:
    readings = load_recorded("bf16_8192_heatup.json")
    start = readings[0].t_s
    settled = next(
        r.t_s - start for i, r in enumerate(readings) if gm.clock_steady(readings[: i + 1])
    )
    assert gm.STEADY_WINDOW_S <= settled < 2 * gm.STEADY_WINDOW_S


def test_no_readable_clock_is_steady_once_the_window_has_passed() -> None:
    blind = [
        Reading(
            t_s=t * 0.5, sm_mhz=None, mem_mhz=None, power_w=None, temperature_c=None, reasons=()
        )
        for t in range(12)
    ]
    assert not gm.clock_steady(blind[:4])
    assert gm.clock_steady(blind)


# --- device record -----------------------------------------------------------------


def test_device_record_names_other_processes_and_excludes_own() -> None:
    me = os.getpid()
    worker = 99_001
    device = FakeDevice(
        UUIDS[1],
        compute=[proc(me, 2**30), proc(worker, 2**30), proc(123, 40 * 2**30), proc(777, None)],
        graphics_procs=[proc(123, 40 * 2**30)],
    )
    monitor, _ = open_fake([FakeDevice(UUIDS[0]), device], torch_uuid=UUIDS[1])
    record = monitor.device_record(own_pids=[worker])
    assert record["uuid"] == UUIDS[1] and record["nvml_index"] == 1
    assert [p["pid"] for p in record["other_processes"]] == [123, 777]
    assert record["other_processes"][0]["kinds"] == ["compute", "graphics"]
    assert record["own_pids_seen_on_gpu"] == sorted([me, worker])
    assert record["other_processes"][1]["name"].startswith("unavailable: ")
    assert gm.busy_reason(record) == (
        "2 other processes on the GPU: pid 123 (python, 40.0 GiB), pid 777 (?, memory unknown)"
    )
    json.dumps(record)


def test_a_gpu_used_by_nobody_else_is_not_busy() -> None:
    monitor, _ = open_fake([FakeDevice(UUIDS[0], compute=[proc(os.getpid(), 2**30)])])
    record = monitor.device_record()
    assert record["other_processes"] == [] and gm.busy_reason(record) is None


def test_a_full_record_from_a_cooperative_nvml_has_no_gaps() -> None:
    """Every field the module asks for exists on the fake (whose names
    test_fake_matches_real_pynvml checks against pynvml)."""
    monitor, _ = open_fake()
    text = json.dumps(monitor.device_record())
    assert "unavailable" not in text
    record = monitor.device_record()
    assert record["persistence_mode"] == "enabled" and record["compute_mode"] == "default"
    assert record["power_limit_w"] == 700.0 and record["pci_bus_id"] == "00000000:00:06.0"
    assert record["clocks_locked"]["looks_locked"] is False
    assert record["supported_reasons"][0] == "applications_clocks_setting"


def test_refused_fields_are_recorded_as_unavailable() -> None:
    refuse = {
        "nvmlDeviceGetSerial": NO_PERMISSION,
        "nvmlDeviceGetPersistenceMode": NOT_SUPPORTED,
        "nvmlDeviceGetComputeRunningProcesses": NOT_SUPPORTED,
        "nvmlDeviceGetGraphicsRunningProcesses": NOT_SUPPORTED,
        "nvmlDeviceGetMPSComputeRunningProcesses": NOT_SUPPORTED,
    }
    monitor, _ = open_fake([FakeDevice(UUIDS[0], refuse=refuse)])
    record = monitor.device_record()
    assert record["serial"] == "unavailable: FakeNVMLError: Insufficient Permissions"
    assert record["persistence_mode"] == "unavailable: FakeNVMLError: Not Supported"
    assert record["other_processes"].startswith("unavailable: compute: FakeNVMLError")
    assert gm.busy_reason(record) is None
    assert record["name"] == "NVIDIA H200"  # the rest survives


@pytest.mark.parametrize(
    ("state", "locked"),
    [
        ({"apps_sm": 1500}, True),  # applications clocks set below their default
        ({"freqs": "nvclock=1500, nvclockmin=1500, nvclockmax=1500"}, True),
        ({"freqs": "nvclock=1200, nvclockmin=345, nvclockmax=1410"}, True),
        ({}, False),
    ],
)
def test_clock_lock_detection(state: dict[str, Any], locked: bool) -> None:
    monitor, _ = open_fake([FakeDevice(UUIDS[0], **state)])
    assert monitor.device_record()["clocks_locked"]["looks_locked"] is locked


# --- summary -----------------------------------------------------------------------


def test_trace_summary_of_the_recorded_soak() -> None:
    summary = gm.trace_summary(load_recorded("bf16_8192_soaked.json"))
    assert summary["readings"] == 95 and 7.5 < summary["span_s"] < 8.5
    assert summary["sm_mhz"] == {"min": 1425, "median": 1470, "max": 1575}
    assert summary["reasons"] == {"sw_power_cap": 95}
    assert summary["violations_advanced_ns"]["thermal"] == 0
    assert summary["violations_advanced_ns"]["power"] > 7e9
    assert summary["unreadable"] == {}
    json.dumps(summary)


def test_trace_summary_counts_gaps() -> None:
    monitor, _ = open_fake([FakeDevice(UUIDS[0], refuse={"nvmlDeviceGetPowerUsage": UNKNOWN})])
    summary = gm.trace_summary([monitor.read(), monitor.read()])
    assert summary["unreadable"] == {"power_w": 2} and summary["power_w"] is None
    assert gm.trace_summary([])["readings"] == 0


def test_gemmreg_s_own_workers_are_not_other_processes_on_the_gpu(tmp_path):
    """Workers started before the manifest hold GPU contexts: they are part of
    gemmreg's own process tree, which the SHARED GPU check leaves out."""
    import os
    import subprocess
    import sys

    from gemmreg.instruments.environment import own_process_tree

    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import subprocess, sys, time; "
            "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)']); "
            "print(p.pid, flush=True); time.sleep(30)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        grandchild = int(child.stdout.readline())
        tree = own_process_tree()
        assert {os.getpid(), child.pid, grandchild} <= tree
        assert 1 not in tree
    finally:
        child.kill()
        os.kill(grandchild, 9)
    # A process name with spaces and parentheses does not confuse the parser.
    me = os.getpid()
    for pid, stat in ((me, f"{me} (py) S 1 x"), (424242, f"424242 (a) (b c) S {me} y")):
        (tmp_path / str(pid)).mkdir()
        (tmp_path / str(pid) / "stat").write_text(stat)
    assert own_process_tree(tmp_path) == {me, 424242}


def test_the_soak_window_ends_after_the_recorded_h200_drop_at_its_level() -> None:
    """round_loops.SOAK_WINDOW_S on the real heat-up: never while the clock
    is still falling from boost, and at the level a window twice as long
    would have waited for (within 1%)."""
    from gemmreg.timing.round_loops import SOAK_WINDOW_S

    readings = load_recorded("bf16_8192_heatup.json")
    t0 = readings[0].t_s

    def first_steady(window: float) -> int:
        return next(
            i
            for i in range(1, len(readings))
            if gm.clock_steady(readings[: i + 1], window_s=window)
        )

    def level(i: int) -> float:
        return statistics.median(r.sm_mhz for r in readings[max(0, i - 5) : i + 1])

    short, long_ = first_steady(SOAK_WINDOW_S), first_steady(2 * SOAK_WINDOW_S)
    boost = readings[0].sm_mhz
    assert all(r.sm_mhz < 0.9 * boost for r in readings[short - 3 : short + 1])  # past the drop
    assert readings[short].t_s - t0 >= SOAK_WINDOW_S
    assert abs(level(short) - level(long_)) <= 0.01 * level(long_)
