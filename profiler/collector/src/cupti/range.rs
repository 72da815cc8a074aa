//! CUPTI's range profiler, for the metrics pass ([`crate::metrics`]): one
//! configured set of metrics per context, measured one user range at a time.
//! Its CUPTI and driver functions come from the same bound tables as every
//! other call (the `cupti!` and `driver!` macros of the parent module).

use std::ffi::{CStr, c_char};

use cudarc::cupti::sys;
use cudarc::driver::sys as ds;

use super::{CUPTI, DRIVER, Failure, MISSING, check, dcheck, missing};

/// A params struct of CUPTI's profiling APIs, zeroed, its `structSize` set:
/// the header's `..._STRUCT_SIZE` (the end of its last field), not
/// `size_of`, which counts trailing padding.
macro_rules! params {
    ($ty:ident, $size:ident) => {{
        // SAFETY: a C struct of integers, pointers and C enums whose zero
        // value is valid, as the headers' `= {SIZE}` initialisers make it.
        let mut p: sys::$ty = unsafe { std::mem::zeroed() };
        p.structSize = sys::$size as usize;
        p
    }};
}

/// The range profiler's per-context state: the objects and images of one
/// configured set of metrics, measured one user range at a time. Dropping
/// it disables the profiler on its context and frees the host object.
pub(crate) struct RangeProfiler {
    host: *mut sys::CUpti_Profiler_Host_Object,
    object: *mut sys::CUpti_RangeProfiler_Object,
    /// Kept for the host object's life (CUPTI may refer to it).
    _availability: Vec<u8>,
    config: Vec<u8>,
    counter_data: Vec<u8>,
    names: Vec<*const c_char>,
    /// Started and not yet stopped.
    running: bool,
}

// SAFETY: the raw pointers are CUPTI's handles and names of 'static C
// strings; the collector uses a profiler under a mutex, one thread at a time.
unsafe impl Send for RangeProfiler {}

/// The one range name: never read back (a measurement is one range).
const RANGE_NAME: &CStr = c"fikit";

/// `cuptiProfilerInitialize`: once per process, before any range profiler.
pub(crate) fn profiler_initialize() -> Result<(), Failure> {
    let mut p = params!(
        CUpti_Profiler_Initialize_Params,
        Profiler_Initialize_Params_STRUCT_SIZE
    );
    // A valid params struct.
    cupti!(cuptiProfilerInitialize(&mut p))
}

/// Why a context gets no range profiler.
pub(crate) enum SetupError {
    /// A CUPTI or driver call failed.
    Call(Failure),
    /// The metrics need this many passes; one launch can be measured in one.
    Passes(usize),
}

impl From<Failure> for SetupError {
    fn from(f: Failure) -> Self {
        SetupError::Call(f)
    }
}

impl RangeProfiler {
    /// Sets the range profiler up on `ctx` for `metrics`: the chip's name
    /// and counter availability, the host object's configuration image (an
    /// error, before the profiler is enabled, when it needs more than one
    /// pass), then the profiler enabled on the context and a counter data
    /// image for one range.
    ///
    /// # Safety
    /// `ctx` must be a live context, current on this thread, with
    /// [`profiler_initialize`] done; `metrics` are 'static NUL-terminated names.
    pub(crate) unsafe fn new(
        ctx: ds::CUcontext,
        metrics: &[&'static CStr],
    ) -> Result<Self, SetupError> {
        let mut names: Vec<*const c_char> = metrics.iter().map(|m| m.as_ptr()).collect();
        let mut device: ds::CUdevice = 0;
        // Valid out pointer; the caller's context is current.
        driver!(cuCtxGetDevice(&mut device))?;
        let mut chip = params!(
            CUpti_Device_GetChipName_Params,
            Device_GetChipName_Params_STRUCT_SIZE
        );
        chip.deviceIndex = usize::try_from(device).unwrap_or(0);
        // A valid params struct; CUPTI sets pChipName to a string it owns.
        cupti!(cuptiDeviceGetChipName(&mut chip))?;
        let mut avail = params!(
            CUpti_Profiler_GetCounterAvailability_Params,
            Profiler_GetCounterAvailability_Params_STRUCT_SIZE
        );
        avail.ctx = ctx.cast();
        // With a null image CUPTI only writes the size it needs.
        cupti!(cuptiProfilerGetCounterAvailability(&mut avail))?;
        let mut availability = vec![0u8; avail.counterAvailabilityImageSize];
        avail.pCounterAvailabilityImage = availability.as_mut_ptr();
        // The image has the size CUPTI asked for.
        cupti!(cuptiProfilerGetCounterAvailability(&mut avail))?;

        let mut init = params!(
            CUpti_Profiler_Host_Initialize_Params,
            Profiler_Host_Initialize_Params_STRUCT_SIZE
        );
        init.profilerType = sys::CUpti_ProfilerType::CUPTI_PROFILER_TYPE_RANGE_PROFILER;
        init.pChipName = chip.pChipName;
        init.pCounterAvailabilityImage = availability.as_ptr();
        // The chip name and availability image are live (the image for the
        // host object's life: it moves into the profiler).
        cupti!(cuptiProfilerHostInitialize(&mut init))?;
        let mut rp = RangeProfiler {
            host: init.pHostObject,
            object: std::ptr::null_mut(),
            _availability: availability,
            config: Vec::new(),
            counter_data: Vec::new(),
            names: Vec::new(),
            running: false,
        };
        let mut add = params!(
            CUpti_Profiler_Host_ConfigAddMetrics_Params,
            Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE
        );
        add.pHostObject = rp.host;
        add.ppMetricNames = names.as_mut_ptr();
        add.numMetrics = names.len();
        // The names are live NUL-terminated strings.
        cupti!(cuptiProfilerHostConfigAddMetrics(&mut add))?;
        let mut size = params!(
            CUpti_Profiler_Host_GetConfigImageSize_Params,
            Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE
        );
        size.pHostObject = rp.host;
        // A valid params struct.
        cupti!(cuptiProfilerHostGetConfigImageSize(&mut size))?;
        rp.config = vec![0u8; size.configImageSize];
        let mut get = params!(
            CUpti_Profiler_Host_GetConfigImage_Params,
            Profiler_Host_GetConfigImage_Params_STRUCT_SIZE
        );
        get.pHostObject = rp.host;
        get.configImageSize = rp.config.len();
        get.pConfigImage = rp.config.as_mut_ptr();
        // The buffer has the size CUPTI asked for.
        cupti!(cuptiProfilerHostGetConfigImage(&mut get))?;
        let mut passes = params!(
            CUpti_Profiler_Host_GetNumOfPasses_Params,
            Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE
        );
        passes.configImageSize = rp.config.len();
        passes.pConfigImage = rp.config.as_mut_ptr();
        // The config image is live.
        cupti!(cuptiProfilerHostGetNumOfPasses(&mut passes))?;
        if passes.numOfPasses != 1 {
            // Nothing enabled yet: dropping `rp` frees the host object only.
            return Err(SetupError::Passes(passes.numOfPasses));
        }

        let mut enable = params!(
            CUpti_RangeProfiler_Enable_Params,
            RangeProfiler_Enable_Params_STRUCT_SIZE
        );
        enable.ctx = ctx.cast();
        // The caller's live context.
        cupti!(cuptiRangeProfilerEnable(&mut enable))?;
        rp.object = enable.pRangeProfilerObject;
        let mut data_size = params!(
            CUpti_RangeProfiler_GetCounterDataSize_Params,
            RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE
        );
        data_size.pRangeProfilerObject = rp.object;
        data_size.pMetricNames = names.as_mut_ptr();
        data_size.numMetrics = names.len();
        data_size.maxNumOfRanges = 1;
        data_size.maxNumRangeTreeNodes = 1;
        // The names are live.
        cupti!(cuptiRangeProfilerGetCounterDataSize(&mut data_size))?;
        rp.counter_data = vec![0u8; data_size.counterDataSize];
        rp.names = names;
        Ok(rp)
    }

    /// Readies a measurement: the counter data image initialized for one
    /// range and the configuration set on it (before every range: a fresh
    /// session each time, as NVIDIA's injection sample runs them).
    fn configure(&mut self) -> Result<(), Failure> {
        let mut init = params!(
            CUpti_RangeProfiler_CounterDataImage_Initialize_Params,
            RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE
        );
        init.pRangeProfilerObject = self.object;
        init.counterDataSize = self.counter_data.len();
        init.pCounterData = self.counter_data.as_mut_ptr();
        // The image has the size CUPTI asked for.
        cupti!(cuptiRangeProfilerCounterDataImageInitialize(&mut init))?;
        let mut set = params!(
            CUpti_RangeProfiler_SetConfig_Params,
            RangeProfiler_SetConfig_Params_STRUCT_SIZE
        );
        set.pRangeProfilerObject = self.object;
        set.configSize = self.config.len();
        set.pConfig = self.config.as_ptr();
        set.counterDataImageSize = self.counter_data.len();
        set.pCounterDataImage = self.counter_data.as_mut_ptr();
        set.range = sys::CUpti_ProfilerRange::CUPTI_UserRange;
        set.replayMode = sys::CUpti_ProfilerReplayMode::CUPTI_UserReplay;
        set.maxRangesPerPass = 1;
        set.numNestingLevels = 1;
        set.minNestingLevel = 1;
        set.passIndex = 0;
        set.targetNestingLevel = 1;
        // Both images live as long as the profiler (its fields, never resized).
        cupti!(cuptiRangeProfilerSetConfig(&mut set))
    }

    /// Drains the context's earlier work, then configures, starts the
    /// profiler and opens the range. On a failure after the start, the
    /// profiler is stopped again.
    pub(crate) fn begin(&mut self) -> Result<(), Failure> {
        // No arguments; the launch's context is current.
        driver!(cuCtxSynchronize())?;
        self.configure()?;
        let mut start = params!(
            CUpti_RangeProfiler_Start_Params,
            RangeProfiler_Start_Params_STRUCT_SIZE
        );
        start.pRangeProfilerObject = self.object;
        // A live profiler object.
        cupti!(cuptiRangeProfilerStart(&mut start))?;
        self.running = true;
        let mut push = params!(
            CUpti_RangeProfiler_PushRange_Params,
            RangeProfiler_PushRange_Params_STRUCT_SIZE
        );
        push.pRangeProfilerObject = self.object;
        push.pRangeName = RANGE_NAME.as_ptr();
        // A 'static name.
        let pushed = cupti!(cuptiRangeProfilerPushRange(&mut push));
        if pushed.is_err() {
            let _ = self.stop();
        }
        pushed
    }

    /// `cuptiRangeProfilerStop`, when started: whether every pass was submitted.
    fn stop(&mut self) -> Result<bool, Failure> {
        if !std::mem::take(&mut self.running) {
            return Ok(false);
        }
        let mut stop = params!(
            CUpti_RangeProfiler_Stop_Params,
            RangeProfiler_Stop_Params_STRUCT_SIZE
        );
        stop.pRangeProfilerObject = self.object;
        // A live profiler object.
        cupti!(cuptiRangeProfilerStop(&mut stop))?;
        Ok(stop.isAllPassSubmitted != 0)
    }

    /// Waits for the context's work, closes the range, stops, decodes and
    /// evaluates the metrics (in the order given to [`RangeProfiler::new`]).
    /// Whatever fails, the profiler is stopped before this returns.
    pub(crate) fn end(&mut self) -> Result<Vec<f64>, Failure> {
        let popped = (|| {
            // No arguments; the range's context is current.
            driver!(cuCtxSynchronize())?;
            let mut pop = params!(
                CUpti_RangeProfiler_PopRange_Params,
                RangeProfiler_PopRange_Params_STRUCT_SIZE
            );
            pop.pRangeProfilerObject = self.object;
            // A live profiler object.
            cupti!(cuptiRangeProfilerPopRange(&mut pop))
        })();
        let stopped = self.stop();
        popped?;
        let all_submitted = stopped?;
        let mut decode = params!(
            CUpti_RangeProfiler_DecodeData_Params,
            RangeProfiler_DecodeData_Params_STRUCT_SIZE
        );
        decode.pRangeProfilerObject = self.object;
        // A live profiler object.
        cupti!(cuptiRangeProfilerDecodeData(&mut decode))?;
        if decode.numOfRangeDropped > 0 || !all_submitted {
            return Err(Failure {
                call: "cuptiRangeProfilerDecodeData",
                code: MISSING,
                message: format!(
                    "the range was not measured whole ({} dropped, all passes submitted: {all_submitted})",
                    decode.numOfRangeDropped
                ),
            });
        }
        let mut values = vec![0f64; self.names.len()];
        let mut eval = params!(
            CUpti_Profiler_Host_EvaluateToGpuValues_Params,
            Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE
        );
        eval.pHostObject = self.host;
        eval.pCounterDataImage = self.counter_data.as_ptr();
        eval.counterDataImageSize = self.counter_data.len();
        eval.rangeIndex = 0;
        eval.ppMetricNames = self.names.as_mut_ptr();
        eval.numMetrics = self.names.len();
        eval.pMetricValues = values.as_mut_ptr();
        // The image, names and output (one f64 per name) are live.
        cupti!(cuptiProfilerHostEvaluateToGpuValues(&mut eval))?;
        Ok(values)
    }
}

impl Drop for RangeProfiler {
    fn drop(&mut self) {
        let _ = self.stop();
        if !self.object.is_null() {
            let mut p = params!(
                CUpti_RangeProfiler_Disable_Params,
                RangeProfiler_Disable_Params_STRUCT_SIZE
            );
            p.pRangeProfilerObject = self.object;
            // The profiler object this value enabled, disabled once.
            let _ = cupti!(cuptiRangeProfilerDisable(&mut p));
        }
        if !self.host.is_null() {
            let mut p = params!(
                CUpti_Profiler_Host_Deinitialize_Params,
                Profiler_Host_Deinitialize_Params_STRUCT_SIZE
            );
            p.pHostObject = self.host;
            // The host object this value initialized, freed once.
            let _ = cupti!(cuptiProfilerHostDeinitialize(&mut p));
        }
    }
}
