//! The generated site in a real browser: headless Chromium screenshots the index and a
//! candidate page (PNG must show something), and its DOM after the script ran must report
//! rendered="ok", no errors, tables with rows and drawn charts; sorting and filtering are
//! exercised through `?selfcheck`; nothing may reach the browser console.
//!
//! Without Chromium the tests fail (`apt-get install -y chromium`), unless
//! `NGCC_REQUIRE_CHROMIUM=0` says the browser is not required here: then they print
//! `SKIPPED (NGCC_REQUIRE_CHROMIUM=0): chromium not installed`. CI sets it to 1.

use crate::common;
use common::*;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const TIMEOUT: Duration = Duration::from_secs(60);

pub(crate) fn find_chromium() -> Option<PathBuf> {
    let fixed = Path::new("/usr/bin/chromium");
    if fixed.is_file() {
        return Some(fixed.to_path_buf());
    }
    let path = std::env::var_os("PATH")?;
    for name in ["chromium", "chromium-browser"] {
        for dir in std::env::split_paths(&path) {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Some(candidate);
            }
        }
    }
    None
}

pub(crate) struct Run {
    pub stdout: String,
    pub stderr: String,
    pub success: bool,
    elapsed: Duration,
}

/// Runs Chromium headless with a fresh profile; kills it after `TIMEOUT`.
pub(crate) fn chromium(bin: &Path, profile: &Path, extra: &[String], url: &str) -> Run {
    let started = Instant::now();
    let mut child = Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting chromium");
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let status = loop {
        if let Some(status) = child.try_wait().expect("waiting for chromium") {
            break status;
        }
        if started.elapsed() > TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within {TIMEOUT:?} for {url}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Run {
        stdout: out_reader.join().unwrap(),
        stderr: err_reader.join().unwrap(),
        success: status.success(),
        elapsed: started.elapsed(),
    }
}

/// Console messages are logged as `…:CONSOLE…] "message"`; the site's script logs nothing.
pub(crate) fn assert_console_clean(run: &Run, what: &str) {
    let console: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .collect();
    assert!(console.is_empty(), "{what}: console output: {console:#?}");
}

pub(crate) fn attr<'a>(dom: &'a str, name: &str) -> Option<&'a str> {
    let head = &dom[..dom.find("<head").unwrap_or(dom.len())];
    let key = format!("{name}=\"");
    let start = head.find(&key)? + key.len();
    let end = head[start..].find('"')?;
    Some(&head[start..start + end])
}

pub(crate) fn number(dom: &str, name: &str) -> u64 {
    attr(dom, name)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no numeric {name} on <html>"))
}

/// Decodes the PNG and checks it is a real picture: right size, not one flat colour, and a
/// fair share of non-background pixels.
fn assert_screenshot(png_path: &Path) -> (u64, usize, f64) {
    let bytes = std::fs::metadata(png_path)
        .unwrap_or_else(|_| panic!("{} not written", png_path.display()))
        .len();
    assert!(
        bytes > 8 * 1024,
        "{}: only {bytes} bytes",
        png_path.display()
    );
    let decoder = png::Decoder::new(std::fs::File::open(png_path).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height), (1280, 2000));
    let channels = info.color_type.samples();
    let pixels: Vec<&[u8]> = buf[..info.buffer_size()].chunks(channels).collect();
    let mut colours: Vec<&[u8]> = pixels.iter().step_by(97).copied().collect();
    colours.sort();
    colours.dedup();
    let background = pixels[0];
    let inked = pixels.iter().filter(|p| **p != background).count() as f64 / pixels.len() as f64;
    assert!(
        colours.len() > 20,
        "{}: only {} colours",
        png_path.display(),
        colours.len()
    );
    assert!(
        inked > 0.02,
        "{}: {:.1}% non-background",
        png_path.display(),
        100.0 * inked
    );
    (bytes, colours.len(), inked)
}

/// Chromium, a scratch folder and the reference fixture's site rendered into `site/` in it;
/// without Chromium or the fixture, see `common::not_available`.
fn rendered_site() -> Option<(PathBuf, tempfile::TempDir, PathBuf)> {
    let Some(bin) = find_chromium() else {
        not_available(
            "NGCC_REQUIRE_CHROMIUM",
            "chromium not installed (apt-get install -y chromium)",
        );
        return None;
    };
    let fixture = fixture_dir()?;
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("site");
    let o = site(&[&fixture], &fixture.join("catalog"), &out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    Some((bin, tmp, out))
}

#[test]
fn site_renders_in_headless_chromium() {
    let Some((bin, tmp, site)) = rendered_site() else {
        return;
    };

    // (page, minimum table rows, charts)
    for (page, min_rows, charts) in [
        ("index.html", 3, 0),
        ("arm_1/kem-38.html", 50, 3),
        ("arm_1/summary.html", 6, 4),
    ] {
        let url = format!("file://{}", site.join(page).display());
        let profile = tmp
            .path()
            .join(format!("profile-{}", page.replace('/', "_")));
        // One load both renders (init) and then sorts and filters (`?selfcheck`): the
        // rendering marks are set before the self-check, which reorders rows and restores
        // the filter, so one browser start checks both (a start costs ~2.5 CPU-s).
        let dom_run = chromium(
            &bin,
            &profile,
            &["--dump-dom".into()],
            &format!("{url}?selfcheck"),
        );
        assert!(
            dom_run.success,
            "{page}: chromium failed: {}",
            dom_run.stderr
        );
        let dom = &dom_run.stdout;
        assert_eq!(attr(dom, "data-rendered"), Some("ok"), "{page}: {dom:.400}");
        assert_eq!(attr(dom, "data-errors"), Some(""), "{page}");
        assert!(number(dom, "data-tables") >= 1, "{page}");
        assert!(number(dom, "data-rows") >= min_rows, "{page}: {dom:.400}");
        assert_eq!(number(dom, "data-charts"), charts, "{page}");
        if charts > 0 {
            assert!(dom.contains("<svg class=\"chart\"") && dom.contains("<rect"));
        }
        // The script made headers sortable and added filter boxes.
        assert!(dom.contains("class=\"sortable\""), "{page}");
        assert!(dom.contains("type=\"search\""), "{page}");
        assert_eq!(attr(dom, "data-selfcheck"), Some("ok"), "{page}");
        assert_console_clean(&dom_run, page);

        if page != "arm_1/summary.html" {
            let png = tmp.path().join(format!("{}.png", page.replace('/', "_")));
            let shot = chromium(
                &bin,
                &profile,
                &[
                    format!("--screenshot={}", png.display()),
                    "--window-size=1280,2000".into(),
                ],
                &url,
            );
            assert!(shot.success, "{page}: screenshot failed: {}", shot.stderr);
            let (bytes, colours, inked) = assert_screenshot(&png);
            println!(
                "{page}: screenshot {bytes} bytes, {colours} colours sampled, {:.1}% non-background; DOM run {} ms, screenshot run {} ms",
                100.0 * inked,
                dom_run.elapsed.as_millis(),
                shot.elapsed.as_millis()
            );
            if let Some(dir) = std::env::var_os("NGCC_SCREENSHOT_DIR") {
                let dir = PathBuf::from(dir);
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::copy(&png, dir.join(png.file_name().unwrap())).unwrap();
            }
        }
    }
}

#[test]
fn a_broken_page_is_detected() {
    // The checks above must be able to fail: a page whose stylesheet is missing and whose
    // script throws is reported by the same hooks.
    let Some((bin, tmp, site)) = rendered_site() else {
        return;
    };
    std::fs::remove_file(site.join("assets/site.css")).unwrap();
    let page = site.join("arm_1/kem-38.html");
    let html = std::fs::read_to_string(&page).unwrap();
    std::fs::write(
        &page,
        html.replace("</main>", "<script>document.body.nosuch();</script></main>"),
    )
    .unwrap();
    let run = chromium(
        &bin,
        &tmp.path().join("profile"),
        &["--dump-dom".into()],
        &format!("file://{}", page.display()),
    );
    let errors = attr(&run.stdout, "data-errors")
        .unwrap_or_default()
        .to_string();
    assert!(errors.contains("stylesheet not loaded"), "{errors}");
    assert_eq!(attr(&run.stdout, "data-rendered"), Some("errors"));
    assert!(
        run.stderr
            .lines()
            .any(|l| l.contains(":CONSOLE") && l.contains("nosuch")),
        "the thrown error reaches the console log: {}",
        run.stderr
    );
}
