#include "b.h"
int B::f(int x) { return x + 1; }
struct D : B { int f(int) override { throw 42; } }; // always throws
B *make(int which) { return which ? new D : new B; }
