//! The model ([`fikit_sim_core::sim`], re-exported here) and the runs built
//! on it that the command line needs:
//!
//! - [`sweep`]: every ordered pair of jobs under every policy, in parallel;
//! - [`fleet`]: sweeps as data (a spec), in shards for many machines, and
//!   their merge.

pub use fikit_sim_core::sim::*;

pub mod fleet;
pub mod sweep;

/// How a command tells its user to choose another model than the one
/// [`model_for_traces`] took: after a calibrated one (appended), where none
/// is shipped for the traces' GPU, where the traces' GPUs differ.
pub struct ModelHints<'a> {
    /// Appended to the calibrated model's line (empty: nothing).
    pub calibrated: &'a str,
    /// In brackets after "fikit ships no calibrated model for …".
    pub none: &'a str,
    /// After "the traces come from different GPUs (…); ".
    pub mixed: &'a str,
}

/// The shipped calibrated model of the traces' GPU (the names in `devices`,
/// repeats counted once), else the documented defaults, and the line that
/// says which and why.
pub fn model_for_traces<'a>(
    devices: impl IntoIterator<Item = &'a str>,
    hints: &ModelHints<'_>,
) -> (gpu::GpuModel, String) {
    let mut unique: Vec<&str> = Vec::new();
    for d in devices {
        if !unique.contains(&d) {
            unique.push(d);
        }
    }
    let (m, file) = gpu::GpuModel::for_devices(unique.iter().copied());
    let line = match (unique.as_slice(), file) {
        ([device], Some(file)) => format!(
            "GPU model: {}, calibrated ({file}), for the traces' GPU {device}{}",
            m.name, hints.calibrated
        ),
        ([device], None) => format!(
            "GPU model: documented defaults, not calibrated: fikit ships no calibrated model \
             for the traces' GPU {device} ({})",
            hints.none
        ),
        _ => format!(
            "GPU model: documented defaults, not calibrated: the traces come from different \
             GPUs ({}); {}",
            unique.join(", "),
            hints.mixed
        ),
    };
    (m, line)
}
