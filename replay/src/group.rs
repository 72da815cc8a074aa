//! Running launch plans together on the GPU: one worker process per plan,
//! started through the control block at one instant, under MPS when the plans
//! ask for it (a private daemon, stopped on drop).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use crate::ReplayError;
use crate::control::{Control, state};
use crate::plan::{LivePolicy, Plan, WorkerResult};
pub use fikit_device::mps::MpsDaemon;
use fikit_gate::block::ControlFile;

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ReplayError + '_ {
    move |source| ReplayError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// How to run workers.
#[derive(Debug, Clone)]
pub struct LiveOptions {
    /// The program to run as a worker (`fikit-sim`, which has the hidden
    /// `live-worker` subcommand).
    pub worker_exe: PathBuf,
    /// CUDA device ordinal.
    pub device: i32,
    /// Folder for plans, the control file and results (a fresh sub-folder per run).
    pub work_dir: PathBuf,
    /// When set, every worker writes its job's per-kernel timeline here
    /// (`crate::worker::TIMELINE_ENV`; read with `fikit_replay::timeline`).
    pub timeline_dir: Option<PathBuf>,
}

/// Runs `plans` together (one worker process each) and returns each job's
/// measurements, in plan order.
pub fn run_group(
    plans: &[Plan],
    opts: &LiveOptions,
    tag: &str,
) -> Result<Vec<WorkerResult>, ReplayError> {
    let dir = opts.work_dir.join(tag);
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(io(&dir))?;
    }
    std::fs::create_dir_all(&dir).map_err(io(&dir))?;
    let mps = if plans.first().is_some_and(|p| p.policy == LivePolicy::Mps) {
        Some(MpsDaemon::start(&dir)?)
    } else {
        None
    };
    // The GPU writes completion words into the control block through a host
    // mapping: a ControlFile, in shared memory.
    let control_file = ControlFile::new("fikit-live", tag, &dir.join("control"));
    let control_path = control_file.path();
    let control = Arc::new(Control::create(control_path, plans.len())?);
    let mut children: Vec<(Child, PathBuf, PathBuf)> = Vec::new();
    for p in plans {
        let plan_path = dir.join(format!("plan-{}.json", p.index));
        let result_path = dir.join(format!("result-{}.json", p.index));
        let err_path = dir.join(format!("stderr-{}.txt", p.index));
        p.save(&plan_path)?;
        let err = std::fs::File::create(&err_path).map_err(io(&err_path))?;
        let mut cmd = Command::new(&opts.worker_exe);
        cmd.arg("live-worker")
            .arg("--plan")
            .arg(&plan_path)
            .arg("--control")
            .arg(control_path)
            .arg("--result")
            .arg(&result_path)
            .arg("--device")
            .arg(opts.device.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(err);
        if let Some(m) = &mps {
            cmd.envs(m.env().iter().map(|(k, v)| (k, v)));
        }
        if let Some(d) = &opts.timeline_dir {
            cmd.env(crate::worker::TIMELINE_ENV, d);
        }
        let child = cmd.spawn().map_err(io(&opts.worker_exe))?;
        children.push((child, result_path, err_path));
    }
    let fail = |i: usize, what: String, children: &mut Vec<(Child, PathBuf, PathBuf)>| {
        control.header().abort.store(1, Ordering::SeqCst);
        for (c, _, _) in children.iter_mut() {
            let _ = c.wait();
        }
        let tail = std::fs::read_to_string(&children[i].2).unwrap_or_default();
        let tail: String = tail
            .lines()
            .rev()
            .take(8)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join("\n");
        ReplayError::Worker {
            job: plans[i].job.clone(),
            message: format!("{what}\n{tail}"),
        }
    };
    // Wait until every worker is ready (context, kernel compiled, buffers).
    loop {
        let mut ready = 0;
        for i in 0..plans.len() {
            match control.slot(i).state.load(Ordering::SeqCst) {
                state::READY => ready += 1,
                state::FAILED => {
                    return Err(fail(i, "failed while starting".into(), &mut children));
                }
                _ => {}
            }
            if let Ok(Some(st)) = children[i].0.try_wait() {
                return Err(fail(
                    i,
                    format!("exited while starting ({st})"),
                    &mut children,
                ));
            }
        }
        if ready == plans.len() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    control
        .header()
        .start_ns
        .store(crate::now_ns() + 20_000_000, Ordering::SeqCst);
    let mut results = Vec::with_capacity(plans.len());
    for i in 0..children.len() {
        let st = children[i].0.wait().map_err(io(&opts.worker_exe))?;
        if !st.success() {
            return Err(fail(i, format!("exited with {st}"), &mut children));
        }
        let path = &children[i].1;
        let text = std::fs::read(path).map_err(io(path))?;
        let r: WorkerResult = serde_json::from_slice(&text).map_err(|e| ReplayError::Worker {
            job: plans[i].job.clone(),
            message: format!("{}: {e}", path.display()),
        })?;
        results.push(r);
    }
    drop(mps);
    Ok(results)
}
