/* stack.c - instruction family (see ops.h for what it covers). */
#include "ops.h"

void es_family_stack(es_handler *t)
{
    (void)t;
}
