// The build script of acp-harness and acp-bridge (each `build.rs` includes
// this file): emits VERGEN_GIT_SHA, VERGEN_GIT_DIRTY and
// VERGEN_CARGO_TARGET_TRIPLE for `BuildStamp`. Without git (a source
// archive) the values are vergen's placeholder and the stamp says the commit
// is unknown; the build never fails over it.
use vergen_gitcl::{Cargo, Emitter, Gitcl};

fn main() {
    let git = Gitcl::builder().sha(false).dirty(false).build();
    let cargo = Cargo::builder().target_triple(true).build();
    let emitted = Emitter::default()
        .add_instructions(&git)
        .and_then(|e| e.add_instructions(&cargo))
        .and_then(|e| e.emit());
    if let Err(e) = emitted {
        println!("cargo:warning=build stamp: {e}");
        let target = std::env::var("TARGET").unwrap_or_default();
        println!("cargo:rustc-env=VERGEN_GIT_SHA=");
        println!("cargo:rustc-env=VERGEN_GIT_DIRTY=false");
        println!("cargo:rustc-env=VERGEN_CARGO_TARGET_TRIPLE={target}");
    }
    // vergen reruns on a new commit (HEAD and its ref); the package's own
    // sources changing is what makes a tree dirty, so they rerun it too.
    println!("cargo:rerun-if-changed=src");
}
