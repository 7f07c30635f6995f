#include "engine.h"

Engine::~Engine() {}

namespace {
struct Diesel final : Engine {
  long size;
  explicit Diesel(int size) : size(size) {}
  long step(long x) const override { return x * 3 + size; }
};
} // namespace

Engine *make_diesel(int size) { return new Diesel(size); }

long run(Engine *const *engines, int n, int rounds) {
  long sum = 0;
  for (int r = 0; r < rounds; ++r)
    for (int i = 0; i < n; ++i)
      sum = engines[i]->step(sum & 0xffff) + r;
  return sum;
}
