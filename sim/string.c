/* string.c - instruction family (see ops.h for what it covers). */
#include "ops.h"

void es_family_string(es_handler *t)
{
    (void)t;
}
