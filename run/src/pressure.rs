//! `--pressure FILE`: each job's measured pressure on its neighbours under
//! MPS, read from `fikit-lab pressure`'s JSON and given to the simulated
//! jobs of a prediction (run/README.md, "Predicting MPS: measured
//! pressure").

use std::path::{Path, PathBuf};

use anyhow::Result;
use serde::Deserialize;

use fikit_sim_core::sim::job::Job;

use crate::cli::bad;

/// Jobs' measured pressure weights (`fikit-lab pressure -o FILE`).
#[derive(Debug, Clone, PartialEq)]
pub struct Pressure {
    /// The file they were read from.
    pub file: PathBuf,
    /// Weight by job name, 0 to 1.
    pub weights: std::collections::BTreeMap<String, f64>,
}

impl Pressure {
    /// Reads `fikit-lab pressure`'s JSON: `jobs.<name>.weight`, each a
    /// number from 0 to 1 (its other figures are not read).
    pub fn load(path: &Path) -> Result<Pressure> {
        #[derive(Deserialize)]
        struct File {
            jobs: std::collections::BTreeMap<String, Weight>,
        }
        #[derive(Deserialize)]
        struct Weight {
            weight: f64,
        }
        let text = std::fs::read_to_string(path)
            .map_err(|e| bad(format!("--pressure {}: {e}", path.display())))?;
        let f: File = serde_json::from_str(&text).map_err(|e| {
            bad(format!(
                "--pressure {}: not fikit-lab pressure's JSON ({e})",
                path.display()
            ))
        })?;
        let mut weights = std::collections::BTreeMap::new();
        for (name, w) in f.jobs {
            if !(0.0..=1.0).contains(&w.weight) {
                return Err(bad(format!(
                    "--pressure {}: jobs.{name}.weight {} is not within 0..1",
                    path.display(),
                    w.weight
                )));
            }
            weights.insert(name, w.weight);
        }
        Ok(Pressure {
            file: path.to_path_buf(),
            weights,
        })
    }

    /// `jobs` with the weights of those named here.
    pub(crate) fn apply(&self, jobs: Vec<Job>) -> Vec<Job> {
        jobs.into_iter()
            .map(|j| match self.weights.get(&j.name).copied() {
                Some(w) => j.with_pressure_weight(w),
                None => j,
            })
            .collect()
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
        format!(
            "prediction with measured pressure (--pressure {}): {}",
            self.file.display(),
            each.join(", ")
        )
    }
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
        assert!(e.contains("not fikit-lab pressure's JSON"), "{e}");
    }
}
