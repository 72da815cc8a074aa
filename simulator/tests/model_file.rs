//! The shipped default model file and the built-in defaults must agree.

use std::path::Path;

use fikit_sim::gpu::GpuModel;

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
