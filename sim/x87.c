/* x87.c - instruction family (see ops.h for what it covers). */
#include "ops.h"

void es_family_x87(es_handler *t)
{
    (void)t;
}
