//! Stamps the build with its commit and target (see bridge/src/build_stamp.rs).
include!("build_stamp.rs");
