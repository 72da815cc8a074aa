//! fikit-profile integration tests, in one test binary (each links polars).

mod cli;
mod common;
mod convert;
mod shipped;
