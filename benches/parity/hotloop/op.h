// The hot-loop benchmark: main.cpp calls Op::apply, whose only
// implementation lives in op.cpp, 200 million times. Devirtualized, the call
// names Mix::apply in another object; only a thin link that imports the
// callee lets the loop inline it.
#pragma once

struct Op {
  virtual ~Op();
  virtual long apply(long x) const = 0;
};

Op *make_op(int seed);
long finish(long acc); // an ordinary cross-module call, once
