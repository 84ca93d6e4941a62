"""Synthetic GGUF models: the exact tensors and metadata of a real model family and size, random weights.

    from zinc.synth import write_model
    write_model("/tmp/q.gguf", "qwen3-tiny", ftype="Q4_K_M", seed=0)

or ``python -m zinc.synth qwen3-8b -o /tmp/qwen3-8b.gguf --ftype Q4_K_M``. Presets (`presets.py`) cover
llama, qwen3, qwen3moe, qwen35, qwen35moe, gemma3, gemma4 and gpt-oss at real sizes and as tiny test
models; `quantmix.py` assigns per-tensor types like `llama-quantize`; `vocab.py` copies a tokenizer
from a vocab GGUF or builds a small self-contained one.
"""

from zinc.synth.build import PlannedTensor, WriteResult, plan, write_model
from zinc.synth.layout import TensorSpec, model_metadata, n_params, tensor_specs
from zinc.synth.presets import PRESETS, Preset, get_preset, preset_names
from zinc.synth.quantmix import FTYPES, plan_types, tensor_type

__all__ = [
    "FTYPES", "PRESETS", "PlannedTensor", "Preset", "TensorSpec", "WriteResult", "get_preset",
    "model_metadata", "n_params", "plan", "plan_types", "preset_names", "tensor_specs", "tensor_type",
    "write_model",
]
