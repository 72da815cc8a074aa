//! A validation set's run: each job profiled alone, each pair's rounds
//! (runs alone shared between pairs, an unfinished pair resumed), then the
//! summary of simulated against real slowdowns.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::cli::bad;
use crate::exec::ExecOptions;
use crate::rounds::{RunOptions, run_with};
use crate::saved::{AloneRuns, Earlier, earlier_run};
use crate::scenario::Scenario;
use crate::set::{Set, summarize, summary_html, summary_text};

/// What a validation-set run needs, once the command line is read.
#[derive(Debug, Clone)]
pub struct SetOptions {
    /// The set, checked (policies and repetitions as the command line says).
    pub set: Set,
    /// Its output folder.
    pub out: PathBuf,
    /// Rebuild the summary only.
    pub summary_only: bool,
    /// Rebuild the pairs' tables and predictions from their rounds, and the summary.
    pub resimulate: bool,
    /// Run only these pairs (empty: all).
    pub only: Vec<String>,
    /// The collector; `None` with `summary_only`.
    pub collector: Option<PathBuf>,
    /// fikit-profile beside this program (`None` when it is missing).
    pub profiler: Option<PathBuf>,
    /// The prediction's model choice.
    pub model: Option<String>,
    /// The gate's timeout, ms.
    pub gate_timeout_ms: u64,
    /// A long wait's sleep between looks, µs (0: yield).
    pub gate_nap_us: u64,
    /// The preloaded shim (`--launch-hook preload`).
    pub shim: Option<PathBuf>,
    /// A round's time limit, s.
    pub round_timeout_s: u64,
    /// The least co-run share for a repetition to count.
    pub min_overlap: f64,
    /// Record every job of every round with fikit-profile into
    /// `<trace>/<pair>/<policy>-<repetition>/` (`profiler` is then set).
    pub trace: Option<PathBuf>,
}

impl SetOptions {
    /// Job `name`'s profile `k` (from 0): its own, else
    /// `OUT/profiles/<name>.parquet` and `OUT/profiles/<k+1>/<name>.parquet`
    /// after it; `None` past a job's own (a job given a profile has one).
    fn profile_of(&self, name: &str, k: usize) -> Option<PathBuf> {
        match (&self.set.jobs[name].profile, k) {
            (Some(own), 0) => Some(own.clone()),
            (Some(_), _) => None,
            (None, 0) => Some(self.out.join("profiles").join(format!("{name}.parquet"))),
            (None, k) => Some(
                self.out
                    .join("profiles")
                    .join((k + 1).to_string())
                    .join(format!("{name}.parquet")),
            ),
        }
    }

    /// Job `name`'s profiles that exist, in order, up to the set's count,
    /// stopping at the first missing one (so that profile k still predicts
    /// repetitions k, k + n, …).
    fn existing_profiles(&self, name: &str) -> Vec<PathBuf> {
        (0..self.set.profiles)
            .map_while(|k| self.profile_of(name, k).filter(|p| p.is_file()))
            .collect()
    }

    /// The options of pair `pair`'s run of `scenario` in `dir` (`report`:
    /// rebuilt from that run.json instead; nothing is then traced).
    fn pair_run(
        &self,
        pair: &str,
        scenario: Scenario,
        dir: PathBuf,
        report: Option<PathBuf>,
    ) -> RunOptions {
        let trace_dir = match &report {
            Some(_) => None,
            None => self.trace.as_ref().map(|t| t.join(pair)),
        };
        RunOptions {
            scenario,
            exec: ExecOptions {
                collector: self.collector.clone().unwrap_or_default(),
                profiler: trace_dir.as_ref().and(self.profiler.clone()),
                trace_dir,
                out_dir: dir,
                gate_timeout_ms: self.gate_timeout_ms,
                gate_nap_us: self.gate_nap_us,
                round_timeout_s: self.round_timeout_s,
                gate_ab_ms: 0,
                gate_ab_floor: false,
                shim: self.shim.clone(),
            },
            model: self.model.clone(),
            min_overlap: self.min_overlap,
            report,
        }
    }
}

/// Job `name`'s profiles: its own, or the set's count of them, each made
/// alone by [`profile_once`] unless its file exists.
fn profile_job(o: &SetOptions, name: &str) -> Result<Vec<PathBuf>> {
    (0..o.set.profiles)
        .map_while(|k| o.profile_of(name, k).map(|dest| (k, dest)))
        .map(|(k, dest)| {
            if o.set.jobs[name].profile.is_some() {
                Ok(dest)
            } else {
                profile_once(o, name, k, dest)
            }
        })
        .collect()
}

/// Profiles job `name` alone into `dest`, its profile `k` (unless that file
/// exists); returns the profile's path.
fn profile_once(o: &SetOptions, name: &str, k: usize, dest: PathBuf) -> Result<PathBuf> {
    let j = &o.set.jobs[name];
    let dir = dest
        .parent()
        .map_or_else(|| o.out.join("profiles"), Path::to_path_buf);
    if dest.is_file() {
        eprintln!("fikit-run: profile of {name}: {} (kept)", dest.display());
        return Ok(dest);
    }
    // A serving job's model served back to back, where the set names it.
    // A job profiled with the same command as one already profiled (a
    // server at several rates) shares its profile.
    let command = j.profile_command.as_ref().unwrap_or(&j.command);
    let twin = o.set.jobs.iter().find_map(|(other, oj)| {
        let theirs = oj.profile_command.as_ref().unwrap_or(&oj.command);
        let p = dest.with_file_name(format!("{other}.parquet"));
        (other != name && oj.profile.is_none() && theirs == command && p.is_file()).then_some(p)
    });
    if let Some(twin) = twin {
        std::fs::copy(&twin, &dest)
            .with_context(|| format!("cannot copy {} to {}", twin.display(), dest.display()))?;
        eprintln!(
            "fikit-run: profile of {name}: {}'s, the same command ({})",
            twin.display(),
            dest.display()
        );
        return Ok(dest);
    }
    let profiler = o.profiler.as_ref().ok_or_else(|| {
        bad(format!(
            "job {name} has no profile and fikit-profile is not beside this program"
        ))
    })?;
    let work = dir.join(format!("{name}.d"));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).with_context(|| format!("cannot make {}", work.display()))?;
    // Written beside an earlier profile's log, which it replaces only once
    // the profile is made: a failed run's log is kept as NAME-failed.log.
    let log = dir.join(format!("{name}.log.partial"));
    let log_file =
        std::fs::File::create(&log).with_context(|| format!("cannot write {}", log.display()))?;
    let failed = || {
        let kept = dir.join(format!("{name}-failed.log"));
        let _ = std::fs::rename(&log, &kept);
        kept
    };
    eprintln!(
        "fikit-run: profiling {name} alone{} ({})",
        if o.set.profiles > 1 {
            format!(", profile {} of {}", k + 1, o.set.profiles)
        } else {
            String::new()
        },
        command.join(" ")
    );
    let status = std::process::Command::new(profiler)
        .arg("--name")
        .arg(name)
        .arg("--priority")
        .arg(j.priority.to_string())
        .arg("-o")
        .arg(&work)
        .arg("--")
        .args(command)
        .stdout(log_file.try_clone()?)
        .stderr(log_file)
        .status()
        .with_context(|| format!("cannot run {}", profiler.display()))
        .inspect_err(|_| {
            failed();
        })?;
    if !status.success() {
        anyhow::bail!(
            "profiling {name} failed ({status}); its output: {}",
            failed().display()
        );
    }
    let traces: Vec<PathBuf> = std::fs::read_dir(&work)
        .with_context(|| format!("cannot read {}", work.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "parquet"))
        .collect();
    match traces.as_slice() {
        [one] => {
            std::fs::rename(one, &dest)
                .with_context(|| format!("cannot move {} to {}", one.display(), dest.display()))?;
            let _ = std::fs::remove_dir_all(&work);
            let done = dir.join(format!("{name}.log"));
            std::fs::rename(&log, &done)
                .with_context(|| format!("cannot move {} to {}", log.display(), done.display()))?;
            Ok(dest)
        }
        [] => anyhow::bail!(
            "profiling {name}: no CUDA process was traced (its output: {})",
            failed().display()
        ),
        _ => {
            failed();
            Err(bad(format!(
                "profiling {name}: {} CUDA processes were traced (in {}); give the job the one to use as its profile",
                traces.len(),
                work.display()
            )))
        }
    }
}

/// Runs a validation set (or rebuilds its summary); returns the exit code.
pub fn run_set(o: &SetOptions) -> Result<i32> {
    std::fs::create_dir_all(&o.out).with_context(|| format!("cannot make {}", o.out.display()))?;
    let mut code = 0;
    let run_it = |p: &crate::set::SetPair| o.only.is_empty() || o.only.contains(&p.name);
    if o.resimulate {
        for p in o.set.pairs.iter().filter(|p| run_it(p)) {
            let dir = o.out.join(&p.name);
            let saved = dir.join("run.json");
            if !saved.is_file() {
                continue;
            }
            let mut profiles = std::collections::BTreeMap::new();
            for name in &p.jobs {
                let found = o.existing_profiles(name);
                let first = o.profile_of(name, 0).unwrap_or_default();
                if found.first() != Some(&first) {
                    return Err(bad(format!(
                        "pair {}: job {name} has no profile to re-simulate with ({} is not a file)",
                        p.name,
                        first.display()
                    )));
                }
                let own = o.set.jobs[name].profile.is_some();
                if !own && found.len() < o.set.profiles {
                    eprintln!(
                        "fikit-run: pair {}: job {name} has {} of {} profiles; predicting with those (run the set to make the rest)",
                        p.name,
                        found.len(),
                        o.set.profiles
                    );
                }
                profiles.insert(name.clone(), found);
            }
            eprintln!(
                "fikit-run: pair {}: re-simulated from {}",
                p.name,
                saved.display()
            );
            let opts = o.pair_run(&p.name, o.set.scenario(p, &profiles), dir, Some(saved));
            if let Err(e) = run_with(&opts, None, Vec::new()) {
                eprintln!("fikit-run: pair {}: {e:#}", p.name);
                code = 1;
            }
        }
    } else if !o.summary_only {
        // Each pair's jobs are profiled just before its rounds (a job once),
        // so a sitting that runs out of time has whole pairs, not profiles.
        let mut profiles = std::collections::BTreeMap::new();
        // Each job runs alone once per repetition, in the first pair it is
        // in, and later pairs reuse that run (earlier calls' pairs too).
        let mut alone = AloneRuns::default();
        for p in &o.set.pairs {
            alone.keep_from(&p.name, &o.out.join(&p.name), &o.set);
        }
        let n = o.set.pairs.len();
        for (i, p) in o.set.pairs.iter().enumerate() {
            if !run_it(p) {
                continue;
            }
            for name in Set::jobs_of([p]) {
                if !profiles.contains_key(name) {
                    profiles.insert(name.to_string(), profile_job(o, name)?);
                }
            }
            let dir = o.out.join(&p.name);
            let scenario = o.set.scenario(p, &profiles);
            let resume = match earlier_run(&dir, &scenario) {
                Earlier::Complete(sets) => {
                    let now = scenario
                        .jobs
                        .iter()
                        .map(|j| j.profile.is_some() as usize + j.more_profiles.len())
                        .max()
                        .unwrap_or(0);
                    let note = if sets != now && now > 0 {
                        format!(
                            "; predicted with {sets} profile set(s), --resimulate predicts it with {now}"
                        )
                    } else {
                        String::new()
                    };
                    eprintln!(
                        "fikit-run: pair {}/{n} {}: complete in {} (kept{note})",
                        i + 1,
                        p.name,
                        dir.display()
                    );
                    continue;
                }
                Earlier::Unfinished(rounds) => rounds,
                Earlier::None => Vec::new(),
            };
            eprintln!(
                "fikit-run: pair {}/{n} {} ({} sample)",
                i + 1,
                p.name,
                p.sample.name()
            );
            let opts = o.pair_run(&p.name, scenario, dir, None);
            // A pair that cannot run (a bad profile, say) is reported and the
            // others still run.
            match run_with(&opts, Some((&p.name, &mut alone)), resume) {
                Ok(130) => {
                    code = 130;
                    break;
                }
                Ok(0) => {}
                Ok(c) => code = code.max(c),
                Err(e) => {
                    eprintln!("fikit-run: pair {}: {e:#}", p.name);
                    code = code.max(1);
                }
            }
        }
    }
    let summary = summarize(&o.set, &o.out).map_err(bad)?;
    let text = summary_text(&summary);
    println!("{text}");
    for (file, body) in [
        ("summary.txt", text),
        (
            "summary.json",
            serde_json::to_string_pretty(&summary)? + "\n",
        ),
        ("summary.html", summary_html(&o.set, &summary)),
    ] {
        let p = o.out.join(file);
        std::fs::write(&p, body).with_context(|| format!("cannot write {}", p.display()))?;
    }
    Ok(code)
}

#[cfg(test)]
mod set_profiles {
    use super::*;

    fn options(set: serde_json::Value) -> SetOptions {
        let mut set: Set = serde_json::from_value(set).unwrap();
        set.check().unwrap();
        SetOptions {
            set,
            out: PathBuf::from("/out"),
            summary_only: false,
            resimulate: false,
            only: Vec::new(),
            collector: None,
            profiler: None,
            model: None,
            gate_timeout_ms: 1,
            gate_nap_us: 0,
            shim: None,
            round_timeout_s: 1,
            min_overlap: 0.5,
            trace: None,
        }
    }

    #[test]
    fn a_jobs_profiles_go_to_numbered_folders_after_the_first() {
        let o = options(serde_json::json!({
            "profiles": 3,
            "jobs": {
                "hi": {"priority": 0, "command": ["true"]},
                "lo": {"priority": 9, "command": ["true"], "profile": "/p/lo.parquet"}
            },
            "pairs": [{"name": "a", "jobs": ["hi", "lo"], "sample": "out"}]
        }));
        let of =
            |name: &str| -> Vec<PathBuf> { (0..4).filter_map(|k| o.profile_of(name, k)).collect() };
        assert_eq!(
            of("hi"),
            [
                "/out/profiles/hi.parquet",
                "/out/profiles/2/hi.parquet",
                "/out/profiles/3/hi.parquet",
                "/out/profiles/4/hi.parquet"
            ]
            .map(PathBuf::from)
        );
        // A job given its profile has that one only.
        assert_eq!(of("lo"), [PathBuf::from("/p/lo.parquet")]);
        // None of them exists here: nothing to re-simulate with.
        assert!(o.existing_profiles("hi").is_empty());
        // The scenario takes the first for the gate, the rest as more.
        let profiles: std::collections::BTreeMap<String, Vec<PathBuf>> = [
            ("hi".to_string(), of("hi")[..3].to_vec()),
            ("lo".to_string(), of("lo")),
        ]
        .into_iter()
        .collect();
        let s = o.set.scenario(&o.set.pairs[0], &profiles);
        assert_eq!(
            s.jobs[0].profile,
            Some(PathBuf::from("/out/profiles/hi.parquet"))
        );
        assert_eq!(s.jobs[0].more_profiles.len(), 2);
        assert_eq!(s.jobs[1].profile, Some(PathBuf::from("/p/lo.parquet")));
        assert!(s.jobs[1].more_profiles.is_empty());
    }

    #[test]
    fn a_traced_set_records_each_pair_in_its_own_folder_and_a_rebuild_records_nothing() {
        let mut o = options(serde_json::json!({
            "jobs": {
                "hi": {"priority": 0, "command": ["true"]},
                "lo": {"priority": 9, "command": ["true"]}
            },
            "pairs": [{"name": "hi-lo", "jobs": ["hi", "lo"], "sample": "in"}]
        }));
        let scenario = || o.set.scenario(&o.set.pairs[0], &Default::default());
        // Untraced: no profiler around the jobs.
        let run = o.pair_run("hi-lo", scenario(), PathBuf::from("/out/hi-lo"), None);
        assert_eq!((run.exec.profiler, run.exec.trace_dir), (None, None));
        o.trace = Some(PathBuf::from("/t"));
        o.profiler = Some(PathBuf::from("/bin/fikit-profile"));
        let scenario = || o.set.scenario(&o.set.pairs[0], &Default::default());
        let run = o.pair_run("hi-lo", scenario(), PathBuf::from("/out/hi-lo"), None);
        assert_eq!(run.exec.trace_dir, Some(PathBuf::from("/t/hi-lo")));
        assert_eq!(run.exec.profiler, Some(PathBuf::from("/bin/fikit-profile")));
        assert_eq!(run.exec.out_dir, PathBuf::from("/out/hi-lo"));
        // Rebuilding from a run.json runs nothing, so traces nothing.
        let saved = Some(PathBuf::from("/out/hi-lo/run.json"));
        let run = o.pair_run("hi-lo", scenario(), PathBuf::from("/out/hi-lo"), saved);
        assert_eq!((run.exec.profiler, run.exec.trace_dir), (None, None));
    }
}
