//! Builds the C++ shim (what LLVM's C API lacks) against LLVM 19's headers.

use std::process::Command;

fn llvm_config(arg: &str) -> String {
    let prefix = std::env::var("LLVM_SYS_191_PREFIX").unwrap_or_else(|_| "/usr/lib/llvm-19".into());
    let candidates = [format!("{prefix}/bin/llvm-config"), "llvm-config-19".to_string()];
    for exe in &candidates {
        if let Ok(out) = Command::new(exe).arg(arg).output()
            && out.status.success()
        {
            return String::from_utf8_lossy(&out.stdout).trim().to_string();
        }
    }
    panic!("llvm-config for LLVM 19 not found (tried {candidates:?}); install llvm-19-dev");
}

fn main() {
    println!("cargo:rerun-if-changed=shim/shim.cpp");
    println!("cargo:rerun-if-changed=shim/codegen.cpp");
    println!("cargo:rerun-if-changed=shim/symtab.cpp");
    println!("cargo:rerun-if-changed=shim/lto.cpp");
    println!("cargo:rerun-if-changed=shim/link.cpp");
    println!("cargo:rerun-if-changed=shim/lazy.cpp");
    println!("cargo:rerun-if-changed=shim/common.h");
    println!("cargo:rerun-if-env-changed=LLVM_SYS_191_PREFIX");
    let mut build = cc::Build::new();
    build
        .cpp(true)
        .file("shim/shim.cpp")
        .file("shim/codegen.cpp")
        .file("shim/symtab.cpp")
        .file("shim/lto.cpp")
        .file("shim/link.cpp")
        .file("shim/lazy.cpp")
        .flag("-fno-rtti")
        .warnings(false);
    for flag in llvm_config("--cxxflags").split_whitespace() {
        // Our shim wants -O2 from cc and its own warning set; keep includes,
        // defines and the language standard from llvm-config.
        if flag.starts_with("-I") || flag.starts_with("-D") || flag.starts_with("-std=") || flag == "-fno-exceptions" {
            build.flag(flag);
        }
    }
    build.compile("wpd_llvm_shim");
    // lld's ELF driver as a library (liblld-19-dev), for the final link in
    // wpd-ld's own process (shim/link.cpp). Its LLVM dependencies come from
    // LLVM's static component libraries, linked after these by llvm-sys
    // (feature `force-static`: a link starts in half the time it takes
    // with libLLVM.so, whose 300,000 relocations and PLT calls every run
    // pays; Debian's LTO component pulls in Polly, hence libpolly-19-dev).
    println!("cargo:rustc-link-search=native={}", llvm_config("--libdir"));
    println!("cargo:rustc-link-lib=static=lldELF");
    println!("cargo:rustc-link-lib=static=lldCommon");
    // lld compresses debug sections itself (zlib, zstd), as ld.lld-19 does.
    println!("cargo:rustc-link-lib=dylib=z");
    println!("cargo:rustc-link-lib=dylib=zstd");
    // Where that lld's own binary lives: wpd-ld runs the library in-process
    // only when the real linker is this same lld.
    println!("cargo:rustc-env=WPD_LLVM_BINDIR={}", llvm_config("--bindir"));
}
