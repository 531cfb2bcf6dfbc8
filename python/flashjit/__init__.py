"""flashjit: JIT-specialised LLM inference kernels, with FlashInfer's Python API.

A thin ctypes layer over libflashjit.so's C ABI (no compile step; PyTorch optional at import).
Module, function and class names and their arguments follow FlashInfer's, so code written for
FlashInfer runs by changing the import; deliberate differences are listed in
docs/FROM_FLASHINFER.md.
"""

from . import activation, cascade, decode, errors, norm, page, rope, sampling
from ._lib import lib as _clib
from ._lib import library_path
from .activation import gelu_and_mul, gelu_tanh_and_mul, silu_and_mul
from .cascade import merge_state, merge_state_in_place, merge_states
from .decode import (BatchDecodeWithPagedKVCacheWrapper,
                     CUDAGraphBatchDecodeWithPagedKVCacheWrapper, single_decode_with_kv_cache)
from .engine import (Engine, bundle_inspect, bundle_keygen, get_default_engine,
                     set_default_engine, spec_ops)
from .errors import (CompileError, CudaError, FlashJITError, InvalidArgumentError,
                     InvalidHandleError, NoDriverError)
from .norm import (fused_add_rmsnorm, gemma_fused_add_rmsnorm, gemma_rmsnorm, layernorm,
                   rmsnorm)
from .page import append_paged_kv_cache, get_batch_indices_positions, get_seq_lens
from .rope import (apply_llama31_rope, apply_llama31_rope_inplace, apply_llama31_rope_pos_ids,
                   apply_llama31_rope_pos_ids_inplace, apply_rope, apply_rope_inplace,
                   apply_rope_pos_ids, apply_rope_pos_ids_inplace, apply_rope_with_cos_sin_cache,
                   apply_rope_with_cos_sin_cache_inplace)
from .sampling import (chain_speculative_sampling, min_p_sampling_from_probs,
                       sampling_from_logits, sampling_from_probs, softmax, top_k_mask_logits,
                       top_k_renorm_probs, top_k_sampling_from_probs,
                       top_k_top_p_sampling_from_logits, top_k_top_p_sampling_from_probs,
                       top_p_renorm_probs, top_p_sampling_from_probs)

__version__ = _clib.flashjit_version().decode()
