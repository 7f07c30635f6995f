// RocksDB driver for benches/thinlto_parity.py: a database in the folder
// argv[1] (destroyed first), written and read through RocksDB's C++ API
// with a comparator, a merge operator and a table filter of its own:
// puts in batches, merges, deletes, flushes and a full compaction, then
// point reads, snapshots, forward and backward scans and a second column
// family. It prints counts and checksums of what it read, never timings
// or file names, so every run prints the same.
#include <rocksdb/comparator.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/merge_operator.h>
#include <rocksdb/options.h>
#include <rocksdb/slice.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

using namespace rocksdb;

static const int KEYS = 20000;

// Keys compare by their reversed bytes: a comparator RocksDB calls through
// its Comparator interface on every key it orders.
class ReverseBytes : public Comparator {
 public:
  const char* Name() const override { return "wpd.ReverseBytes"; }
  int Compare(const Slice& a, const Slice& b) const override {
    size_t n = a.size() < b.size() ? a.size() : b.size();
    for (size_t i = 1; i <= n; ++i) {
      unsigned char x = a[a.size() - i], y = b[b.size() - i];
      if (x != y) return x < y ? -1 : 1;
    }
    return a.size() == b.size() ? 0 : (a.size() < b.size() ? -1 : 1);
  }
  void FindShortestSeparator(std::string*, const Slice&) const override {}
  void FindShortSuccessor(std::string*) const override {}
};

// Values are decimal counters; a merge adds its operand.
class AddCounter : public AssociativeMergeOperator {
 public:
  bool Merge(const Slice&, const Slice* existing, const Slice& value, std::string* new_value,
             Logger*) const override {
    long long sum = existing ? std::strtoll(existing->ToString().c_str(), nullptr, 10) : 0;
    sum += std::strtoll(value.ToString().c_str(), nullptr, 10);
    *new_value = std::to_string(sum);
    return true;
  }
  const char* Name() const override { return "wpd.AddCounter"; }
};

static uint64_t next(uint64_t& state) {
  state = state * 6364136223846793005ULL + 1442695040888963407ULL;
  return state >> 33;
}

static std::string key(uint64_t i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "key%08" PRIu64, i);
  return buf;
}

static uint64_t fold(uint64_t h, const Slice& s) {
  for (size_t i = 0; i < s.size(); ++i) h = (h ^ static_cast<unsigned char>(s[i])) * 1099511628211ULL;
  return h;
}

static void check(const Status& s, const char* what) {
  if (!s.ok()) {
    std::printf("%s: %s\n", what, s.ToString().c_str());
    std::exit(1);
  }
}

static void scan(DB* db, ColumnFamilyHandle* cf, const ReadOptions& ro, const char* what) {
  std::unique_ptr<Iterator> it(db->NewIterator(ro, cf));
  uint64_t n = 0, h = 1469598103934665603ULL;
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++n) h = fold(fold(h, it->key()), it->value());
  check(it->status(), what);
  uint64_t back = 0;
  for (it->SeekToLast(); it->Valid(); it->Prev()) ++back;
  std::printf("%s: %" PRIu64 " entries forward, %" PRIu64 " backward, checksum %016" PRIx64 "\n", what, n, back, h);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DB-FOLDER\n", argv[0]);
    return 2;
  }
  std::string path = argv[1];
  static ReverseBytes reverse;
  Options options;
  options.create_if_missing = true;
  options.create_missing_column_families = true;
  options.comparator = &reverse;
  options.merge_operator = std::make_shared<AddCounter>();
  options.write_buffer_size = 256 << 10;
  options.target_file_size_base = 256 << 10;
  options.max_background_jobs = 2;
  BlockBasedTableOptions table;
  table.filter_policy.reset(NewBloomFilterPolicy(10, false));
  table.block_size = 4096;
  options.table_factory.reset(NewBlockBasedTableFactory(table));
  DestroyDB(path, options);

  std::vector<ColumnFamilyDescriptor> families = {{kDefaultColumnFamilyName, options},
                                                  {"counters", options}};
  std::vector<ColumnFamilyHandle*> handles;
  DB* db = nullptr;
  check(DB::Open(DBOptions(options), path, families, &handles, &db), "open");

  uint64_t state = 42;
  WriteOptions wo;
  wo.disableWAL = false;
  for (int b = 0; b < KEYS / 100; ++b) {
    WriteBatch batch;
    for (int i = 0; i < 100; ++i) {
      uint64_t k = next(state) % (KEYS * 2);
      batch.Put(handles[0], key(k), std::string(16 + k % 48, static_cast<char>('a' + k % 26)));
      batch.Merge(handles[1], key(k % 500), std::to_string(k % 7 + 1));
    }
    check(db->Write(wo, &batch), "write");
  }
  check(db->Flush(FlushOptions(), handles), "flush");
  const Snapshot* before_deletes = db->GetSnapshot();
  for (int i = 0; i < KEYS / 4; ++i) check(db->Delete(wo, handles[0], key(next(state) % (KEYS * 2))), "delete");
  check(db->CompactRange(CompactRangeOptions(), handles[0], nullptr, nullptr), "compact");
  check(db->CompactRange(CompactRangeOptions(), handles[1], nullptr, nullptr), "compact counters");

  ReadOptions ro;
  uint64_t found = 0, missing = 0, h = 1469598103934665603ULL;
  std::string value;
  for (int i = 0; i < KEYS; ++i) {
    Status s = db->Get(ro, handles[0], key(next(state) % (KEYS * 2)), &value);
    if (s.ok()) {
      ++found;
      h = fold(h, value);
    } else if (s.IsNotFound()) {
      ++missing;
    } else {
      check(s, "get");
    }
  }
  std::printf("point reads: %" PRIu64 " found, %" PRIu64 " missing, checksum %016" PRIx64 "\n", found, missing, h);

  scan(db, handles[0], ro, "default");
  ReadOptions at_snapshot;
  at_snapshot.snapshot = before_deletes;
  scan(db, handles[0], at_snapshot, "default before deletes");
  scan(db, handles[1], ro, "counters");
  db->ReleaseSnapshot(before_deletes);

  std::string total;
  check(db->Get(ro, handles[1], key(7), &total), "counter");
  std::printf("counter %s = %s\n", key(7).c_str(), total.c_str());
  std::string files;
  db->GetProperty(handles[0], "rocksdb.estimate-num-keys", &files);
  std::printf("estimated keys present: %s\n", files.empty() ? "?" : "known");

  for (auto* handle : handles) check(db->DestroyColumnFamilyHandle(handle), "close family");
  delete db;
  DestroyDB(path, options);
  return 0;
}
