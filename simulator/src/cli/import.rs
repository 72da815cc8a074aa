//! `fikit-sim import`: its command-line arguments and what it prints.

use std::path::PathBuf;

use crate::interop::import::{self, ImportOptions, SourceFormat};
use anyhow::Context;
use clap::{Args, ValueEnum};

use super::{Failure, bad_input, other, print};

#[derive(Args)]
pub(crate) struct ImportArgs {
    /// Source format [default: detected from each file's contents].
    #[arg(long, value_enum)]
    format: Option<ImportFormatArg>,
    /// Job name, used in the traces and their file names [default: the file's
    /// name without extensions such as .pt.trace.json.gz or .sqlite].
    #[arg(long, short = 'n', value_name = "JOB", value_parser = fikit_trace::parse_job_name)]
    name: Option<String>,
    /// Scheduling priority of the job: high (= 0), low (= 9) or 0 (highest) to
    /// 9 (lowest); the default is fikit-profile's.
    #[arg(long, short = 'p', value_name = "high|low|N", default_value = "low", value_parser = fikit_trace::parse_priority)]
    priority: u8,
    /// Folder for the traces (<job>-<pid>.parquet; an existing file is never replaced).
    #[arg(long, short = 'o', value_name = "DIR", default_value = "traces")]
    output: PathBuf,
    /// PyTorch profiler traces (Kineto JSON, .json or .json.gz) or Nsight
    /// Systems SQLite exports (`nsys export --type sqlite`).
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
}

#[derive(Clone, Copy, ValueEnum)]
enum ImportFormatArg {
    /// PyTorch profiler / Kineto Chrome-trace JSON (export_chrome_trace), plain or gzipped.
    Kineto,
    /// Nsight Systems SQLite export.
    Nsys,
}

impl From<&ImportArgs> for ImportOptions {
    fn from(a: &ImportArgs) -> Self {
        ImportOptions {
            format: a.format.map(|f| match f {
                ImportFormatArg::Kineto => SourceFormat::Kineto,
                ImportFormatArg::Nsys => SourceFormat::Nsys,
            }),
            job: a.name.clone(),
            priority: a.priority,
        }
    }
}

/// Imports every file first (any bad one stops the command before anything is
/// written), then writes one trace per process and reports each.
pub(crate) fn run_import(args: ImportArgs) -> Result<(), Failure> {
    let opts = ImportOptions::from(&args);
    let mut all = Vec::new();
    for file in &args.files {
        all.push(import::import_file(file, &opts).map_err(bad_input)?);
    }
    // An output folder that cannot be made or written is bad input too.
    super::simulate::check_writable_folder("-o", &args.output, &args.output)?;
    std::fs::create_dir_all(&args.output)
        .with_context(|| format!("cannot create the output folder {}", args.output.display()))
        .map_err(other)?;
    let mut out = String::new();
    for (file, imported) in args.files.iter().zip(all) {
        for one in imported {
            let path = import::write_imported(&args.output, &one)
                .context("writing the imported trace")
                .map_err(other)?;
            for n in &one.notes {
                eprintln!("fikit-sim: {}: {n}", path.display());
            }
            let t = &one.trace;
            let copies = t.memops.iter().filter(|m| !m.is_memset()).count();
            out.push_str(&format!(
                "{}: {} kernels, {} copies, {} memsets, {} API calls, {} syncs (job {}, pid {}, {}; from {})\n",
                path.display(),
                t.kernels.len(),
                copies,
                t.memops.len() - copies,
                t.api_calls.len(),
                t.syncs.len(),
                t.meta.job_name,
                t.meta.pid,
                t.meta.device.name,
                file.display(),
            ));
        }
    }
    print(&out)
}
