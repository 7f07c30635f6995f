#include "engine.h"

struct Electric final : Engine {
  long volts;
  explicit Electric(int volts) : volts(volts) {}
  long step(long x) const override { return x + volts; }
};

Engine *make_electric(int volts) { return new Electric(volts); }
