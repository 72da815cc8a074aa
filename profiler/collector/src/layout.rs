//! Which libcupti versions hand out activity records this collector can read.
//!
//! [`crate::activity::decode`] reads kernel, memcpy, memset, API and
//! synchronization records through the structs of cudarc's bindings for CUDA
//! 13.0 (`CUpti_ActivityKernel10`, `Memcpy6`, `Memset4`, `API`,
//! `Synchronization`). A libcupti hands out the newest struct version *it*
//! knows for a kind, so a newer libcupti could in principle move a field. The
//! fields the decoder reads are a prefix that has the same types, order and
//! packing in every struct version of the CUDA 11.4 to 13.4 headers (cudarc
//! 0.19.10 carries bindings for all of them: `CUpti_ActivityKernel4` to
//! `Kernel13`, `Memcpy3` to `Memcpy7`, `Memset2` to `Memset5`; checked field
//! by field, and the versions compiled in here are checked by offset in the
//! tests below).
//!
//! The rule ([`check`]): a libcupti whose `cuptiGetVersion` is within those
//! checked headers is read; one that is newer (or older) than any checked
//! layout is refused: nothing is enabled, nothing recorded, the program runs
//! unaffected, and the spool says why. `FIKIT_CUPTI_UNCHECKED=1` records
//! anyway (with a note), for trying a new CUDA release.

use fikit_protocol::CUPTI_UNCHECKED_ENV;

/// The CUPTI API version cudarc's bindings were generated for (`CUPTI_API_VERSION`, CUDA 13.0).
pub const BINDINGS_API_VERSION: u32 = cudarc::cupti::sys::CUPTI_API_VERSION;

/// The oldest CUPTI API version whose headers were checked (CUDA 11.4).
pub const OLDEST_CHECKED: u32 = 14;

/// The newest CUDA release whose headers were checked, as (major, minor).
pub const NEWEST_CHECKED_RELEASE: (u32, u32) = (13, 4);

/// The CUDA release of a CUPTI API version: from CUDA 13 on the version is
/// `MMmmpp` (130001 is 13.0); before, a small counter (≤ 28 for CUDA 12.9),
/// which is older than any 13.x.
pub fn release_of(api_version: u32) -> Option<(u32, u32)> {
    (api_version >= 10_000).then_some((api_version / 10_000, api_version / 100 % 100))
}

/// What to do with the loaded libcupti.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Its records have the layouts the decoder reads.
    Known,
    /// Layouts not checked, but `FIKIT_CUPTI_UNCHECKED=1`: record, with this note.
    Unchecked(String),
    /// Layouts not checked: record nothing; the reason.
    Refuse(String),
}

/// The decision for a libcupti reporting `api_version`; `allow_unchecked` is `FIKIT_CUPTI_UNCHECKED=1`.
pub fn check(api_version: u32, allow_unchecked: bool) -> Verdict {
    let (major, minor) = NEWEST_CHECKED_RELEASE;
    let too_new = release_of(api_version).is_some_and(|r| r > NEWEST_CHECKED_RELEASE);
    let too_old = api_version < OLDEST_CHECKED;
    if !too_new && !too_old {
        return Verdict::Known;
    }
    let which = if too_new { "newer" } else { "older" };
    let why = format!(
        "libcupti reports API version {api_version}, {which} than any whose activity record \
         layouts this collector checked (CUDA 11.4 to {major}.{minor}; built against \
         {BINDINGS_API_VERSION})"
    );
    if allow_unchecked {
        Verdict::Unchecked(format!(
            "{why}; recording anyway ({CUPTI_UNCHECKED_ENV}=1): kernel and copy fields may be wrong"
        ))
    } else {
        Verdict::Refuse(format!(
            "{why}; nothing is recorded and the program runs untraced (set {CUPTI_UNCHECKED_ENV}=1 \
             to record anyway)"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cudarc::cupti::sys;
    use std::mem::offset_of;

    #[test]
    fn releases() {
        assert_eq!(release_of(130001), Some((13, 0)));
        assert_eq!(release_of(130401), Some((13, 4)));
        assert_eq!(release_of(140000), Some((14, 0)));
        assert_eq!(release_of(28), None);
        assert_eq!(release_of(BINDINGS_API_VERSION), Some((13, 0)));
    }

    #[test]
    fn checked_versions_are_read_newer_ones_refused() {
        // CUDA 12.0 (18), 12.9 (28), the bindings' 13.0, 13.1 to 13.4 with updates.
        for v in [
            18,
            28,
            BINDINGS_API_VERSION,
            130101,
            130202,
            130301,
            130401,
            130499,
        ] {
            assert_eq!(check(v, false), Verdict::Known, "{v}");
        }
        // CUDA 13.5 and 14.0: refused unless asked for; CUDA 11.3 and older too.
        for v in [130500, 140000, 13, 0] {
            match check(v, false) {
                Verdict::Refuse(why) => {
                    assert!(why.contains(&v.to_string()), "{why}");
                    assert!(why.contains("nothing is recorded"), "{why}");
                    assert!(why.contains(CUPTI_UNCHECKED_ENV), "{why}");
                }
                other => panic!("{v}: {other:?}"),
            }
            assert!(matches!(check(v, true), Verdict::Unchecked(_)), "{v}");
        }
    }

    /// The offsets the decoder reads must be the same in every struct version
    /// compiled into these bindings (the packing is `C, packed(8)` for all).
    #[test]
    fn fields_read_are_at_the_same_offsets_in_every_known_version() {
        macro_rules! same_one {
            ($base:ty, $other:ty, [$($f:ident),*]) => {
                $(
                    assert_eq!(
                        offset_of!($base, $f),
                        offset_of!($other, $f),
                        "{} in {}",
                        stringify!($f),
                        stringify!($other)
                    );
                )*
            };
        }
        macro_rules! same {
            ($base:ty, [$($other:ty),*], $fields:tt) => {
                $(same_one!($base, $other, $fields);)*
            };
        }
        same!(
            sys::CUpti_ActivityKernel10,
            [
                sys::CUpti_ActivityKernel4,
                sys::CUpti_ActivityKernel5,
                sys::CUpti_ActivityKernel6,
                sys::CUpti_ActivityKernel7,
                sys::CUpti_ActivityKernel8,
                sys::CUpti_ActivityKernel9
            ],
            [
                kind,
                registersPerThread,
                start,
                end,
                deviceId,
                contextId,
                streamId,
                gridX,
                gridY,
                gridZ,
                blockX,
                blockY,
                blockZ,
                staticSharedMemory,
                dynamicSharedMemory,
                correlationId,
                name,
                sharedMemoryExecuted
            ]
        );
        same!(
            sys::CUpti_ActivityMemcpy6,
            [
                sys::CUpti_ActivityMemcpy3,
                sys::CUpti_ActivityMemcpy4,
                sys::CUpti_ActivityMemcpy5
            ],
            [
                kind,
                copyKind,
                bytes,
                start,
                end,
                deviceId,
                contextId,
                streamId,
                correlationId
            ]
        );
        same!(
            sys::CUpti_ActivityMemset4,
            [sys::CUpti_ActivityMemset2, sys::CUpti_ActivityMemset3],
            [
                kind,
                bytes,
                start,
                end,
                deviceId,
                contextId,
                streamId,
                correlationId
            ]
        );
        // And where they are: the kernel record's fixed prefix.
        assert_eq!(offset_of!(sys::CUpti_ActivityKernel10, start), 16);
        assert_eq!(offset_of!(sys::CUpti_ActivityKernel10, correlationId), 92);
        assert_eq!(offset_of!(sys::CUpti_ActivityKernel10, name), 104);
    }
}
