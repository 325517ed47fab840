#include <iostream>
#include <string>
// Input: a text line and a pattern line (letters). Output: how many times the pattern occurs
// in the text, overlaps counted.
int main() {
    std::string text, pattern;
    if (!(std::cin >> text >> pattern)) return 1;
    // EVOLVE-BLOCK-START
    long count = 0;
    for (size_t i = 0; i + pattern.size() <= text.size(); i++)
        if (text.substr(i, pattern.size()) == pattern) count++;
    // EVOLVE-BLOCK-END
    std::cout << count << "\n";
    return 0;
}
