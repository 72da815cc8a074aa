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
    /// press on a share `o` of the SMs (at most 1, unless kernels weigh
    /// more: `corun_weight_max`; block by block, what their started
    /// kernels' full waves would hold, [`crate::sim::slots`]; fluid, the
    /// sum of their SM demands), a kernel runs `1 + corun_slowdown * o`
    /// times slower (`o` above `corun_threshold` only), on top of the SM
    /// sharing. What co-running kernels cost each other in caches and
    /// memory; `fikit-lab calibrate` measures it with a latency-bound kernel.
    pub corun_slowdown: f64,
    /// The share of the SMs below which co-running kernels cost each other
    /// nothing: a kernel runs `1 + corun_slowdown * max(0, o - corun_threshold)`
    /// times slower. 0 (the default): the line through no slowdown at no
    /// share, as `fikit-lab calibrate` fits it. The latency-bound probe's
    /// points (25/50/75% of the SMs) lie on a steeper line that meets no
    /// slowdown at about 8-9% (H100: slope 3.10, 0.082; H200: 2.09, 0.090;
    /// the validation log, 2026-11-26). For experiments.
    pub corun_threshold: f64,
    /// The same for the live replay's synthetic kernels, which spin on the
    /// timer and move no memory: `fikit-lab validate` simulates with it in
    /// place of `corun_slowdown` ([`GpuModel::for_replay`]).
    pub replay_corun_slowdown: f64,
    /// The memory-streaming load beside which `corun_slowdown` was measured:
    /// its DRAM traffic alone at each SM share, `[share, bytes/s]`, shares
    /// rising (`fikit-lab calibrate`'s latency-bound probe). With it, under
    /// MPS block by block, a kernel whose trace carries DRAM figures
    /// (`fikit-profile --metrics`) presses on other jobs' kernels by the
    /// larger of its traffic against the load's at the kernel's one-wave
    /// share and its SM issue rate, at most fully (or `corun_weight_max`;
    /// [`corun_weight`]): a
    /// batch-1 kernel that finds its data in L2 and issues little slows a
    /// busy neighbour little; a kernel streaming as hard as the load, or
    /// filling the issue slots, slows it as the load did. Empty, or for a
    /// kernel without figures: every kernel presses fully. Empty in the
    /// shipped models and in what `fikit-lab calibrate` writes (it reports
    /// the load's traffic beside its fit) until out-of-sample rounds judge
    /// it (the validation log, 2026-11-26). For experiments.
    pub corun_load_traffic: Vec<[f64; 2]>,
    /// With `corun_load_traffic`: the most a kernel may weigh. 1 (the
    /// default): a kernel streaming harder than the calibration load at its
    /// share presses as the load did. Above 1: it presses by its traffic
    /// over the load's, up to this, and the share `o` its neighbours feel
    /// may reach it (calibrate's wide load, streaming 1.37x the narrow
    /// load's top traffic at half and three quarters of the SMs, slowed the
    /// latency-bound probe more than the narrow load's fit times that ratio;
    /// the validation log, 2026-11-26). For experiments.
    pub corun_weight_max: f64,
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
    /// - no load traffic: every kernel presses fully on the others (weighing
    ///   kernels by their metrics worsened the worst out-of-sample error;
    ///   the validation log, 2026-11-26);
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
            source: "documented defaults (simulator/src/sim/gpu.rs); not calibrated".to_string(),
            timeslice_quantum_ns: 2_000_000,
            context_switch_ns: 25_000,
            timeslice_preempts: true,
            timeslice_boundary_switch_ns: None,
            context_handover_ns: None,
            preempt_granularity: Granularity::Kernel,
            preempt_cost_ns: 40_000,
            block_waves: 4,
            corun_slowdown: 0.0,
            corun_threshold: 0.0,
            replay_corun_slowdown: 0.0,
            corun_load_traffic: Vec::new(),
            corun_weight_max: 1.0,
            mps_sharing: SmSharing::Blocks,
            mps_order: MpsOrder::Ready,
        }
    }
}

/// Errors reading a GPU model file: it could not be read (`PATH: REASON`)
/// or is not a valid model (`PATH: MESSAGE`).
pub type ModelError = FileError;

/// How many times slower a kernel runs while other jobs' kernels press on a
/// share `o` of the SMs: `1 + c max(0, o - threshold)` (`c`:
/// [`GpuModel::corun_slowdown`]; `threshold`: [`GpuModel::corun_threshold`]).
/// The one formula of the concurrent-kernel slowdown, block by block
/// ([`crate::sim::slots`]) and fluid.
#[inline]
pub fn corun_factor(c: f64, threshold: f64, o: f64) -> f64 {
    1.0 + c * (o - threshold).max(0.0)
}

/// How hard a kernel of one-wave SM share `share` presses on other jobs'
/// kernels under MPS, 0 to `max` ([`GpuModel::corun_load_traffic`],
/// [`GpuModel::corun_weight_max`]), from what
/// it does to the two things co-running kernels share (`pressure`: its DRAM
/// traffic alone, bytes/s, and its SM issue rate, 0 to 1, where measured):
/// the larger of its traffic over the calibration load's at the same share
/// (`load`: `[share, bytes/s]`, shares rising; linear between them, from 0
/// at no share, flat past the last) and its issue rate, at most 1. A kernel
/// that streams like the load, or fills the SMs' issue slots, presses fully
/// (calibrate's compute-bound load, issuing at about its peak beside a
/// latency-bound kernel, slowed it 1.31x at a quarter of the SMs where the
/// streaming load did 1.53x, and far more beyond); one that does neither
/// presses little. 1 without figures or without the load's traffic.
pub fn corun_weight(
    load: &[[f64; 2]],
    share: f64,
    pressure: Option<(f64, Option<f64>)>,
    max: f64,
) -> f64 {
    let (Some((b, issue)), Some(&[_, b_last])) = (pressure, load.last()) else {
        return 1.0;
    };
    // The segment (from the point before, or 0) whose end reaches `share`.
    let reference = std::iter::once(&[0.0, 0.0])
        .chain(load)
        .zip(load)
        .find(|(_, end)| share <= end[0])
        .map_or(b_last, |(&[s0, v0], &[s1, v1])| {
            v0 + (v1 - v0) * (share - s0) / (s1 - s0)
        });
    let memory = if reference > 0.0 { b / reference } else { 1.0 };
    memory.max(issue.unwrap_or(0.0)).clamp(0.0, max.max(1.0))
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

    /// Reads a model file; fields it omits keep their defaults.
    pub fn load(path: &Path) -> Result<GpuModel, ModelError> {
        let text = std::fs::read_to_string(path).map_err(|e| FileError::io(path, e))?;
        let m: GpuModel =
            serde_json::from_str(&text).map_err(|e| FileError::invalid(path, e.to_string()))?;
        m.validate().map_err(|m| FileError::invalid(path, m))?;
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
        let mut last = 0.0;
        for (i, &[share, bytes]) in self.corun_load_traffic.iter().enumerate() {
            if !(share > last && share <= 1.0 && bytes.is_finite() && bytes > 0.0) {
                return Err(format!(
                    "corun_load_traffic[{i}]: [{share}, {bytes}]: shares must rise within (0, 1] and traffic be a number above 0"
                ));
            }
            last = share;
        }
        if !(self.corun_threshold.is_finite() && (0.0..1.0).contains(&self.corun_threshold)) {
            return Err(format!(
                "corun_threshold must be a share from 0 up to (not including) 1, found {}",
                self.corun_threshold
            ));
        }
        if !(self.corun_weight_max.is_finite() && self.corun_weight_max >= 1.0) {
            return Err(format!(
                "corun_weight_max must be a number at least 1, found {}",
                self.corun_weight_max
            ));
        }
        if self.corun_weight_max > 1.0 && self.corun_load_traffic.is_empty() {
            return Err(format!(
                "corun_weight_max {} needs corun_load_traffic (without the load's traffic every kernel weighs 1)",
                self.corun_weight_max
            ));
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
    fn a_kernel_weighs_by_its_traffic_against_the_load_at_its_share() {
        // The load moved 1000 B/s at a quarter of the SMs, 1600 at half,
        // 1800 at three quarters.
        let load = [[0.25, 1000.0], [0.5, 1600.0], [0.75, 1800.0]];
        // At a quarter: 250 / 1000.
        assert_eq!(corun_weight(&load, 0.25, Some((250.0, None)), 1.0), 0.25);
        // Below the first share, from 0: at 0.1 the load's is 400.
        assert!((corun_weight(&load, 0.1, Some((100.0, None)), 1.0) - 0.25).abs() < 1e-12);
        // Between shares: at 0.375 the load's is 1300.
        assert!((corun_weight(&load, 0.375, Some((650.0, None)), 1.0) - 0.5).abs() < 1e-12);
        // Past the last share, flat: 900 / 1800 at 1.
        assert_eq!(corun_weight(&load, 1.0, Some((900.0, None)), 1.0), 0.5);
        // At most 1: streaming harder than the load presses as the load did.
        assert_eq!(corun_weight(&load, 0.5, Some((5000.0, None)), 1.0), 1.0);
        // The issue rate where it is larger: a kernel moving 250 of 1600 at
        // half the SMs but issuing at 70% of peak presses by 0.7; one issuing
        // at 10% by its traffic, 0.25 at a quarter.
        assert_eq!(corun_weight(&load, 0.5, Some((250.0, Some(0.7))), 1.0), 0.7);
        assert_eq!(
            corun_weight(&load, 0.25, Some((250.0, Some(0.1))), 1.0),
            0.25
        );
        // No figure, or no load traffic: fully, as before the metrics.
        assert_eq!(corun_weight(&load, 0.5, None, 1.0), 1.0);
        assert_eq!(corun_weight(&[], 0.5, Some((1.0, Some(0.0))), 1.0), 1.0);
        // With a larger most: streaming harder than the load presses by the
        // ratio (2000 / 1600 at half the SMs), up to the most (5000 / 1600
        // held at 1.5); an issue rate stays at most 1.
        assert_eq!(corun_weight(&load, 0.5, Some((2000.0, None)), 1.5), 1.25);
        assert_eq!(corun_weight(&load, 0.5, Some((5000.0, None)), 1.5), 1.5);
        assert_eq!(corun_weight(&load, 0.5, Some((800.0, Some(1.0))), 1.5), 1.0);
        let with = |t: Vec<[f64; 2]>| GpuModel {
            corun_load_traffic: t,
            ..GpuModel::default()
        };
        // The most must be a number at least 1, and above 1 only with the
        // load's traffic.
        for (bad, t) in [
            (0.5, load.to_vec()),
            (f64::NAN, load.to_vec()),
            (f64::INFINITY, load.to_vec()),
            (1.5, Vec::new()),
        ] {
            let m = GpuModel {
                corun_weight_max: bad,
                ..with(t)
            };
            assert!(m.validate().unwrap_err().starts_with("corun_weight_max"));
        }
        assert!(
            GpuModel {
                corun_weight_max: 1.5,
                ..with(load.to_vec())
            }
            .validate()
            .is_ok()
        );
        // The threshold must be a share from 0 up to 1.
        for bad in [-0.1, 1.0, f64::NAN] {
            let m = GpuModel {
                corun_threshold: bad,
                ..GpuModel::default()
            };
            assert!(m.validate().unwrap_err().starts_with("corun_threshold"));
        }
        // Load traffic must rise in share within (0, 1], above 0.
        assert!(with(load.to_vec()).validate().is_ok());
        for bad in [
            vec![[0.5, 1.0], [0.25, 1.0]],
            vec![[0.0, 1.0]],
            vec![[1.5, 1.0]],
            vec![[0.5, 0.0]],
            vec![[0.5, f64::NAN]],
        ] {
            let e = with(bad).validate().unwrap_err();
            assert!(e.starts_with("corun_load_traffic["), "{e}");
        }
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
