//! Every number the pages print, formatted exactly as the reference harness does
//! (reference-harness.md §8.2). Fixed precision relies on Rust's `{:.N}`, which rounds the
//! exact binary value half-to-even like Python; `%g` is built on top of it.

use crate::dataset::schema::{Record, RecordStatus};

/// U+2013, the "not measured" mark.
pub const DASH: &str = "–";

/// Python's `'%.{prec}g' % x`.
pub fn fmt_g(x: f64, prec: usize) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let prec = prec.max(1);
    if x == 0.0 {
        return if x.is_sign_negative() { "-0" } else { "0" }.into();
    }
    // The exponent of the value *after* rounding to `prec` significant digits decides the style.
    let sci = format!("{:.*e}", prec - 1, x);
    let (mantissa, exp) = sci.split_once('e').expect("`{:e}` always has an exponent");
    let exp: i32 = exp.parse().expect("`{:e}` exponent is an integer");
    if (-4..prec as i32).contains(&exp) {
        let decimals = (prec as i32 - 1 - exp) as usize;
        strip_zeros(&format!("{x:.decimals$}")).to_string()
    } else {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", strip_zeros(mantissa), exp.abs())
    }
}

/// Removes trailing zeros after a decimal point, and the point itself if nothing follows.
fn strip_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// `%.3g`, the precision used throughout the pages.
pub fn g3(x: f64) -> String {
    fmt_g(x, 3)
}

/// Cycle counts: `142.6 k`, `7.89 M`, `10404.84 G` (no T), plain below 10 000.
pub fn fmt_int(x: Option<f64>) -> String {
    let Some(x) = x else { return DASH.into() };
    if x >= 1e9 {
        format!("{:.2} G", x / 1e9)
    } else if x >= 1e6 {
        format!("{:.2} M", x / 1e6)
    } else if x >= 1e4 {
        format!("{:.1} k", x / 1e3)
    } else {
        format!("{x:.0}")
    }
}

/// Durations: the first unit in which the value is at least 1, with `%.3g`.
pub fn fmt_time(s: Option<f64>) -> String {
    let Some(s) = s else { return DASH.into() };
    for (factor, unit) in [(1.0, "s"), (1e3, "ms"), (1e6, "µs"), (1e9, "ns")] {
        if s * factor >= 1.0 {
            return format!("{} {unit}", g3(s * factor));
        }
    }
    format!("{} ns", g3(s * 1e9))
}

/// Shares: whole percent from 9.5 % up, one decimal below.
pub fn pct(x: Option<f64>) -> String {
    let Some(x) = x else { return DASH.into() };
    if x >= 0.095 {
        format!("{:.0}%", 100.0 * x)
    } else {
        format!("{:.1}%", 100.0 * x)
    }
}

/// Noise figures (spread, CV): two decimals of a percent.
pub fn noise_percent(x: f64) -> String {
    format!("{:.2} %", 100.0 * x)
}

pub fn ops_per_second(v: f64) -> String {
    g3(v)
}

/// Ratio to the ICCS pseudoXOF: `4.97×`.
pub fn ratio(r: f64) -> String {
    format!("{r:.2}×")
}

/// A difference of two shares in percentage points: `+1.2 pt`, `−0.4 pt`, `0.0 pt`.
pub fn points(delta: Option<f64>) -> String {
    let Some(d) = delta else { return DASH.into() };
    let p = 100.0 * d;
    if format!("{:.1}", p.abs()) == "0.0" {
        "0.0 pt".into()
    } else if p > 0.0 {
        format!("+{p:.1} pt")
    } else {
        format!("−{:.1} pt", -p)
    }
}

/// A rank of the ordered pages, or a rank shared by several rows: `3`, `2–4`.
pub fn rank(span: (usize, usize)) -> String {
    if span.0 == span.1 {
        span.0.to_string()
    } else {
        format!("{}–{}", span.0, span.1)
    }
}

/// A figure with its 95 % interval: `534.0 k (531.2 k–536.9 k)`; the bare figure without one.
pub fn with_interval(value: &str, interval: Option<(String, String)>) -> String {
    match interval {
        Some((lo, hi)) => format!("{value} ({lo}–{hi})"),
        None => value.to_string(),
    }
}

/// A p-value: three significant digits, `<0.001` below.
pub fn p_value(p: f64) -> String {
    if p < 0.001 { "<0.001".into() } else { g3(p) }
}

pub fn cycles_per_byte(v: f64) -> String {
    format!("{v:.1}")
}

pub fn mb_per_second(v: f64) -> String {
    format!("{v:.1}")
}

/// A dudect t statistic: two decimals.
pub fn t_stat(t: f64) -> String {
    format!("{t:.2}")
}

pub fn calls_per_op(v: f64) -> String {
    g3(v)
}

/// Clock in GHz, two decimals: `2.7072` → `2.71`.
pub fn ghz(ghz: f64) -> String {
    format!("{ghz:.2}")
}

pub fn rss_kib(bytes: u64) -> String {
    format!("{} KiB", bytes / 1024)
}

pub fn mib_from_kib(kib: u64) -> String {
    format!("{} MiB", kib / 1024)
}

/// A relative change with its sign, one decimal: `+20.0%`, `−5.0%`, `0.0%`.
pub fn signed_pct(x: f64) -> String {
    let p = 100.0 * x;
    if format!("{:.1}", p.abs()) == "0.0" {
        "0.0%".into()
    } else if p > 0.0 {
        format!("+{p:.1}%")
    } else {
        format!("−{:.1}%", -p)
    }
}

/// A memory figure in whole bytes, exact (the resource tables: `196608`).
pub fn memory_bytes(n: u64) -> String {
    n.to_string()
}

/// `32 B`, `1 KiB`, `64 KiB`; a size that is not a whole number of KiB stays in bytes.
pub fn size_text(n: u64) -> String {
    if n >= 1024 && n.is_multiple_of(1024) {
        format!("{} KiB", n / 1024)
    } else {
        format!("{n} B")
    }
}

/// First 16 hex digits of a digest and an ellipsis.
pub fn digest_prefix(hex: &str) -> String {
    let head: String = hex.chars().take(16).collect();
    format!("{head}…")
}

/// `2026-09-28T15:05:46.790099+00:00` → `2026-09-28T15:05:46`.
pub fn campaign_time(iso: &str) -> String {
    iso.chars().take(19).collect()
}

/// What a page shows instead of a record's figures when it is not a result: `failed`, or
/// `inconsistent` (with the cross-check it failed when `why`).
pub fn not_a_result(rec: &Record, why: bool) -> String {
    if rec.status != RecordStatus::Inconsistent {
        return "failed".into();
    }
    match rec
        .ngcc
        .as_ref()
        .and_then(|x| x.inconsistent_reason.as_ref())
    {
        Some(reason) if why => format!("inconsistent: {reason}"),
        _ => "inconsistent".into(),
    }
}

/// Main cell of a timing record: cycles if measured, else time; `(n=…)` under 100 calls.
pub fn cell(rec: Option<&Record>) -> String {
    let Some(rec) = rec else { return DASH.into() };
    if rec.status != RecordStatus::Complete {
        return not_a_result(rec, false);
    }
    let Some(stats) = rec.stats.as_ref() else {
        return "failed".into();
    };
    let value = cell_value(rec);
    if stats.measurements < 100 {
        format!("{value} (n={})", stats.measurements)
    } else {
        value
    }
}

/// The number behind `cell(rec)`: mean cycles, else mean seconds; `None` when not measured.
pub fn cell_key(rec: Option<&Record>) -> Option<f64> {
    let rec = rec.filter(|r| r.status == RecordStatus::Complete)?;
    let s = rec.stats.as_ref()?;
    s.mean_cycles.or(Some(s.mean_seconds))
}

fn cell_value(rec: &Record) -> String {
    match rec.stats.as_ref() {
        Some(s) if s.mean_cycles.is_some() => fmt_int(s.mean_cycles),
        Some(s) => fmt_time(Some(s.mean_seconds)),
        None => DASH.into(),
    }
}

/// Public-key summary cell: value plus `(share, n=…)` notes.
pub fn pk_cell(rec: Option<&Record>, share: Option<&str>) -> String {
    let base = cell(rec);
    let Some(rec) = rec else { return base };
    let Some(stats) = rec
        .stats
        .as_ref()
        .filter(|_| rec.status == RecordStatus::Complete)
    else {
        return base;
    };
    let mut notes: Vec<String> = share.map(str::to_string).into_iter().collect();
    if stats.measurements < 100 {
        notes.push(format!("n={}", stats.measurements));
    }
    let value = cell_value(rec);
    if notes.is_empty() {
        value
    } else {
        format!("{value} ({})", notes.join(", "))
    }
}

/// Hash summary cell: value plus the ratio to pseudoXOF. `ratio` is `None` when the baseline
/// or the cycles are missing; `show_ratio` is false for sizes without any comparison.
pub fn hash_cell(rec: Option<&Record>, ratio_value: Option<f64>, show_ratio: bool) -> String {
    let base = cell(rec);
    let measured = rec.is_some_and(|r| r.status == RecordStatus::Complete && r.stats.is_some());
    if !show_ratio || !measured {
        return base;
    }
    match ratio_value {
        Some(r) => format!("{base} ({})", ratio(r)),
        None => format!("{base} (ratio {DASH})"),
    }
}

/// An exact count: `2081`, `1 234 567` (thin groups of three, so deltas stay exact).
pub fn exact(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

/// A signed exact difference of two counts: `+4 001`, `−12`, `0`.
pub fn exact_delta(a: u64, b: u64) -> String {
    match b.cmp(&a) {
        std::cmp::Ordering::Greater => format!("+{}", exact(b - a)),
        std::cmp::Ordering::Less => format!("−{}", exact(a - b)),
        std::cmp::Ordering::Equal => "0".into(),
    }
}

/// A signed relative change in percent with two decimals: `+192.27 %`, `−0.05 %`, `0.00 %`.
pub fn change_percent(pct: f64) -> String {
    if pct > 0.0 {
        format!("+{pct:.2} %")
    } else if pct < 0.0 {
        format!("−{:.2} %", -pct)
    } else {
        "0.00 %".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::schema::{Record, RecordStats};

    #[test]
    fn g_matches_python_examples() {
        for (x, want) in [
            (18896.875, "1.89e+04"),
            (5000.0, "5e+03"),
            (875.2, "875"),
            (3.3011, "3.3"),
            (0.00025884, "0.000259"),
            (1e-05, "1e-05"),
            (99950.0, "1e+05"),
            (0.99951 * 1e3, "1e+03"),
            (7.7, "7.7"),
            (24.0, "24"),
            (0.374, "0.374"),
            (0.0654, "0.0654"),
            (5048.7, "5.05e+03"),
            (1.0, "1"),
            (0.0, "0"),
            (123456789.0, "1.23e+08"),
            (1e100, "1e+100"),
            (-0.5, "-0.5"),
            (-1234.0, "-1.23e+03"),
            (999.5, "1e+03"),
            (0.0001, "0.0001"),
            (0.00009999, "9.999e-05"),
        ] {
            let got = if want == "9.999e-05" {
                fmt_g(x, 4)
            } else {
                g3(x)
            };
            assert_eq!(got, want, "{x}");
        }
    }

    #[test]
    fn g_rounds_half_even_on_exact_ties() {
        // 1.125 and 0.125 are exact binary values: ties go to the even digit.
        assert_eq!(g3(1.125), "1.12");
        assert_eq!(g3(1.375), "1.38");
        assert_eq!(fmt_g(0.125, 2), "0.12");
        assert_eq!(fmt_g(2.5, 1), "2");
        // 2.675 is really 2.67499999…, so it rounds down.
        assert_eq!(g3(2.675), "2.67");
    }

    #[test]
    fn fixed_rounding_is_half_even() {
        assert_eq!(format!("{:.0}", 0.5), "0");
        assert_eq!(format!("{:.0}", 2.5), "2");
        assert_eq!(format!("{:.2}", 0.125), "0.12");
    }

    #[test]
    fn fmt_int_examples_and_quirks() {
        for (x, want) in [
            (142620.44, "142.6 k"),
            (7.89e6, "7.89 M"),
            (816329094.8, "816.33 M"),
            (1427.06, "1427"),
            (1.0404843843384e13, "10404.84 G"),
            (9999.6, "10000"),
            (999999.9, "1000.0 k"),
            (533996.89, "534.0 k"),
            (66635561958.333336, "66.64 G"),
            (1e9, "1.00 G"),
            (1e6, "1.00 M"),
            (1e4, "10.0 k"),
            (0.4, "0"),
        ] {
            assert_eq!(fmt_int(Some(x)), want, "{x}");
        }
        assert_eq!(fmt_int(None), "–");
    }

    #[test]
    fn fmt_time_examples_and_quirks() {
        for (s, want) in [
            (5.2919e-05, "52.9 µs"),
            (0.3029, "303 ms"),
            (0.002, "2 ms"),
            (5.3159e-07, "532 ns"),
            (3863.385, "3.86e+03 s"),
            (0.99951, "1e+03 ms"),
            (1.2e-10, "0.12 ns"),
            (24.7454283448, "24.7 s"),
            (1.0, "1 s"),
        ] {
            assert_eq!(fmt_time(Some(s)), want, "{s}");
        }
        assert_eq!(fmt_time(None), "–");
    }

    #[test]
    fn pct_examples() {
        for (x, want) in [
            (0.71806, "72%"),
            (0.013342, "1.3%"),
            (0.0, "0.0%"),
            (0.0949, "9.5%"),
            (0.095, "10%"),
            (0.19372346335878587, "19%"),
            (1.0, "100%"),
        ] {
            assert_eq!(pct(Some(x)), want, "{x}");
        }
        assert_eq!(pct(None), "–");
    }

    #[test]
    fn small_formats() {
        assert_eq!(ops_per_second(18896.875), "1.89e+04");
        assert_eq!(ops_per_second(0.040411504948150954), "0.0404");
        assert_eq!(ratio(4.9749), "4.97×");
        assert_eq!(ratio(18.0251), "18.03×");
        assert_eq!(cycles_per_byte(19.84), "19.8");
        assert_eq!(mb_per_second(0.0), "0.0");
        assert_eq!(mb_per_second(136.25), "136.2");
        assert_eq!(calls_per_op(1930.0), "1.93e+03");
        assert_eq!(calls_per_op(3.411), "3.41");
        assert_eq!(calls_per_op(4.0), "4");
        assert_eq!(ghz(2707200.0 / 1e6), "2.71");
        assert_eq!(ghz(2.1), "2.10");
        assert_eq!(rss_kib(1470464), "1436 KiB");
        assert_eq!(rss_kib(1023), "0 KiB");
        assert_eq!(mib_from_kib(31295756), "30562 MiB");
        assert_eq!(size_text(32), "32 B");
        assert_eq!(size_text(1024), "1 KiB");
        assert_eq!(size_text(65536), "64 KiB");
        assert_eq!(size_text(1536), "1536 B");
        assert_eq!(size_text(0), "0 B");
        assert_eq!(
            digest_prefix("88c74f0596728d5c6e3c5066182b80087dc59ed647d7687fcb139c9a7c20c312"),
            "88c74f0596728d5c…"
        );
        assert_eq!(
            campaign_time("2026-09-28T15:05:46.790099+00:00"),
            "2026-09-28T15:05:46"
        );
    }

    fn record(status: RecordStatus, n: u64, cycles: Option<f64>, seconds: f64) -> Record {
        Record {
            status,
            stats: Some(RecordStats {
                measurements: n,
                mean_cycles: cycles,
                mean_seconds: seconds,
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn cell_composition() {
        assert_eq!(cell(None), "–");
        assert_eq!(
            cell(Some(&record(RecordStatus::FailedOrPartial, 5, None, 1.0))),
            "failed"
        );
        assert_eq!(
            cell(Some(&record(
                RecordStatus::Complete,
                47015,
                Some(142620.44),
                5.29e-5
            ))),
            "142.6 k"
        );
        assert_eq!(
            cell(Some(&record(
                RecordStatus::Complete,
                20,
                Some(4.12e10),
                15.3
            ))),
            "41.20 G (n=20)"
        );
        assert_eq!(
            cell(Some(&record(RecordStatus::Complete, 500, None, 0.3029))),
            "303 ms"
        );
    }

    #[test]
    fn pk_cell_composition() {
        let r = record(RecordStatus::Complete, 100, Some(3.27e9), 1.0);
        assert_eq!(pk_cell(Some(&r), Some("99%")), "3.27 G (99%)");
        let r = record(RecordStatus::Complete, 35, Some(48.2e9), 1.0);
        assert_eq!(pk_cell(Some(&r), Some("99%")), "48.20 G (99%, n=35)");
        assert_eq!(pk_cell(Some(&r), None), "48.20 G (n=35)");
        let r = record(RecordStatus::Complete, 1000, Some(12.0e3), 1.0);
        assert_eq!(pk_cell(Some(&r), Some("0.0%")), "12.0 k (0.0%)");
        assert_eq!(pk_cell(Some(&r), None), "12.0 k");
        assert_eq!(pk_cell(None, Some("1%")), "–");
        let r = record(RecordStatus::FailedOrPartial, 1, None, 1.0);
        assert_eq!(pk_cell(Some(&r), Some("1%")), "failed");
    }

    #[test]
    fn hash_cell_composition() {
        let r = record(RecordStatus::Complete, 1000, Some(14.0e3), 1.0);
        assert_eq!(hash_cell(Some(&r), Some(4.97), true), "14.0 k (4.97×)");
        assert_eq!(hash_cell(Some(&r), None, true), "14.0 k (ratio –)");
        assert_eq!(hash_cell(Some(&r), None, false), "14.0 k");
        assert_eq!(hash_cell(None, None, true), "–");
        let failed = record(RecordStatus::FailedOrPartial, 1, None, 1.0);
        assert_eq!(hash_cell(Some(&failed), None, true), "failed");
    }
}
