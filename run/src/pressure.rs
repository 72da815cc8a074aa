//! `--pressure FILE` (and `--pressure-busiest FILE`): each job's measured
//! pressure on its neighbours under MPS, read from `fikit-sim pressure`'s
//! JSON and given to the simulated jobs of a prediction. With
//! `--host-speed-from-alone=region` it is the MPS rule the out-of-sample
//! figures are judged with (run/README.md, "The MPS rule").

use std::path::{Path, PathBuf};

use anyhow::Result;
use serde::Deserialize;

use fikit_sim_core::sim::job::Job;

use crate::cli::bad;

/// Jobs' measured pressure weights (`fikit-sim pressure -o FILE`).
#[derive(Debug, Clone, PartialEq)]
pub struct Pressure {
    /// The file they were read from.
    pub file: PathBuf,
    /// Weight by job name, 0 to 1.
    pub weights: std::collections::BTreeMap<String, f64>,
    /// The job's mean host delay before a launch in the pass, ns, by job
    /// name, where the file has it (shown beside the profile's; the MPS
    /// prediction's host with `--host-speed-from-pressure`).
    pub host_ns_per_launch_of: std::collections::BTreeMap<String, f64>,
    /// The job's one-wave SM share in the pass by job name, where the file
    /// has it.
    pub shares: std::collections::BTreeMap<String, f64>,
    /// `--pressure-busiest`: the pass whose weight the busiest job takes.
    pub busiest: Option<Box<Pressure>>,
}

impl Pressure {
    /// Reads `fikit-sim pressure`'s JSON: `jobs.<name>.weight`, each a
    /// number from 0 to 1.
    pub fn load(path: &Path) -> Result<Pressure> {
        #[derive(Deserialize)]
        struct File {
            jobs: std::collections::BTreeMap<String, Weight>,
        }
        #[derive(Deserialize)]
        struct Weight {
            weight: f64,
            #[serde(default)]
            host_ns_per_launch: Option<f64>,
            #[serde(default)]
            share: Option<f64>,
        }
        let text = std::fs::read_to_string(path)
            .map_err(|e| bad(format!("--pressure {}: {e}", path.display())))?;
        let f: File = serde_json::from_str(&text).map_err(|e| {
            bad(format!(
                "--pressure {}: not fikit-sim pressure's JSON ({e})",
                path.display()
            ))
        })?;
        let mut weights = std::collections::BTreeMap::new();
        let mut host_ns_per_launch_of = std::collections::BTreeMap::new();
        let mut shares = std::collections::BTreeMap::new();
        for (name, w) in f.jobs {
            if let Some(sh) = w.share {
                if !(sh.is_finite() && (0.0..=1.0).contains(&sh)) {
                    return Err(bad(format!(
                        "--pressure {}: jobs.{name}.share {sh} is not within 0..1",
                        path.display()
                    )));
                }
                shares.insert(name.clone(), sh);
            }
            if !(0.0..=1.0).contains(&w.weight) {
                return Err(bad(format!(
                    "--pressure {}: jobs.{name}.weight {} is not within 0..1",
                    path.display(),
                    w.weight
                )));
            }
            if let Some(h) = w.host_ns_per_launch {
                if !(h.is_finite() && h > 0.0) {
                    return Err(bad(format!(
                        "--pressure {}: jobs.{name}.host_ns_per_launch {h} is not a positive number",
                        path.display()
                    )));
                }
                host_ns_per_launch_of.insert(name.clone(), h);
            }
            weights.insert(name, w.weight);
        }
        Ok(Pressure {
            file: path.to_path_buf(),
            weights,
            host_ns_per_launch_of,
            shares,
            busiest: None,
        })
    }

    /// These weights, with the busiest job's taken from `busiest`
    /// (`--pressure-busiest`).
    pub fn with_busiest(self, busiest: Pressure) -> Pressure {
        Pressure {
            busiest: Some(Box::new(busiest)),
            ..self
        }
    }

    /// Of `names`, the one with the largest share in `busiest`'s file that
    /// also has a weight there (the first of equals), with that share and
    /// weight; `None` without `--pressure-busiest` or where no job has both.
    pub(crate) fn busiest_of<'a>(
        &self,
        names: impl IntoIterator<Item = &'a str>,
    ) -> Option<(&'a str, f64, f64)> {
        let b = self.busiest.as_deref()?;
        let mut best: Option<(&str, f64, f64)> = None;
        for n in names {
            if let (Some(&sh), Some(&w)) = (b.shares.get(n), b.weights.get(n)) {
                if best.is_none_or(|(_, s, _)| sh > s) {
                    best = Some((n, sh, w));
                }
            }
        }
        best
    }

    /// `jobs` with the weights of those named here, the busiest's from
    /// `--pressure-busiest`'s file.
    pub(crate) fn apply(&self, jobs: Vec<Job>) -> Vec<Job> {
        let busiest = self
            .busiest_of(jobs.iter().map(|j| j.name.as_str()))
            .map(|(n, _, w)| (n.to_string(), w));
        jobs.into_iter()
            .map(|j| {
                let from_busiest = busiest
                    .as_ref()
                    .filter(|(n, _)| *n == j.name)
                    .map(|&(_, w)| w);
                match from_busiest.or_else(|| self.weights.get(&j.name).copied()) {
                    Some(w) => j.with_pressure_weight(w),
                    None => j,
                }
            })
            .collect()
    }

    /// `job`'s host per launch in the pass and as it is now
    /// ([`Job::host_ns_per_launch`]), ns; `None` unless it has both.
    fn host_in_pass(&self, job: &Job) -> Option<(f64, f64)> {
        let pass = *self.host_ns_per_launch_of.get(&job.name)?;
        let own = job.host_ns_per_launch().filter(|&h| h > 0.0)?;
        Some((pass, own))
    }

    /// The line under the table that sets each job's host in the pass
    /// beside its profile's ([`Job::host_ns_per_launch`] of each), for the
    /// jobs of `jobs` that have both; `None` when none has.
    pub(crate) fn host_line(&self, jobs: &[Job]) -> Option<String> {
        let each: Vec<String> = jobs
            .iter()
            .filter_map(|j| {
                let (pass, own) = self.host_in_pass(j)?;
                Some(format!(
                    "{} {:.2}x ({:.1} against {:.1} us)",
                    j.name,
                    pass / own,
                    pass / 1e3,
                    own / 1e3
                ))
            })
            .collect();
        (!each.is_empty()).then(|| {
            format!(
                "host in the pressure pass (beside the victim, under MPS) over the profile's, mean host delay before a launch (used under MPS with --host-speed-from-pressure only): {}",
                each.join(", ")
            )
        })
    }

    /// `jobs` with each named job's host brought to its host time per
    /// launch in the pass ([`Job::host_ns_per_launch`]); the others as
    /// they are.
    pub(crate) fn host_at_pass(&self, jobs: &[Job]) -> Vec<Job> {
        jobs.iter()
            .map(|j| match self.host_in_pass(j) {
                Some((pass, own)) => j.with_host_speed(pass / own),
                None => j.clone(),
            })
            .collect()
    }

    /// The line under the table that names the jobs
    /// `--host-speed-from-pressure` changes: those of `jobs` with the pass's
    /// host figure and their own ([`Pressure::host_at_pass`]).
    pub(crate) fn at_pass_line(&self, jobs: &[Job]) -> String {
        let named: Vec<&str> = jobs
            .iter()
            .filter(|j| self.host_in_pass(j).is_some())
            .map(|j| j.name.as_str())
            .collect();
        format!(
            "MPS predicted with each job's host at its speed in the pressure pass (--host-speed-from-pressure): {}",
            if named.is_empty() {
                "no job has the pass's host figure, none changed".to_string()
            } else {
                named.join(", ")
            }
        )
    }

    /// The line under the table: which jobs got which weight.
    pub(crate) fn line(&self, names: &[String]) -> String {
        let each: Vec<String> = names
            .iter()
            .map(|n| match self.weights.get(n) {
                Some(w) => format!("{n} {w:.3}"),
                None => format!("{n} as the model weighs it"),
            })
            .collect();
        let mut line = format!(
            "prediction with measured pressure (--pressure {}): {}",
            self.file.display(),
            each.join(", ")
        );
        if let Some(b) = &self.busiest {
            match self.busiest_of(names.iter().map(String::as_str)) {
                Some((n, sh, w)) => line.push_str(&format!(
                    "; the busiest, {n} (share {sh:.2}), at {w:.3} (--pressure-busiest {})",
                    b.file.display()
                )),
                None => line.push_str(&format!(
                    "; --pressure-busiest {}: no job of these has a share and weight there, none changed",
                    b.file.display()
                )),
            }
        }
        line
    }
}

/// `--pressure FILE` with `--pressure-busiest BUSIEST` (clap makes the
/// second need the first).
pub(crate) fn load_pressure(
    file: Option<&Path>,
    busiest: Option<&Path>,
) -> Result<Option<Pressure>> {
    let Some(file) = file else { return Ok(None) };
    let p = Pressure::load(file)?;
    Ok(Some(match busiest {
        Some(b) => {
            p.with_busiest(Pressure::load(b).map_err(|e| bad(format!("--pressure-busiest: {e}")))?)
        }
        None => p,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pressure_weights_are_read_checked_and_given_to_the_named_jobs() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("p.json");
        std::fs::write(
            &f,
            r#"{"corun_slowdown": 2.67, "jobs": {"small": {"weight": 0.25, "fit": 1.2}}}"#,
        )
        .unwrap();
        let p = Pressure::load(&f).unwrap();
        assert_eq!(p.weights.get("small"), Some(&0.25));
        let trace = fikit_trace::fixture::every_column("small");
        let mut other = Job::from_trace(&trace);
        other.name = "big".into();
        let jobs = p.apply(vec![Job::from_trace(&trace), other]);
        assert_eq!(jobs[0].pressure_weight, Some(0.25));
        assert_eq!(jobs[1].pressure_weight, None);
        // A file without the pass's host figure (before 2026-11-26) shows none.
        assert_eq!(p.host_line(&jobs), None);
        // With it: the pass's figure over the profile's, for the job that
        // has both (the profile's taken from the job, twice as slow here).
        let own = jobs[0].host_ns_per_launch().unwrap();
        assert!(own > 0.0, "the fixture has host delays before its launches");
        std::fs::write(
            &f,
            format!(
                r#"{{"jobs": {{"small": {{"weight": 0.25, "host_ns_per_launch": {}}}, "big": {{"weight": 1}}}}}}"#,
                2.0 * own
            ),
        )
        .unwrap();
        let with_host = Pressure::load(&f).unwrap();
        let line = with_host.host_line(&jobs).unwrap();
        assert!(
            line.ends_with(&format!(
                "small 2.00x ({:.1} against {:.1} us)",
                2.0 * own / 1e3,
                own / 1e3
            )),
            "{line}"
        );
        assert!(!line.contains("big"), "{line}");
        std::fs::write(
            &f,
            r#"{"jobs": {"small": {"weight": 0.25, "host_ns_per_launch": -3}}}"#,
        )
        .unwrap();
        let e = format!("{:#}", Pressure::load(&f).unwrap_err());
        assert!(
            e.contains("jobs.small.host_ns_per_launch -3 is not a positive number"),
            "{e}"
        );
        std::fs::write(
            &f,
            r#"{"corun_slowdown": 2.67, "jobs": {"small": {"weight": 0.25, "fit": 1.2}}}"#,
        )
        .unwrap();
        assert_eq!(
            p.line(&["small".into(), "big".into()]),
            format!(
                "prediction with measured pressure (--pressure {}): small 0.250, big as the model weighs it",
                f.display()
            )
        );
        std::fs::write(&f, r#"{"jobs": {"small": {"weight": 1.5}}}"#).unwrap();
        let e = format!("{:#}", Pressure::load(&f).unwrap_err());
        assert!(
            e.contains("jobs.small.weight 1.5 is not within 0..1"),
            "{e}"
        );
        std::fs::write(&f, r#"{"small": 0.2}"#).unwrap();
        let e = format!("{:#}", Pressure::load(&f).unwrap_err());
        assert!(e.contains("not fikit-sim pressure's JSON"), "{e}");
        std::fs::write(&f, r#"{"jobs": {"a": {"weight": 0.5, "share": 1.5}}}"#).unwrap();
        let e = format!("{:#}", Pressure::load(&f).unwrap_err());
        assert!(e.contains("jobs.a.share 1.5 is not within 0..1"), "{e}");
    }

    #[test]
    fn the_busiest_is_the_largest_share_with_a_weight_first_of_equals() {
        let d = tempfile::tempdir().unwrap();
        let write = |name: &str, json: &str| {
            let p = d.path().join(name);
            std::fs::write(&p, json).unwrap();
            Pressure::load(&p).unwrap()
        };
        let chase = write(
            "chase.json",
            r#"{"jobs": {"small": {"weight": 0.2}, "big": {"weight": 0.3}}}"#,
        );
        // `big` and `twin` tie at 0.9: the first named wins.
        let gemm = write(
            "gemm.json",
            r#"{"jobs": {"small": {"weight": 0.9, "share": 0.2}, "big": {"weight": 0.8, "share": 0.9},
                "twin": {"weight": 0.1, "share": 0.9}}}"#,
        );
        let p = chase.with_busiest(gemm);
        assert_eq!(
            p.busiest_of(["small", "big", "twin"]),
            Some(("big", 0.9, 0.8))
        );
        assert_eq!(p.busiest_of(["twin", "big"]), Some(("twin", 0.9, 0.1)));
        assert_eq!(p.busiest_of(["small"]), Some(("small", 0.2, 0.9)));
        assert_eq!(p.busiest_of(["other"]), None);
        // The line: the chase's weights, then the busiest from the second file.
        let line = p.line(&["small".to_string(), "big".to_string()]);
        assert!(
            line.contains("small 0.200, big 0.300; the busiest, big (share 0.90), at 0.800"),
            "{line}"
        );
        let line = p.line(&["other".to_string()]);
        assert!(
            line.contains("no job of these has a share and weight there, none changed"),
            "{line}"
        );
    }
}
