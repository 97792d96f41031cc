//! SVG charts drawn by hand: log-scale bars, a log-log scatter, stacked share bars and a
//! ratio plot with confidence whiskers. Every chart carries a `<title>` and an `aria-label`,
//! and every mark a `<title>` tooltip with its number as the tables print it.

use super::html::esc;
use crate::report::format;
use std::fmt::Write as _;

/// Okabe–Ito colours (distinguishable with the common colour-vision deficiencies), then a
/// few extra hues for long candidate lists.
pub const PALETTE: [&str; 12] = [
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000",
    "#7F7F7F", "#8C564B", "#17BECF", "#BCBD22",
];
const HASH_COLOUR: &str = "#0072B2";
const DRNG_COLOUR: &str = "#E69F00";
const OTHER_COLOUR: &str = "#D9D9D9";

const WIDTH: f64 = 820.0;

/// A logarithmic axis over `[lo, hi]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LogAxis {
    pub lo: f64,
    pub hi: f64,
}

fn pow10(e: i32) -> f64 {
    // Parsing gives the double nearest to 10^e; `powi` can be an ulp off for negative e.
    format!("1e{e}").parse().unwrap_or(f64::NAN)
}

impl LogAxis {
    /// Whole decades around `[min, max]`, with room on both sides (a value that is itself a
    /// power of ten is not put on the edge, so every bar has a visible length).
    pub fn covering(min: f64, max: f64) -> Option<LogAxis> {
        if !(min > 0.0 && max >= min && max.is_finite()) {
            return None;
        }
        let lo = (min.log10() - 1e-9).floor() as i32;
        let hi = ((max.log10() + 1e-9).ceil() as i32).max(lo + 1);
        Some(LogAxis {
            lo: pow10(lo),
            hi: pow10(hi),
        })
    }

    /// Position of `v` as a fraction of the axis length, clamped to `[0, 1]`.
    pub fn frac(&self, v: f64) -> f64 {
        if v.is_nan() || v <= 0.0 {
            return 0.0;
        }
        ((v.ln() - self.lo.ln()) / (self.hi.ln() - self.lo.ln())).clamp(0.0, 1.0)
    }

    /// Tick values: each decade; with two decades or fewer also 2× and 5×; with many decades
    /// every second or third one so labels do not collide.
    pub fn ticks(&self) -> Vec<f64> {
        let lo = self.lo.log10().round() as i32;
        let hi = self.hi.log10().round() as i32;
        let decades = hi - lo;
        let step = ((decades + 7) / 8).max(1);
        let mut out = Vec::new();
        let mut e = lo;
        while e <= hi {
            out.push(pow10(e));
            if decades <= 2 && e < hi {
                out.push(2.0 * pow10(e));
                out.push(5.0 * pow10(e));
            }
            e += step;
        }
        out.retain(|t| *t >= self.lo * (1.0 - 1e-12) && *t <= self.hi * (1.0 + 1e-12));
        out
    }
}

fn colour(series: &str, order: &mut Vec<String>) -> &'static str {
    let i = match order.iter().position(|s| s == series) {
        Some(i) => i,
        None => {
            order.push(series.to_string());
            order.len() - 1
        }
    };
    PALETTE[i % PALETTE.len()]
}

fn svg_open(out: &mut String, title: &str, height: f64) {
    let _ = write!(
        out,
        "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" \
         aria-label=\"{t}\" viewBox=\"0 0 {WIDTH} {height:.0}\" width=\"{WIDTH}\" \
         height=\"{height:.0}\"><title>{t}</title>\n\
         <text class=\"chart-title\" x=\"8\" y=\"18\">{t}</text>\n",
        t = esc(title)
    );
}

/// Legend swatches from baseline `y`, wrapping onto new rows; returns the SVG and the last
/// row's baseline.
fn legend(items: &[(String, &str)], y: f64) -> (String, f64) {
    let mut out = String::new();
    let (mut x, mut y) = (8.0, y);
    for (name, fill) in items {
        let w = 24.0 + 6.5 * name.chars().count() as f64;
        if x > 8.0 && x + w > WIDTH - 8.0 {
            x = 8.0;
            y += LEGEND_ROW;
        }
        let _ = writeln!(
            out,
            "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"10\" height=\"10\" fill=\"{fill}\"/>\
             <text class=\"legend\" x=\"{:.1}\" y=\"{:.1}\">{}</text>",
            y - 9.0,
            x + 14.0,
            y,
            esc(name)
        );
        x += w;
    }
    (out, y)
}

const LEGEND_ROW: f64 = 16.0;
/// Baseline of the first legend row, under the title.
const LEGEND_Y: f64 = 38.0;

/// One bar: a label (the instance), its series (the operation) and a value.
#[derive(Clone, Debug, PartialEq)]
pub struct Bar {
    pub label: String,
    pub series: String,
    pub value: f64,
    /// The value as the tables print it (`534.0 k`).
    pub value_text: String,
}

pub struct BarChart<'a> {
    pub title: &'a str,
    pub axis: &'a str,
    pub bars: &'a [Bar],
    pub tick_text: &'a dyn Fn(f64) -> String,
}

const BAR_LEFT: f64 = 210.0;
const BAR_RIGHT: f64 = WIDTH - 90.0;
const ROW: f64 = 20.0;

/// Horizontal bars on a log axis. `None` when no bar has a positive value.
pub fn log_bars(c: &BarChart) -> Option<String> {
    let bars: Vec<&Bar> = c
        .bars
        .iter()
        .filter(|b| b.value > 0.0 && b.value.is_finite())
        .collect();
    let min = bars.iter().map(|b| b.value).fold(f64::INFINITY, f64::min);
    let max = bars.iter().map(|b| b.value).fold(0.0, f64::max);
    let axis = LogAxis::covering(min, max)?;
    let mut order = Vec::new();
    let mut items: Vec<(String, &str)> = Vec::new();
    for b in &bars {
        if !order.contains(&b.series) {
            let fill = colour(&b.series, &mut order);
            items.push((b.series.clone(), fill));
        }
    }
    let (legend_svg, legend_end) = legend(&items, LEGEND_Y);
    let top = legend_end + 12.0;
    let plot_h = ROW * bars.len() as f64;
    let height = top + plot_h + 48.0;
    let mut out = String::new();
    svg_open(&mut out, c.title, height);
    out.push_str(&legend_svg);
    grid(&mut out, &axis, top, top + plot_h, c.tick_text);
    // Separators only help when a label has several bars.
    let grouped = bars.windows(2).any(|w| w[0].label == w[1].label);
    let mut last_label: Option<&str> = None;
    for (i, b) in bars.iter().enumerate() {
        let y = top + ROW * i as f64;
        if last_label != Some(b.label.as_str()) {
            if last_label.is_some() && grouped {
                let _ = writeln!(
                    out,
                    "<line class=\"sep\" x1=\"8\" x2=\"{BAR_RIGHT}\" y1=\"{y:.1}\" y2=\"{y:.1}\"/>"
                );
            }
            let _ = writeln!(
                out,
                "<text class=\"label\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                BAR_LEFT - 8.0,
                y + 14.0,
                esc(&b.label)
            );
            last_label = Some(&b.label);
        }
        let w = bar_length(&axis, b.value);
        let fill = colour(&b.series, &mut order);
        let tip = format!("{} {}: {}", b.label, b.series, b.value_text);
        let _ = writeln!(
            out,
            "<rect x=\"{BAR_LEFT}\" y=\"{:.1}\" width=\"{w:.2}\" height=\"14\" fill=\"{fill}\">\
             <title>{}</title></rect><text class=\"value\" x=\"{:.1}\" y=\"{:.1}\">{}</text>",
            y + 3.0,
            esc(&tip),
            BAR_LEFT + w + 4.0,
            y + 14.0,
            esc(&b.value_text)
        );
    }
    axis_title(&mut out, c.axis, (BAR_LEFT + BAR_RIGHT) / 2.0, height - 8.0);
    out.push_str("</svg>\n");
    Some(out)
}

/// Pixel length of a bar for `value` on `axis` (never zero, so tiny values stay visible).
pub fn bar_length(axis: &LogAxis, value: f64) -> f64 {
    (axis.frac(value) * (BAR_RIGHT - BAR_LEFT)).max(1.0)
}

fn grid(out: &mut String, axis: &LogAxis, y0: f64, y1: f64, text: &dyn Fn(f64) -> String) {
    for t in axis.ticks() {
        let x = BAR_LEFT + axis.frac(t) * (BAR_RIGHT - BAR_LEFT);
        let _ = writeln!(
            out,
            "<line class=\"grid\" x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{y0:.1}\" y2=\"{y1:.1}\"/>\
             <text class=\"tick\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            y1 + 14.0,
            esc(&text(t))
        );
    }
}

fn axis_title(out: &mut String, text: &str, x: f64, y: f64) {
    let _ = writeln!(
        out,
        "<text class=\"axis\" x=\"{x:.1}\" y=\"{y:.1}\" text-anchor=\"middle\">{}</text>",
        esc(text)
    );
}

/// One point of a scatter plot.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub label: String,
    pub series: String,
    pub x: f64,
    pub y: f64,
    /// Tooltip: both values as the tables print them.
    pub text: String,
}

pub struct Scatter<'a> {
    pub title: &'a str,
    pub x_axis: &'a str,
    pub y_axis: &'a str,
    pub points: &'a [Point],
    pub x_tick: &'a dyn Fn(f64) -> String,
    pub y_tick: &'a dyn Fn(f64) -> String,
}

/// Log–log scatter; points are labelled when there are few of them. `None` without points.
pub fn log_scatter(c: &Scatter) -> Option<String> {
    let pts: Vec<&Point> = c
        .points
        .iter()
        .filter(|p| p.x > 0.0 && p.y > 0.0 && p.x.is_finite() && p.y.is_finite())
        .collect();
    let fold = |f: fn(&Point) -> f64| {
        let min = pts.iter().map(|p| f(p)).fold(f64::INFINITY, f64::min);
        let max = pts.iter().map(|p| f(p)).fold(0.0, f64::max);
        LogAxis::covering(min, max)
    };
    let xa = fold(|p| p.x)?;
    let ya = fold(|p| p.y)?;
    let mut order = Vec::new();
    let mut items: Vec<(String, &str)> = Vec::new();
    for p in &pts {
        if !order.contains(&p.series) {
            let fill = colour(&p.series, &mut order);
            items.push((p.series.clone(), fill));
        }
    }
    let (legend_svg, legend_end) = legend(&items, LEGEND_Y);
    // The y-axis title sits in its own row between the legend and the plot: rotated beside
    // the plot, a long title ran over the legend.
    let y_title = legend_end + 22.0;
    let y0 = y_title + 14.0;
    let (x0, x1, y1) = (90.0, WIDTH - 40.0, y0 + 414.0);
    let height = y1 + 50.0;
    let mut out = String::new();
    svg_open(&mut out, c.title, height);
    out.push_str(&legend_svg);
    for t in xa.ticks() {
        let x = x0 + xa.frac(t) * (x1 - x0);
        let _ = writeln!(
            out,
            "<line class=\"grid\" x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{y0}\" y2=\"{y1}\"/>\
             <text class=\"tick\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            y1 + 14.0,
            esc(&(c.x_tick)(t))
        );
    }
    for t in ya.ticks() {
        let y = y1 - ya.frac(t) * (y1 - y0);
        let _ = writeln!(
            out,
            "<line class=\"grid\" x1=\"{x0}\" x2=\"{x1}\" y1=\"{y:.1}\" y2=\"{y:.1}\"/>\
             <text class=\"tick\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            x0 - 4.0,
            y + 4.0,
            esc(&(c.y_tick)(t))
        );
    }
    let label_points = pts.len() <= 12;
    for p in &pts {
        let (cx, cy) = point_position(&xa, &ya, p, (x0, x1, y0, y1));
        let fill = colour(&p.series, &mut order);
        let _ = writeln!(
            out,
            "<circle cx=\"{cx:.1}\" cy=\"{cy:.1}\" r=\"5\" fill=\"{fill}\"><title>{}</title></circle>",
            esc(&p.text)
        );
        if label_points {
            let _ = writeln!(
                out,
                "<text class=\"label\" x=\"{:.1}\" y=\"{:.1}\">{}</text>",
                cx + 7.0,
                cy - 6.0,
                esc(&p.label)
            );
        }
    }
    axis_title(&mut out, c.x_axis, (x0 + x1) / 2.0, height - 12.0);
    let _ = writeln!(
        out,
        "<text class=\"axis\" x=\"8\" y=\"{y_title:.1}\">↑ {}</text>",
        esc(c.y_axis)
    );
    out.push_str("</svg>\n");
    Some(out)
}

/// Pixel position of a point in the plot rectangle `(x0, x1, y0, y1)` (y grows downwards).
pub fn point_position(
    xa: &LogAxis,
    ya: &LogAxis,
    p: &Point,
    r: (f64, f64, f64, f64),
) -> (f64, f64) {
    let (x0, x1, y0, y1) = r;
    (x0 + xa.frac(p.x) * (x1 - x0), y1 - ya.frac(p.y) * (y1 - y0))
}

/// Shares of one operation: hash helpers and DRNG (fractions of the operation's time).
#[derive(Clone, Debug, PartialEq)]
pub struct ShareRow {
    pub label: String,
    pub hash: f64,
    pub drng: f64,
}

/// Widths of the hash, DRNG and other segments of a 100 % bar of `width` pixels.
pub fn share_segments(row: &ShareRow, width: f64) -> [f64; 3] {
    let hash = row.hash.clamp(0.0, 1.0);
    let drng = row.drng.clamp(0.0, 1.0 - hash);
    let other = 1.0 - hash - drng;
    [hash * width, drng * width, other * width]
}

/// Stacked 100 % bars: ICCS hash helpers, ICCS DRNG, everything else.
pub fn share_bars(title: &str, rows: &[ShareRow]) -> Option<String> {
    if rows.is_empty() {
        return None;
    }
    let names = ["pseudohash/XOF/sm3", "DRNG", "other (candidate's own code)"];
    let fills = [HASH_COLOUR, DRNG_COLOUR, OTHER_COLOUR];
    let items: Vec<(String, &str)> = names
        .iter()
        .zip(fills)
        .map(|(n, f)| (n.to_string(), f))
        .collect();
    let (legend_svg, legend_end) = legend(&items, LEGEND_Y);
    let top = legend_end + 12.0;
    let height = top + ROW * rows.len() as f64 + 48.0;
    let width = BAR_RIGHT - BAR_LEFT;
    let mut out = String::new();
    svg_open(&mut out, title, height);
    out.push_str(&legend_svg);
    let y_end = top + ROW * rows.len() as f64;
    for t in [0.0, 0.25, 0.5, 0.75, 1.0] {
        let x = BAR_LEFT + t * width;
        let _ = writeln!(
            out,
            "<line class=\"grid\" x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{top}\" y2=\"{y_end:.1}\"/>\
             <text class=\"tick\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            y_end + 14.0,
            esc(&format::pct(Some(t)))
        );
    }
    for (i, r) in rows.iter().enumerate() {
        let y = top + ROW * i as f64;
        let _ = writeln!(
            out,
            "<text class=\"label\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            BAR_LEFT - 8.0,
            y + 14.0,
            esc(&r.label)
        );
        let seg = share_segments(r, width);
        let values = [
            r.hash.clamp(0.0, 1.0),
            r.drng.clamp(0.0, 1.0),
            seg[2] / width,
        ];
        let mut x = BAR_LEFT;
        for k in 0..3 {
            let tip = format!("{}: {} {}", r.label, names[k], format::pct(Some(values[k])));
            let _ = writeln!(
                out,
                "<rect x=\"{x:.2}\" y=\"{:.1}\" width=\"{:.2}\" height=\"14\" fill=\"{}\">\
                 <title>{}</title></rect>",
                y + 3.0,
                seg[k],
                fills[k],
                esc(&tip)
            );
            x += seg[k];
        }
    }
    axis_title(
        &mut out,
        "share of the operation's time (link-time wrappers, same run)",
        (BAR_LEFT + BAR_RIGHT) / 2.0,
        height - 8.0,
    );
    out.push_str("</svg>\n");
    Some(out)
}

/// One compared instance/operation.
#[derive(Clone, Debug, PartialEq)]
pub struct RatioRow {
    pub label: String,
    pub ratio: f64,
    pub ci: Option<(f64, f64)>,
    pub changed: bool,
    pub text: String,
}

/// A log axis around 1 that holds every ratio and interval end, symmetric so that "2× slower"
/// and "2× faster" are equally far from 1.
pub fn ratio_axis(rows: &[RatioRow]) -> LogAxis {
    let mut m: f64 = 1.1;
    for r in rows {
        let mut vals = vec![r.ratio];
        if let Some((lo, hi)) = r.ci {
            vals.extend([lo, hi]);
        }
        for v in vals.into_iter().filter(|v| *v > 0.0 && v.is_finite()) {
            m = m.max(v * 1.05).max(1.05 / v);
        }
    }
    LogAxis { lo: 1.0 / m, hi: m }
}

/// Ratios B/A as dots with 95 % whiskers on a log axis; changed rows are drawn in colour.
pub fn ratio_chart(title: &str, axis_text: &str, rows: &[RatioRow]) -> Option<String> {
    let rows: Vec<&RatioRow> = rows
        .iter()
        .filter(|r| r.ratio > 0.0 && r.ratio.is_finite())
        .collect();
    if rows.is_empty() {
        return None;
    }
    let owned: Vec<RatioRow> = rows.iter().map(|r| (*r).clone()).collect();
    let axis = ratio_axis(&owned);
    let (legend_svg, legend_end) = legend(
        &[
            ("B slower (changed)".to_string(), "#D55E00"),
            ("B faster (changed)".to_string(), "#009E73"),
            ("within noise".to_string(), "#7F7F7F"),
        ],
        LEGEND_Y,
    );
    let top = legend_end + 12.0;
    let y_end = top + ROW * rows.len() as f64;
    let height = y_end + 48.0;
    let width = BAR_RIGHT - BAR_LEFT;
    let px = |v: f64| BAR_LEFT + axis.frac(v) * width;
    let mut out = String::new();
    svg_open(&mut out, title, height);
    out.push_str(&legend_svg);
    let candidates = [
        0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 0.8, 0.9, 1.0, 1.1, 1.25, 2.0, 5.0, 10.0, 20.0, 50.0,
        100.0,
    ];
    for t in candidates
        .iter()
        .filter(|t| **t >= axis.lo && **t <= axis.hi)
    {
        let x = px(*t);
        let class = if *t == 1.0 { "one" } else { "grid" };
        let _ = writeln!(
            out,
            "<line class=\"{class}\" x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{top}\" y2=\"{y_end:.1}\"/>\
             <text class=\"tick\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            y_end + 14.0,
            esc(&format::ratio(*t))
        );
    }
    for (i, r) in rows.iter().enumerate() {
        let y = top + ROW * i as f64 + 10.0;
        let fill = match (r.changed, r.ratio > 1.0) {
            (true, true) => "#D55E00",
            (true, false) => "#009E73",
            _ => "#7F7F7F",
        };
        let _ = writeln!(
            out,
            "<text class=\"label\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            BAR_LEFT - 8.0,
            y + 4.0,
            esc(&r.label)
        );
        if let Some((lo, hi)) = r.ci {
            let _ = writeln!(
                out,
                "<line class=\"whisker\" x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"{fill}\"/>",
                px(lo),
                px(hi)
            );
        }
        let _ = writeln!(
            out,
            "<circle cx=\"{:.1}\" cy=\"{y:.1}\" r=\"5\" fill=\"{fill}\"><title>{}</title></circle>",
            px(r.ratio),
            esc(&r.text)
        );
    }
    axis_title(
        &mut out,
        axis_text,
        (BAR_LEFT + BAR_RIGHT) / 2.0,
        height - 8.0,
    );
    out.push_str("</svg>\n");
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_axis_covers_whole_decades_with_room() {
        let a = LogAxis::covering(534e3, 66.64e9).unwrap();
        assert_eq!((a.lo, a.hi), (1e5, 1e11));
        // A power of ten is not put on the edge.
        let b = LogAxis::covering(1000.0, 1000.0).unwrap();
        assert_eq!((b.lo, b.hi), (100.0, 10000.0));
        assert!(b.frac(1000.0) > 0.0 && b.frac(1000.0) < 1.0);
        assert_eq!(LogAxis::covering(0.0, 5.0), None);
        assert_eq!(LogAxis::covering(5.0, f64::INFINITY), None);
        assert_eq!(LogAxis::covering(5.0, 1.0), None);
        let t = LogAxis::covering(198e-6, 24.7).unwrap();
        assert_eq!((t.lo, t.hi), (1e-4, 1e2));
    }

    #[test]
    fn log_ticks() {
        let a = LogAxis { lo: 1e5, hi: 1e11 };
        assert_eq!(a.ticks(), [1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11]);
        let narrow = LogAxis {
            lo: 100.0,
            hi: 10000.0,
        };
        assert_eq!(
            narrow.ticks(),
            [100.0, 200.0, 500.0, 1000.0, 2000.0, 5000.0, 10000.0]
        );
        // Sixteen decades: every second one, still including both ends.
        let wide = LogAxis { lo: 1e-6, hi: 1e10 };
        let t = wide.ticks();
        assert_eq!(t.len(), 9);
        assert_eq!((t[0], t[8]), (1e-6, 1e10));
        // Ticks sit at their decade fractions.
        assert!((a.frac(1e8) - 0.5).abs() < 1e-12);
        assert_eq!(a.frac(1e3), 0.0);
        assert_eq!(a.frac(1e13), 1.0);
        assert_eq!(a.frac(-1.0), 0.0);
    }

    #[test]
    fn bar_length_is_monotone_in_value() {
        let axis = LogAxis::covering(10.0, 1e10).unwrap();
        let mut last = 0.0;
        let mut v = 10.0;
        while v <= 1e10 {
            let w = bar_length(&axis, v);
            assert!(w > last, "{v}: {w} <= {last}");
            assert!(w <= BAR_RIGHT - BAR_LEFT);
            last = w;
            v *= 1.7;
        }
        // Ten times the value is always the same step on a log axis.
        let d1 = bar_length(&axis, 1e4) - bar_length(&axis, 1e3);
        let d2 = bar_length(&axis, 1e8) - bar_length(&axis, 1e7);
        assert!((d1 - d2).abs() < 1e-9);
    }

    fn bar(label: &str, series: &str, value: f64) -> Bar {
        Bar {
            label: label.into(),
            series: series.into(),
            value,
            value_text: format::fmt_int(Some(value)),
        }
    }

    #[test]
    fn bar_chart_draws_every_positive_bar_with_a_tooltip() {
        let bars = [
            bar("UVW-KEM-128", "keygen", 677.81e6),
            bar("UVW-KEM-128", "enc", 534.0e3),
            bar("UVW-KEM-256", "enc", 0.0),
        ];
        let svg = log_bars(&BarChart {
            title: "mean cycles <per op>",
            axis: "cycles",
            bars: &bars,
            tick_text: &|v| format::fmt_int(Some(v)),
        })
        .unwrap();
        assert!(svg.starts_with("<svg class=\"chart\""));
        assert!(svg.contains("aria-label=\"mean cycles &lt;per op&gt;\""));
        assert!(svg.contains("<title>mean cycles &lt;per op&gt;</title>"));
        assert_eq!(svg.matches("<rect x=\"210\"").count(), 2, "{svg}");
        assert!(svg.contains("<title>UVW-KEM-128 enc: 534.0 k</title>"));
        assert!(svg.contains("<title>UVW-KEM-128 keygen: 677.81 M</title>"));
        // Widths in the SVG follow the values.
        let widths: Vec<f64> = svg
            .split("<rect x=\"210\"")
            .skip(1)
            .map(|s| {
                let w = s.split("width=\"").nth(1).unwrap();
                w[..w.find('"').unwrap()].parse().unwrap()
            })
            .collect();
        assert!(widths[0] > widths[1]);
        assert!(
            log_bars(&BarChart {
                title: "t",
                axis: "a",
                bars: &[bar("x", "y", 0.0)],
                tick_text: &|v| v.to_string()
            })
            .is_none()
        );
    }

    #[test]
    fn the_y_axis_title_has_its_own_row_under_the_legend() {
        let points: Vec<Point> = (0..12)
            .map(|i| Point {
                label: format!("p{i}"),
                series: format!("a long series name {i}"),
                x: 10f64.powi(i + 1),
                y: 10f64.powi(i + 2),
                text: String::new(),
            })
            .collect();
        let svg = log_scatter(&Scatter {
            title: "t",
            x_axis: "x",
            y_axis: "mean cycles per call, a long axis title that once ran over the legend",
            points: &points,
            x_tick: &|v| format!("{v}"),
            y_tick: &|v| format!("{v}"),
        })
        .unwrap();
        let y_of = |line: &str| -> f64 {
            let rest = &line[line.rfind(" y=\"").unwrap() + 4..];
            rest[..rest.find('"').unwrap()].parse().unwrap()
        };
        let last_legend = svg
            .lines()
            .filter(|l| l.contains("class=\"legend\""))
            .map(y_of)
            .fold(0.0, f64::max);
        let title = svg.lines().find(|l| l.contains("long axis title")).unwrap();
        assert!(!title.contains("rotate"), "{title}");
        let first_grid = svg
            .lines()
            .filter(|l| l.contains("class=\"grid\"") && l.contains("x1=\"90\""))
            .map(|l| {
                let rest = &l[l.find(" y1=\"").unwrap() + 5..];
                rest[..rest.find('"').unwrap()].parse::<f64>().unwrap()
            })
            .fold(f64::INFINITY, f64::min);
        assert!(y_of(title) > last_legend + 12.0, "{svg}");
        assert!(y_of(title) < first_grid, "{svg}");
    }

    #[test]
    fn scatter_positions_follow_log_values() {
        let xa = LogAxis { lo: 1e2, hi: 1e6 };
        let ya = LogAxis { lo: 1e3, hi: 1e9 };
        let p = |x: f64, y: f64| Point {
            label: "p".into(),
            series: "s".into(),
            x,
            y,
            text: String::new(),
        };
        let r = (100.0, 500.0, 50.0, 350.0);
        let (mx, my) = point_position(&xa, &ya, &p(1e4, 1e6), r);
        assert!(
            (mx - 300.0).abs() < 1e-9 && (my - 200.0).abs() < 1e-9,
            "{mx} {my}"
        );
        let (ax, ay) = point_position(&xa, &ya, &p(1e3, 1e4), r);
        let (bx, by) = point_position(&xa, &ya, &p(1e5, 1e8), r);
        assert!(bx > ax && by < ay, "bigger and slower is right and up");
        let svg = log_scatter(&Scatter {
            title: "size against speed",
            x_axis: "bytes",
            y_axis: "cycles",
            points: &[p(1e3, 1e4), p(2e5, 3e7)],
            x_tick: &|v| format::fmt_int(Some(v)),
            y_tick: &|v| format::fmt_int(Some(v)),
        })
        .unwrap();
        assert_eq!(svg.matches("<circle").count(), 2);
    }

    #[test]
    fn long_legends_wrap_inside_the_chart() {
        let items: Vec<(String, &str)> =
            (1..=40).map(|i| (format!("kem-{i}"), PALETTE[0])).collect();
        let (svg, last) = legend(&items, LEGEND_Y);
        assert!(last > LEGEND_Y + LEGEND_ROW, "40 names need several rows");
        for x in svg.split("<text class=\"legend\" x=\"").skip(1) {
            let x: f64 = x[..x.find('"').unwrap()].parse().unwrap();
            assert!(
                x + 6.5 * 6.0 <= WIDTH,
                "legend text at {x} runs off the chart"
            );
        }
        let (_, one) = legend(&items[..3], LEGEND_Y);
        assert_eq!(one, LEGEND_Y);
    }

    #[test]
    fn share_segments_fill_the_bar() {
        let r = ShareRow {
            label: "x".into(),
            hash: 0.25,
            drng: 0.35,
        };
        let [h, d, o] = share_segments(&r, 400.0);
        assert!((h - 100.0).abs() < 1e-9 && (d - 140.0).abs() < 1e-9 && (o - 160.0).abs() < 1e-9);
        // Shares that add to more than one (rounding in the data) never overflow the bar.
        let over = ShareRow {
            label: "x".into(),
            hash: 0.8,
            drng: 0.5,
        };
        let s = share_segments(&over, 100.0);
        assert!((s.iter().sum::<f64>() - 100.0).abs() < 1e-9 && s.iter().all(|w| *w >= 0.0));
        let svg = share_bars("shares", &[r]).unwrap();
        assert!(svg.contains("<title>x: pseudohash/XOF/sm3 25%</title>"));
        assert!(svg.contains("<title>x: DRNG 35%</title>"));
        assert!(svg.contains("<title>x: other (candidate&#39;s own code) 40%</title>"));
        assert!(share_bars("s", &[]).is_none());
    }

    #[test]
    fn ratio_axis_is_symmetric_and_holds_every_interval() {
        let rows = [RatioRow {
            label: "a".into(),
            ratio: 1.5,
            ci: Some((1.2, 1.9)),
            changed: true,
            text: "t".into(),
        }];
        let a = ratio_axis(&rows);
        assert!((a.lo * a.hi - 1.0).abs() < 1e-12);
        assert!(a.hi >= 1.9 && (a.frac(1.0) - 0.5).abs() < 1e-12);
        let svg = ratio_chart("r", "B/A", &rows).unwrap();
        assert!(svg.contains("#D55E00") && svg.contains("class=\"one\""));
    }
}
