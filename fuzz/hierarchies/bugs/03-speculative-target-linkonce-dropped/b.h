struct B { virtual ~B() {} virtual int f() = 0; };
struct E : B { int f() override { return 3; } };  // all inline: E's vtable and E::f() are linkonce_odr
int k(B *s);
