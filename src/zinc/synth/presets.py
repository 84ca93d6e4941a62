"""The model zoo of `zinc.synth`: one `Preset` per family and size.

A preset holds the hyper-parameters of a real checkpoint (or of a tiny test model of the same
family). `layout.py` turns a preset into the exact tensor list and metadata that llama.cpp expects
for that architecture. Shapes of the full-size presets follow the released checkpoints (HF configs,
`models/ggml-vocab-gemma-4.gguf`, /work/shared/bench/anchors.md); the tiny presets keep every
structural feature of their family (GQA, tied/untied output, sliding/global layers, K-as-V,
DeltaNet + attention, experts, biases, sinks) at a few million parameters.
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Preset:
    """Hyper-parameters of one synthetic model. Dims are in elements; 0 means "not used"."""

    name: str
    arch: str  # general.architecture
    n_embd: int
    n_layer: int
    n_head: int
    n_head_kv: int
    head_dim: int
    n_ff: int = 0
    n_vocab: int = 512
    vocab: str = "qwen2"  # built-in tokenizer family (vocab.py)
    vocab_file: str | None = None  # the matching ggml-vocab-*.gguf, when one exists
    tied: bool = False
    n_ctx: int = 4096
    rope_base: float = 10000.0
    eps: float = 1e-6
    n_rot: int = 0  # 0: the head dim
    # MoE
    n_expert: int = 0
    n_expert_used: int = 0
    n_ff_exp: int = 0
    n_ff_shexp: int = 0
    # Qwen3.5 hybrid (Gated DeltaNet)
    ssm_conv: int = 4
    ssm_state: int = 128  # S = head dim of k and v heads
    ssm_groups: int = 0  # Hk
    ssm_v_heads: int = 0  # Hv
    full_attn_interval: int = 4
    rope_sections: tuple[int, ...] = (11, 11, 10, 0)
    # sliding-window families (gemma3, gemma4, gpt-oss)
    n_swa: int = 0
    swa_period: int = 0  # layer i slides iff i % period < period - 1
    rope_base_swa: float = 10000.0
    head_dim_swa: int = 0  # gemma4: head dim of sliding layers (head_dim is the global one)
    n_rot_swa: int = 0
    n_head_kv_global: int = 0  # gemma4: KV heads of global layers (0: same as n_head_kv)
    k_eq_v: bool = False  # gemma4: global layers have no attn_v (V = raw K)
    rope_partial: float = 0.25  # gemma4: rotated fraction of the global head dim (rope_freqs)
    softcap: float = 0.0
    # rope scaling
    llama3_rope: tuple[float, float, float, int] | None = None  # factor, low, high, orig ctx
    yarn: tuple[float, int] | None = None  # factor, original context
    published_params: float | None = None  # billions, for the size tests
    note: str = ""

    # -- derived -----------------------------------------------------------------------------
    @property
    def tiny(self) -> bool:
        return self.name.endswith("-tiny")

    def is_swa(self, il: int) -> bool:
        return self.swa_period > 0 and il % self.swa_period < self.swa_period - 1

    def is_recurrent(self, il: int) -> bool:
        return self.arch in ("qwen35", "qwen35moe") and (il + 1) % self.full_attn_interval != 0

    def layer_head_dim(self, il: int) -> int:
        if self.head_dim_swa and self.is_swa(il):
            return self.head_dim_swa
        return self.head_dim

    def layer_kv_heads(self, il: int) -> int:
        if self.n_head_kv_global and not self.is_swa(il):
            return self.n_head_kv_global
        return self.n_head_kv

    @property
    def rot(self) -> int:
        return self.n_rot or self.head_dim

    def with_vocab(self, n_vocab: int) -> "Preset":
        return replace(self, n_vocab=n_vocab)


def _p(**kw) -> Preset:
    return Preset(**kw)


_QWEN3 = dict(arch="qwen3", vocab="qwen2", vocab_file="ggml-vocab-qwen2.gguf", rope_base=1e6, eps=1e-6)
_QWEN3MOE = dict(_QWEN3, arch="qwen3moe")
_LLAMA3 = dict(arch="llama", vocab="llama3", vocab_file="ggml-vocab-llama-bpe.gguf", rope_base=500000.0,
               eps=1e-5)
_QWEN35 = dict(arch="qwen35", vocab="qwen35", vocab_file="ggml-vocab-qwen35.gguf", rope_base=1e7, eps=1e-6)
_QWEN35MOE = dict(_QWEN35, arch="qwen35moe")
_GEMMA3 = dict(arch="gemma3", vocab="gemma3", tied=True, rope_base=1e6, rope_base_swa=10000.0, eps=1e-6,
               swa_period=6)
_GEMMA4 = dict(arch="gemma4", vocab="gemma4", vocab_file="ggml-vocab-gemma-4.gguf", tied=True, rope_base=1e6,
               rope_base_swa=10000.0, eps=1e-6, swa_period=6, k_eq_v=True, softcap=30.0, rope_partial=0.25)
_GPTOSS = dict(arch="gpt-oss", vocab="gpt-oss", rope_base=150000.0, eps=1e-5, swa_period=2, yarn=(32.0, 4096))

PRESETS: dict[str, Preset] = {p.name: p for p in [
    # ---- full-size shapes ------------------------------------------------------------------
    _p(name="qwen3-8b", **_QWEN3, n_embd=4096, n_layer=36, n_head=32, n_head_kv=8, head_dim=128,
       n_ff=12288, n_vocab=151936, n_ctx=40960, published_params=8.19,
       note="Qwen3-8B; the speed anchor of bench/anchors.md"),
    _p(name="qwen3-30b-a3b", **_QWEN3MOE, n_embd=2048, n_layer=48, n_head=32, n_head_kv=4, head_dim=128,
       n_ff=6144, n_expert=128, n_expert_used=8, n_ff_exp=768, n_vocab=151936, n_ctx=40960,
       published_params=30.53, note="Qwen3-30B-A3B"),
    _p(name="llama3-8b", **_LLAMA3, n_embd=4096, n_layer=32, n_head=32, n_head_kv=8, head_dim=128,
       n_ff=14336, n_vocab=128256, n_ctx=131072, llama3_rope=(8.0, 1.0, 4.0, 8192),
       published_params=8.03, note="Llama-3.1-8B (with rope_freqs)"),
    _p(name="qwen35-9b", **{**_QWEN35, "vocab_file": None}, n_embd=4096, n_layer=32, n_head=16, n_head_kv=4,
       head_dim=256, n_rot=64, n_ff=12288, ssm_groups=16, ssm_v_heads=32, ssm_state=128, n_vocab=248320,
       n_ctx=262144, published_params=8.95,
       note="Qwen3.5-9B text model (no MTP block); built-in vocab of the real size (248,320)"),
    _p(name="qwen35-35b-a3b", **_QWEN35MOE, n_embd=2048, n_layer=40, n_head=16, n_head_kv=2, head_dim=256,
       n_rot=64, ssm_groups=16, ssm_v_heads=32, ssm_state=128, n_expert=256, n_expert_used=8,
       n_ff_exp=512, n_ff_shexp=512, n_vocab=151936, n_ctx=262144, published_params=34.27,
       note="Qwen3.5-35B-A3B shape with the 151,936-token Qwen vocab (MoE anchor)"),
    _p(name="gemma3-270m", **_GEMMA3, vocab_file=None, n_embd=640, n_layer=18, n_head=4, n_head_kv=1,
       head_dim=256, n_ff=2048, n_vocab=262144, n_ctx=32768, n_swa=512, published_params=0.268,
       note="Gemma 3 270M"),
    _p(name="gemma4-31b", **_GEMMA4, n_embd=5376, n_layer=60, n_head=32, n_head_kv=16, n_head_kv_global=4,
       head_dim=512, head_dim_swa=256, n_rot_swa=256, n_ff=21504, n_vocab=262144, n_ctx=262144,
       n_swa=1024, published_params=30.7, note="Gemma 4 31B (dense)"),
    _p(name="gemma4-26b-a4b", **_GEMMA4, n_embd=2816, n_layer=30, n_head=16, n_head_kv=8, n_head_kv_global=2,
       head_dim=512, head_dim_swa=256, n_rot_swa=256, n_ff=2112, n_expert=128, n_expert_used=8,
       n_ff_exp=704, n_vocab=262144, n_ctx=262144, n_swa=1024, published_params=25.2,
       note="Gemma 4 26B-A4B (hyper-parameters of models/ggml-vocab-gemma-4.gguf)"),
    _p(name="gpt-oss-20b", **_GPTOSS, n_embd=2880, n_layer=24, n_head=64, n_head_kv=8, head_dim=64,
       n_ff=2880, n_expert=32, n_expert_used=4, n_ff_exp=2880, n_vocab=201088, n_ctx=131072, n_swa=128,
       published_params=20.9, note="gpt-oss-20b"),
    # ---- tiny test models --------------------------------------------------------------------
    _p(name="qwen3-tiny", **_QWEN3, n_embd=256, n_layer=4, n_head=4, n_head_kv=2, head_dim=64, n_ff=512),
    _p(name="qwen3moe-tiny", **_QWEN3MOE, n_embd=256, n_layer=4, n_head=4, n_head_kv=2, head_dim=64,
       n_ff=512, n_expert=16, n_expert_used=4, n_ff_exp=128),
    _p(name="llama3-tiny", **_LLAMA3, n_embd=256, n_layer=4, n_head=4, n_head_kv=2, head_dim=64, n_ff=512,
       tied=True, llama3_rope=(8.0, 1.0, 4.0, 64)),
    _p(name="qwen35-tiny", **_QWEN35, n_embd=256, n_layer=8, n_head=4, n_head_kv=2, head_dim=64, n_rot=16,
       rope_sections=(3, 3, 2, 0), n_ff=256, ssm_groups=2, ssm_v_heads=4, ssm_state=32, tied=True),
    _p(name="qwen35moe-tiny", **_QWEN35MOE, n_embd=256, n_layer=4, n_head=4, n_head_kv=2, head_dim=64,
       n_rot=16, rope_sections=(3, 3, 2, 0), ssm_groups=2, ssm_v_heads=4, ssm_state=32, n_expert=16,
       n_expert_used=4, n_ff_exp=128, n_ff_shexp=128),
    _p(name="gemma3-tiny", **_GEMMA3, n_embd=256, n_layer=6, n_head=4, n_head_kv=1, head_dim=64, n_ff=512,
       n_swa=16),
    _p(name="gemma4-tiny", **{**_GEMMA4, "swa_period": 3}, n_embd=256, n_layer=6, n_head=4, n_head_kv=2,
       n_head_kv_global=1, head_dim=128, head_dim_swa=64, n_rot_swa=64, n_ff=512, n_swa=16),
    _p(name="gemma4moe-tiny", **{**_GEMMA4, "swa_period": 3}, n_embd=256, n_layer=6, n_head=4, n_head_kv=2,
       n_head_kv_global=1, head_dim=128, head_dim_swa=64, n_rot_swa=64, n_ff=256, n_expert=16,
       n_expert_used=4, n_ff_exp=128, n_swa=16),
    _p(name="gpt-oss-tiny", **_GPTOSS, n_embd=192, n_layer=4, n_head=4, n_head_kv=2, head_dim=64, n_ff=192,
       n_expert=16, n_expert_used=4, n_ff_exp=192, n_swa=16),
]}

# aliases: the architecture name picks its tiny model, "qwen3moe" the real 30B-A3B shape
ALIASES = {"qwen3moe": "qwen3-30b-a3b", "gemma3": "gemma3-tiny", "qwen35moe-35b-a3b": "qwen35-35b-a3b"}


def get_preset(name: str) -> Preset:
    """Look a preset up by name (or alias); KeyError lists the known names."""
    key = ALIASES.get(name, name)
    try:
        return PRESETS[key]
    except KeyError:
        raise KeyError(f"unknown preset {name!r}; known: {', '.join(sorted(PRESETS))}") from None


def preset_names(tiny: bool | None = None) -> list[str]:
    """Preset names in table order; ``tiny`` filters tiny (True) or full-size (False) ones."""
    return [n for n, p in PRESETS.items() if tiny is None or p.tiny == tiny]
