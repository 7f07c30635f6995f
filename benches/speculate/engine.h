// Speculation benchmark (benches/speculate.sh). Engine's hierarchy is open:
// Electric (electric.cpp) is compiled without LTO, so wpd may not rewrite
// Engine's calls unguarded. The hot objects are all Diesel (bitcode, the
// one implementation wpd sees): with --wpd-speculate=1 each call in run()
// becomes `fp == Diesel::step ? Diesel::step(...) : fp(...)`, and the
// direct call can be inlined.
#pragma once

struct Engine {
  virtual ~Engine();
  virtual long step(long x) const = 0;
};

Engine *make_diesel(int size);
Engine *make_electric(int volts);
long run(Engine *const *engines, int n, int rounds);
