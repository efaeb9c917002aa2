//! Generates the gRPC client and the message types from the repository's `proto/` tree
//! (`clients/rust/../../proto`) at build time. The generated code goes to `OUT_DIR`
//! (inside `target/`) and is never committed. `protoc` comes from the
//! `protoc-bin-vendored` crate, so nothing outside crates.io is needed.

use std::path::{Path, PathBuf};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?);
    let proto_root = manifest_dir.join("../../../proto");
    let package_dir = proto_root.join("pusoy/referee/v1");
    let protos = list_protos(&package_dir).map_err(|e| {
        format!(
            "cannot read the protocol definitions in {}: {e} (the kit must stay at \
             clients/rust inside the pusoy-referee repository)",
            package_dir.display()
        )
    })?;

    let protoc = protoc_bin_vendored::protoc_bin_path()?;
    let well_known = protoc_bin_vendored::include_path()?;
    // SAFETY: the build script is single-threaded here; nothing else reads the
    // environment concurrently. prost-build reads PROTOC to find the compiler.
    unsafe { std::env::set_var("PROTOC", &protoc) };

    println!("cargo:rerun-if-changed={}", package_dir.display());
    tonic_prost_build::configure()
        .build_server(false)
        .build_transport(false)
        .compile_protos(&protos, &[proto_root, well_known])?;
    Ok(())
}

/// Every `.proto` file of the package, in a stable order.
fn list_protos(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut protos = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.extension().is_some_and(|ext| ext == "proto") {
            protos.push(path);
        }
    }
    if protos.is_empty() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "no .proto files",
        ));
    }
    protos.sort();
    Ok(protos)
}
