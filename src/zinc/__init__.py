"""zinc: a local LLM inference engine for quantized GGUF models.

    import zinc
    m = zinc.load("model.gguf", backend="cpu", n_ctx=4096)
    logits = m.logits(m.tokenize("Hello"))
"""

__version__ = "0.1.0"


def load(path, backend: str = "cpu", n_ctx: int = 4096, **options):
    """Load a GGUF model on a backend; see `zinc.api.load` for the options."""
    from zinc.api import load as _load

    return _load(path, backend=backend, n_ctx=n_ctx, **options)


__all__ = ["load", "__version__"]
