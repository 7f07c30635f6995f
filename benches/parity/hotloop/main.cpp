#include "op.h"
#include <cstdio>

int main(int argc, char **) {
  Op *op = make_op(argc);
  long acc = 0;
  for (long i = 0; i < 200000000; ++i)
    acc += op->apply(i);
  std::printf("%ld\n", finish(acc));
  delete op;
  return 0;
}
