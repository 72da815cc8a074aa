//! Prints what a spool holds: `cargo run -p fikit-spool --example spool-stats -- FILE...`.

use std::collections::{BTreeMap, HashMap};

use fikit_spool::{Record, read_spool};

fn main() {
    for path in std::env::args().skip(1) {
        let spool = match read_spool(path.as_ref()) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("{path}: {e}");
                continue;
            }
        };
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        let mut api_names = HashMap::new();
        let mut api_by_name: BTreeMap<String, usize> = BTreeMap::new();
        let mut api_corr: HashMap<u32, Vec<String>> = HashMap::new();
        let mut kernel_corr = Vec::new();
        for r in &spool.records {
            let k = match r {
                Record::Start(s) => {
                    println!("start: {s:?}");
                    "start"
                }
                Record::Device(d) => {
                    println!("device: {d:?}");
                    "device"
                }
                Record::String { .. } => "string",
                Record::KernelMetrics { .. } => "kernel_metrics",
                Record::CudaRuntime { version } => {
                    println!("cuda runtime: {version}");
                    "cuda_runtime"
                }
                Record::ApiName { domain, cbid, name } => {
                    api_names.insert((*domain, *cbid), name.clone());
                    "api_name"
                }
                Record::Kernel(k) => {
                    kernel_corr.push(k.correlation);
                    "kernel"
                }
                Record::MemOp(_) => "memop",
                Record::Api(a) => {
                    let n = api_names
                        .get(&(a.domain, a.cbid))
                        .cloned()
                        .unwrap_or_default();
                    api_corr.entry(a.correlation).or_default().push(n.clone());
                    *api_by_name.entry(n).or_default() += 1;
                    "api"
                }
                Record::Sync(_) => "sync",
                Record::SyncCall { .. } => "sync_call",
                Record::Dropped { .. } => "dropped",
                Record::Note { text } => {
                    println!("note: {text}");
                    "note"
                }
                Record::End(e) => {
                    println!("end: {e:?}");
                    "end"
                }
            };
            *counts.entry(k).or_default() += 1;
        }
        let joined = kernel_corr
            .iter()
            .filter(|c| api_corr.contains_key(c))
            .count();
        println!(
            "{path}: {counts:?} tail={:?} complete={} kernels joined to an API call: {joined}/{}",
            spool.tail,
            spool.is_complete(),
            kernel_corr.len()
        );
        let mut top: Vec<_> = api_by_name.into_iter().collect();
        top.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
        println!("  top APIs: {:?}", &top[..top.len().min(12)]);
        if let Some(c) = kernel_corr.get(kernel_corr.len() / 2) {
            println!(
                "  APIs with a middle kernel's correlation {c}: {:?}",
                api_corr.get(c)
            );
        }
    }
}
