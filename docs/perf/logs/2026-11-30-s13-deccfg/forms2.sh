# Session 13 deccfg call 2's A/B forms: NAME ENV CONFIGS SHAPES (ENV "-": none).
MODEL_SHAPES=tp8:1x4096,tp8:1x16384,tp8:64x1024,tp8:64x4096,tp8:64x16384,tp4:1x4096,tp4:1x16384,tp4:16x1024,tp4:16x4096,tp4:16x16384,qwen7b:1x4096,qwen7b:1x16384,qwen7b:16x1024,qwen7b:16x4096,qwen7b:16x16384,mha:1x1024,mha:1x4096,mha:1x16384
STAGE_SHAPES=gemma2:1x1024,gemma2:1x4096,gemma2:1x16384,gemma2:16x1024,gemma2:16x4096,gemma2:16x16384,gemma2:64x1024,gemma2:64x4096,gemma2:64x16384,gemma2:256x1024,gemma2:256x4096,gemma2w:1x16384,gemma2w:16x16384,gemma2w:64x16384
FORMS=("model-s12 FLASHJIT_DECODE_PLAN_MODEL=s12 tp8,tp4,qwen7b,mha $MODEL_SHAPES"
       "model-s13 - tp8,tp4,qwen7b,mha $MODEL_SHAPES"
       "stages2 FLASHJIT_DECODE_STAGES=2 gemma2,gemma2w $STAGE_SHAPES"
       "stages3 - gemma2,gemma2w $STAGE_SHAPES")
