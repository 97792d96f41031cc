//! Buffers handed to candidate code, with canary bytes on both sides (reference: 64 bytes
//! of 0xA5), checked after every call so a write past the declared length is reported
//! with the operation and offset instead of corrupting memory silently.
//!
//! Every buffer's front guard starts on a page boundary, so the candidate's data starts at
//! page offset [`GUARD`] in every process. Left to the allocator, the offset depends on
//! whatever our binary allocated before, and the same library's enc moved by 1–2 % between
//! two builds of ngcc-perf that changed no timed code (cache sets and 4K aliasing between
//! pk, ct and the stack). `bench overhead`'s C loop places its buffers by the same rule.

pub const GUARD: usize = 64;
/// Where each guarded region starts: a page boundary.
pub const PLACEMENT: usize = 4096;
const PATTERN: u8 = 0xA5;

pub struct Guarded {
    name: &'static str,
    /// Over-allocated by one page; the guarded region is `bytes[start..start + len + 2 GUARD]`.
    bytes: Vec<u8>,
    start: usize,
    len: usize,
}

impl Guarded {
    pub fn new(name: &'static str, len: usize) -> Guarded {
        let bytes = vec![PATTERN; len + 2 * GUARD + PLACEMENT];
        let start = bytes.as_ptr().align_offset(PLACEMENT);
        assert!(
            start < PLACEMENT,
            "no page boundary in a page-longer buffer"
        );
        Guarded {
            name,
            bytes,
            start,
            len,
        }
    }

    pub fn with(name: &'static str, data: &[u8]) -> Guarded {
        let mut g = Guarded::new(name, data.len());
        g.as_mut_slice().copy_from_slice(data);
        g
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    pub fn ptr(&mut self) -> *mut u8 {
        self.bytes[self.start + GUARD..].as_mut_ptr()
    }

    pub fn as_slice(&self) -> &[u8] {
        &self.bytes[self.start + GUARD..self.start + GUARD + self.len]
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        &mut self.bytes[self.start + GUARD..self.start + GUARD + self.len]
    }

    /// `Err` names the buffer and the first offset written outside it (negative = before).
    pub fn check(&self, op: &str) -> Result<(), Overrun> {
        if let Some(i) = self.bytes[self.start..self.start + GUARD]
            .iter()
            .position(|&b| b != PATTERN)
        {
            return Err(Overrun::Before {
                op: op.to_string(),
                buffer: self.name,
                offset: i as isize - GUARD as isize,
            });
        }
        let tail = &self.bytes[self.start + GUARD + self.len..self.start + 2 * GUARD + self.len];
        if let Some(i) = tail.iter().position(|&b| b != PATTERN) {
            return Err(Overrun::Past {
                op: op.to_string(),
                buffer: self.name,
                len: self.len,
                offset: self.len + i,
            });
        }
        Ok(())
    }
}

/// A write outside a buffer, found by its canaries (the reference's OVERFLOW); the text
/// goes into the KAT log or the process record.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Overrun {
    #[error("{op} wrote before {buffer} at offset {offset}")]
    Before {
        op: String,
        buffer: &'static str,
        offset: isize,
    },
    #[error("{op} wrote past {buffer} (declared {len} bytes) at offset {offset}")]
    Past {
        op: String,
        buffer: &'static str,
        len: usize,
        offset: usize,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_starts_at_the_same_page_offset_whatever_was_allocated_before() {
        for n in [1usize, 10, 100, 1000, 5000] {
            let _shift = vec![0u8; n];
            let mut g = Guarded::new("pk", 800 + n);
            assert_eq!(g.ptr() as usize % PLACEMENT, GUARD);
            assert_eq!(g.as_slice().len(), 800 + n);
        }
    }

    #[test]
    fn detects_one_byte_overrun_and_underrun() {
        let mut g = Guarded::new("ct", 10);
        assert!(g.check("enc").is_ok());
        unsafe { *g.ptr().add(10) = 0 };
        assert_eq!(
            g.check("enc").unwrap_err().to_string(),
            "enc wrote past ct (declared 10 bytes) at offset 10"
        );
        let mut h = Guarded::new("pk", 4);
        unsafe { *h.ptr().sub(1) = 0 };
        assert_eq!(
            h.check("keygen").unwrap_err().to_string(),
            "keygen wrote before pk at offset -1"
        );
    }
}
