/* bootinfo.c - es_boot_info, the loader's hand-over block (es_boot.h).  The
 * only object built once per variant: it records ES_PATCHES. */
#include "kmodel.h"

extern char boot_stack_top[];

struct es_boot_info es_boot_info __attribute__((aligned(64))) = {
    .boot_stack_top = (unsigned long)boot_stack_top,
    .patches = ES_PATCHES,
};

/* The same for the shared objects (setup.c checks the loader kept it). */
const unsigned long es_image_patches = ES_PATCHES;
