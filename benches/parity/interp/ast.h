// The interp program of benches/thinlto_parity.py: an AST-walking
// interpreter of a tiny language (numbers, variables, arithmetic and
// comparisons, if, while, blocks, return, calls of user functions and of a
// few builtins). Every node type overrides Node::eval, so the eval calls of
// a binary operator's operands or of a block's statements have many
// targets.
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace interp {

// A running program's state: the value stack (a call's frame, its
// parameters then its other variables, is a window of it starting at
// base), a pending return, and what print wrote.
struct Env {
  std::vector<long> stack;
  std::size_t base = 0;
  bool returning = false;
  long result = 0;
  long calls = 0;
  std::string out;
  long &slot(int i) { return stack[base + static_cast<std::size_t>(i)]; }
};

class Node {
public:
  virtual ~Node();
  virtual long eval(Env &env) const = 0;
  // Source text that parses back to the same tree (statements at indent).
  virtual void print(std::string &out, int indent) const = 0;
};
using NodePtr = std::unique_ptr<Node>;
using NodeList = std::vector<NodePtr>;

// Appends `name(arg, arg, ...)` to out: a call's text.
void print_call(std::string &out, const std::string &name, const NodeList &args);

struct Function {
  std::string name;
  int params = 0;
  std::vector<std::string> slots; // parameters first
  NodePtr body;                   // null until defined
};

struct Program {
  std::vector<std::unique_ptr<Function>> functions;
  Function *find(const std::string &name) const;
  void print(std::string &out) const;
};

// Parses a program (throws std::runtime_error on an error).
std::unique_ptr<Program> parse(const std::string &source);
// Calls the program's main function; its result.
long run(const Program &program, Env &env);
// A call of a builtin function (print, abs, min, max) with args (taken from
// the list), or null when name names none (args then left alone); throws
// on a wrong argument count.
NodePtr make_builtin(const std::string &name, NodeList &args);

// Arithmetic that wraps instead of overflowing (the language's numbers are
// 64-bit two's complement integers).
inline long wrap_add(long a, long b) { return static_cast<long>(static_cast<unsigned long>(a) + static_cast<unsigned long>(b)); }
inline long wrap_sub(long a, long b) { return static_cast<long>(static_cast<unsigned long>(a) - static_cast<unsigned long>(b)); }
inline long wrap_mul(long a, long b) { return static_cast<long>(static_cast<unsigned long>(a) * static_cast<unsigned long>(b)); }

void indent_to(std::string &out, int indent);

class Number : public Node {
  long value;
public:
  explicit Number(long v) : value(v) {}
  long eval(Env &env) const override;
  void print(std::string &out, int indent) const override;
};

class Variable : public Node {
  std::string name;
  int index;
public:
  Variable(std::string n, int i) : name(std::move(n)), index(i) {}
  long eval(Env &env) const override;
  void print(std::string &out, int indent) const override;
};

class Assign : public Node {
  std::string name;
  int index;
  NodePtr value;
public:
  Assign(std::string n, int i, NodePtr v) : name(std::move(n)), index(i), value(std::move(v)) {}
  long eval(Env &env) const override;
  void print(std::string &out, int indent) const override;
};

class Binary : public Node {
protected:
  NodePtr lhs, rhs;
  void print_op(std::string &out, const char *op) const;
public:
  Binary(NodePtr l, NodePtr r) : lhs(std::move(l)), rhs(std::move(r)) {}
};

#define INTERP_BINARY(Name)                                                                                            \
  class Name : public Binary {                                                                                        \
  public:                                                                                                              \
    using Binary::Binary;                                                                                              \
    long eval(Env &env) const override;                                                                                \
    void print(std::string &out, int indent) const override;                                                          \
  };
INTERP_BINARY(Add)
INTERP_BINARY(Sub)
INTERP_BINARY(Mul)
INTERP_BINARY(Div)
INTERP_BINARY(Mod)
INTERP_BINARY(Less)
INTERP_BINARY(LessEq)
INTERP_BINARY(Greater)
INTERP_BINARY(GreaterEq)
INTERP_BINARY(Equal)
INTERP_BINARY(NotEqual)
INTERP_BINARY(And)
INTERP_BINARY(Or)
#undef INTERP_BINARY

class Neg : public Node {
  NodePtr operand;
public:
  explicit Neg(NodePtr o) : operand(std::move(o)) {}
  long eval(Env &env) const override;
  void print(std::string &out, int indent) const override;
};

class Not : public Node {
  NodePtr operand;
public:
  explicit Not(NodePtr o) : operand(std::move(o)) {}
  long eval(Env &env) const override;
  void print(std::string &out, int indent) const override;
};

class Call : public Node {
  const Function *fn;
  NodeList args;
public:
  Call(const Function *f, NodeList a) : fn(f), args(std::move(a)) {}
  long eval(Env &env) const override;
  void print(std::string &out, int indent) const override;
};

// Statements: their value is that of their last expression (or 0).
class ExprStmt : public Node {
  NodePtr expr;
public:
  explicit ExprStmt(NodePtr e) : expr(std::move(e)) {}
  long eval(Env &env) const override;
  void print(std::string &out, int indent) const override;
};

class Block : public Node {
  NodeList stmts;
public:
  explicit Block(NodeList s) : stmts(std::move(s)) {}
  long eval(Env &env) const override;
  void print(std::string &out, int indent) const override;
};

class If : public Node {
  NodePtr cond, then_, else_; // else_ may be null
public:
  If(NodePtr c, NodePtr t, NodePtr e) : cond(std::move(c)), then_(std::move(t)), else_(std::move(e)) {}
  long eval(Env &env) const override;
  void print(std::string &out, int indent) const override;
};

class While : public Node {
  NodePtr cond, body;
public:
  While(NodePtr c, NodePtr b) : cond(std::move(c)), body(std::move(b)) {}
  long eval(Env &env) const override;
  void print(std::string &out, int indent) const override;
};

class Return : public Node {
  NodePtr value;
public:
  explicit Return(NodePtr v) : value(std::move(v)) {}
  long eval(Env &env) const override;
  void print(std::string &out, int indent) const override;
};

} // namespace interp
