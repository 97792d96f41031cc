//! Bad input to every command: exactly one line on stderr that says what is wrong (and
//! where), exit code 2, never a panic.

use crate::common;
use common::*;
use std::path::Path;

/// One bad input: a name, the arguments (split at spaces, `{D}` for the scratch folder) and
/// fragments the one-line message must contain.
struct Case {
    name: &'static str,
    args: &'static str,
    says: &'static [&'static str],
}

const TOY_OK: &str = r#"
id = "bad"
algorithm = "Toy"
kind = "kem"
api = "nist"

[[instances]]
label = "a"
dir = "src"
namespace = "TOY"
"#;

/// The scratch tree the cases refer to.
fn fixtures(d: &Path) {
    let toy = manifest_dir().join("tests/zoo/nist-toy");
    let src = |name: &str| d.join(name).join("src");
    for name in ["syntax", "badkey", "badkind", "duplabel", "nosrc", "okcand"] {
        std::fs::create_dir_all(src(name)).unwrap();
        for f in ["toy.c", "api.h"] {
            std::fs::copy(toy.join(f), src(name).join(f)).unwrap();
        }
    }
    // Line 4 is `kind = kem` (a bare word is no TOML value; line 1 is empty).
    write(
        &d.join("syntax/candidate.toml"),
        &TOY_OK.replacen("kind = \"kem\"", "kind = kem", 1),
    );
    write(
        &d.join("badkey/candidate.toml"),
        &TOY_OK.replacen("namespace =", "namespaec =", 1),
    );
    write(
        &d.join("badkind/candidate.toml"),
        &TOY_OK.replacen("\"kem\"", "\"blob\"", 1),
    );
    write(
        &d.join("duplabel/candidate.toml"),
        &format!("{TOY_OK}\n[[instances]]\nlabel = \"a\"\ndir = \"src\"\nnamespace = \"TOY\"\n"),
    );
    write(
        &d.join("nosrc/candidate.toml"),
        &TOY_OK.replacen("dir = \"src\"", "dir = \"gone\"", 1),
    );
    write(&d.join("okcand/candidate.toml"), TOY_OK);
    // A file where a run directory should be.
    write(&d.join("afile"), "x");
    // A run directory with corrupt JSON.
    write(&d.join("corruptrun/build.json"), "{\"instances\": {");
    write(&d.join("corruptrun/campaign.json"), "{}\n");
    // Datasets: corrupt, and one from a newer schema.
    write(&d.join("corruptds/campaign.json"), "{\"system_id\": ");
    write(&d.join("corruptds/build.json"), "{\"instances\": {}}\n");
    write(&d.join("newds/campaign.json"), "{\"system_id\": \"x\"}\n");
    write(&d.join("newds/build.json"), "{\"instances\": {}}\n");
    write(
        &d.join("newds/records/kem-1/A__keygen.json"),
        "{\"schema\": 3, \"future\": true}\n",
    );
    std::fs::create_dir_all(d.join("catalog")).unwrap();
}

const CASES: &[Case] = &[
    // campaign: manifests
    Case {
        name: "campaign, malformed candidate.toml",
        args: "campaign build --candidates {D}/syntax --run {D}/r1",
        says: &["syntax/candidate.toml:4:", "key `kind`"],
    },
    Case {
        name: "campaign, unknown key",
        args: "campaign build --candidates {D}/badkey --run {D}/r2",
        says: &["badkey/candidate.toml:", "namespaec"],
    },
    Case {
        name: "campaign, unknown kind",
        args: "campaign build --candidates {D}/badkind --run {D}/r3",
        says: &["badkind/candidate.toml:4:", "key `kind`", "blob", "kem"],
    },
    Case {
        name: "campaign, duplicate labels",
        args: "campaign build --candidates {D}/duplabel --run {D}/r4",
        says: &["duplabel/candidate.toml", "duplicate instance label \"a\""],
    },
    Case {
        name: "campaign, missing candidates folder",
        args: "campaign build --candidates {D}/nowhere --run {D}/r6",
        says: &["nowhere", "no such candidates folder"],
    },
    Case {
        name: "campaign, unknown phase",
        args: "campaign bild --candidates {D}/okcand --run {D}/r7",
        says: &["unknown phase \"bild\""],
    },
    Case {
        name: "campaign, run dir is a file",
        args: "campaign build --candidates {D}/okcand --run {D}/afile",
        says: &["afile"],
    },
    Case {
        name: "campaign, run dir below a file",
        args: "campaign build --candidates {D}/okcand --run {D}/afile/run",
        says: &["afile/run"],
    },
    Case {
        name: "campaign, corrupt build.json",
        args: "campaign kat --candidates {D}/okcand --run {D}/corruptrun",
        says: &["build.json", "not valid JSON"],
    },
    Case {
        name: "campaign, missing --run (usage)",
        args: "campaign build --candidates {D}/okcand",
        says: &["--run"],
    },
    Case {
        name: "campaign, --kat-timeout not a number (usage)",
        args: "campaign build --candidates {D}/okcand --run {D}/r8 --kat-timeout soon",
        says: &["soon", "--kat-timeout"],
    },
    // import
    Case {
        name: "import, missing source tree",
        args: "import pqclean {D}/nowhere --out {D}/imp",
        says: &["nowhere"],
    },
    Case {
        name: "import, unknown source",
        args: "import nistpqc --out {D}/imp",
        says: &["nistpqc"],
    },
    // report
    Case {
        name: "report, corrupt JSON in the dataset",
        args: "report {D}/corruptds --catalog {D}/catalog --out {D}/pages",
        says: &["campaign.json"],
    },
    Case {
        name: "report, dataset from a newer schema",
        args: "report {D}/newds --catalog {D}/catalog --out {D}/pages",
        says: &["records/kem-1/A__keygen.json", "schema 3"],
    },
    Case {
        name: "report, missing dataset",
        args: "report {D}/nowhere --catalog {D}/catalog --out {D}/pages",
        says: &["nowhere"],
    },
    // validate
    Case {
        name: "validate, dataset from a newer schema",
        args: "validate {D}/newds --catalog {D}/catalog",
        says: &["records/kem-1/A__keygen.json", "schema 3"],
    },
    Case {
        name: "validate, missing dataset",
        args: "validate {D}/nowhere --catalog {D}/catalog",
        says: &["nowhere"],
    },
    // publish
    Case {
        name: "publish, not a run directory",
        args: "publish --run {D}/nowhere --system x --out {D}/ds",
        says: &["nowhere", "not a run directory"],
    },
    Case {
        name: "publish, corrupt campaign.json",
        args: "publish --run {D}/corruptds --system x --out {D}/ds",
        says: &["campaign.json", "not valid JSON"],
    },
    // sharding, merge, slurm
    Case {
        name: "campaign --shard auto outside a scheduler",
        args: "campaign calibrate --candidates {D}/okcand --run {D}/r-{shard} --shard auto",
        says: &["SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX", "--shard K/N"],
    },
    Case {
        name: "campaign --build-from with the build phase",
        args: "campaign build --candidates {D}/okcand --run {D}/r --build-from {D}/nowhere",
        says: &["--build-from", "phase build"],
    },
    Case {
        name: "merge, not a run directory",
        args: "merge {D}/nowhere --out {D}/merged --system x",
        says: &["merge", "nowhere"],
    },
    Case {
        name: "slurm, --cpu with one core per task",
        args: "slurm all --candidates {D}/okcand --run {D}/camp --shards 2 --system x --cpu 1",
        says: &["--cpu", "--per-task node"],
    },
    // kat
    Case {
        name: "kat, unknown subcommand (usage)",
        args: "kat frobnicate",
        says: &["frobnicate"],
    },
    // iccs
    Case {
        name: "iccs, message is not hex",
        args: "iccs sm3 xyz",
        says: &["hex"],
    },
    // catalog
    Case {
        name: "catalog, corrupt JSON in the dataset",
        args: "catalog {D}/corruptds --out {D}/cat2",
        says: &["campaign.json"],
    },
    Case {
        name: "catalog, dataset from a newer schema",
        args: "catalog {D}/newds --out {D}/cat3",
        says: &["schema 3"],
    },
    // check
    Case {
        name: "check, --cpu not a number (usage)",
        args: "check --cpu two",
        says: &["two", "--cpu"],
    },
];

#[test]
fn bad_input_gives_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fixtures(d);
    let ds = d.to_str().unwrap();
    let mut failures = Vec::new();
    let mut table = Vec::new();
    for case in CASES {
        let args: Vec<String> = case
            .args
            .split_whitespace()
            .map(|a| a.replace("{D}", ds))
            .collect();
        let out = bin().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        let lines: Vec<&str> = err.lines().collect();
        let mut bad = Vec::new();
        if out.status.code() != Some(2) {
            bad.push(format!("exit {:?}", out.status.code()));
        }
        if lines.len() != 1 {
            bad.push(format!("{} stderr lines", lines.len()));
        }
        if err.contains("panicked") {
            bad.push("panicked".into());
        }
        for s in case.says {
            if !err.contains(s) {
                bad.push(format!("no {s:?}"));
            }
        }
        let line = err.replace(ds, "D");
        table.push(format!("{:<48} {}", case.name, line.trim_end()));
        if !bad.is_empty() {
            failures.push(format!(
                "{}: {}\n    {}",
                case.name,
                bad.join(", "),
                line.trim_end()
            ));
        }
    }
    eprintln!("{}", table.join("\n"));
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}
