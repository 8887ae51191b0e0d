//! Stamps the build with its commit and target (see src/build_stamp.rs).
include!("../build_stamp.rs");
