//! Placement: every job's slices on tracks (overlapping slices spill to
//! extra lanes, so every track nests), cut to `max_events`, with the flows
//! numbered.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::{Arg, ChromeTrace, FlowEnd, Process, Slice, TIDS_PER_PID, Track, Truncation, us};

/// A slice before it is placed on a track.
pub(super) struct Pending {
    pub(super) track: TrackKey,
    pub(super) name: String,
    pub(super) cat: &'static str,
    pub(super) start: i64,
    pub(super) end: i64,
    pub(super) args: Vec<(&'static str, Arg)>,
}

/// A logical track of a job; overlapping slices spill onto extra lanes.
/// The order of the variants is the order of the tracks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum TrackKey {
    /// A simulated job's arrival-to-finish slice.
    Job,
    /// A host thread, by OS thread id.
    Host(u64),
    /// Synchronizations whose thread was not recorded.
    HostUnknown,
    /// A CUDA stream: device, context, stream.
    Stream(u32, u32, u32),
    /// A simulated job's stream, by its job-local index.
    SimStream(u32),
    /// Idle gaps.
    Gaps,
}

impl TrackKey {
    fn name(self) -> String {
        match self {
            TrackKey::Job => "job".to_string(),
            TrackKey::Host(t) => format!("host thread {t}"),
            TrackKey::HostUnknown => "syncs (thread not recorded)".to_string(),
            TrackKey::Stream(d, c, s) => format!("stream {s} (context {c}, device {d})"),
            TrackKey::SimStream(s) => format!("stream {s}"),
            TrackKey::Gaps => "GPU idle gaps".to_string(),
        }
    }
}

/// One job's slices and flows before placement.
pub(super) struct JobSlices {
    pub(super) pid: u32,
    pub(super) process: String,
    pub(super) slices: Vec<Pending>,
    /// (from slice, to slice, category).
    pub(super) flows: Vec<(usize, usize, &'static str)>,
}

/// Places the jobs' slices on tracks, cuts each job to `max_events` and
/// numbers the flows.
pub(super) fn assemble(
    jobs: Vec<JobSlices>,
    max_events: Option<usize>,
    metadata: Map<String, Value>,
) -> ChromeTrace {
    let mut out = ChromeTrace {
        metadata,
        ..ChromeTrace::default()
    };
    let mut next_flow = 1u64;
    for job in jobs {
        let JobSlices {
            pid,
            process,
            slices,
            flows,
        } = job;
        out.processes.push(Process { pid, name: process });
        let total = slices.len();
        // The first `max_events` slices by start (ties: the order they were made in).
        let mut keep = vec![true; total];
        if let Some(n) = max_events
            && total > n
        {
            let mut order: Vec<usize> = (0..total).collect();
            order.sort_by_key(|&i| (slices[i].start, i));
            for &i in &order[n..] {
                keep[i] = false;
            }
            out.truncated.push(Truncation {
                pid,
                kept: n,
                total,
                cut_at_ns: slices[order[n]].start,
            });
        }
        // Lanes per logical track: a slice goes on the first lane where it
        // nests in, or follows, what is there.
        let mut by_track: BTreeMap<TrackKey, Vec<usize>> = BTreeMap::new();
        for (i, s) in slices.iter().enumerate() {
            if keep[i] {
                by_track.entry(s.track).or_default().push(i);
            }
        }
        let mut tid_of = vec![0u32; total];
        let mut local = 0u32;
        for (key, mut idx) in by_track {
            idx.sort_by_key(|&i| (slices[i].start, std::cmp::Reverse(slices[i].end), i));
            let mut lanes: Vec<(u32, Vec<i64>)> = Vec::new();
            for i in idx {
                let (a, b) = (slices[i].start, slices[i].end);
                let lane = lanes.iter_mut().position(|(_, open)| {
                    while open.last().is_some_and(|&e| e <= a) {
                        open.pop();
                    }
                    open.last().is_none_or(|&e| b <= e)
                });
                let lane = match lane {
                    Some(l) => l,
                    None => {
                        local += 1;
                        assert!(
                            local < TIDS_PER_PID,
                            "more than {TIDS_PER_PID} tracks in one job"
                        );
                        let tid = pid * TIDS_PER_PID + local;
                        let name = if lanes.is_empty() {
                            key.name()
                        } else {
                            format!("{} (overlaps {})", key.name(), lanes.len())
                        };
                        out.tracks.push(Track { pid, tid, name });
                        lanes.push((tid, Vec::new()));
                        lanes.len() - 1
                    }
                };
                lanes[lane].1.push(b);
                tid_of[i] = lanes[lane].0;
            }
        }
        let mut flow_ends: Vec<Vec<FlowEnd>> = vec![Vec::new(); total];
        for (from, to, cat) in flows {
            if keep[from] && keep[to] {
                flow_ends[from].push(FlowEnd {
                    id: next_flow,
                    start: true,
                    cat,
                });
                flow_ends[to].push(FlowEnd {
                    id: next_flow,
                    start: false,
                    cat,
                });
                next_flow += 1;
            }
        }
        for (i, (s, flows)) in slices.into_iter().zip(flow_ends).enumerate() {
            if keep[i] {
                out.slices.push(Slice {
                    name: s.name,
                    cat: s.cat,
                    pid,
                    tid: tid_of[i],
                    start_ns: s.start,
                    dur_ns: s.end - s.start,
                    args: s.args,
                    flows,
                });
            }
        }
    }
    out.slices
        .sort_by_key(|s| (s.start_ns, s.pid, s.tid, std::cmp::Reverse(s.dur_ns)));
    if !out.truncated.is_empty() {
        let notes: Vec<Value> = out
            .truncated
            .iter()
            .map(|t| {
                json!({
                    "pid": t.pid,
                    "kept_slices": t.kept,
                    "total_slices": t.total,
                    "cut_at_us": us(t.cut_at_ns),
                })
            })
            .collect();
        out.metadata.insert(
            "truncated".into(),
            json!({
                "max_events": max_events,
                "note": "only the first max_events slices of each job (by start time) are here; flows to slices left out are dropped",
                "jobs": notes,
            }),
        );
    }
    out
}
