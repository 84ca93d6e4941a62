"""The Vulkan/Metal backend (wgpu + WGSL); importing it needs wgpu, which `VulkanOps` loads lazily."""

from zinc.backends.vulkan.ops import VulkanOps, VkArray
from zinc.backends.vulkan.weights import VkWeight

__all__ = ["VulkanOps", "VkArray", "VkWeight"]
