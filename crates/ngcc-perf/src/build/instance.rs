//! Building one instance into `lib<label>.so`: generated shim, compile, link, fingerprint.

use super::BuildOptions;
use super::bounded::BuildLimits;
use super::flags::{self, FlagSet};
use super::objcache;
use super::sources::{self, SourceSet};
use crate::candidate::{Api, Candidate, Instance, Kind};
use crate::dataset::schema::{Containment, HelperOrigin};
use crate::sandbox::jail::JailOptions;
use crate::util::text;
use crate::util::{atomic_write, sha256_file, sha256_hex};
use anyhow::{Context, Result};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where one instance's files go inside the run directory.
#[derive(Debug, Clone)]
pub struct Paths {
    /// `RUN/build/<cand>/<label>/` — objects, shim, logs.
    pub work: PathBuf,
    /// `RUN/lib/<cand>/lib<label>.so`
    pub library: PathBuf,
    /// `RUN/build/<cand>/<label>.log`
    pub log: PathBuf,
    /// `RUN/build/<cand>/<label>.guide.log`: the guide-flag attempt, kept on fallback.
    pub guide_log: PathBuf,
}

impl Paths {
    pub fn new(run: &Path, cand: &str, label: &str) -> Paths {
        Paths {
            work: run.join("build").join(cand).join(label),
            library: run.join("lib").join(cand).join(format!("lib{label}.so")),
            log: run.join("build").join(cand).join(format!("{label}.log")),
            guide_log: run
                .join("build")
                .join(cand)
                .join(format!("{label}.guide.log")),
        }
    }
}

/// Everything needed to compile and link, derived from the manifest before any work.
#[derive(Debug, Clone)]
pub struct Plan {
    pub flag_set: FlagSet,
    /// Compile flags without include/define/-c/-o parts (recorded in build.json).
    pub cflags: Vec<String>,
    pub defines: Vec<String>,
    pub includes: Vec<PathBuf>,
    pub sources: Vec<PathBuf>,
    /// Generated files written into `work/shim/`: (name, text).
    pub generated: Vec<(String, String)>,
    pub ldlibs: Vec<String>,
    pub cache_key: String,
    /// ICCS helper files linked (drng.c, auxfunc.c, …), by origin; paths are absolute here.
    pub helpers: Vec<(HelperOrigin, PathBuf)>,
    /// What the compiler may read (read-only, in its jail): the candidate's folder, the
    /// allowed source roots, the instance's work folder (our generated files, its objects)
    /// and every include folder and source.
    pub roots: Vec<PathBuf>,
    /// The bounds of every compiler and linker call of this build.
    pub limits: BuildLimits,
    /// How the jail of every compiler and linker call is built.
    pub jail: JailOptions,
}

pub fn plan(
    cand: &Candidate,
    inst: &Instance,
    flag_set: FlagSet,
    paths: &Paths,
    options: &BuildOptions,
) -> Result<Plan> {
    super::guard::check_flags(cand, &options.roots, &inst.cflags, &inst.ldlibs)
        .map_err(|e| anyhow::anyhow!("instance {}: {e}", inst.label))?;
    let set: SourceSet = sources::resolve(cand, inst, &options.roots)?;
    let shim_dir = paths.work.join("shim");
    let mut generated = vec![
        ("ngcc_shim.c".to_string(), crate::csrc::SHIM_C.to_string()),
        ("ngcc_shim.h".to_string(), crate::csrc::SHIM_H.to_string()),
        (
            "ngcc_shim_config.h".to_string(),
            config_header(cand, inst, flag_set)?,
        ),
    ];
    let mut srcs = set.sources.clone();
    let mut includes = vec![shim_dir.clone()];
    let mut helpers = Vec::new();
    match cand.api {
        Api::Nist => generated.push(("randombytes.h".into(), crate::csrc::RANDOMBYTES_H.into())),
        Api::Iccs => {
            // The instance's own helper files win (reference §5.2), then the official files
            // of `iccs_helpers`, then ours.
            let iccs_dir = paths.work.join("iccs");
            let official = cand.iccs_helpers_dir()?;
            if let Some(dir) = official.as_ref().filter(|d| d.exists()) {
                super::guard::check_path(cand, &options.roots, "iccs_helpers folder", dir)
                    .map_err(|e| anyhow::anyhow!("instance {}: {e}", inst.label))?;
            }
            let mut wanted = vec!["drng.c"];
            if cand.kind != Kind::Hash {
                wanted.push("auxfunc.c");
            }
            let mut embedded: Vec<(&str, &str)> = vec![
                ("drng.h", crate::csrc::DRNG_H),
                ("auxfunc.h", crate::csrc::AUXFUNC_H),
            ];
            for name in wanted {
                if let Some(own) = set.file(name) {
                    helpers.push((HelperOrigin::Package, own.clone()));
                } else if let Some(file) = official
                    .as_ref()
                    .map(|d| d.join(name))
                    .filter(|f| f.is_file())
                {
                    helpers.push((HelperOrigin::Official, file.clone()));
                    srcs.push(file);
                } else {
                    let text = if name == "drng.c" {
                        crate::csrc::DRNG_C
                    } else {
                        crate::csrc::AUXFUNC_C
                    };
                    embedded.push((name, text));
                }
            }
            // Our drng.c and auxfunc.c share one SM3 core: it comes with either of them.
            if embedded.iter().any(|(name, _)| name.ends_with(".c")) {
                embedded.push(("iccs_sm3.h", crate::csrc::ICCS_SM3_H));
                embedded.push(("iccs_sm3.c", crate::csrc::ICCS_SM3_C));
            }
            for (name, text) in embedded {
                generated.push((format!("../iccs/{name}"), text.to_string()));
                if name.ends_with(".c") {
                    srcs.push(iccs_dir.join(name));
                    helpers.push((HelperOrigin::Embedded, iccs_dir.join(name)));
                }
            }
            includes.extend(set.includes.iter().cloned());
            // Official headers before ours, so the official files compile as shipped.
            if let Some(dir) = official.filter(|d| d.is_dir()) {
                includes.push(dir);
            }
            includes.push(iccs_dir);
        }
    }
    if cand.api == Api::Nist {
        includes.extend(set.includes.iter().cloned());
    }
    srcs.push(shim_dir.join("ngcc_shim.c"));

    let mut cflags: Vec<String> = flag_set
        .cflags()
        .split_whitespace()
        .map(String::from)
        .collect();
    cflags.extend(inst.cflags.iter().cloned());
    cflags.push(flags::VISIBILITY.to_string());
    let defines: Vec<String> = inst.defines.iter().map(|d| format!("-D{d}")).collect();

    // Generated files are hashed by content; the folders holding them are not scanned.
    let scanned: Vec<PathBuf> = includes
        .iter()
        .filter(|d| !d.starts_with(&paths.work))
        .cloned()
        .collect();
    let hashed_srcs: Vec<PathBuf> = srcs
        .iter()
        .filter(|s| !s.starts_with(&paths.work))
        .cloned()
        .collect();
    let cache_key = fingerprint(
        &cflags,
        &defines,
        &scanned,
        &hashed_srcs,
        &generated,
        &inst.ldlibs,
    )?;
    let mut roots = super::guard::allowed_roots(cand, &options.roots);
    roots.push(paths.work.clone());
    roots.extend(includes.iter().cloned());
    roots.extend(
        srcs.iter()
            .filter_map(|s| s.parent().map(Path::to_path_buf)),
    );
    let roots = outermost(roots);
    Ok(Plan {
        flag_set,
        cflags,
        defines,
        includes,
        roots,
        sources: srcs,
        generated,
        ldlibs: inst.ldlibs.clone(),
        cache_key,
        helpers,
        limits: options.limits,
        jail: options.jail.clone(),
    })
}

/// The folders of `paths` that exist, canonical, without those inside another.
fn outermost(paths: Vec<PathBuf>) -> Vec<PathBuf> {
    let mut canon: Vec<PathBuf> = paths
        .into_iter()
        .filter_map(|p| std::fs::canonicalize(&p).ok().or(Some(p)))
        .collect();
    canon.sort_by_key(|p| p.components().count());
    let mut kept: Vec<PathBuf> = Vec::new();
    for p in canon {
        if !kept.iter().any(|k| p.starts_with(k)) {
            kept.push(p);
        }
    }
    kept
}

impl Plan {
    /// The flag string recorded in build.json and the metadata block.
    pub fn flag_string(&self) -> String {
        self.cflags.join(" ")
    }
}

/// Hash of compiler, flags, every source and every header in the include folders.
fn fingerprint(
    cflags: &[String],
    defines: &[String],
    includes: &[PathBuf],
    sources: &[PathBuf],
    generated: &[(String, String)],
    ldlibs: &[String],
) -> Result<String> {
    let mut text = String::new();
    writeln!(
        text,
        "ngcc-build-v1\n{}\n{}",
        super::compiler::version_line(),
        cflags.join(" ")
    )?;
    writeln!(text, "{}\n{}", defines.join(" "), ldlibs.join(" "))?;
    for (name, body) in generated {
        writeln!(text, "gen {name} {}", sha256_hex(body.as_bytes()))?;
    }
    for src in sources {
        writeln!(text, "src {} {}", src.display(), sha256_file(src)?)?;
    }
    for dir in includes {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut headers: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.is_file()
                    && !matches!(
                        p.extension().and_then(|e| e.to_str()),
                        Some("c" | "o" | "so" | "a")
                    )
            })
            .collect();
        headers.sort();
        for h in headers {
            writeln!(text, "inc {} {}", h.display(), sha256_file(&h)?)?;
        }
    }
    Ok(sha256_hex(text.as_bytes()))
}

fn c_string(s: &str) -> String {
    let mut out = String::from("\"");
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_ascii() && !c.is_ascii_control() => out.push(c),
            _ => out.push('?'),
        }
    }
    out.push('"');
    out
}

fn config_header(cand: &Candidate, inst: &Instance, flag_set: FlagSet) -> Result<String> {
    let mut h = String::from("/* Generated by ngcc-perf for one instance. */\n");
    writeln!(h, "#define NGCC_TYPE {}", cand.kind.code())?;
    let default_header = match cand.api {
        Api::Nist => "api.h".to_string(),
        Api::Iccs => {
            let prefix = match cand.kind {
                Kind::Kem => "KEM",
                Kind::Sig => "SIG",
                Kind::Kex => "KEX",
                Kind::Hash => "CryptHash",
            };
            format!("{prefix}_AlgorithmInstance.h")
        }
    };
    let header = inst.header.clone().unwrap_or(default_header);
    writeln!(h, "#define NGCC_HEADER {}", c_string(&header))?;
    match cand.api {
        Api::Nist => {
            writeln!(h, "#define NGCC_API_NIST 1")?;
            writeln!(
                h,
                "#define NGCC_NS {}",
                inst.namespace
                    .as_deref()
                    .unwrap_or("NGCC_MISSING_NAMESPACE")
            )?;
        }
        Api::Iccs => writeln!(h, "#define NGCC_API_ICCS 1")?,
    }
    if inst.own_drng_ctx {
        writeln!(h, "#define NGCC_OWN_DRNG_CTX 1")?;
    }
    if let Some(bits) = inst.digest_bits {
        writeln!(h, "#define NGCC_DIGEST_BITS {bits}")?;
    }
    let mut flag_text = flag_set.cflags();
    for f in inst
        .cflags
        .iter()
        .map(String::as_str)
        .chain([flags::VISIBILITY])
    {
        flag_text.push(' ');
        flag_text.push_str(f);
    }
    for (name, value) in [
        ("NGCC_ID", cand.id.as_str()),
        ("NGCC_ALG", cand.algorithm.as_str()),
        ("NGCC_VARIANT", cand.variant()),
        ("NGCC_SRCDIR", inst.dir.as_str()),
        ("NGCC_COMPILER", &super::compiler::short_name()),
        ("NGCC_FLAGS", &flag_text),
    ] {
        writeln!(h, "#define {name} {}", c_string(value))?;
    }
    Ok(h)
}

/// `p` as the compiler's jail shows it: from the root (our working folder is not there) and,
/// when it exists, canonical (the jail binds canonical folders only, so `dir/../x` through a
/// folder it does not show would not resolve).
fn abs(p: &Path) -> PathBuf {
    if let Ok(c) = std::fs::canonicalize(p) {
        return c;
    }
    if p.is_absolute() {
        return p.to_path_buf();
    }
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

/// Result of compiling and linking (the log holds every command and its output).
#[derive(Debug, Clone)]
pub struct Built {
    pub ok: bool,
    /// First compiler/linker error line, for humans.
    pub error: Option<String>,
    /// The link left symbols undefined (the flag-set fallback decides on this, not on `error`).
    pub undefined_symbols: bool,
    /// The jail layers every call had.
    pub containment: Option<Containment>,
}

/// The jail of one instance's compiler calls: what they may read, and the layers all of
/// them ran under so far.
struct Jail<'a> {
    roots: &'a [PathBuf],
    limits: BuildLimits,
    options: &'a JailOptions,
    layers: std::cell::RefCell<Option<Containment>>,
}

impl Jail<'_> {
    /// Runs `cmd` in the jail, producing `output`.
    fn run(&self, cmd: &Command, output: &Path) -> std::io::Result<super::bounded::Bounded> {
        let (out, layers) =
            super::bounded::output_in_jail(cmd, self.roots, output, self.limits, self.options)?;
        let mut all = self.layers.borrow_mut();
        match all.as_mut() {
            Some(c) => {
                c.keep_common(&layers);
                for m in layers.missing {
                    if !c.missing.contains(&m) {
                        c.missing.push(m);
                    }
                }
            }
            None => *all = Some(layers),
        }
        Ok(out)
    }

    fn built(&self, ok: bool, error: Option<String>) -> Built {
        Built {
            ok,
            error,
            undefined_symbols: false,
            containment: self.layers.borrow().clone(),
        }
    }
}

/// Compiles every source and links the library atomically; appends to the instance log.
pub fn compile_and_link(plan: &Plan, paths: &Paths) -> Result<Built> {
    let shim_dir = paths.work.join("shim");
    for (name, text) in &plan.generated {
        atomic_write(&shim_dir.join(name), text.as_bytes())?;
    }
    // The compiler's working folder is its jail's scratch: every path it gets is absolute.
    let obj_dir = abs(&paths.work).join(format!("obj-{}", plan.flag_set.name()));
    std::fs::create_dir_all(&obj_dir)?;
    let mut log = String::new();
    let cc = super::compiler::program();
    let cache = objcache::open().filter(|_| objcache::cacheable(&plan.cflags));
    let jail = Jail {
        roots: &plan.roots,
        limits: plan.limits,
        options: &plan.jail,
        layers: std::cell::RefCell::new(None),
    };
    let mut objects = Vec::new();
    for (i, src) in plan.sources.iter().enumerate() {
        let stem = src.file_stem().unwrap_or_default().to_string_lossy();
        let obj = obj_dir.join(format!("{i:03}_{stem}.o"));
        let compiler = || {
            let mut cmd = Command::new(&cc);
            cmd.args(&plan.cflags).args(&plan.defines);
            for inc in &plan.includes {
                cmd.arg(format!("-I{}", abs(inc).display()));
            }
            cmd
        };
        // Compile to a private name and rename: a compiler orphaned by a killed campaign may
        // still be writing the old name when the resumed one links.
        let tmp_obj = obj_dir.join(format!(".{i:03}_{stem}.o.{}.tmp", std::process::id()));
        let key = match cache {
            Some(_) => match cache_key(plan, src, &tmp_obj, compiler(), &jail)? {
                Ok(key) => key,
                Err(bound) => {
                    log.push_str(&bound.log);
                    finish_log(paths, &log)?;
                    return Ok(jail.built(false, Some(bound.why)));
                }
            },
            None => None,
        };
        let mut cmd = compiler();
        cmd.arg("-c").arg(abs(src)).arg("-o").arg(&tmp_obj);
        if let (Some(c), Some(k)) = (cache, &key)
            && c.get(k, &tmp_obj)
        {
            writeln!(log, "$ {}", command_line(&cmd).join(" "))?;
            writeln!(
                log,
                "(object {k:.16}… from the object cache: this compiler and these flags made it \
                 from the same preprocessed text without a diagnostic)"
            )?;
        } else {
            let ran = run_logged(&mut cmd, &mut log, &jail, &tmp_obj)?;
            if let Some(err) = ran.error {
                let _ = std::fs::remove_file(&tmp_obj);
                finish_log(paths, &log)?;
                return Ok(Built {
                    undefined_symbols: ran.undefined_symbols,
                    ..jail.built(false, Some(err))
                });
            }
            if let (Some(c), Some(k), true) = (cache, &key, ran.silent) {
                c.put(k, &tmp_obj);
            }
        }
        std::fs::rename(&tmp_obj, &obj).with_context(|| format!("installing {}", obj.display()))?;
        objects.push(obj);
    }
    let map = abs(&paths.work).join("exports.map");
    atomic_write(&map, b"{\n  global: ngcc_*;\n  local: *;\n};\n")?;
    if let Some(parent) = paths.library.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let tmp = abs(&paths.library).with_extension(format!("so.{}.tmp", std::process::id()));
    let mut cmd = Command::new(&cc);
    cmd.args(flags::LINK)
        .arg(format!("-Wl,--version-script={}", map.display()))
        .arg("-o")
        .arg(&tmp);
    cmd.args(&objects).args(&plan.ldlibs).arg("-lm");
    let ran = run_logged(&mut cmd, &mut log, &jail, &tmp)?;
    if let Some(err) = ran.error {
        let _ = std::fs::remove_file(&tmp);
        finish_log(paths, &log)?;
        return Ok(Built {
            undefined_symbols: ran.undefined_symbols,
            ..jail.built(false, Some(err))
        });
    }
    std::fs::rename(&tmp, &paths.library)
        .with_context(|| format!("installing {}", paths.library.display()))?;
    if let Some(c) = jail.layers.borrow().as_ref() {
        writeln!(log, "(every call above ran in a jail: {})", c.text())?;
    }
    finish_log(paths, &log)?;
    Ok(jail.built(true, None))
}

fn finish_log(paths: &Paths, log: &str) -> Result<()> {
    let mut all = std::fs::read_to_string(&paths.log).unwrap_or_default();
    all.push_str(log);
    atomic_write(&paths.log, all.as_bytes())
}

/// What one logged command did.
struct Ran {
    /// Its error summary when it failed.
    error: Option<String>,
    /// It failed naming undefined symbols.
    undefined_symbols: bool,
    /// It printed nothing.
    silent: bool,
}

fn command_line(cmd: &Command) -> Vec<String> {
    std::iter::once(cmd.get_program().to_string_lossy().to_string())
        .chain(cmd.get_args().map(|a| a.to_string_lossy().to_string()))
        .collect()
}

/// A compile's object-cache key, from its preprocessed text (`-E -P` into a file beside the
/// objects). `Ok(None)`: preprocessing failed or spoke, so the compile runs and says why.
/// `Err`: the preprocessor hit a build bound, which the compile would hit too.
fn cache_key(
    plan: &Plan,
    src: &Path,
    tmp_obj: &Path,
    mut cmd: Command,
    jail: &Jail,
) -> Result<std::result::Result<Option<String>, BoundHit>> {
    let text = tmp_obj.with_extension("i");
    cmd.arg("-E").arg("-P").arg(abs(src)).arg("-o").arg(&text);
    let out = jail
        .run(&cmd, &text)
        .with_context(|| format!("running {}", cmd.get_program().to_string_lossy()))?;
    let digest = sha256_file(&text).ok();
    let _ = std::fs::remove_file(&text);
    if let Some(why) = out.bound_hit(&program_name(&cmd)) {
        let mut log = format!("$ {}\n", command_line(&cmd).join(" "));
        log.push_str(&text::terminal(&String::from_utf8_lossy(&out.stderr)));
        writeln!(log, "{why}")?;
        return Ok(Err(BoundHit { log, why }));
    }
    let spoke = !out.stdout.is_empty() || !out.stderr.is_empty();
    let Some(digest) = digest.filter(|_| out.success() && !spoke) else {
        return Ok(Ok(None));
    };
    let args = plan.cflags.iter().chain(&plan.defines).map(String::as_str);
    Ok(Ok(Some(objcache::key(
        &super::compiler::program(),
        &super::compiler::version_line(),
        args,
        src,
        &digest,
    ))))
}

/// The preprocessor stopped by a build bound: its log lines and the one-line reason.
struct BoundHit {
    log: String,
    why: String,
}

fn program_name(cmd: &Command) -> String {
    let program = cmd.get_program().to_string_lossy();
    Path::new(&*program)
        .file_name()
        .map_or(program.to_string(), |n| n.to_string_lossy().into_owned())
}

/// Runs one command, appending `$ cmd` and its output to `log`.
fn run_logged(cmd: &mut Command, log: &mut String, jail: &Jail, output: &Path) -> Result<Ran> {
    let line = command_line(cmd);
    writeln!(log, "$ {}", line.join(" "))?;
    let out = jail
        .run(cmd, output)
        .with_context(|| format!("running {}", line[0]))?;
    // The compiler quotes candidate sources: their terminal controls are written out.
    let stderr = text::terminal(&String::from_utf8_lossy(&out.stderr));
    log.push_str(&text::terminal(&String::from_utf8_lossy(&out.stdout)));
    log.push_str(&stderr);
    let silent = out.stdout.is_empty() && out.stderr.is_empty();
    if out.success() {
        return Ok(Ran {
            error: None,
            undefined_symbols: false,
            silent,
        });
    }
    let failed = |why: String| Ran {
        error: Some(why),
        undefined_symbols: false,
        silent,
    };
    if let Some(why) = out.bound_hit(&program_name(cmd)) {
        writeln!(log, "{why}")?;
        return Ok(failed(why));
    }
    // The most telling line: every undefined symbol (a library that would not load), else
    // the first error that is not the linker driver's summary.
    let undefined = undefined_symbols(&stderr);
    let named = (!undefined.is_empty()).then(|| {
        format!(
            "{UNDEFINED_SYMBOLS}{} (the library would not load)",
            undefined.join(", ")
        )
    });
    let first = named
        .as_deref()
        .or_else(|| {
            stderr.lines().find(|l| {
                // gcc says `error`, the assembler `Error:`.
                (l.contains("error") || l.contains("Error:")) && !l.contains("collect2")
            })
        })
        .or_else(|| stderr.lines().find(|l| !l.trim().is_empty()))
        .unwrap_or("failed without output")
        .trim()
        .to_string();
    if let Some(status) = out.status {
        writeln!(log, "exit status: {status}")?;
    }
    Ok(Ran {
        undefined_symbols: !undefined.is_empty(),
        ..failed(first)
    })
}

/// How a build error that names undefined symbols begins.
const UNDEFINED_SYMBOLS: &str = "undefined symbols: ";

/// Every symbol the linker reports undefined (`undefined reference to `f'`), once each, in
/// order.
pub fn undefined_symbols(stderr: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for l in stderr.lines() {
        let Some((_, rest)) = l.split_once("undefined reference to `") else {
            continue;
        };
        let sym = rest.split('\'').next().unwrap_or(rest).to_string();
        if !sym.is_empty() && !out.contains(&sym) {
            out.push(sym);
        }
    }
    out
}

#[cfg(test)]
mod undefined_tests {
    use super::*;

    #[test]
    fn every_undefined_symbol_is_named_once() {
        let stderr = "/usr/bin/ld: mix.o: in function `toy_mix':\nmix.c:(.text+0x15): undefined reference to `toy_rot'\n/usr/bin/ld: kem.o: undefined reference to `ntt'\nmix.c:(.text+0x40): undefined reference to `toy_rot'\ncollect2: error: ld returned 1 exit status\n";
        assert_eq!(undefined_symbols(stderr), ["toy_rot", "ntt"]);
        assert!(undefined_symbols("error: x").is_empty());
    }
}
