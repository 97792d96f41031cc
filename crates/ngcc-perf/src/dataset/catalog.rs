//! The curated catalogs: `;`-separated CSV with `#` comment lines and a header row, read the
//! way Python's `csv` module reads them (quoted fields may contain `;`).
//!
//! Every catalog is optional when loading; a page that needs a missing file or row gets an
//! error naming the file and the instance.

use anyhow::{Context, Result, anyhow, bail};
use regex_lite::Regex;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub const SYSTEMS: &str = "systems.csv";
pub const EXTERNAL_SIZES: &str = "external_sizes.csv";
pub const KEX_BANDWIDTH: &str = "kex_bandwidth.csv";
pub const KAT_ISSUES: &str = "kat_issues.csv";
pub const SURVEY: &str = "symmetric_survey.csv";
pub const SUMMARY_NOTES: &str = "summary_notes.csv";
pub const DOWNLOADS: &str = "downloads.csv";
pub const PARAMETERS: &str = "parameters.csv";
pub const SECURITY_TARGETS: &str = "security_targets.csv";

/// The comparison groups of `security_targets.csv` (NGCC: 128, 256 and 512 bits).
pub const TARGET_GROUPS: [u32; 3] = [128, 256, 512];

#[derive(Clone, Debug, PartialEq)]
pub struct System {
    pub id: String,
    pub arch: String,
    pub hostname: String,
    pub description: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ExternalSize {
    pub pk: u64,
    pub ct: Option<u64>,
    pub sig: Option<u64>,
    /// `encoded`, `maximum-variable` or `nominal-variable`.
    pub basis: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct KexBandwidth {
    pub pk_a: u64,
    pub pk_b: u64,
    pub messages: u64,
}

impl KexBandwidth {
    pub fn total(&self) -> u64 {
        self.messages + self.pk_a + self.pk_b
    }
}

/// One row of `security_targets.csv` (`ID;Instance;TargetBits[;Representative]`).
#[derive(Clone, Debug, PartialEq)]
pub struct SecurityTarget {
    /// The comparison group; `None` (a blank cell) is a supplementary parameter set, shown
    /// below the ranked rows but never ranked.
    pub bits: Option<u32>,
    /// The optional `Representative` column (`true`/`yes`/`1`): this instance represents its
    /// candidate in its group.
    pub representative: bool,
}

#[derive(Clone, Debug)]
pub struct KatIssue {
    pub id: String,
    /// Regex searched in the instance label.
    pub label: Regex,
    /// `measure` or `exclude`.
    pub action: String,
    pub cause: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct SurveyRow {
    pub id: String,
    pub verdict: String,
    pub notes: String,
}

#[derive(Clone, Debug)]
pub struct SummaryNote {
    pub id: String,
    pub label: Regex,
    pub note: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Download {
    pub id: String,
    pub category: String,
    pub algorithm: String,
    pub page_url: String,
}

/// All catalogs of one folder. `None` means the file does not exist.
#[derive(Clone, Debug, Default)]
pub struct Catalogs {
    pub dir: PathBuf,
    pub systems: Option<Vec<System>>,
    pub external_sizes: Option<BTreeMap<(String, String), ExternalSize>>,
    pub kex_bandwidth: Option<BTreeMap<(String, String), KexBandwidth>>,
    pub kat_issues: Option<Vec<KatIssue>>,
    pub survey: Option<Vec<SurveyRow>>,
    pub summary_notes: Option<Vec<SummaryNote>>,
    pub downloads: Option<Vec<Download>>,
    pub security_targets: Option<BTreeMap<(String, String), SecurityTarget>>,
}

/// A header-addressed table.
struct Table {
    file: String,
    header: Vec<String>,
    rows: Vec<(usize, Vec<String>)>,
}

impl Table {
    fn col(&self, name: &str) -> Result<usize> {
        self.header
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| anyhow!("{}: header has no column `{name}`", self.file))
    }

    /// The columns of `names`, in that order (the first missing one is the error).
    fn cols<const N: usize>(&self, names: [&str; N]) -> Result<[usize; N]> {
        let mut cols = [0; N];
        for (c, name) in cols.iter_mut().zip(names) {
            *c = self.col(name)?;
        }
        Ok(cols)
    }

    /// One value per data row, from its line number and fields.
    fn parse_rows<T>(&self, mut f: impl FnMut(usize, &[String]) -> Result<T>) -> Result<Vec<T>> {
        self.rows.iter().map(|(line, r)| f(*line, r)).collect()
    }

    /// One value per data row, keyed by its (ID, Instance) fields, which must be unique.
    fn parse_by_instance<T>(
        &self,
        id: usize,
        inst: usize,
        mut f: impl FnMut(usize, &[String]) -> Result<T>,
    ) -> Result<BTreeMap<(String, String), T>> {
        let mut map = BTreeMap::new();
        for (line, r) in &self.rows {
            let key = (field(r, id).to_string(), field(r, inst).to_string());
            let value = f(*line, r)?;
            if map.insert(key.clone(), value).is_some() {
                bail!(
                    "{} line {line}: duplicate row for {} {}",
                    self.file,
                    key.0,
                    key.1
                );
            }
        }
        Ok(map)
    }
}

fn read_table(path: &Path) -> Result<Option<Table>> {
    let text = match std::fs::read(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let file = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(b';')
        .comment(Some(b'#'))
        .flexible(true)
        .has_headers(false)
        .from_reader(text.as_bytes());
    let mut header: Option<Vec<String>> = None;
    let mut rows = Vec::new();
    for rec in reader.records() {
        let rec = rec.with_context(|| format!("{file}: not valid `;`-separated CSV"))?;
        let line = rec.position().map(|p| p.line() as usize).unwrap_or(0);
        let fields: Vec<String> = rec.iter().map(str::to_string).collect();
        if fields.iter().all(|f| f.is_empty()) {
            continue;
        }
        if header.is_none() {
            header = Some(fields);
        } else {
            rows.push((line, fields));
        }
    }
    let header = header.ok_or_else(|| anyhow!("{file}: no header row"))?;
    Ok(Some(Table { file, header, rows }))
}

fn field(row: &[String], col: usize) -> &str {
    row.get(col).map(String::as_str).unwrap_or("")
}

fn parse_u64(file: &str, line: usize, what: &str, text: &str) -> Result<u64> {
    text.trim()
        .parse()
        .map_err(|_| anyhow!("{file} line {line}: {what} `{text}` is not a whole number"))
}

fn parse_opt_u64(file: &str, line: usize, what: &str, text: &str) -> Result<Option<u64>> {
    if text.trim().is_empty() {
        Ok(None)
    } else {
        parse_u64(file, line, what, text).map(Some)
    }
}

fn regex(file: &str, line: usize, pattern: &str) -> Result<Regex> {
    Regex::new(pattern)
        .map_err(|e| anyhow!("{file} line {line}: label pattern `{pattern}` is not a regex: {e}"))
}

fn systems(t: &Table) -> Result<Vec<System>> {
    let [id, arch, host, desc] = t.cols(["ID", "Arch", "Hostname", "Description"])?;
    t.parse_rows(|_, r| {
        Ok(System {
            id: field(r, id).into(),
            arch: field(r, arch).into(),
            hostname: field(r, host).into(),
            description: field(r, desc).into(),
        })
    })
}

fn external_sizes(t: &Table) -> Result<BTreeMap<(String, String), ExternalSize>> {
    let [id, inst, pk, ct, sig, basis] = t.cols([
        "ID",
        "Instance",
        "PublicKeyBytes",
        "CiphertextBytes",
        "SignatureBytes",
        "Basis",
    ])?;
    t.parse_by_instance(id, inst, |line, r| {
        Ok(ExternalSize {
            pk: parse_u64(&t.file, line, "PublicKeyBytes", field(r, pk))?,
            ct: parse_opt_u64(&t.file, line, "CiphertextBytes", field(r, ct))?,
            sig: parse_opt_u64(&t.file, line, "SignatureBytes", field(r, sig))?,
            basis: field(r, basis).into(),
        })
    })
}

fn kex_bandwidth(t: &Table) -> Result<BTreeMap<(String, String), KexBandwidth>> {
    let [id, inst, a, b, msg] = t.cols([
        "ID",
        "Instance",
        "PkABytes",
        "PkBBytes",
        "ProtocolMessageBytes",
    ])?;
    t.parse_by_instance(id, inst, |line, r| {
        Ok(KexBandwidth {
            pk_a: parse_u64(&t.file, line, "PkABytes", field(r, a))?,
            pk_b: parse_u64(&t.file, line, "PkBBytes", field(r, b))?,
            messages: parse_u64(&t.file, line, "ProtocolMessageBytes", field(r, msg))?,
        })
    })
}

fn security_targets(t: &Table) -> Result<BTreeMap<(String, String), SecurityTarget>> {
    let [id, inst, bits] = t.cols(["ID", "Instance", "TargetBits"])?;
    let rep = t.col("Representative").ok();
    t.parse_by_instance(id, inst, |line, r| {
        let text = field(r, bits).trim();
        let bits = if text.is_empty() {
            None
        } else {
            match text.parse::<u32>() {
                Ok(b) if TARGET_GROUPS.contains(&b) => Some(b),
                _ => bail!(
                    "{} line {line}: TargetBits `{text}` is not blank, 128, 256 or 512",
                    t.file
                ),
            }
        };
        let representative = match rep.map(|c| field(r, c).trim().to_ascii_lowercase()) {
            None => false,
            Some(v) => match v.as_str() {
                "" | "false" | "no" | "0" => false,
                "true" | "yes" | "1" => true,
                other => bail!(
                    "{} line {line}: Representative `{other}` is not true or false",
                    t.file
                ),
            },
        };
        Ok(SecurityTarget {
            bits,
            representative,
        })
    })
}

fn kat_issues(t: &Table) -> Result<Vec<KatIssue>> {
    let [id, label, action, cause] = t.cols(["ID", "Label", "Action", "Cause"])?;
    t.parse_rows(|line, r| {
        Ok(KatIssue {
            id: field(r, id).into(),
            label: regex(&t.file, line, field(r, label))?,
            action: field(r, action).into(),
            // Cause is the last column and may itself contain `;`: re-join the overflow.
            cause: r.get(cause..).map(|c| c.join(";")).unwrap_or_default(),
        })
    })
}

fn survey(t: &Table) -> Result<Vec<SurveyRow>> {
    let [id, verdict, notes] = t.cols(["ID", "Verdict", "Notes"])?;
    t.parse_rows(|_, r| {
        Ok(SurveyRow {
            id: field(r, id).into(),
            verdict: field(r, verdict).into(),
            notes: field(r, notes).into(),
        })
    })
}

fn summary_notes(t: &Table) -> Result<Vec<SummaryNote>> {
    let [id, label, note] = t.cols(["ID", "Label", "Note"])?;
    t.parse_rows(|line, r| {
        Ok(SummaryNote {
            id: field(r, id).into(),
            label: regex(&t.file, line, field(r, label))?,
            note: field(r, note).into(),
        })
    })
}

fn downloads(t: &Table) -> Result<Vec<Download>> {
    let [id, cat, alg, url] = t.cols(["ID", "Category", "Algorithm", "PageURL"])?;
    t.parse_rows(|_, r| {
        Ok(Download {
            id: field(r, id).into(),
            category: field(r, cat).into(),
            algorithm: field(r, alg).into(),
            page_url: field(r, url).into(),
        })
    })
}

fn parameters(t: &Table) -> Result<Vec<BTreeMap<String, String>>> {
    t.parse_rows(|_, r| {
        Ok(t.header
            .iter()
            .enumerate()
            .map(|(i, h)| (h.clone(), field(r, i).to_string()))
            .collect())
    })
}

impl Catalogs {
    pub fn load(dir: &Path) -> Result<Catalogs> {
        if !dir.is_dir() {
            bail!("catalog folder {} does not exist", dir.display());
        }
        // Read and parsed one file after another, in this order.
        fn load<T>(dir: &Path, file: &str, parse: fn(&Table) -> Result<T>) -> Result<Option<T>> {
            read_table(&dir.join(file))?.map(|t| parse(&t)).transpose()
        }
        let catalogs = Catalogs {
            dir: dir.to_path_buf(),
            systems: load(dir, SYSTEMS, systems)?,
            external_sizes: load(dir, EXTERNAL_SIZES, external_sizes)?,
            kex_bandwidth: load(dir, KEX_BANDWIDTH, kex_bandwidth)?,
            kat_issues: load(dir, KAT_ISSUES, kat_issues)?,
            survey: load(dir, SURVEY, survey)?,
            summary_notes: load(dir, SUMMARY_NOTES, summary_notes)?,
            downloads: load(dir, DOWNLOADS, downloads)?,
            security_targets: load(dir, SECURITY_TARGETS, security_targets)?,
        };
        // Checked last, like the reference loads it, but no page shows it.
        load(dir, PARAMETERS, parameters)?;
        Ok(catalogs)
    }

    fn missing(&self, file: &str, needed_for: &str) -> anyhow::Error {
        anyhow!(
            "catalog {} is missing (needed for {needed_for})",
            self.dir.join(file).display()
        )
    }

    pub fn systems(&self) -> Result<&[System]> {
        self.systems
            .as_deref()
            .ok_or_else(|| self.missing(SYSTEMS, "the system description"))
    }

    pub fn system(&self, id: &str) -> Result<&System> {
        self.systems()?
            .iter()
            .find(|s| s.id == id)
            .ok_or_else(|| anyhow!("{SYSTEMS} has no system `{id}`"))
    }

    pub fn download(&self, cand: &str) -> Result<&Download> {
        let rows = self
            .downloads
            .as_ref()
            .ok_or_else(|| self.missing(DOWNLOADS, cand))?;
        rows.iter()
            .find(|d| d.id == cand)
            .ok_or_else(|| anyhow!("{DOWNLOADS} has no row for candidate {cand}"))
    }

    pub fn external_size(&self, cand: &str, label: &str) -> Result<&ExternalSize> {
        let map = self
            .external_sizes
            .as_ref()
            .ok_or_else(|| self.missing(EXTERNAL_SIZES, &format!("{cand} {label}")))?;
        map.get(&(cand.to_string(), label.to_string()))
            .ok_or_else(|| anyhow!("{EXTERNAL_SIZES} has no row for {cand} {label}"))
    }

    pub fn kex_bandwidth(&self, cand: &str, label: &str) -> Result<&KexBandwidth> {
        let map = self
            .kex_bandwidth
            .as_ref()
            .ok_or_else(|| self.missing(KEX_BANDWIDTH, &format!("{cand} {label}")))?;
        map.get(&(cand.to_string(), label.to_string()))
            .ok_or_else(|| anyhow!("{KEX_BANDWIDTH} has no row for {cand} {label}"))
    }

    /// The `security_targets.csv` row of an instance (`None`: no file, or no row).
    pub fn security_target(&self, cand: &str, label: &str) -> Option<&SecurityTarget> {
        self.security_targets
            .as_ref()?
            .get(&(cand.to_string(), label.to_string()))
    }

    /// The first kat_issues row of `cand` whose label pattern occurs in `label`.
    pub fn kat_issue(&self, cand: &str, label: &str) -> Option<&KatIssue> {
        self.kat_issues
            .as_ref()?
            .iter()
            .find(|k| k.id == cand && k.label.is_match(label))
    }

    pub fn survey_row(&self, cand: &str) -> Option<&SurveyRow> {
        self.survey.as_ref()?.iter().find(|s| s.id == cand)
    }

    pub fn summary_notes_for(&self, cand: &str, label: &str) -> Vec<&str> {
        self.summary_notes
            .iter()
            .flatten()
            .filter(|n| n.id == cand && n.label.is_match(label))
            .map(|n| n.note.as_str())
            .collect()
    }
}

/// A candidate's category: its id up to the first `-` (`kem-31` → `kem`).
pub fn category(cand: &str) -> &str {
    cand.split('-').next().unwrap_or(cand)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) {
        std::fs::write(dir.join(name), text).unwrap();
    }

    #[test]
    fn reads_comments_quotes_and_rejoined_causes() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        write(
            d,
            SURVEY,
            "# comment; with separator\nID;Verdict;Notes\nkem-31;bypass;\"own SM3; counter XOF\"\nkem-38;ICCS-only;\n",
        );
        write(
            d,
            KAT_ISSUES,
            "# x\nID;Label;Action;Cause\nsign-19;SM3;measure;KAT MISMATCH; see katcheck/a.log\nhash-11;DM4x4$;exclude;not the algorithm\n",
        );
        write(
            d,
            SYSTEMS,
            "ID;Arch;Hostname;Description\nx86_1;x86_64;blk;Intel\narm_1;aarch64;vivo;Oryon\n",
        );
        write(
            d,
            EXTERNAL_SIZES,
            "ID;Instance;PublicKeyBytes;CiphertextBytes;SignatureBytes;Basis\nkem-31;NGCC-1;389;602;;encoded\nsign-22;Rhyme-1;100;;1483;nominal-variable\n",
        );
        let c = Catalogs::load(d).unwrap();
        let s = c.survey_row("kem-31").unwrap();
        assert_eq!(s.notes, "own SM3; counter XOF");
        assert_eq!(c.survey_row("kem-38").unwrap().notes, "");
        let k = c.kat_issue("sign-19", "Phoenix-SM3-128f").unwrap();
        assert_eq!(k.cause, "KAT MISMATCH; see katcheck/a.log");
        assert_eq!(k.action, "measure");
        assert!(c.kat_issue("hash-11", "Garnet_1024_DM4x4").is_some());
        assert!(c.kat_issue("hash-11", "Garnet_1024").is_none());
        assert_eq!(c.system("arm_1").unwrap().arch, "aarch64");
        let e = c.external_size("kem-31", "NGCC-1").unwrap();
        assert_eq!((e.pk, e.ct, e.sig), (389, Some(602), None));
        assert_eq!(
            c.external_size("sign-22", "Rhyme-1").unwrap().sig,
            Some(1483)
        );
    }

    #[test]
    fn missing_files_and_rows_name_the_file_and_instance() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            DOWNLOADS,
            "ID;Category;No;Algorithm;ZipFile;DownloadURL;PageURL;ForumThread\nkem-31;kem;31;QIMEN-PIKE;z;d;https://p;f\n",
        );
        let c = Catalogs::load(dir.path()).unwrap();
        assert_eq!(c.download("kem-31").unwrap().algorithm, "QIMEN-PIKE");
        let err = c.download("kem-99").unwrap_err().to_string();
        assert!(
            err.contains("downloads.csv") && err.contains("kem-99"),
            "{err}"
        );
        let err = c.external_size("kem-31", "NGCC-1").unwrap_err().to_string();
        assert!(
            err.contains("external_sizes.csv") && err.contains("kem-31 NGCC-1"),
            "{err}"
        );
        assert!(c.kat_issue("kem-31", "NGCC-1").is_none());
    }

    #[test]
    fn security_targets_with_and_without_representative() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            SECURITY_TARGETS,
            "ID;Instance;TargetBits\nkem-19;Lore-SHAKE-L1;128\nkem-19;Lore-SHAKE-L3;\n",
        );
        let c = Catalogs::load(dir.path()).unwrap();
        let t = c.security_target("kem-19", "Lore-SHAKE-L1").unwrap();
        assert_eq!((t.bits, t.representative), (Some(128), false));
        assert_eq!(
            c.security_target("kem-19", "Lore-SHAKE-L3").unwrap().bits,
            None
        );
        assert!(c.security_target("kem-19", "Lore-SM3-L1").is_none());
        write(
            dir.path(),
            SECURITY_TARGETS,
            "ID;Instance;TargetBits;Representative\nkem-1;A;256;true\nkem-1;B;256;\n",
        );
        let c = Catalogs::load(dir.path()).unwrap();
        assert!(c.security_target("kem-1", "A").unwrap().representative);
        assert!(!c.security_target("kem-1", "B").unwrap().representative);
        write(
            dir.path(),
            SECURITY_TARGETS,
            "ID;Instance;TargetBits\nkem-1;A;192\n",
        );
        let err = Catalogs::load(dir.path()).unwrap_err().to_string();
        assert!(err.contains("security_targets.csv line 2"), "{err}");
    }

    #[test]
    fn bad_rows_are_errors_not_panics() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            EXTERNAL_SIZES,
            "ID;Instance;PublicKeyBytes;CiphertextBytes;SignatureBytes;Basis\nkem-31;NGCC-1;x;1;;encoded\n",
        );
        let err = Catalogs::load(dir.path()).unwrap_err().to_string();
        assert!(err.contains("external_sizes.csv line 2"), "{err}");
        write(
            dir.path(),
            EXTERNAL_SIZES,
            "ID;Instance;PublicKeyBytes;CiphertextBytes;SignatureBytes;Basis\nkem-31;A;1;1;;encoded\nkem-31;A;1;1;;encoded\n",
        );
        let err = Catalogs::load(dir.path()).unwrap_err().to_string();
        assert!(err.contains("duplicate row for kem-31 A"), "{err}");
        write(
            dir.path(),
            KAT_ISSUES,
            "ID;Label;Action;Cause\nkem-1;(;measure;x\n",
        );
        std::fs::remove_file(dir.path().join(EXTERNAL_SIZES)).unwrap();
        let err = Catalogs::load(dir.path()).unwrap_err().to_string();
        assert!(err.contains("kat_issues.csv line 2"), "{err}");
    }
}
