#include <cstdio>
#include <vector>
// Input: n, then n integers. Output: the number of pairs i < j with a[i] > a[j].
int main() {
    int n;
    if (std::scanf("%d", &n) != 1) return 1;
    std::vector<long long> a(n);
    for (auto &x : a) std::scanf("%lld", &x);
    // EVOLVE-BLOCK-START
    long long count = 0;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (a[i] > a[j]) count++;
    // EVOLVE-BLOCK-END
    std::printf("%lld\n", count);
    return 0;
}
