//! The `wpd` binary is position-dependent, as wpd-ld is (see
//! linker-shim/build.rs): LLVM is linked in statically, and a PIE would
//! relocate all of it at every start (`wpd backend` runs once per module
//! in a distributed build).
fn main() {
    println!("cargo:rustc-link-arg-bin=wpd=-no-pie");
}
