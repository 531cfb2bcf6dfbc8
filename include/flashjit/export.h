// Symbol visibility for libflashjit. Everything not marked FLASHJIT_API is hidden.
#pragma once

#if defined(FLASHJIT_BUILDING_LIBRARY)
#define FLASHJIT_API __attribute__((visibility("default")))
#else
#define FLASHJIT_API
#endif
