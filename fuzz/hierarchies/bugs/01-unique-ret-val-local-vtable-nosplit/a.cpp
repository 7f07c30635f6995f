#include "b.h"
bool B::f(int) { return false; }
namespace { struct D : B { bool f(int) override { return true; } }; }
B *make_d() { return new D; }
bool test(B &b) { return b.f(1); }
