// wabt driver for benches/thinlto_parity.py: a WebAssembly module in text
// form (generated here: functions with loops, branches, calls, globals, a
// table and memory) taken ROUNDS times through wabt's pipeline: parse and
// validate the text, write the binary (its log through a memory stream),
// read the binary back (logged by wabt's BinaryReaderLogging delegate),
// name everything, validate again, and write it as text and as
// decompiled pseudo-code. It prints the first round's text and
// decompilation and, over all rounds, sizes and checksums: the same on
// every run.
#include "src/apply-names.h"
#include "src/binary-reader-ir.h"
#include "src/binary-reader.h"
#include "src/binary-writer.h"
#include "src/decompiler.h"
#include "src/error-formatter.h"
#include "src/feature.h"
#include "src/generate-names.h"
#include "src/ir.h"
#include "src/stream.h"
#include "src/validator.h"
#include "src/wast-lexer.h"
#include "src/wast-parser.h"
#include "src/wat-writer.h"

#include <cinttypes>
#include <cstdio>
#include <string>

using namespace wabt;

static const int ROUNDS = 30;
static const int FUNCTIONS = 40;

// The module: FUNCTIONS functions of a few shapes, each calling the one
// before it, a table of them, memory with data, and exports.
static std::string module_text() {
  std::string t = "(module\n  (memory (export \"mem\") 1)\n  (global $g (mut i32) (i32.const 7))\n";
  t += "  (data (i32.const 16) \"wpd parity bench\")\n  (type $t (func (param i32) (result i32)))\n";
  for (int i = 0; i < FUNCTIONS; ++i) {
    std::string f = "$f" + std::to_string(i), prev = i ? "$f" + std::to_string(i - 1) : "";
    t += "  (func " + f + " (export \"f" + std::to_string(i) + "\") (type $t) (local $i i32) (local $acc i32)\n";
    switch (i % 4) {
      case 0:
        t += "    (local.set $acc (i32.const " + std::to_string(i) + "))\n"
             "    (block $done (loop $top\n"
             "      (br_if $done (i32.ge_u (local.get $i) (local.get 0)))\n"
             "      (local.set $acc (i32.add (i32.mul (local.get $acc) (i32.const 31)) (local.get $i)))\n"
             "      (local.set $i (i32.add (local.get $i) (i32.const 1)))\n"
             "      (br $top)))\n";
        break;
      case 1:
        t += "    (if (i32.lt_s (local.get 0) (i32.const 10))\n"
             "      (then (local.set $acc (i32.shl (local.get 0) (i32.const 2))))\n"
             "      (else (local.set $acc (i32.xor (local.get 0) (global.get $g)))))\n"
             "    (global.set $g (i32.add (global.get $g) (local.get $acc)))\n";
        break;
      case 2:
        t += "    (i32.store (i32.const 64) (local.get 0))\n"
             "    (local.set $acc (i32.add (i32.load8_u (i32.const 18)) (i32.load (i32.const 64))))\n"
             "    (block $b0 (block $b1 (block $b2\n"
             "      (br_table $b0 $b1 $b2 (i32.rem_u (local.get 0) (i32.const 3))))\n"
             "      (local.set $acc (i32.sub (local.get $acc) (i32.const 5))))\n"
             "      (local.set $acc (i32.rotl (local.get $acc) (i32.const 3))))\n";
        break;
      default:
        t += "    (local.set $acc (select (i32.const 3) (i32.popcnt (local.get 0)) (i32.eqz (local.get 0))))\n"
             "    (local.set $acc (i32.wrap_i64 (i64.mul (i64.extend_i32_u (local.get $acc)) (i64.const 1000003))))\n";
        break;
    }
    if (i) t += "    (local.set $acc (i32.add (local.get $acc) (call " + prev + " (i32.const " + std::to_string(i % 7) + "))))\n";
    t += "    (local.get $acc))\n";
  }
  t += "  (table " + std::to_string(FUNCTIONS) + " funcref)\n  (elem (i32.const 0)";
  for (int i = 0; i < FUNCTIONS; ++i) t += " $f" + std::to_string(i);
  t += ")\n  (func (export \"dispatch\") (param i32 i32) (result i32)\n"
       "    (call_indirect (type $t) (local.get 1) (local.get 0))))\n";
  return t;
}

static uint64_t fold(uint64_t h, const void* data, size_t size) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < size; ++i) h = (h ^ p[i]) * 1099511628211ULL;
  return h;
}

static void fail(const char* what, const Errors& errors) {
  std::printf("%s failed (%zu errors)\n", what, errors.size());
  FormatErrorsToFile(errors, Location::Type::Text);
  std::exit(1);
}

int main() {
  const std::string text = module_text();
  Features features;
  uint64_t h = 1469598103934665603ULL;
  size_t binary_bytes = 0, log_bytes = 0, text_bytes = 0, decompiled_bytes = 0;
  for (int round = 0; round < ROUNDS; ++round) {
    Errors errors;
    std::unique_ptr<WastLexer> lexer = WastLexer::CreateBufferLexer("bench.wat", text.data(), text.size());
    std::unique_ptr<Module> parsed;
    WastParseOptions parse_options(features);
    if (Failed(ParseWatModule(lexer.get(), &parsed, &errors, &parse_options))) fail("parse", errors);
    if (Failed(ValidateModule(parsed.get(), &errors, ValidateOptions(features)))) fail("validate", errors);

    MemoryStream write_log;
    MemoryStream binary(&write_log);
    WriteBinaryOptions write_options(features, true, false, true);
    if (Failed(WriteBinaryModule(&binary, parsed.get(), write_options))) fail("write binary", errors);
    const std::vector<uint8_t>& bytes = binary.output_buffer().data;

    MemoryStream read_log;
    Module module;
    ReadBinaryOptions read_options(features, &read_log, true, true, true);
    if (Failed(ReadBinaryIr("bench.wasm", bytes.data(), bytes.size(), read_options, &errors, &module)))
      fail("read binary", errors);
    if (Failed(ValidateModule(&module, &errors, ValidateOptions(features)))) fail("validate binary", errors);
    if (Failed(GenerateNames(&module))) fail("generate names", errors);
    if (Failed(ApplyNames(&module))) fail("apply names", errors);

    MemoryStream wat;
    WriteWatOptions wat_options;
    wat_options.fold_exprs = round % 2 == 1;
    wat_options.inline_export = true;
    if (Failed(WriteWat(&wat, &module, wat_options))) fail("write text", errors);
    std::string decompiled = Decompile(module, DecompileOptions());

    const auto& log1 = write_log.output_buffer().data;
    const auto& log2 = read_log.output_buffer().data;
    const auto& out = wat.output_buffer().data;
    h = fold(h, bytes.data(), bytes.size());
    h = fold(h, log1.data(), log1.size());
    h = fold(h, log2.data(), log2.size());
    h = fold(h, out.data(), out.size());
    h = fold(h, decompiled.data(), decompiled.size());
    binary_bytes += bytes.size();
    log_bytes += log1.size() + log2.size();
    text_bytes += out.size();
    decompiled_bytes += decompiled.size();
    if (round == 0) {
      std::fwrite(out.data(), 1, out.size(), stdout);
      std::fwrite(decompiled.data(), 1, decompiled.size(), stdout);
    }
  }
  std::printf("binary %zu, logs %zu, text %zu, decompiled %zu bytes; checksum %016" PRIx64 "\n", binary_bytes,
              log_bytes, text_bytes, decompiled_bytes, h);
  return 0;
}
