// Connected components of a generated graph: the number of components and a checksum of the
// labelling in which every vertex carries the smallest vertex id of its component.
//
// Input (stdin): "rmat <scale> <edges> <seed>" (a power-law R-MAT graph on 2^scale vertices)
// or "road <width> <height> <seed>" (a grid with about 45 % of its edges deleted: long paths,
// large diameter, many small components). Output: "<components>\n<checksum>\n" where the
// checksum is the sum over v of label[v] * (v % 1024 + 1), modulo 2^64.
//
// The program runs on every core (OpenMP, compiled with -fopenmp); the seed is sequential.
// Everything but main may change: the generators too (their output must stay the same).
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>
#include <omp.h>

using u32 = uint32_t;
using u64 = uint64_t;

// EVOLVE-BLOCK-START
// The graph generators: counter-based (edge i depends only on the seed and i), so both may be
// generated in parallel; the problem's reference generates the same graphs in numpy.
static inline u64 mix(u64 x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static void rmat(u32 scale, u64 m, u64 seed, std::vector<u32>& src, std::vector<u32>& dst) {
    src.resize(m);
    dst.resize(m);
    const u32 mask = (1u << scale) - 1;
    for (u64 i = 0; i < m; i++) {
        u64 h = mix(seed * 0x100000001b3ULL + i);
        u32 u = 0, v = 0;
        for (u32 level = 0; level < scale; level++) {
            if (level && level % 4 == 0) h = mix(h);
            u32 r = (u32)(h >> (16 * (level % 4))) & 0xFFFF;
            u32 bu = r >= 49807, bv = (r >= 37355 && r < 49807) || r >= 62259;
            u = (u << 1) | bu;
            v = (v << 1) | bv;
        }
        src[i] = (u * 2654435761u) & mask;  // scramble ids: hubs are not the low ids
        dst[i] = (v * 2654435761u) & mask;
    }
}

static void road(u32 width, u32 height, u64 seed, std::vector<u32>& src, std::vector<u32>& dst) {
    const u64 cells = (u64)width * height;
    for (u64 e = 0; e < 2 * cells; e++) {
        u64 cell = e / 2;
        u32 x = cell % width, y = cell / width;
        bool right = e % 2 == 0;
        if ((right && x + 1 == width) || (!right && y + 1 == height)) continue;
        if ((mix(seed * 0x100000001b3ULL + e) & 0xFFFF) >= 36045) continue;  // keep 55 %
        src.push_back((u32)cell);
        dst.push_back((u32)(right ? cell + 1 : cell + width));
    }
}

// label[v] = the smallest vertex id in v's component. Sequential: a CSR adjacency, then a BFS
// from each unvisited vertex in increasing order (so the start is its component's minimum).
static std::vector<u32> components(u32 n, const std::vector<u32>& src, const std::vector<u32>& dst) {
    const u64 m = src.size();
    std::vector<u64> offset(n + 1, 0);
    for (u64 i = 0; i < m; i++) {
        offset[src[i] + 1]++;
        offset[dst[i] + 1]++;
    }
    for (u32 v = 0; v < n; v++) offset[v + 1] += offset[v];
    std::vector<u32> adjacent(2 * m);
    std::vector<u64> fill(offset.begin(), offset.end() - 1);
    for (u64 i = 0; i < m; i++) {
        adjacent[fill[src[i]]++] = dst[i];
        adjacent[fill[dst[i]]++] = src[i];
    }
    const u32 none = 0xFFFFFFFFu;
    std::vector<u32> label(n, none);
    std::vector<u32> queue(n);
    for (u32 start = 0; start < n; start++) {
        if (label[start] != none) continue;
        u32 head = 0, tail = 0;
        queue[tail++] = start;
        label[start] = start;
        while (head < tail) {
            u32 v = queue[head++];
            for (u64 k = offset[v]; k < offset[v + 1]; k++) {
                u32 w = adjacent[k];
                if (label[w] == none) {
                    label[w] = start;
                    queue[tail++] = w;
                }
            }
        }
    }
    return label;
}
// EVOLVE-BLOCK-END

int main() {
    char kind[16];
    unsigned long long a, b, seed;
    if (scanf("%15s %llu %llu %llu", kind, &a, &b, &seed) != 4) return 1;
    std::vector<u32> src, dst;
    u32 n;
    if (strcmp(kind, "rmat") == 0) {
        if (a < 1 || a > 30) return 1;
        n = 1u << a;
        rmat((u32)a, b, seed, src, dst);
    } else if (strcmp(kind, "road") == 0) {
        n = (u32)(a * b);
        road((u32)a, (u32)b, seed, src, dst);
    } else {
        return 1;
    }
    std::vector<u32> label = components(n, src, dst);
    u64 count = 0, checksum = 0;
    for (u32 v = 0; v < n; v++) {
        count += label[v] == v;
        checksum += (u64)label[v] * (v % 1024 + 1);
    }
    printf("%llu\n%llu\n", (unsigned long long)count, (unsigned long long)checksum);
    return 0;
}
