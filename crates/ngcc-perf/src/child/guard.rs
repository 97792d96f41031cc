//! Buffers handed to candidate code, with canary bytes on both sides (reference: 64 bytes
//! of 0xA5), checked after every call so a write past the declared length is reported
//! with the operation and offset instead of corrupting memory silently.

pub const GUARD: usize = 64;
const PATTERN: u8 = 0xA5;

pub struct Guarded {
    name: &'static str,
    bytes: Vec<u8>,
    len: usize,
}

impl Guarded {
    pub fn new(name: &'static str, len: usize) -> Guarded {
        Guarded {
            name,
            bytes: vec![PATTERN; len + 2 * GUARD],
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
        self.bytes[GUARD..].as_mut_ptr()
    }

    pub fn as_slice(&self) -> &[u8] {
        &self.bytes[GUARD..GUARD + self.len]
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        &mut self.bytes[GUARD..GUARD + self.len]
    }

    /// `Err` names the buffer and the first offset written outside it (negative = before).
    pub fn check(&self, op: &str) -> Result<(), String> {
        if let Some(i) = self.bytes[..GUARD].iter().position(|&b| b != PATTERN) {
            return Err(format!(
                "{op} wrote before {} at offset {}",
                self.name,
                i as isize - GUARD as isize
            ));
        }
        let tail = &self.bytes[GUARD + self.len..];
        if let Some(i) = tail.iter().position(|&b| b != PATTERN) {
            return Err(format!(
                "{op} wrote past {} (declared {} bytes) at offset {}",
                self.name,
                self.len,
                self.len + i
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_one_byte_overrun_and_underrun() {
        let mut g = Guarded::new("ct", 10);
        assert!(g.check("enc").is_ok());
        unsafe { *g.ptr().add(10) = 0 };
        assert_eq!(
            g.check("enc").unwrap_err(),
            "enc wrote past ct (declared 10 bytes) at offset 10"
        );
        let mut h = Guarded::new("pk", 4);
        unsafe { *h.ptr().sub(1) = 0 };
        assert_eq!(
            h.check("keygen").unwrap_err(),
            "keygen wrote before pk at offset -1"
        );
    }
}
