//! Parsing and checking of the `iccs` command inputs; every error is a one-line usage error.

use crate::util::{Failure, hexs};

/// The largest output or draw the commands produce (2^30 bits = 128 MiB), so a typo cannot
/// exhaust memory.
pub const MAX_OUT_BITS: u64 = 1 << 30;

/// A bit-string message: the hex bytes and the bit length L (bits past L are ignored).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub bytes: Vec<u8>,
    pub bits: u64,
}

/// `HEX` with optional `--bits L` (default: every hex bit).
pub fn message(hex: &str, bits: Option<u64>) -> anyhow::Result<Message> {
    let bytes = hexs::parse(hex).map_err(|e| Failure::usage(format!("message: {e}")))?;
    let have = 8 * bytes.len() as u64;
    let bits = bits.unwrap_or(have);
    if bits > have {
        return Err(Failure::usage(format!(
            "--bits {bits} needs {} hex bytes, the message has {}",
            bits.div_ceil(8),
            bytes.len()
        )));
    }
    Ok(Message { bytes, bits })
}

/// `--digest-bits D` of pseudohash: 512, 768 or 1024.
pub fn pseudohash_width(d: u32) -> anyhow::Result<u32> {
    match d {
        512 | 768 | 1024 => Ok(d),
        _ => Err(Failure::usage(format!(
            "--digest-bits {d}: pseudohash supports 512, 768 or 1024"
        ))),
    }
}

/// An output length in bits, at most [`MAX_OUT_BITS`].
pub fn out_bits(what: &str, n: u64) -> anyhow::Result<u64> {
    if n > MAX_OUT_BITS {
        return Err(Failure::usage(format!(
            "{what} {n} is larger than the {MAX_OUT_BITS}-bit limit of this command"
        )));
    }
    Ok(n)
}

/// `--draws B1,B2,…`: bit lengths, at least one, their sum at most [`MAX_OUT_BITS`].
pub fn draws(list: &str) -> anyhow::Result<Vec<u64>> {
    let mut out = Vec::new();
    let mut total = 0u64;
    for (i, item) in list.split(',').enumerate() {
        let item = item.trim();
        let bits: u64 = item.parse().map_err(|_| {
            Failure::usage(format!(
                "--draws: item {} ({item:?}) is not a bit count; expected e.g. 256,13,0",
                i + 1
            ))
        })?;
        total = total.saturating_add(bits);
        out.push(bits);
    }
    out_bits("--draws total", total)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(e: anyhow::Error) -> u8 {
        e.downcast_ref::<Failure>().map_or(0, |f| f.exit.code())
    }

    #[test]
    fn messages() {
        assert_eq!(
            message("", None).unwrap(),
            Message {
                bytes: vec![],
                bits: 0
            }
        );
        assert_eq!(message("616263", Some(21)).unwrap().bits, 21);
        assert_eq!(message(" ff ", None).unwrap().bits, 8);
        assert_eq!(code(message("abc", None).unwrap_err()), 2);
        assert_eq!(code(message("zz", None).unwrap_err()), 2);
        assert_eq!(code(message("61", Some(9)).unwrap_err()), 2);
    }

    #[test]
    fn draw_lists() {
        assert_eq!(draws("13, 0,264").unwrap(), vec![13, 0, 264]);
        for bad in [
            "",
            "1,,2",
            "a",
            "-1",
            "1;2",
            &format!("{}", MAX_OUT_BITS + 1),
        ] {
            assert_eq!(code(draws(bad).unwrap_err()), 2, "{bad:?}");
        }
    }

    #[test]
    fn widths() {
        assert!(pseudohash_width(768).is_ok());
        assert_eq!(code(pseudohash_width(256).unwrap_err()), 2);
    }
}
