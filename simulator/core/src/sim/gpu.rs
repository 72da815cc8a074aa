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
    /// When set, the jobs are separate processes (contexts) under time
    /// slicing and the preemptive policy (FIKIT's own switch cost is
    /// [`FikitGate::switch_ns`]): each time the device passes from one job's kernels to
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
    /// press on a share `o` of the SMs (at most 1: what their started
    /// kernels' full waves would hold, [`crate::sim::slots`]), a kernel runs
    /// `1 + corun_slowdown * o` times slower, on top of the SM sharing.
    /// What co-running kernels cost each other in caches and memory;
    /// `fikit-lab calibrate` measures it with a latency-bound kernel.
    pub corun_slowdown: f64,
    /// The same for the live replay's synthetic kernels, which spin on the
    /// timer and move no memory: `fikit-lab validate` simulates with it in
    /// place of `corun_slowdown` ([`GpuModel::for_replay`]).
    pub replay_corun_slowdown: f64,
    /// The share `g` of a block time that a multi-wave kernel's thin last
    /// wave takes however few blocks it holds, under MPS: a kernel of
    /// `W >= 2` waves whose last is a share `u` full runs alone as `W - 1`
    /// waves of block time `b` and a last of `(g + (1 - g) u) b`, its
    /// recorded duration kept ([`crate::sim::slots`]). 1: equal waves, the
    /// last holding its few blocks a whole block time; below 1, a block with
    /// fewer of its kernel's blocks beside it on its SM runs faster, as the
    /// GPU's cuDNN and cuBLAS kernels do (`lab/validate/partial-waves.py`).
    /// 0 to 1.
    pub last_wave_floor: f64,
    /// The live FIKIT gate's own costs ([`FikitGate`]), measured from
    /// traced live FIKIT rounds (`lab/validate/fill-timing.sh`). `None`:
    /// FIKIT as the paper's scheduler, which sees a gap the instant it
    /// opens, starts its fill at once and passes the device between jobs
    /// for nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fikit_gate: Option<FikitGate>,
}

/// What the live FIKIT gate costs, beside what its rule decides: it learns
/// that a kernel ended from a marker behind it, its fills go through the
/// driver, and the jobs are separate processes, so the device switches
/// context whenever it passes from one job's kernels to another's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FikitGate {
    /// How long after a kernel ends the gate sees it (the marker behind it
    /// written and read), ns: a fill is decided no sooner, and only if the
    /// top job has issued nothing by then; the predicted gap counts from
    /// then, as the gate counts it.
    pub release_ns: i64,
    /// From a fill's release to its kernel's start, the switch left out
    /// (the rest of the launch call and the GPU's start), ns.
    pub launch_ns: i64,
    /// The device passing from one job's kernels to another's: a kernel of
    /// another job than the one whose kernels last started starts this
    /// much later, ns (FIKIT's counterpart of
    /// [`GpuModel::context_handover_ns`], which it does not read).
    pub switch_ns: i64,
}

/// Fields a model file may no longer set, each with the value that meant
/// what the model now always does (files written before they went still
/// load where they hold it) and what that is: experiments that did not hold
/// (the lab log, 2026-11-29).
type Kept = fn(&serde_json::Value) -> bool;
const REMOVED: [(&str, Kept, &str); 3] = [
    (
        "timeslice_boundary_switch_ns",
        serde_json::Value::is_null,
        "contexts take turns by quantum only",
    ),
    (
        "mps_sharing",
        |v| v == "blocks",
        "MPS shares the SMs block by block",
    ),
    (
        "mps_order",
        |v| v == "ready",
        "kernels take SM room in the order they become ready",
    ),
];

impl Default for GpuModel {
    /// Defaults, each with its reason:
    /// - quantum 2 ms: NVIDIA publishes no value; the one public measurement
    ///   (forum report, RTX 4090) saw about 2.3 ms; to be replaced by
    ///   `fikit-lab calibrate` on the GPU;
    /// - context switch 25 µs: order of magnitude of a compute-preemption
    ///   context save/restore reported for Pascal+ GPUs; to be calibrated;
    /// - time slices preempt running kernels: compute preemption exists since
    ///   Pascal, and Hopper preempts at instruction level between contexts;
    /// - contexts take turns by quantum only (the textbook time slicer; live
    ///   replay on an H200 was matched by a measured hand-over cost,
    ///   `context_handover_ns`, without switching at kernel boundaries: the
    ///   lab log);
    /// - preemptive policy at kernel granularity: what stream priorities and a
    ///   launch-holding scheduler can do without kernel changes;
    /// - immediate preemption cost 40 µs: GPreempt (ATC'25) yields within about 40 µs;
    /// - 4 waves: a typical large kernel runs a few waves of blocks;
    /// - no hand-over cost: measured only by live replay with timelines
    ///   (`fikit-lab calibrate`), so a calibrated model file carries it;
    /// - no concurrent-kernel slowdown (either kind): co-running kernels
    ///   slow each other only by competing for SM room, as before
    ///   `fikit-lab calibrate` measured it; a calibrated model file carries both;
    /// - no FIKIT gate costs: the paper's scheduler; a model file carries
    ///   them once traced live rounds have measured them;
    ///
    /// MPS always shares the SMs block by block ([`crate::sim::slots`]):
    /// what the hardware does, from each kernel's launch shape, in the order
    /// kernels become ready (in-order dispatch as published for concurrent
    /// kernels, Gilman et al. 2021; `fikit-lab calibrate` probes it).
    fn default() -> Self {
        GpuModel {
            name: "default".to_string(),
            source: "documented defaults (simulator/core/src/sim/gpu.rs); not calibrated"
                .to_string(),
            timeslice_quantum_ns: 2_000_000,
            context_switch_ns: 25_000,
            timeslice_preempts: true,
            context_handover_ns: None,
            preempt_granularity: Granularity::Kernel,
            preempt_cost_ns: 40_000,
            block_waves: 4,
            corun_slowdown: 0.0,
            replay_corun_slowdown: 0.0,
            last_wave_floor: 1.0,
            fikit_gate: None,
        }
    }
}

/// Errors reading a GPU model file: it could not be read (`PATH: REASON`)
/// or is not a valid model (`PATH: MESSAGE`).
pub type ModelError = FileError;

/// How many times slower a kernel runs while other jobs' kernels press on a
/// share `o` of the SMs: `1 + c o` (`c`: [`GpuModel::corun_slowdown`]).
/// The one formula of the concurrent-kernel slowdown ([`crate::sim::slots`]).
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

/// Takes out of a model file's object the [`REMOVED`] fields that hold the
/// value the model now always has (true when any was); one that holds
/// another value is an error naming it.
fn strip_removed(set: &mut serde_json::Value) -> Result<bool, String> {
    let Some(object) = set.as_object_mut() else {
        return Ok(false);
    };
    let mut any = false;
    for (key, kept, what) in REMOVED {
        if let Some(v) = object.get(key) {
            if !kept(v) {
                return Err(format!(
                    "{key} is no longer a model field ({what}, the one way the \
                     simulator models it since 2026-11-29); remove it, found {v}"
                ));
            }
            object.remove(key);
            any = true;
        }
    }
    Ok(any)
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
        // An object only: serde would read an array's items as the fields
        // in order, a model no one meant.
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        let mut set: serde_json::Value = crate::sim::scenario::from_json_object(text)
            .map_err(|m| FileError::invalid(path, m))?;
        let removed = strip_removed(&mut set).map_err(|m| FileError::invalid(path, m))?;
        // Parsed from the text where nothing was stripped, so that an error
        // names its line and column.
        let parsed = if removed {
            serde_json::from_value(set.clone())
        } else {
            serde_json::from_str(text)
        };
        let mut m: GpuModel = parsed.map_err(|e| FileError::invalid(path, e.to_string()))?;
        m.validate().map_err(|m| FileError::invalid(path, m))?;
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
    /// (`corun_slowdown`), and equal waves (`last_wave_floor` 1). `fikit-lab
    /// validate` compares the simulator with replay, so it simulates with
    /// this.
    pub fn for_replay(&self) -> GpuModel {
        let mut m = self.clone();
        if m.corun_slowdown != m.replay_corun_slowdown {
            m.source = format!(
                "{}; as live replay runs: corun_slowdown {:.3} replaced by replay_corun_slowdown {:.3}",
                m.source, m.corun_slowdown, m.replay_corun_slowdown
            );
            m.corun_slowdown = m.replay_corun_slowdown;
        }
        // The replay's blocks spin on the timer: those of a thin last wave
        // take their whole block time.
        if m.last_wave_floor != 1.0 {
            m.source = format!(
                "{}; as live replay runs: last_wave_floor {:.3} replaced by 1",
                m.source, m.last_wave_floor
            );
            m.last_wave_floor = 1.0;
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
            ("context_handover_ns", self.context_handover_ns.unwrap_or(0)),
            ("preempt_cost_ns", self.preempt_cost_ns),
            (
                "fikit_gate.release_ns",
                self.fikit_gate.map_or(0, |g| g.release_ns),
            ),
            (
                "fikit_gate.launch_ns",
                self.fikit_gate.map_or(0, |g| g.launch_ns),
            ),
            (
                "fikit_gate.switch_ns",
                self.fikit_gate.map_or(0, |g| g.switch_ns),
            ),
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
        if !(0.0..=1.0).contains(&self.last_wave_floor) {
            return Err(format!(
                "last_wave_floor must be a number from 0 to 1, found {}",
                self.last_wave_floor
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
    fn removed_fields_load_only_at_the_value_the_model_has() {
        let mut v = serde_json::json!({
            "name": "old",
            "timeslice_boundary_switch_ns": null,
            "mps_sharing": "blocks",
            "mps_order": "ready",
            "corun_slowdown": 1.5,
        });
        assert_eq!(strip_removed(&mut v), Ok(true));
        let m: GpuModel = serde_json::from_value(v).unwrap();
        assert_eq!((m.name.as_str(), m.corun_slowdown), ("old", 1.5));
        for (key, value) in [
            ("timeslice_boundary_switch_ns", serde_json::json!(5)),
            ("mps_sharing", serde_json::json!("fluid")),
            ("mps_order", serde_json::json!("launch")),
        ] {
            let mut v = serde_json::Value::Object([(key.to_string(), value)].into_iter().collect());
            let e = strip_removed(&mut v).unwrap_err();
            assert!(
                e.starts_with(&format!("{key} is no longer a model field")),
                "{e}"
            );
        }
        let mut v = serde_json::json!({ "name": "new" });
        assert_eq!(strip_removed(&mut v), Ok(false));
    }

    #[test]
    fn the_last_wave_floor_is_a_share_and_replay_keeps_equal_waves() {
        for bad in [-0.1, 1.5, f64::NAN] {
            let m = GpuModel {
                last_wave_floor: bad,
                ..GpuModel::default()
            };
            let e = m.validate().unwrap_err();
            assert!(e.starts_with("last_wave_floor must be"), "{e}");
        }
        // Older files, without the field, keep equal waves.
        let m: GpuModel = serde_json::from_str(r#"{"name": "old"}"#).unwrap();
        assert_eq!(m.last_wave_floor, 1.0);
        // The replay's blocks spin on the timer: equal waves, said in the source.
        let m = GpuModel {
            last_wave_floor: 0.15,
            ..GpuModel::default()
        };
        let r = m.for_replay();
        assert_eq!(r.last_wave_floor, 1.0);
        assert!(
            r.source.contains("last_wave_floor 0.150 replaced by 1"),
            "{}",
            r.source
        );
    }

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
