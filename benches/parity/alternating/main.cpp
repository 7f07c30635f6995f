// The loop of perf reproducer 01: one of two classes allocated in turn,
// four virtual calls on it and a virtual delete.
#include "node.h"
#include <cstdio>
int main(int argc, char**) {
  long total = 0;
  for (int i = 0; i < 30000000; i++) {
    Node* n = make_node(i + argc);
    total += n->arity() + n->isLeaf() + n->hasTag(4) + n->weight(i);
    delete n;
  }
  std::printf("%ld\n", total);
}
