struct B { virtual bool f(int); virtual ~B() {} };
bool test(B &b);
B *make_d();
