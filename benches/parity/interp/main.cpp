// The interp program of benches/thinlto_parity.py: parses the program
// below, prints it back (and checks that its printed text parses to the
// same text), runs it and prints what it printed and how many calls it
// made.
#include "ast.h"

#include <cstdio>
#include <stdexcept>

namespace {

const char *const SOURCE = R"(
// Trial division by odd numbers.
fn isprime(n) {
  if (n < 2) { return 0; }
  if (n % 2 == 0) { return n == 2; }
  d = 3;
  while (d * d <= n) {
    if (n % d == 0) { return 0; }
    d = d + 2;
  }
  return 1;
}

fn countprimes(limit) {
  count = 0;
  n = 2;
  while (n < limit) {
    if (isprime(n)) { count = count + 1; }
    n = n + 1;
  }
  return count;
}

// Fibonacci numbers modulo 1000000007, iteratively and recursively.
fn fib(n) {
  a = 0; b = 1; i = 0;
  while (i < n) {
    t = (a + b) % 1000000007;
    a = b; b = t;
    i = i + 1;
  }
  return a;
}

fn rfib(n) {
  if (n < 2) { return n; }
  return rfib(n - 1) + rfib(n - 2);
}

fn gcd(a, b) {
  while (b != 0) { t = a % b; a = b; b = t; }
  return a;
}

fn collatz(n) {
  steps = 0;
  while (n != 1) {
    if (n % 2 == 0) { n = n / 2; } else { n = 3 * n + 1; }
    steps = steps + 1;
  }
  return steps;
}

// A linear congruential generator's numbers, bucketed.
fn lcg(seed, rounds) {
  x = seed; low = 0; mid = 0; high = 0; i = 0;
  while (i < rounds) {
    x = (x * 1103515245 + 12345) % 2147483648;
    r = x % 100;
    if (r < 25) { low = low + 1; }
    else if (r >= 25 && r < 75) { mid = mid + 1; }
    else { high = high + 1; }
    i = i + 1;
  }
  return low * 1000000 + mid * 1000 + high - (-x % 7);
}

fn main() {
  print(countprimes(LIMIT));
  print(fib(300000), rfib(24));
  s = 0; i = 1;
  while (i <= 120) {
    j = 1;
    while (j <= 120) { s = s + gcd(i, j); j = j + 1; }
    i = i + 1;
  }
  print(s);
  best = 0; arg = 0; n = 1;
  while (n < 10000) {
    c = collatz(n);
    if (c > best) { best = c; arg = n; }
    n = n + 1;
  }
  print(arg, best);
  print(lcg(42, 100000));
  print(max(abs(-5), min(3, 9)), !0, !7, -(3 - 10) / 2, 7 / 0, 7 % 0, 1 || 0, 0 && 1);
  return s % 1000;
}
)";

} // namespace

int main(int argc, char **) {
  // The workload's size: the primes below LIMIT (times the argument count,
  // which is 1: not a constant the compiler could fold into the source).
  std::string source = SOURCE;
  std::string limit = std::to_string(400000L * argc);
  source.replace(source.find("LIMIT"), 5, limit);
  try {
    std::unique_ptr<interp::Program> program = interp::parse(source);
    std::string text;
    program->print(text);
    std::string again;
    interp::parse(text)->print(again);
    std::fputs(text.c_str(), stdout);
    std::printf("printed program parses back to itself: %s\n", again == text ? "yes" : "NO");
    interp::Env env;
    long result = interp::run(*program, env);
    std::fputs(env.out.c_str(), stdout);
    std::printf("main returned %ld after %ld calls\n", result, env.calls);
    return again == text ? 0 : 1;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "interp: %s\n", e.what());
    return 2;
  }
}
