//! Compiler flag sets (reference-harness.md §1.6, iccs-api.md §5.3).

use crate::dataset::schema::FlagSetName;

/// The NICCS guide's reference flags, identical for x86-64 and AArch64.
pub const GUIDE_REFERENCE: &str = "-std=c99 -Wpedantic -Wall -Wextra -O2";
/// What the reference harness adds to the guide flags to build shared libraries.
pub const HARNESS_ADDITIONS: &str = "-fPIC -D_GNU_SOURCE -Wno-error=implicit-function-declaration \
-Wno-error=incompatible-pointer-types -Wno-error=int-conversion -Wno-error=implicit-int";
/// The harness defaults, used per instance when the guide flags fail to build or pass the KAT.
pub const HARNESS_DEFAULT: &str = "-O2 -fPIC -std=gnu11 -Wall -Wno-unused -Wno-unknown-pragmas \
-fno-strict-aliasing -fwrapv -fno-omit-frame-pointer -D_GNU_SOURCE -Wno-error=implicit-function-declaration \
-Wno-error=incompatible-pointer-types -Wno-error=int-conversion -Wno-error=implicit-int";
/// Guide performance flags, recorded in campaign.json (optimised builds only).
pub const PERFORMANCE_X86_64: &str = "-O3 -march=x86-64 -mavx2 -mtune=native -flto -fomit-frame-pointer -std=c99 -Wpedantic -Wall -Wextra";
pub const PERFORMANCE_AARCH64: &str =
    "-O3 -march=armv8.2-a+sve -flto -fomit-frame-pointer -std=c99 -Wpedantic -Wall -Wextra";
/// Ours, on every flag set: only the shim's ngcc_* symbols leave the library.
pub const VISIBILITY: &str = "-fvisibility=hidden";
/// Link flags: export map, local binding, no undefined symbols, no executable stack.
pub const LINK: &[&str] = &[
    "-shared",
    "-Wl,-Bsymbolic",
    "-Wl,--no-undefined",
    "-Wl,-z,noexecstack",
    "-Wl,-z,relro",
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlagSet {
    Guide,
    HarnessDefault,
    /// Third and last: the harness defaults with gnu89 inline semantics, for code whose
    /// C99 plain `inline` functions have no external definition (they link under the
    /// package's own `-O3`, where gcc inlines every call, and not at -O2).
    HarnessDefaultGnu89Inline,
}

/// What the third set adds to the harness defaults.
pub const GNU89_INLINE: &str = "-fgnu89-inline";

impl FlagSet {
    /// The name recorded in build.json and shown on pages.
    pub fn name(self) -> FlagSetName {
        match self {
            FlagSet::Guide => FlagSetName::Guide,
            FlagSet::HarnessDefault => FlagSetName::HarnessDefault,
            FlagSet::HarnessDefaultGnu89Inline => FlagSetName::HarnessDefaultGnu89Inline,
        }
    }

    /// The set a recorded name compiles with; `None` for sets we do not build.
    pub fn from_name(name: &FlagSetName) -> Option<FlagSet> {
        match name {
            FlagSetName::Guide => Some(FlagSet::Guide),
            FlagSetName::HarnessDefault => Some(FlagSet::HarnessDefault),
            FlagSetName::HarnessDefaultGnu89Inline => Some(FlagSet::HarnessDefaultGnu89Inline),
            _ => None,
        }
    }

    /// The flag string this set compiles with (before per-instance flags).
    pub fn cflags(self) -> String {
        match self {
            FlagSet::Guide => format!("{GUIDE_REFERENCE} {HARNESS_ADDITIONS}"),
            FlagSet::HarnessDefault => HARNESS_DEFAULT.to_string(),
            FlagSet::HarnessDefaultGnu89Inline => format!("{HARNESS_DEFAULT} {GNU89_INLINE}"),
        }
    }
}

pub fn performance_flags() -> &'static str {
    if cfg!(target_arch = "aarch64") {
        PERFORMANCE_AARCH64
    } else {
        PERFORMANCE_X86_64
    }
}
