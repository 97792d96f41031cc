//! The reference exclusion rule: which files of a candidate's folder are never library code
//! (KAT drivers, mains, tests, benchmarks), by name or by a folder on the way. Used by the
//! build's source resolution and by the NGCC importer.

use regex_lite::Regex;
use std::sync::OnceLock;

/// Basenames the reference harness never compiles by default: KAT drivers, mains, tests.
fn excluded(name: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"^(KAT_|PQCgenKAT|main|test|bench|speed|cpucycles|osfreq|run_bench|selftest|self_test|example|demo|kat\.c|kat_)|(_test|test_|_bench|bench_|_main|_kat)\.",
        )
        .expect("valid regex")
    })
    .is_match(name)
}

/// Folders whose files are never library code: tests, KAT drivers, benchmarks, examples.
fn excluded_dir(name: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"(?i)^(tests?|testing|kats?|bench|benchmarks?|speed|examples?|demos?)$")
            .expect("valid regex")
    })
    .is_match(name)
}

/// A file below the instance folder that the exclusion rule drops: by its name, or by a
/// folder on its way (`src/KAT/KAT_KEM.c`, `src/tests/t.c`).
pub fn excluded_path(rel: &std::path::Path) -> bool {
    let name = rel.file_name().unwrap_or_default().to_string_lossy();
    excluded(&name)
        || rel
            .parent()
            .into_iter()
            .flat_map(|p| p.components())
            .any(|c| excluded_dir(&c.as_os_str().to_string_lossy()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn exclusion_rule_matches_the_reference() {
        for name in [
            "KAT_KEM.c",
            "PQCgenKAT_kem.c",
            "main.c",
            "test_foo.c",
            "foo_test.c",
            "kat.c",
            "bench_x.c",
            "speed.c",
        ] {
            assert!(super::excluded(name), "{name} should be excluded");
        }
        for name in [
            "kem.c",
            "fips202.c",
            "attest.c",
            "poly.c",
            "contest.c",
            "drng.c",
        ] {
            assert!(!super::excluded(name), "{name} should be kept");
        }
    }

    #[test]
    fn excluded_folders_on_the_way() {
        use std::path::Path;
        for rel in [
            "src/KAT/KAT_KEM.c",
            "src/tests/a.c",
            "Test/x.c",
            "bench/y.c",
            "KAT_KEM.c",
        ] {
            assert!(super::excluded_path(Path::new(rel)), "{rel}");
        }
        for rel in ["src/api/kem.c", "src/backend/poly.c", "attest/x.c", "kem.c"] {
            assert!(!super::excluded_path(Path::new(rel)), "{rel}");
        }
    }
}
