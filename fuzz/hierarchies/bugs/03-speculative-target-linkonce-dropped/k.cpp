#include "b.h"
// without whole-program visibility B is public: one guarded target, E::f()
int k(B *s) { return s ? s->f() : 0; }
