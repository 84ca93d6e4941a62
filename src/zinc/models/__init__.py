"""Model architectures written once against the op interface, found by `general.architecture`."""

from zinc.models.base import Config
from zinc.models.registry import get_architecture, supported_architectures

__all__ = ["Config", "get_architecture", "supported_architectures"]
