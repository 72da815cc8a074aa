//! A private MPS control daemon: its own pipe and log folders, so that it
//! neither needs nor disturbs a daemon the machine may run, and it stops when
//! dropped.
//!
//! A daemon started under `CUDA_VISIBLE_DEVICES` serves those devices
//! renumbered from 0, and a client that keeps the same setting sees no GPU
//! (NVIDIA's MPS guide, "CUDA_VISIBLE_DEVICES"): the clients' environment
//! ([`MpsDaemon::env`]) names the renumbered devices instead.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::DeviceError;

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> DeviceError + '_ {
    move |source| DeviceError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// The MPS control daemon, started with private pipe and log folders and
/// stopped on drop.
pub struct MpsDaemon {
    /// The daemon's own folders (to reach it, and to stop it).
    control: Vec<(String, PathBuf)>,
    /// What a client needs: the folders, and the devices renumbered.
    env: Vec<(String, PathBuf)>,
}

/// The `CUDA_VISIBLE_DEVICES` a client of a daemon started under `daemons`
/// needs: the same devices as the daemon serves them, numbered from 0; none
/// where the daemon had none set (every device, as numbered).
fn client_visible(daemons: Option<&str>) -> Option<String> {
    let n = daemons?.split(',').filter(|d| !d.trim().is_empty()).count();
    (n > 0).then(|| (0..n).map(|i| i.to_string()).collect::<Vec<_>>().join(","))
}

impl MpsDaemon {
    /// Starts a daemon whose pipe and log folders are under `dir`.
    pub fn start(dir: &Path) -> Result<MpsDaemon, DeviceError> {
        let pipe = dir.join("mps-pipe");
        let log = dir.join("mps-log");
        for d in [&pipe, &log] {
            std::fs::create_dir_all(d).map_err(io(d))?;
        }
        let control = vec![
            ("CUDA_MPS_PIPE_DIRECTORY".to_string(), pipe),
            ("CUDA_MPS_LOG_DIRECTORY".to_string(), log),
        ];
        let out = Command::new("nvidia-cuda-mps-control")
            .arg("-d")
            .envs(control.iter().map(|(k, v)| (k, v)))
            .output()
            .map_err(|e| DeviceError::Mps(format!("nvidia-cuda-mps-control: {e}")))?;
        if !out.status.success() {
            return Err(DeviceError::Mps(format!(
                "nvidia-cuda-mps-control -d: {} {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        let mut env = control.clone();
        let visible = std::env::var("CUDA_VISIBLE_DEVICES").ok();
        if let Some(v) = client_visible(visible.as_deref()) {
            env.push(("CUDA_VISIBLE_DEVICES".to_string(), PathBuf::from(v)));
        }
        Ok(MpsDaemon { control, env })
    }

    /// The environment a client needs to reach this daemon and see its
    /// devices.
    pub fn env(&self) -> &[(String, PathBuf)] {
        &self.env
    }
}

impl Drop for MpsDaemon {
    fn drop(&mut self) {
        use std::io::Write;
        if let Ok(mut c) = Command::new("nvidia-cuda-mps-control")
            .envs(self.control.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
        {
            if let Some(mut i) = c.stdin.take() {
                let _ = i.write_all(b"quit\n");
            }
            let _ = c.wait();
            // The server exits shortly after the daemon; give it a moment.
            std::thread::sleep(std::time::Duration::from_millis(500));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::client_visible;

    #[test]
    fn clients_see_the_daemons_devices_from_zero() {
        assert_eq!(client_visible(None), None);
        assert_eq!(client_visible(Some("")), None);
        assert_eq!(client_visible(Some("2")).as_deref(), Some("0"));
        assert_eq!(client_visible(Some("1,3")).as_deref(), Some("0,1"));
        assert_eq!(
            client_visible(Some("GPU-8f2a,GPU-11c0,")).as_deref(),
            Some("0,1")
        );
    }
}
