#include "b.h"
#include <cstdio>
int main() {
  B *d = make_d(), *b = new B;
  std::printf("%d %d\n", test(*d), test(*b));
  delete d; delete b;
}
