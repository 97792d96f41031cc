//! UTC timestamps in the reference format (`2026-09-28T19:58:14.881798+00:00`).

use std::time::{SystemTime, UNIX_EPOCH};

pub fn utc_now_iso() -> String {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    iso_from_unix(d.as_secs() as i64, d.subsec_micros())
}

/// Civil date from days since 1970-01-01 (proleptic Gregorian).
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

pub fn iso_from_unix(secs: i64, micros: u32) -> String {
    let (y, m, d) = civil(secs.div_euclid(86_400));
    let rem = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{micros:06}+00:00",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn known_instants() {
        assert_eq!(
            super::iso_from_unix(0, 0),
            "1970-01-01T00:00:00.000000+00:00"
        );
        // 2026-09-28T15:05:46.790099 UTC (campaign start of the reference arm_1 dataset)
        assert_eq!(
            super::iso_from_unix(1_790_607_946, 790_099),
            "2026-09-28T15:05:46.790099+00:00"
        );
        assert_eq!(
            super::iso_from_unix(951_782_400, 1),
            "2000-02-29T00:00:00.000001+00:00"
        );
    }
}
