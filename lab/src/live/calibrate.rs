//! `fikit-lab calibrate`, and the hidden `live-probe` subcommand its probes
//! run in (one process each).

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use anyhow::Context;
use clap::Args;
use fikit_replay::control::{Control, state};
use fikit_sim::cli::{Failure, bad_input, other, print};
use fikit_sim::sim::gpu::GpuModel;

use super::{gpu_name, worker_options};

/// `fikit-lab live-probe` (hidden): one calibration probe.
#[derive(Args)]
pub struct ProbeArgs {
    /// The run's control file.
    #[arg(long)]
    control: PathBuf,
    /// This probe's slot.
    #[arg(long)]
    index: usize,
    /// Where to write the log (JSON).
    #[arg(long)]
    result: PathBuf,
    /// How long the probe runs, ms.
    #[arg(long, default_value_t = 400)]
    run_ms: u64,
    /// CUDA device ordinal.
    #[arg(long, default_value_t = 0)]
    device: i32,
    /// `probe` (one long kernel logging its switch-outs), `busy` (back-to-back
    /// kernels of --kernel-us on every SM), `sparse` (a short kernel every
    /// --period-us, each waited for; logs latencies), `corun` (small kernels
    /// timed alone and beside loads on another stream: the concurrent-kernel
    /// slowdown), `dispatch` (a one-block kernel beside a wide one: the order
    /// in which blocks of concurrent kernels are placed) or `dispatch-wide`
    /// and `dispatch-small` (the two sides of that probe across two
    /// processes).
    #[arg(long, default_value = "probe")]
    mode: String,
    /// Kernel length for busy and sparse, µs.
    #[arg(long, default_value_t = 5)]
    kernel_us: u64,
    /// Period of sparse, µs.
    #[arg(long, default_value_t = 1000)]
    period_us: u64,
}

/// SM shares of the loads beside which calibrate times a small kernel.
const CORUN_DEMANDS: [f64; 3] = [0.25, 0.5, 0.75];
/// The same for the compute-bound kernel, from one load block an SM (where
/// the load's and the victim's warps together just fill the issue slots):
/// beside 25% it already stretched 8x, beside more its runs outlived the load.
const CORUN_COMPUTE_DEMANDS: [f64; 4] = [0.125, 0.25, 0.5, 0.75];

/// `fikit-lab calibrate`.
#[derive(Args)]
pub struct CalibrateArgs {
    /// Write the GPU model file here.
    #[arg(short, long, value_name = "FILE", default_value = "gpu-model.json")]
    output: PathBuf,
    /// CUDA device ordinal.
    #[arg(long, default_value_t = 0)]
    device: i32,
    /// How long each probe runs, ms (longer: more time slices measured).
    #[arg(long, default_value_t = 400)]
    run_ms: u64,
}

/// `fikit-lab live-probe`.
pub fn run_probe(a: ProbeArgs) -> Result<(), Failure> {
    let control = Control::open(&a.control).map_err(bad_input)?;
    let slot = control.slot(a.index);
    let r = (|| -> anyhow::Result<serde_json::Value> {
        let gpu = fikit_replay::gpu::Gpu::open(a.device)?;
        let launch_ns = fikit_replay::calibrate::launch_cost(&gpu, 200)?;
        slot.state.store(state::READY, Ordering::SeqCst);
        while control.header().start_ns.load(Ordering::SeqCst) == 0 {
            if control.header().abort.load(Ordering::SeqCst) != 0 {
                anyhow::bail!("aborted");
            }
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
        let start_ns = control.header().start_ns.load(Ordering::SeqCst);
        fikit_replay::spin_until(start_ns);
        let run_ns = a.run_ms * 1_000_000;
        match a.mode.as_str() {
            "dispatch-wide" | "dispatch-small" => {
                let wide = a.mode == "dispatch-wide";
                let (waves, firsts) = fikit_replay::calibrate::dispatch_side(&gpu, start_ns, wide)?;
                Ok(serde_json::json!({ "gpu": gpu.name, "waves": waves, "firsts": firsts }))
            }
            "busy" => {
                let n = fikit_replay::calibrate::busy(&gpu, a.kernel_us * 1000, run_ns)?;
                Ok(serde_json::json!({ "gpu": gpu.name, "kernels": n }))
            }
            "corun" => {
                let fits = fikit_replay::calibrate::LoadKind::ALL
                    .iter()
                    .map(|&k| {
                        let demands: &[f64] = match k {
                            fikit_replay::calibrate::LoadKind::Compute
                            | fikit_replay::calibrate::LoadKind::LatencyCompute => {
                                &CORUN_COMPUTE_DEMANDS
                            }
                            _ => &CORUN_DEMANDS,
                        };
                        fikit_replay::calibrate::corun(&gpu, k, demands)
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(serde_json::json!({ "gpu": gpu.name, "corun": fits }))
            }
            "dispatch" => {
                let d = fikit_replay::calibrate::dispatch_order(&gpu)?;
                Ok(serde_json::json!({ "gpu": gpu.name, "dispatch": d }))
            }
            "sparse" => {
                let lat = fikit_replay::calibrate::sparse(
                    &gpu,
                    a.kernel_us * 1000,
                    a.period_us * 1000,
                    run_ns,
                )?;
                Ok(serde_json::json!({ "gpu": gpu.name, "latencies_ns": lat }))
            }
            _ => {
                let log = fikit_replay::calibrate::probe(&gpu, run_ns)?;
                Ok(serde_json::json!({
                    "gpu": gpu.name, "sm_count": gpu.sm_count, "launch_ns": launch_ns, "log": log
                }))
            }
        }
    })();
    match r {
        Ok(v) => {
            slot.state.store(state::FINISHED, Ordering::SeqCst);
            std::fs::write(&a.result, v.to_string())
                .with_context(|| format!("writing {}", a.result.display()))
                .map_err(other)
        }
        Err(e) => {
            slot.state.store(state::FAILED, Ordering::SeqCst);
            control.header().abort.store(1, Ordering::SeqCst);
            Err(other(e))
        }
    }
}

/// Runs `n` probes at once; returns their outputs.
fn probes(n: usize, a: &CalibrateArgs, dir: &Path) -> Result<Vec<serde_json::Value>, Failure> {
    probes_with(&vec![vec![]; n], a, dir, &format!("probe-{n}"))
}

/// Runs one probe process per entry of `extra` (its extra arguments) at once.
fn probes_with(
    extra: &[Vec<String>],
    a: &CalibrateArgs,
    dir: &Path,
    tag: &str,
) -> Result<Vec<serde_json::Value>, Failure> {
    probes_with_env(extra, a, dir, tag, &[])
}

/// [`probes_with`], each probe with `env` added to its environment (an MPS
/// daemon's pipe folder).
fn probes_with_env(
    extra: &[Vec<String>],
    a: &CalibrateArgs,
    dir: &Path,
    tag: &str,
    env: &[(String, std::path::PathBuf)],
) -> Result<Vec<serde_json::Value>, Failure> {
    let n = extra.len();
    let exe = std::env::current_exe()
        .context("finding this program")
        .map_err(other)?;
    let sub = dir.join(tag);
    std::fs::create_dir_all(&sub)
        .context("work folder")
        .map_err(other)?;
    let cpath = sub.join("control");
    let control = Control::create(&cpath, n).map_err(other_replay)?;
    let mut kids = Vec::new();
    for (i, args) in extra.iter().enumerate() {
        let child = std::process::Command::new(&exe)
            .arg("live-probe")
            .arg("--control")
            .arg(&cpath)
            .arg("--index")
            .arg(i.to_string())
            .arg("--result")
            .arg(sub.join(format!("probe-{i}.json")))
            .arg("--run-ms")
            .arg(a.run_ms.to_string())
            .arg("--device")
            .arg(a.device.to_string())
            .args(args)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .spawn()
            .context("starting a probe")
            .map_err(other)?;
        kids.push(child);
    }
    loop {
        let states: Vec<u32> = (0..n)
            .map(|i| control.slot(i).state.load(Ordering::SeqCst))
            .collect();
        if states.contains(&state::FAILED) || control.header().abort.load(Ordering::SeqCst) != 0 {
            for k in &mut kids {
                let _ = k.wait();
            }
            return Err(other(anyhow::anyhow!(
                "a calibration probe failed (its error is above)"
            )));
        }
        if states.iter().all(|&s| s == state::READY) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    control
        .header()
        .start_ns
        .store(fikit_replay::now_ns() + 20_000_000, Ordering::SeqCst);
    let mut out = Vec::new();
    for (i, mut k) in kids.into_iter().enumerate() {
        let st = k.wait().context("waiting for a probe").map_err(other)?;
        if !st.success() {
            return Err(other(anyhow::anyhow!(
                "calibration probe {i} exited with {st}"
            )));
        }
        let p = sub.join(format!("probe-{i}.json"));
        let text = std::fs::read(&p)
            .with_context(|| format!("reading {}", p.display()))
            .map_err(other)?;
        out.push(
            serde_json::from_slice(&text)
                .context("probe output")
                .map_err(other)?,
        );
    }
    Ok(out)
}

/// The dispatch-order probe across two MPS clients, under a daemon of its
/// own; `None` (with a warning) where no MPS daemon can start.
fn dispatch_across_mps(
    a: &CalibrateArgs,
    dir: &Path,
) -> Result<Option<fikit_replay::calibrate::DispatchProbe>, Failure> {
    let daemon = match fikit_replay::group::MpsDaemon::start(&dir.join("mps")) {
        Ok(d) => d,
        Err(e) => {
            eprintln!(
                "fikit-lab: calibrate: warning: no MPS daemon ({e}); the dispatch order across processes is not measured"
            );
            return Ok(None);
        }
    };
    let mode = |m: &str| vec!["--mode".to_string(), m.to_string()];
    let outs = probes_with_env(
        &[mode("dispatch-wide"), mode("dispatch-small")],
        a,
        dir,
        "dispatch-mps",
        daemon.env(),
    )?;
    drop(daemon);
    let side = |o: &serde_json::Value| -> Result<(f64, Vec<u64>), Failure> {
        let waves = o["waves"].as_f64().unwrap_or(0.0);
        let firsts = serde_json::from_value(o["firsts"].clone())
            .context("dispatch-order probe output")
            .map_err(other)?;
        Ok((waves, firsts))
    };
    let (waves, wide) = side(&outs[0])?;
    let (_, small) = side(&outs[1])?;
    Ok(Some(fikit_replay::calibrate::dispatch_across(
        waves, &wide, &small,
    )))
}

fn other_replay(e: fikit_replay::ReplayError) -> Failure {
    other(e.into())
}

fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = secs.div_euclid(86_400) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

/// `fikit-lab calibrate`.
pub fn run_calibrate(a: CalibrateArgs) -> Result<(), Failure> {
    let dir = tempfile::tempdir().context("work folder").map_err(other)?;
    let (estimates, gpu, mut launch) = time_slicing(&a, dir.path())?;
    let sparse = sparse_latency(&a, dir.path())?;
    // The context hand-over: two synthetic jobs under the live preemptive
    // policy, with per-kernel timelines.
    eprintln!(
        "fikit-lab: calibrate: context hand-over ({} sparse 20 µs kernels beside back-to-back 100 µs kernels, preemptive)",
        fikit_replay::live::handover::HIGH_KERNELS
    );
    let (opts, _work) = worker_options(a.device, "handover")?;
    let handover = fikit_replay::live::handover::measure(&opts)
        .context("measuring the context hand-over")
        .map_err(other)?;
    // Concurrent-kernel slowdown: small kernels beside loads of a quarter to
    // three quarters of the SMs, each kind of kernel beside its own kind.
    eprintln!(
        "fikit-lab: calibrate: concurrent-kernel slowdown (small spin, memory, compute and pointer-chasing kernels beside loads of 25-75% of the SMs, the compute kernel also 12.5%; a memory-streaming kernel beside pointer-chasing loads, a pointer-chasing one beside compute-bound loads (also 12.5%) and beside loads streaming with 16-byte accesses; each memory load also timed alone for its traffic)"
    );
    let outs = probes_with(
        &[vec!["--mode".to_string(), "corun".to_string()]],
        &a,
        dir.path(),
        "corun",
    )?;
    let corun: Vec<fikit_replay::calibrate::CorunFit> =
        serde_json::from_value(outs[0]["corun"].clone())
            .context("concurrent-kernel probe output")
            .map_err(other)?;
    let slowdowns = Slowdowns::of(&corun);
    let (dispatch, dispatch_mps) = dispatch_orders(&a, dir.path())?;
    launch.sort_unstable();
    let launch_ns = launch.get(launch.len() / 2).copied().unwrap_or(0);
    let model = model(
        &a, &gpu, &estimates, launch_ns, &handover, &slowdowns, &dispatch,
    );
    let text = serde_json::to_string_pretty(&model)
        .context("encoding")
        .map_err(other)?;
    std::fs::write(&a.output, format!("{text}\n"))
        .with_context(|| format!("writing {}", a.output.display()))
        .map_err(other)?;
    let summary = serde_json::json!({ "estimates": estimates, "launch_ns": launch_ns, "sparse_latency": sparse, "handover": handover, "corun": corun, "dispatch": dispatch, "dispatch_mps": dispatch_mps, "model": model });
    print(&format!(
        "{}\n",
        serde_json::to_string_pretty(&summary).unwrap_or_default()
    ))?;
    eprintln!("fikit-lab: wrote {}", a.output.display());
    Ok(())
}

/// Time slicing: 2, then 3 processes of probes at once. Returns the
/// estimates (2 processes, then 3), the GPU's name and the probes' launch
/// call times, ns.
fn time_slicing(
    a: &CalibrateArgs,
    dir: &Path,
) -> Result<
    (
        Vec<fikit_replay::calibrate::SliceEstimate>,
        String,
        Vec<i64>,
    ),
    Failure,
> {
    let mut estimates = Vec::new();
    let mut gpu = String::new();
    let mut launch = Vec::new();
    for n in [2usize, 3] {
        eprintln!(
            "fikit-lab: calibrate: {n} processes time-slicing probes of {} ms",
            a.run_ms
        );
        let outs = probes(n, a, dir)?;
        let logs: Vec<fikit_replay::calibrate::ProbeLog> = outs
            .iter()
            .map(|v| serde_json::from_value(v["log"].clone()))
            .collect::<Result<_, _>>()
            .context("probe logs")
            .map_err(other)?;
        gpu = outs[0]["gpu"].as_str().unwrap_or("GPU").to_string();
        launch.extend(outs.iter().filter_map(|v| v["launch_ns"].as_i64()));
        match fikit_replay::calibrate::estimate(&logs) {
            Some(e) => estimates.push(e),
            None => {
                return Err(other(anyhow::anyhow!(
                    "the {n} probes never took turns: the GPU did not time-slice them"
                )));
            }
        }
    }
    Ok((estimates, gpu, launch))
}

/// What a sparse latency-bound job waits while another context keeps the
/// GPU busy with kernels of various lengths: one summary per length.
fn sparse_latency(a: &CalibrateArgs, dir: &Path) -> Result<Vec<serde_json::Value>, Failure> {
    let mut sparse = Vec::new();
    for kernel_us in [0u64, 20, 200, 2000] {
        eprintln!(
            "fikit-lab: calibrate: sparse 5 µs kernels beside back-to-back {kernel_us} µs kernels"
        );
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let sparse_args = s(&[
            "--mode",
            "sparse",
            "--kernel-us",
            "5",
            "--period-us",
            "1000",
        ]);
        // 0: the sparse kernels alone (their own latency, the reference).
        let procs = if kernel_us == 0 {
            vec![sparse_args]
        } else {
            vec![
                s(&["--mode", "busy", "--kernel-us", &kernel_us.to_string()]),
                sparse_args,
            ]
        };
        let outs = probes_with(&procs, a, dir, &format!("sparse-{kernel_us}"))?;
        let last = outs.len() - 1;
        let mut lat: Vec<i64> = outs[last]["latencies_ns"]
            .as_array()
            .map(|v| v.iter().filter_map(|x| x.as_i64()).collect())
            .unwrap_or_default();
        lat.sort_unstable();
        let q = |p: f64| {
            lat.get(((p * lat.len() as f64) as usize).min(lat.len().saturating_sub(1)))
                .copied()
                .unwrap_or(0)
        };
        sparse.push(serde_json::json!({
            "busy_kernel_us": kernel_us, "samples": lat.len(),
            "p10_ns": q(0.1), "p50_ns": q(0.5), "p90_ns": q(0.9), "max_ns": lat.last().copied().unwrap_or(0),
            "busy_kernels": if last > 0 { outs[0]["kernels"].clone() } else { serde_json::Value::Null },
        }));
    }
    Ok(sparse)
}

/// The concurrent-kernel slowdowns the model and its source use, from the
/// corun probe's fits.
struct Slowdowns {
    c_latency: f64,
    c_memory: f64,
    c_spin: f64,
    c_chase_load: f64,
    /// The latency-bound probe's load alone at each share, in words.
    traffic_words: String,
}

impl Slowdowns {
    fn of(corun: &[fikit_replay::calibrate::CorunFit]) -> Slowdowns {
        let slowdown = |k: fikit_replay::calibrate::LoadKind| {
            corun
                .iter()
                .find(|f| f.kind == k)
                .map_or(0.0, |f| f.slowdown)
        };
        use fikit_replay::calibrate::LoadKind;
        // A fit below 0 (noise around no slowdown; -0.0 too) counts as 0.
        let at_least_0 = |c: f64| if c > 0.0 { c } else { 0.0 };
        // Real batch-1 kernels issue little and wait on memory: under MPS they
        // slow like the latency-bound probe, not the streaming one (the
        // validation log, 2026-11-26), so its fit is the model's.
        let (c_latency, c_memory, c_spin, c_chase_load) = (
            at_least_0(slowdown(LoadKind::Latency)),
            at_least_0(slowdown(LoadKind::Memory)),
            at_least_0(slowdown(LoadKind::Spin)),
            at_least_0(slowdown(LoadKind::ChaseLoad)),
        );
        // The latency-bound probe's load: its traffic alone at each share.
        // Reported as a measurement, not used by the model (weighing kernels
        // by their DRAM traffic against it failed its check; the lab log,
        // 2026-11), so the model keeps every kernel pressing fully.
        let load_traffic: Vec<[f64; 2]> = corun
            .iter()
            .find(|f| f.kind == LoadKind::Latency)
            .map(|f| {
                f.points
                    .iter()
                    .filter(|p| p.load_demand > 0.0 && p.load_bytes_per_s > 0.0)
                    .map(|p| [p.load_demand, p.load_bytes_per_s])
                    .collect()
            })
            .unwrap_or_default();
        let traffic_words = load_traffic
            .iter()
            .map(|[s, b]| format!("{:.0}% {:.0} GB/s", s * 100.0, b / 1e9))
            .collect::<Vec<_>>()
            .join(", ");
        Slowdowns {
            c_latency,
            c_memory,
            c_spin,
            c_chase_load,
            traffic_words,
        }
    }
}

/// The order in which blocks of concurrent kernels are placed, in one
/// process and across two MPS clients (`None` without an MPS daemon).
fn dispatch_orders(
    a: &CalibrateArgs,
    dir: &Path,
) -> Result<
    (
        fikit_replay::calibrate::DispatchProbe,
        Option<fikit_replay::calibrate::DispatchProbe>,
    ),
    Failure,
> {
    // The order in which blocks of concurrent kernels are placed: what the
    // MPS model assumes (in order), checked; not a model parameter.
    eprintln!(
        "fikit-lab: calibrate: dispatch order (a one-block kernel beside a kernel of 3.5 waves on another stream)"
    );
    let outs = probes_with(
        &[vec!["--mode".to_string(), "dispatch".to_string()]],
        a,
        dir,
        "dispatch",
    )?;
    let dispatch: fikit_replay::calibrate::DispatchProbe =
        serde_json::from_value(outs[0]["dispatch"].clone())
            .context("dispatch-order probe output")
            .map_err(other)?;
    if dispatch.order != fikit_replay::calibrate::DispatchOrder::InOrder {
        eprintln!(
            "fikit-lab: calibrate: warning: blocks of concurrent kernels were not placed in order \
             ({}: the one-block kernel started {:.2} block times into a kernel of {:.2} waves); \
             the MPS model assumes they are",
            dispatch.order.describe(),
            dispatch.median_in_blocks,
            dispatch.waves
        );
    }
    // The same across two MPS clients: another process's kernels reach the
    // GPU through their own channels, as a partner's under MPS do.
    eprintln!(
        "fikit-lab: calibrate: dispatch order across two MPS clients (the wide kernels in one process, the one block in another)"
    );
    let dispatch_mps = dispatch_across_mps(a, dir)?;
    if let Some(d) = &dispatch_mps {
        eprintln!(
            "fikit-lab: calibrate: across two MPS clients the one-block kernel started {:.2} block times into a kernel of {:.2} waves ({})",
            d.median_in_blocks,
            d.waves,
            d.order.describe()
        );
    }
    Ok((dispatch, dispatch_mps))
}

/// The GPU model calibrate writes, with its source in words.
fn model(
    a: &CalibrateArgs,
    gpu: &str,
    estimates: &[fikit_replay::calibrate::SliceEstimate],
    launch_ns: i64,
    handover: &fikit_replay::live::handover::HandoverEstimate,
    s: &Slowdowns,
    dispatch: &fikit_replay::calibrate::DispatchProbe,
) -> GpuModel {
    let [h25, h50, h75] = handover.quartiles_ns;
    let e2 = &estimates[0];
    let e3 = &estimates[1];
    let args: Vec<String> = std::env::args().skip(1).collect();
    GpuModel {
        name: gpu.to_string(),
        source: format!(
            "`fikit-lab {}` on {} ({}), {}: time-slice quantum and context switch from {} \
             slices of 2 processes (3 processes: quantum {} ns, switch {} ns); launch call {} ns \
             (median, not a model parameter); context hand-over: median of {} hand-overs between \
             two synthetic jobs' kernels under live preemptive replay with per-kernel timelines \
             (quartiles {:.1}-{:.1} us); concurrent-kernel slowdown per unit of the other kernels' \
             SM share, least squares over a small kernel beside loads of 25/50/75% of the SMs on \
             another stream: latency-bound {:.3} (corun_slowdown), memory-streaming {:.3} (not \
             used), the replay's spin kernel {:.3} (replay_corun_slowdown; fits below 0 count as \
             0; the compute-bound probe's fit, not used, is in calibrate's output), a streaming \
             kernel beside pointer-chasing loads {:.3} (not used); the latency-bound probe's load \
             alone moved {} (not used by the model); blocks of \
             concurrent kernels placed {} (a one-block kernel started {:.2} block times into a \
             kernel of {:.2} waves; the MPS model assumes in order); immediate and block \
             preemption fields and last_wave_floor (1: equal waves; \
             lab/validate/partial-waves.py measures it) are the documented defaults",
            args.join(" "),
            gpu,
            gpu_name(a.device),
            today(),
            e2.samples,
            e3.quantum_ns,
            e3.switch_ns,
            launch_ns,
            handover.samples,
            h25 as f64 / 1e3,
            h75 as f64 / 1e3,
            s.c_latency,
            s.c_memory,
            s.c_spin,
            s.c_chase_load,
            if s.traffic_words.is_empty() {
                "nothing measured".to_string()
            } else {
                s.traffic_words.clone()
            },
            dispatch.order.describe(),
            dispatch.median_in_blocks,
            dispatch.waves,
        ),
        timeslice_quantum_ns: e2.quantum_ns,
        context_switch_ns: e2.switch_ns,
        context_handover_ns: Some(h50),
        corun_slowdown: s.c_latency,
        replay_corun_slowdown: s.c_spin,
        ..GpuModel::default()
    }
}
