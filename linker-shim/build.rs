//! wpd-ld is linked as a position-dependent executable: LLVM and lld are
//! linked in statically, and a PIE would make the dynamic loader apply
//! about 300,000 relative relocations (touching most of LLVM's data pages)
//! at every start, which is several milliseconds of each link.
//!
//! It keeps its static relocations (`--emit-relocs`, sections the loader
//! never reads): with them BOLT can move every function, which
//! linker-shim/bolt.sh does after the build to lay out LLVM's code by
//! profile.
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rustc-link-arg-bin=wpd-ld=-no-pie");
    println!("cargo:rustc-link-arg-bin=wpd-ld=-Wl,--emit-relocs");
}
