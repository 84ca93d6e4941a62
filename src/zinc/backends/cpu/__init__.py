"""The NumPy (CPU) backend: `CpuOps`, float32 and readable; the oracle for every other backend."""

from zinc.backends.cpu.ops import CpuOps, CpuWeight

__all__ = ["CpuOps", "CpuWeight"]
