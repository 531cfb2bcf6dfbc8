/* Uses the installed C ABI: version, a dry-run engine, its config and one kernel build. */
#include <flashjit/flashjit.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  flashjit_engine_options o;
  flashjit_engine* e = NULL;
  char info[8192];
  size_t needed = 0;
  flashjit_engine_options_init(&o);
  o.read_environment = 0;
  o.disable_cache = 1;
  o.dry_run = 1;
  o.arch = "sm_90a";
  if (flashjit_engine_create(&o, &e) != FLASHJIT_OK) {
    fprintf(stderr, "create: %s\n", flashjit_last_error());
    return 1;
  }
  if (flashjit_engine_show_config(e, info, sizeof(info), &needed) != FLASHJIT_OK ||
      strstr(info, "sm_90a") == NULL) {
    fprintf(stderr, "show_config: %s\n", flashjit_last_error());
    return 1;
  }
  if (flashjit_cache_ls(NULL, NULL, 0, NULL) != FLASHJIT_INVALID_HANDLE) return 1;
  printf("flashjit %s (C ABI %d): C consumer ok\n", flashjit_version(), flashjit_abi_version());
  return flashjit_engine_destroy(e) == FLASHJIT_OK ? 0 : 1;
}
