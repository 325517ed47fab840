#include <cstdio>
#include <vector>
// Input: n capacity, then n items "weight value". Output: the largest total value of a subset
// whose total weight is at most the capacity.
static std::vector<int> weight, value;

// EVOLVE-BLOCK-START
static long best(int i, int capacity) {
    if (i == (int)weight.size()) return 0;
    long skip = best(i + 1, capacity);
    if (weight[i] > capacity) return skip;
    long take = value[i] + best(i + 1, capacity - weight[i]);
    return take > skip ? take : skip;
}
// EVOLVE-BLOCK-END

int main() {
    int n, capacity;
    if (std::scanf("%d %d", &n, &capacity) != 2) return 1;
    weight.resize(n);
    value.resize(n);
    for (int i = 0; i < n; i++) std::scanf("%d %d", &weight[i], &value[i]);
    std::printf("%ld\n", best(0, capacity));
    return 0;
}
