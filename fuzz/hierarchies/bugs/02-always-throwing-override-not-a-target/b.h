struct B { virtual ~B() {} virtual int f(int); };
B *make(int which);
