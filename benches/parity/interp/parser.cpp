// The parser: source text to a Program of node trees. Variables are local
// to their function, each given a slot of its frame when first named.
#include "ast.h"

#include <cctype>
#include <initializer_list>
#include <stdexcept>

namespace interp {

namespace {

enum class Tok { Number, Ident, Punct, End };

struct Token {
  Tok kind;
  std::string text;
  long value;
  int line;
};

std::vector<Token> lex(const std::string &src) {
  std::vector<Token> toks;
  std::size_t i = 0;
  int line = 1;
  while (true) {
    while (i < src.size()) {
      unsigned char c = static_cast<unsigned char>(src[i]);
      if (c == '\n') {
        ++line;
        ++i;
      } else if (std::isspace(c)) {
        ++i;
      } else if (c == '/' && i + 1 < src.size() && src[i + 1] == '/') {
        while (i < src.size() && src[i] != '\n')
          ++i;
      } else {
        break;
      }
    }
    if (i >= src.size())
      break;
    unsigned char c = static_cast<unsigned char>(src[i]);
    std::size_t start = i;
    if (std::isdigit(c)) {
      long v = 0;
      while (i < src.size() && std::isdigit(static_cast<unsigned char>(src[i]))) {
        if (v > 100000000000000000L)
          throw std::runtime_error("line " + std::to_string(line) + ": number too large");
        v = v * 10 + (src[i] - '0');
        ++i;
      }
      toks.push_back({Tok::Number, src.substr(start, i - start), v, line});
    } else if (std::isalpha(c) || c == '_') {
      while (i < src.size() && (std::isalnum(static_cast<unsigned char>(src[i])) || src[i] == '_'))
        ++i;
      toks.push_back({Tok::Ident, src.substr(start, i - start), 0, line});
    } else {
      static const char *const two[] = {"==", "!=", "<=", ">=", "&&", "||"};
      std::string p(1, src[i]);
      for (const char *t : two)
        if (src.compare(i, 2, t) == 0)
          p = t;
      if (p.size() == 1 && std::string("+-*/%<>=!(){},;").find(p[0]) == std::string::npos)
        throw std::runtime_error("line " + std::to_string(line) + ": unexpected character '" + p + "'");
      i += p.size();
      toks.push_back({Tok::Punct, p, 0, line});
    }
  }
  toks.push_back({Tok::End, "", 0, line});
  return toks;
}

struct PendingCall {
  const Function *fn;
  std::size_t args;
  int line;
};

class Parser {
  std::vector<Token> toks;
  std::size_t pos = 0;
  Program &program;
  Function *current = nullptr;
  std::vector<PendingCall> calls;

  const Token &peek(std::size_t ahead = 0) const {
    std::size_t i = pos + ahead;
    return toks[i < toks.size() ? i : toks.size() - 1];
  }
  [[noreturn]] void error(const std::string &what) const {
    throw std::runtime_error("line " + std::to_string(peek().line) + ": " + what +
                             (peek().kind == Tok::End ? " at end" : " at '" + peek().text + "'"));
  }
  bool is(const char *p) const { return peek().kind == Tok::Punct && peek().text == p; }
  bool is_word(const char *w) const { return peek().kind == Tok::Ident && peek().text == w; }
  bool accept(const char *p) {
    if (!is(p))
      return false;
    ++pos;
    return true;
  }
  void expect(const char *p) {
    if (!accept(p))
      error(std::string("expected '") + p + "'");
  }
  std::string ident() {
    if (peek().kind != Tok::Ident)
      error("expected a name");
    for (const char *k : {"fn", "if", "else", "while", "return"})
      if (peek().text == k)
        error("unexpected keyword");
    return toks[pos++].text;
  }
  int slot(const std::string &name) {
    for (std::size_t i = 0; i < current->slots.size(); ++i)
      if (current->slots[i] == name)
        return static_cast<int>(i);
    current->slots.push_back(name);
    return static_cast<int>(current->slots.size() - 1);
  }
  Function *function(const std::string &name) {
    if (Function *f = program.find(name))
      return f;
    program.functions.push_back(std::make_unique<Function>());
    program.functions.back()->name = name;
    return program.functions.back().get();
  }

  NodePtr block() {
    expect("{");
    NodeList stmts;
    while (!accept("}"))
      stmts.push_back(statement());
    return std::make_unique<Block>(std::move(stmts));
  }

  NodePtr statement() {
    if (is_word("if")) {
      ++pos;
      expect("(");
      NodePtr cond = expression();
      expect(")");
      NodePtr then_ = block();
      NodePtr else_;
      if (is_word("else")) {
        ++pos;
        if (is_word("if")) {
          NodeList one;
          one.push_back(statement());
          else_ = std::make_unique<Block>(std::move(one));
        } else {
          else_ = block();
        }
      }
      return std::make_unique<If>(std::move(cond), std::move(then_), std::move(else_));
    }
    if (is_word("while")) {
      ++pos;
      expect("(");
      NodePtr cond = expression();
      expect(")");
      NodePtr body = block();
      return std::make_unique<While>(std::move(cond), std::move(body));
    }
    if (is_word("return")) {
      ++pos;
      NodePtr v = expression();
      expect(";");
      return std::make_unique<Return>(std::move(v));
    }
    NodePtr e = expression();
    expect(";");
    return std::make_unique<ExprStmt>(std::move(e));
  }

  NodePtr expression() {
    if (peek().kind == Tok::Ident && peek(1).kind == Tok::Punct && peek(1).text == "=") {
      std::string name = ident();
      ++pos;
      NodePtr value = expression();
      int index = slot(name);
      return std::make_unique<Assign>(name, index, std::move(value));
    }
    return logical_or();
  }

  NodePtr logical_or() {
    NodePtr l = logical_and();
    while (accept("||"))
      l = std::make_unique<Or>(std::move(l), logical_and());
    return l;
  }

  NodePtr logical_and() {
    NodePtr l = equality();
    while (accept("&&"))
      l = std::make_unique<And>(std::move(l), equality());
    return l;
  }

  NodePtr equality() {
    NodePtr l = relational();
    while (true) {
      if (accept("=="))
        l = std::make_unique<Equal>(std::move(l), relational());
      else if (accept("!="))
        l = std::make_unique<NotEqual>(std::move(l), relational());
      else
        return l;
    }
  }

  NodePtr relational() {
    NodePtr l = additive();
    while (true) {
      if (accept("<"))
        l = std::make_unique<Less>(std::move(l), additive());
      else if (accept("<="))
        l = std::make_unique<LessEq>(std::move(l), additive());
      else if (accept(">"))
        l = std::make_unique<Greater>(std::move(l), additive());
      else if (accept(">="))
        l = std::make_unique<GreaterEq>(std::move(l), additive());
      else
        return l;
    }
  }

  NodePtr additive() {
    NodePtr l = multiplicative();
    while (true) {
      if (accept("+"))
        l = std::make_unique<Add>(std::move(l), multiplicative());
      else if (accept("-"))
        l = std::make_unique<Sub>(std::move(l), multiplicative());
      else
        return l;
    }
  }

  NodePtr multiplicative() {
    NodePtr l = unary();
    while (true) {
      if (accept("*"))
        l = std::make_unique<Mul>(std::move(l), unary());
      else if (accept("/"))
        l = std::make_unique<Div>(std::move(l), unary());
      else if (accept("%"))
        l = std::make_unique<Mod>(std::move(l), unary());
      else
        return l;
    }
  }

  NodePtr unary() {
    if (accept("-"))
      return std::make_unique<Neg>(unary());
    if (accept("!"))
      return std::make_unique<Not>(unary());
    return primary();
  }

  NodePtr primary() {
    if (peek().kind == Tok::Number)
      return std::make_unique<Number>(toks[pos++].value);
    if (accept("(")) {
      NodePtr e = expression();
      expect(")");
      return e;
    }
    int line = peek().line;
    std::string name = ident();
    if (!accept("("))
      return std::make_unique<Variable>(name, slot(name));
    NodeList args;
    if (!accept(")")) {
      do
        args.push_back(expression());
      while (accept(","));
      expect(")");
    }
    std::size_t count = args.size();
    if (NodePtr b = make_builtin(name, args))
      return b;
    const Function *f = function(name);
    calls.push_back({f, count, line});
    return std::make_unique<Call>(f, std::move(args));
  }

public:
  Parser(const std::string &src, Program &p) : toks(lex(src)), program(p) {}

  void parse() {
    while (peek().kind != Tok::End) {
      if (!is_word("fn"))
        error("expected 'fn'");
      ++pos;
      Function *f = function(ident());
      if (f->body)
        error("function " + f->name + " defined twice");
      current = f;
      expect("(");
      if (!accept(")")) {
        do {
          std::string p = ident();
          for (const std::string &s : f->slots)
            if (s == p)
              error("parameter " + p + " named twice");
          f->slots.push_back(p);
        } while (accept(","));
        expect(")");
      }
      f->params = static_cast<int>(f->slots.size());
      f->body = block();
    }
    for (const auto &f : program.functions)
      if (!f->body)
        throw std::runtime_error("function " + f->name + " called but not defined");
    for (const PendingCall &c : calls)
      if (c.args != static_cast<std::size_t>(c.fn->params))
        throw std::runtime_error("line " + std::to_string(c.line) + ": " + c.fn->name + " takes " +
                                 std::to_string(c.fn->params) + " arguments, not " + std::to_string(c.args));
    const Function *main = program.find("main");
    if (!main || main->params != 0)
      throw std::runtime_error("no function main()");
  }
};

} // namespace

std::unique_ptr<Program> parse(const std::string &source) {
  auto program = std::make_unique<Program>();
  Parser(source, *program).parse();
  return program;
}

} // namespace interp
