//! The shipped default model file and the built-in defaults must agree.

use std::path::Path;

use fikit_sim::sim::gpu::GpuModel;

#[test]
fn the_shipped_default_model_is_the_built_in_default() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/default.json");
    assert_eq!(GpuModel::load(&path).unwrap(), GpuModel::default());
}

#[test]
fn a_model_file_may_omit_fields_but_not_invent_them() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("m.json");
    std::fs::write(&p, r#"{"timeslice_quantum_ns": 1000000}"#).unwrap();
    let m = GpuModel::load(&p).unwrap();
    assert_eq!(m.timeslice_quantum_ns, 1_000_000);
    assert_eq!(m.context_switch_ns, GpuModel::default().context_switch_ns);
    std::fs::write(&p, r#"{"quantum": 1}"#).unwrap();
    let e = GpuModel::load(&p).unwrap_err().to_string();
    assert!(e.contains("unknown field `quantum`"), "{e}");
}

#[test]
fn every_shipped_model_file_loads_and_names_its_source() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("models");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "json") {
            let m = GpuModel::load(&p).unwrap();
            assert!(!m.source.is_empty(), "{}: no source", p.display());
            assert!(
                m.timeslice_quantum_ns > 0 && m.context_switch_ns >= 0,
                "{}",
                p.display()
            );
            n += 1;
        }
    }
    assert!(n >= 2, "default.json and at least one calibrated model");
}
