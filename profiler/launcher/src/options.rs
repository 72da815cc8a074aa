//! Command-line options, as a plain struct the rest of the launcher uses.

use std::ffi::OsString;
use std::path::PathBuf;

/// What to run and where to put the traces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// Job name; defaults to the command's file name.
    pub job: String,
    /// Priority, 0 (highest) to 9 (lowest).
    pub priority: u8,
    /// Output folder for the traces.
    pub out_dir: PathBuf,
    /// Record every runtime and driver API call.
    pub all_api: bool,
    /// Keep the raw spool files after conversion.
    pub keep_spools: bool,
    /// Skip the summary table.
    pub quiet: bool,
    /// Run the metrics pass after the profile (`--metrics`).
    pub metrics: bool,
    /// Untraced runs after the traced one (`--runs`; 0 with `--single-run`).
    pub runs: usize,
    /// Make the pressure pass (off with `--no-pressure` or `--single-run`).
    pub pressure: bool,
    /// How long to wait, after the command exits, for the processes it
    /// started that still run (see [`crate::reaper`]).
    pub descendant_grace: std::time::Duration,
    /// The command and its arguments; never empty.
    pub command: Vec<OsString>,
}

/// Parses `high`, `low` or a number 0–9 ([`fikit_trace::parse_priority`]),
/// the error as the message clap shows.
pub fn parse_priority(s: &str) -> Result<u8, String> {
    fikit_trace::parse_priority(s).map_err(|e| e.to_string())
}

/// The default job name: the command's file name.
pub fn default_job(command: &[OsString]) -> String {
    command
        .first()
        .map(std::path::Path::new)
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "job".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priorities() {
        assert_eq!(parse_priority("high"), Ok(0));
        assert_eq!(parse_priority("LOW"), Ok(9));
        assert_eq!(parse_priority("3"), Ok(3));
        assert!(parse_priority("10").unwrap_err().contains("0 (highest)"));
        assert!(parse_priority("-1").is_err());
        assert!(parse_priority("medium").is_err());
    }

    #[test]
    fn job_names() {
        assert_eq!(
            default_job(&["/usr/bin/python3".into(), "x.py".into()]),
            "python3"
        );
        assert_eq!(default_job(&[]), "job");
    }
}
