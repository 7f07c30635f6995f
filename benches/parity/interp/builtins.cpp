// The builtin functions: print(a, ...) writes its arguments on a line of
// the output (its value is the last), abs(a), min(a, b), max(a, b).
#include "ast.h"

#include <stdexcept>

namespace interp {

namespace {

class Builtin : public Node {
protected:
  const char *name;
  NodeList args;
public:
  Builtin(const char *n, NodeList a) : name(n), args(std::move(a)) {}
  void print(std::string &out, int) const override { print_call(out, name, args); }
};

class Print : public Builtin {
public:
  explicit Print(NodeList a) : Builtin("print", std::move(a)) {}
  long eval(Env &env) const override {
    long last = 0;
    for (std::size_t i = 0; i < args.size(); ++i) {
      last = args[i]->eval(env);
      if (i)
        env.out += ' ';
      env.out += std::to_string(last);
    }
    env.out += '\n';
    return last;
  }
};

class Abs : public Builtin {
public:
  explicit Abs(NodeList a) : Builtin("abs", std::move(a)) {}
  long eval(Env &env) const override {
    long v = args[0]->eval(env);
    return v < 0 ? wrap_sub(0, v) : v;
  }
};

class Min : public Builtin {
public:
  explicit Min(NodeList a) : Builtin("min", std::move(a)) {}
  long eval(Env &env) const override {
    long a = args[0]->eval(env);
    long b = args[1]->eval(env);
    return a < b ? a : b;
  }
};

class Max : public Builtin {
public:
  explicit Max(NodeList a) : Builtin("max", std::move(a)) {}
  long eval(Env &env) const override {
    long a = args[0]->eval(env);
    long b = args[1]->eval(env);
    return a > b ? a : b;
  }
};

void arity(const std::string &name, const NodeList &args, std::size_t n) {
  if (args.size() != n)
    throw std::runtime_error(name + " takes " + std::to_string(n) + " arguments, not " + std::to_string(args.size()));
}

} // namespace

NodePtr make_builtin(const std::string &name, NodeList &args) {
  if (name == "print")
    return std::make_unique<Print>(std::move(args));
  if (name == "abs") {
    arity(name, args, 1);
    return std::make_unique<Abs>(std::move(args));
  }
  if (name == "min" || name == "max") {
    arity(name, args, 2);
    if (name == "min")
      return std::make_unique<Min>(std::move(args));
    return std::make_unique<Max>(std::move(args));
  }
  return nullptr;
}

} // namespace interp
