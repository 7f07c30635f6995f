//! wpd-ld is linked as a position-dependent executable: LLVM and lld are
//! linked in statically, and a PIE would make the dynamic loader apply
//! about 300,000 relative relocations (touching most of LLVM's data pages)
//! at every start, which is several milliseconds of each link.
fn main() {
    println!("cargo:rustc-link-arg-bin=wpd-ld=-no-pie");
}
