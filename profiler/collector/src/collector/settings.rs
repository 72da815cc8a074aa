//! The recording collector's settings, read from the environment once, at
//! start-up (the names and their values: [`fikit_protocol`]).

use std::path::PathBuf;

use fikit_protocol::{
    API_ENV, FLUSH_MODE_ENV, FLUSH_MS_ENV, JOB_ENV, PRIORITY_ENV, SPOOL_DIR_ENV, SYNC_ACTIVITY_ENV,
};
use fikit_spool::ApiMode;

use crate::env_var;

/// How API calls are recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiSource {
    /// `callback`: CUPTI callbacks on only the launch, copy, memset and
    /// synchronize functions; the collector times each call itself.
    Callback,
    /// `activity` (the default; also `selected`): CUPTI API activity records
    /// for only those functions (`cuptiActivityEnableRuntimeApi`/`DriverApi`
    /// per callback id); the synchronizations are the synchronizing calls
    /// among them. It measured cheaper than the callbacks in both
    /// measurements on an H200 (traces/README.md).
    ActivitySelected,
    /// `runtime`: as `activity`, but only the runtime API's functions (an
    /// overhead experiment: kernels launched through the driver API directly
    /// get no launch call).
    ActivityRuntime,
    /// `driver`: as `activity`, but only the driver API's functions (the
    /// runtime calls them underneath its own).
    ActivityDriver,
    /// `all`: API activity records for every runtime and driver call.
    ActivityAll,
    /// `none`: no API calls.
    None,
    /// `latency`: no API calls; kernels' queued/submitted timestamps on
    /// (only for overhead measurements: the trace keeps no launch times).
    Latency,
}

impl ApiSource {
    /// The source a [`API_ENV`] value names (unset or unknown: `activity`).
    pub(super) fn parse(v: Option<&str>) -> Self {
        match v {
            Some("callback") => ApiSource::Callback,
            Some("all") => ApiSource::ActivityAll,
            Some("none") => ApiSource::None,
            Some("latency") => ApiSource::Latency,
            Some("runtime") => ApiSource::ActivityRuntime,
            Some("driver") => ApiSource::ActivityDriver,
            _ => ApiSource::ActivitySelected,
        }
    }

    /// What the spool's start record says of this source.
    pub(super) fn mode(self) -> ApiMode {
        match self {
            ApiSource::Callback
            | ApiSource::ActivitySelected
            | ApiSource::ActivityRuntime
            | ApiSource::ActivityDriver => ApiMode::Selected,
            ApiSource::ActivityAll => ApiMode::All,
            ApiSource::None | ApiSource::Latency => ApiMode::None,
        }
    }
}

/// What the environment asks of one start-up.
pub(super) struct Settings {
    /// How API calls are recorded ([`API_ENV`]).
    pub(super) source: ApiSource,
    /// CUPTI's synchronization activity on ([`SYNC_ACTIVITY_ENV`]).
    pub(super) sync_activity: bool,
    /// Where the spool goes ([`SPOOL_DIR_ENV`]).
    pub(super) dir: PathBuf,
    /// The job name ([`JOB_ENV`]).
    pub(super) job: String,
    /// The priority, 0 to 9 ([`PRIORITY_ENV`]).
    pub(super) priority: u8,
    /// The flush period, ms ([`FLUSH_MS_ENV`]).
    pub(super) flush_ms: u64,
    /// The flushing thread calls `cuptiActivityFlushAll(0)` itself ([`FLUSH_MODE_ENV`]).
    pub(super) flush_all: bool,
}

impl Settings {
    /// Reads the settings; `gated`: under `fikit-run`'s gate, which has no
    /// callbacks to spare (a note saying so goes to `notes`).
    pub(super) fn from_env(gated: bool, notes: &mut Vec<String>) -> Self {
        let mut source = ApiSource::parse(env_var(API_ENV).as_deref());
        if gated && source == ApiSource::Callback {
            notes.push(format!(
                "{API_ENV}=callback is not available under fikit-run's gate; API calls are              recorded as activity records"
            ));
            source = ApiSource::ActivitySelected;
        }
        let sync_activity = match env_var(SYNC_ACTIVITY_ENV).as_deref() {
            Some("1") => true,
            Some("0") => false,
            _ => source == ApiSource::ActivityAll,
        };
        Settings {
            source,
            sync_activity,
            dir: PathBuf::from(env_var(SPOOL_DIR_ENV).unwrap_or_else(|| ".".to_string())),
            job: env_var(JOB_ENV).unwrap_or_default(),
            priority: env_var(PRIORITY_ENV)
                .and_then(|p| p.parse::<u8>().ok())
                .filter(|p| *p <= 9)
                .unwrap_or(9),
            flush_ms: env_var(FLUSH_MS_ENV)
                .and_then(|p| p.parse::<u64>().ok())
                .filter(|&p| p > 0)
                .unwrap_or(100),
            flush_all: env_var(FLUSH_MODE_ENV).as_deref() != Some("period"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_modes() {
        assert_eq!(ApiSource::parse(None), ApiSource::ActivitySelected);
        assert_eq!(
            ApiSource::parse(Some("selected")),
            ApiSource::ActivitySelected
        );
        assert_eq!(ApiSource::parse(Some("callback")), ApiSource::Callback);
        assert_eq!(
            ApiSource::parse(Some("activity")),
            ApiSource::ActivitySelected
        );
        assert_eq!(ApiSource::parse(Some("all")).mode(), ApiMode::All);
        assert_eq!(ApiSource::parse(Some("none")).mode(), ApiMode::None);
        assert_eq!(ApiSource::parse(Some("latency")), ApiSource::Latency);
        assert_eq!(ApiSource::parse(Some("runtime")).mode(), ApiMode::Selected);
        assert_eq!(ApiSource::parse(Some("driver")), ApiSource::ActivityDriver);
    }
}
