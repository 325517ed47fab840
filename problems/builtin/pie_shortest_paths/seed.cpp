#include <cstdio>
#include <vector>
// Input: n m, then m edges "u v w" (w > 0). Output: the distance from 0 to each vertex (-1 if
// unreachable), space-separated.
int main() {
    int n, m;
    if (std::scanf("%d %d", &n, &m) != 2) return 1;
    std::vector<int> from(m), to(m), weight(m);
    for (int i = 0; i < m; i++) std::scanf("%d %d %d", &from[i], &to[i], &weight[i]);
    // EVOLVE-BLOCK-START
    const long long INF = 1LL << 60;
    std::vector<long long> dist(n, INF);
    dist[0] = 0;
    for (int round = 0; round < n; round++)
        for (int i = 0; i < m; i++)
            if (dist[from[i]] != INF && dist[from[i]] + weight[i] < dist[to[i]])
                dist[to[i]] = dist[from[i]] + weight[i];
    // EVOLVE-BLOCK-END
    for (int v = 0; v < n; v++) std::printf(v ? " %lld" : "%lld", dist[v] == INF ? -1 : dist[v]);
    std::printf("\n");
    return 0;
}
