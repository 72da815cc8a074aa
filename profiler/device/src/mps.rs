//! A private MPS control daemon: its own pipe and log folders, so that it
//! neither needs nor disturbs a daemon the machine may run, and it stops when
//! dropped.

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
    env: Vec<(String, PathBuf)>,
}

impl MpsDaemon {
    /// Starts a daemon whose pipe and log folders are under `dir`.
    pub fn start(dir: &Path) -> Result<MpsDaemon, DeviceError> {
        let pipe = dir.join("mps-pipe");
        let log = dir.join("mps-log");
        for d in [&pipe, &log] {
            std::fs::create_dir_all(d).map_err(io(d))?;
        }
        let env = vec![
            ("CUDA_MPS_PIPE_DIRECTORY".to_string(), pipe),
            ("CUDA_MPS_LOG_DIRECTORY".to_string(), log),
        ];
        let out = Command::new("nvidia-cuda-mps-control")
            .arg("-d")
            .envs(env.iter().map(|(k, v)| (k, v)))
            .output()
            .map_err(|e| DeviceError::Mps(format!("nvidia-cuda-mps-control: {e}")))?;
        if !out.status.success() {
            return Err(DeviceError::Mps(format!(
                "nvidia-cuda-mps-control -d: {} {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        Ok(MpsDaemon { env })
    }

    /// The environment a client needs to reach this daemon.
    pub fn env(&self) -> &[(String, PathBuf)] {
        &self.env
    }
}

impl Drop for MpsDaemon {
    fn drop(&mut self) {
        use std::io::Write;
        if let Ok(mut c) = Command::new("nvidia-cuda-mps-control")
            .envs(self.env.iter().map(|(k, v)| (k, v)))
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
