/* alu.c - instruction family (see ops.h for what it covers). */
#include "ops.h"

void es_family_alu(es_handler *t)
{
    (void)t;
}
