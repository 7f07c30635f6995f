// Evaluation and printing of the core node types.
#include "ast.h"

#include <climits>

namespace interp {

Node::~Node() {}

void indent_to(std::string &out, int indent) { out.append(static_cast<std::size_t>(indent) * 2, ' '); }

long Number::eval(Env &) const { return value; }
void Number::print(std::string &out, int) const { out += std::to_string(value); }

long Variable::eval(Env &env) const { return env.slot(index); }
void Variable::print(std::string &out, int) const { out += name; }

long Assign::eval(Env &env) const {
  long v = value->eval(env); // (before the slot's address: a call may grow the stack)
  env.slot(index) = v;
  return v;
}
void Assign::print(std::string &out, int indent) const {
  out += name;
  out += " = ";
  value->print(out, indent);
}

void Binary::print_op(std::string &out, const char *op) const {
  out += '(';
  lhs->print(out, 0);
  out += ' ';
  out += op;
  out += ' ';
  rhs->print(out, 0);
  out += ')';
}

long Add::eval(Env &env) const {
  long a = lhs->eval(env);
  return wrap_add(a, rhs->eval(env));
}
void Add::print(std::string &out, int) const { print_op(out, "+"); }

long Sub::eval(Env &env) const {
  long a = lhs->eval(env);
  return wrap_sub(a, rhs->eval(env));
}
void Sub::print(std::string &out, int) const { print_op(out, "-"); }

long Mul::eval(Env &env) const {
  long a = lhs->eval(env);
  return wrap_mul(a, rhs->eval(env));
}
void Mul::print(std::string &out, int) const { print_op(out, "*"); }

// Division by zero gives 0, LONG_MIN / -1 wraps (as in the language's
// other arithmetic); the quotient truncates toward zero.
long Div::eval(Env &env) const {
  long a = lhs->eval(env);
  long b = rhs->eval(env);
  if (b == 0)
    return 0;
  if (b == -1)
    return wrap_sub(0, a);
  return a / b;
}
void Div::print(std::string &out, int) const { print_op(out, "/"); }

long Mod::eval(Env &env) const {
  long a = lhs->eval(env);
  long b = rhs->eval(env);
  if (b == 0 || b == -1)
    return 0;
  return a % b;
}
void Mod::print(std::string &out, int) const { print_op(out, "%"); }

long Less::eval(Env &env) const {
  long a = lhs->eval(env);
  return a < rhs->eval(env);
}
void Less::print(std::string &out, int) const { print_op(out, "<"); }

long LessEq::eval(Env &env) const {
  long a = lhs->eval(env);
  return a <= rhs->eval(env);
}
void LessEq::print(std::string &out, int) const { print_op(out, "<="); }

long Greater::eval(Env &env) const {
  long a = lhs->eval(env);
  return a > rhs->eval(env);
}
void Greater::print(std::string &out, int) const { print_op(out, ">"); }

long GreaterEq::eval(Env &env) const {
  long a = lhs->eval(env);
  return a >= rhs->eval(env);
}
void GreaterEq::print(std::string &out, int) const { print_op(out, ">="); }

long Equal::eval(Env &env) const {
  long a = lhs->eval(env);
  return a == rhs->eval(env);
}
void Equal::print(std::string &out, int) const { print_op(out, "=="); }

long NotEqual::eval(Env &env) const {
  long a = lhs->eval(env);
  return a != rhs->eval(env);
}
void NotEqual::print(std::string &out, int) const { print_op(out, "!="); }

long And::eval(Env &env) const { return lhs->eval(env) != 0 && rhs->eval(env) != 0; }
void And::print(std::string &out, int) const { print_op(out, "&&"); }

long Or::eval(Env &env) const { return lhs->eval(env) != 0 || rhs->eval(env) != 0; }
void Or::print(std::string &out, int) const { print_op(out, "||"); }

long Neg::eval(Env &env) const { return wrap_sub(0, operand->eval(env)); }
void Neg::print(std::string &out, int) const {
  out += "(-";
  operand->print(out, 0);
  out += ')';
}

long Not::eval(Env &env) const { return operand->eval(env) == 0; }
void Not::print(std::string &out, int) const {
  out += "(!";
  operand->print(out, 0);
  out += ')';
}

long Call::eval(Env &env) const {
  // The callee's frame starts where the stack ends: its arguments, pushed
  // as they are evaluated (a call among them pops its own frame), then its
  // other variables, zero.
  std::size_t frame = env.stack.size();
  for (const NodePtr &arg : args) {
    long v = arg->eval(env);
    env.stack.push_back(v);
  }
  env.stack.resize(frame + fn->slots.size(), 0);
  std::size_t caller = env.base;
  env.base = frame;
  ++env.calls;
  fn->body->eval(env);
  long r = env.returning ? env.result : 0;
  env.returning = false;
  env.base = caller;
  env.stack.resize(frame);
  return r;
}
void print_call(std::string &out, const std::string &name, const NodeList &args) {
  out += name;
  out += '(';
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (i)
      out += ", ";
    args[i]->print(out, 0);
  }
  out += ')';
}

void Call::print(std::string &out, int) const { print_call(out, fn->name, args); }

long ExprStmt::eval(Env &env) const { return expr->eval(env); }
void ExprStmt::print(std::string &out, int indent) const {
  indent_to(out, indent);
  expr->print(out, indent);
  out += ";\n";
}

long Block::eval(Env &env) const {
  long last = 0;
  for (const NodePtr &s : stmts) {
    last = s->eval(env);
    if (env.returning)
      break;
  }
  return last;
}
void Block::print(std::string &out, int indent) const {
  out += "{\n";
  for (const NodePtr &s : stmts)
    s->print(out, indent + 1);
  indent_to(out, indent);
  out += '}';
}

long If::eval(Env &env) const {
  if (cond->eval(env) != 0)
    return then_->eval(env);
  return else_ ? else_->eval(env) : 0;
}
void If::print(std::string &out, int indent) const {
  indent_to(out, indent);
  out += "if (";
  cond->print(out, 0);
  out += ") ";
  then_->print(out, indent);
  if (else_) {
    out += " else ";
    else_->print(out, indent);
  }
  out += '\n';
}

long While::eval(Env &env) const {
  long last = 0;
  while (cond->eval(env) != 0) {
    last = body->eval(env);
    if (env.returning)
      break;
  }
  return last;
}
void While::print(std::string &out, int indent) const {
  indent_to(out, indent);
  out += "while (";
  cond->print(out, 0);
  out += ") ";
  body->print(out, indent);
  out += '\n';
}

long Return::eval(Env &env) const {
  long v = value->eval(env);
  env.result = v;
  env.returning = true;
  return v;
}
void Return::print(std::string &out, int indent) const {
  indent_to(out, indent);
  out += "return ";
  value->print(out, indent);
  out += ";\n";
}

Function *Program::find(const std::string &name) const {
  for (const auto &f : functions)
    if (f->name == name)
      return f.get();
  return nullptr;
}

void Program::print(std::string &out) const {
  for (const auto &f : functions) {
    out += "fn ";
    out += f->name;
    out += '(';
    for (int i = 0; i < f->params; ++i) {
      if (i)
        out += ", ";
      out += f->slots[static_cast<std::size_t>(i)];
    }
    out += ") ";
    f->body->print(out, 0);
    out += '\n';
  }
}

long run(const Program &program, Env &env) {
  const Function *main = program.find("main");
  Call call(main, NodeList());
  return call.eval(env);
}

} // namespace interp
