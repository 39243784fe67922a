/* ui_png.c - a small PNG writer, and a reader for what it writes.
 *
 * PNG (W3C PNG specification, 2nd ed.): signature, IHDR, IDAT, IEND
 * chunks, each with a CRC-32 over type + data.  Each row is a filter byte
 * (0 = None) followed by R, G, B; the rows are one zlib stream (zlib's
 * compress2: the screenshots go into docs/ and the golden images into
 * tests/, so they should be small -- a 1440x860 window is 3.7 MB stored,
 * about 100 KB deflated, the panels being mostly flat colour).  The reader
 * accepts exactly what the writer produces -- it exists so the tests can
 * compare a render against a golden image -- and refuses anything else with
 * a reason. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "ui.h"

static const uint8_t png_sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};

static void be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
}

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int put_chunk(FILE *fp, const char *type, const uint8_t *data, size_t n)
{
    uint8_t hdr[8], tail[4];
    be32(hdr, (uint32_t)n);
    memcpy(hdr + 4, type, 4);
    uLong crc = crc32(0L, hdr + 4, 4);
    if (n)
        crc = crc32(crc, data, (uInt)n);
    be32(tail, (uint32_t)crc);
    return fwrite(hdr, 1, 8, fp) == 8 && (n == 0 || fwrite(data, 1, n, fp) == n) &&
                   fwrite(tail, 1, 4, fp) == 4
               ? 0
               : -1;
}

int es_png_write(const char *path, const uint32_t *px, int w, int h, int pitch, char *err,
                 size_t errlen)
{
    if (w <= 0 || h <= 0 || w > 16384 || h > 16384) {
        snprintf(err, errlen, "%s: bad image size %dx%d", path, w, h);
        return -1;
    }
    size_t row = (size_t)w * 3 + 1, raw_n = row * (size_t)h;
    uLongf z_n = compressBound((uLong)raw_n);
    uint8_t *raw = malloc(raw_n), *z = malloc(z_n);
    if (!raw || !z) {
        free(raw), free(z);
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    for (int y = 0; y < h; y++) {
        uint8_t *r = raw + (size_t)y * row;
        r[0] = 0; /* filter type None */
        for (int x = 0; x < w; x++) {
            uint32_t p = px[(size_t)y * pitch + x];
            r[1 + 3 * x] = (uint8_t)(p >> 16);
            r[2 + 3 * x] = (uint8_t)(p >> 8);
            r[3 + 3 * x] = (uint8_t)p;
        }
    }
    int zrc = compress2(z, &z_n, raw, (uLong)raw_n, 6);
    free(raw);
    if (zrc != Z_OK) {
        free(z);
        snprintf(err, errlen, "%s: zlib error %d", path, zrc);
        return -1;
    }
    FILE *fp = fopen(path, "wb");
    if (!fp) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        free(z);
        return -1;
    }
    uint8_t ihdr[13];
    be32(ihdr, (uint32_t)w), be32(ihdr + 4, (uint32_t)h);
    ihdr[8] = 8;  /* bit depth */
    ihdr[9] = 2;  /* colour type: truecolour */
    ihdr[10] = 0; /* compression: deflate */
    ihdr[11] = 0; /* filter method 0 (per-row filter byte) */
    ihdr[12] = 0; /* not interlaced */
    int bad = fwrite(png_sig, 1, 8, fp) != 8 || put_chunk(fp, "IHDR", ihdr, 13) ||
              put_chunk(fp, "IDAT", z, z_n) || put_chunk(fp, "IEND", NULL, 0);
    free(z);
    if (fclose(fp) != 0)
        bad = 1;
    if (bad) {
        snprintf(err, errlen, "%s: write failed: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* The whole file in memory (PNGs here are a few hundred KB). */
static uint8_t *slurp(const char *path, size_t *n, char *err, size_t errlen)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, len = 0;
    uint8_t *b = malloc(cap);
    while (b) {
        len += fread(b + len, 1, cap - len, fp);
        if (len < cap)
            break;
        uint8_t *nb = cap < ((size_t)1 << 28) ? realloc(b, cap * 2) : NULL;
        if (!nb) {
            free(b);
            b = NULL;
            break;
        }
        b = nb, cap *= 2;
    }
    fclose(fp);
    if (!b)
        snprintf(err, errlen, "%s: too large or out of memory", path);
    *n = len;
    return b;
}

/* Collects IHDR and the concatenated IDAT data; 0 or -1 with why. */
static int parse_chunks(const uint8_t *f, size_t n, uint32_t *W, uint32_t *H, uint8_t **z,
                        size_t *z_n, const char **why)
{
    bool seen_ihdr = false;
    if (n < 8 || memcmp(f, png_sig, 8))
        return *why = "not a PNG file", -1;
    for (size_t p = 8; p < n;) {
        if (n - p < 12)
            return *why = "truncated chunk", -1;
        uint32_t len = rd32(f + p);
        if (len > n - p - 12)
            return *why = "chunk length past the end of the file", -1;
        const uint8_t *type = f + p + 4, *data = f + p + 8;
        if ((uint32_t)crc32(0L, type, 4 + len) != rd32(data + len))
            return *why = "chunk CRC mismatch", -1;
        if (!memcmp(type, "IHDR", 4)) {
            if (len != 13 || data[8] != 8 || data[9] != 2 || data[10] || data[11] || data[12])
                return *why = "only 8-bit RGB, non-interlaced PNGs are read", -1;
            *W = rd32(data), *H = rd32(data + 4);
            if (!*W || !*H || *W > 16384 || *H > 16384)
                return *why = "bad image size", -1;
            seen_ihdr = true;
        } else if (!memcmp(type, "IDAT", 4)) {
            uint8_t *nz = realloc(*z, *z_n + len + 1);
            if (!nz)
                return *why = "out of memory", -1;
            *z = nz;
            memcpy(*z + *z_n, data, len);
            *z_n += len;
        } else if (!memcmp(type, "IEND", 4)) {
            if (!seen_ihdr || !*z_n)
                return *why = "missing IHDR or IDAT", -1;
            return 0;
        }
        p += 12 + (size_t)len;
    }
    return *why = "no IEND chunk", -1;
}

int es_png_read(const char *path, uint32_t **out, int *w, int *h, char *err, size_t errlen)
{
    *out = NULL;
    size_t n = 0, z_n = 0;
    uint8_t *f = slurp(path, &n, err, errlen), *z = NULL, *raw = NULL;
    if (!f)
        return -1;
    uint32_t W = 0, H = 0;
    const char *why = NULL;
    uint32_t *px = NULL;
    if (parse_chunks(f, n, &W, &H, &z, &z_n, &why) == 0) {
        size_t row = (size_t)W * 3 + 1;
        uLongf raw_n = (uLongf)(row * H);
        raw = malloc(raw_n + 1);
        px = raw ? malloc((size_t)W * H * sizeof *px) : NULL;
        uLongf got = raw_n + 1; /* one spare byte: longer data is an error */
        if (!px)
            why = "out of memory";
        else if (uncompress(raw, &got, z, (uLong)z_n) != Z_OK || got != raw_n)
            why = "corrupt image data (or size not matching IHDR)";
        for (uint32_t y = 0; !why && y < H; y++) {
            const uint8_t *r = raw + (size_t)y * row;
            if (r[0] != 0) {
                why = "row filter other than None";
                break;
            }
            for (uint32_t x = 0; x < W; x++)
                px[(size_t)y * W + x] = 0xFF000000u | (uint32_t)r[1 + 3 * x] << 16 |
                                        (uint32_t)r[2 + 3 * x] << 8 | r[3 + 3 * x];
        }
    }
    free(f), free(z), free(raw);
    if (why) {
        free(px);
        snprintf(err, errlen, "%s: %s", path, why);
        return -1;
    }
    *out = px, *w = (int)W, *h = (int)H;
    return 0;
}
