#include "b.h"
#include <cstdio>
int main() {
  for (int i = 0; i < 2; ++i) {
    B *b = make(i);
    try { std::printf("f: %d\n", b->f(i)); } catch (int e) { std::printf("caught %d\n", e); }
    delete b;
  }
}
