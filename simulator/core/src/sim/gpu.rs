//! The modeled GPU's scheduling parameters: a JSON "GPU model file", every
//! field with a documented default and where that default came from.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::FileError;

/// When a policy may take the device away from running work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Granularity {
    /// Running kernels finish; nothing new of the preempted job starts.
    Kernel,
    /// Running kernels stop after their current wave of thread blocks.
    Block,
    /// Running kernels stop at once, after a fixed cost (`preempt_cost_ns`).
    Immediate,
}

/// How kernels of different processes share the SMs when they run at once
/// (under MPS).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SmSharing {
    /// Block by block ([`crate::sim::slots`]): a kernel's blocks take free
    /// room on the SMs (blocks per SM from its grid, block, registers and
    /// shared memory against the per-SM limits) in the order the kernels
    /// reached the GPU, and a kernel that finds no room waits; a block runs
    /// the kernel's recorded duration over its waves.
    Blocks,
    /// Fluid: every running kernel is slowed by the jobs' summed SM demand
    /// when it exceeds the device (the model before 2026-11-25; kept to
    /// compare).
    Fluid,
}

/// In what order kernels of different processes take SM room under MPS
/// ([`SmSharing::Blocks`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MpsOrder {
    /// In the order they became ready (reached the head of their stream):
    /// a kernel waits for the kernels already on the GPU, not for a busy
    /// job's kernels queued behind them.
    #[default]
    Ready,
    /// In the order they were launched: a kernel also waits for the kernels
    /// other jobs launched before it that become ready after it (a busy job
    /// launching far ahead keeps a later job's kernel waiting).
    Launch,
}

/// The scheduling parameters of a GPU. Per-SM limits and SM counts are not
/// here: they come from each trace's metadata.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GpuModel {
    /// Name of the model (e.g. the GPU it was calibrated on).
    pub name: String,
    /// Where these numbers came from.
    pub source: String,
    /// Time-slice length of one context under default sharing, ns.
    pub timeslice_quantum_ns: i64,
    /// Cost of switching the device between contexts, ns (nothing runs meanwhile).
    pub context_switch_ns: i64,
    /// Whether a kernel still running when its context's slice ends is
    /// preempted (true) or runs to completion first (false).
    pub timeslice_preempts: bool,
    /// When set, a context waiting for the device takes it over at the
    /// running context's next kernel boundary (its running kernels finish,
    /// nothing new of it starts), paying this switch cost, ns, instead of
    /// waiting for the end of the quantum; the quantum still preempts a
    /// kernel that runs past it. `None`: contexts take turns only by quantum.
    pub timeslice_boundary_switch_ns: Option<i64>,
    /// When set, the jobs are separate processes (contexts) under every
    /// policy but MPS: each time the device passes from one job's kernels to
    /// another's, the new job's kernels start this long after it could have
    /// started them (its kernel was ready and the other's had ended), ns. Time
    /// slicing pays it when the running context has nothing queued and another
    /// takes over (instead of `context_switch_ns`, which it still pays when a
    /// quantum preempts); the preemptive policy pays it at each hand-over.
    /// `None`: time slicing pays `context_switch_ns` there, and the
    /// preemptive policy hands over for free (jobs in one context, e.g.
    /// stream priorities).
    pub context_handover_ns: Option<i64>,
    /// Preemption granularity of the preemptive-priority policy.
    pub preempt_granularity: Granularity,
    /// Cost of an immediate preemption, ns.
    pub preempt_cost_ns: i64,
    /// Waves per kernel assumed by block-granularity preemption when its
    /// blocks fill the device: a kernel stops after `duration / waves`.
    pub block_waves: i64,
    /// Concurrent-kernel slowdown under MPS: while other jobs' kernels
    /// press on a share `o` of the SMs (at most 1; block by block, what
    /// their started kernels' full waves would hold, [`crate::sim::slots`];
    /// fluid, the sum of their SM demands), a kernel runs
    /// `1 + corun_slowdown * o` times slower, on top of the SM sharing.
    /// What co-running kernels cost each other in caches and memory;
    /// `fikit-lab calibrate` measures it with a latency-bound kernel.
    pub corun_slowdown: f64,
    /// The same for the live replay's synthetic kernels, which spin on the
    /// timer and move no memory: `fikit-lab validate` simulates with it in
    /// place of `corun_slowdown` ([`GpuModel::for_replay`]).
    pub replay_corun_slowdown: f64,
    /// How kernels of different jobs share the SMs under MPS.
    pub mps_sharing: SmSharing,
    /// In what order kernels take SM room under MPS, block by block:
    /// `fikit-lab calibrate`'s dispatch-order probe tells which holds.
    pub mps_order: MpsOrder,
}

impl Default for GpuModel {
    /// Defaults, each with its reason:
    /// - quantum 2 ms: NVIDIA publishes no value; the one public measurement
    ///   (forum report, RTX 4090) saw about 2.3 ms; to be replaced by
    ///   `fikit-lab calibrate` on the GPU;
    /// - context switch 25 µs: order of magnitude of a compute-preemption
    ///   context save/restore reported for Pascal+ GPUs; to be calibrated;
    /// - time slices preempt running kernels: compute preemption exists since
    ///   Pascal, and Hopper preempts at instruction level between contexts;
    /// - no switching at kernel boundaries: contexts take turns by quantum
    ///   only (the textbook time slicer; live replay on an H200 measured
    ///   otherwise, see `timeslice_boundary_switch_ns` and the lab log);
    /// - preemptive policy at kernel granularity: what stream priorities and a
    ///   launch-holding scheduler can do without kernel changes;
    /// - immediate preemption cost 40 µs: GPreempt (ATC'25) yields within about 40 µs;
    /// - 4 waves: a typical large kernel runs a few waves of blocks;
    /// - no hand-over cost: measured only by live replay with timelines
    ///   (`fikit-lab calibrate`), so a calibrated model file carries it;
    /// - no concurrent-kernel slowdown (either kind): co-running kernels
    ///   slow each other only by competing for SM room, as before
    ///   `fikit-lab calibrate` measured it; a calibrated model file carries both;
    /// - MPS shares the SMs block by block ([`SmSharing::Blocks`]): what the
    ///   hardware does, from each kernel's launch shape; no parameter of its own;
    /// - in the order kernels become ready ([`MpsOrder::Ready`]): in-order
    ///   dispatch as published for concurrent kernels (Gilman et al. 2021);
    ///   `fikit-lab calibrate` probes it.
    fn default() -> Self {
        GpuModel {
            name: "default".to_string(),
            source: "documented defaults (simulator/core/src/sim/gpu.rs); not calibrated"
                .to_string(),
            timeslice_quantum_ns: 2_000_000,
            context_switch_ns: 25_000,
            timeslice_preempts: true,
            timeslice_boundary_switch_ns: None,
            context_handover_ns: None,
            preempt_granularity: Granularity::Kernel,
            preempt_cost_ns: 40_000,
            block_waves: 4,
            corun_slowdown: 0.0,
            replay_corun_slowdown: 0.0,
            mps_sharing: SmSharing::Blocks,
            mps_order: MpsOrder::Ready,
        }
    }
}

/// Errors reading a GPU model file: it could not be read (`PATH: REASON`)
/// or is not a valid model (`PATH: MESSAGE`).
pub type ModelError = FileError;

/// How many times slower a kernel runs while other jobs' kernels press on a
/// share `o` of the SMs: `1 + c o` (`c`: [`GpuModel::corun_slowdown`]).
/// The one formula of the concurrent-kernel slowdown, block by block
/// ([`crate::sim::slots`]) and fluid.
#[inline]
pub fn corun_factor(c: f64, o: f64) -> f64 {
    1.0 + c * o.max(0.0)
}

/// The calibrated models the project ships (`simulator/models/`), compiled
/// in so an installed `fikit-sim` has them: the file's name in the
/// repository and its text. Calibration wrote each (`fikit-lab calibrate`,
/// then still `fikit-sim calibrate`); the `source` field inside says on
/// which GPU, with which command and when.
pub const SHIPPED: [(&str, &str); 2] = [
    (
        "simulator/models/h100.json",
        include_str!("../../../models/h100.json"),
    ),
    (
        "simulator/models/h200.json",
        include_str!("../../../models/h200.json"),
    ),
];

/// The GPU family a device name belongs to, for matching calibrated models:
/// `NVIDIA H100 80GB HBM3` and `NVIDIA H100 PCIe` are both `h100`. `None` for
/// a name without a recognizable model number.
pub fn gpu_family(device: &str) -> Option<String> {
    device
        .split(|c: char| c.is_whitespace() || c == '-')
        .map(|w| w.to_ascii_lowercase())
        .find(|w| {
            w.len() >= 2
                && w.starts_with(|c: char| c.is_ascii_alphabetic())
                && w[1..].starts_with(|c: char| c.is_ascii_digit())
                && w.chars().all(|c| c.is_ascii_alphanumeric())
        })
}

impl GpuModel {
    /// The shipped calibrated model ([`SHIPPED`]) of the GPU named `device`
    /// (a trace's `fikit.device.name`), with the file it came from; `None`
    /// when the project ships none for that GPU family.
    pub fn shipped_for(device: &str) -> Option<(&'static str, GpuModel)> {
        let family = gpu_family(device)?;
        SHIPPED.iter().find_map(|&(file, text)| {
            let m: GpuModel = serde_json::from_str(text).expect("shipped models parse (tested)");
            (gpu_family(&m.name).as_deref() == Some(family.as_str())).then_some((file, m))
        })
    }

    /// The model for traces recorded on `devices` (their `fikit.device.name`s):
    /// the shipped calibrated model, with its file, when they all name one
    /// GPU the project ships a model for; else the documented defaults.
    pub fn for_devices<'a>(
        devices: impl IntoIterator<Item = &'a str>,
    ) -> (GpuModel, Option<&'static str>) {
        let mut devices: Vec<&str> = devices.into_iter().collect();
        devices.sort_unstable();
        devices.dedup();
        match devices.as_slice() {
            [d] => GpuModel::shipped_for(d)
                .map_or((GpuModel::default(), None), |(file, m)| (m, Some(file))),
            _ => (GpuModel::default(), None),
        }
    }

    /// Reads a model file; fields it omits keep their defaults. Without a
    /// `name` it is named by the file's stem, and without a `source` by the
    /// file, so a result never reads as the documented defaults' alone.
    pub fn load(path: &Path) -> Result<GpuModel, ModelError> {
        let text = std::fs::read_to_string(path).map_err(|e| FileError::io(path, e))?;
        let mut m: GpuModel =
            serde_json::from_str(&text).map_err(|e| FileError::invalid(path, e.to_string()))?;
        m.validate().map_err(|m| FileError::invalid(path, m))?;
        // Which fields the file sets (it parsed above, so it is an object).
        let set: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        let has = |key: &str| set.get(key).is_some();
        if !has("name") {
            m.name = path.file_stem().map_or_else(
                || path.display().to_string(),
                |s| s.to_string_lossy().into_owned(),
            );
        }
        if !has("source") {
            m.source = format!(
                "{}, its other fields the documented defaults (simulator/core/src/sim/gpu.rs)",
                path.display()
            );
        }
        Ok(m)
    }

    /// The model as live replay runs: its synthetic kernels' concurrent-kernel
    /// slowdown (`replay_corun_slowdown`) in place of real kernels'
    /// (`corun_slowdown`). `fikit-lab validate` compares the simulator with
    /// replay, so it simulates with this.
    pub fn for_replay(&self) -> GpuModel {
        let mut m = self.clone();
        if m.corun_slowdown != m.replay_corun_slowdown {
            m.source = format!(
                "{}; as live replay runs: corun_slowdown {:.3} replaced by replay_corun_slowdown {:.3}",
                m.source, m.corun_slowdown, m.replay_corun_slowdown
            );
            m.corun_slowdown = m.replay_corun_slowdown;
        }
        m
    }

    /// Checks the parameters are usable.
    pub fn validate(&self) -> Result<(), String> {
        if self.timeslice_quantum_ns <= 0 {
            return Err(format!(
                "timeslice_quantum_ns must be positive, found {}",
                self.timeslice_quantum_ns
            ));
        }
        for (name, v) in [
            ("context_switch_ns", self.context_switch_ns),
            (
                "timeslice_boundary_switch_ns",
                self.timeslice_boundary_switch_ns.unwrap_or(0),
            ),
            ("context_handover_ns", self.context_handover_ns.unwrap_or(0)),
            ("preempt_cost_ns", self.preempt_cost_ns),
        ] {
            if v < 0 {
                return Err(format!("{name} must not be negative, found {v}"));
            }
        }
        for (name, v) in [
            ("corun_slowdown", self.corun_slowdown),
            ("replay_corun_slowdown", self.replay_corun_slowdown),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(format!("{name} must be a number at least 0, found {v}"));
            }
        }
        if self.block_waves < 1 {
            return Err(format!(
                "block_waves must be at least 1, found {}",
                self.block_waves
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_of_device_names() {
        assert_eq!(gpu_family("NVIDIA H100 80GB HBM3").as_deref(), Some("h100"));
        assert_eq!(gpu_family("NVIDIA H200").as_deref(), Some("h200"));
        assert_eq!(gpu_family("NVIDIA A100-SXM4-80GB").as_deref(), Some("a100"));
        assert_eq!(gpu_family("NVIDIA GeForce RTX 4090"), None);
        assert_eq!(gpu_family("Tesla T4").as_deref(), Some("t4"));
        assert_eq!(gpu_family("synthetic"), None);
    }

    #[test]
    fn shipped_models_parse_validate_and_match_their_gpus() {
        for (file, text) in SHIPPED {
            let m: GpuModel = serde_json::from_str(text).unwrap();
            m.validate().unwrap_or_else(|e| panic!("{file}: {e}"));
            assert!(
                m.source.contains("fikit-sim calibrate"),
                "{file}: {}",
                m.source
            );
        }
        let (file, m) = GpuModel::shipped_for("NVIDIA H100 80GB HBM3").unwrap();
        assert_eq!(file, "simulator/models/h100.json");
        assert!(m.name.contains("H100"));
        let (file, _) = GpuModel::shipped_for("NVIDIA H200").unwrap();
        assert_eq!(file, "simulator/models/h200.json");
        assert!(GpuModel::shipped_for("NVIDIA L4").is_none());
        // Traces of one GPU get its model; of two GPUs, or of none shipped, the defaults.
        let (m, file) = GpuModel::for_devices(["NVIDIA H200", "NVIDIA H200"]);
        assert_eq!(
            (m.name.as_str(), file),
            ("NVIDIA H200", Some("simulator/models/h200.json"))
        );
        let (m, file) = GpuModel::for_devices(["NVIDIA H200", "NVIDIA H100 80GB HBM3"]);
        assert_eq!((m, file), (GpuModel::default(), None));
        assert_eq!(GpuModel::for_devices(["NVIDIA L4"]).1, None);
        assert!(GpuModel::shipped_for("synthetic").is_none());
    }
}
