#include "engine.h"
#include <cstdio>

int main(int argc, char **argv) {
  constexpr int N = 1000;
  int rounds = 100000;
  if (argc > 1)
    std::sscanf(argv[1], "%d", &rounds);
  Engine *engines[N];
  for (int i = 0; i < N; ++i)
    engines[i] = make_diesel(i % 7);
  // One Electric, outside the hot loop: the hierarchy is open all the same.
  Engine *e = make_electric(5);
  std::printf("electric step %ld\n", e->step(1));
  std::printf("run %ld over %d rounds\n", run(engines, N, rounds), rounds);
  delete e;
  for (Engine *x : engines)
    delete x;
  return 0;
}
