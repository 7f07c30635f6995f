#include "b.h"
#include <cstdio>
// clang (split LTO unit) devirtualizes and inlines both calls and drops the
// new/delete pair: after optimization nothing in main.o needs E's vtable or
// E::f(), the only copies of them in the link.
int main() { B *e = new E; int r = e->f(); delete e; std::printf("%d\n", r + k(nullptr)); }
