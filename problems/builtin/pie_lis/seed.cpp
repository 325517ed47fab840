#include <cstdio>
#include <vector>
// Input: n, then n integers. Output: the length of a longest strictly increasing subsequence.
int main() {
    int n;
    if (std::scanf("%d", &n) != 1) return 1;
    std::vector<int> a(n);
    for (auto &x : a) std::scanf("%d", &x);
    // EVOLVE-BLOCK-START
    std::vector<int> best(n, 1);
    int answer = 0;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < i; j++)
            if (a[j] < a[i] && best[j] + 1 > best[i]) best[i] = best[j] + 1;
        if (best[i] > answer) answer = best[i];
    }
    // EVOLVE-BLOCK-END
    std::printf("%d\n", answer);
    return 0;
}
