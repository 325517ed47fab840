/* Workload for the PPMd corpus (written for evoforge; PPMd is fetched at set-up).
 * Encodes and decodes 24 KiB of deterministic text-like data with PPMd var.H (order 6)
 * and returns 0 only if the round trip matches. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "Ppmd7.h"

#define SIZE (24 * 1024)

static void *alloc(size_t size) { return malloc(size); }
static void release(void *address) { free(address); }
static const IAlloc allocator = {alloc, release};

typedef struct { IByteOut vt; unsigned char *data; size_t at; } Out;
typedef struct { IByteIn vt; const unsigned char *data; size_t at, size; } In;

static void put(const IByteOut *p, Byte b) { Out *o = (Out *)p; o->data[o->at++] = b; }
static Byte get(const IByteIn *p) {
    In *i = (In *)p;
    return i->at < i->size ? i->data[i->at++] : 0;
}

int main(void) {
    static const char *words[] = {"alpha ", "beta ", "gamma ", "delta ", "model ", "range ",
                                  "coder ", "symbol ", "context ", "order "};
    unsigned char *src = malloc(SIZE), *packed = malloc(2 * SIZE), *out = malloc(SIZE);
    unsigned state = 777u;
    for (int at = 0; at < SIZE;) {
        state = state * 1103515245u + 12345u;
        for (const char *c = words[(state >> 16) % 10]; *c && at < SIZE; c++) src[at++] = *c;
    }
    CPpmd7 model;
    Ppmd7_Construct(&model);
    if (!Ppmd7_Alloc(&model, 1 << 22, &allocator)) return 1;
    Out o = {{put}, packed, 0};
    CPpmd7z_RangeEnc enc;
    Ppmd7z_RangeEnc_Init(&enc);
    enc.Stream = &o.vt;
    Ppmd7_Init(&model, 6);
    for (int k = 0; k < SIZE; k++) Ppmd7_EncodeSymbol(&model, &enc, src[k]);
    Ppmd7z_RangeEnc_FlushData(&enc);
    In i = {{get}, packed, 0, o.at};
    CPpmd7z_RangeDec dec;
    dec.Stream = &i.vt;
    if (!Ppmd7z_RangeDec_Init(&dec)) return 2;
    Ppmd7_Init(&model, 6);
    for (int k = 0; k < SIZE; k++) {
        int symbol = Ppmd7_DecodeSymbol(&model, &dec);
        if (symbol < 0) return 3;
        out[k] = (unsigned char)symbol;
    }
    if (memcmp(src, out, SIZE)) return 4;
    printf("ppmd workload ok %zu\n", o.at);
    Ppmd7_Free(&model, &allocator);
    free(src), free(packed), free(out);
    return 0;
}
