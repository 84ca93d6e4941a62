"""zinc: a local LLM inference engine for quantized GGUF models."""

__version__ = "0.1.0"
