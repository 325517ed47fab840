/* A small C program written for evoforge's tests: call sites worth inlining and not. */
#include <stddef.h>

static int square(int x) { return x * x; }
static int clamp(int x, int low, int high) { return x < low ? low : x > high ? high : x; }

static unsigned mix(unsigned h, unsigned v) {
    h ^= v + 0x9e3779b9u + (h << 6) + (h >> 2);
    h = (h << 13) | (h >> 19);
    return h * 5u + 0xe6546b64u;
}

static unsigned hash_bytes(const unsigned char *data, size_t n) {
    unsigned h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = mix(h, data[i]);
    return h;
}

static int sum_squares(const int *values, int n) {
    int total = 0;
    for (int i = 0; i < n; i++) total += square(clamp(values[i], -100, 100));
    return total;
}

int checksum(const unsigned char *data, size_t n, const int *values, int count) {
    unsigned h = hash_bytes(data, n);
    int s = sum_squares(values, count);
    for (int round = 0; round < 3; round++) h = mix(h, (unsigned)s + round);
    return (int)(h ^ (unsigned)square(s & 0xff));
}

int checksum2(const unsigned char *data, size_t n) {
    return (int)hash_bytes(data, n) + clamp((int)n, 0, 4096);
}

int main(void) {
    unsigned char data[4096];
    int values[512];
    for (int i = 0; i < 4096; i++) data[i] = (unsigned char)(i * 31 + 7);
    for (int i = 0; i < 512; i++) values[i] = (i * 37) % 301 - 150;
    int total = 0;
    for (int k = 0; k < 200; k++) total += checksum(data, 4096, values, 512) + checksum2(data, k);
    return total == 42 ? 1 : 0;
}
