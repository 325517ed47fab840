#include <cstdio>
// Input: n. Output: how many primes are <= n.
int main() {
    long n;
    if (std::scanf("%ld", &n) != 1) return 1;
    // EVOLVE-BLOCK-START
    long count = 0;
    for (long k = 2; k <= n; k++) {
        bool prime = true;
        for (long d = 2; d < k; d++)
            if (k % d == 0) { prime = false; break; }
        if (prime) count++;
    }
    // EVOLVE-BLOCK-END
    std::printf("%ld\n", count);
    return 0;
}
