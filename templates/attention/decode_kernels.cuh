// The decode family's translation unit: the attention kernel and the merge of split requests.
#pragma once

#include "attention/decode.cuh"
#include "attention/decode_merge.cuh"
