/* kimage.h - a guest kernel image checked and parsed (kimage.c): its ELF
 * and program headers and its symbol table, sorted.  kernel.c loads a
 * parsed image into a machine; a machine parses its own image, or a batch
 * of machines shares parsed ones (kernel.h: es_kimages). */
#ifndef ENTRYSIM_KIMAGE_H
#define ENTRYSIM_KIMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "machine.h"

struct es_kimage;

#ifdef __cplusplus
extern "C" {
#endif

/* Checks the ELF header and reads the PT_LOAD headers of data (borrowed:
 * it must outlive the parsing and the loading) into *img.  0, or -1 with
 * a one-line reason in m->message. */
int es_kimage_headers(es_machine *m, struct es_kimage *img, const uint8_t *data, size_t size);
/* After es_kimage_headers: the symbol table (ksyms.c) of the image's span.
 * 0, or -1 with m->message. */
int es_kimage_symbols(es_machine *m, struct es_kimage *img);
/* Frees a heap-allocated image and what it holds (NULL: nothing). */
void es_kimage_free(struct es_kimage *img);

/* The embedded image of patch set `patches` (0..ES_CONV_V417): 0 with
 * *data, *size, or -1 with m->message (no such set, or not built). */
int es_kimage_embedded(es_machine *m, unsigned patches, const uint8_t **data, size_t *size);
/* DIR/build/kernel-pNN.elf into path (pathlen bytes): 0, or -1 with
 * m->message (no such set, path too long). */
int es_kimage_path(es_machine *m, const char *dir, unsigned patches, char *path, size_t pathlen);
/* Reads a whole image file of the tree `dir` (at most 32 MiB) into *out
 * (malloc'd, the caller frees it).  0, or -1 with m->message. */
int es_kimage_read_file(es_machine *m, const char *dir, const char *path, uint8_t **out,
                        size_t *size);

#ifdef __cplusplus
}
#endif
#endif
