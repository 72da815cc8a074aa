//! Finding libcupti, for the collector (which opens the file chosen here) and
//! for `fikit-profile` (which searches before the command runs, to say where
//! it looked and to hand its find on in [`CUPTI_FOUND_ENV`]). The collector
//! never lets cudarc's loader search for it (that loader panics when it finds
//! nothing, and could map a second copy beside the program's); it opens the
//! one chosen here and takes every CUPTI function from that handle (the
//! collector's `cupti::bind`).
//!
//! The choice ([`choose_cupti`]): a libcupti the program already loaded (for
//! example PyTorch's, from its NVIDIA wheel) always wins, since two CUPTI
//! instances in one process do not work; `FIKIT_CUPTI_PATH` naming another
//! file is then overruled, with a note. Otherwise [`locate_cupti`]'s search.
//! `fikit-profile` hands the collector the copy it found itself in
//! `FIKIT_CUPTI_FOUND`, not in the user's `FIKIT_CUPTI_PATH`: a program's own
//! copy overrules that one silently, since the user chose nothing.
//!
//! Pure std: it reads the environment through a closure and the process's
//! libraries from a `/proc/<pid>/maps` text, so it is tested without a GPU.

use std::path::{Path, PathBuf};

use crate::{CUPTI_FOUND_ENV, CUPTI_PATH_ENV};

/// Where libcupti was found, or every place that was searched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Located {
    /// A library file to load.
    Found(PathBuf),
    /// Nothing found; the folders and files that were tried, in order.
    NotFound(Vec<PathBuf>),
}

/// True for file names such as `libcupti.so`, `libcupti.so.13`, `libcupti.so.2025.3.0`.
pub fn is_cupti_file_name(name: &str) -> bool {
    name == "libcupti.so" || name.starts_with("libcupti.so.")
}

/// The libcupti file in `dir`, preferring the shortest versioned name
/// (`libcupti.so.13` over `libcupti.so.13.0.48`), then `libcupti.so`.
pub fn cupti_in_dir(dir: &Path) -> Option<PathBuf> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| is_cupti_file_name(n))
        .collect();
    names.sort_by_key(|n| (n == "libcupti.so", n.len(), n.clone()));
    names.into_iter().map(|n| dir.join(n)).find(|p| p.is_file())
}

/// The python `site-packages` folders that hold the libraries loaded into this
/// process (e.g. PyTorch's `site-packages/torch/lib/libtorch_cuda.so`), read
/// from a `/proc/<pid>/maps` text.
pub fn site_packages_from_maps(maps: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for line in maps.lines() {
        let Some(path) = line.split_whitespace().nth(5) else {
            continue;
        };
        for marker in ["/site-packages/", "/dist-packages/"] {
            if let Some(i) = path.find(marker) {
                let sp = PathBuf::from(&path[..i + marker.len() - 1]);
                if !out.contains(&sp) {
                    out.push(sp);
                }
            }
        }
    }
    out
}

/// A libcupti already mapped into the process, from a `/proc/<pid>/maps` text.
pub fn loaded_cupti_from_maps(maps: &str) -> Option<PathBuf> {
    loaded_cuptis_from_maps(maps).into_iter().next()
}

/// The mapped files of a `/proc/<pid>/maps` text whose names `is_name`
/// accepts, each once, in the order of their first mapping. A path may hold
/// spaces; ` (deleted)` after a replaced file is dropped.
pub fn mapped_files(maps: &str, is_name: &dyn Fn(&str) -> bool) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for line in maps.lines() {
        // address perms offset dev inode path: the path is the rest after 5 fields.
        let mut rest = line.trim_start();
        for _ in 0..5 {
            rest = match rest.find(char::is_whitespace) {
                Some(i) => rest[i..].trim_start(),
                None => "",
            };
        }
        let path = rest.trim_end().trim_end_matches(" (deleted)");
        if !path.starts_with('/') {
            continue;
        }
        let p = PathBuf::from(path);
        if p.file_name().and_then(|n| n.to_str()).is_some_and(is_name) && !out.contains(&p) {
            out.push(p);
        }
    }
    out
}

/// Every libcupti mapped into the process, from a `/proc/<pid>/maps` text.
pub fn loaded_cuptis_from_maps(maps: &str) -> Vec<PathBuf> {
    mapped_files(maps, &is_cupti_file_name)
}

/// The libcupti the collector will use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chosen {
    /// The file.
    pub path: PathBuf,
    /// True when the program had already loaded it (open it with
    /// `RTLD_NOLOAD`: never map a copy).
    pub already_loaded: bool,
    /// What the trace should say about the choice.
    pub notes: Vec<String>,
}

/// Chooses libcupti: one the program already loaded (from `maps`) first,
/// overruling `FIKIT_CUPTI_PATH` when that names another file (`same_file`
/// compares two paths by identity); otherwise [`locate_cupti`].
pub fn choose_cupti(
    env: &dyn Fn(&str) -> Option<String>,
    maps: &str,
    same_file: &dyn Fn(&Path, &Path) -> bool,
) -> Result<Chosen, Vec<PathBuf>> {
    let loaded = loaded_cuptis_from_maps(maps);
    let Some(first) = loaded.first().cloned() else {
        return match locate_cupti(env, "") {
            Located::Found(path) => Ok(Chosen {
                path,
                already_loaded: false,
                notes: Vec::new(),
            }),
            Located::NotFound(tried) => Err(tried),
        };
    };
    let mut notes = Vec::new();
    // Several names of one file (a symlink and its target) are one copy.
    let mut distinct: Vec<&PathBuf> = Vec::new();
    for p in &loaded {
        if !distinct.iter().any(|d| same_file(d, p)) {
            distinct.push(p);
        }
    }
    if distinct.len() > 1 {
        let list: Vec<String> = distinct.iter().map(|p| p.display().to_string()).collect();
        notes.push(format!(
            "the program already has {} different libcupti loaded ({}); using the first, \
             records may be missing",
            distinct.len(),
            list.join(", ")
        ));
    }
    if let Some(wanted) = env(CUPTI_PATH_ENV).filter(|s| !s.is_empty()) {
        let w = PathBuf::from(&wanted);
        let file = if w.is_dir() {
            cupti_in_dir(&w)
        } else {
            Some(w)
        };
        let same = file.as_deref().is_some_and(|f| same_file(f, &first));
        if !same {
            notes.push(format!(
                "{CUPTI_PATH_ENV}={wanted} is not the libcupti the program already loaded \
                 ({}); using the program's (two libcupti in one process do not work)",
                first.display()
            ));
        }
    }
    Ok(Chosen {
        path: first,
        already_loaded: true,
        notes,
    })
}

/// True when both paths name the same file (same device and inode), or are equal.
pub fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    if a == b {
        return true;
    }
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

/// The folders to search, in order, given the environment and the process's maps.
pub fn candidate_dirs(env: &dyn Fn(&str) -> Option<String>, maps: &str) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut push = |p: PathBuf| {
        if !dirs.contains(&p) {
            dirs.push(p);
        }
    };
    let toolkit_subdirs = ["extras/CUPTI/lib64", "targets/x86_64-linux/lib", "lib64"];
    for var in ["CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"] {
        if let Some(root) = env(var).filter(|s| !s.is_empty()) {
            for sub in toolkit_subdirs {
                push(Path::new(&root).join(sub));
            }
        }
    }
    let mut roots = vec![PathBuf::from("/usr/local/cuda")];
    if let Ok(rd) = std::fs::read_dir("/usr/local") {
        let mut more: Vec<PathBuf> = rd
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with("cuda-"))
            .map(|e| e.path())
            .collect();
        // Newest toolkit first, by version number (cuda-13.0 before cuda-9.2).
        more.sort_by_key(|p| std::cmp::Reverse(toolkit_version(p)));
        roots.extend(more);
    }
    roots.push(PathBuf::from("/opt/cuda"));
    for root in roots {
        for sub in toolkit_subdirs {
            push(root.join(sub));
        }
    }
    let wheel_subdirs = [
        "nvidia/cu13/lib",
        "nvidia/cuda_cupti/lib",
        "nvidia/cu12/lib",
        "nvidia/cu14/lib",
    ];
    for sp in site_packages_from_maps(maps) {
        for sub in wheel_subdirs {
            push(sp.join(sub));
        }
    }
    if let Some(ld) = env("LD_LIBRARY_PATH") {
        for d in ld.split(':').filter(|d| !d.is_empty()) {
            push(PathBuf::from(d));
        }
    }
    push(PathBuf::from("/usr/lib/x86_64-linux-gnu"));
    dirs
}

/// Finds libcupti: [`CUPTI_PATH_ENV`] first, then a copy already loaded into
/// the process, then the CUDA toolkit folders, CUDA_HOME/CUDA_PATH/CUDA_ROOT,
/// the NVIDIA wheels in the site-packages of loaded Python libraries, and
/// LD_LIBRARY_PATH.
pub fn locate_cupti(env: &dyn Fn(&str) -> Option<String>, maps: &str) -> Located {
    let mut tried = Vec::new();
    for var in [CUPTI_PATH_ENV, CUPTI_FOUND_ENV] {
        if let Some(p) = env(var).filter(|s| !s.is_empty()) {
            let p = PathBuf::from(p);
            if p.is_file() {
                return Located::Found(p);
            }
            if let Some(f) = cupti_in_dir(&p) {
                return Located::Found(f);
            }
            tried.push(p);
        }
    }
    if let Some(p) = loaded_cupti_from_maps(maps) {
        return Located::Found(p);
    }
    for d in candidate_dirs(env, maps) {
        if let Some(f) = cupti_in_dir(&d) {
            return Located::Found(f);
        }
        tried.push(d);
    }
    Located::NotFound(tried)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAPS: &str = "\
7f0000000000-7f0000001000 r-xp 00000000 08:01 1 /opt/torch/.venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so
7f0000001000-7f0000002000 r-xp 00000000 08:01 2 /usr/lib/x86_64-linux-gnu/libc.so.6
7f0000002000-7f0000003000 rw-p 00000000 00:00 0
7f0000003000-7f0000004000 r-xp 00000000 08:01 3 /opt/torch/.venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcudart.so.13
";

    #[test]
    fn names() {
        assert!(is_cupti_file_name("libcupti.so"));
        assert!(is_cupti_file_name("libcupti.so.13"));
        assert!(!is_cupti_file_name("libcupti_static.a"));
        assert!(!is_cupti_file_name("libcuptix.so"));
    }

    #[test]
    fn site_packages_are_read_from_maps() {
        assert_eq!(
            site_packages_from_maps(MAPS),
            vec![PathBuf::from(
                "/opt/torch/.venv/lib/python3.12/site-packages"
            )]
        );
        assert_eq!(loaded_cupti_from_maps(MAPS), None);
        let with = format!("{MAPS}7f-7f r-xp 0 0:0 9 /x/nvidia/cu13/lib/libcupti.so.13\n");
        assert_eq!(
            loaded_cupti_from_maps(&with),
            Some(PathBuf::from("/x/nvidia/cu13/lib/libcupti.so.13"))
        );
    }

    fn maps_with(paths: &[&str]) -> String {
        let mut m = MAPS.to_string();
        for (i, p) in paths.iter().enumerate() {
            m.push_str(&format!(
                "7f{i:02}0000-7f{i:02}1000 r-xp 00000000 08:01 {i} {p}\n"
            ));
        }
        m
    }

    #[test]
    fn loaded_copies_are_read_from_maps() {
        let m = maps_with(&[
            "/w/nvidia/cu13/lib/libcupti.so.13",
            "/w/nvidia/cu13/lib/libcupti.so.13",
            "/opt/my cuda/lib64/libcupti.so.2025.3.0 (deleted)",
            "/usr/lib/libcupti_static_helper.so",
        ]);
        assert_eq!(
            loaded_cuptis_from_maps(&m),
            vec![
                PathBuf::from("/w/nvidia/cu13/lib/libcupti.so.13"),
                PathBuf::from("/opt/my cuda/lib64/libcupti.so.2025.3.0"),
            ]
        );
        assert!(loaded_cuptis_from_maps(MAPS).is_empty());
        let cudart = mapped_files(MAPS, &|n| n.starts_with("libcudart.so"));
        assert_eq!(
            cudart,
            vec![PathBuf::from(
                "/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcudart.so.13"
            )]
        );
    }

    #[test]
    fn the_programs_libcupti_wins_over_fikit_cupti_path() {
        let by_name = |a: &Path, b: &Path| a == b;
        let wheel = "/w/nvidia/cu13/lib/libcupti.so.13";
        let maps = maps_with(&[wheel]);
        // The launcher chose the toolkit's copy: the program's is used, with a note.
        let env =
            |k: &str| (k == CUPTI_PATH_ENV).then(|| "/usr/local/cuda/lib64/libcupti.so.13".into());
        let c = choose_cupti(&env, &maps, &by_name).unwrap();
        assert_eq!(c.path, PathBuf::from(wheel));
        assert!(c.already_loaded);
        assert_eq!(c.notes.len(), 1, "{:?}", c.notes);
        assert!(c.notes[0].contains("using the program's"), "{:?}", c.notes);
        // FIKIT_CUPTI_PATH naming that same file: no note.
        let env = |k: &str| (k == CUPTI_PATH_ENV).then(|| wheel.to_string());
        let c = choose_cupti(&env, &maps, &by_name).unwrap();
        assert!(c.already_loaded && c.notes.is_empty(), "{c:?}");
        // The launcher's own find (FIKIT_CUPTI_FOUND, the user chose nothing): no note.
        let env =
            |k: &str| (k == CUPTI_FOUND_ENV).then(|| "/usr/local/cuda/lib64/libcupti.so.13".into());
        let c = choose_cupti(&env, &maps, &by_name).unwrap();
        assert_eq!(c.path, PathBuf::from(wheel));
        assert!(c.already_loaded && c.notes.is_empty(), "{c:?}");
        // Two different copies already: the first, and a note.
        let maps2 = maps_with(&[wheel, "/usr/local/cuda/lib64/libcupti.so.13"]);
        let c = choose_cupti(&|_: &str| None, &maps2, &by_name).unwrap();
        assert_eq!(c.path, PathBuf::from(wheel));
        assert!(c.notes[0].contains("2 different libcupti"), "{:?}", c.notes);
        // Two names of one file are one copy.
        let one = |_: &Path, _: &Path| true;
        let c = choose_cupti(&|_: &str| None, &maps2, &one).unwrap();
        assert!(c.notes.is_empty(), "{:?}", c.notes);
    }

    #[test]
    fn without_a_loaded_copy_the_search_decides() {
        let dir = tempfile::tempdir().unwrap();
        let lib = dir.path().join("libcupti.so.13");
        std::fs::write(&lib, b"").unwrap();
        let p = lib.to_str().unwrap().to_string();
        let env = |k: &str| (k == CUPTI_PATH_ENV).then(|| p.clone());
        let c = choose_cupti(&env, MAPS, &same_file).unwrap();
        assert_eq!(c.path, lib);
        assert!(!c.already_loaded);
        assert!(c.notes.is_empty());
        // same_file sees through a symlink.
        let link = dir.path().join("libcupti.so");
        std::os::unix::fs::symlink(&lib, &link).unwrap();
        assert!(same_file(&lib, &link));
        assert!(!same_file(&lib, Path::new("/nonexistent/libcupti.so")));
    }

    #[test]
    fn env_override_and_search_order() {
        let dir = tempfile::tempdir().unwrap();
        let lib = dir.path().join("lib64");
        std::fs::create_dir(&lib).unwrap();
        std::fs::write(lib.join("libcupti.so.13.0.1"), b"").unwrap();
        std::fs::write(lib.join("libcupti.so.13"), b"").unwrap();
        let d = dir.path().to_str().unwrap().to_string();
        // A folder in FIKIT_CUPTI_PATH.
        let libs = lib.to_str().unwrap().to_string();
        let env = |k: &str| (k == CUPTI_PATH_ENV).then(|| libs.clone());
        assert_eq!(
            locate_cupti(&env, ""),
            Located::Found(lib.join("libcupti.so.13"))
        );
        // The launcher's find is searched too, after the user's choice.
        let env = |k: &str| (k == CUPTI_FOUND_ENV).then(|| libs.clone());
        assert_eq!(
            locate_cupti(&env, ""),
            Located::Found(lib.join("libcupti.so.13"))
        );
        let env = |k: &str| match k {
            CUPTI_PATH_ENV => Some(d.clone()),
            CUPTI_FOUND_ENV => Some(libs.clone()),
            _ => None,
        };
        match locate_cupti(&env, "") {
            Located::Found(f) => assert_eq!(f, lib.join("libcupti.so.13")),
            Located::NotFound(tried) => panic!("{tried:?}"),
        }
        // CUDA_HOME comes before the fixed folders.
        let env = |k: &str| (k == "CUDA_HOME").then(|| d.clone());
        let dirs = candidate_dirs(&env, MAPS);
        assert_eq!(dirs[0], dir.path().join("extras/CUPTI/lib64"));
        assert!(dirs.contains(&PathBuf::from(
            "/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cu13/lib"
        )));
        assert!(dirs.contains(&PathBuf::from("/usr/local/cuda/extras/CUPTI/lib64")));
    }

    #[test]
    fn not_found_lists_where_it_looked() {
        let env = |k: &str| (k == CUPTI_PATH_ENV).then(|| "/nonexistent/fikit".to_string());
        match locate_cupti(&env, MAPS) {
            Located::Found(p) => {
                // This machine has a CUDA toolkit; nothing more to check.
                assert!(p.to_string_lossy().contains("libcupti"));
            }
            Located::NotFound(tried) => {
                assert_eq!(tried[0], PathBuf::from("/nonexistent/fikit"));
                assert!(tried.contains(&PathBuf::from("/usr/local/cuda/extras/CUPTI/lib64")));
            }
        }
    }
}

/// The version numbers in a toolkit folder's name (`cuda-12.4` → `[12, 4]`);
/// names without numbers sort first in reverse (last in search order).
fn toolkit_version(dir: &Path) -> Vec<u32> {
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .trim_start_matches("cuda-")
        .split('.')
        .map_while(|part| part.parse().ok())
        .collect()
}

#[cfg(test)]
mod toolkit_order {
    use super::toolkit_version;
    use std::path::{Path, PathBuf};

    #[test]
    fn newest_toolkit_first_by_number_not_by_text() {
        let mut dirs: Vec<PathBuf> = ["cuda-9.2", "cuda-13.0", "cuda-12.4", "cuda-12.10"]
            .iter()
            .map(|n| Path::new("/usr/local").join(n))
            .collect();
        dirs.sort_by_key(|p| std::cmp::Reverse(toolkit_version(p)));
        let names: Vec<String> = dirs
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["cuda-13.0", "cuda-12.10", "cuda-12.4", "cuda-9.2"]);
    }
}
