//! The ICCS helper return codes (iccs-api.md §1.6).

use std::fmt;

/// An error of an ICCS helper; [`IccsError::code`] is the C return value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IccsError {
    /// -2: an allocation failed (only the official C code can hit this).
    MemoryAllocationFailed,
    /// -3: an internal HMAC failed.
    HashFailed,
    /// -4: the digest length is not one the function supports.
    InvalidDigestBitLen,
}

impl IccsError {
    /// The C return code.
    pub fn code(self) -> i32 {
        match self {
            IccsError::MemoryAllocationFailed => -2,
            IccsError::HashFailed => -3,
            IccsError::InvalidDigestBitLen => -4,
        }
    }

    /// The error for a C return code, `None` for 0 and unknown codes.
    pub fn from_code(code: i32) -> Option<Self> {
        match code {
            -2 => Some(IccsError::MemoryAllocationFailed),
            -3 => Some(IccsError::HashFailed),
            -4 => Some(IccsError::InvalidDigestBitLen),
            _ => None,
        }
    }
}

impl fmt::Display for IccsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self {
            IccsError::MemoryAllocationFailed => "memory allocation failed",
            IccsError::HashFailed => "internal HMAC failed",
            IccsError::InvalidDigestBitLen => "digest bit length not supported",
        };
        write!(f, "{what} ({})", self.code())
    }
}

impl std::error::Error for IccsError {}
