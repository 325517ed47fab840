/* Workload for the lz4 corpus (written for evoforge; lz4 itself is fetched at set-up).
 * Compresses and decompresses 64 KiB of deterministic text-like data with the block,
 * HC and frame APIs, checks every round trip and returns 0 only if all of them match. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lz4.h"
#include "lz4frame.h"
#include "lz4hc.h"

#define SIZE (64 * 1024)

static void fill(char *data, int size) {
    static const char *words[] = {"the ", "quick ", "brown ", "fox ", "jumps ", "over ",
                                  "lazy ", "dog ", "and ", "compiler ", "inlines ", "code "};
    unsigned state = 12345u;
    int at = 0;
    while (at < size) {
        state = state * 1103515245u + 12345u;
        const char *word = words[(state >> 16) % 12];
        for (const char *c = word; *c && at < size; c++) data[at++] = *c;
        if ((state >> 8) % 17 == 0 && at < size) data[at++] = (char)('0' + (state >> 4) % 10);
    }
}

int main(void) {
    char *src = malloc(SIZE), *out = malloc(SIZE);
    int bound = LZ4_compressBound(SIZE);
    char *packed = malloc(bound);
    size_t frame_bound = LZ4F_compressFrameBound(SIZE, NULL);
    char *frame = malloc(frame_bound);
    unsigned long checksum = 0;
    fill(src, SIZE);
    for (int round = 0; round < 1; round++) {
        int n = LZ4_compress_default(src, packed, SIZE, bound);
        if (n <= 0 || LZ4_decompress_safe(packed, out, n, SIZE) != SIZE) return 1;
        if (memcmp(src, out, SIZE)) return 2;
        checksum += (unsigned long)n;
        n = LZ4_compress_HC(src, packed, SIZE, bound, 4 + round);
        if (n <= 0 || LZ4_decompress_safe(packed, out, n, SIZE) != SIZE) return 3;
        checksum += (unsigned long)n;
        size_t f = LZ4F_compressFrame(frame, frame_bound, src, SIZE, NULL);
        if (LZ4F_isError(f)) return 4;
        LZ4F_dctx *dctx;
        if (LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION))) return 5;
        size_t dst_size = SIZE, src_size = f;
        LZ4F_decompress(dctx, out, &dst_size, frame, &src_size, NULL);
        LZ4F_freeDecompressionContext(dctx);
        if (dst_size != SIZE || memcmp(src, out, SIZE)) return 6;
        checksum += (unsigned long)f;
    }
    printf("lz4 workload ok %lu\n", checksum);
    free(src), free(out), free(packed), free(frame);
    return 0;
}
