// Helpers every shim file shares: strings and byte buffers handed to Rust
// are malloc'd copies (Rust frees them with wpd_free / take_c_string).

#ifndef WPD_SHIM_COMMON_H
#define WPD_SHIM_COMMON_H

#include <cstdlib>
#include <cstring>
#include <string>

namespace wpd_shim {

// A malloc'd, NUL-terminated copy of `len` bytes (null if out of memory).
inline char *dup_bytes(const char *data, size_t len) {
  char *p = static_cast<char *>(std::malloc(len + 1));
  if (p) {
    if (len) std::memcpy(p, data, len);
    p[len] = 0;
  }
  return p;
}

inline char *dup_string(const std::string &s) { return dup_bytes(s.data(), s.size()); }

}  // namespace wpd_shim

#endif
