//! The jobs' profiles: each read once into its gate table and its
//! simulated job, and the GPU model the prediction runs on.

use std::path::Path;

use anyhow::{Context, Result};

use fikit_gate::{ProfiledOp, Table};
use fikit_sim_core::sim::gpu::GpuModel;
use fikit_sim_core::sim::job::Job;

use crate::cli::bad;
use crate::scenario::{JobSpec, Scenario};

/// The profiles read: per job its table and its simulator job (`None` without a profile).
pub(crate) struct Profiles {
    /// Per job, its gate table (from its first profile).
    pub(crate) tables: Vec<Option<Table>>,
    /// Per job, a simulated job per profile (the first profile first).
    pub(crate) jobs: Vec<Vec<Job>>,
    pub(crate) devices: Vec<String>,
}

impl Profiles {
    /// The simulated jobs for repetition `rep`: each job's profile `rep`
    /// mod its count; `None` when a job has no profile.
    pub(crate) fn for_repetition(&self, rep: usize) -> Option<Vec<Job>> {
        self.jobs
            .iter()
            .map(|v| (!v.is_empty()).then(|| v[rep % v.len()].clone()))
            .collect()
    }

    /// How many profile sets the repetitions cycle through.
    pub(crate) fn sets(&self) -> usize {
        self.jobs.iter().map(Vec::len).max().unwrap_or(0)
    }
}

pub(crate) fn read_profiles(s: &Scenario) -> Result<Profiles> {
    let mut p = Profiles {
        tables: Vec::new(),
        jobs: Vec::new(),
        devices: Vec::new(),
    };
    for (i, j) in s.jobs.iter().enumerate() {
        let Some(first) = &j.profile else {
            p.tables.push(None);
            p.jobs.push(Vec::new());
            continue;
        };
        let mut jobs = Vec::new();
        for (k, path) in std::iter::once(first).chain(&j.more_profiles).enumerate() {
            let (table, job, device) =
                read_profile(path, j).with_context(|| format!("jobs[{i}].profile ({})", j.name))?;
            if !p.devices.contains(&device) {
                p.devices.push(device);
            }
            if k == 0 {
                p.tables.push(Some(table));
            }
            jobs.push(job);
        }
        p.jobs.push(jobs);
    }
    Ok(p)
}

/// One profile of job `j`: its gate table, its simulated job, its GPU's name.
fn read_profile(path: &Path, j: &JobSpec) -> Result<(Table, Job, String)> {
    let t = fikit_trace::read_trace(path).map_err(bad)?;
    if let Some(why) = other_program(&t.meta.command_line, &j.command) {
        eprintln!(
            "fikit-run: warning: {}: {why}: the prediction of {} is of that program",
            path.display(),
            j.name
        );
    }
    let mut ops: Vec<ProfiledOp> = t
        .kernels
        .iter()
        .map(|k| ProfiledOp {
            key: Some(k.kernel_key),
            start_ns: k.start_ns,
            end_ns: k.end_ns,
        })
        .collect();
    ops.extend(t.memops.iter().map(|m| ProfiledOp {
        key: None,
        start_ns: m.start_ns,
        end_ns: m.end_ns,
    }));
    let mut table = Table::from_ops(&ops);
    // The prediction's FIKIT predicts gaps as the gate does: by key.
    let mut job = Job::from_trace(&t).with_gaps_by_key(|k| table.gap_after(Some(k)));
    // A serving job: its profile re-timed to the requests it serves.
    if let Some(r) = &j.requests {
        job = job.serving(&r.arrivals_ns());
    }
    // While it is away, the others' queue on the GPU: the simulator's hold.
    table.hold_ns = job.hold_ns();
    job.name = j.name.clone();
    job.priority = j.priority;
    Ok((table, job, t.meta.device.name.clone()))
}

/// Why a profile recorded as `recorded` may be of another program than the
/// job's `command`, or `None`: the commands differ (a profile made by
/// `fikit-profile -- COMMAND` records it; one without a command line, an
/// import, is not checked).
fn other_program(recorded: &[String], command: &[String]) -> Option<String> {
    (!recorded.is_empty() && recorded != command).then(|| {
        format!(
            "profiled `{}`, the job runs `{}`",
            recorded.join(" "),
            command.join(" ")
        )
    })
}

pub(crate) fn model_for(choice: Option<&str>, devices: &[String]) -> Result<(GpuModel, String)> {
    match choice {
        Some("default") => Ok((
            GpuModel::default(),
            "documented defaults (--model default)".into(),
        )),
        Some(f) => Ok((GpuModel::load(Path::new(f)).map_err(bad)?, f.to_string())),
        None => {
            let (m, file) = GpuModel::for_devices(devices.iter().map(String::as_str));
            Ok((
                m,
                match file {
                    Some(f) => format!("{f}, for the profiles' GPU"),
                    // No profile, no prediction: the model is never used.
                    None if devices.is_empty() => "none (no job has a profile)".into(),
                    None => "documented defaults (no shipped model for the profiles' GPU)".into(),
                },
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::other_program;

    #[test]
    fn a_profile_of_another_command_is_told_apart() {
        let v = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        assert_eq!(
            other_program(&v("python3 a.py --b 1"), &v("python3 a.py --b 1")),
            None
        );
        assert_eq!(
            other_program(&v("python3 r50.py"), &v("python3 r18.py")).as_deref(),
            Some("profiled `python3 r50.py`, the job runs `python3 r18.py`")
        );
        // An import records no command: not checked.
        assert_eq!(other_program(&[], &v("python3 r18.py")), None);
    }
}
